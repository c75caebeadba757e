/*-------------------------------------------------------------------------
 *
 * shscan.h
 *	  State of simhash index scans, shared by shscan.c, shread.c and shknn.c.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/access/shscan.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHSCAN_H
#define SHSCAN_H

#include "access/relscan.h"
#include "storage/buf.h"
#include "utils/sortsupport.h"

#include "shindex.h"

typedef enum SimhashScanMode
{
	SIMHASH_SCAN_EMPTY,			/* a NULL or empty qual: nothing matches */
	SIMHASH_SCAN_RANGE,			/* quals only, or no keys at all */
	SIMHASH_SCAN_KNN,			/* ORDER BY distance, expanding radius */
	SIMHASH_SCAN_SORTED			/* quals and ORDER BY on another centre */
} SimhashScanMode;

/* a match ready to be returned */
typedef struct SimhashHit
{
	uint64		fp;				/* for index-only scans */
	Datum		payload;		/* the included column (SimhashEntry) */
	ItemPointerData tid;
	int8		dist;			/* ORDER BY distance, -1 for NULL */
	bool		isnull;			/* a row with a NULL fingerprint */
	bool		payload_null;
} SimhashHit;

/* a growable array of matches */
typedef struct SimhashHitList
{
	SimhashHit *items;
	int			n;
	int			max;
	int			pos;			/* next to return */
} SimhashHitList;

typedef struct SimhashScanOpaqueData
{
	MemoryContext ctx;			/* reset at every rescan */
	SimhashScanMode mode;

	/* quals: fingerprints within radius[i] of center[i], all of them */
	int			nquals;
	uint64	   *qcenter;
	int		   *qradius;
	uint64		center;			/* probe centre: the tightest qual's */
	int			radius;			/* probe radius, 64 = everything */

	/* ORDER BY fp <-> ocenter */
	bool		ordered;
	bool		order_null;		/* the ORDER BY argument is NULL */
	uint64		ocenter;

	BlockNumber roots[SIMHASH_NTREES];
	uint16		levels[SIMHASH_NTREES];
	bool		started;
	bool		internal;		/* the extension's own search: not counted in
								 * pg_stat_*_indexes, pending rows not written */

	/* leaf reused between probes (pinned, not locked) */
	Buffer		curbuf;
	int			curband;
	Buffer		iospin;			/* index-only scan: leaf whose hits are out */
	SimhashSortKey curtarget;	/* the probe that left it pinned */
	/* its parent (level 1), pinned, not locked: where the next descent of
	 * the same band starts (SimhashDescendViaParent) */
	Buffer		parentbuf;
	int			parentband;
	SimhashSortKey parenttarget;

	/* entries collected from leaves, to be filtered */
	SimhashEntry *batch;
	int			nbatch;
	int			maxbatch;

	/* range scan */
	SimhashProbePlan plan;
	int			band;			/* band being probed */
	uint16	   *keys;			/* its probe keys, sorted */
	int			nkeys;
	int			keypos;
	bool		fullscan;		/* reading tree "band" leaf by leaf */
	BlockNumber nextleaf;		/* next leaf of a full scan */
	bool		nulls;			/* also return the NULL tree (no-key scans) */
	SimhashHitList hits;		/* matches ready to return */

	/* nearest-neighbour scan */
	int			ring[SIMHASH_BLOCKS];	/* radius probed so far per band */
	int			settled;		/* all entries within this distance found */
	int			certified;		/* settled by a ring read for one distance
								 * (SimhashSettleKey): entries up to it are
								 * in the buckets, later reads skip them */
	int			emitlimit;		/* largest ORDER BY distance that can match */
	int			emitdist;		/* distance being returned */
	int			nextband;		/* band whose ring grows next */

	/*
	 * The keep limit: entries farther than "keeplimit" are dropped as they
	 * are read, once the buckets within it hold "keepcount" rows ("kept":
	 * the rows of buckets 0..keeplimit, returned ones included), so a search
	 * stores and copies a few rows rather than all it reads.  Only distances
	 * within min(settled, keeplimit) are known whole; a caller that wants
	 * rows beyond it makes the search start over (SimhashKnnRaiseLimit).
	 */
	int			keeplimit;
	int64		keepcount;
	int64		kept;
	double		nentries;		/* estimated entries per band */
	SimhashHitList buckets[SIMHASH_BITS + 1];
	bool		nulls_done;

	/*
	 * Each distance in the order of the included column (the ORDER BY key's
	 * SIMHASH_SK_PAYLOAD_* flags): a distance is returned only once it is
	 * settled, its bucket sorted first.  "wanted" is how many rows the
	 * caller expects to take (0 unknown; SIMHASH_SK_WANTED_SHIFT) and
	 * "emitted" how many went out: the distance that will complete the
	 * wanted rows is settled by the lean read (SimhashKnnSettleFor).
	 */
	bool		payload_order;
	bool		payload_ssup_ready;
	MemoryContext payload_cxt;	/* the scan's: not reset at rescans */
	SortSupportData payload_ssup;	/* lives as long as the scan */
	bool		bucket_sorted[SIMHASH_BITS + 1];
	int64		wanted;
	int64		emitted;
} SimhashScanOpaqueData;

typedef SimhashScanOpaqueData *SimhashScanOpaque;


/* shscan.c */
extern double SimhashEstimateEntries(Relation index);
extern IndexScanDesc SimhashBeginKeyProbes(Relation index);

/* shread.c: reading leaves and filtering their entries */
extern void SimhashHitAddCopy(SimhashScanOpaque so, SimhashHitList *list,
							  const SimhashHit *hit);
extern void SimhashReleaseLeaf(SimhashScanOpaque so);
extern void SimhashProbeKey(IndexScanDesc scan, int band, uint16 key);
extern void SimhashSettleKey(IndexScanDesc scan, int band, uint16 key,
							 const int *radii, int dist);
extern BlockNumber SimhashReadLeaf(IndexScanDesc scan, BlockNumber blkno);
extern BlockNumber SimhashLeftmostLeaf(IndexScanDesc scan, int tree);
extern void SimhashFilterBatch(SimhashScanOpaque so, int band, const int *radii,
							   bool bucketed);

/* shrange.c: range scans */
extern void SimhashRangeBegin(IndexScanDesc scan);
extern bool SimhashRangeNext(IndexScanDesc scan);

/* shknn.c: nearest-neighbour and sorted scans */
extern bool SimhashOrderedNext(IndexScanDesc scan, SimhashHit *hit);

#endif							/* SHSCAN_H */
