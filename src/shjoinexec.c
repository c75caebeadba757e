/*-------------------------------------------------------------------------
 *
 * shjoinexec.c
 *	  SimhashJoin execution: load the inner side into four band orders,
 *	  stream the outer side past it.
 *
 * See shjoin.c for the algorithm and the planning half.  The inner rows of
 * a batch are kept as their fingerprints and column values, plus, per band,
 * the rows sorted by that band's 16-bit block (a counting sort) with where
 * each key starts.  An outer row probes each band at the keys its probe
 * plan names (shprobe.c), tests 64 candidates at a time without branches,
 * and forms a joined row only for candidates within k that no earlier band
 * reached and that pass the integer comparisons among the other join
 * clauses; the rest of those clauses are evaluated on the joined row.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/shjoinexec.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_opfamily_d.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"
#include "utils/tuplestore.h"

#include "shindex.h"
#include "shjoin.h"
#include "simhash_planner.h"

/* bytes of bookkeeping per palloc'd chunk, as counted for a batch */
#define SIMHASH_JOIN_CHUNK_OVERHEAD	16

/*
 * The inner rows of one batch, and their four band orders.  Each band order
 * has a directory of 2^dir_bits buckets by the top bits of the band's
 * block: 16 bits (one bucket per key) for large batches, fewer for small
 * ones, so that the directories never outweigh the rows and a small
 * work_mem is honoured.  A probe of a key then searches its bucket.
 */
typedef struct SimhashJoinTable
{
	uint32		nrows;
	uint32		maxrows;
	Size		bytes;			/* memory of the batch, see SimhashJoinBatchBytes */
	int			dir_bits;
	uint64	   *fps;			/* fingerprint of each row */
	Datum	   *values;			/* nrows x ninner column values */
	bool	   *isnull;
	/* per band: rows sorted by their block, and where each bucket starts */
	uint32	   *start[SIMHASH_NBANDS];	/* 2^dir_bits + 1 each */
	uint64	   *band_fp[SIMHASH_NBANDS];
	uint32	   *band_row[SIMHASH_NBANDS];
} SimhashJoinTable;

/*
 * A join clause "x op y" between two integer columns of the scan tuple (the
 * "a.id < b.id" that lists each pair once), checked on the raw values before
 * a candidate pair is formed.
 */
typedef struct SimhashFastFilter
{
	int			left;			/* 0-based scan tuple positions */
	int			right;
	int			strategy;		/* BTLessStrategyNumber ... */
	Oid			type;			/* INT2OID, INT4OID or INT8OID */
} SimhashFastFilter;

/* Execution state */
typedef struct SimhashJoinState
{
	CustomScanState css;
	PlanState  *outer_ps;
	PlanState  *inner_ps;
	int			nouter;			/* columns of the scan tuple from the outer side */
	int			ninner;			/* ... and from the inner side */
	int			adjust;
	ExprState  *outer_arg;		/* NULL when the argument is a plain column: */
	ExprState  *inner_arg;
	int			outer_attno;	/* ... its 0-based position in the scan tuple */
	int			inner_attno;
	ExprState  *bound;
	Expr	   *clause;			/* for EXPLAIN */
	List	   *joinqual;		/* the other join clauses (implicit AND) */
	SimhashFastFilter *filters; /* those checked on raw values ... */
	int			nfilters;
	ExprState  *joinqual_state; /* ... and the rest, compiled */

	/* per (re)scan */
	bool		started;
	int			radius;			/* k' (-1: no pair can match) */
	SimhashProbePlan probes;
	MemoryContext probe_cxt;	/* the masks */
	uint16	   *masks[SIMHASH_NBANDS];	/* keys within r_j of 0, per band */
	int			nmasks[SIMHASH_NBANDS];
	int			whole_band;		/* a band read whole (probes.fullscan), or -1 */

	/* the current batch of inner rows */
	MemoryContext table_cxt;
	SimhashJoinTable table;
	bool		table_valid;
	bool		inner_done;		/* the inner side has been read to its end */
	int			nbatches;		/* batches loaded since the last rescan */

	/*
	 * With several batches, the outer rows of the first pass are kept here
	 * and read again for the others: a partial (parallel) outer scan cannot
	 * be restarted.
	 */
	Tuplestorestate *outer_store;
	TupleTableSlot *outer_store_slot;
	bool		outer_from_store;

	/* the current outer row and where its probes stand */
	bool		have_outer;
	uint64		outer_fp;
	Datum	   *outer_values;
	bool	   *outer_isnull;
	int			band;
	int			mask;
	uint32		pos;
	uint32		end;
	uint64		okbits;			/* candidates from okbase on that passed */
	uint32		okbase;
	/* per band: the earlier bands probed at radius 0, as lane top bits ... */
	uint64		zero_lanes[SIMHASH_NBANDS];
	bool		wide[SIMHASH_NBANDS];	/* ... and whether some had more */

	/* for EXPLAIN ANALYZE */
	uint64		ncandidates;
	Size		peak_memory;
	int			max_batches;
} SimhashJoinState;

