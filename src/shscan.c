/*-------------------------------------------------------------------------
 *
 * shscan.c
 *	  Index scans of the simhash index: radius searches and nearest
 *	  neighbours.
 *
 * Three kinds of scan:
 *
 *	- range ("fp <@ simhash_ball(q, k)", "fp = q"): the probe plan of
 *	  shprobe.c gives a radius per band; each band's keys within that radius
 *	  of q's block are probed in increasing order, reusing the current leaf
 *	  while it covers the next key.  Every entry holds its whole fingerprint,
 *	  so the exact distance is checked here, and an entry is returned only
 *	  by the first band that reaches it.  No recheck, no wasted heap visits.
 *
 *	- nearest neighbours ("ORDER BY fp <-> q"): the radius grows one band
 *	  at a time (round robin).  After band radii r_0..r_3 have been probed,
 *	  every entry within sum(r_j + 1) - 1 of q has been seen (shprobe.c), so
 *	  the found entries up to that distance are returned in distance order
 *	  from a bucket queue indexed by distance (0..64).  When the next ring
 *	  of keys would cost more than reading a whole band, the scan reads one
 *	  band completely instead, which settles all distances.  Rows with a
 *	  NULL fingerprint come last, with a NULL distance, as in a sort.
 *	  With a radius qual on the same centre the scan stops at the radius.
 *
 *	- sorted: a radius qual whose centre differs from the ORDER BY centre;
 *	  the (few) matches are collected and returned sorted by distance.
 *
 * Entries carry whole fingerprints, so index-only scans are supported.
 *
 * Scans copy entries out of a leaf under a share lock and release the lock
 * before returning anything; holding a pin is only an optimization.  That
 * is safe for MVCC snapshots: a TID whose entry VACUUM removes after we read
 * it can only be reused by a row inserted later, which the scan's snapshot
 * cannot see.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/shscan.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relscan.h"
#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"

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
	ItemPointerData tid;
	int16		dist;			/* ORDER BY distance, -1 for NULL */
	bool		isnull;			/* a row with a NULL fingerprint */
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
	bool		count_stats;	/* count in pg_stat_*_indexes (not for estimates) */

	/* leaf reused between probes (pinned, not locked) */
	Buffer		curbuf;
	int			curband;
	SimhashSortKey curtarget;	/* the probe that left it pinned */

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
	int			ring[SIMHASH_NBANDS];	/* radius probed so far per band */
	int			settled;		/* all entries within this distance found */
	int			emitdist;		/* distance being returned */
	int			nextband;		/* band whose ring grows next */
	double		nentries;		/* estimated entries per band */
	SimhashHitList buckets[SIMHASH_BITS + 1];
	bool		nulls_done;
} SimhashScanOpaqueData;

typedef SimhashScanOpaqueData *SimhashScanOpaque;

/* Number of bits in which 16-bit blocks differ. */
static inline int
SimhashBlockDistance(uint64 a, uint64 b, int band)
{
	return pg_popcount32((uint32) (SimhashBlock(a, band) ^ SimhashBlock(b, band)));
}

/* Append a match to a hit list. */
static void
SimhashHitAddTid(SimhashScanOpaque so, SimhashHitList *list, ItemPointer tid,
				 uint64 fp, bool isnull, int dist)
{
	if (list->n == list->max)
	{
		MemoryContext old = MemoryContextSwitchTo(so->ctx);

		list->max = Max(64, list->max * 2);
		list->items = list->items ? repalloc_huge(list->items, sizeof(SimhashHit) * list->max)
			: palloc(sizeof(SimhashHit) * list->max);
		MemoryContextSwitchTo(old);
	}
	list->items[list->n].tid = *tid;
	list->items[list->n].fp = fp;
	list->items[list->n].isnull = isnull;
	list->items[list->n].dist = (int16) dist;
	list->n++;
}

/* Append the match with the given sort key to a hit list. */
static inline void
SimhashHitAdd(SimhashScanOpaque so, SimhashHitList *list, SimhashSortKey skey,
			  uint64 fp, bool isnull, int dist)
{
	ItemPointerData tid;

	SimhashSortKeyTid(skey, &tid);
	SimhashHitAddTid(so, list, &tid, fp, isnull, dist);
}

/* Append a decoded leaf entry to the batch. */
static inline void
SimhashBatchAdd(SimhashScanOpaque so, const SimhashEntry *e)
{
	if (so->nbatch == so->maxbatch)
	{
		so->maxbatch *= 2;
		so->batch = repalloc_huge(so->batch, sizeof(SimhashEntry) * so->maxbatch);
	}
	so->batch[so->nbatch++] = *e;
}

