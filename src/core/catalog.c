/*-------------------------------------------------------------------------
 *
 * catalog.c
 *	  The extension's catalog objects, found once and cached.
 *
 * The planner hook, the band join, the estimators and the triggers all ask
 * "is this ours?" of access methods, types, operators and functions.  They
 * ask it here, by OID.  The OIDs are found from the extension's schema
 * (pg_extension.extnamespace), so ALTER EXTENSION SET SCHEMA and a
 * search_path that does not include the schema change nothing, and an
 * object of the same name elsewhere is never taken for ours.  Any change to
 * pg_am, pg_type, pg_proc, pg_operator, pg_opfamily or pg_amop invalidates
 * the cache (syscache callbacks), which is how CREATE, DROP and ALTER
 * EXTENSION, in this session or another, are noticed.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/core/catalog.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "simhash.h"
static SimhashCatalog simhash_catalog;
static bool simhash_catalog_valid = false;
/* invalidations seen so far: a load that overlaps one is repeated */
static uint64 simhash_catalog_invalidations = 0;

/* Forget the cached OIDs (a syscache callback). */
static void
SimhashInvalidateCatalog(Datum arg, int cacheid, uint32 hashvalue)
{
	simhash_catalog_valid = false;
	simhash_catalog_invalidations++;
}

/* Register the invalidation callbacks (from _PG_init). */
void
SimhashRegisterCatalogCallbacks(void)
{
	static const int caches[] = {AMOID, TYPEOID, PROCOID, OPEROID,
	OPFAMILYOID, AMOPSTRATEGY};

	for (int i = 0; i < lengthof(caches); i++)
		CacheRegisterSyscacheCallback(caches[i], SimhashInvalidateCatalog, (Datum) 0);
}

/* The schema of the extension simhash, or InvalidOid if not installed. */
static Oid
SimhashExtensionSchema(void)
{
	Relation	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	Oid			nsp = InvalidOid;

	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber, F_NAMEEQ,
				CStringGetDatum("simhash"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
		nsp = ((Form_pg_extension) GETSTRUCT(tup))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return nsp;
}

/* The OID of the function name(argtypes) in schema nsp, or InvalidOid. */
static Oid
SimhashLookupFunction(Oid nsp, const char *name, int nargs, const Oid *argtypes)
{
	oidvector  *args = buildoidvector(argtypes, nargs);

	return GetSysCacheOid3(PROCNAMEARGSNSP, Anum_pg_proc_oid, CStringGetDatum(name),
						   PointerGetDatum(args), ObjectIdGetDatum(nsp));
}

/* Find every object; the ones that do not exist stay InvalidOid. */
static void
SimhashLoadCatalog(SimhashCatalog *cat)
{
	Oid			nsp;
	Oid			opclass;
	Oid			fp;
	Oid			argtypes[3];

	memset(cat, 0, sizeof(SimhashCatalog));
	nsp = SimhashExtensionSchema();
	if (!OidIsValid(nsp))
		return;
	cat->am = get_am_oid("simhash", true);
	fp = cat->fingerprint_type = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
												 CStringGetDatum("simhash64"),
												 ObjectIdGetDatum(nsp));
	cat->ball_type = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
									 CStringGetDatum("simhash_ball"),
									 ObjectIdGetDatum(nsp));
	if (!OidIsValid(cat->am) || !OidIsValid(fp))
		return;

	opclass = GetDefaultOpClass(fp, cat->am);
	if (OidIsValid(opclass))
	{
		cat->opfamily = get_opclass_family(opclass);
		cat->distance_op = get_opfamily_member(cat->opfamily, fp, fp,
											   SIMHASH_DISTANCE_STRATEGY);
		if (OidIsValid(cat->ball_type))
			cat->within_op = get_opfamily_member(cat->opfamily, fp, cat->ball_type,
												 SIMHASH_WITHIN_STRATEGY);
		if (OidIsValid(cat->distance_op))
			cat->distance_func = get_opcode(cat->distance_op);
	}

	argtypes[0] = fp;
	argtypes[1] = INT4OID;
	cat->ball_func = SimhashLookupFunction(nsp, "simhash_ball", 2, argtypes);
	if (OidIsValid(cat->ball_func) && get_func_rettype(cat->ball_func) != cat->ball_type)
		cat->ball_func = InvalidOid;
	argtypes[1] = fp;
	argtypes[2] = INT4OID;
	cat->within_func = SimhashLookupFunction(nsp, "simhash_within", 3, argtypes);
}

/*
 * The extension's objects in this database.  Loaded on first use after an
 * invalidation.  The lookups take locks, which processes invalidations, so
 * a load during which one arrived may be stale: it is done again, a few
 * times at most (other sessions' DDL could otherwise keep us looping), and
 * then used for this call without being kept.
 */
const SimhashCatalog *
SimhashGetCatalog(void)
{
	for (int attempt = 0; attempt < 3 && !simhash_catalog_valid; attempt++)
	{
		uint64		seen = simhash_catalog_invalidations;

		SimhashLoadCatalog(&simhash_catalog);
		simhash_catalog_valid = (seen == simhash_catalog_invalidations);
	}
	return &simhash_catalog;
}

/* Is amoid the simhash access method? */
bool
SimhashIsIndexAm(Oid amoid)
{
	return OidIsValid(amoid) && amoid == SimhashGetCatalog()->am;
}

/* Is typid simhash64, or a domain over it? */
bool
SimhashIsFingerprintType(Oid typid)
{
	Oid			fp = SimhashGetCatalog()->fingerprint_type;

	return OidIsValid(typid) && OidIsValid(fp) &&
		(typid == fp || getBaseType(typid) == fp);
}

/*
 * Is opfamily the extension's simhash64_ops, with everything the clause
 * rewrite builds from (the operators and the ball constructor)?
 */
bool
SimhashIsOpfamilyComplete(Oid opfamily)
{
	const SimhashCatalog *cat = SimhashGetCatalog();

	return OidIsValid(opfamily) && opfamily == cat->opfamily &&
		OidIsValid(cat->distance_op) && OidIsValid(cat->within_op) &&
		OidIsValid(cat->ball_func);
}

/* Is typid simhash_ball? */
bool
SimhashIsBallType(Oid typid)
{
	return OidIsValid(typid) && typid == SimhashGetCatalog()->ball_type;
}
