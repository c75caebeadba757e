/*-------------------------------------------------------------------------
 *
 * neardup_rls.c
 *	  Row-level security for the near-duplicate trigger: refuse a row the
 *	  policies will refuse before searching for its near-duplicates.
 *
 * A BEFORE ROW trigger fires before the executor checks the new row
 * against the WITH CHECK expressions of the table's row-level security
 * policies.  A search for near-duplicates at that point would tell a role
 * whether rows exist in a scope it may not write to: with 'reject', 23P01
 * against the policy's 42501; with 'skip', INSERT 0 0 against 42501.  A
 * unique index tells nothing of the kind, because its check comes after
 * the WITH CHECK.  So before the trigger searches (and before it takes the
 * locks of neardup_lock.c, whose waits can be timed), it checks the row as
 * the executor will:
 *
 *	- for every table whose policies may apply to the row (the table the
 *	  trigger fires on and, for a partition, each of its ancestors, since
 *	  a trigger cannot tell whether the statement named the partition or a
 *	  partitioned table above it) that row-level security applies to for
 *	  the current user (check_enable_rls: FORCE ROW LEVEL SECURITY, table
 *	  owners, BYPASSRLS and row_security as core has them);
 *	- the policies for INSERT (on an INSERT) or UPDATE (on an UPDATE) of
 *	  the current user, and those of the row-security hooks, combined as
 *	  the rewriter's add_with_check_options combines them: the permissive
 *	  ones ORed in one check, no permissive one denying every row, then each
 *	  restrictive one in name order; a policy without WITH CHECK checks its
 *	  USING expression;
 *	- then, when the statement needs SELECT rights on the table it names
 *	  (RETURNING, an UPDATE's WHERE, ON CONFLICT DO UPDATE), the USING
 *	  expressions of the SELECT policies, combined the same way, as the
 *	  rewriter's get_row_security_policies adds them (MERGE: on its UPDATE
 *	  actions only; which tables need SELECT is neardup_stmt.c's to say;
 *	  a statement it may have missed gets them all, refusing more, never
 *	  less);
 *	- on the row as it stands, stored generated columns computed, each check
 *	  failing on false or NULL, with core's error and message.
 *
 * The checks are one expression, CASE WHEN check1 IS NOT TRUE THEN 1 WHEN
 * ... ELSE 0 END, with the row's columns as parameters, rewritten (views
 * and policies of tables in sub-selects) and planned once per statement,
 * then evaluated per row: directly when it has no sub-select, or else by
 * running the plan, under the statement's snapshot.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/neardup/neardup_rls.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/attmap.h"
#include "access/htup_details.h"
#include "access/sysattr.h"
#include "access/table.h"
#include "catalog/partition.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/params.h"
#include "optimizer/optimizer.h"
#include "optimizer/planner.h"
#include "rewrite/rewriteHandler.h"
#include "rewrite/rewriteManip.h"
#include "rewrite/rowsecurity.h"
#include "tcop/dest.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"

#include "neardup.h"

/* a failed check: the table and the restrictive policy (NULL: permissive) */
typedef struct SimhashRlsFailure
{
	char	   *relname;
	char	   *polname;
} SimhashRlsFailure;

/* the policies of one event, for one user, ready to check rows */
typedef struct SimhashRlsCheck
{
	Oid			userid;			/* built for this user */
	List	   *select_relids;	/* ... adding the SELECT policies of these */
	int			nchecks;		/* 0: no policy applies */
	SimhashRlsFailure *failures;	/* per check, 1-based result - 1 */
	int			natts;			/* the row's columns are parameters 1..natts */
	int			nwhole;			/* then whole-row values of these tables */
	TupleDesc  *whole_desc;
	AttrMap   **whole_map;		/* their columns from the row's */
	ParamListInfo params;
	ExprState **generated;		/* per column: its generation expression */
	ExprContext *econtext;
	PlannedStmt *stmt;			/* the plan, when it has sub-selects */
	ExprState  *expr;			/* ... else the expression itself */
} SimhashRlsCheck;

