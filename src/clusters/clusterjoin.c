/*-------------------------------------------------------------------------
 *
 * clusterjoin.c
 *	  simhash_clusters: connect the rows within k bits of each other.
 *
 * Bands and buckets as the band join's, a union-find over row numbers,
 * and groups of connected rows inside a bucket so that a huge cluster
 * costs linear time; the progress NOTICEs of a long call.  See src/README,
 * "Clusters".
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/clusters/clusterjoin.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "bandtable.h"
#include "clusters.h"
#include "simhash.h"

/*
 * Report progress with a NOTICE every SIMHASH_CLUSTERS_REPORT_MS, the first
 * one only after that long (short runs stay quiet), and honour cancel.
 */
void
SimhashClustersProgress(SimhashClusters *st)
{
	TimestampTz now;
	int			pct = (int) (st->done * 100);

	CHECK_FOR_INTERRUPTS();
	now = GetCurrentTimestamp();
	if (!TimestampDifferenceExceeds(st->last_report, now, SIMHASH_CLUSTERS_REPORT_MS))
		return;
	st->last_report = now;
	switch (st->phase)
	{
		case SIMHASH_CLUSTERS_READING:
			ereport(NOTICE, (errmsg("simhash_clusters: %u rows read", st->nrows)));
			break;
		case SIMHASH_CLUSTERS_SORTING:
			ereport(NOTICE, (errmsg("simhash_clusters: %u rows read, sorting them", st->nrows)));
			break;
		case SIMHASH_CLUSTERS_JOINING:
			ereport(NOTICE,
					(errmsg("simhash_clusters: band %d of %d, %d%% done, %llu comparisons, %u clusters so far",
							st->band, st->nbands, pct,
							(unsigned long long) st->ncompared, st->nclusters)));
			break;
		case SIMHASH_CLUSTERS_WRITING:
			ereport(NOTICE, (errmsg("simhash_clusters: writing %u rows, %d%% done",
									st->nrows, pct)));
			break;
	}
}

/* Count a unit of work; check for interrupts, and now and then report. */
static inline void
SimhashClustersTick(SimhashClusters *st)
{
	CHECK_FOR_INTERRUPTS();
	if ((++st->ticks & 1023) == 0)
		SimhashClustersProgress(st);
}

/*
 * Choose the bands and their radii, or one bucket for all rows when that
 * compares fewer pairs, and find the largest bucket (which sizes the
 * group arrays).
 */
void
SimhashClustersPlan(SimhashClusters *st)
{
	double		n = st->nrows;
	double		probe = 0;

	st->whole = false;
	st->maxbucket = 0;
	st->nbands = 0;
	if (st->k < 0 || st->k >= SIMHASH_BITS || st->nrows < 2)
		return;

	/*
	 * A probe here is a directory lookup, not an index descent, so plan as
	 * for a huge index: radii that probe the fewest keys.  Then compare the
	 * pairs the bands would examine, plus their per-key work, with all
	 * pairs.
	 */
	SimhashPlanProbes(st->k, (double) SIMHASH_BLOCK_KEYS * SIMHASH_BLOCK_KEYS,
					  &st->plan);
	for (int j = 0; j < SIMHASH_BLOCKS && !st->plan.fullscan; j++)
	{
		double		ball = SimhashBallSize(st->plan.radius[j]);

		if (st->plan.radius[j] < 0)
			continue;
		probe += SIMHASH_BLOCK_KEYS + n + Min(n, SIMHASH_BLOCK_KEYS) * (ball - 1) / 2 +
			n * n / SIMHASH_BLOCK_KEYS * ball / 2;
	}
	if (st->plan.fullscan || n * n / 2 <= probe)
	{
		st->whole = true;
		st->nbands = 1;
		st->maxbucket = st->nrows;
		return;
	}

	for (int j = 0; j < SIMHASH_BLOCKS; j++)
	{
		if (st->plan.radius[j] < 0)
			continue;
		st->nbands++;
		memset(st->start, 0, sizeof(uint32) * (SIMHASH_BLOCK_KEYS + 1));
		for (uint32 i = 0; i < st->nrows; i++)
		{
			if (i % SIMHASH_CLUSTERS_CHUNK == 0)
				CHECK_FOR_INTERRUPTS();
			st->start[SimhashBlock(st->rows[i].fp, j)]++;
		}
		for (int key = 0; key < SIMHASH_BLOCK_KEYS; key++)
			st->maxbucket = Max(st->maxbucket, st->start[key]);
	}
}

/* Connect the components of rows a and b (union by size). */
static inline void
SimhashClustersUnion(SimhashClusters *st, uint32 a, uint32 b)
{
	a = SimhashClustersFind(st, a);
	b = SimhashClustersFind(st, b);
	if (a == b)
		return;
	if (st->size[a] < st->size[b])
	{
		uint32		t = a;

		a = b;
		b = t;
	}
	st->parent[b] = a;
	st->size[a] += st->size[b];
	st->nclusters--;
}

/*
 * Sort the rows by the block of band j into band_row and band_fp;
 * start[key] .. start[key + 1] are then the positions of key.
 */
static void
SimhashClustersSortBand(SimhashClusters *st, int j)
{
	SimhashBandRows rows = {.fp = &st->rows[0].fp, .stride = sizeof(SimhashClusterRow),
	.nrows = st->nrows};
	SimhashBandTable table = {.band = j, .dir_bits = SIMHASH_BLOCK_BITS,
	.fp = st->band_fp, .row = st->band_row, .start = st->start};

	/* band_fp's room is the scratch: no memory beyond the accounted */
	SimhashBandTableSort(&table, &rows, NULL);
	Assert(table.nrows == st->nrows);
}

