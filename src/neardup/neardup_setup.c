/*-------------------------------------------------------------------------
 *
 * neardup_setup.c
 *	  The near-duplicate trigger's definition: its arguments read and
 *	  checked, the index and columns of each table it searches.
 *
 * simhash_near_duplicate_trigger (trigger_neardup.c) calls
 * SimhashNearDupSetup once per statement; the result lives in fn_extra.
 * README.md documents the arguments; src/README, "The near-duplicate
 * triggers", the design.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/neardup/neardup_setup.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_trigger.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "common/hashfn.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "parser/parse_coerce.h"
#include "rewrite/rewriteHandler.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/typcache.h"
#include "utils/varlena.h"

#include "neardup.h"
#include "simhash_am.h"

/*
 * Report a bad trigger argument.  "detail" is an errdetail() call, so that
 * every format is a literal that translation can find.
 */
#define SimhashBadArgument(trigger, detail) \
	ereport(ERROR, \
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE), \
			 errmsg("invalid arguments for near-duplicate trigger \"%s\"", (trigger)->tgname), \
			 (detail), \
			 errhint("The arguments are the fingerprint column, k, the action, then options.")))

/* Parse the radius argument: an integer from 0 to 64, or 'auto'. */
static int
SimhashParseRadius(Trigger *trigger, const char *arg)
{
	int			k = 0;

	if (pg_strcasecmp(arg, "auto") == 0)
		return SIMHASH_AUTO_RADIUS;
	if (arg[0] == '\0')
		SimhashBadArgument(trigger, errdetail("k must be an integer from 0 to 64 or 'auto', not \"%s\".", arg));
	for (const char *p = arg; *p; p++)
	{
		if (*p < '0' || *p > '9')
			SimhashBadArgument(trigger, errdetail("k must be an integer from 0 to 64 or 'auto', not \"%s\".", arg));
		k = Min(k * 10 + (*p - '0'), SIMHASH_BITS + 1);
	}
	if (k > SIMHASH_BITS)
		SimhashBadArgument(trigger, errdetail("k must be an integer from 0 to 64 or 'auto', not \"%s\".", arg));
	return k;
}

/* The simhash index of a table on its fingerprint column, or an error. */
static Oid
SimhashFingerprintIndex(Relation rel, AttrNumber attno, const char *colname)
{
	ListCell   *lc;
	List	   *indexes = RelationGetIndexList(rel);

	foreach(lc, indexes)
	{
		Relation	index = index_open(lfirst_oid(lc), AccessShareLock);
		bool		ok = SimhashIsIndexAm(index->rd_rel->relam) &&
			index->rd_index->indnkeyatts == 1 &&
			index->rd_index->indkey.values[0] == attno &&
			index->rd_index->indisvalid && index->rd_index->indisready &&
			RelationGetIndexPredicate(index) == NIL;
		Oid			oid = RelationGetRelid(index);

		index_close(index, AccessShareLock);
		if (ok)
			return oid;
	}
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("table \"%s\" has no simhash index on column \"%s\"",
					RelationGetRelationName(rel), colname),
			 errdetail("The near-duplicate trigger searches the table through a valid, non-partial simhash index whose only key column is the fingerprint column."),
			 errhint("Create one with CREATE INDEX ON %s USING simhash (%s).",
					 quote_identifier(RelationGetRelationName(rel)),
					 quote_identifier(colname))));
	return InvalidOid;			/* keep the compiler quiet */
}

/* Column numbers, in table "relid", of the named columns. */
static AttrNumber *
SimhashColumnsOf(Relation rel, char **names, int n, const char *role)
{
	AttrNumber *attnos = palloc(sizeof(AttrNumber) * Max(n, 1));

	for (int i = 0; i < n; i++)
		attnos[i] = SimhashTriggerColumn(rel, names[i], role);
	return attnos;
}

