/*-------------------------------------------------------------------------
 *
 * shprobe.c
 *	  Probe plans of the simhash index.
 *
 * Per-band radii for a radius k by dynamic programming, rings of keys,
 * binomials.  See src/README, "Why four band trees: pigeonhole" and
 * "Probing".
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/access/shprobe.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "shindex.h"

/* cost of one probe (a descent and a leaf visit), in entries examined */
#define SIMHASH_PROBE_COST		64.0
/* cost of an entry in a full band scan, relative to a probed entry */
#define SIMHASH_SCAN_ENTRY_COST	0.5

static double binom16[SIMHASH_BLOCK_BITS + 1];
static double binom64[SIMHASH_BITS + 1];
static bool binom_ready = false;

/* Fill the binomial coefficient tables C(16, i) and C(64, i). */
static void
SimhashInitBinomials(void)
{
	binom16[0] = 1;
	for (int i = 1; i <= SIMHASH_BLOCK_BITS; i++)
		binom16[i] = binom16[i - 1] * (SIMHASH_BLOCK_BITS - i + 1) / i;
	binom64[0] = 1;
	for (int i = 1; i <= SIMHASH_BITS; i++)
		binom64[i] = binom64[i - 1] * (SIMHASH_BITS - i + 1) / i;
	binom_ready = true;
}

/* Number of 16-bit keys at exactly "bits" bits from a given key: C(16, bits). */
double
SimhashRingSize(int bits)
{
	if (!binom_ready)
		SimhashInitBinomials();
	if (bits < 0 || bits > SIMHASH_BLOCK_BITS)
		return 0;
	return binom16[bits];
}

/* Probability that two independent uniform fingerprints are within k bits. */
double
SimhashBinomialWithin(int k)
{
	double		sum = 0;

	if (!binom_ready)
		SimhashInitBinomials();
	if (k < 0)
		return 0;
	if (k >= SIMHASH_BITS)
		return 1;
	for (int i = 0; i <= k; i++)
		sum += binom64[i];
	return sum / 18446744073709551616.0;	/* 2^64 */
}

/* Comparator for uint16 keys. */
static int
SimhashKeyCompare(const void *a, const void *b)
{
	return (int) *(const uint16 *) a - (int) *(const uint16 *) b;
}

/*
 * Sort probe keys in increasing order: by insertion for the few keys of
 * the radii that queries use (qsort's calls through a comparator showed in
 * profiles of radius-7 queries, planned and run with 68 keys), else qsort.
 */
static void
SimhashSortKeys(uint16 *keys, int n)
{
	if (n > 64)
	{
		qsort(keys, n, sizeof(uint16), SimhashKeyCompare);
		return;
	}
	for (int i = 1; i < n; i++)
	{
		uint16		k = keys[i];
		int			j = i;

		for (; j > 0 && keys[j - 1] > k; j--)
			keys[j] = keys[j - 1];
		keys[j] = k;
	}
}

/*
 * Write to out[] every 16-bit key that differs from "center" in exactly
 * "bits" bits, in increasing order; returns how many (C(16, bits)).
 */
int
SimhashEnumerateRing(uint16 center, int bits, uint16 *out)
{
	int			n = 0;
	uint32		mask;

	if (bits < 0 || bits > SIMHASH_BLOCK_BITS)
		return 0;
	if (bits == 0)
	{
		out[0] = center;
		return 1;
	}
	/* visit every 16-bit mask with "bits" bits set (Gosper's hack) */
	mask = (((uint32) 1) << bits) - 1;
	while (mask < (((uint32) 1) << SIMHASH_BLOCK_BITS))
	{
		uint32		low = mask & -mask;
		uint32		ripple = mask + low;

		out[n++] = center ^ (uint16) mask;
		mask = (((ripple ^ mask) >> 2) / low) | ripple;
	}
	SimhashSortKeys(out, n);
	return n;
}

/*
 * Write the keys within "bits" bits of center to out (room for
 * SimhashBallSize(bits)), ring by ring from the centre, each ring in
 * increasing order; returns how many.
 */
int
SimhashEnumerateBall(uint16 center, int bits, uint16 *out)
{
	int			n = 0;

	for (int i = 0; i <= Min(bits, SIMHASH_BLOCK_BITS); i++)
		n += SimhashEnumerateRing(center, i, out + n);
	return n;
}

/*
 * SimhashEnumerateBall in increasing key order, as the probes of one band
 * want it: the leaf one key ends on is where the next one starts.
 */