/* The probe masks of radius r: every nonzero key within r bits of 0. */
static void
SimhashClustersMasks(SimhashClusters *st, int r)
{
	st->nmasks = 0;
	for (int bits = 1; bits <= r; bits++)
		st->nmasks += SimhashEnumerateRing(0, bits, st->masks + st->nmasks);
}

/* Is some member of a group, but its head, within k of fp? */
static bool
SimhashClustersNearMember(SimhashClusters *st, const SimhashClusterGroup *g, uint64 fp)
{
	uint32		steps = 0;

	for (uint32 pos = st->next[g->head - st->bucket]; pos != SIMHASH_NO_POS;
		 pos = st->next[pos - st->bucket])
	{
		if (++steps % SIMHASH_CLUSTERS_CHUNK == 0)
			CHECK_FOR_INTERRUPTS();
		if (SimhashDistance(fp, st->band_fp[pos]) <= st->k)
			return true;
	}
	return false;
}

/* Merge group "from" into group "into" (from > into); "from" is removed. */
static void
SimhashClustersMergeGroups(SimhashClusters *st, uint32 into, uint32 from)
{
	SimhashClusterGroup *a = &st->groups[into];
	SimhashClusterGroup *b = &st->groups[from];
	int			d = SimhashDistance(st->band_fp[a->head], st->band_fp[b->head]);

	st->next[a->tail - st->bucket] = b->head;
	a->tail = b->tail;
	/* b's members are within d + b's reach of a's reference */
	a->reach = Min(SIMHASH_BITS, Max(a->reach, d + b->reach));
	*b = st->groups[--st->ngroups];
}

/*
 * Connect the row at band position pos to every group of the current
 * bucket that holds a row within k of it, merging those groups.  Returns
 * the first such group, or -1.
 */
static int64
SimhashClustersMatch(SimhashClusters *st, uint32 pos)
{
	uint64		fp = st->band_fp[pos];
	uint32		row = st->band_row[pos];
	int64		found = -1;

	st->ncompared += st->ngroups;
	for (uint32 g = 0; g < st->ngroups; g++)
	{
		SimhashClusterGroup *grp = &st->groups[g];
		int			d = SimhashDistance(fp, st->band_fp[grp->head]);

		/* no member can be within k: they are within reach of the head */
		if (d - grp->reach > st->k)
			continue;
		if (d > st->k &&
			SimhashClustersFind(st, row) != SimhashClustersFind(st, grp->root) &&
			!SimhashClustersNearMember(st, grp, fp))
			continue;
		SimhashClustersUnion(st, row, grp->root);
		if (found < 0)
			found = g;
		else
			SimhashClustersMergeGroups(st, (uint32) found, g--);
	}
	return found;
}

/*
 * Join the rows of one bucket (band positions s .. e) with each other,
 * gathering them into groups.
 */
static void
SimhashClustersGroupBucket(SimhashClusters *st, uint32 s, uint32 e)
{
	st->ngroups = 0;
	st->bucket = s;
	for (uint32 pos = s; pos < e; pos++)
	{
		int64		g = SimhashClustersMatch(st, pos);

		st->next[pos - s] = SIMHASH_NO_POS;
		if (g >= 0)
		{
			SimhashClusterGroup *grp = &st->groups[g];
			int			d = SimhashDistance(st->band_fp[pos], st->band_fp[grp->head]);

			st->next[grp->tail - s] = pos;
			grp->tail = pos;
			grp->reach = Max(grp->reach, d);
		}
		else
		{
			SimhashClusterGroup *grp = &st->groups[st->ngroups++];

			grp->head = grp->tail = pos;
			grp->root = st->band_row[pos];
			grp->reach = 0;
		}
		if (st->whole)
			st->done = (double) pos / st->nrows;
		SimhashClustersTick(st);
	}
}

/*
 * Join every pair of rows within k: band by band, bucket by bucket, or all
 * rows as one bucket.
 */
void
SimhashClustersJoin(SimhashClusters *st)
{
	st->phase = SIMHASH_CLUSTERS_JOINING;
	if (st->k >= SIMHASH_BITS)
	{
		/* every row is within 64 bits of every other */
		for (uint32 i = 1; i < st->nrows; i++)
			SimhashClustersUnion(st, 0, i);
		return;
	}
	if (st->whole)
	{
		st->band = 1;
		for (uint32 i = 0; i < st->nrows; i++)
		{
			st->band_row[i] = i;
			st->band_fp[i] = st->rows[i].fp;
		}
		SimhashClustersGroupBucket(st, 0, st->nrows);
		return;
	}
	st->band = 0;
	for (int j = 0; j < SIMHASH_BLOCKS && st->nbands > 0; j++)
	{
		uint32	   *start = st->start;

		if (st->plan.radius[j] < 0)
			continue;
		st->band++;
		SimhashClustersSortBand(st, j);
		SimhashClustersMasks(st, st->plan.radius[j]);
		for (int key = 0; key < SIMHASH_BLOCK_KEYS; key++)
		{
			if (start[key] == start[key + 1])
				continue;
			st->done = (double) key / SIMHASH_BLOCK_KEYS;
			SimhashClustersGroupBucket(st, start[key], start[key + 1]);
			/* the buckets of greater keys within r_j bits */
			for (int m = 0; m < st->nmasks; m++)
			{
				int			other = key ^ st->masks[m];

				if (other < key)
					continue;
				for (uint32 pos = start[other]; pos < start[other + 1]; pos++)
				{
					SimhashClustersMatch(st, pos);
					SimhashClustersTick(st);
				}
			}
		}
	}
}
