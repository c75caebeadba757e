/*-------------------------------------------------------------------------
 *
 * shread.c
 *	  Reading simhash leaves for scans.
 *
 * Probing one key, reading a leaf whole, and filtering a batch (exact
 * distance, quals, reached by an earlier band).  See src/README,
 * "Concurrency: locks and pins" and "Probing".
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/access/shread.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "shscan.h"

/* Make room for one more match in a hit list; returns its slot. */
static inline SimhashHit *
SimhashHitNext(SimhashScanOpaque so, SimhashHitList *list)
{
	if (list->n == list->max)
	{
		MemoryContext old = MemoryContextSwitchTo(so->ctx);

		list->max = Max(64, list->max * 2);
		list->items = list->items ? repalloc_huge(list->items, sizeof(SimhashHit) * list->max)
			: palloc(sizeof(SimhashHit) * list->max);
		MemoryContextSwitchTo(old);
	}
	return &list->items[list->n++];
}

/* Append a copy of a match to a hit list. */
void
SimhashHitAddCopy(SimhashScanOpaque so, SimhashHitList *list, const SimhashHit *hit)
{
	*SimhashHitNext(so, list) = *hit;
}

/* Append the match of entry e to a hit list. */
static inline void
SimhashHitAdd(SimhashScanOpaque so, SimhashHitList *list, const SimhashEntry *e,
			  uint64 fp, bool isnull, int dist)
{
	SimhashHit *hit = SimhashHitNext(so, list);

	SimhashSortKeyTid(e->skey, &hit->tid);
	hit->fp = fp;
	hit->payload = e->payload;
	hit->payload_null = e->payload_null;
	hit->isnull = isnull;
	hit->dist = (int8) dist;
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
void
SimhashReleaseLeaf(SimhashScanOpaque so)
{
	if (BufferIsValid(so->curbuf))
		ReleaseBuffer(so->curbuf);
	so->curbuf = InvalidBuffer;
	if (BufferIsValid(so->parentbuf))
		ReleaseBuffer(so->parentbuf);
	so->parentbuf = InvalidBuffer;
}

/*
 * Does a probe of "key" keep entry e: within "limit" of the centre (the
 * probe radius, or a nearest-neighbour scan's keep limit), if it filters?
 */
static inline bool
SimhashProbeKeeps(SimhashScanOpaque so, int limit, uint16 key,
				  const SimhashEntry *e, int band)
{
	return limit >= SIMHASH_BITS ||
		SimhashDistance(SimhashFingerprintOf(key, e->rest, band), so->center) <= limit;
}

/* Does fp satisfy every qual? */
static inline bool
SimhashMatchesQuals(SimhashScanOpaque so, uint64 fp)
{
	for (int i = 0; i < so->nquals; i++)
		if (SimhashLaneSum(SimhashBlockCounts(fp ^ so->qcenter[i])) > so->qradius[i])
			return false;
	return true;
}

/* What a settling read keeps: entries at one distance, not reached before. */
typedef struct SimhashSettleSpec
{
	const int  *radii;			/* the rings probed so far, -1 for this band */
	int			dist;
} SimhashSettleSpec;

/*
 * A settling read's handling of entry e of key "key": into the bucket of
 * its distance if that is the one being settled and no band's ring reached
 * it before.  No batch: most entries read are farther and are dropped here.
 */
static inline void
SimhashSettleEntry(SimhashScanOpaque so, const SimhashSettleSpec *settle,
				   uint16 key, const SimhashEntry *e, int band)
{
	uint64		fp = SimhashFingerprintOf(key, e->rest, band);
	uint64		counts = SimhashBlockCounts(fp ^ so->center);

	if (SimhashLaneSum(counts) != settle->dist ||
		SimhashReachedBefore(counts, settle->radii) ||
		(so->nquals > 1 && !SimhashMatchesQuals(so, fp)))
		return;
	SimhashHitAdd(so, &so->buckets[settle->dist], e, fp, false, settle->dist);
	so->kept++;
}

/* Settle entry e of a key read, or batch it if the probe keeps it. */
static pg_attribute_always_inline void
SimhashReadEntry(SimhashScanOpaque so, const SimhashSettleSpec *settle, int within,
				 uint16 key, const SimhashEntry *e, int band)
{
	if (settle)
		SimhashSettleEntry(so, settle, key, e, band);
	else if (SimhashProbeKeeps(so, within, key, e, band))
		SimhashBatchAdd(so, e);
}

/*
 * Read every entry of tree "band" whose key is "key": into the batch, or,
 * with "settle", through SimhashSettleEntry.  Keys must be probed in
 * increasing order within a band: the pinned leaf of the previous probe is
 * reused while it covers the next key.
 */
static pg_attribute_always_inline void
SimhashReadKey(IndexScanDesc scan, int band, uint16 key, const SimhashSettleSpec *settle)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	Relation	index = scan->indexRelation;
	SimhashSortKey target = SimhashKeyLowest(key);
	SimhashSortKey limit = (uint64) (key + 1) << SIMHASH_KEY_SHIFT;
	Buffer		buf = InvalidBuffer;

	/*
	 * Entries farther than the probe radius (or the keep limit of a
	 * nearest-neighbour scan, whose centre is the probe centre) are dropped
	 * here rather than batched for SimhashFilterBatch to drop: with skewed
	 * keys (real text has blocks shared by thousands of rows), and in a
	 * nearest-neighbour search, most entries read are.
	 */
	int			within = Min(so->radius, so->keeplimit);

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
		if (!SimhashPageCovers(op, target))
		{
			UnlockReleaseBuffer(buf);
			buf = InvalidBuffer;
		}
		so->curbuf = InvalidBuffer;
	}
	else if (BufferIsValid(so->curbuf))
	{
		/* the parent is kept: it is checked against the target below */
		ReleaseBuffer(so->curbuf);
		so->curbuf = InvalidBuffer;
	}

	if (!BufferIsValid(buf) && so->levels[band] >= 1)
	{
		/* start at the parent of the previous probe's leaf if it can serve */
		if (BufferIsValid(so->parentbuf) &&
			(so->parentband != band || target <= so->parenttarget))
		{
			ReleaseBuffer(so->parentbuf);
			so->parentbuf = InvalidBuffer;
		}
		buf = SimhashDescendViaParent(index, band, so->roots[band], so->levels[band],
									  target, &so->parentbuf);
		so->parentband = band;
		so->parenttarget = target;
	}
	else if (!BufferIsValid(buf))
		buf = SimhashDescendToLevel(index, band, so->roots[band], so->levels[band],
									target, 0, BUFFER_LOCK_SHARE);

	for (;;)
	{
		Page		page = BufferGetPage(buf);
		SimhashPageOpaque op = SimhashPageGetOpaque(page);
		SimhashLeafCursor cur;
		SimhashEntry e;
		BlockNumber next;

		SimhashCheckLeafPayload(index, buf);
		SimhashLeafCursorSeek(&cur, page, target);
		while (SimhashLeafCursorNextSorted(&cur, &e))
		{
			if (e.skey >= limit)
				break;
			if (e.skey >= target)
				SimhashReadEntry(so, settle, within, key, &e, band);
		}
		while (SimhashLeafCursorNextAppended(&cur, &e))
		{
			if (e.skey >= target && e.skey < limit)
				SimhashReadEntry(so, settle, within, key, &e, band);
		}

		/* entries of this key may continue on the right sibling */
		if ((op->flags & SIMHASH_RIGHTMOST) || op->high >= limit)
			break;
		next = op->rightlink;
		UnlockReleaseBuffer(buf);
		/* no lock held here: a damaged right-link chain can be cancelled */
		CHECK_FOR_INTERRUPTS();
		buf = SimhashReadLinkedBuffer(index, next);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
	}
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	so->curbuf = buf;
	so->curband = band;
	so->curtarget = target;
}

