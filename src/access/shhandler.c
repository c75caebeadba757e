/*-------------------------------------------------------------------------
 *
 * shhandler.c
 *	  The simhash index access method's handler and options.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/access/shhandler.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/amapi.h"
#include "access/reloptions.h"
#include "commands/vacuum.h"

#include "shindex.h"

PG_FUNCTION_INFO_V1(simhash_handler);

static relopt_kind simhash_relopt_kind;
static relopt_parse_elt simhash_relopt_tab[1];

/* Register the index's reloptions (from _PG_init). */
void
SimhashRegisterOptions(void)
{
	simhash_relopt_kind = add_reloption_kind();
	add_int_reloption(simhash_relopt_kind, "fillfactor",
					  "Packs simhash index leaves to this percentage when building",
					  SIMHASH_DEFAULT_FILLFACTOR, SIMHASH_MIN_FILLFACTOR, 100,
					  ShareUpdateExclusiveLock);
	simhash_relopt_tab[0].optname = "fillfactor";
	simhash_relopt_tab[0].opttype = RELOPT_TYPE_INT;
	simhash_relopt_tab[0].offset = offsetof(SimhashOptions, fillfactor);
}

/* amoptions: parse WITH (...) of CREATE INDEX. */
static bytea *
shoptions(Datum reloptions, bool validate)
{
	return (bytea *) build_reloptions(reloptions, validate, simhash_relopt_kind,
									  sizeof(SimhashOptions), simhash_relopt_tab,
									  lengthof(simhash_relopt_tab));
}

/*
 * simhash_handler(internal) -> index_am_handler
 *		What the simhash access method can do, and its callbacks.
 */
Datum
simhash_handler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *amroutine = makeNode(IndexAmRoutine);

	amroutine->amstrategies = SIMHASH_NSTRATEGIES;
	amroutine->amsupport = 0;
	amroutine->amoptsprocnum = 0;
	amroutine->amcanorder = false;
	amroutine->amcanorderbyop = true;
	amroutine->amcanbackward = false;
	amroutine->amcanunique = false;
	amroutine->amcanmulticol = false;
	/* scans without keys return every row, NULL fingerprints included */
	amroutine->amoptionalkey = true;
	amroutine->amsearcharray = false;
	amroutine->amsearchnulls = false;
	amroutine->amstorage = false;
	amroutine->amclusterable = false;
	amroutine->ampredlocks = false;
	amroutine->amcanparallel = false;
	amroutine->amcaninclude = true;	/* one column; see SimhashCheckIncludedColumns */
	amroutine->amusemaintenanceworkmem = true;
	amroutine->amparallelvacuumoptions =
		VACUUM_OPTION_PARALLEL_BULKDEL | VACUUM_OPTION_PARALLEL_CLEANUP;
	amroutine->amkeytype = InvalidOid;

	amroutine->ambuild = shbuild;
	amroutine->ambuildempty = shbuildempty;
	amroutine->aminsert = shinsert;
	amroutine->ambulkdelete = shbulkdelete;
	amroutine->amvacuumcleanup = shvacuumcleanup;
	/*
	 * No index-only scans, although entries hold whole fingerprints: scans
	 * release their leaves between probes, so VACUUM could recycle a TID
	 * whose page the visibility map then calls all-visible (see shread.c).
	 */
	amroutine->amcanreturn = NULL;
	amroutine->amcostestimate = shcostestimate;
	amroutine->amoptions = shoptions;
	amroutine->amproperty = NULL;
	amroutine->ambuildphasename = shbuildphasename;
	amroutine->amvalidate = shvalidate;
	amroutine->amadjustmembers = NULL;
	amroutine->ambeginscan = shbeginscan;
	amroutine->amrescan = shrescan;
	amroutine->amgettuple = shgettuple;
	amroutine->amgetbitmap = shgetbitmap;
	amroutine->amendscan = shendscan;
	amroutine->ammarkpos = NULL;
	amroutine->amrestrpos = NULL;
	amroutine->amestimateparallelscan = NULL;
	amroutine->aminitparallelscan = NULL;
	amroutine->amparallelrescan = NULL;

	PG_RETURN_POINTER(amroutine);
}