static Node *SimhashCreateJoinState(CustomScan *cscan);
static void SimhashBeginJoin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *SimhashExecJoin(CustomScanState *node);
static void SimhashEndJoin(CustomScanState *node);
static void SimhashRescanJoin(CustomScanState *node);
static void SimhashExplainJoin(CustomScanState *node, List *ancestors,
							   ExplainState *es);

const CustomScanMethods SimhashJoinScanMethods = {
	.CustomName = SIMHASH_JOIN_NAME,
	.CreateCustomScanState = SimhashCreateJoinState,
};

static const CustomExecMethods SimhashJoinExecMethods = {
	.CustomName = SIMHASH_JOIN_NAME,
	.BeginCustomScan = SimhashBeginJoin,
	.ExecCustomScan = SimhashExecJoin,
	.EndCustomScan = SimhashEndJoin,
	.ReScanCustomScan = SimhashRescanJoin,
	.ExplainCustomScan = SimhashExplainJoin,
};


/* CreateCustomScanState */
static Node *
SimhashCreateJoinState(CustomScan *cscan)
{
	SimhashJoinState *state = palloc0(sizeof(SimhashJoinState));

	NodeSetTag(state, T_CustomScanState);
	state->css.methods = &SimhashJoinExecMethods;
	return (Node *) state;
}

/*
 * Compile a fingerprint argument, or note its scan tuple position when it
 * is a plain column (the common case, read without expression evaluation).
 */
static ExprState *
SimhashInitArg(Expr *arg, PlanState *parent, int *attno)
{
	if (IsA(arg, Var) && ((Var *) arg)->varno == INDEX_VAR)
	{
		*attno = ((Var *) arg)->varattno - 1;
		return NULL;
	}
	*attno = -1;
	return ExecInitExpr(arg, parent);
}

/*
 * Take the join clauses that compare two integer columns of the scan tuple
 * as fast filters; returns the other clauses.
 */
static List *
SimhashJoinFastFilters(SimhashJoinState *state, List *quals)
{
	List	   *rest = NIL;
	ListCell   *lc;

	state->filters = palloc(sizeof(SimhashFastFilter) * Max(list_length(quals), 1));
	state->nfilters = 0;
	foreach(lc, quals)
	{
		OpExpr	   *op = (OpExpr *) lfirst(lc);
		Var		   *l,
				   *r;
		Oid			type;
		int			strategy;
		Oid			lefttype,
					righttype;

		if (IsA(op, OpExpr) && list_length(op->args) == 2 &&
			IsA(linitial(op->args), Var) && IsA(lsecond(op->args), Var))
		{
			l = linitial(op->args);
			r = lsecond(op->args);
			type = l->vartype;
			if (l->varno == INDEX_VAR && r->varno == INDEX_VAR && r->vartype == type &&
				(type == INT2OID || type == INT4OID || type == INT8OID) &&
				op_in_opfamily(op->opno, INTEGER_BTREE_FAM_OID))
			{
				get_op_opfamily_properties(op->opno, INTEGER_BTREE_FAM_OID, false,
										   &strategy, &lefttype, &righttype);
				if (lefttype == type && righttype == type)
				{
					SimhashFastFilter *f = &state->filters[state->nfilters++];

					f->left = l->varattno - 1;
					f->right = r->varattno - 1;
					f->strategy = strategy;
					f->type = type;
					continue;
				}
			}
		}
		rest = lappend(rest, op);
	}
	return rest;
}

