/*-------------------------------------------------------------------------
 *
 * trigger_fingerprint.c
 *	  simhash_fingerprint_trigger(): fill a simhash64 column from text
 *	  columns, in the manner of core's tsvector_update_trigger.
 *
 *	CREATE TRIGGER docs_fp BEFORE INSERT OR UPDATE OF title, body ON docs
 *		FOR EACH ROW EXECUTE FUNCTION simhash_fingerprint_trigger(fp, title, body);
 *
 * The column receives simhash of the text columns joined by newlines,
 * NULL ones left out, or NULL when all are NULL: exactly
 *
 *		CASE WHEN num_nonnulls(title, body) > 0
 *			 THEN simhash(concat_ws(E'\n', title, body)) END
 *
 * (a newline is a separator, so no feature spans two columns; one column
 * gives simhash(body)).  On UPDATE it recomputes when a text column or the
 * fingerprint column itself is assigned (so that SET body = body fills it
 * in), or holds another value than in the old row: an earlier BEFORE
 * trigger, or the SET of an ON CONFLICT DO UPDATE through such a trigger,
 * may change the text without the UPDATE assigning it.  Unlike a generated column, it
 * needs no table rewrite when added to a big table, and the fingerprint can
 * be filled in later by any UPDATE of the text.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/neardup/trigger_fingerprint.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/sysattr.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "fmgr.h"
#include "nodes/bitmapset.h"
#include "parser/parse_coerce.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "neardup.h"
#include "simhash_am.h"

PG_FUNCTION_INFO_V1(simhash_fingerprint_trigger);

/* Is the column assigned by the UPDATE that fired the trigger? */
static inline bool
SimhashColumnUpdated(TriggerData *trigdata, AttrNumber attno)
{
	return bms_is_member(attno - FirstLowInvalidHeapAttributeNumber,
						 trigdata->tg_updatedcols);
}

/*
 * Is the column assigned by the UPDATE, or does its new value differ from
 * the old one (in its bytes: an equal value stored differently only costs
 * a recomputation)?
 */
static bool
SimhashColumnChanged(TriggerData *trigdata, TupleDesc desc, AttrNumber attno)
{
	Form_pg_attribute att = TupleDescAttr(desc, attno - 1);
	bool		oldnull;
	bool		newnull;
	Datum		oldvalue;
	Datum		newvalue;

	if (SimhashColumnUpdated(trigdata, attno))
		return true;
	oldvalue = heap_getattr(trigdata->tg_trigtuple, attno, desc, &oldnull);
	newvalue = heap_getattr(trigdata->tg_newtuple, attno, desc, &newnull);
	if (oldnull || newnull)
		return oldnull != newnull;
	return !datumIsEqual(oldvalue, newvalue, att->attbyval, att->attlen);
}

/*
 * simhash_fingerprint_trigger(fp_column, text_column [, text_column ...])
 */
Datum
simhash_fingerprint_trigger(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata;
	Trigger    *trigger;
	Relation	rel;
	TupleDesc	desc;
	HeapTuple	tuple;
	AttrNumber	fp_attno;
	AttrNumber *cols;
	int			ncols;
	bool		needed;
	uint64		fp = 0;
	Datum		value;
	bool		isnull;
	int			replace;
	text	   *whole;

	trigdata = SimhashTriggerData(fcinfo, "simhash_fingerprint_trigger");
	trigger = trigdata->tg_trigger;
	rel = trigdata->tg_relation;
	desc = RelationGetDescr(rel);
	if (trigger->tgnargs < 2)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("simhash_fingerprint_trigger needs a fingerprint column and at least one text column"),
				 errhint("Create the trigger with EXECUTE FUNCTION simhash_fingerprint_trigger(fp, body).")));

	fp_attno = SimhashTriggerFingerprintColumn(rel, trigger->tgargs[0],
											   gettext_noop("The trigger writes the fingerprint to this column."));
	if (TupleDescAttr(desc, fp_attno - 1)->attgenerated)
		ereport(ERROR,
				(errcode(ERRCODE_GENERATED_ALWAYS),
				 errmsg("column \"%s\" of table \"%s\" is a generated column",
						trigger->tgargs[0], RelationGetRelationName(rel)),
				 errdetail("A generated column computes its fingerprint itself."),
				 errhint("Use either the generated column or the trigger, not both.")));

	/* CREATE TRIGGER puts no bound on the number of arguments */
	ncols = trigger->tgnargs - 1;
	cols = palloc(sizeof(AttrNumber) * ncols);
	for (int i = 0; i < ncols; i++)
	{
		cols[i] = SimhashTriggerColumn(rel, trigger->tgargs[i + 1], gettext_noop("The trigger fingerprints the text of this column."));
		if (!IsBinaryCoercible(TupleDescAttr(desc, cols[i] - 1)->atttypid, TEXTOID))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column \"%s\" of table \"%s\" is not of a text type",
							trigger->tgargs[i + 1], RelationGetRelationName(rel)),
					 errhint("Fingerprint text, varchar or another type binary-coercible to text.")));
		/* a BEFORE trigger sees a generated column before it is computed */
		if (TupleDescAttr(desc, cols[i] - 1)->attgenerated)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("text column \"%s\" of table \"%s\" is a generated column",
							trigger->tgargs[i + 1], RelationGetRelationName(rel)),
					 errdetail("Generated columns are computed after BEFORE triggers, so the trigger would find no text in it."),
					 errhint("Name the columns it is generated from as the trigger's text columns.")));
	}

	if (TRIGGER_FIRED_BY_INSERT(trigdata->tg_event))
	{
		tuple = trigdata->tg_trigtuple;
		needed = true;
	}
	else
	{
		tuple = trigdata->tg_newtuple;
		needed = SimhashColumnChanged(trigdata, desc, fp_attno);
		for (int i = 0; i < ncols && !needed; i++)
			needed = SimhashColumnChanged(trigdata, desc, cols[i]);
	}
	if (!needed)
		return PointerGetDatum(tuple);

	whole = SimhashJoinTextColumns(tuple, desc, cols, ncols);
	isnull = (whole == NULL);
	if (!isnull)
		fp = DatumGetSimhash64(DirectFunctionCall1(simhash_text, PointerGetDatum(whole)));
	value = Simhash64GetDatum(fp);
	/* a domain's constraints hold for what the trigger stores too */
	if (get_typtype(TupleDescAttr(desc, fp_attno - 1)->atttypid) == TYPTYPE_DOMAIN)
		domain_check(value, isnull, TupleDescAttr(desc, fp_attno - 1)->atttypid, NULL, NULL);
	replace = fp_attno;
	return PointerGetDatum(heap_modify_tuple_by_cols(tuple, desc, 1, &replace,
													 &value, &isnull));
}
