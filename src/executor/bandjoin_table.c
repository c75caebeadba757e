/*-------------------------------------------------------------------------
 *
 * bandjoin_table.c
 *	  SimhashJoin: a batch of inner rows in four band orders.
 *
 * The inner rows of a batch, as many as hash_mem holds, are kept as their
 * fingerprints and column values, stored in band 0's order, plus per band
 * the rows sorted by that band's 16-bit block (a counting sort) with a
 * directory of where each bucket of keys starts.  See src/README, "The
 * band join".
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/executor/bandjoin_table.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "miscadmin.h"
#include "utils/datum.h"
#include "utils/memutils.h"

#include "bandjoin_exec.h"
#include "bandtable.h"

/*
 * Evaluate a fingerprint argument on the scan slot, whose outer or inner
 * part has just been filled.  Returns false for NULL.
 */
bool
SimhashEvalArg(SimhashJoinState *state, ExprState *expr, int attno, uint64 *fp)
{
	TupleTableSlot *slot = state->css.ss.ss_ScanTupleSlot;
	ExprContext *econtext = state->css.ss.ps.ps_ExprContext;
	Datum		d;
	bool		isnull;

	if (expr == NULL)
	{
		if (slot->tts_isnull[attno])
			return false;
		*fp = DatumGetSimhash64(slot->tts_values[attno]);
		return true;
	}
	ExecStoreVirtualTuple(slot);
	econtext->ecxt_scantuple = slot;
	d = ExecEvalExprSwitchContext(expr, econtext, &isnull);
	ExecClearTuple(slot);
	if (isnull)
		return false;
	*fp = DatumGetSimhash64(d);
	return true;
}

/*
 * Prepare the per-band probe masks for radius k': the keys within r_j bits
 * of 0, each probe's key being the outer block XOR a mask.  A plan that
 * reads one band whole needs no masks.
 */
void
SimhashJoinPlanProbes(SimhashJoinState *state)
{
	MemoryContext oldcxt;

	SimhashPlanProbes(state->radius, state->table.nrows, &state->probes);
	state->whole_band = -1;
	if (state->probes.fullscan)
	{
		/* every key of one band: radius 16 there, no other band */
		state->whole_band = state->probes.fullscan_band;
		for (int j = 0; j < SIMHASH_BLOCKS; j++)
			state->probes.radius[j] = (j == state->whole_band) ? SIMHASH_BLOCK_BITS : -1;
	}
	MemoryContextReset(state->probe_cxt);
	oldcxt = MemoryContextSwitchTo(state->probe_cxt);
	for (int j = 0; j < SIMHASH_BLOCKS; j++)
	{
		int			n = 0;

		state->nmasks[j] = 0;
		state->masks[j] = NULL;
		if (j == state->whole_band)
		{
			state->nmasks[j] = 1;	/* one "probe": the whole band */
			continue;
		}
		if (state->probes.radius[j] < 0)
			continue;
		n = (int) SimhashBallSize(state->probes.radius[j]);
		state->masks[j] = palloc(sizeof(uint16) * n);
		state->nmasks[j] = SimhashEnumerateBall(0, state->probes.radius[j], state->masks[j]);
	}
	MemoryContextSwitchTo(oldcxt);
	for (int j = 0; j < SIMHASH_BLOCKS; j++)
	{
		state->zero_lanes[j] = 0;
		state->wide[j] = false;
		for (int i = 0; i < SIMHASH_BLOCKS; i++)
		{
			state->wide_radii[j][i] = -1;
			if (i >= j)
				continue;
			if (state->probes.radius[i] == 0)
				state->zero_lanes[j] |= UINT64CONST(0x8000) <<
					(SIMHASH_BITS - SIMHASH_BLOCK_BITS * (i + 1));
			else if (state->probes.radius[i] > 0)
			{
				state->wide[j] = true;
				state->wide_radii[j][i] = state->probes.radius[i];
			}
		}
	}
}

/*
 * Memory a batch of n rows whose column values take "values" bytes will
 * hold at its peak: the rows, the four band orders with their directories,
 * the sort's scratch array, and the second copy of the columns while the
 * rows are put in band 0's order.
 */
