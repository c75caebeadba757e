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
 *	  src/shknn.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "shscan.h"

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
	double		per_key = so->nentries / (double) SIMHASH_BAND_KEYS;
	double		ringcost = SimhashRingSize(r) * (64.0 + per_key);
	double		fullcost = so->nentries * 0.5 + 64.0;
	int			radii[SIMHASH_NBANDS];
	int			settled = 0;

	if (r >= SIMHASH_BLOCK_BITS || ringcost > fullcost)
	{
		/* read this band whole; nothing stays unsettled */
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
	/* no pin while the found rows are returned (VACUUM waits for pins) */
	SimhashReleaseLeaf(so);
}

/*
 * Next match of a nearest-neighbour or sorted scan, in distance order;
 * false at the end.
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
		 * scan moves past a bucket only once it is settled.
		 */
		int			stop = Min(so->settled + 1, so->emitlimit);

		while (so->emitdist <= stop)
		{
			SimhashHitList *b = &so->buckets[so->emitdist];

			if (b->pos < b->n)
			{
				*hit = b->items[b->pos++];
				return true;
			}
			if (so->emitdist > so->settled)
				break;
			so->emitdist++;
		}
		if (so->settled >= so->emitlimit)
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
 * Has this nearest-neighbour scan returned every entry at distance <= dist?
 * It searches only as far as it takes to tell: the nearest sort node
 * (nearestsort.c) asks this at the end of a group of equal distance instead
 * of reading the next row, which could need a search up to the next
 * distance that has any row at all.  False while an entry within dist is
 * still to be returned, and for scans that are not ordered.
 */
bool
SimhashKnnReturnedWithin(IndexScanDesc scan, int dist)
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
		if (so->settled >= dist || so->settled >= so->emitlimit)
			return true;
		CHECK_FOR_INTERRUPTS();
		/* a sorted scan collects all its matches before its first row */
		Assert(so->mode == SIMHASH_SCAN_KNN);
		SimhashKnnExpand(scan);
	}
}