/* BeginCustomScan: start both sides. */
static void
SimhashBeginJoin(CustomScanState *node, EState *estate, int eflags)
{
	SimhashJoinState *state = (SimhashJoinState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	int			natts = node->ss.ss_ScanTupleSlot->tts_tupleDescriptor->natts;

	state->outer_ps = ExecInitNode(linitial(cscan->custom_plans), estate, eflags);
	/* the inner side is read once per batch, never backwards */
	state->inner_ps = ExecInitNode(lsecond(cscan->custom_plans), estate,
								   eflags & ~(EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK));
	node->custom_ps = list_make2(state->outer_ps, state->inner_ps);

	state->adjust = intVal(list_nth(cscan->custom_private, SJ_PRIV_ADJUST));
	state->nouter = intVal(list_nth(cscan->custom_private, SJ_PRIV_NOUTER));
	state->ninner = natts - state->nouter;
	Assert(state->ninner >= 0);
	state->outer_arg = SimhashInitArg(list_nth(cscan->custom_exprs, SJ_EXPR_OUTER_ARG),
									  &node->ss.ps, &state->outer_attno);
	state->inner_arg = SimhashInitArg(list_nth(cscan->custom_exprs, SJ_EXPR_INNER_ARG),
									  &node->ss.ps, &state->inner_attno);
	state->bound = ExecInitExpr(list_nth(cscan->custom_exprs, SJ_EXPR_BOUND), &node->ss.ps);
	state->clause = list_nth(cscan->custom_exprs, SJ_EXPR_CLAUSE);
	state->joinqual = list_nth(cscan->custom_exprs, SJ_EXPR_JOINQUAL);
	state->joinqual_state = ExecInitQual(SimhashJoinFastFilters(state, state->joinqual),
										 &node->ss.ps);

	state->probe_cxt = AllocSetContextCreate(CurrentMemoryContext, "SimhashJoin probes",
											 ALLOCSET_SMALL_SIZES);
	state->outer_store_slot = MakeSingleTupleTableSlot(ExecGetResultType(state->outer_ps),
													   &TTSOpsMinimalTuple);
	state->outer_values = palloc0(sizeof(Datum) * Max(state->nouter, 1));
	state->outer_isnull = palloc0(sizeof(bool) * Max(state->nouter, 1));
	/*
	 * Small blocks: large arrays get blocks of their own, freed exactly, so
	 * what the context holds is what the batch needs (see
	 * SimhashJoinBatchBytes) and hash_mem holds even when it is tiny.
	 */
	state->table_cxt = AllocSetContextCreate(CurrentMemoryContext, "SimhashJoin table",
											 ALLOCSET_SMALL_SIZES);
}

/*
 * Evaluate a fingerprint argument on the scan slot, whose outer or inner
 * part has just been filled.  Returns false for NULL.
 */
static bool
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

/* The radius k' of this scan (-1 when nothing can match), from k. */
static int
SimhashJoinRadius(SimhashJoinState *state)
{
	ExprContext *econtext = state->css.ss.ps.ps_ExprContext;
	ExprState  *bound = state->bound;
	bool		isnull;
	Datum		d;

	d = ExecEvalExprSwitchContext(bound, econtext, &isnull);
	if (isnull)
		return -1;
	return SimhashClampRadius(SimhashIntegerDatum(d, exprType((Node *) bound->expr)),
							  state->adjust);
}

/*
 * Prepare the per-band probe masks for radius k': the keys within r_j bits
 * of 0, each probe's key being the outer block XOR a mask.  A plan that
 * reads one band whole needs no masks.
 */
static void
SimhashJoinPlanProbes(SimhashJoinState *state)
{
	MemoryContext oldcxt;

	SimhashPlanProbes(state->radius, state->table.nrows, &state->probes);
	state->whole_band = -1;
	if (state->probes.fullscan)
	{
		/* every key of one band: radius 16 there, no other band */
		state->whole_band = state->probes.fullscan_band;
		for (int j = 0; j < SIMHASH_NBANDS; j++)
			state->probes.radius[j] = (j == state->whole_band) ? SIMHASH_BLOCK_BITS : -1;
	}
	MemoryContextReset(state->probe_cxt);
	oldcxt = MemoryContextSwitchTo(state->probe_cxt);
	for (int j = 0; j < SIMHASH_NBANDS; j++)
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
		for (int bits = 0; bits <= state->probes.radius[j]; bits++)
			n += (int) SimhashRingSize(bits);
		state->masks[j] = palloc(sizeof(uint16) * n);
		n = 0;
		for (int bits = 0; bits <= state->probes.radius[j]; bits++)
			n += SimhashEnumerateRing(0, bits, state->masks[j] + n);
		state->nmasks[j] = n;
	}
	MemoryContextSwitchTo(oldcxt);
	for (int j = 0; j < SIMHASH_NBANDS; j++)
	{
		state->zero_lanes[j] = 0;
		state->wide[j] = false;
		for (int i = 0; i < j; i++)
		{
			if (state->probes.radius[i] == 0)
				state->zero_lanes[j] |= UINT64CONST(0x8000) <<
					(SIMHASH_BITS - SIMHASH_BLOCK_BITS * (i + 1));
			else if (state->probes.radius[i] > 0)
				state->wide[j] = true;
		}
	}
}

