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
 * probe of the larger feature table per distinct feature of the smaller;
 * a text seen at the previous call (the query of a two-stage query, the
 * outer row of a nested loop) is not extracted again.  Memory is the two
 * feature tables, proportional to the distinct features of the two texts.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/fingerprint/jaccard.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "featureset.h"
#include "fingerprint.h"

PG_FUNCTION_INFO_V1(simhash_jaccard_text);

/* features visited between two checks for interrupts */
#define SIMHASH_JACCARD_CHECK_EVERY	65536

/*
 * Sum over the features of "small" of min(weight in small, weight in big),
 * the weights being capped at each set's own cap.
 */
static uint64
SimhashSumMinWeights(const SimhashFeatureSet *small, uint64 small_cap,
					 const SimhashFeatureSet *big, uint64 big_cap)
{
	const uint32 *occupied = SimhashFeatureSetOccupied(small);
	uint64		sum = 0;

	for (uint32 k = 0; k < small->nfeatures; k++)
	{
		const SimhashFeatureSlot *slot = &small->slots[occupied[k]];
		uint32		m;

		if ((k % SIMHASH_JACCARD_CHECK_EVERY) == 0)
			CHECK_FOR_INTERRUPTS();
		m = SimhashFeatureSetCount(big, SimhashSlotHash(slot));
		if (m != 0)
			sum += Min(Min((uint64) slot->count, small_cap), Min((uint64) m, big_cap));
	}
	return sum;
}

/*
 * The feature sets of the last two texts seen, kept across calls in
 * fn_extra.  In "simhash_jaccard(body, $1)" over the candidates of an index
 * scan one argument is the same text at every call, and in a nested loop
 * one side stays for many calls: its features are extracted once.  A text
 * is recognized by its bytes, so the cache never changes a result.
 */
struct SimhashJaccardSide
{
	char	   *data;			/* the text's bytes (NULL: entry unused) */
	Size		len;
	SimhashFeatureSet *fs;
	uint64		cap;			/* weight cap of the text */
	uint64		sum;			/* sum of its weights */
};

typedef struct SimhashJaccardCache
{
	SimhashJaccardSide side[2];
} SimhashJaccardCache;

/* texts longer than this are neither cached nor detoasted whole */
#define SIMHASH_JACCARD_CACHE_MAX	(1024 * 1024)

/* Fill in the weight cap and sum of an extracted side. */
static void
SimhashJaccardWeigh(SimhashJaccardSide *side)
{
	side->cap = SimhashFeatureSetCap(side->fs);
	side->sum = SimhashFeatureSetSumWeights(side->fs, side->cap);
}

/* Is a text too long to cache (and perhaps to detoast whole)? */
static bool
SimhashJaccardTooLong(struct varlena *attr)
{
	if (VARATT_IS_EXTERNAL(attr))
		return toast_raw_datum_size(PointerGetDatum(attr)) - VARHDRSZ > SIMHASH_JACCARD_CACHE_MAX;
	return VARSIZE_ANY_EXHDR(attr) > SIMHASH_JACCARD_CACHE_MAX;
}

/* The cache entry holding exactly these bytes, or -1. */
static int
SimhashJaccardFind(SimhashJaccardCache *cache, const char *data, Size len)
{
	for (int i = 0; i < 2; i++)
		if (cache->side[i].data != NULL && cache->side[i].len == len &&
			memcmp(cache->side[i].data, data, len) == 0)
			return i;
	return -1;
}

/* Extract a text into cache entry "side", replacing what it held. */
static void
SimhashJaccardFill(FunctionCallInfo fcinfo, SimhashJaccardSide *side, text *t)
{
	MemoryContext old;

	if (side->data != NULL)
	{
		SimhashFreeFeatureSet(side->fs);
		pfree(side->data);
		side->data = NULL;
	}
	old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	side->fs = SimhashExtractFeatures(PointerGetDatum(t), false);
	side->len = VARSIZE_ANY_EXHDR(t);
	side->data = palloc(Max(side->len, 1));
	memcpy(side->data, VARDATA_ANY(t), side->len);
	MemoryContextSwitchTo(old);
	SimhashJaccardWeigh(side);
}

/* The similarity of two weighed feature sets. */
static double
SimhashJaccardOfSides(const SimhashJaccardSide *a, const SimhashJaccardSide *b)
{
	uint64		sum_min;
	uint64		sum_max;

	/* probe the larger table once per distinct feature of the smaller */
	if (a->fs->nfeatures <= b->fs->nfeatures)
		sum_min = SimhashSumMinWeights(a->fs, a->cap, b->fs, b->cap);
	else
		sum_min = SimhashSumMinWeights(b->fs, b->cap, a->fs, a->cap);
	sum_max = a->sum + b->sum - sum_min;
	if (sum_max == 0)
		return 1.0;				/* neither text has a feature */
	return (double) sum_min / (double) sum_max;
}