/* The primary key of the trigger's table, for messages, ties and links. */
static void
SimhashSetupKey(SimhashNearDupInfo *info, Relation rel)
{
	Oid			pk = SimhashGetPrimaryKeyIndex(rel);
	Relation	index;

	info->nkey = 0;
	if (!OidIsValid(pk))
		return;
	index = index_open(pk, AccessShareLock);
	info->nkey = index->rd_index->indnkeyatts;
	info->key_name = palloc(sizeof(char *) * info->nkey);
	info->key_cmp = palloc(sizeof(FmgrInfo) * info->nkey);
	info->key_out = palloc(sizeof(FmgrInfo) * info->nkey);
	info->key_collation = palloc(sizeof(Oid) * info->nkey);
	info->key_byval = palloc(sizeof(bool) * info->nkey);
	info->key_len = palloc(sizeof(int16) * info->nkey);
	for (int i = 0; i < info->nkey; i++)
	{
		Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel),
											  index->rd_index->indkey.values[i] - 1);
		TypeCacheEntry *tc = lookup_type_cache(att->atttypid, TYPECACHE_CMP_PROC_FINFO);
		Oid			out;
		bool		varlena;

		info->key_name[i] = pstrdup(NameStr(att->attname));
		if (!OidIsValid(tc->cmp_proc_finfo.fn_oid))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_FUNCTION),
					 errmsg("could not identify a comparison function for type %s",
							format_type_be(att->atttypid))));
		fmgr_info_copy(&info->key_cmp[i], &tc->cmp_proc_finfo, CurrentMemoryContext);
		getTypeOutputInfo(att->atttypid, &out, &varlena);
		fmgr_info(out, &info->key_out[i]);
		info->key_collation[i] = att->attcollation;
		info->key_byval[i] = att->attbyval;
		info->key_len[i] = att->attlen;
	}
	index_close(index, AccessShareLock);
}

/* The link columns: the key of the match (the primary key's type) and its distance. */
static void
SimhashSetupLink(SimhashNearDupInfo *info, Relation rel, Trigger *trigger,
				 const char *key_col, const char *dist_col)
{
	TupleDesc	desc = RelationGetDescr(rel);

	if (key_col == NULL && dist_col == NULL)
		SimhashBadArgument(trigger, errdetail("Action link needs a column for the key of the match."));
	if (key_col != NULL)
	{
		Oid			keytype;
		Oid			coltype;

		if (info->nkey != 1)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("near-duplicate trigger \"%s\" links rows by key, but table \"%s\" has no single-column primary key",
							trigger->tgname, RelationGetRelationName(rel)),
					 errhint("Add a primary key of one column, or link only the distance.")));
		info->link_key_attno = SimhashTriggerColumn(rel, key_col,
													 gettext_noop("The trigger writes the nearest row's key to this column."));
		keytype = TupleDescAttr(desc, SimhashTriggerColumn(rel, info->key_name[0],
															   gettext_noop("The trigger names rows by this primary key column.")) - 1)->atttypid;
		coltype = TupleDescAttr(desc, info->link_key_attno - 1)->atttypid;
		if (coltype != keytype)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("link key column \"%s\" is of type %s, but the primary key is of type %s",
							key_col, format_type_be(coltype), format_type_be(keytype))));
	}
	if (dist_col != NULL)
	{
		info->link_dist_attno = SimhashTriggerColumn(rel, dist_col,
													  gettext_noop("The trigger writes the distance to the nearest row to this column."));
		info->link_dist_type = TupleDescAttr(desc, info->link_dist_attno - 1)->atttypid;
		if (info->link_dist_type != INT2OID && info->link_dist_type != INT4OID &&
			info->link_dist_type != INT8OID)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("link distance column \"%s\" is of type %s, not an integer type",
							dist_col, format_type_be(info->link_dist_type))));
	}
}

/* The scope columns: equality and hashing of their types. */
static void
SimhashSetupScope(SimhashNearDupInfo *info, Relation rel, char **names)
{
	info->scope_attno = SimhashColumnsOf(rel, names, info->nscope,
										  gettext_noop("Only rows with equal values in this column compete."));
	info->scope_eq = palloc(sizeof(FmgrInfo) * Max(info->nscope, 1));
	info->scope_hash = palloc0(sizeof(FmgrInfo) * Max(info->nscope, 1));
	info->scope_collation = palloc(sizeof(Oid) * Max(info->nscope, 1));
	for (int i = 0; i < info->nscope; i++)
	{
		Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), info->scope_attno[i] - 1);
		TypeCacheEntry *tc = lookup_type_cache(att->atttypid,
											   TYPECACHE_EQ_OPR_FINFO | TYPECACHE_HASH_PROC_FINFO);

		if (!OidIsValid(tc->eq_opr_finfo.fn_oid))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_FUNCTION),
					 errmsg("scope column \"%s\" is of type %s, which has no equality operator",
							names[i], format_type_be(att->atttypid))));
		fmgr_info_copy(&info->scope_eq[i], &tc->eq_opr_finfo, CurrentMemoryContext);
		if (OidIsValid(tc->hash_proc_finfo.fn_oid))
			fmgr_info_copy(&info->scope_hash[i], &tc->hash_proc_finfo, CurrentMemoryContext);
		info->scope_collation[i] = att->attcollation;
	}
}

