/*-------------------------------------------------------------------------
 *
 * bandjoin_exec.h
 *	  SimhashJoin execution state, shared by the node (bandjoin_exec.c), the
 *	  inner batches (bandjoin_table.c) and the probes (bandjoin_probe.c).
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/executor/bandjoin_exec.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHJOINEXEC_H
#define SHJOINEXEC_H

#include "executor/tuptable.h"
#include "nodes/execnodes.h"
#include "utils/tuplestore.h"

#include "bandjoin.h"

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
	uint32	   *start[SIMHASH_BLOCKS];	/* 2^dir_bits + 1 each */
	uint64	   *band_fp[SIMHASH_BLOCKS];
	uint32	   *band_row[SIMHASH_BLOCKS];
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
	uint16	   *masks[SIMHASH_BLOCKS];	/* keys within r_j of 0, per band */
	int			nmasks[SIMHASH_BLOCKS];
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
	uint64		zero_lanes[SIMHASH_BLOCKS];
	bool		wide[SIMHASH_BLOCKS];	/* ... whether some had more ... */
	int			wide_radii[SIMHASH_BLOCKS][SIMHASH_BLOCKS];	/* ... and those */

	/* for EXPLAIN ANALYZE */
	uint64		ncandidates;
	Size		peak_memory;
	int			max_batches;
} SimhashJoinState;

/* bandjoin_table.c */
extern bool SimhashEvalArg(SimhashJoinState *state, ExprState *expr, int attno, uint64 *fp);
extern void SimhashJoinPlanProbes(SimhashJoinState *state);
extern void SimhashJoinLoadBatch(SimhashJoinState *state);

/* bandjoin_probe.c */
extern TupleTableSlot *SimhashJoinNextPair(SimhashJoinState *state);

#endif							/* SHJOINEXEC_H */
