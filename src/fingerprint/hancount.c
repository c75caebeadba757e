/*-------------------------------------------------------------------------
 *
 * hancount.c
 *	  Occurrences of common Han characters, counted by code point.
 *
 * The backend's array of counts and the moves of its counts into a text's
 * feature table (hancount.h says why); the counting itself is inline, in
 * the tokenizer's Han path (hanscan.h).
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/fingerprint/hancount.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "featureset.h"
#include "hancount.h"
#include "wordhash.h"

/* the backend's Han counts (hancount.h), allocated when first needed */
static uint16 *simhash_han_count = NULL;
/* may some count be nonzero (a text ended by an error)? */
static bool simhash_han_dirty = false;
/* the number of the last text that took the counts */
static uint64 simhash_han_epoch = 0;

/* Take the backend's Han counts for a text, all zero. */
void
SimhashHanCountsStart(SimhashHanCounts *hc)
{
	Size		bytes = sizeof(uint16) * SIMHASH_HAN_CODES;

	if (simhash_han_count == NULL)
	{
		simhash_han_count = MemoryContextAlloc(TopMemoryContext, bytes);
		simhash_han_dirty = true;
	}
	if (simhash_han_dirty)
		memset(simhash_han_count, 0, bytes);
	simhash_han_dirty = true;
	hc->count = simhash_han_count;
	hc->listed = palloc(sizeof(uint32) * (SIMHASH_HAN_LISTED + 1));
	hc->nlisted = 0;
	hc->epoch = ++simhash_han_epoch;
}

/*
 * Move the Han counts into the feature table, leaving them zero: each
 * listed character (listed again if its count was moved before) is hashed
 * once, XXH3_64bits() of its UTF-8.
 */
void
SimhashHanCountsFlush(SimhashHanCounts *hc, SimhashFeatureSet *fs)
{
	if (hc->epoch != simhash_han_epoch)
		elog(ERROR, "Han counts of two texts are in use at once");
	for (uint32 k = 0; k < hc->nlisted; k++)
	{
		uint32		idx = hc->listed[k];
		uint32		n = hc->count[idx];
		uint32		c = idx + SIMHASH_HAN_BASE;
		unsigned char utf8[3];

		if (n == 0)
			continue;			/* listed twice */
		hc->count[idx] = 0;
		utf8[0] = (unsigned char) (0xE0 | (c >> 12));
		utf8[1] = (unsigned char) (0x80 | ((c >> 6) & 0x3F));
		utf8[2] = (unsigned char) (0x80 | (c & 0x3F));
		SimhashAddFeatureTimes(fs, SimhashHashShort(utf8, 3, 0), n);
	}
	hc->nlisted = 0;
}

/* The text has ended: move the Han counts into the table and give them back. */
void
SimhashHanCountsEnd(SimhashHanCounts *hc, SimhashFeatureSet *fs)
{
	SimhashHanCountsFlush(hc, fs);
	simhash_han_dirty = false;
	pfree(hc->listed);
	hc->count = NULL;
}