/* Directory bits for a batch of n rows: about one bucket per row, at most 16. */
static int
SimhashJoinDirBits(Size n)
{
	int			bits = 0;

	while (bits < SIMHASH_BLOCK_BITS && ((Size) 1 << bits) < n)
		bits++;
	return bits;
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
	Size		bands = n * SIMHASH_NBANDS * (sizeof(uint64) + sizeof(uint32)) +
		SIMHASH_NBANDS * sizeof(uint32) * (((Size) 1 << SimhashJoinDirBits(n)) + 1);
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
 * Sort the rows of the batch by band j's block (two stable counting passes
 * of 8 bits, "scratch" holding n row numbers), and build the band's
 * directory of 2^dir_bits buckets.
 */
static void
SimhashJoinSortBand(SimhashJoinState *state, int j, uint32 *scratch)
{
	SimhashJoinTable *t = &state->table;
	uint32		count[256];
	uint32	   *order = t->band_row[j];
	uint32	   *start = t->start[j];
	int			shift = SIMHASH_BLOCK_BITS - t->dir_bits;
	Size		nbuckets = (Size) 1 << t->dir_bits;

	/* low byte of the block into scratch, then high byte into order */
	for (int pass = 0; pass < 2; pass++)
	{
		uint32	   *dst = (pass == 0) ? scratch : order;
		uint32		sum = 0;

		memset(count, 0, sizeof(count));
		for (uint32 i = 0; i < t->nrows; i++)
		{
			uint32		r = (pass == 0) ? i : scratch[i];

			count[(SimhashBlock(t->fps[r], j) >> (8 * pass)) & 0xFF]++;
		}
		for (int b = 0; b < 256; b++)
		{
			uint32		c = count[b];

			count[b] = sum;
			sum += c;
		}
		for (uint32 i = 0; i < t->nrows; i++)
		{
			uint32		r = (pass == 0) ? i : scratch[i];

			dst[count[(SimhashBlock(t->fps[r], j) >> (8 * pass)) & 0xFF]++] = r;
		}
	}

	memset(start, 0, sizeof(uint32) * (nbuckets + 1));
	for (uint32 i = 0; i < t->nrows; i++)
	{
		t->band_fp[j][i] = t->fps[order[i]];
		start[(SimhashBlock(t->band_fp[j][i], j) >> shift) + 1]++;
	}
	for (Size b = 0; b < nbuckets; b++)
		start[b + 1] += start[b];
}

/*
 * Load the next batch of inner rows: as many as fit in hash_mem, at least
 * one.  Then sort them by each band's block.
 */
static void
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

	t->dir_bits = SimhashJoinDirBits(t->nrows);
	scratch = MemoryContextAllocHuge(state->table_cxt, sizeof(uint32) * Max(t->nrows, 1));
	for (int j = 0; j < SIMHASH_NBANDS; j++)
	{
		t->start[j] = MemoryContextAllocHuge(state->table_cxt,
											 sizeof(uint32) * (((Size) 1 << t->dir_bits) + 1));
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

	while (state->band < SIMHASH_NBANDS)
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
 * reached by no band before "band" (see the file header): bit i for fps[i].
 * Branch-free over the candidates, since about half of them pass in
 * clustered data.  For earlier bands probed at radius 0 the test is "that
 * 16-bit lane of x ^ fp is zero", done for all lanes at once ("zero_lanes"
 * has the top bit of each such lane); wider radii are checked one by one.
 */
