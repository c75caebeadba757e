/*-------------------------------------------------------------------------
 *
 * trigger_util.c
 *	  What the simhash triggers check about how they were created.
 *
 * A trigger's definition is only seen when it fires, so every mistake in
 * it (wrong timing, a column dropped or renamed since) is reported then,
 * with a code the application can act on, and before anything is changed.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/neardup/trigger_util.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "catalog/pg_trigger.h"
#include "commands/trigger.h"
#include "executor/tuptable.h"
#include "lib/stringinfo.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "neardup.h"

/*
 * The TriggerData of a call of trigger function "name", which must fire
 * BEFORE INSERT or UPDATE, FOR EACH ROW.
 */
TriggerData *
SimhashTriggerData(FunctionCallInfo fcinfo, const char *name)
{
	TriggerData *trigdata;

	if (!CALLED_AS_TRIGGER(fcinfo))
		elog(ERROR, "%s: not called by the trigger manager", name);
	trigdata = (TriggerData *) fcinfo->context;
	if (!TRIGGER_FIRED_BEFORE(trigdata->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(trigdata->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("trigger \"%s\" on table \"%s\" must be BEFORE ... FOR EACH ROW",
						trigdata->tg_trigger->tgname,
						RelationGetRelationName(trigdata->tg_relation)),
				 errdetail("%s changes the row before it is stored.", name),
				 errhint("Create it with CREATE TRIGGER ... BEFORE INSERT OR UPDATE ... FOR EACH ROW.")));
	if (!TRIGGER_FIRED_BY_INSERT(trigdata->tg_event) &&
		!TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("trigger \"%s\" on table \"%s\" must fire on INSERT or UPDATE only",
						trigdata->tg_trigger->tgname,
						RelationGetRelationName(trigdata->tg_relation)),
				 errhint("Create it with CREATE TRIGGER ... BEFORE INSERT OR UPDATE ... FOR EACH ROW.")));
	return trigdata;
}

/*
 * The table the trigger was created on: the trigger's own table, or for a
 * clone on a partition, the partitioned table of the original trigger.
 */
Oid
SimhashTriggerDefiningTable(Trigger *trigger, Oid relid)
{
	Oid			tgoid = trigger->tgoid;
	Relation	tgrel;

	if (!trigger->tgisclone)
		return relid;
	tgrel = table_open(TriggerRelationId, AccessShareLock);
	for (;;)
	{
		ScanKeyData key;
		SysScanDesc scan;
		HeapTuple	tup;
		Oid			parent;

		ScanKeyInit(&key, Anum_pg_trigger_oid, BTEqualStrategyNumber, F_OIDEQ,
					ObjectIdGetDatum(tgoid));
		scan = systable_beginscan(tgrel, TriggerOidIndexId, true, NULL, 1, &key);
		tup = systable_getnext(scan);
		if (!HeapTupleIsValid(tup))
			elog(ERROR, "could not find trigger %u", tgoid);
		relid = ((Form_pg_trigger) GETSTRUCT(tup))->tgrelid;
		parent = ((Form_pg_trigger) GETSTRUCT(tup))->tgparentid;
		systable_endscan(scan);
		if (!OidIsValid(parent))
			break;
		tgoid = parent;
	}
	table_close(tgrel, AccessShareLock);
	return relid;
}

/*
 * The attribute number of the column a trigger argument names ("role" is a
 * sentence saying what the trigger uses the column for, for the error's
 * detail); 42703 if the table has no such column, as after the column was
 * dropped or renamed.
 */
AttrNumber
SimhashTriggerColumn(Relation rel, const char *colname, const char *role)
{
	AttrNumber	attno = get_attnum(RelationGetRelid(rel), colname);

	if (attno == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of table \"%s\" does not exist",
						colname, RelationGetRelationName(rel)),
				 errdetail_internal("%s", _(role)),
				 errhint("After renaming or dropping a column the trigger names, create the trigger again.")));
	if (attno < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_COLUMN_REFERENCE),
				 errmsg("column \"%s\" of table \"%s\" is a system column",
						colname, RelationGetRelationName(rel)),
				 errdetail_internal("%s", _(role))));
	return attno;
}

/*
 * SimhashTriggerColumn for the fingerprint column: also 42804 unless the
 * column is of type simhash64.
 */
AttrNumber
SimhashTriggerFingerprintColumn(Relation rel, const char *colname, const char *role)
{
	AttrNumber	attno = SimhashTriggerColumn(rel, colname, role);

	if (!SimhashIsFingerprintType(TupleDescAttr(RelationGetDescr(rel), attno - 1)->atttypid))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("column \"%s\" of table \"%s\" is not of type simhash64",
						colname, RelationGetRelationName(rel)),
				 errdetail_internal("%s", _(role))));
	return attno;
}

/* Join the non-NULL texts parts[0..nparts) by newlines (NULL for none). */
static text *
SimhashJoinTexts(text **parts, int nparts)
{
	StringInfoData buf;

	if (nparts == 0)
		return NULL;
	if (nparts == 1)
		return parts[0];
	initStringInfo(&buf);
	appendStringInfoSpaces(&buf, VARHDRSZ);
	for (int i = 0; i < nparts; i++)
	{
		if (i > 0)
			appendStringInfoChar(&buf, '\n');
		appendBinaryStringInfo(&buf, VARDATA_ANY(parts[i]), VARSIZE_ANY_EXHDR(parts[i]));
	}
	SET_VARSIZE(buf.data, buf.len);
	return (text *) buf.data;
}

