/*-------------------------------------------------------------------------
 *
 * trigger_neardup.c
 *	  simhash_near_duplicate_trigger(): catch near-duplicates as rows
 *	  arrive.
 *
 *	CREATE TRIGGER docs_near BEFORE INSERT OR UPDATE ON docs FOR EACH ROW
 *		EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'reject');
 *
 * This file reads and checks the trigger's arguments and applies the action
 * (reject, skip, link); the search is in neardup_search.c, the locks
 * that make it race-free in neardup_lock.c, and the row-level security
 * check that comes before both in neardup_rls.c.  README.md documents the
 * arguments; src/README, "The near-duplicate triggers", the design.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/neardup/trigger_neardup.c
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
#include "shindex.h"
#include "simhash_catalog.h"

PG_FUNCTION_INFO_V1(simhash_near_duplicate_trigger);

/* Report a bad trigger argument. */
static void
SimhashBadArgument(Trigger *trigger, const char *detail, const char *arg)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid arguments for near-duplicate trigger \"%s\"", trigger->tgname),
			 errdetail(detail, arg),
			 errhint("The arguments are the fingerprint column, k (0 to 64, or 'auto' with 'text=column[,column...]') and 'reject', 'skip' or 'link', then 'scope=column[,column...]', 'text=column[,column...]', 'verify=s' (0 to 1, with text=), and for link the key and distance columns (or 'link_key=column', 'link_distance=column').")));
}

/* Parse the radius argument: an integer from 0 to 64, or 'auto'. */
static int
SimhashParseRadius(Trigger *trigger, const char *arg)
{
	int			k = 0;

	if (pg_strcasecmp(arg, "auto") == 0)
		return SIMHASH_AUTO_RADIUS;
	if (arg[0] == '\0')
		SimhashBadArgument(trigger, "k must be an integer from 0 to 64 or 'auto', not \"%s\".", arg);
	for (const char *p = arg; *p; p++)
	{
		if (*p < '0' || *p > '9')
			SimhashBadArgument(trigger, "k must be an integer from 0 to 64 or 'auto', not \"%s\".", arg);
		k = Min(k * 10 + (*p - '0'), SIMHASH_BITS + 1);
	}
	if (k > SIMHASH_BITS)
		SimhashBadArgument(trigger, "k must be an integer from 0 to 64 or 'auto', not \"%s\".", arg);
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
			 errhint("CREATE INDEX ON %s USING simhash (%s);",
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
		SimhashBadArgument(trigger, "Action link needs a column for the key of the match%s.", "");
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
 * them); "detail" is the complaint if they cannot be read.
 */
static char **
SimhashParseColumnList(Trigger *trigger, const char *arg, const char *detail, int *n)
{
	List	   *names = NIL;
	char	  **result;
	ListCell   *lc;
	int			i = 0;

	if (!SplitIdentifierString(pstrdup(strchr(arg, '=') + 1), ',', &names) || names == NIL)
		SimhashBadArgument(trigger, detail, arg);
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
	char	  **names = SimhashParseColumnList(trigger, arg,
												gettext_noop("Cannot read the text columns of \"%s\"."),
												&info->ntext);

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
		SimhashBadArgument(trigger, "Cannot read one column name in \"%s\".", arg);
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
		SimhashBadArgument(trigger, "Option \"%s\" is given more than once.", option);
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
			what = "the fingerprint column";
		for (int i = 0; i < info->nkey && what == NULL; i++)
			if (attno == get_attnum(RelationGetRelid(rel), info->key_name[i]))
				what = "a column of the primary key";
		for (int i = 0; i < info->nscope && what == NULL; i++)
			if (attno == info->scope_attno[i])
				what = "a scope column";
		for (int i = 0; i < info->ntext && what == NULL; i++)
			if (attno == info->text_attno[i])
				what = "a text column";
		if (what == NULL && c == 1 && attno == cols[0])
			what = "the link key column";
		if (what != NULL)
			SimhashBadArgument(trigger,
							   psprintf("The link column \"%%s\" is %s, which the trigger must not overwrite.",
										what),
							   name);
	}
}

/*
 * Work out the trigger's definition and the competing tables, once per
 * statement (cached in fn_extra, which lives as long as the statement).
 */
