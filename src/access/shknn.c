/*-------------------------------------------------------------------------
 *
 * shknn.c
 *	  Nearest-neighbour scans of the simhash index ("ORDER BY fp <-> q").
 *
 * The search radius grows one ring of one band at a time, and found entries
 * are returned from a bucket queue by exact distance as soon as nothing
 * unseen can be closer; a sorted scan collects its qual's matches first.
 * See src/README, "Scans".
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/access/shknn.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/sortsupport.h"

#include "shscan.h"

/*
 * Every entry within this distance is in the buckets (returned or not):
 * found by the rings, and not dropped by the keep limit.
 */
static inline int
SimhashKnnKnown(SimhashScanOpaque so)
{
	return Min(so->settled, so->keeplimit);
}

/*
 * Lower the keep limit while the buckets below it hold enough rows without
 * the farthest one, dropping that bucket: no row of it has been returned
 * (the limit stays at or above the distance being returned), and the rows
 * of the nearer buckets are all the caller is expected to take.
 */
static void
SimhashKnnTighten(SimhashScanOpaque so)
{
	while (so->keeplimit > so->emitdist &&
		   so->kept - so->buckets[so->keeplimit].n >= so->keepcount)
	{
		SimhashHitList *b = &so->buckets[so->keeplimit];

		so->kept -= b->n;
		b->n = b->pos = 0;
		so->keeplimit--;
	}
}

/*
 * The caller wants rows beyond the keep limit, and every entry within it
 * has been found: search again from the first ring for more rows, skipping
 * the entries within the old limit, which the buckets hold already.
 */
static void
SimhashKnnRaiseLimit(SimhashScanOpaque so)
{
	Assert(so->settled >= so->keeplimit && so->keeplimit < SIMHASH_BITS);
	for (int d = so->keeplimit + 1; d <= SIMHASH_BITS; d++)
	{
		so->buckets[d].n = so->buckets[d].pos = 0;
		so->bucket_sorted[d] = false;
	}
	so->certified = so->keeplimit;
	so->settled = so->keeplimit;
	for (int i = 0; i < SIMHASH_BLOCKS; i++)
		so->ring[i] = -1;
	so->nextband = 0;
	so->keepcount = so->kept + so->keepcount * 3;
	so->keeplimit = SIMHASH_BITS;
}

/*
 * Probe the keys exactly r bits from the centre's block in "band": every
 * entry found that no other band's current ring reached goes to the
 * distance buckets, or, when "settle" >= 0, only those at that distance.
 */
static void
SimhashKnnProbeRing(IndexScanDesc scan, int band, int r, int settle)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	uint16	   *keys = palloc(sizeof(uint16) * (int) SimhashRingSize(r));
	int			nkeys = SimhashEnumerateRing(SimhashBlock(so->center, band), r, keys);
	int			radii[SIMHASH_BLOCKS];

	memcpy(radii, so->ring, sizeof(radii));
	radii[band] = -1;
	for (int i = 0; i < nkeys; i++)
	{
		CHECK_FOR_INTERRUPTS();
		if (settle >= 0)
			SimhashSettleKey(scan, band, keys[i], radii, settle);
		else
		{
			SimhashProbeKey(scan, band, keys[i]);
			SimhashFilterBatch(so, band, radii, true);
			SimhashKnnTighten(so);
		}
	}
	pfree(keys);
	/* no pin while the found rows are returned (VACUUM waits for pins) */
	SimhashReleaseLeaf(so);
}

/* Every entry within this distance has been found by the rings probed. */
static inline int
SimhashKnnRingSettled(SimhashScanOpaque so)
{
	int			settled = 0;

	for (int i = 0; i < SIMHASH_BLOCKS; i++)
		settled += so->ring[i] + 1;
	return settled - 1;
}

/*
 * Would the next SimhashKnnExpand probe a ring rather than read a band
 * whole?  Sets *band and *r to that ring.
 */
static bool
SimhashKnnNextRing(SimhashScanOpaque so, int *band, int *r)
{
	double		per_key = so->nentries / (double) SIMHASH_BLOCK_KEYS;

	*band = so->nextband;
	*r = so->ring[*band] + 1;
	return *r < SIMHASH_BLOCK_BITS &&
		SimhashRingSize(*r) * (64.0 + per_key) <= so->nentries * 0.5 + 64.0;
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
	int			band;
	int			r;

	if (!SimhashKnnNextRing(so, &band, &r))
	{
		/* read this band whole; nothing stays unsettled */
		BlockNumber blkno = SimhashLeftmostLeaf(scan, band);
		int			radii[SIMHASH_BLOCKS];

		memcpy(radii, so->ring, sizeof(radii));
		while (blkno != InvalidBlockNumber)
		{
			CHECK_FOR_INTERRUPTS();
			blkno = SimhashReadLeaf(scan, blkno);
			SimhashFilterBatch(so, band, radii, true);
			SimhashKnnTighten(so);
		}
		/* every entry is found; those beyond the keep limit were dropped */
		so->settled = SIMHASH_BITS;
		return;
	}

	SimhashKnnProbeRing(scan, band, r, -1);
	so->ring[band] = r;
	so->settled = Max(so->settled, SimhashKnnRingSettled(so));
	so->nextband = (band + 1) % SIMHASH_BLOCKS;
}

/* qsort_arg comparator: hits by included column, then by TID. */
static int
SimhashHitPayloadCompare(const void *a, const void *b, void *arg)
{
	const SimhashHit *ha = (const SimhashHit *) a;
	const SimhashHit *hb = (const SimhashHit *) b;
	int			c = ApplySortComparator(ha->payload, ha->payload_null,
										hb->payload, hb->payload_null,
										(SortSupport) arg);

	if (c != 0)
		return c;
	return ItemPointerCompare((ItemPointer) &ha->tid, (ItemPointer) &hb->tid);
}