/* The tables whose rows compete: the defining table, or its leaf partitions. */
static void
SimhashSetupLeaves(SimhashNearDupInfo *info, Relation rel, const char *fp_col,
				   char **scope_names, char **text_names)
{
	List	   *relids;
	ListCell   *lc;
	int			n = 0;

	if (get_rel_relkind(info->top_relid) == RELKIND_PARTITIONED_TABLE)
		relids = find_all_inheritors(info->top_relid, AccessShareLock, NULL);
	else
		relids = list_make1_oid(RelationGetRelid(rel));
	info->leaves = palloc0(sizeof(SimhashNearDupLeaf) * list_length(relids));
	info->own_leaf = -1;
	foreach(lc, relids)
	{
		Oid			relid = lfirst_oid(lc);
		SimhashNearDupLeaf *leaf = &info->leaves[n];
		Relation	r;

		if (get_rel_relkind(relid) == RELKIND_PARTITIONED_TABLE)
			continue;
		r = (relid == RelationGetRelid(rel)) ? rel : table_open(relid, AccessShareLock);
		leaf->relid = relid;
		leaf->fp_attno = SimhashTriggerColumn(r, fp_col, gettext_noop("The trigger reads the fingerprint from this column."));
		leaf->indexoid = SimhashFingerprintIndex(r, leaf->fp_attno, fp_col);
		leaf->scope_attno = SimhashColumnsOf(r, scope_names, info->nscope,
											  gettext_noop("Only rows with equal values in this column compete."));
		leaf->key_attno = SimhashColumnsOf(r, info->key_name, info->nkey,
											gettext_noop("The trigger names rows by this primary key column."));
		leaf->text_attno = SimhashColumnsOf(r, text_names, info->ntext,
											 gettext_noop("The trigger fingerprints the text of this column."));
		if (relid == RelationGetRelid(rel))
			info->own_leaf = n;
		else
			table_close(r, AccessShareLock);
		n++;
	}
	info->nleaves = n;
	if (info->own_leaf < 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table \"%s\" is not among the tables its near-duplicate trigger searches",
						RelationGetRelationName(rel)),
				 errdetail("The table is being detached from its partitioned table, or was attached during this statement."),
				 errhint("Retry once the DETACH or ATTACH PARTITION has finished.")));
}

/*
 * The column names of an option "name=a,b,..." (identifiers, as SQL reads
 * them), or NULL if they cannot be read.
 */
static char **
SimhashParseColumnList(const char *arg, int *n)
{
	List	   *names = NIL;
	char	  **result;
	ListCell   *lc;
	int			i = 0;

	if (!SplitIdentifierString(pstrdup(strchr(arg, '=') + 1), ',', &names) || names == NIL)
		return NULL;
	*n = list_length(names);
	result = palloc(sizeof(char *) * *n);
	foreach(lc, names)
		result[i++] = lfirst(lc);
	return result;
}

/*
 * The option "text=a,b,...": the columns k 'auto' is computed from and
 * verify= compares.  Returns their names.
 */
static char **
SimhashParseTextColumns(SimhashNearDupInfo *info, Trigger *trigger, Relation rel,
						const char *arg)
{
	char	  **names = SimhashParseColumnList(arg, &info->ntext);

	if (names == NULL)
		SimhashBadArgument(trigger, errdetail("Cannot read the text columns of \"%s\".", arg));

	info->text_attno = palloc(sizeof(AttrNumber) * info->ntext);
	for (int i = 0; i < info->ntext; i++)
	{
		AttrNumber	attno = SimhashTriggerColumn(rel, names[i], gettext_noop("The trigger fingerprints the text of this column."));

		if (!IsBinaryCoercible(TupleDescAttr(RelationGetDescr(rel), attno - 1)->atttypid,
							   TEXTOID))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column \"%s\" of table \"%s\" is not of a text type",
							names[i], RelationGetRelationName(rel))));
		/* a BEFORE trigger sees a generated column before it is computed */
		if (TupleDescAttr(RelationGetDescr(rel), attno - 1)->attgenerated)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("text column \"%s\" of table \"%s\" is a generated column",
							names[i], RelationGetRelationName(rel)),
					 errdetail("Generated columns are computed after BEFORE triggers, so the trigger would find no text in it."),
					 errhint("Name the columns it is generated from in 'text='.")));
		info->text_attno[i] = attno;
	}
	return names;
}