static SimhashNearDupInfo *
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
		SimhashBadArgument(trigger, "There are %s arguments.", psprintf("%d", trigger->tgnargs));
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
		SimhashBadArgument(trigger, "The action must be reject, skip or link, not \"%s\".", action);

	for (int i = 3; i < trigger->tgnargs; i++)
	{
		const char *arg = trigger->tgargs[i];

		if (strncmp(arg, "scope=", 6) == 0)
		{
			SimhashOnlyOnce(trigger, "scope=", scope_names != NULL);
			scope_names = SimhashParseColumnList(trigger, arg,
												 gettext_noop("Cannot read the scope columns of \"%s\"."),
												 &info->nscope);
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
				SimhashBadArgument(trigger, "verify= takes a similarity from 0 to 1 such as 0.7, not \"%s\".", arg);
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
			SimhashBadArgument(trigger, "Unknown argument \"%s\".", arg);
	}
	if (info->action != SIMHASH_ACTION_LINK && (key_col != NULL || dist_col != NULL))
		SimhashBadArgument(trigger, "Link columns are for action link, not %s.", action);
	if (info->k == SIMHASH_AUTO_RADIUS && info->ntext == 0)
		SimhashBadArgument(trigger, "k 'auto' takes the radius from the text columns named by 'text=column[,column...]'%s.", "");
	if (verify_arg != NULL && info->ntext == 0)
		SimhashBadArgument(trigger, "Option \"%s\" compares the texts of the columns named by 'text=column[,column...]'.", verify_arg);
	if (info->ntext > 0 && info->k != SIMHASH_AUTO_RADIUS && verify_arg == NULL)
		SimhashBadArgument(trigger, "The text columns are for k 'auto' or 'verify=s', not for k %s.", trigger->tgargs[1]);

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
	}

	info->top_relid = SimhashTriggerDefiningTable(trigger, RelationGetRelid(rel));
	SimhashSetupLeaves(info, rel, trigger->tgargs[0], scope_names, text_names);
	MemoryContextSwitchTo(old);
	fcinfo->flinfo->fn_extra = info;
	return info;
}

/*
 * The fingerprint column of a row as stored.  A stored row's generated
 * fingerprint is its generation expression's value, computed when the row
 * was written.
 */
static bool
SimhashStoredFingerprint(SimhashNearDupInfo *info, HeapTuple tuple, TupleDesc desc,
						 uint64 *fp)
{
	bool		isnull;
	Datum		d = heap_getattr(tuple, info->fp_attno, desc, &isnull);

	if (!isnull)
		*fp = DatumGetSimhash64(d);
	return !isnull;
}

/* The fingerprint of a new row: its column, or its generation expression. */
static bool
SimhashRowFingerprint(SimhashNearDupInfo *info, HeapTuple tuple, TupleTableSlot *slot,
					  TupleDesc desc, uint64 *fp)
{
	bool		isnull;
	Datum		d;

	if (info->fp_expr == NULL)
		return SimhashStoredFingerprint(info, tuple, desc, fp);
	info->fp_econtext->ecxt_scantuple = slot;
	d = ExecEvalExprSwitchContext(info->fp_expr, info->fp_econtext, &isnull);
	ResetExprContext(info->fp_econtext);
	if (!isnull)
		*fp = DatumGetSimhash64(d);
	return !isnull;
}

/*
 * Does an UPDATE leave every column a generated fingerprint is computed
 * from as it is stored in the old row (the same bytes: a long text keeps
 * its TOAST pointer)?  Then the expression, immutable, gives the new row
 * the old row's stored fingerprint, which is read instead of the text.
 */
