/*-------------------------------------------------------------------------
 *
 * distance.c
 *	  Hamming distance and similarity between fingerprints.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/distance.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "simhash.h"

PG_FUNCTION_INFO_V1(simhash64_hamming);
PG_FUNCTION_INFO_V1(simhash64_similarity);
PG_FUNCTION_INFO_V1(simhash64_within);

/*
 * hamming(simhash64, simhash64) -> int4, also the operator <->
 *		Number of differing bits, 0..64.  Leakproof: it cannot fail.
 */
Datum
simhash64_hamming(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(SimhashDistance(PG_GETARG_SIMHASH64(0),
									PG_GETARG_SIMHASH64(1)));
}

/*
 * simhash_similarity(simhash64, simhash64) -> float8
 *		1 - hamming/64: 1 for equal fingerprints, 0 for complements.
 */
Datum
simhash64_similarity(PG_FUNCTION_ARGS)
{
	int			d = SimhashDistance(PG_GETARG_SIMHASH64(0),
									PG_GETARG_SIMHASH64(1));

	PG_RETURN_FLOAT8(1.0 - (double) d / SIMHASH_BITS);
}

/*
 * simhash_within(simhash64, simhash64, int4) -> bool
 *		hamming(a, b) <= k; its support function makes it indexable.
 */
Datum
simhash64_within(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(SimhashDistance(PG_GETARG_SIMHASH64(0), PG_GETARG_SIMHASH64(1)) <=
				   PG_GETARG_INT32(2));
}
