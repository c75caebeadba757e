/*-------------------------------------------------------------------------
 *
 * bandjoin_probe.c
 *	  SimhashJoin: streaming outer rows past a batch of inner rows.
 *
 * An outer row probes each band at the keys its probe plan names
 * (shprobe.c), tests 64 candidates at a time without branches, and forms a
 * joined row only for candidates within k that no earlier band reached and
 * that pass the integer comparisons among the other join clauses.  See
 * src/README, "The band join".
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/executor/bandjoin_probe.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/stratnum.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"

#include "bandjoin_exec.h"
#include "simhash_planner.h"

/*
 * Fetch the next outer row and compute its fingerprint; false at the end
 * of the outer side.  Rows with a NULL fingerprint are skipped.
 */
static bool
SimhashJoinNextOuter(SimhashJoinState *state)
{
	TupleTableSlot *scanslot = state->css.ss.ss_ScanTupleSlot;

	for (;;)
	{
		TupleTableSlot *oslot;

		if (state->outer_from_store)
		{
			oslot = state->outer_store_slot;
			if (!tuplestore_gettupleslot(state->outer_store, true, false, oslot))
				return false;
		}
		else
		{
			oslot = ExecProcNode(state->outer_ps);
			if (TupIsNull(oslot))
				return false;
		}
		slot_getallattrs(oslot);
		/* the outer slot keeps its values valid until the next fetch */
		memcpy(state->outer_values, oslot->tts_values, sizeof(Datum) * state->nouter);
		memcpy(state->outer_isnull, oslot->tts_isnull, sizeof(bool) * state->nouter);
		ExecClearTuple(scanslot);
		memcpy(scanslot->tts_values, oslot->tts_values, sizeof(Datum) * state->nouter);
		memcpy(scanslot->tts_isnull, oslot->tts_isnull, sizeof(bool) * state->nouter);
		memset(scanslot->tts_isnull + state->nouter, true, sizeof(bool) * state->ninner);
		if (!SimhashEvalArg(state, state->outer_arg, state->outer_attno, &state->outer_fp))
			continue;
		if (!state->inner_done && !state->outer_from_store)
		{
			/* more batches will follow: keep the row for them */
			if (state->outer_store == NULL)
			{
				MemoryContext oldcxt =
					MemoryContextSwitchTo(state->css.ss.ps.state->es_query_cxt);

				state->outer_store = tuplestore_begin_heap(false, false, work_mem);
				MemoryContextSwitchTo(oldcxt);
			}
			tuplestore_puttupleslot(state->outer_store, oslot);
		}
		return true;
	}
}

/*
 * The rows of band "band" whose block is "key": its bucket in the
 * directory, narrowed by binary search when buckets hold several keys.
 */
static void
SimhashJoinFindKey(const SimhashJoinTable *t, int band, uint16 key,
				   uint32 *pos, uint32 *end)
{
	int			shift = SIMHASH_BLOCK_BITS - t->dir_bits;
	const uint64 *fps = t->band_fp[band];
	uint32		lo = t->start[band][key >> shift];
	uint32		hi = t->start[band][(key >> shift) + 1];

	if (shift > 0)
	{
		uint32		a = lo,
					b = hi;

		/* first row with a block >= key, then first with a block > key */
		while (a < b)
		{
			uint32		m = a + (b - a) / 2;

			if (SimhashBlock(fps[m], band) < key)
				a = m + 1;
			else
				b = m;
		}
		lo = a;
		b = hi;
		while (a < b)
		{
			uint32		m = a + (b - a) / 2;

			if (SimhashBlock(fps[m], band) <= key)
				a = m + 1;
			else
				b = m;
		}
		hi = a;
	}
	*pos = lo;
	*end = hi;
}

/* Position the probe on the current band and mask; false if past the last. */
static bool
SimhashJoinSeekProbe(SimhashJoinState *state)
{
	SimhashJoinTable *t = &state->table;

	while (state->band < SIMHASH_BLOCKS)
	{
		if (state->mask < state->nmasks[state->band])
		{
			if (state->band == state->whole_band)
			{
				state->pos = 0;
				state->end = t->nrows;
			}
			else
				SimhashJoinFindKey(t, state->band,
								   SimhashBlock(state->outer_fp, state->band) ^
								   state->masks[state->band][state->mask],
								   &state->pos, &state->end);
			return true;
		}
		state->band++;
		state->mask = 0;
	}
	return false;
}

/*
 * The hot loop gets a POPCNT build next to the portable one where the
 * compiler can dispatch between them at load time (pg_popcount64 is an
 * indirect call on x86-64).
 */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define SIMHASH_POPCNT_CLONES __attribute__((target_clones("popcnt", "default")))
#else
#define SIMHASH_POPCNT_CLONES
#endif

/*
 * Which of the n <= 64 candidates fps[0..n) lie within "radius" of x and are
 * reached by no earlier band (see the file header): bit i for fps[i].
 * Branch-free over the candidates, since about half of them pass in
 * clustered data.  For earlier bands probed at radius 0 the test is "that
 * 16-bit lane of x ^ fp is zero", done for all lanes at once ("zero_lanes"
 * has the top bit of each such lane); earlier bands probed wider
 * ("wide_radii", -1 for the others) are checked one by one.
 */