static bool
SimhashFingerprintInputsKept(SimhashNearDupInfo *info, TriggerData *trigdata, TupleDesc desc)
{
	Bitmapset  *inputs = NULL;
	int			member = -1;

	pull_varattnos((Node *) info->fp_expr->expr, 1, &inputs);
	while ((member = bms_next_member(inputs, member)) >= 0)
	{
		AttrNumber	attno = member + FirstLowInvalidHeapAttributeNumber;
		Form_pg_attribute att;
		bool		oldnull;
		bool		newnull;
		Datum		oldvalue;
		Datum		newvalue;
		Size		len;

		if (attno <= 0)			/* a whole row or a system column */
			return false;
		att = TupleDescAttr(desc, attno - 1);
		oldvalue = heap_getattr(trigdata->tg_trigtuple, attno, desc, &oldnull);
		newvalue = heap_getattr(trigdata->tg_newtuple, attno, desc, &newnull);
		if (oldnull || newnull)
		{
			if (oldnull != newnull)
				return false;
			continue;
		}
		if (att->attbyval)
		{
			if (oldvalue != newvalue)
				return false;
			continue;
		}
		if (att->attlen == -1)
		{
			len = VARSIZE_ANY(DatumGetPointer(oldvalue));
			if (len != VARSIZE_ANY(DatumGetPointer(newvalue)))
				return false;
		}
		else if (att->attlen > 0)
			len = att->attlen;
		else
			return false;
		if (memcmp(DatumGetPointer(oldvalue), DatumGetPointer(newvalue), len) != 0)
			return false;
	}
	return true;
}

/*
 * The scope values of a row, and their hash; false if one is NULL (a row
 * with a NULL scope value competes with nothing).
 */
static bool
SimhashRowScope(SimhashNearDupInfo *info, HeapTuple tuple, TupleDesc desc, Datum *scope,
				uint32 *hash)
{
	*hash = 0;
	for (int i = 0; i < info->nscope; i++)
	{
		bool		isnull;

		scope[i] = heap_getattr(tuple, info->scope_attno[i], desc, &isnull);
		if (isnull)
			return false;
		if (OidIsValid(info->scope_hash[i].fn_oid))
			*hash = hash_combine(*hash,
								 DatumGetUInt32(FunctionCall1Coll(&info->scope_hash[i],
																  info->scope_collation[i],
																  scope[i])));
	}
	return true;
}

/* Does an UPDATE leave the fingerprint and scope (and verify='s text) as they were? */
static bool
SimhashUpdateKeepsCheck(SimhashNearDupInfo *info, TriggerData *trigdata, TupleDesc desc,
						bool has_fp, uint64 fp, const Datum *scope)
{
	HeapTuple	oldtuple = trigdata->tg_trigtuple;
	uint64		oldfp;
	bool		old_has_fp = SimhashStoredFingerprint(info, oldtuple, desc, &oldfp);

	if (old_has_fp != has_fp || (has_fp && oldfp != fp))
		return false;
	/* with verify=, the text decides too */
	if (info->verify >= 0 &&
		!SimhashSameTextColumns(oldtuple, trigdata->tg_newtuple, desc, info->text_attno,
								info->ntext))
		return false;
	for (int i = 0; i < info->nscope; i++)
	{
		bool		isnull;
		Datum		d = heap_getattr(oldtuple, info->scope_attno[i], desc, &isnull);

		if (isnull || !DatumGetBool(FunctionCall2Coll(&info->scope_eq[i],
													  info->scope_collation[i], d, scope[i])))
			return false;
	}
	return true;
}

/*
 * May the current user learn the key of a matching row?  Not under
 * row-level security (the match may be a row the policies hide), nor
 * without SELECT on the key columns, as for core's unique violations.
 */
