/*-------------------------------------------------------------------------
 *
 * distance.c
 *	  Hamming distance and similarity between fingerprints, and the
 *	  fingerprint's 16-bit blocks (the index's band keys) for SQL.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/core/distance.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/array.h"

#include "simhash.h"

PG_FUNCTION_INFO_V1(simhash64_hamming);
PG_FUNCTION_INFO_V1(simhash64_similarity);
PG_FUNCTION_INFO_V1(simhash64_within);
PG_FUNCTION_INFO_V1(simhash64_block);
PG_FUNCTION_INFO_V1(simhash64_blocks);
PG_FUNCTION_INFO_V1(simhash64_shared_block);

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

/*
 * simhash_block(simhash64, int4) -> int4
 *		Block "block" of the fingerprint, 0..65535; block 0 is the most
 *		significant 16 bits, as band 0 of the index.  Two fingerprints within
 *		distance 3 have at least one equal block (3 differing bits cannot
 *		touch all four), so the blocks are equi-join keys for finding
 *		near-duplicate pairs where no simhash index or band join can run:
 *		across shards, in a repartition join.  The block number is checked
 *		where it enters: a wrong one is an error, never a shift by a wild
 *		amount.
 */
Datum
simhash64_block(PG_FUNCTION_ARGS)
{
	uint64		fp = PG_GETARG_SIMHASH64(0);
	int32		block = PG_GETARG_INT32(1);

	if (block < 0 || block >= SIMHASH_BLOCKS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("simhash block number %d is out of range", block),
				 errdetail("A fingerprint has blocks 0 to %d, 0 being its most significant 16 bits.",
						   SIMHASH_BLOCKS - 1),
				 errhint("Use simhash_blocks() to get all four at once.")));
	PG_RETURN_INT32((int32) SimhashBlock(fp, block));
}

/*
 * simhash_blocks(simhash64) -> int4[]
 *		The four blocks, most significant first: simhash_blocks(fp)[i + 1] =
 *		simhash_block(fp, i).  Cannot fail, hence leakproof.
 */
Datum
simhash64_blocks(PG_FUNCTION_ARGS)
{
	uint64		fp = PG_GETARG_SIMHASH64(0);
	Datum		elems[SIMHASH_BLOCKS];

	for (int i = 0; i < SIMHASH_BLOCKS; i++)
		elems[i] = Int32GetDatum((int32) SimhashBlock(fp, i));
	PG_RETURN_ARRAYTYPE_P(construct_array(elems, SIMHASH_BLOCKS, INT4OID,
										  sizeof(int32), true, TYPALIGN_INT));
}

/*
 * simhash_shared_block(simhash64, simhash64) -> int4
 *		The first block, most significant first, that two fingerprints have in
 *		common (its value, 0..65535), or NULL if they share none.  Fingerprints
 *		within 3 always share one, and this one decides which group of a
 *		sharded table reports the pair, so that each pair is reported once.
 *		Cannot fail, hence leakproof.
 */
Datum
simhash64_shared_block(PG_FUNCTION_ARGS)
{
	uint64		a = PG_GETARG_SIMHASH64(0);
	uint64		b = PG_GETARG_SIMHASH64(1);

	for (int i = 0; i < SIMHASH_BLOCKS; i++)
		if (SimhashBlock(a, i) == SimhashBlock(b, i))
			PG_RETURN_INT32((int32) SimhashBlock(a, i));
	PG_RETURN_NULL();
}
