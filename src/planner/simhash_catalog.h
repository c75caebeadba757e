/*-------------------------------------------------------------------------
 *
 * simhash_catalog.h
 *	  The extension's catalog objects, found once and cached (catalog.c).
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/planner/simhash_catalog.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SIMHASH_CATALOG_H
#define SIMHASH_CATALOG_H

/*
 * The OIDs of the objects the planner, the join and the triggers recognize.
 * A field is InvalidOid when the object does not exist (the extension is
 * not installed in this database, or is being created or dropped).
 */
typedef struct SimhashCatalog
{
	Oid			am;				/* access method simhash */
	Oid			fingerprint_type;	/* simhash64 */
	Oid			ball_type;		/* simhash_ball */
	Oid			opfamily;		/* simhash64_ops of the access method */
	Oid			distance_op;	/* simhash64 <-> simhash64 */
	Oid			distance_func;	/* hamming(simhash64, simhash64) */
	Oid			within_op;		/* simhash64 <@ simhash_ball */
	Oid			within_func;	/* simhash_within(simhash64, simhash64, int4) */
	Oid			ball_func;		/* simhash_ball(simhash64, int4) */
} SimhashCatalog;

extern void SimhashRegisterCatalogCallbacks(void);
extern const SimhashCatalog *SimhashGetCatalog(void);
extern bool SimhashIsIndexAm(Oid amoid);
extern bool SimhashIsFingerprintType(Oid typid);
extern bool SimhashIsBallType(Oid typid);
extern bool SimhashIsOpfamilyComplete(Oid opfamily);

#endif							/* SIMHASH_CATALOG_H */