/* what the Var-to-Param callback needs to know about one table */
typedef struct SimhashRlsVars
{
	Relation	rel;			/* the table whose policy it is */
	Relation	leaf;			/* the table the row is in */
	int			whole_param;	/* parameter of the whole row */
	bool		whole_used;
} SimhashRlsVars;

/* Does a policy's role list include the user (as core's check_role_for_policy)? */
static bool
SimhashPolicyForUser(ArrayType *roles, Oid userid)
{
	Oid		   *oids = (Oid *) ARR_DATA_PTR(roles);
	int			n = ARR_DIMS(roles)[0];

	if (n > 0 && oids[0] == ACL_ID_PUBLIC)
		return true;
	for (int i = 0; i < n; i++)
		if (has_privs_of_role(userid, oids[i]))
			return true;
	return false;
}

/* list_sort comparator: restrictive policies by name, unnamed last */
static int
SimhashPolicyNameCmp(const ListCell *a, const ListCell *b)
{
	const RowSecurityPolicy *pa = lfirst(a);
	const RowSecurityPolicy *pb = lfirst(b);

	if (pa->policy_name == NULL)
		return pb->policy_name == NULL ? 0 : 1;
	if (pb->policy_name == NULL)
		return -1;
	return strcmp(pa->policy_name, pb->policy_name);
}

/*
 * The policies of table "rel" for command "cmd" and the user, as the
 * rewriter's get_policies_for_relation picks them: the table's own (ALL or
 * the command's), restrictive ones in name order, then the hooks'.
 */
static void
SimhashPoliciesFor(Relation rel, CmdType cmd, Oid userid, List **permissive,
				   List **restrictive)
{
	char		cmdchr = (cmd == CMD_INSERT) ? ACL_INSERT_CHR :
		(cmd == CMD_SELECT) ? ACL_SELECT_CHR : ACL_UPDATE_CHR;
	ListCell   *lc;

	*permissive = NIL;
	*restrictive = NIL;
	if (rel->rd_rsdesc != NULL)
		foreach(lc, rel->rd_rsdesc->policies)
		{
			RowSecurityPolicy *p = lfirst(lc);

			if ((p->polcmd == '*' || p->polcmd == cmdchr) &&
				SimhashPolicyForUser(p->roles, userid))
			{
				if (p->permissive)
					*permissive = lappend(*permissive, p);
				else
					*restrictive = lappend(*restrictive, p);
			}
		}
	list_sort(*restrictive, SimhashPolicyNameCmp);
	if (row_security_policy_hook_restrictive)
	{
		List	   *hooked = row_security_policy_hook_restrictive(cmd, rel);

		list_sort(hooked, SimhashPolicyNameCmp);
		foreach(lc, hooked)
			if (SimhashPolicyForUser(((RowSecurityPolicy *) lfirst(lc))->roles, userid))
				*restrictive = lappend(*restrictive, lfirst(lc));
	}
	if (row_security_policy_hook_permissive)
	{
		List	   *hooked = row_security_policy_hook_permissive(cmd, rel);

		foreach(lc, hooked)
			if (SimhashPolicyForUser(((RowSecurityPolicy *) lfirst(lc))->roles, userid))
				*permissive = lappend(*permissive, lfirst(lc));
	}
}

/*
 * A policy's expression for new rows: WITH CHECK, else USING; only USING
 * for a SELECT policy (core's force_using).
 */
static Expr *
SimhashPolicyCheckQual(RowSecurityPolicy *p, CmdType cmd)
{
	if (cmd == CMD_SELECT)
		return p->qual;
	return p->with_check_qual != NULL ? p->with_check_qual : p->qual;
}

/*
 * replace_rte_variables callback: a column of the policy's table becomes
 * the parameter of the row's column of that name; the whole row, the
 * parameter of the row in that table's row type; tableoid, the row's table.
 */