/* The column of an option "name=column": one identifier, as SQL reads it. */
static const char *
SimhashParseColumn(Trigger *trigger, const char *arg)
{
	List	   *names = NIL;

	if (!SplitIdentifierString(pstrdup(strchr(arg, '=') + 1), ',', &names) ||
		list_length(names) != 1)
		SimhashBadArgument(trigger, errdetail("Cannot read one column name in \"%s\".", arg));
	return linitial(names);
}

/*
 * Refuse an option given twice ("seen": it was given before; a link column
 * given by position counts as link_key= or link_distance=).
 */
static void
SimhashOnlyOnce(Trigger *trigger, const char *option, bool seen)
{
	if (seen)
		SimhashBadArgument(trigger, errdetail("Option \"%s\" is given more than once.", option));
}

/*
 * Refuse link columns that would overwrite what the row is checked by or
 * named by: the primary key, the fingerprint, a scope or text column, or
 * the other link column.
 */
static void
SimhashCheckLinkColumns(SimhashNearDupInfo *info, Relation rel, Trigger *trigger)
{
	AttrNumber	cols[2] = {info->link_key_attno, info->link_dist_attno};

	for (int c = 0; c < 2; c++)
	{
		AttrNumber	attno = cols[c];
		const char *name;
		const char *what = NULL;

		if (attno == 0)
			continue;
		name = NameStr(TupleDescAttr(RelationGetDescr(rel), attno - 1)->attname);
		if (attno == info->fp_attno)
			what = gettext_noop("the fingerprint column");
		for (int i = 0; i < info->nkey && what == NULL; i++)
			if (attno == get_attnum(RelationGetRelid(rel), info->key_name[i]))
				what = gettext_noop("a column of the primary key");
		for (int i = 0; i < info->nscope && what == NULL; i++)
			if (attno == info->scope_attno[i])
				what = gettext_noop("a scope column");
		for (int i = 0; i < info->ntext && what == NULL; i++)
			if (attno == info->text_attno[i])
				what = gettext_noop("a text column");
		if (what == NULL && c == 1 && attno == cols[0])
			what = gettext_noop("the link key column");
		if (what != NULL)
			SimhashBadArgument(trigger,
							   errdetail("The link column \"%s\" is %s, which the trigger must not overwrite.",
										 name, _(what)));
	}
}

/*
 * Work out the trigger's definition and the competing tables, once per
 * statement (cached in fn_extra, which lives as long as the statement).
 */