SIMHASH_POPCNT_CLONES static uint64
SimhashJoinScanChunk(const uint64 *fps, int n, uint64 x, int radius, uint64 zero_lanes,
					 int band, const int *band_radius, bool wide)
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
	if (wide && bits != 0)
	{
		for (int i = 0; i < n; i++)
		{
			uint64		diff = x ^ fps[i];

			if (!(bits & (UINT64CONST(1) << i)))
				continue;
			for (int j = 0; j < band; j++)
				if (band_radius[j] > 0 &&
					__builtin_popcount(SimhashBlock(diff, j)) <= band_radius[j])
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
static TupleTableSlot *
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
												 state->zero_lanes[b], b,
												 state->probes.radius, state->wide[b]);
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

/* ExecCustomScan: the next joined row that passes the other join clauses. */
static TupleTableSlot *
SimhashExecJoin(CustomScanState *node)
{
	SimhashJoinState *state = (SimhashJoinState *) node;
	ExprContext *econtext = node->ss.ps.ps_ExprContext;
	ExprState  *qual = state->joinqual_state;
	ProjectionInfo *proj = node->ss.ps.ps_ProjInfo;

	if (!state->started)
	{
		state->started = true;
		ResetExprContext(econtext);
		state->radius = SimhashJoinRadius(state);
		if (state->radius < 0)
			return NULL;
		if (!state->table_valid)
			SimhashJoinLoadBatch(state);
		else
			SimhashJoinPlanProbes(state);
		/* an empty inner side: the outer side need not be read at all */
		if (state->table.nrows == 0 && state->inner_done)
			return NULL;
	}
	else if (state->radius < 0)
		return NULL;

	for (;;)
	{
		TupleTableSlot *slot;

		ResetExprContext(econtext);
		slot = SimhashJoinNextPair(state);
		if (slot == NULL)
			return NULL;
		econtext->ecxt_scantuple = slot;
		if (qual == NULL || ExecQual(qual, econtext))
			return proj ? ExecProject(proj) : slot;
		InstrCountFiltered1(node, 1);
	}
}

/* EndCustomScan */
static void
SimhashEndJoin(CustomScanState *node)
{
	SimhashJoinState *state = (SimhashJoinState *) node;

	ExecEndNode(state->outer_ps);
	ExecEndNode(state->inner_ps);
	if (state->outer_store)
		tuplestore_end(state->outer_store);
	ExecDropSingleTupleTableSlot(state->outer_store_slot);
	MemoryContextDelete(state->table_cxt);
	MemoryContextDelete(state->probe_cxt);
}

/*
 * ReScanCustomScan.  The loaded inner rows are kept when they are the whole
 * inner side and nothing they depend on changed; the radius is computed
 * again at the next fetch, since k may be a parameter.
 */
static void
SimhashRescanJoin(CustomScanState *node)
{
	SimhashJoinState *state = (SimhashJoinState *) node;
	Bitmapset  *chg = node->ss.ps.chgParam;

	/* custom_ps are not lefttree/righttree: pass changed parameters on */
	if (chg != NULL)
	{
		UpdateChangedParamSet(state->outer_ps, chg);
		UpdateChangedParamSet(state->inner_ps, chg);
	}
	if (!(state->table_valid && state->inner_done && state->nbatches == 1 &&
		  state->inner_ps->chgParam == NULL))
	{
		state->table_valid = false;
		state->inner_done = false;
		MemoryContextReset(state->table_cxt);
		memset(&state->table, 0, sizeof(SimhashJoinTable));
		state->nbatches = 0;
		/* a child with changed parameters rescans itself at its next fetch */
		if (state->inner_ps->chgParam == NULL)
			ExecReScan(state->inner_ps);
	}
	if (state->outer_ps->chgParam == NULL)
		ExecReScan(state->outer_ps);
	if (state->outer_store)
		tuplestore_end(state->outer_store);
	state->outer_store = NULL;
	state->outer_from_store = false;
	state->started = false;
	state->have_outer = false;
	state->pos = state->end = 0;
	state->okbits = 0;
}

/* ExplainCustomScan: the radius clause; batches, memory and candidates. */
static void
SimhashExplainJoin(CustomScanState *node, List *ancestors, ExplainState *es)
{
	SimhashJoinState *state = (SimhashJoinState *) node;
	List	   *context;
	char	   *str;

	context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	str = deparse_expression((Node *) state->clause, context, true, false);
	ExplainPropertyText("Simhash Cond", str, es);
	if (state->joinqual != NIL)
	{
		Node	   *qual = (Node *) make_ands_explicit(state->joinqual);

		ExplainPropertyText("Join Filter", deparse_expression(qual, context, true, false), es);
		if (es->analyze && node->ss.ps.instrument && node->ss.ps.instrument->nloops > 0)
			ExplainPropertyFloat("Rows Removed by Join Filter", NULL,
								 node->ss.ps.instrument->nfiltered1 /
								 node->ss.ps.instrument->nloops, 0, es);
	}
	if (es->analyze)
	{
		ExplainPropertyInteger("Batches", NULL, state->max_batches, es);
		ExplainPropertyInteger("Memory Usage", "kB",
							   (int64) ((state->peak_memory + 1023) / 1024), es);
		if (es->verbose)
			ExplainPropertyInteger("Candidates", NULL, (int64) state->ncandidates, es);
	}
}