int
SimhashEnumerateBallSorted(uint16 center, int bits, uint16 *out)
{
	int			n = SimhashEnumerateBall(center, bits, out);

	/* each ring is sorted; the rings together are not */
	if (bits > 0)
		SimhashSortKeys(out, n);
	return n;
}

/* Keys a plan probes in band j: its ball, or all of them for a full scan. */
double
SimhashPlanKeys(const SimhashProbePlan *plan, int band)
{
	if (plan->fullscan)
		return band == plan->fullscan_band ? SIMHASH_BLOCK_KEYS : 0;
	return SimhashBallSize(plan->radius[band]);
}

/*
 * Number of 16-bit keys within r bits of a key: the sum of C(16, i) for
 * i <= r (0 for r < 0).
 */
double
SimhashBallSize(int r)
{
	static double sizes[SIMHASH_BLOCK_BITS + 1];
	static bool ready = false;

	if (!ready)
	{
		double		sum = 0;

		for (int i = 0; i <= SIMHASH_BLOCK_BITS; i++)
			sizes[i] = (sum += SimhashRingSize(i));
		ready = true;
	}
	return r < 0 ? 0 : sizes[Min(r, SIMHASH_BLOCK_BITS)];
}

/* Estimated cost of probing one band with radius r (-1: not probed). */
static inline double
SimhashBandCost(int r, double per_key)
{
	return SimhashBallSize(r) * (SIMHASH_PROBE_COST + per_key);
}

/*
 * Choose per-band radii for a search within k of a query, given about
 * "nentries" entries per band.  k < 0 finds nothing; k >= 64 everything.
 */
void
SimhashPlanProbes(int k, double nentries, SimhashProbePlan *plan)
{
	double		per_key = Max(nentries, 0) / (double) SIMHASH_BLOCK_KEYS;
	double		fullcost = Max(nentries, 1) * SIMHASH_SCAN_ENTRY_COST + SIMHASH_PROBE_COST;
	/* best[s] / choice[j][s]: cheapest way for bands 0..j to reach sum s */
	double		best[SIMHASH_BLOCKS + 1][SIMHASH_BITS + 2];
	int			choice[SIMHASH_BLOCKS + 1][SIMHASH_BITS + 2];
	int			need;

	/*
	 * Callers pass normalized radii (see SimhashNormalizeRadius); the tables
	 * below are indexed by k + 1, so make sure of it rather than trust it.
	 */
	Assert(k >= SIMHASH_EMPTY_RADIUS && k <= SIMHASH_BITS);
	k = SimhashNormalizeRadius(k);

	for (int j = 0; j < SIMHASH_BLOCKS; j++)
		plan->radius[j] = -1;
	plan->fullscan = false;
	plan->fullscan_band = 0;
	if (k < 0)
	{
		plan->cost = 0;
		return;
	}

	/* sum_j (r_j + 1) must reach k + 1; radii of 16 mean a full band */
	need = k + 1;
	if (need > SIMHASH_BLOCKS * SIMHASH_BLOCK_BITS)
	{
		plan->fullscan = true;
		plan->cost = fullcost;
		return;
	}

	for (int s = 0; s <= need; s++)
		best[0][s] = (s == 0) ? 0 : INFINITY;
	for (int j = 1; j <= SIMHASH_BLOCKS; j++)
	{
		for (int s = 0; s <= need; s++)
		{
			best[j][s] = INFINITY;
			choice[j][s] = -1;
			/* band j-1 gets radius r, contributing r + 1 (capped at need) */
			for (int r = -1; r < SIMHASH_BLOCK_BITS; r++)
			{
				int			prev = s - (r + 1);
				double		c;

				if (prev < 0)
					break;
				if (best[j - 1][prev] == INFINITY)
					continue;
				c = best[j - 1][prev] + SimhashBandCost(r, per_key);
				if (c < best[j][s])
				{
					best[j][s] = c;
					choice[j][s] = r;
				}
			}
		}
	}

	if (best[SIMHASH_BLOCKS][need] >= fullcost)
	{
		plan->fullscan = true;
		plan->cost = fullcost;
		return;
	}
	plan->cost = best[SIMHASH_BLOCKS][need];
	for (int j = SIMHASH_BLOCKS, s = need; j >= 1; j--)
	{
		int			r = choice[j][s];

		plan->radius[j - 1] = r;
		s -= r + 1;
	}
}
