/*-------------------------------------------------------------------------
 *
 * simhash.h
 *	  The core layer's interface: the simhash64 and simhash_ball types,
 *	  radii, blocks and the catalog lookups.
 *
 * A simhash64 is a 64-bit unsigned fingerprint stored as a pass-by-value
 * int64 Datum.  Bit i is (value >> i) & 1; the text form prints the value
 * most significant nibble first.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/core/simhash.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SIMHASH_H
#define SIMHASH_H

#include "fmgr.h"
#include "port/pg_bitutils.h"

#include "simhash_compat.h"

#define DatumGetSimhash64(X)	((uint64) DatumGetInt64(X))
#define Simhash64GetDatum(X)	Int64GetDatum((int64) (X))
#define PG_GETARG_SIMHASH64(n)	DatumGetSimhash64(PG_GETARG_DATUM(n))
#define PG_RETURN_SIMHASH64(x)	return Simhash64GetDatum(x)

/*
 * Number of bits in a fingerprint, of its 16-bit blocks (the index keeps
 * one tree, a "band", per block), of bits per block and of the values a
 * block takes (the keys of a band).
 */
#define SIMHASH_BITS			64
#define SIMHASH_BLOCKS			4
#define SIMHASH_BLOCK_BITS		16
#define SIMHASH_BLOCK_KEYS		(1 << SIMHASH_BLOCK_BITS)

/*
 * Weights of simhash(text): a feature weighs its number of occurrences,
 * capped at max(SIMHASH_CAP_MIN, W / SIMHASH_CAP_SHARE) where W is the sum
 * over all features of min(occurrences, SIMHASH_CAP_MIN).  So no feature
 * weighs more than a sixteenth of the document (or 8), and one endlessly
 * repeated token cannot decide the fingerprint.  Chosen by bench/quality.
 */
#define SIMHASH_CAP_MIN			8
#define SIMHASH_CAP_SHARE		16

/* The weight cap of a document whose occurrences capped at 8 sum to w8. */
static inline uint64
SimhashWeightCap(uint64 w8)
{
	return w8 / SIMHASH_CAP_SHARE > SIMHASH_CAP_MIN ?
		w8 / SIMHASH_CAP_SHARE : SIMHASH_CAP_MIN;
}

/*
 * Radii.  A search within radius k finds the fingerprints at most k bits
 * away: every k below 0 finds nothing and every k of 64 or more finds
 * everything.  Each radius that enters from SQL (a simhash_ball, the bound
 * of "fp <-> q <= k", simhash_within's k) is normalized to [-1, 64] where it
 * enters, so that nothing downstream (probe plans, costs, estimates, scans,
 * the band join) ever sees another value.
 */
#define SIMHASH_EMPTY_RADIUS	(-1)

static inline int
SimhashNormalizeRadius(int64 k)
{
	if (k < 0)
		return SIMHASH_EMPTY_RADIUS;
	return k > SIMHASH_BITS ? SIMHASH_BITS : (int) k;
}

extern bool SimhashParseHex(const char *s, size_t len, uint64 *value);

/* the simhash_ball type: fingerprints within "radius" of "center" */
typedef struct SimhashBall
{
	uint64		center;
	int32		radius;
	int32		pad;			/* keep the size a multiple of 8 */
} SimhashBall;

#define DatumGetSimhashBall(X)	((SimhashBall *) DatumGetPointer(X))

#define PG_GETARG_SIMHASHBALL(n) DatumGetSimhashBall(PG_GETARG_DATUM(n))

/* radius assumed by estimates when it is only known at run time */
#define SIMHASH_ESTIMATE_RADIUS 3

/* ball.c: the radius of a simhash_ball expression (nodes/primnodes.h) */
extern int	SimhashBallExprRadius(struct Node *node, uint64 *center, bool *center_known);

/*
 * Operator strategies of the simhash64_ops class (the install script's
 * CREATE OPERATOR CLASS)
 */
#define SIMHASH_WITHIN_STRATEGY	1	/* simhash64 <@ simhash_ball */
#define SIMHASH_DISTANCE_STRATEGY 2 /* simhash64 <-> simhash64, ORDER BY */
#define SIMHASH_EQUAL_STRATEGY	3	/* simhash64 = simhash64 */
#define SIMHASH_NSTRATEGIES		3

/*
 * catalog.c: the extension's catalog objects, found once and cached.
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

/* Hamming distance between two fingerprints */
static inline int
SimhashDistance(uint64 a, uint64 b)
{
	return pg_popcount64(a ^ b);
}

/* 16-bit block number "block" (0 = most significant) of a fingerprint */
static inline uint16
SimhashBlock(uint64 fp, int block)
{
	return (uint16) (fp >> (SIMHASH_BITS - SIMHASH_BLOCK_BITS * (block + 1)));
}

/*
 * Turn the n counts of a counting sort into each value's first position
 * (an exclusive prefix sum) and return their total.
 */
static inline uint32
SimhashCountsToStarts(uint32 *counts, int n)
{
	uint32		sum = 0;

	for (int i = 0; i < n; i++)
	{
		uint32		c = counts[i];

		counts[i] = sum;
		sum += c;
	}
	return sum;
}

#endif							/* SIMHASH_H */