/*
 * The text columns "cols" of a row joined by newlines, NULL ones left out;
 * NULL when all are NULL.  A newline is a separator, so no feature spans
 * two columns: this is concat_ws(E'\n', ...) of the columns.
 */
text *
SimhashJoinTextColumns(HeapTuple tuple, TupleDesc desc, const AttrNumber *cols, int ncols)
{
	text	  **parts = palloc(sizeof(text *) * Max(ncols, 1));
	int			nparts = 0;

	for (int i = 0; i < ncols; i++)
	{
		bool		isnull;
		Datum		d = heap_getattr(tuple, cols[i], desc, &isnull);

		if (!isnull)
			parts[nparts++] = DatumGetTextPP(d);
	}
	return SimhashJoinTexts(parts, nparts);
}

/*
 * SimhashJoinTextColumns of the row in a slot, as a Datum; *isnull when all
 * are NULL.  A single non-NULL column is returned as stored, not detoasted,
 * so that a long one can be read in slices; *built says whether the result
 * was allocated here (the caller may free it).
 */
Datum
SimhashJoinSlotTextColumns(TupleTableSlot *slot, const AttrNumber *cols, int ncols,
						   bool *isnull, bool *built)
{
	Datum	   *values = palloc(sizeof(Datum) * Max(ncols, 1));
	text	  **parts;
	int			nparts = 0;
	text	   *whole;

	for (int i = 0; i < ncols; i++)
	{
		bool		null;
		Datum		d = slot_getattr(slot, cols[i], &null);

		if (!null)
			values[nparts++] = d;
	}
	*isnull = (nparts == 0);
	*built = false;
	if (nparts <= 1)
	{
		Datum		only = (nparts == 1) ? values[0] : (Datum) 0;

		pfree(values);
		return only;
	}
	/* detoasted only now that there are several to join */
	parts = palloc(sizeof(text *) * nparts);
	for (int i = 0; i < nparts; i++)
		parts[i] = DatumGetTextPP(values[i]);
	pfree(values);
	whole = SimhashJoinTexts(parts, nparts);
	pfree(parts);
	*built = true;
	return PointerGetDatum(whole);
}

/*
 * Do two rows have the same text in columns "cols", joined as
 * SimhashJoinTextColumns joins them (the same bytes, or both NULL)?
 *
 * An UPDATE that does not set the columns keeps their stored values, a
 * long one as the very same TOAST pointer: columns equal as stored are the
 * same text, told without reading (and detoasting) it.
 */
bool
SimhashSameTextColumns(HeapTuple a, HeapTuple b, TupleDesc desc, const AttrNumber *cols,
					   int ncols)
{
	bool		same_stored = true;
	text	   *ta;
	text	   *tb;

	for (int i = 0; i < ncols && same_stored; i++)
	{
		bool		anull;
		bool		bnull;
		Datum		da = heap_getattr(a, cols[i], desc, &anull);
		Datum		db = heap_getattr(b, cols[i], desc, &bnull);

		same_stored = (anull == bnull) && (anull || datumIsEqual(da, db, false, -1));
	}
	if (same_stored)
		return true;

	ta = SimhashJoinTextColumns(a, desc, cols, ncols);
	tb = SimhashJoinTextColumns(b, desc, cols, ncols);
	if (ta == NULL || tb == NULL)
		return ta == tb;
	return VARSIZE_ANY_EXHDR(ta) == VARSIZE_ANY_EXHDR(tb) &&
		memcmp(VARDATA_ANY(ta), VARDATA_ANY(tb), VARSIZE_ANY_EXHDR(ta)) == 0;
}

/*
 * Read the similarity of the trigger option "verify=s": ASCII digits with
 * at most one point and at least one digit (no sign, exponent, spaces, NaN
 * or infinity), of a value from 0 to 1.  False if "num" is not one.  The
 * decimal is compared with 1 as written, before rounding to a double:
 * "1.00000000000000000001" is above 1, though it reads as the double 1.
 */
bool
SimhashParseSimilarity(const char *num, double *s)
{
	int			ndigits = 0;
	int			npoints = 0;
	const char *p = num;

	for (const char *c = num; *c; c++)
	{
		if (*c >= '0' && *c <= '9')
			ndigits++;
		else if (*c == '.' && npoints == 0)
			npoints++;
		else
			return false;
	}
	if (ndigits == 0)
		return false;
	/* above 1: an integer part other than 0 or 1, or 1 and a nonzero fraction */
	while (*p == '0')
		p++;
	if (*p != '\0' && *p != '.')
	{
		if (*p != '1' || (p[1] != '\0' && p[1] != '.'))
			return false;
		for (p++; *p; p++)
			if (*p != '.' && *p != '0')
				return false;
	}
	/* LC_NUMERIC is always C in the backend: the point is the decimal point */
	*s = strtod(num, NULL);
	return *s >= 0.0 && *s <= 1.0;
}