/*
 * simhash_jaccard of two text Datums, without a cache: for C callers (the
 * near-duplicate trigger, say).
 */
double
SimhashTextJaccard(Datum a, Datum b)
{
	SimhashJaccardSide sa = {0},
				sb = {0};
	double		result;

	sa.fs = SimhashExtractFeatures(a, false);
	SimhashJaccardWeigh(&sa);
	sb.fs = SimhashExtractFeatures(b, false);
	SimhashJaccardWeigh(&sb);
	result = SimhashJaccardOfSides(&sa, &sb);
	SimhashFreeFeatureSet(sa.fs);
	SimhashFreeFeatureSet(sb.fs);
	return result;
}

/*
 * The features of a text, extracted once to be compared with many others
 * (SimhashJaccardAgainst): the near-duplicate trigger's new row against
 * its candidates.
 */
SimhashJaccardSide *
SimhashJaccardPrepare(Datum t)
{
	SimhashJaccardSide *side = palloc0(sizeof(SimhashJaccardSide));

	side->fs = SimhashExtractFeatures(t, false);
	SimhashJaccardWeigh(side);
	return side;
}

/* simhash_jaccard of a prepared text and a text Datum. */
double
SimhashJaccardAgainst(const SimhashJaccardSide *prepared, Datum b)
{
	SimhashJaccardSide sb = {0};
	double		result;

	sb.fs = SimhashExtractFeatures(b, false);
	SimhashJaccardWeigh(&sb);
	result = SimhashJaccardOfSides(prepared, &sb);
	SimhashFreeFeatureSet(sb.fs);
	return result;
}

/* Free what SimhashJaccardPrepare allocated. */
void
SimhashJaccardRelease(SimhashJaccardSide *prepared)
{
	SimhashFreeFeatureSet(prepared->fs);
	pfree(prepared);
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
	SimhashJaccardCache *cache;
	SimhashJaccardSide own[2] = {{0}};
	SimhashJaccardSide *side[2];
	text	   *t[2] = {NULL, NULL};
	int			hit[2] = {-1, -1};
	double		result;

	/* called without flinfo (DirectFunctionCall): nothing to keep a cache in */
	if (fcinfo->flinfo == NULL)
		PG_RETURN_FLOAT8(SimhashTextJaccard(PG_GETARG_DATUM(0), PG_GETARG_DATUM(1)));

	cache = (SimhashJaccardCache *) fcinfo->flinfo->fn_extra;
	if (cache == NULL)
	{
		cache = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(SimhashJaccardCache));
		fcinfo->flinfo->fn_extra = cache;
	}

	/* first find both arguments, so that a miss never evicts the other's hit */
	for (int arg = 0; arg < 2; arg++)
	{
		struct varlena *attr = (struct varlena *) DatumGetPointer(PG_GETARG_DATUM(arg));

		if (SimhashJaccardTooLong(attr))
		{
			/* read in slices where possible, as simhash(text) does */
			own[arg].fs = SimhashExtractFeatures(PointerGetDatum(attr), false);
			SimhashJaccardWeigh(&own[arg]);
			side[arg] = &own[arg];
			continue;
		}
		t[arg] = pg_detoast_datum_packed(attr);
		hit[arg] = SimhashJaccardFind(cache, VARDATA_ANY(t[arg]), VARSIZE_ANY_EXHDR(t[arg]));
		side[arg] = hit[arg] >= 0 ? &cache->side[hit[arg]] : NULL;
	}
	for (int arg = 0; arg < 2; arg++)
	{
		if (side[arg] == NULL)
		{
			/* a miss: the entry the other argument does not use */
			int			other = hit[1 - arg];
			int			victim = (other == 0) ? 1 : 0;

			/* (the same text as the other argument, just extracted?) */
			hit[arg] = SimhashJaccardFind(cache, VARDATA_ANY(t[arg]), VARSIZE_ANY_EXHDR(t[arg]));
			if (hit[arg] < 0)
			{
				SimhashJaccardFill(fcinfo, &cache->side[victim], t[arg]);
				hit[arg] = victim;
			}
			side[arg] = &cache->side[hit[arg]];
		}
		if (t[arg] != NULL && (Pointer) t[arg] != DatumGetPointer(PG_GETARG_DATUM(arg)))
			pfree(t[arg]);
	}

	result = SimhashJaccardOfSides(side[0], side[1]);
	for (int arg = 0; arg < 2; arg++)
		if (own[arg].fs != NULL)
			SimhashFreeFeatureSet(own[arg].fs);
	PG_RETURN_FLOAT8(result);
}