SimhashNearDupInfo *
SimhashNearDupSetup(FunctionCallInfo fcinfo, TriggerData *trigdata)
{
	Trigger    *trigger = trigdata->tg_trigger;
	Relation	rel = trigdata->tg_relation;
	SimhashNearDupInfo *info = fcinfo->flinfo->fn_extra;
	MemoryContext old;
	char	  **scope_names = NULL;
	char	  **text_names = NULL;
	const char *verify_arg = NULL;
	const char *key_col = NULL;
	const char *dist_col = NULL;
	int			npositional = 0;
	const char *action;
	Form_pg_attribute fpatt;

	if (info != NULL && info->tgoid == trigger->tgoid && info->relid == RelationGetRelid(rel))
		return info;

	old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	info = palloc0(sizeof(SimhashNearDupInfo));
	info->cxt = fcinfo->flinfo->fn_mcxt;
	info->tgoid = trigger->tgoid;
	info->relid = RelationGetRelid(rel);
	info->verify = -1.0;
	if (trigger->tgnargs < 3)
		SimhashBadArgument(trigger, errdetail_plural("There is %d argument.", "There are %d arguments.",
													  trigger->tgnargs, trigger->tgnargs));
	info->fp_attno = SimhashTriggerFingerprintColumn(rel, trigger->tgargs[0],
													 gettext_noop("The trigger reads the fingerprint from this column."));
	fpatt = TupleDescAttr(RelationGetDescr(rel), info->fp_attno - 1);
	info->k = SimhashParseRadius(trigger, trigger->tgargs[1]);
	action = trigger->tgargs[2];
	if (pg_strcasecmp(action, "reject") == 0)
		info->action = SIMHASH_ACTION_REJECT;
	else if (pg_strcasecmp(action, "skip") == 0)
		info->action = SIMHASH_ACTION_SKIP;
	else if (pg_strcasecmp(action, "link") == 0)
		info->action = SIMHASH_ACTION_LINK;
	else
		SimhashBadArgument(trigger, errdetail("The action must be reject, skip or link, not \"%s\".", action));

	for (int i = 3; i < trigger->tgnargs; i++)
	{
		const char *arg = trigger->tgargs[i];

		if (strncmp(arg, "scope=", 6) == 0)
		{
			SimhashOnlyOnce(trigger, "scope=", scope_names != NULL);
			scope_names = SimhashParseColumnList(arg, &info->nscope);
			if (scope_names == NULL)
				SimhashBadArgument(trigger, errdetail("Cannot read the scope columns of \"%s\".", arg));
		}
		else if (strncmp(arg, "text=", 5) == 0)
		{
			SimhashOnlyOnce(trigger, "text=", info->ntext > 0);
			text_names = SimhashParseTextColumns(info, trigger, rel, arg);
		}
		else if (strncmp(arg, "verify=", 7) == 0)
		{
			SimhashOnlyOnce(trigger, "verify=", verify_arg != NULL);
			if (!SimhashParseSimilarity(arg + 7, &info->verify))
				SimhashBadArgument(trigger, errdetail("verify= takes a similarity from 0 to 1 such as 0.7, not \"%s\".", arg));
			verify_arg = arg;
		}
		else if (strncmp(arg, "link_key=", 9) == 0)
		{
			SimhashOnlyOnce(trigger, "link_key=", key_col != NULL);
			key_col = SimhashParseColumn(trigger, arg);
		}
		else if (strncmp(arg, "link_distance=", 14) == 0)
		{
			SimhashOnlyOnce(trigger, "link_distance=", dist_col != NULL);
			dist_col = SimhashParseColumn(trigger, arg);
		}
		else if (strchr(arg, '=') == NULL && info->action == SIMHASH_ACTION_LINK &&
				 npositional < 2)
		{
			/* already an identifier: CREATE TRIGGER read it as SQL does */
			if (npositional++ == 0)
			{
				SimhashOnlyOnce(trigger, "link_key=", key_col != NULL);
				key_col = arg;
			}
			else
			{
				SimhashOnlyOnce(trigger, "link_distance=", dist_col != NULL);
				dist_col = arg;
			}
		}
		else
			SimhashBadArgument(trigger, errdetail("Unknown argument \"%s\".", arg));
	}
	if (info->action != SIMHASH_ACTION_LINK && (key_col != NULL || dist_col != NULL))
		SimhashBadArgument(trigger, errdetail("Link columns are for action link, not %s.", action));
	if (info->k == SIMHASH_AUTO_RADIUS && info->ntext == 0)
		SimhashBadArgument(trigger, errdetail("k 'auto' takes the radius from the text columns named by 'text=column[,column...]'."));
	if (verify_arg != NULL && info->ntext == 0)
		SimhashBadArgument(trigger, errdetail("Option \"%s\" compares the texts of the columns named by 'text=column[,column...]'.", verify_arg));
	if (info->ntext > 0 && info->k != SIMHASH_AUTO_RADIUS && verify_arg == NULL)
		SimhashBadArgument(trigger, errdetail("The text columns are for k 'auto' or 'verify=s', not for k %s.", trigger->tgargs[1]));

	SimhashSetupKey(info, rel);
	if (info->action == SIMHASH_ACTION_LINK)
		SimhashSetupLink(info, rel, trigger, key_col, dist_col);
	SimhashSetupScope(info, rel, scope_names);
	SimhashCheckLinkColumns(info, rel, trigger);

	/* generated columns are computed after BEFORE triggers: compute it here */
	if (fpatt->attgenerated == ATTRIBUTE_GENERATED_STORED)
	{
		Expr	   *expr = (Expr *) build_column_default(rel, info->fp_attno);

		if (expr == NULL)
			elog(ERROR, "no generation expression for column \"%s\"", trigger->tgargs[0]);
		info->fp_expr = ExecInitExpr(expression_planner(expr), NULL);
		info->fp_econtext = CreateStandaloneExprContext();
		pull_varattnos((Node *) info->fp_expr->expr, 1, &info->fp_inputs);
	}

	info->top_relid = SimhashTriggerDefiningTable(trigger, RelationGetRelid(rel));
	SimhashSetupLeaves(info, rel, trigger->tgargs[0], scope_names, text_names);
	MemoryContextSwitchTo(old);
	fcinfo->flinfo->fn_extra = info;
	return info;
}