/* Collect into the batch every entry of tree "band" whose key is "key". */
void
SimhashProbeKey(IndexScanDesc scan, int band, uint16 key)
{
	SimhashReadKey(scan, band, key, NULL);
}

/*
 * Add to the bucket of distance "dist" every entry of tree "band" whose
 * key is "key", that is at that distance from the scan's centre, and that
 * no band of "radii" reached (a nearest-neighbour scan settling one
 * distance, shknn.c).
 */
void
SimhashSettleKey(IndexScanDesc scan, int band, uint16 key, const int *radii, int dist)
{
	SimhashSettleSpec settle = {radii, dist};

	Assert(((SimhashScanOpaque) scan->opaque)->mode == SIMHASH_SCAN_KNN);
	SimhashReadKey(scan, band, key, &settle);
}

/*
 * Collect every entry of leaf "blkno" into the batch; returns the leaf's
 * right sibling, or InvalidBlockNumber after the last leaf.
 */
BlockNumber
SimhashReadLeaf(IndexScanDesc scan, BlockNumber blkno)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	Buffer		buf = SimhashReadLinkedBuffer(scan->indexRelation, blkno);
	Page		page;
	SimhashPageOpaque op;
	SimhashLeafCursor cur;
	SimhashEntry e;
	BlockNumber next;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	op = SimhashPageGetOpaque(page);
	SimhashCheckLeafPayload(scan->indexRelation, buf);
	SimhashLeafCursorSeek(&cur, page, 0);
	while (SimhashLeafCursorNextSorted(&cur, &e))
		SimhashBatchAdd(so, &e);
	while (SimhashLeafCursorNextAppended(&cur, &e))
		SimhashBatchAdd(so, &e);
	next = (op->flags & SIMHASH_RIGHTMOST) ? InvalidBlockNumber : op->rightlink;

	/*
	 * An index-only scan keeps the leaf pinned until its entries have been
	 * returned: VACUUM needs a cleanup lock to remove entries, so a TID we
	 * return cannot be recycled (and its heap page marked all-visible)
	 * while the executor still trusts the visibility map for it.
	 */
	if (scan->xs_want_itup)
	{
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		if (BufferIsValid(so->iospin))
			ReleaseBuffer(so->iospin);
		so->iospin = buf;
	}
	else
		UnlockReleaseBuffer(buf);
	return next;
}

