/*-------------------------------------------------------------------------
 *
 * radius.c
 *	  simhash_radius(): the search radius that suits the size of a text.
 *
 * One edit moves the fingerprint of a short text by many more bits than
 * that of a long one: a text whose features weigh W in all is a vector of
 * weight W, one word (or Han character) edited turns it by an angle of
 * about 1/sqrt(W), and simhash maps an angle theta to an expected distance
 * of 64 theta / pi bits.  Measured on real texts (bench/quality/RESULTS.md,
 * "Short texts"), 95 % of one-token edits stay within 36 / sqrt(W) bits,
 * in English and in Chinese alike, from W = 4 to W = 200 or so.  The radius
 * proposed is that bound rounded up, at least SIMHASH_RADIUS_MIN (the
 * classic k = 3, which long documents need for their real revisions) and
 * at most SIMHASH_RADIUS_MAX (beyond it unrelated short texts match too
 * often).  A text without features gets 0: its fingerprint is all zeros
 * and says nothing about it.
 *
 * The computation is in integers, so that it is the same everywhere:
 * radius(W) is the least k in [MIN, MAX] with k^2 W >= SCALE^2.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/fingerprint/radius.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"

#include "featureset.h"
#include "fingerprint.h"

PG_FUNCTION_INFO_V1(simhash_radius_text);
PG_FUNCTION_INFO_V1(simhash_radius_weight);

/* the radius bound is SIMHASH_RADIUS_SCALE / sqrt(W) */
#define SIMHASH_RADIUS_SCALE	36
#define SIMHASH_RADIUS_MIN		3
#define SIMHASH_RADIUS_MAX		12

/* The proposed radius for a text whose features weigh "weight" in all. */
static int32
SimhashRadiusForWeight(uint64 weight)
{
	const uint64 scale2 = SIMHASH_RADIUS_SCALE * SIMHASH_RADIUS_SCALE;

	if (weight == 0)
		return 0;
	/* weight >= scale2 already gives k = 1; avoid overflowing k * k * weight */
	for (uint64 k = SIMHASH_RADIUS_MIN; k < SIMHASH_RADIUS_MAX; k++)
		if (weight >= scale2 || k * k * weight >= scale2)
			return (int32) k;
	return SIMHASH_RADIUS_MAX;
}

/* The radius proposed for a text (a text Datum); the near-duplicate trigger's k 'auto'. */
int
SimhashRadiusOfText(Datum textdatum)
{
	SimhashFeatureSet *fs = SimhashExtractFeatures(textdatum, false);
	uint64		weight = SimhashFeatureSetSumWeights(fs, SimhashFeatureSetCap(fs));

	SimhashFreeFeatureSet(fs);
	return SimhashRadiusForWeight(weight);
}

/*
 * simhash_radius(text) -> int4
 *		The radius proposed for near-duplicates of this text.
 */
Datum
simhash_radius_text(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(SimhashRadiusOfText(PG_GETARG_DATUM(0)));
}

/*
 * simhash_radius(features bigint) -> int4
 *		The radius proposed for a text whose features weigh this much in all
 *		(about its number of words, or of Han characters).
 */
Datum
simhash_radius_weight(PG_FUNCTION_ARGS)
{
	int64		features = PG_GETARG_INT64(0);

	if (features < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("feature weight must not be negative"),
				 errdetail("The value given was " INT64_FORMAT ".", features),
				 errhint("Pass the number of words or Han characters, or sum(weight) of simhash_features.")));
	PG_RETURN_INT32(SimhashRadiusForWeight((uint64) features));
}
