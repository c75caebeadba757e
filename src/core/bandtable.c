/*-------------------------------------------------------------------------
 *
 * bandtable.c
 *	  The in-memory band table: rows sorted by one band's 16-bit block.
 *
 * With a bucket per block (dir_bits = 16: the pending buffer, clusters,
 * band-join batches of more than 32,768 rows) the sort is one counting pass
 * over the whole block, whose 65,536 counters become the directory, and
 * which writes the row numbers and fingerprints at once.  With a smaller
 * directory (smaller join batches) it is a least-significant-digit radix
 * sort in two counting passes of 8 bits, with 256 counters each so that a
 * small batch does not pay for clearing 65,536, then a pass that copies
 * the fingerprints into the band's order and counts the buckets.  Both are
 * stable: the rows of one block stay in input order, which the pending
 * buffer relies on (its rows are in insertion order).  See src/README,
 * "The band join".
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/core/bandtable.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "bandtable.h"

/* rows between interrupt checks */
#define SIMHASH_BANDTABLE_CHUNK_MASK	0xFFFF

/*
 * Directory bits for a table of n rows: about one bucket per row, at most
 * one bucket per block.
 */
int
SimhashBandTableDirBits(Size nrows)
{
	int			bits = 0;

	while (bits < SIMHASH_BLOCK_BITS && ((Size) 1 << bits) < nrows)
		bits++;
	return bits;
}

/* Bytes of the directory of 2^dir_bits buckets (its end included). */
Size
SimhashBandTableDirBytes(int dir_bits)
{
	Assert(dir_bits >= 0 && dir_bits <= SIMHASH_BLOCK_BITS);
	return sizeof(uint32) * (((Size) 1 << dir_bits) + 1);
}

#ifdef USE_ASSERT_CHECKING
/*
 * Check a sorted table: the directory rises to nrows, every row lies in its
 * block's bucket, blocks never fall, rows of one block are in input order,
 * and each fingerprint is its row's.
 */
static void
SimhashBandTableCheck(const SimhashBandTable *t, const SimhashBandRows *rows)
{
	Size		nbuckets = (Size) 1 << t->dir_bits;
	int			shift = SIMHASH_BLOCK_BITS - t->dir_bits;

	Assert(t->start[0] == 0);
	Assert(t->start[nbuckets] == t->nrows);
	for (Size b = 0; b < nbuckets; b++)
	{
		Assert(t->start[b] <= t->start[b + 1]);
		for (uint32 pos = t->start[b]; pos < t->start[b + 1]; pos++)
			Assert((Size) (SimhashBlock(t->fp[pos], t->band) >> shift) == b);
	}
	for (uint32 pos = 0; pos < t->nrows; pos++)
	{
		Assert(t->row[pos] < rows->nrows);
		Assert(!SimhashBandRowIsNull(rows, t->row[pos]));
		Assert(t->fp[pos] == SimhashBandRowFp(rows, t->row[pos]));
		if (pos > 0)
		{
			uint16		prev = SimhashBlock(t->fp[pos - 1], t->band);
			uint16		cur = SimhashBlock(t->fp[pos], t->band);

			Assert(prev <= cur);
			Assert(prev < cur || t->row[pos - 1] < t->row[pos]);
		}
	}
}
#endif

/*
 * One stable counting pass over the digit of the block at "shift" (its
 * nkeys - 1 low bits): the input rows in[0 .. n - 1], or without "in" the
 * non-NULL rows among the first n, go into out_row[] (and their
 * fingerprints into out_fp[], if given) in the digit's order.  counts[]
 * (nkeys entries) ends up holding where each digit's rows end.  Returns the
 * number of rows.
 */