static Node *
SimhashRlsVarToParam(Var *var, replace_rte_variables_context *context)
{
	SimhashRlsVars *v = context->callback_arg;
	Param	   *param;

	if (var->varattno < 0)
	{
		if (var->varattno == TableOidAttributeNumber)
			return (Node *) makeConst(OIDOID, -1, InvalidOid, sizeof(Oid),
									  ObjectIdGetDatum(RelationGetRelid(v->leaf)),
									  false, true);
		/* no other system column has a value before the row is stored */
		return (Node *) makeNullConst(var->vartype, var->vartypmod, var->varcollid);
	}
	param = makeNode(Param);
	param->paramkind = PARAM_EXTERN;
	param->paramtype = var->vartype;
	param->paramtypmod = var->vartypmod;
	param->paramcollid = var->varcollid;
	param->location = -1;
	if (var->varattno == 0)
	{
		param->paramid = v->whole_param;
		v->whole_used = true;
	}
	else
	{
		const char *name = NameStr(TupleDescAttr(RelationGetDescr(v->rel),
												 var->varattno - 1)->attname);

		param->paramid = get_attnum(RelationGetRelid(v->leaf), name);
		if (param->paramid <= 0)
			elog(ERROR, "column \"%s\" of table \"%s\" is not in partition \"%s\"",
				 name, RelationGetRelationName(v->rel), RelationGetRelationName(v->leaf));
	}
	return (Node *) param;
}

/* Add one check (a WHEN of the CASE) and what to say when it fails. */
static void
SimhashAddCheck(SimhashRlsCheck *check, List **whens, Expr *qual, SimhashRlsVars *vars,
				const char *polname)
{
	CaseWhen   *when = makeNode(CaseWhen);
	BooleanTest *test = makeNode(BooleanTest);
	bool		sublinks = false;
	Node	   *expr;

	expr = replace_rte_variables(copyObject((Node *) qual), 1, 0, SimhashRlsVarToParam,
								 vars, &sublinks);
	test->arg = (Expr *) expr;
	test->booltesttype = IS_NOT_TRUE;
	test->location = -1;
	when->expr = (Expr *) test;
	check->nchecks++;
	when->result = (Expr *) makeConst(INT4OID, -1, InvalidOid, sizeof(int32),
									  Int32GetDatum(check->nchecks), false, true);
	when->location = -1;
	*whens = lappend(*whens, when);
	check->failures = repalloc(check->failures, sizeof(SimhashRlsFailure) * check->nchecks);
	check->failures[check->nchecks - 1].relname = pstrdup(RelationGetRelationName(vars->rel));
	check->failures[check->nchecks - 1].polname = polname ? pstrdup(polname) : NULL;
}

/*
 * The checks of one table for "cmd" (as add_with_check_options builds
 * them): the permissive policies ORed (none: every row refused), then each
 * restrictive one.  CMD_SELECT: the SELECT policies' USING expressions.
 */
static void
SimhashAddTableChecks(SimhashRlsCheck *check, List **whens, SimhashRlsVars *vars,
					  CmdType cmd)
{
	List	   *permissive;
	List	   *restrictive;
	List	   *quals = NIL;
	ListCell   *lc;

	SimhashPoliciesFor(vars->rel, cmd, check->userid, &permissive, &restrictive);
	foreach(lc, permissive)
	{
		Expr	   *qual = SimhashPolicyCheckQual(lfirst(lc), cmd);

		if (qual != NULL)
			quals = lappend(quals, qual);
	}
	if (quals == NIL)
	{
		SimhashAddCheck(check, whens,
						(Expr *) makeBoolConst(false, false), vars, NULL);
		return;
	}
	SimhashAddCheck(check, whens,
					list_length(quals) == 1 ? linitial(quals) : makeBoolExpr(OR_EXPR, quals, -1),
					vars, NULL);
	foreach(lc, restrictive)
	{
		RowSecurityPolicy *p = lfirst(lc);
		Expr	   *qual = SimhashPolicyCheckQual(p, cmd);

		if (qual != NULL)
			SimhashAddCheck(check, whens, qual, vars, p->policy_name);
	}
}

/*
 * The tables whose policies may apply to a row of "rel": its partition
 * ancestors, the root first, then the table itself.
 */