static Size
SimhashJoinBatchBytes(Size n, Size maxrows, int ninner, Size values)
{
	Size		w = Max(ninner, 1);
	Size		rows = maxrows * (sizeof(uint64) + w * (sizeof(Datum) + sizeof(bool)));
	Size		bands = n * SIMHASH_BLOCKS * (sizeof(uint64) + sizeof(uint32)) +
		SIMHASH_BLOCKS * SimhashBandTableDirBytes(SimhashBandTableDirBits(n));
	Size		scratch = n * sizeof(uint32);
	Size		copy = n * w * (sizeof(Datum) + sizeof(bool));

	return rows + values + bands + scratch + copy;
}

/*
 * Grow the row arrays of the table (huge allocations allowed): doubled,
 * starting small enough for the smallest hash_mem.
 */
static void
SimhashJoinGrowTable(SimhashJoinState *state)
{
	SimhashJoinTable *t = &state->table;
	uint32		newmax = t->maxrows == 0 ? 32 : t->maxrows * 2;
	int			w = Max(state->ninner, 1);

	if (t->maxrows == 0)
	{
		t->fps = MemoryContextAllocHuge(state->table_cxt, sizeof(uint64) * newmax);
		t->values = MemoryContextAllocHuge(state->table_cxt, sizeof(Datum) * newmax * w);
		t->isnull = MemoryContextAllocHuge(state->table_cxt, sizeof(bool) * newmax * w);
	}
	else
	{
		t->fps = repalloc_huge(t->fps, sizeof(uint64) * newmax);
		t->values = repalloc_huge(t->values, sizeof(Datum) * newmax * w);
		t->isnull = repalloc_huge(t->isnull, sizeof(bool) * newmax * w);
	}
	t->maxrows = newmax;
}

/*
 * Store the rows of the batch in band 0's order (by the first block of the
 * fingerprint).  Near-duplicates then lie close together in memory whatever
 * order the inner side came in, so the rows a probe reaches in any band are
 * mostly in cache: on a table whose copies are scattered over the heap this
 * makes the join several times faster.
 */
static void
SimhashJoinReorderRows(SimhashJoinState *state)
{
	SimhashJoinTable *t = &state->table;
	int			w = state->ninner;
	Size		n = (Size) t->nrows * Max(w, 1);
	Datum	   *values = MemoryContextAllocHuge(state->table_cxt, sizeof(Datum) * n);
	bool	   *isnull = MemoryContextAllocHuge(state->table_cxt, sizeof(bool) * n);

	for (uint32 i = 0; i < t->nrows; i++)
	{
		uint32		old = t->band_row[0][i];

		for (int c = 0; c < w; c++)
		{
			values[(Size) i * w + c] = t->values[(Size) old * w + c];
			isnull[(Size) i * w + c] = t->isnull[(Size) old * w + c];
		}
		t->band_row[0][i] = i;
	}
	/* both copies of the columns are here now */
	state->peak_memory = Max(state->peak_memory,
							 MemoryContextMemAllocated(state->table_cxt, true));
	pfree(t->values);
	pfree(t->isnull);
	pfree(t->fps);
	t->values = values;
	t->isnull = isnull;
	/* band 0's fingerprints are the rows' fingerprints, in the new order */
	t->fps = t->band_fp[0];
	t->maxrows = t->nrows;
}

/*
 * Sort the rows of the batch by band j's block ("scratch" holding n row
 * numbers), and build the band's directory of 2^dir_bits buckets.
 */
static void
SimhashJoinSortBand(SimhashJoinState *state, int j, uint32 *scratch)
{
	SimhashJoinTable *t = &state->table;
	SimhashBandRows rows = {.fp = t->fps, .stride = sizeof(uint64), .nrows = t->nrows};
	SimhashBandTable table = {.band = j, .dir_bits = t->dir_bits,
	.fp = t->band_fp[j], .row = t->band_row[j], .start = t->start[j]};

	SimhashBandTableSort(&table, &rows, scratch);
	Assert(table.nrows == t->nrows);
}

/*
 * Load the next batch of inner rows: as many as fit in hash_mem, at least
 * one.  Then sort them by each band's block.
 */