/* Block number of the leftmost leaf of a tree. */
BlockNumber
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
 * Filter the batch (entries of tree "band") into "out": entries that match
 * the quals and that no band of "radii" reached before.  With ordering,
 * each hit carries its ORDER BY distance.
 */
void
SimhashFilterBatch(SimhashScanOpaque so, int band, const int *radii, bool bucketed)
{
	int			limit = Min(so->radius, so->keeplimit);

	for (int i = 0; i < so->nbatch; i++)
	{
		SimhashEntry *e = &so->batch[i];
		uint64		fp;
		uint64		counts;
		int			dist;

		if (band == SIMHASH_NULL_BAND)
		{
			SimhashHitAdd(so, &so->hits, e, 0, true, -1);
			continue;
		}
		fp = SimhashFingerprintOf(SimhashSortKeyKey(e->skey), e->rest, band);
		counts = SimhashBlockCounts(fp ^ so->center);
		/* the tightest qual (or none: radius 64) first: most entries fail it */
		if (SimhashLaneSum(counts) > limit)
			continue;
		if (radii && SimhashReachedBefore(counts, radii))
			continue;
		if (so->nquals > 1 && !SimhashMatchesQuals(so, fp))
			continue;
		if (!so->ordered || so->order_null)
			dist = -1;
		else if (so->ocenter == so->center)
			dist = SimhashLaneSum(counts);
		else
			dist = SimhashLaneSum(SimhashBlockCounts(fp ^ so->ocenter));
		if (bucketed)
		{
			/* a settling read (SimhashSettleKey) found it already */
			if (dist <= so->certified)
				continue;
			SimhashHitAdd(so, &so->buckets[dist], e, fp, false, dist);
			so->kept++;
		}
		else
			SimhashHitAdd(so, &so->hits, e, fp, false, dist);
	}
	so->nbatch = 0;
}