static List *
SimhashPolicyTables(Relation rel)
{
	List	   *result = list_make1_oid(RelationGetRelid(rel));

	if (rel->rd_rel->relispartition)
	{
		ListCell   *lc;

		foreach(lc, get_partition_ancestors(RelationGetRelid(rel)))
			result = lcons_oid(lfirst_oid(lc), result);
	}
	return result;
}

/*
 * Does row-level security apply to the current user on table "rel" or on
 * one of its ancestors?  (Without raising the error of row_security = off.)
 */
bool
SimhashRowSecurityApplies(Relation rel)
{
	ListCell   *lc;

	foreach(lc, SimhashPolicyTables(rel))
		if (check_enable_rls(lfirst_oid(lc), InvalidOid, true) == RLS_ENABLED)
			return true;
	return false;
}

/* Set up what the row's stored generated columns need to be computed. */
static void
SimhashRlsSetupGenerated(SimhashRlsCheck *check, Relation leaf)
{
	TupleDesc	desc = RelationGetDescr(leaf);

	check->generated = palloc0(sizeof(ExprState *) * check->natts);
	if (desc->constr == NULL || !desc->constr->has_generated_stored)
		return;
	for (int i = 0; i < check->natts; i++)
		if (TupleDescAttr(desc, i)->attgenerated == ATTRIBUTE_GENERATED_STORED)
		{
			Expr	   *expr = (Expr *) build_column_default(leaf, i + 1);

			if (expr == NULL)
				elog(ERROR, "no generation expression for column %d of \"%s\"",
					 i + 1, RelationGetRelationName(leaf));
			check->generated[i] = ExecInitExpr(expression_planner(expr), NULL);
		}
}

/*
 * Build the check of rows of table "leaf" for command "cmd" and the current
 * user, with the SELECT policies of the tables in "select_relids", in the
 * current memory context.
 */
static SimhashRlsCheck *
SimhashBuildRlsCheck(Relation leaf, CmdType cmd, List *select_relids)
{
	SimhashRlsCheck *check = palloc0(sizeof(SimhashRlsCheck));
	List	   *tables = SimhashPolicyTables(leaf);
	List	   *whens = NIL;
	ListCell   *lc;
	CaseExpr   *caseexpr;
	Query	   *query;
	List	   *rewritten;

	check->userid = GetUserId();
	check->select_relids = list_copy(select_relids);
	check->natts = RelationGetDescr(leaf)->natts;
	check->failures = palloc(sizeof(SimhashRlsFailure));
	check->whole_desc = palloc(sizeof(TupleDesc) * list_length(tables));
	check->whole_map = palloc(sizeof(AttrMap *) * list_length(tables));
	foreach(lc, tables)
	{
		Oid			relid = lfirst_oid(lc);
		SimhashRlsVars vars;

		/* raises core's error if row_security = off would be bypassed */
		if (check_enable_rls(relid, InvalidOid, false) != RLS_ENABLED)
			continue;
		vars.rel = (relid == RelationGetRelid(leaf)) ? leaf : table_open(relid, AccessShareLock);
		vars.leaf = leaf;
		vars.whole_param = check->natts + check->nwhole + 1;
		vars.whole_used = false;
		SimhashAddTableChecks(check, &whens, &vars, cmd);
		if (list_member_oid(select_relids, relid))
			SimhashAddTableChecks(check, &whens, &vars, CMD_SELECT);
		if (vars.whole_used)
		{
			check->whole_desc[check->nwhole] = CreateTupleDescCopy(RelationGetDescr(vars.rel));
			check->whole_map[check->nwhole] =
				SimhashBuildAttrMapByName(RelationGetDescr(leaf), RelationGetDescr(vars.rel));
			check->nwhole++;
		}
		if (vars.rel != leaf)
			table_close(vars.rel, AccessShareLock);
	}
	if (check->nchecks == 0)
		return check;

	caseexpr = makeNode(CaseExpr);
	caseexpr->casetype = INT4OID;
	caseexpr->casecollid = InvalidOid;
	caseexpr->args = whens;
	caseexpr->defresult = (Expr *) makeConst(INT4OID, -1, InvalidOid, sizeof(int32),
											 Int32GetDatum(0), false, true);
	caseexpr->location = -1;
	query = makeNode(Query);
	query->commandType = CMD_SELECT;
	query->querySource = QSRC_ORIGINAL;
	query->canSetTag = true;
	query->jointree = makeFromExpr(NIL, NULL);
	query->targetList = list_make1(makeTargetEntry((Expr *) caseexpr, 1, "check", false));
	query->hasSubLinks = checkExprHasSubLink((Node *) caseexpr);

	/*
	 * Without a sub-select the check is one expression over the row's
	 * parameters: evaluate it directly, which costs a fraction of starting an
	 * executor per row.  (A query without FROM always gets a Result range
	 * table entry from the planner, so the plan cannot tell this case.)
	 */
	if (!query->hasSubLinks)
		check->expr = ExecInitExpr(expression_planner((Expr *) caseexpr), NULL);
	else
	{
		/*
		 * Lock the tables of the sub-selects, as the rewriter does for the
		 * policies it expands (the executor may have expanded none of these:
		 * a partitioned table's, for a row put into a partition directly),
		 * then add the views and policies of those tables, as the rewriter
		 * does.
		 */
		AcquireRewriteLocks(query, true, false);
		rewritten = QueryRewrite(query);
		if (list_length(rewritten) != 1)
			elog(ERROR, "row-level security check rewritten to %d queries",
				 list_length(rewritten));
		check->stmt = planner(linitial_node(Query, rewritten), NULL, 0, NULL);
	}
	check->params = makeParamList(check->natts + check->nwhole);
	check->params->numParams = check->natts + check->nwhole;
	for (int i = 0; i < check->natts; i++)
	{
		check->params->params[i].ptype = TupleDescAttr(RelationGetDescr(leaf), i)->atttypid;
		check->params->params[i].pflags = PARAM_FLAG_CONST;
	}
	for (int i = 0; i < check->nwhole; i++)
	{
		check->params->params[check->natts + i].ptype = check->whole_desc[i]->tdtypeid;
		check->params->params[check->natts + i].pflags = PARAM_FLAG_CONST;
	}
	SimhashRlsSetupGenerated(check, leaf);
	check->econtext = CreateStandaloneExprContext();
	check->econtext->ecxt_param_list_info = check->params;
	return check;
}