void
SimhashJoinLoadBatch(SimhashJoinState *state)
{
	SimhashJoinTable *t = &state->table;
	TupleTableSlot *scanslot = state->css.ss.ss_ScanTupleSlot;
	TupleDesc	desc = scanslot->tts_tupleDescriptor;
	Size		limit = get_hash_memory_limit();
	Size		values_bytes = 0;
	uint32	   *scratch;
	MemoryContext oldcxt;

	MemoryContextReset(state->table_cxt);
	memset(t, 0, sizeof(SimhashJoinTable));

	for (;;)
	{
		TupleTableSlot *islot;
		uint64		fp;
		Datum	   *values;
		bool	   *isnull;

		/*
		 * Is the batch full?  Checked before each row, with the memory the
		 * batch would need once sorted, so that it stays within hash_mem
		 * (a single row is always taken).
		 */
		if (t->nrows > 0 &&
			SimhashJoinBatchBytes(t->nrows + 1, Max(t->maxrows, t->nrows + 1),
								  state->ninner, values_bytes) > limit)
			break;
		if (t->nrows == PG_UINT32_MAX - 1)
			break;

		islot = ExecProcNode(state->inner_ps);
		if (TupIsNull(islot))
		{
			state->inner_done = true;
			break;
		}
		slot_getallattrs(islot);
		ExecClearTuple(scanslot);
		memcpy(scanslot->tts_values + state->nouter, islot->tts_values,
			   sizeof(Datum) * state->ninner);
		memcpy(scanslot->tts_isnull + state->nouter, islot->tts_isnull,
			   sizeof(bool) * state->ninner);
		/* a NULL fingerprint is within no distance of anything */
		if (!SimhashEvalArg(state, state->inner_arg, state->inner_attno, &fp))
			continue;

		if (t->nrows == t->maxrows)
			SimhashJoinGrowTable(state);
		t->fps[t->nrows] = fp;
		values = t->values + (Size) t->nrows * state->ninner;
		isnull = t->isnull + (Size) t->nrows * state->ninner;
		oldcxt = MemoryContextSwitchTo(state->table_cxt);
		for (int i = 0; i < state->ninner; i++)
		{
			Form_pg_attribute att = TupleDescAttr(desc, state->nouter + i);

			isnull[i] = islot->tts_isnull[i];
			values[i] = isnull[i] ? (Datum) 0 :
				datumCopy(islot->tts_values[i], att->attbyval, att->attlen);
			if (!isnull[i] && !att->attbyval)
				values_bytes += MAXALIGN(datumGetSize(values[i], false, att->attlen)) +
					SIMHASH_JOIN_CHUNK_OVERHEAD;
		}
		MemoryContextSwitchTo(oldcxt);
		t->nrows++;
	}
	state->nbatches++;
	state->max_batches = Max(state->max_batches, state->nbatches);

	t->dir_bits = SimhashBandTableDirBits(t->nrows);
	scratch = MemoryContextAllocHuge(state->table_cxt, sizeof(uint32) * Max(t->nrows, 1));
	for (int j = 0; j < SIMHASH_BLOCKS; j++)
	{
		t->start[j] = MemoryContextAllocHuge(state->table_cxt,
											 SimhashBandTableDirBytes(t->dir_bits));
		t->band_fp[j] = MemoryContextAllocHuge(state->table_cxt,
											   sizeof(uint64) * Max(t->nrows, 1));
		t->band_row[j] = MemoryContextAllocHuge(state->table_cxt,
												sizeof(uint32) * Max(t->nrows, 1));
		SimhashJoinSortBand(state, j, scratch);
		if (j == 0)
		{
			state->peak_memory = Max(state->peak_memory,
									 MemoryContextMemAllocated(state->table_cxt, true));
			if (t->nrows > 0)
				SimhashJoinReorderRows(state);
		}
		CHECK_FOR_INTERRUPTS();
	}
	state->peak_memory = Max(state->peak_memory,
							 MemoryContextMemAllocated(state->table_cxt, true));
	pfree(scratch);
	t->bytes = MemoryContextMemAllocated(state->table_cxt, true);
	state->table_valid = true;
	SimhashJoinPlanProbes(state);
	state->peak_memory = Max(state->peak_memory,
							 t->bytes + MemoryContextMemAllocated(state->probe_cxt, true));
}