static bool
SimhashKeyIsVisible(SimhashNearDupInfo *info, Relation rel)
{
	Oid			relid = info->top_relid;

	if (info->nkey == 0 || check_enable_rls(relid, InvalidOid, true) == RLS_ENABLED ||
		SimhashRowSecurityApplies(rel))
		return false;
	for (int i = 0; i < info->nkey; i++)
		if (pg_attribute_aclcheck(relid, get_attnum(relid, info->key_name[i]), GetUserId(),
								  ACL_SELECT) != ACLCHECK_OK &&
			pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
			return false;
	return true;
}

/* "Key (id)=(42)" for a match, or NULL if the user may not see it. */
static char *
SimhashDescribeKey(SimhashNearDupInfo *info, Relation rel, const SimhashNearMatch *m)
{
	StringInfoData buf;

	if (!SimhashKeyIsVisible(info, rel))
		return NULL;
	initStringInfo(&buf);
	appendStringInfoString(&buf, "Key (");
	for (int i = 0; i < info->nkey; i++)
		appendStringInfo(&buf, "%s%s", i > 0 ? ", " : "", quote_identifier(info->key_name[i]));
	appendStringInfoString(&buf, ")=(");
	for (int i = 0; i < info->nkey; i++)
		appendStringInfo(&buf, "%s%s", i > 0 ? ", " : "",
						 m->keynull[i] ? "null" : OutputFunctionCall(&info->key_out[i], m->key[i]));
	appendStringInfoChar(&buf, ')');
	return buf.data;
}

/*
 * Under REPEATABLE READ and SERIALIZABLE, a match that the transaction's
 * snapshot cannot see was committed by a concurrent transaction: acting on
 * it would be acting on a row the transaction does not see, so, as
 * INSERT ... ON CONFLICT does, fail with a serialization error.
 */
static void
SimhashCheckMatchVisible(SimhashNearDupInfo *info, const SimhashNearMatch *m, int k)
{
	Relation	rel;
	TupleTableSlot *slot;
	bool		visible;

	if (!IsolationUsesXactSnapshot() || TransactionIdIsCurrentTransactionId(m->xmin))
		return;
	rel = table_open(info->leaves[m->leaf].relid, AccessShareLock);
	slot = table_slot_create(rel, NULL);
	visible = table_tuple_fetch_row_version(rel, (ItemPointer) &m->tid,
											GetTransactionSnapshot(), slot);
	ExecDropSingleTupleTableSlot(slot);
	table_close(rel, AccessShareLock);
	if (!visible)
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("could not serialize access due to a concurrent near-duplicate"),
				 errdetail("A row within %d bits was committed after this transaction's snapshot.",
						   k),
				 errhint("Retry the transaction.")));
}

/* Reject the row: a near-duplicate of an existing one. */
static void
SimhashRejectRow(SimhashNearDupInfo *info, TriggerData *trigdata, const SimhashNearMatch *m,
				 int k)
{
	Relation	rel = trigdata->tg_relation;
	char	   *key = SimhashDescribeKey(info, rel, m);

	ereport(ERROR,
			(errcode(ERRCODE_EXCLUSION_VIOLATION),
			 errmsg("new row for table \"%s\" is a near-duplicate of an existing row",
					RelationGetRelationName(rel)),
			 key ? errdetail_plural("%s is %d bit away (near-duplicate trigger \"%s\", k = %d).",
									"%s is %d bits away (near-duplicate trigger \"%s\", k = %d).",
									m->dist, key, m->dist, trigdata->tg_trigger->tgname, k) :
			 errdetail_plural("An existing row is %d bit away (near-duplicate trigger \"%s\", k = %d).",
							  "An existing row is %d bits away (near-duplicate trigger \"%s\", k = %d).",
							  m->dist, m->dist, trigdata->tg_trigger->tgname, k),
			 errhint("To store near-duplicates, use action 'skip' or 'link', a smaller k, or ALTER TABLE ... DISABLE TRIGGER %s.",
					 quote_identifier(trigdata->tg_trigger->tgname)),
			 errtableconstraint(rel, trigdata->tg_trigger->tgname)));
}

/* Store the match's key and distance (NULLs for none) in the link columns. */
static HeapTuple
SimhashLinkRow(SimhashNearDupInfo *info, Relation rel, HeapTuple tuple, TupleDesc desc,
			   const SimhashNearMatch *m)
{
	int			cols[2];
	Datum		values[2];
	bool		nulls[2];
	int			n = 0;

	if (info->link_key_attno != 0)
	{
		cols[n] = info->link_key_attno;
		/* a key the inserter may not see is not written into its row */
		nulls[n] = !m->found || m->keynull[0] || !SimhashKeyIsVisible(info, rel);
		values[n] = nulls[n] ? (Datum) 0 : m->key[0];
		n++;
	}
	if (info->link_dist_attno != 0)
	{
		cols[n] = info->link_dist_attno;
		nulls[n] = !m->found;
		values[n] = info->link_dist_type == INT8OID ? Int64GetDatum(m->dist) :
			info->link_dist_type == INT2OID ? Int16GetDatum(m->dist) : Int32GetDatum(m->dist);
		n++;
	}
	return heap_modify_tuple_by_cols(tuple, desc, n, cols, values, nulls);
}