/* Drop the pinned leaf, if any. */
static void
SimhashReleaseLeaf(SimhashScanOpaque so)
{
	if (BufferIsValid(so->curbuf))
		ReleaseBuffer(so->curbuf);
	so->curbuf = InvalidBuffer;
}

/*
 * Collect into the batch every entry of tree "band" whose key is "key".
 * Keys must be probed in increasing order within a band: the pinned leaf
 * of the previous probe is reused while it covers the next key.
 */
static void
SimhashProbeKey(IndexScanDesc scan, int band, uint16 key)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	Relation	index = scan->indexRelation;
	SimhashSortKey target = SimhashKeyLowest(key);
	SimhashSortKey limit = (uint64) (key + 1) << SIMHASH_KEY_SHIFT;
	Buffer		buf = InvalidBuffer;

	/*
	 * Reuse the pinned leaf for a larger key of the same band: its low bound
	 * is at most the previous target.  It may have split since; then the
	 * high key tells whether the new target is still ours.
	 */
	if (BufferIsValid(so->curbuf) && so->curband == band && target > so->curtarget)
	{
		SimhashPageOpaque op;

		buf = so->curbuf;
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		op = SimhashPageGetOpaque(BufferGetPage(buf));
		if (!(op->flags & SIMHASH_RIGHTMOST) && target >= op->high)
		{
			UnlockReleaseBuffer(buf);
			buf = InvalidBuffer;
		}
		so->curbuf = InvalidBuffer;
	}
	else
		SimhashReleaseLeaf(so);

	if (!BufferIsValid(buf))
		buf = SimhashDescendToLevel(index, band, so->roots[band], so->levels[band],
									target, 0, BUFFER_LOCK_SHARE);

	for (;;)
	{
		Page		page = BufferGetPage(buf);
		SimhashPageOpaque op = SimhashPageGetOpaque(page);
		SimhashLeafCursor cur;
		SimhashEntry e;
		BlockNumber next;

		SimhashLeafCursorSeek(&cur, page, target);
		while (SimhashLeafCursorNextSorted(&cur, &e))
		{
			if (e.skey >= limit)
				break;
			if (e.skey >= target)
				SimhashBatchAdd(so, &e);
		}
		while (SimhashLeafCursorNextAppended(&cur, &e))
			if (e.skey >= target && e.skey < limit)
				SimhashBatchAdd(so, &e);

		/* entries of this key may continue on the right sibling */
		if ((op->flags & SIMHASH_RIGHTMOST) || op->high >= limit)
			break;
		next = op->rightlink;
		UnlockReleaseBuffer(buf);
		buf = ReadBuffer(index, next);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
	}
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	so->curbuf = buf;
	so->curband = band;
	so->curtarget = target;
}

/*
 * Collect every entry of leaf "blkno" into the batch; returns the leaf's
 * right sibling, or InvalidBlockNumber after the last leaf.
 */
static BlockNumber
SimhashReadLeaf(IndexScanDesc scan, BlockNumber blkno)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	Buffer		buf = ReadBuffer(scan->indexRelation, blkno);
	Page		page;
	SimhashPageOpaque op;
	SimhashLeafCursor cur;
	SimhashEntry e;
	BlockNumber next;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	op = SimhashPageGetOpaque(page);
	SimhashLeafCursorSeek(&cur, page, 0);
	while (SimhashLeafCursorNextSorted(&cur, &e))
		SimhashBatchAdd(so, &e);
	while (SimhashLeafCursorNextAppended(&cur, &e))
		SimhashBatchAdd(so, &e);
	next = (op->flags & SIMHASH_RIGHTMOST) ? InvalidBlockNumber : op->rightlink;
	UnlockReleaseBuffer(buf);
	return next;
}

/* Block number of the leftmost leaf of a tree. */
static BlockNumber
SimhashLeftmostLeaf(IndexScanDesc scan, int tree)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	Buffer		buf = SimhashDescendToLevel(scan->indexRelation, tree, so->roots[tree],
											so->levels[tree], 0, 0, BUFFER_LOCK_SHARE);
	BlockNumber blkno = BufferGetBlockNumber(buf);

	UnlockReleaseBuffer(buf);
	return blkno;
}

/*
 * Was fp already reached by a band other than the one being read?  It was
 * if its block i is within radii[i] of the centre's for some band i.
 */