/*
 * Settle "dist" by the lean read of the next ring alone, if "dist" lies
 * just beyond the settled rings and within the keep limit; false if not.
 */
static bool
SimhashKnnSettleByRing(IndexScanDesc scan, int dist)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	int			band;
	int			r;

	if (dist != SimhashKnnRingSettled(so) + 1 || dist > so->keeplimit ||
		dist <= so->certified || !SimhashKnnNextRing(so, &band, &r))
		return false;
	Assert(dist <= so->emitlimit);
	SimhashKnnProbeRing(scan, band, r, dist);
	so->certified = so->settled = dist;
	return true;
}

/*
 * Grow the search so that distance "dist" is settled, for a scan returning
 * each distance in payload order.  When "dist" is expected to complete the
 * rows the caller wants, settle it with the lean read that keeps only
 * entries at that one distance, as SimhashKnnReturnedWithin does for the
 * nearest sort's last group; otherwise grow by one ring.
 */
static void
SimhashKnnSettleFor(IndexScanDesc scan, int dist)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	if (!(so->wanted > 0 && so->emitted + so->buckets[dist].n >= so->wanted &&
		  dist <= so->emitlimit && SimhashKnnSettleByRing(scan, dist)))
		SimhashKnnExpand(scan);
}

/*
 * Next match of a nearest-neighbour or sorted scan, in distance order (and
 * within a distance in payload order, if asked); false at the end.
 */
bool
SimhashOrderedNext(IndexScanDesc scan, SimhashHit *hit)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	for (;;)
	{
		/*
		 * Every entry within "settled" has been found, so every entry not
		 * yet found is at least one bit farther: the found entries at
		 * settled + 1 may go out too.  That bucket can still grow, so the
		 * scan moves past a bucket only once it is settled.  In payload
		 * order a bucket goes out only once it is complete, sorted.
		 */
		int			stop = Min(so->payload_order ? so->settled : so->settled + 1,
							   Min(so->emitlimit, so->keeplimit));

		while (so->emitdist <= stop)
		{
			SimhashHitList *b = &so->buckets[so->emitdist];

			if (so->payload_order && !so->bucket_sorted[so->emitdist])
			{
				Assert(so->emitdist <= so->settled);
				if (b->n - b->pos > 1)
					qsort_arg(b->items + b->pos, b->n - b->pos, sizeof(SimhashHit),
							  SimhashHitPayloadCompare, &so->payload_ssup);
				so->bucket_sorted[so->emitdist] = true;
			}
			if (b->pos < b->n)
			{
				*hit = b->items[b->pos++];
				so->emitted++;
				return true;
			}
			if (so->emitdist > so->settled)
				break;
			so->emitdist++;
		}
		if (SimhashKnnKnown(so) >= so->emitlimit)
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

					SimhashHitAddCopy(so, &so->buckets[h->dist], h);
				}
			}
			so->hits.n = so->hits.pos = 0;
			so->settled = SIMHASH_BITS;
		}
		else if (so->settled >= so->keeplimit)
		{
			/* every row within the keep limit went out: search for more */
			Assert(so->emitdist > so->keeplimit);
			SimhashKnnRaiseLimit(so);
		}
		else if (so->payload_order)
			SimhashKnnSettleFor(scan, so->emitdist);
		else
			SimhashKnnExpand(scan);
	}
}

/*
 * Has this nearest-neighbour scan returned every entry at distance <= dist?
 * It searches only as far as it takes to tell: the nearest sort node
 * (nearestsort.c) asks this at the end of a group of equal distance instead
 * of reading the next row, which could need a search up to the next
 * distance that has any row at all.  False while an entry within dist is
 * still to be returned, and for scans that are not ordered.  "last" says
 * the caller expects to need no row beyond dist (a LIMIT ends there).
 */
bool
SimhashKnnReturnedWithin(IndexScanDesc scan, int dist, bool last)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	if (!so->started ||
		(so->mode != SIMHASH_SCAN_KNN && so->mode != SIMHASH_SCAN_SORTED))
		return false;
	dist = Min(dist, SIMHASH_BITS);
	for (;;)
	{
		for (int d = so->emitdist; d <= dist; d++)
		{
			if (so->buckets[d].pos < so->buckets[d].n)
				return false;
		}
		/* every entry within "settled" (or the radius qual) has been found */
		if (SimhashKnnKnown(so) >= dist || SimhashKnnKnown(so) >= so->emitlimit)
			return true;
		CHECK_FOR_INTERRUPTS();
		/* a sorted scan collects all its matches before its first row */
		Assert(so->mode == SIMHASH_SCAN_KNN);
		if (so->settled >= so->keeplimit)
		{
			/* the rows within the keep limit went out (checked above) */
			SimhashKnnRaiseLimit(so);
			continue;
		}

		/*
		 * Settling the distance just beyond the rings needs only the entries
		 * of the next ring at exactly that distance: every entry not yet
		 * found there is exactly ring + 1 bits away in every band, so the
		 * next ring holds it.  When the caller expects no rows beyond this
		 * distance, read that ring for them alone, a fraction of the work
		 * of bucketing all it holds; a later growth reads the ring again
		 * and skips what this found (src/README, "Settling a distance").
		 */
		/* the group's rows were returned, so the radius qual allows "dist" */
		if (!(last && SimhashKnnSettleByRing(scan, dist)))
			SimhashKnnExpand(scan);
	}
}