SIMHASH_POPCNT_CLONES static uint64
SimhashJoinScanChunk(const uint64 *fps, int n, uint64 x, int radius, uint64 zero_lanes,
					 bool wide, const int *wide_radii)
{
	uint64		bits = 0;

	for (int i = 0; i < n; i++)
	{
		uint64		diff = x ^ fps[i];
		/* the top bit of each lane is set iff the lane is non-zero */
		uint64		nonzero = (((diff & UINT64CONST(0x7FFF7FFF7FFF7FFF)) +
								UINT64CONST(0x7FFF7FFF7FFF7FFF)) | diff);
		uint64		ok = (uint64) (__builtin_popcountll(diff) <= radius) &
			(uint64) ((~nonzero & zero_lanes) == 0);

		bits |= ok << i;
	}
	/* the earlier bands the lanes above did not cover */
	if (wide && bits != 0)
	{
		for (int i = 0; i < n; i++)
		{
			if ((bits & (UINT64CONST(1) << i)) &&
				SimhashReachedBefore(SimhashBlockCounts(x ^ fps[i]), wide_radii))
				bits &= ~(UINT64CONST(1) << i);
		}
	}
	return bits;
}

/* Do the fast filters pass for the current outer row and inner row "row"? */
static inline bool
SimhashJoinPassFilters(SimhashJoinState *state, uint32 row)
{
	const Datum *ivalues = state->table.values + (Size) row * state->ninner;
	const bool *inull = state->table.isnull + (Size) row * state->ninner;

	for (int i = 0; i < state->nfilters; i++)
	{
		const SimhashFastFilter *f = &state->filters[i];
		int			l = f->left,
					r = f->right;
		Datum		ld,
					rd;
		int64		lv,
					rv;
		bool		pass;

		if (l < state->nouter ? state->outer_isnull[l] : inull[l - state->nouter])
			return false;
		if (r < state->nouter ? state->outer_isnull[r] : inull[r - state->nouter])
			return false;
		ld = l < state->nouter ? state->outer_values[l] : ivalues[l - state->nouter];
		rd = r < state->nouter ? state->outer_values[r] : ivalues[r - state->nouter];
		lv = SimhashIntegerDatum(ld, f->type);
		rv = SimhashIntegerDatum(rd, f->type);
		switch (f->strategy)
		{
			case BTLessStrategyNumber:
				pass = lv < rv;
				break;
			case BTLessEqualStrategyNumber:
				pass = lv <= rv;
				break;
			case BTEqualStrategyNumber:
				pass = lv == rv;
				break;
			case BTGreaterEqualStrategyNumber:
				pass = lv >= rv;
				break;
			default:
				Assert(f->strategy == BTGreaterStrategyNumber);
				pass = lv > rv;
				break;
		}
		if (!pass)
			return false;
	}
	return true;
}

/*
 * The next joined row whose fingerprints lie within k' and which passes the
 * fast filters, in the scan slot; NULL when the join is done.
 */
TupleTableSlot *
SimhashJoinNextPair(SimhashJoinState *state)
{
	SimhashJoinTable *t = &state->table;
	TupleTableSlot *slot = state->css.ss.ss_ScanTupleSlot;

	for (;;)
	{
		/* candidates of the current key that passed the distance test */
		while (state->okbits != 0)
		{
			uint32		at = state->okbase + pg_rightmost_one_pos64(state->okbits);
			uint32		row = t->band_row[state->band][at];
			const Datum *ivalues;
			const bool *inull;

			state->okbits &= state->okbits - 1;
			if (!SimhashJoinPassFilters(state, row))
			{
				InstrCountFiltered1(&state->css, 1);
				continue;
			}

			ExecClearTuple(slot);
			ivalues = t->values + (Size) row * state->ninner;
			inull = t->isnull + (Size) row * state->ninner;
			for (int i = 0; i < state->nouter; i++)
			{
				slot->tts_values[i] = state->outer_values[i];
				slot->tts_isnull[i] = state->outer_isnull[i];
			}
			for (int i = 0; i < state->ninner; i++)
			{
				slot->tts_values[state->nouter + i] = ivalues[i];
				slot->tts_isnull[state->nouter + i] = inull[i];
			}
			return ExecStoreVirtualTuple(slot);
		}
		/* the next (up to) 64 candidates of the current key */
		if (state->pos < state->end)
		{
			int			n = Min(state->end - state->pos, 64);
			int			b = state->band;

			state->okbits = SimhashJoinScanChunk(t->band_fp[b] + state->pos, n,
												 state->outer_fp, state->radius,
												 state->zero_lanes[b], state->wide[b],
												 state->wide_radii[b]);
			state->okbase = state->pos;
			state->pos += n;
			state->ncandidates += n;
			continue;
		}

		/* the next key, band, outer row or batch */
		if (state->have_outer)
		{
			state->mask++;
			CHECK_FOR_INTERRUPTS();
			if (SimhashJoinSeekProbe(state))
				continue;
			state->have_outer = false;
		}
		if (SimhashJoinNextOuter(state))
		{
			state->have_outer = true;
			state->band = 0;
			state->mask = 0;
			if (SimhashJoinSeekProbe(state))
				continue;
			state->have_outer = false;
			continue;
		}
		/* the outer side is done for this batch */
		if (state->inner_done)
			return NULL;
		if (state->outer_store == NULL)
			return NULL;		/* no outer row at all */
		SimhashJoinLoadBatch(state);
		if (t->nrows == 0)
			return NULL;
		state->outer_from_store = true;
		tuplestore_rescan(state->outer_store);
	}
}