/*
 * simhash_near_duplicate_trigger(fp_column, k, action [, options ...])
 */
Datum
simhash_near_duplicate_trigger(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = SimhashTriggerData(fcinfo, "simhash_near_duplicate_trigger");
	SimhashNearDupInfo *info = SimhashNearDupSetup(fcinfo, trigdata);
	TupleDesc	desc = RelationGetDescr(trigdata->tg_relation);
	bool		update = TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event);
	HeapTuple	tuple = update ? trigdata->tg_newtuple : trigdata->tg_trigtuple;
	TupleTableSlot *slot = update ? trigdata->tg_newslot : trigdata->tg_trigslot;
	Datum	   *scope = palloc(sizeof(Datum) * Max(info->nscope, 1));
	SimhashNearMatch match;
	SimhashNearVerify verify = {0};
	uint32		scope_hash;
	uint64		fp = 0;
	bool		has_fp;
	bool		in_scope;
	int			k;

	/*
	 * A generated fingerprint is computed from the new row, unless the
	 * UPDATE leaves its input alone: then the old row has it stored.
	 */
	if (update && info->fp_expr != NULL &&
		SimhashFingerprintInputsKept(info, trigdata, desc))
		has_fp = SimhashStoredFingerprint(info, trigdata->tg_trigtuple, desc, &fp);
	else
		has_fp = SimhashRowFingerprint(info, tuple, slot, desc, &fp);
	in_scope = SimhashRowScope(info, tuple, desc, scope, &scope_hash);
	/*
	 * An update that keeps the fingerprint and the scope keeps the check the
	 * row passed.  Only a row in scope has scope values to compare: a NULL
	 * one leaves the rest of scope[] unset (and out of scope, nothing is
	 * checked anyway).
	 */
	if (update && in_scope &&
		SimhashUpdateKeepsCheck(info, trigdata, desc, has_fp, fp, scope))
		return PointerGetDatum(tuple);

	memset(&match, 0, sizeof(match));
	k = info->k;
	if (has_fp && in_scope && k == SIMHASH_AUTO_RADIUS)
	{
		/* simhash_radius() of the text; a text without features matches nothing */
		text	   *whole = SimhashJoinTextColumns(tuple, desc, info->text_attno, info->ntext);

		k = whole ? SimhashRadiusOfText(PointerGetDatum(whole)) : 0;
		has_fp = (k > 0);
	}
	if (has_fp && in_scope)
	{
		/*
		 * A row the table's row-level security will refuse is refused
		 * before any search or lock: otherwise the outcome would tell the
		 * role about rows in a scope it may not write to.
		 */
		SimhashCheckRowSecurity(&info->rls_check[update ? 1 : 0], info->cxt,
								trigdata->tg_relation, slot,
								update ? CMD_UPDATE : CMD_INSERT);
		SimhashLockNeighbourhood(info->top_relid, scope_hash, fp, k);
		if (info->verify >= 0)
		{
			verify.s = info->verify;
			verify.text = SimhashJoinTextColumns(tuple, desc, info->text_attno, info->ntext);
		}
		SimhashFindNearDuplicate(info, fp, k, scope,
								 update ? &trigdata->tg_trigtuple->t_self : NULL,
								 info->verify >= 0 ? &verify : NULL, &match);
		if (verify.features != NULL)
			SimhashJaccardRelease(verify.features);
		if (match.found)
			SimhashCheckMatchVisible(info, &match, k);
	}

	switch (info->action)
	{
		case SIMHASH_ACTION_REJECT:
			if (match.found)
				SimhashRejectRow(info, trigdata, &match, k);
			return PointerGetDatum(tuple);
		case SIMHASH_ACTION_SKIP:
			return match.found ? PointerGetDatum(NULL) : PointerGetDatum(tuple);
		case SIMHASH_ACTION_LINK:
			return PointerGetDatum(SimhashLinkRow(info, trigdata->tg_relation, tuple, desc, &match));
	}
	return PointerGetDatum(tuple);	/* keep the compiler quiet */
}