static inline bool
SimhashReachedBefore(uint64 fp, uint64 center, const int *radii)
{
	for (int i = 0; i < SIMHASH_NBANDS; i++)
		if (radii[i] >= 0 && SimhashBlockDistance(fp, center, i) <= radii[i])
			return true;
	return false;
}

/* Does fp satisfy every qual? */
static inline bool
SimhashMatchesQuals(SimhashScanOpaque so, uint64 fp)
{
	for (int i = 0; i < so->nquals; i++)
		if (SimhashDistance(fp, so->qcenter[i]) > so->qradius[i])
			return false;
	return true;
}

/*
 * Filter the batch (entries of tree "band") into "out": entries that match
 * the quals and that no band of "radii" reached before.  With ordering,
 * each hit carries its ORDER BY distance.
 */
static void
SimhashFilterBatch(SimhashScanOpaque so, int band, const int *radii, bool bucketed)
{
	for (int i = 0; i < so->nbatch; i++)
	{
		SimhashEntry *e = &so->batch[i];
		uint64		fp;
		int			dist;

		if (band == SIMHASH_NULL_BAND)
		{
			SimhashHitAdd(so, &so->hits, e->skey, 0, true, -1);
			continue;
		}
		fp = SimhashFingerprintOf(SimhashSortKeyKey(e->skey), e->rest, band);
		if (radii && SimhashReachedBefore(fp, so->center, radii))
			continue;
		if (!SimhashMatchesQuals(so, fp))
			continue;
		dist = so->ordered && !so->order_null ? SimhashDistance(fp, so->ocenter) : -1;
		if (bucketed)
			SimhashHitAdd(so, &so->buckets[dist], e->skey, fp, false, dist);
		else
			SimhashHitAdd(so, &so->hits, e->skey, fp, false, dist);
	}
	so->nbatch = 0;
}

/* Prepare the probe keys of band so->band for a range scan. */
static void
SimhashRangeStartBand(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	int			r = so->plan.radius[so->band];
	uint16		center = SimhashBlock(so->center, so->band);
	int			total = 0;
	MemoryContext old = MemoryContextSwitchTo(so->ctx);

	for (int i = 0; i <= r; i++)
		total += (int) SimhashRingSize(i);
	if (so->keys)
		pfree(so->keys);
	so->keys = palloc(sizeof(uint16) * Max(total, 1));
	so->nkeys = 0;
	for (int i = 0; i <= r; i++)
		so->nkeys += SimhashEnumerateRing(center, i, so->keys + so->nkeys);
	MemoryContextSwitchTo(old);

	/* rings were each sorted; merge them into one increasing sequence */
	if (r > 0)
	{
		bool	   *seen = palloc0(65536);
		int			n = 0;

		for (int i = 0; i < so->nkeys; i++)
			seen[so->keys[i]] = true;
		for (int k = 0; k < 65536; k++)
			if (seen[k])
				so->keys[n++] = (uint16) k;
		pfree(seen);
		Assert(n == so->nkeys);
	}
	so->keypos = 0;
}

/*
 * Fill so->hits with the next matches of a range scan (or of a scan without
 * keys); false when the scan is over.
 */
static bool
SimhashRangeNext(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	int			radii[SIMHASH_NBANDS];

	so->hits.n = so->hits.pos = 0;
	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		if (so->fullscan)
		{
			if (so->nextleaf == InvalidBlockNumber)
			{
				/* after band 0, a scan without keys also reads the NULL tree */
				if (so->nulls && so->band != SIMHASH_NULL_BAND)
				{
					so->band = SIMHASH_NULL_BAND;
					so->nextleaf = SimhashLeftmostLeaf(scan, SIMHASH_NULL_BAND);
					continue;
				}
				return false;
			}
			so->nextleaf = SimhashReadLeaf(scan, so->nextleaf);
			SimhashFilterBatch(so, so->band, NULL, false);
		}
		else if (so->keypos < so->nkeys)
		{
			for (int i = 0; i < SIMHASH_NBANDS; i++)
				radii[i] = (i < so->band) ? so->plan.radius[i] : -1;
			SimhashProbeKey(scan, so->band, so->keys[so->keypos++]);
			SimhashFilterBatch(so, so->band, radii, false);
		}
		else
		{
			/* next band with a radius */
			do
				so->band++;
			while (so->band < SIMHASH_NBANDS && so->plan.radius[so->band] < 0);
			if (so->band >= SIMHASH_NBANDS)
				return false;
			SimhashRangeStartBand(scan);
			continue;
		}
		if (so->hits.n > 0)
			return true;
	}
}

