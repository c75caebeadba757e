/*-------------------------------------------------------------------------
 *
 * bandtable.h
 *	  An in-memory band table: rows sorted by one band's 16-bit block,
 *	  with a directory of where each bucket of blocks starts.
 *
 * The index's pending-row buffer (access/shinsert.c), the band join
 * (executor/bandjoin_table.c) and simhash_clusters (clusters/clusterjoin.c)
 * all look rows up by a band's block; SimhashBandTableSort is the one sort
 * they share.  The caller owns every array (allocated in its own memory
 * context); the sort only fills them.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/core/bandtable.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SIMHASH_BANDTABLE_H
#define SIMHASH_BANDTABLE_H

#include "simhash.h"

/* the most rows a band table holds (positions are uint32, end included) */
#define SIMHASH_BANDTABLE_MAX_ROWS	(PG_UINT32_MAX - 1)

/*
 * The input rows: nrows fingerprints "stride" bytes apart, so that a
 * caller's array of row structs can be read in place.  A row whose NULL
 * flag (at the same stride from "isnull") is set is left out of the table.
 */
typedef struct SimhashBandRows
{
	const uint64 *fp;			/* the first row's fingerprint */
	const bool *isnull;			/* the first row's NULL flag, or NULL */
	Size		stride;			/* bytes from one row to the next */
	uint32		nrows;
} SimhashBandRows;

/*
 * One band's order of the rows: by the band's block, rows of equal blocks
 * in input order.  The directory has 2^dir_bits buckets, bucket b holding
 * the blocks whose top dir_bits bits are b, at positions start[b] ..
 * start[b + 1] - 1; with dir_bits = SIMHASH_BLOCK_BITS a bucket is a block.
 */
typedef struct SimhashBandTable
{
	int			band;			/* whose block sorts the rows */
	int			dir_bits;		/* 0 .. SIMHASH_BLOCK_BITS */
	uint32		nrows;			/* rows in the table (the non-NULL ones) */
	uint64	   *fp;				/* [nrows]: their fingerprints, in order */
	uint32	   *row;			/* [nrows]: their numbers in the input */
	uint32	   *start;			/* [2^dir_bits + 1]: the directory */
} SimhashBandTable;

extern int	SimhashBandTableDirBits(Size nrows);
extern Size SimhashBandTableDirBytes(int dir_bits);
extern void SimhashBandTableSort(SimhashBandTable *table, const SimhashBandRows *rows,
								 uint32 *scratch);

/* The fingerprint of input row i. */
static inline uint64
SimhashBandRowFp(const SimhashBandRows *rows, uint32 i)
{
	return *(const uint64 *) ((const char *) rows->fp + (Size) i * rows->stride);
}

/* Is input row i NULL (left out)? */
static inline bool
SimhashBandRowIsNull(const SimhashBandRows *rows, uint32 i)
{
	return rows->isnull != NULL &&
		*(const bool *) ((const char *) rows->isnull + (Size) i * rows->stride);
}

#endif							/* SIMHASH_BANDTABLE_H */
