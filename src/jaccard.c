/*-------------------------------------------------------------------------
 *
 * jaccard.c
 *	  simhash_jaccard(): the weighted Jaccard similarity of two texts over
 *	  the features and weights of simhash(text).
 *
 * A fingerprint finds candidates; this confirms them.  Both texts go
 * through the very extraction simhash(text) uses (SimhashExtractFeatures:
 * encodings, NFKC, case folding, words, Han characters, kana pairs, XXH3
 * hashes), and each feature weighs what it weighs in that text's
 * fingerprint, min(occurrences, cap) with the text's own cap.  The result
 * is
 *
 *		sum over features of min(wa, wb) / sum over features of max(wa, wb)
 *
 * computed in exact integers (sum max = sum wa + sum wb - sum min) and
 * divided once.  Two texts without features are identical as far as the
 * fingerprint can tell (both fingerprints are 0) and get 1; a text without
 * features against one with features gets 0.
 *
 * The work is one extraction per text, as simhash(text) does, plus one
 * probe of the larger feature table per distinct feature of the smaller.
 * Memory is the two feature tables, proportional to the distinct features
 * of the two texts.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/jaccard.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"

#include "simhash.h"

PG_FUNCTION_INFO_V1(simhash_jaccard_text);

/* slots visited between two checks for interrupts */
#define SIMHASH_JACCARD_CHECK_EVERY	65536

/* Sum of the weights of a feature set, each min(occurrences, cap). */
static uint64
SimhashSumWeights(const SimhashFeatureSet *fs, uint64 cap)
{
	uint64		sum = 0;

	for (uint32 slot = 0; slot <= fs->mask; slot++)
		sum += Min((uint64) fs->slots[slot].count, cap);
	return sum;
}

/*
 * Sum over the features of "small" of min(weight in small, weight in big),
 * the weights being capped at each set's own cap.
 */
static uint64
SimhashSumMinWeights(const SimhashFeatureSet *small, uint64 small_cap,
					 const SimhashFeatureSet *big, uint64 big_cap)
{
	uint64		sum = 0;

	for (uint32 slot = 0; slot <= small->mask; slot++)
	{
		uint32		n = small->slots[slot].count;

		if ((slot % SIMHASH_JACCARD_CHECK_EVERY) == 0)
			CHECK_FOR_INTERRUPTS();
		if (n != 0)
		{
			uint32		m = SimhashFeatureSetCount(big,
												   SimhashSlotHash(&small->slots[slot]));

			if (m != 0)
				sum += Min(Min((uint64) n, small_cap), Min((uint64) m, big_cap));
		}
	}
	return sum;
}

/*
 * simhash_jaccard(a text, b text) -> float8
 *		Weighted Jaccard similarity of the features of simhash(a) and
 *		simhash(b): sum of min weights over sum of max weights, 1 for two
 *		texts without features.
 */
Datum
simhash_jaccard_text(PG_FUNCTION_ARGS)
{
	SimhashFeatureSet *fa = SimhashExtractFeatures(PG_GETARG_DATUM(0), false);
	SimhashFeatureSet *fb = SimhashExtractFeatures(PG_GETARG_DATUM(1), false);
	uint64		cap_a = SimhashFeatureSetCap(fa);
	uint64		cap_b = SimhashFeatureSetCap(fb);
	uint64		sum_a = SimhashSumWeights(fa, cap_a);
	uint64		sum_b = SimhashSumWeights(fb, cap_b);
	uint64		sum_min;
	uint64		sum_max;

	/* probe the larger table once per distinct feature of the smaller */
	if (fa->nfeatures <= fb->nfeatures)
		sum_min = SimhashSumMinWeights(fa, cap_a, fb, cap_b);
	else
		sum_min = SimhashSumMinWeights(fb, cap_b, fa, cap_a);
	sum_max = sum_a + sum_b - sum_min;

	SimhashFreeFeatureSet(fa);
	SimhashFreeFeatureSet(fb);
	if (sum_max == 0)
		PG_RETURN_FLOAT8(1.0);	/* neither text has a feature */
	PG_RETURN_FLOAT8((double) sum_min / (double) sum_max);
}