/* Start a range scan: plan the probes, or a full scan of band 0. */
static void
SimhashRangeBegin(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	SimhashPlanProbes(so->radius, so->nentries, &so->plan);
	so->band = -1;
	so->nkeys = so->keypos = 0;
	so->fullscan = so->plan.fullscan;
	if (so->fullscan)
	{
		so->band = so->plan.fullscan_band;
		so->nextleaf = SimhashLeftmostLeaf(scan, so->band);
	}
}

/*
 * Grow the nearest-neighbour search by one ring of one band (or by a full
 * scan of a band when that is cheaper), adding what it finds to the
 * distance buckets.
 */
static void
SimhashKnnExpand(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	int			band = so->nextband;
	int			r = so->ring[band] + 1;
	double		per_key = so->nentries / 65536.0;
	double		ringcost = SimhashRingSize(r) * (64.0 + per_key);
	double		fullcost = so->nentries * 0.5 + 64.0;
	int			radii[SIMHASH_NBANDS];
	int			settled = 0;

	if (r >= SIMHASH_BLOCK_BITS || ringcost > fullcost)
	{
		/* read the band whose radius is largest; nothing stays unsettled */
		BlockNumber blkno = SimhashLeftmostLeaf(scan, band);

		memcpy(radii, so->ring, sizeof(radii));
		while (blkno != InvalidBlockNumber)
		{
			CHECK_FOR_INTERRUPTS();
			blkno = SimhashReadLeaf(scan, blkno);
			SimhashFilterBatch(so, band, radii, true);
		}
		so->settled = SIMHASH_BITS;
		return;
	}

	/* probe the keys exactly r bits from the centre's block */
	{
		uint16	   *keys = palloc(sizeof(uint16) * (int) SimhashRingSize(r));
		int			nkeys = SimhashEnumerateRing(SimhashBlock(so->center, band), r, keys);

		memcpy(radii, so->ring, sizeof(radii));
		radii[band] = -1;
		for (int i = 0; i < nkeys; i++)
		{
			CHECK_FOR_INTERRUPTS();
			SimhashProbeKey(scan, band, keys[i]);
			SimhashFilterBatch(so, band, radii, true);
		}
		pfree(keys);
	}
	so->ring[band] = r;
	for (int i = 0; i < SIMHASH_NBANDS; i++)
		settled += so->ring[i] + 1;
	so->settled = settled - 1;
	so->nextband = (band + 1) % SIMHASH_NBANDS;
}

/*
 * Next match of a nearest-neighbour or sorted scan, in distance order;
 * false at the end.
 */
static bool
SimhashOrderedNext(IndexScanDesc scan, SimhashHit *hit)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	for (;;)
	{
		int			stop = Min(so->settled, so->radius);

		while (so->emitdist <= stop)
		{
			SimhashHitList *b = &so->buckets[so->emitdist];

			if (b->pos < b->n)
			{
				*hit = b->items[b->pos++];
				return true;
			}
			so->emitdist++;
		}
		if (so->settled >= so->radius || so->settled >= SIMHASH_BITS)
		{
			/* rows with a NULL fingerprint sort last (no quals only) */
			if (so->nulls && !so->nulls_done)
			{
				BlockNumber blkno = SimhashLeftmostLeaf(scan, SIMHASH_NULL_BAND);

				so->hits.n = so->hits.pos = 0;
				while (blkno != InvalidBlockNumber)
				{
					blkno = SimhashReadLeaf(scan, blkno);
					SimhashFilterBatch(so, SIMHASH_NULL_BAND, NULL, false);
				}
				so->nulls_done = true;
			}
			if (so->hits.pos < so->hits.n)
			{
				*hit = so->hits.items[so->hits.pos++];
				return true;
			}
			return false;
		}
		CHECK_FOR_INTERRUPTS();
		if (so->mode == SIMHASH_SCAN_SORTED)
		{
			/* collect every qual match, then return them by distance */
			while (SimhashRangeNext(scan))
			{
				for (int i = 0; i < so->hits.n; i++)
				{
					SimhashHit *h = &so->hits.items[i];

					SimhashHitAddTid(so, &so->buckets[h->dist], &h->tid, h->fp,
									 h->isnull, h->dist);
				}
			}
			so->hits.n = so->hits.pos = 0;
			so->settled = SIMHASH_BITS;
		}
		else
			SimhashKnnExpand(scan);
	}
}