/* a DestReceiver that keeps the check's result */
typedef struct SimhashRlsReceiver
{
	DestReceiver pub;
	int32		result;
} SimhashRlsReceiver;

/* DestReceiver receiveSlot: keep the CASE's value (NULL cannot happen). */
static bool
SimhashRlsReceive(TupleTableSlot *slot, DestReceiver *self)
{
	bool		isnull;
	Datum		d = slot_getattr(slot, 1, &isnull);

	((SimhashRlsReceiver *) self)->result = isnull ? -1 : DatumGetInt32(d);
	return true;
}

/* DestReceiver rStartup: nothing to set up. */
static void
SimhashRlsStartup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
}

/* DestReceiver rShutdown and rDestroy: nothing to release. */
static void
SimhashRlsNothing(DestReceiver *self)
{
}

/* Run the planned check (it has sub-selects); the number of the failed check. */
static int32
SimhashRunRlsPlan(SimhashRlsCheck *check)
{
	SimhashRlsReceiver receiver;
	QueryDesc  *qd;
	bool		pushed = false;

	memset(&receiver, 0, sizeof(receiver));
	receiver.pub.receiveSlot = SimhashRlsReceive;
	receiver.pub.rStartup = SimhashRlsStartup;
	receiver.pub.rShutdown = SimhashRlsNothing;
	receiver.pub.rDestroy = SimhashRlsNothing;
	receiver.pub.mydest = DestNone;
	receiver.result = -1;
	if (!ActiveSnapshotSet())
	{
		PushActiveSnapshot(GetTransactionSnapshot());
		pushed = true;
	}
	qd = CreateQueryDesc(check->stmt, "simhash near-duplicate trigger: row-level security",
						 GetActiveSnapshot(), InvalidSnapshot, &receiver.pub,
						 check->params, NULL, 0);
	ExecutorStart(qd, 0);
	SimhashExecutorRun(qd, ForwardScanDirection, 0);
	ExecutorFinish(qd);
	ExecutorEnd(qd);
	FreeQueryDesc(qd);
	if (pushed)
		PopActiveSnapshot();
	return receiver.result;
}

