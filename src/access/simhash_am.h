/*-------------------------------------------------------------------------
 *
 * simhash_am.h
 *	  The simhash index: what the other layers may use.
 *
 * The probe math (which keys of which bands a search within k bits reads,
 * shared by the band join and clusters), searches and counts of an index
 * (the triggers, the planner's estimates), the key cache of bulk loads,
 * the nearest-sort protocol (simhash_knn.h) and what _PG_init installs.
 * The access method's own declarations are in shindex.h and shpage.h,
 * which only src/access/ includes.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/access/simhash_am.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SIMHASH_AM_H
#define SIMHASH_AM_H

#include "storage/itemptr.h"
#include "utils/relcache.h"

#include "simhash.h"
#include "simhash_knn.h"

/* shprobe.c: which keys to probe for a radius */
typedef struct SimhashProbePlan
{
	int			radius[SIMHASH_BLOCKS]; /* per band; -1 = band not probed */
	bool		fullscan;		/* scan band fullscan_band entirely instead */
	int			fullscan_band;
	double		cost;			/* estimated entries + probes, see shprobe.c */
} SimhashProbePlan;

extern void SimhashPlanProbes(int k, double nentries, SimhashProbePlan *plan);
extern int	SimhashEnumerateRing(uint16 center, int bits, uint16 *out);
extern double SimhashRingSize(int bits);
extern int	SimhashEnumerateBall(uint16 center, int bits, uint16 *out);
extern int	SimhashEnumerateBallSorted(uint16 center, int bits, uint16 *out);
extern double SimhashBallSize(int bits);
extern double SimhashPlanKeys(const SimhashProbePlan *plan, int band);
extern double SimhashBinomialWithin(int k);

/*
 * Population counts of the four 16-bit blocks of x, each in its own 16-bit
 * lane (SWAR: no function call per block; this runs for every entry read).
 */
static inline uint64
SimhashBlockCounts(uint64 x)
{
	x = x - ((x >> 1) & UINT64CONST(0x5555555555555555));
	x = (x & UINT64CONST(0x3333333333333333)) + ((x >> 2) & UINT64CONST(0x3333333333333333));
	x = (x + (x >> 4)) & UINT64CONST(0x0F0F0F0F0F0F0F0F);
	return (x + (x >> 8)) & UINT64CONST(0x00FF00FF00FF00FF);
}

/* The count of block "block" (0 = most significant) from the lanes. */
static inline int
SimhashLane(uint64 counts, int block)
{
	return (int) ((counts >> (SIMHASH_BITS - SIMHASH_BLOCK_BITS * (block + 1))) & 0xFF);
}

/* The sum of the four lanes: the Hamming distance. */
static inline int
SimhashLaneSum(uint64 counts)
{
	return (int) ((counts * UINT64CONST(0x0001000100010001)) >> 48);
}

/*
 * Was a fingerprint at block distances "counts" from the centre already
 * reached by the probes of "radii" (a radius per band, -1 for none)?  A
 * band reaches it when its block is within that band's radius.  Every
 * search that probes band after band reports an entry only when the bands
 * before it did not reach it, so that each entry is reported once.
 */
static inline bool
SimhashReachedBefore(uint64 counts, const int *radii)
{
	for (int i = 0; i < SIMHASH_BLOCKS; i++)
		if (radii[i] >= 0 && SimhashLane(counts, i) <= radii[i])
			return true;
	return false;
}

/*
 * Searches of the extension's own (shscan.c, shinsert.c): called with each
 * match's TID, fingerprint and distance from the centre; return false to
 * stop.
 */
typedef bool (*SimhashFoundCallback) (ItemPointer tid, uint64 fp, int dist, void *arg);
extern void SimhashPendingWithin(Relation index, uint64 center, int radius,
								 SimhashFoundCallback found, void *arg);
extern uint64 SimhashPendingFlushes(void);
extern void SimhashInstallInsertHooks(void);

/* shscan.c: searches of the extension's own, and counts for estimates */
extern void SimhashSearchWithin(Relation index, uint64 center, int radius,
								SimhashFoundCallback found, void *arg);
extern int64 SimhashCountWithin(Relation index, uint64 center, int radius, int64 limit);
extern double SimhashSampleCountWithin(Relation index, uint64 center, int radius,
									   int64 limit);

/* keycache.c: decoded key runs for repeated searches */
typedef struct SimhashKeyCache SimhashKeyCache;
extern SimhashKeyCache *SimhashKeyCacheCreate(MemoryContext parent);
extern void SimhashKeyCacheReset(SimhashKeyCache *cache);
extern bool SimhashKeyCacheSearch(SimhashKeyCache *cache, Relation index, uint64 center,
								  int radius, SimhashFoundCallback found, void *arg);
extern void SimhashKeyCacheForget(SimhashKeyCache *cache, Relation index, uint64 fp);
extern void SimhashInstallKeyCache(void);

/* shhandler.c, shutils.c */
extern void SimhashRegisterOptions(void);
extern void SimhashCheckIncludedColumns(Relation index);

#endif							/* SIMHASH_AM_H */