/*
 * ambeginscan
 */
IndexScanDesc
shbeginscan(Relation r, int nkeys, int norderbys)
{
	IndexScanDesc scan = RelationGetIndexScan(r, nkeys, norderbys);
	SimhashScanOpaque so = palloc0(sizeof(SimhashScanOpaqueData));

	so->ctx = AllocSetContextCreate(CurrentMemoryContext, "simhash scan",
									ALLOCSET_DEFAULT_SIZES);
	so->curbuf = InvalidBuffer;
	so->count_stats = true;
	so->maxbatch = 256;
	so->batch = palloc(sizeof(SimhashEntry) * so->maxbatch);
	scan->opaque = so;
	scan->xs_itupdesc = RelationGetDescr(r);
	if (norderbys > 0)
	{
		scan->xs_orderbyvals = palloc0(sizeof(Datum) * norderbys);
		scan->xs_orderbynulls = palloc(sizeof(bool) * norderbys);
	}
	return scan;
}

/* Estimated number of entries per band, from the index's statistics. */
static double
SimhashEstimateEntries(Relation index)
{
	double		tuples = index->rd_rel->reltuples;

	if (tuples < 0)				/* never vacuumed or analyzed */
		tuples = (double) RelationGetNumberOfBlocks(index) *
			(BLCKSZ / 10.0) / SIMHASH_NBANDS;
	return Max(tuples, 1);
}

/*
 * amrescan: read the scan keys and set up the scan.
 */
void
shrescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
		 ScanKey orderbys, int norderbys)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	MemoryContext old;

	/* this transaction's own pending inserts must be visible to it */
	SimhashFlushPending(scan->indexRelation);

	SimhashReleaseLeaf(so);
	MemoryContextReset(so->ctx);
	old = MemoryContextSwitchTo(so->ctx);

	if (scankey && scan->numberOfKeys > 0)
		memmove(scan->keyData, scankey, scan->numberOfKeys * sizeof(ScanKeyData));
	if (orderbys && scan->numberOfOrderBys > 0)
		memmove(scan->orderByData, orderbys, scan->numberOfOrderBys * sizeof(ScanKeyData));

	so->mode = SIMHASH_SCAN_RANGE;
	so->nquals = 0;
	so->qcenter = palloc(sizeof(uint64) * Max(scan->numberOfKeys, 1));
	so->qradius = palloc(sizeof(int) * Max(scan->numberOfKeys, 1));
	so->radius = SIMHASH_BITS;
	so->center = 0;
	for (int i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		key = &scan->keyData[i];
		uint64		c;
		int			r;

		if (key->sk_flags & SK_ISNULL)
		{
			so->mode = SIMHASH_SCAN_EMPTY;
			break;
		}
		if (key->sk_strategy == SIMHASH_WITHIN_STRATEGY)
		{
			SimhashBall *ball = DatumGetSimhashBall(key->sk_argument);

			c = ball->center;
			r = ball->radius;
		}
		else if (key->sk_strategy == SIMHASH_EQUAL_STRATEGY)
		{
			c = DatumGetSimhash64(key->sk_argument);
			r = 0;
		}
		else
			elog(ERROR, "unrecognized simhash strategy %d", key->sk_strategy);
		if (r < 0)
		{
			so->mode = SIMHASH_SCAN_EMPTY;
			break;
		}
		r = Min(r, SIMHASH_BITS);
		so->qcenter[so->nquals] = c;
		so->qradius[so->nquals] = r;
		so->nquals++;
		if (r < so->radius || so->nquals == 1)
		{
			so->center = c;
			so->radius = r;
		}
	}

	so->ordered = (scan->numberOfOrderBys > 0);
	so->order_null = false;
	if (so->ordered)
	{
		ScanKey		ob = &scan->orderByData[0];

		if (ob->sk_flags & SK_ISNULL)
			so->order_null = true;
		else
			so->ocenter = DatumGetSimhash64(ob->sk_argument);
	}

	/* scans without quals return NULL rows too (last, when ordered) */
	so->nulls = (so->nquals == 0);
	so->nentries = SimhashEstimateEntries(scan->indexRelation);
	so->hits.items = NULL;
	so->hits.n = so->hits.max = so->hits.pos = 0;
	so->keys = NULL;
	so->nkeys = so->keypos = 0;
	memset(so->buckets, 0, sizeof(so->buckets));
	so->nulls_done = false;
	so->emitdist = 0;
	so->nextband = 0;
	so->settled = -1;
	for (int i = 0; i < SIMHASH_NBANDS; i++)
		so->ring[i] = -1;

	if (so->mode != SIMHASH_SCAN_EMPTY && so->ordered && !so->order_null)
	{
		if (so->nquals == 0 || so->ocenter == so->center)
		{
			so->mode = SIMHASH_SCAN_KNN;
			so->center = so->ocenter;
		}
		else
			so->mode = SIMHASH_SCAN_SORTED;
	}
	so->started = false;
	MemoryContextSwitchTo(old);
}