/* Fill the parameters from the row in "slot" (of the leaf table). */
static void
SimhashRlsSetParams(SimhashRlsCheck *check, TupleTableSlot *slot)
{
	ParamExternData *prm = check->params->params;

	slot_getallattrs(slot);
	check->econtext->ecxt_scantuple = slot;
	for (int i = 0; i < check->natts; i++)
	{
		if (check->generated[i] != NULL)
			prm[i].value = ExecEvalExpr(check->generated[i], check->econtext, &prm[i].isnull);
		else
		{
			prm[i].value = slot->tts_values[i];
			prm[i].isnull = slot->tts_isnull[i];
		}
	}
	for (int w = 0; w < check->nwhole; w++)
	{
		TupleDesc	desc = check->whole_desc[w];
		AttrMap    *map = check->whole_map[w];
		Datum	   *values = palloc(sizeof(Datum) * desc->natts);
		bool	   *nulls = palloc(sizeof(bool) * desc->natts);

		for (int i = 0; i < desc->natts; i++)
		{
			int			from = map->attnums[i];

			nulls[i] = (from == 0) ? true : prm[from - 1].isnull;
			values[i] = (from == 0) ? (Datum) 0 : prm[from - 1].value;
		}
		prm[check->natts + w].value =
			heap_copy_tuple_as_datum(heap_form_tuple(desc, values, nulls), desc);
		prm[check->natts + w].isnull = false;
	}
}

/*
 * The tables whose SELECT policies apply to new rows of "cmd" of table
 * "rel" in the statement whose executor memory is "cxt" (its triggers'
 * fn_mcxt): as the executor hook noted them, or, for a statement it may
 * have missed, every table whose policies apply to the row.
 */
static List *
SimhashSelectTargets(MemoryContext cxt, CmdType cmd, Relation rel)
{
	bool		known;
	List	   *relids = SimhashStatementSelectTargets(cxt, cmd, &known);

	return known ? relids : SimhashPolicyTables(rel);
}

/*
 * Check the new row in "slot" of table "rel" against the row-level security
 * policies for "cmd" (INSERT or UPDATE), as the executor will after the
 * BEFORE triggers; raise core's error if one refuses it.  "cxt" is the
 * trigger's fn_mcxt, the executor memory of the statement it fires in;
 * *cache keeps the check for the statement there.
 */
void
SimhashCheckRowSecurity(SimhashRlsCheck **cache, MemoryContext cxt, Relation rel,
						TupleTableSlot *slot, CmdType cmd)
{
	SimhashRlsCheck *check = *cache;
	List	   *select_relids = SimhashSelectTargets(cxt, cmd, rel);
	int32		failed;

	if (check == NULL || check->userid != GetUserId() ||
		!equal(check->select_relids, select_relids))
	{
		MemoryContext old = MemoryContextSwitchTo(cxt);

		check = SimhashBuildRlsCheck(rel, cmd, select_relids);
		MemoryContextSwitchTo(old);
		*cache = check;
	}
	if (check->nchecks == 0)
		return;
	SimhashRlsSetParams(check, slot);
	if (check->expr != NULL)
	{
		bool		isnull;
		Datum		d = ExecEvalExpr(check->expr, check->econtext, &isnull);

		failed = isnull ? -1 : DatumGetInt32(d);
		ResetExprContext(check->econtext);
	}
	else
		failed = SimhashRunRlsPlan(check);
	if (failed == 0)
		return;
	if (failed < 0 || failed > check->nchecks)
		elog(ERROR, "row-level security check returned %d", failed);
	if (check->failures[failed - 1].polname != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("new row violates row-level security policy \"%s\" for table \"%s\"",
						check->failures[failed - 1].polname,
						check->failures[failed - 1].relname)));
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("new row violates row-level security policy for table \"%s\"",
					check->failures[failed - 1].relname)));
}