static uint32
SimhashBandTablePass(const SimhashBandRows *rows, int band, int shift, uint32 nkeys,
					 uint32 *counts, const uint32 *in, uint32 n,
					 uint32 *out_row, uint64 *out_fp)
{
	uint32		total = 0;

	Assert(nkeys == 256 || nkeys == SIMHASH_BLOCK_KEYS);
	memset(counts, 0, sizeof(uint32) * nkeys);
	/* step 0 counts each digit, step 1 puts each row at its digit's place */
	for (int step = 0; step < 2; step++)
	{
		for (uint32 i = 0; i < n; i++)
		{
			uint32		r = (in != NULL) ? in[i] : i;
			uint64		fp;
			uint32		digit;

			if ((i & SIMHASH_BANDTABLE_CHUNK_MASK) == 0)
				CHECK_FOR_INTERRUPTS();
			if (in == NULL && SimhashBandRowIsNull(rows, r))
				continue;
			fp = SimhashBandRowFp(rows, r);
			digit = (SimhashBlock(fp, band) >> shift) & (nkeys - 1);
			if (step == 0)
				counts[digit]++;
			else
			{
				uint32		pos = counts[digit]++;

				out_row[pos] = r;
				if (out_fp != NULL)
					out_fp[pos] = fp;
			}
		}
		if (step == 0)
			total = SimhashCountsToStarts(counts, (int) nkeys);
	}
	return total;
}

/*
 * Sort the non-NULL input rows by the block of table->band into
 * table->row and table->fp, and build the directory of 2^table->dir_bits
 * buckets in table->start; table->nrows is set to the rows sorted.  The
 * arrays hold at least rows->nrows entries (the directory:
 * SimhashBandTableDirBytes), as does "scratch", which is left undefined.
 * Without scratch (NULL), the room of table->fp serves: the fingerprints
 * are written only after the last use of scratch.
 */
void
SimhashBandTableSort(SimhashBandTable *table, const SimhashBandRows *rows,
					 uint32 *scratch)
{
	uint32		count[256];
	uint32		nrows;
	int			band = table->band;
	int			shift = SIMHASH_BLOCK_BITS - table->dir_bits;
	Size		nbuckets = (Size) 1 << table->dir_bits;
	uint32	   *start = table->start;

	if (scratch == NULL)
		scratch = (uint32 *) table->fp;

	Assert(band >= 0 && band < SIMHASH_BLOCKS);
	Assert(table->dir_bits >= 0 && table->dir_bits <= SIMHASH_BLOCK_BITS);
	Assert(rows->nrows <= SIMHASH_BANDTABLE_MAX_ROWS);
	Assert(rows->nrows <= 1 || rows->stride >= sizeof(uint64));

	if (table->dir_bits == SIMHASH_BLOCK_BITS)
	{
		/*
		 * A bucket per block: one pass over the whole block, whose counts
		 * become the directory once shifted from where each block ends to
		 * where it starts.
		 */
		nrows = SimhashBandTablePass(rows, band, 0, SIMHASH_BLOCK_KEYS, start,
									 NULL, rows->nrows, table->row, table->fp);
		memmove(start + 1, start, sizeof(uint32) * SIMHASH_BLOCK_KEYS);
		start[0] = 0;
	}
	else
	{
		/* the low byte: input order into scratch; the high byte: into row[] */
		nrows = SimhashBandTablePass(rows, band, 0, 256, count, NULL, rows->nrows,
									 scratch, NULL);
		(void) SimhashBandTablePass(rows, band, 8, 256, count, scratch, nrows,
									table->row, NULL);

		/* the fingerprints in that order, and where each bucket starts */
		memset(start, 0, SimhashBandTableDirBytes(table->dir_bits));
		for (uint32 i = 0; i < nrows; i++)
		{
			uint64		fp = SimhashBandRowFp(rows, table->row[i]);

			if ((i & SIMHASH_BANDTABLE_CHUNK_MASK) == 0)
				CHECK_FOR_INTERRUPTS();
			table->fp[i] = fp;
			start[(SimhashBlock(fp, band) >> shift) + 1]++;
		}
		for (Size b = 0; b < nbuckets; b++)
			start[b + 1] += start[b];
	}
	table->nrows = nrows;

#ifdef USE_ASSERT_CHECKING
	SimhashBandTableCheck(table, rows);
#endif
}
