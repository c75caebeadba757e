/*-------------------------------------------------------------------------
 *
 * trigger_neardup.c
 *	  simhash_near_duplicate_trigger(): catch near-duplicates as rows
 *	  arrive.
 *
 *	CREATE TRIGGER docs_near BEFORE INSERT OR UPDATE ON docs FOR EACH ROW
 *		EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'reject');
 *
 * This file applies the action to each row (reject, skip, link); its
 * arguments are read and checked in neardup_setup.c, the search is in
 * neardup_search.c, the locks
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
#include "simhash_am.h"

PG_FUNCTION_INFO_V1(simhash_near_duplicate_trigger);

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
	int			member = -1;

	while ((member = bms_next_member(info->fp_inputs, member)) >= 0)
	{
		AttrNumber	attno = member + FirstLowInvalidHeapAttributeNumber;

		if (attno <= 0)			/* a whole row or a system column */
			return false;
		if (!SimhashColumnStoredSame(trigdata->tg_trigtuple, trigdata->tg_newtuple,
									 desc, attno))
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
			 errhint("Use action 'skip' or 'link', a smaller k, or ALTER TABLE ... DISABLE TRIGGER %s.",
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
