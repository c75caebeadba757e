/*-------------------------------------------------------------------------
 *
 * shrange.c
 *	  Range scans of the simhash index: the planned keys, band by band.
 *
 * The probe plan of shprobe.c gives a radius per band; each band's keys
 * within that radius of the centre's block are probed in increasing order
 * (shread.c).  Every entry holds its whole fingerprint, so the exact
 * distance is checked, and an entry is returned only by the first band
 * that reaches it: no recheck, no wasted heap visits.  Large radii read one
 * band from end to end instead.  See src/README, "Probing" and "Scans".
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/access/shrange.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relscan.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "shscan.h"

/* Prepare the probe keys of band so->band for a range scan. */
static void
SimhashRangeStartBand(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	int			r = so->plan.radius[so->band];
	uint16		center = SimhashBlock(so->center, so->band);
	int			total = (int) SimhashBallSize(r);
	MemoryContext old = MemoryContextSwitchTo(so->ctx);

	if (so->keys)
		pfree(so->keys);
	so->keys = palloc(sizeof(uint16) * Max(total, 1));
	so->nkeys = SimhashEnumerateBallSorted(center, r, so->keys);
	MemoryContextSwitchTo(old);
	so->keypos = 0;
}

/*
 * Fill so->hits with the next matches of a range scan (or of a scan without
 * keys); false when the scan is over.
 */
bool
SimhashRangeNext(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	int			radii[SIMHASH_BLOCKS];

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
			for (int i = 0; i < SIMHASH_BLOCKS; i++)
				radii[i] = (i < so->band) ? so->plan.radius[i] : -1;
			SimhashProbeKey(scan, so->band, so->keys[so->keypos++]);
			SimhashFilterBatch(so, so->band, radii, false);
		}
		else
		{
			/* next band with a radius */
			do
				so->band++;
			while (so->band < SIMHASH_BLOCKS && so->plan.radius[so->band] < 0);
			if (so->band >= SIMHASH_BLOCKS)
				return false;
			SimhashRangeStartBand(scan);
			continue;
		}
		if (so->hits.n > 0)
		{
			/*
			 * Hand the matches over holding no pin on a leaf: VACUUM waits
			 * for them (cleanup lock), and the executor may keep us waiting
			 * long.  The parent stays pinned, for the next probe's descent:
			 * nothing takes a cleanup lock on an internal page.
			 */
			if (BufferIsValid(so->curbuf))
				ReleaseBuffer(so->curbuf);
			so->curbuf = InvalidBuffer;
			return true;
		}
	}
}

/* Start a range scan: plan the probes, or a full scan of band 0. */
void
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