/* Read the roots and begin the scan proper, once. */
static void
SimhashStartScan(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	MemoryContext old = MemoryContextSwitchTo(so->ctx);

	SimhashReadRoots(scan->indexRelation, so->roots, so->levels);
	if (so->mode == SIMHASH_SCAN_RANGE || so->mode == SIMHASH_SCAN_SORTED)
		SimhashRangeBegin(scan);
	so->started = true;
	if (so->count_stats)
		pgstat_count_index_scan(scan->indexRelation);
	MemoryContextSwitchTo(old);
}

/*
 * amgettuple: next matching TID.  Distances are exact: no recheck.
 */
bool
shgettuple(IndexScanDesc scan, ScanDirection dir)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	SimhashHit	hit;

	if (dir != ForwardScanDirection)
		elog(ERROR, "simhash index scans only go forward");
	if (so->mode == SIMHASH_SCAN_EMPTY)
		return false;
	if (!so->started)
		SimhashStartScan(scan);

	if (so->mode == SIMHASH_SCAN_KNN || so->mode == SIMHASH_SCAN_SORTED)
	{
		if (!SimhashOrderedNext(scan, &hit))
			return false;
	}
	else
	{
		if (so->hits.pos >= so->hits.n && !SimhashRangeNext(scan))
			return false;
		hit = so->hits.items[so->hits.pos++];
	}

	scan->xs_heaptid = hit.tid;
	scan->xs_recheck = false;
	if (scan->xs_want_itup)
	{
		/* index-only scan: the entry holds the whole fingerprint */
		Datum		value = Simhash64GetDatum(hit.fp);
		bool		isnull = hit.isnull;

		if (scan->xs_itup)
			pfree(scan->xs_itup);
		scan->xs_itup = index_form_tuple(scan->xs_itupdesc, &value, &isnull);
	}
	if (scan->numberOfOrderBys > 0)
	{
		scan->xs_recheckorderby = false;
		scan->xs_orderbynulls[0] = (hit.dist < 0);
		scan->xs_orderbyvals[0] = Int32GetDatum(hit.dist < 0 ? 0 : hit.dist);
	}
	return true;
}

/*
 * amgetbitmap: add every matching TID to the bitmap.
 */
int64
shgetbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	int64		ntids = 0;

	if (so->mode == SIMHASH_SCAN_EMPTY)
		return 0;
	so->ordered = false;
	if (so->mode != SIMHASH_SCAN_RANGE)
		so->mode = SIMHASH_SCAN_RANGE;
	if (!so->started)
		SimhashStartScan(scan);
	while (SimhashRangeNext(scan))
	{
		for (int i = 0; i < so->hits.n; i++)
			tbm_add_tuples(tbm, &so->hits.items[i].tid, 1, false);
		ntids += so->hits.n;
	}
	return ntids;
}

/*
 * amendscan
 */
void
shendscan(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	SimhashReleaseLeaf(so);
	MemoryContextDelete(so->ctx);
	pfree(so->batch);
	pfree(so);
}

/*
 * Count the entries within "radius" of "center", stopping at "limit"; for
 * the planner's estimates (not counted as an index scan in the statistics).
 */
int64
SimhashCountWithin(Relation index, uint64 center, int radius, int64 limit)
{
	IndexScanDesc scan = shbeginscan(index, 1, 0);
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	SimhashBall ball;
	ScanKeyData key;
	int64		count = 0;

	memset(&ball, 0, sizeof(ball));
	ball.center = center;
	ball.radius = radius;
	ScanKeyEntryInitialize(&key, 0, 1, SIMHASH_WITHIN_STRATEGY, InvalidOid,
						   InvalidOid, InvalidOid, PointerGetDatum(&ball));
	so->count_stats = false;
	shrescan(scan, &key, 1, NULL, 0);
	SimhashStartScan(scan);
	while (count < limit && SimhashRangeNext(scan))
		count += so->hits.n;
	shendscan(scan);
	IndexScanEnd(scan);
	return count;
}
