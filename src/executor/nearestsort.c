/*-------------------------------------------------------------------------
 *
 * nearestsort.c
 *	  SimhashNearestSort: "ORDER BY fp <-> q, other keys" over a
 *	  nearest-neighbour index scan, one group of equal distance at a time.
 *
 * The index returns rows by distance; this node sorts the rows of each
 * distance by the other keys, and asks the index when a distance is done
 * instead of reading the next row as an Incremental Sort must.  This is
 * the executor half: the planner makes the node's path and plan
 * (planner/knnpath.c, plan layout in simhash_planner.h) and finds its
 * methods by name; the node talks to the index through simhash_knn.h.
 * See src/README, "Nearest neighbours with a tie-break".
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/executor/nearestsort.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relscan.h"
#include "access/stratnum.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "executor/nodeIndexscan.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/ruleutils.h"
#include "utils/sortsupport.h"
#include "utils/tuplesort.h"

#include "simhash_am.h"
#include "simhash_executor.h"
#include "simhash_planner.h"

typedef enum SimhashNearestSortPhase
{
	SNS_READ_GROUP,				/* the next group is to be read */
	SNS_RETURN_SORTED,			/* returning the sorted group */
	SNS_RETURN_SINGLE,			/* returning a group of one row */
	SNS_PASS_THROUGH			/* the index orders ties: rows go through */
} SimhashNearestSortPhase;

typedef struct SimhashNearestSortState
{
	CustomScanState css;
	PlanState  *child;			/* the nearest-neighbour index scan */
	IndexScanState *knn;		/* it, if a simhash index scan the node can ask */
	int			nkeys;			/* sort keys after the distance */
	AttrNumber	dist_attno;		/* the distance in the scan tuple */
	AttrNumber *attnos;			/* the other keys in the scan tuple */
	Oid		   *sortops;
	Oid		   *collations;
	bool	   *nulls_first;
	Tuplesortstate *sort;		/* made for the first group of two rows */
	TupleTableSlot *first;		/* first row of the group being read */
	TupleTableSlot *ahead;		/* first row of the next group, if read */
	TupleTableSlot *sorted;		/* a row out of the sort */
	SimhashNearestSortPhase phase;
	bool		passthrough;	/* the index returns ties in key order */
	SortSupportData keyssup;	/* that order, to check it */
	bool		prevkey_null;	/* the previous row's key (with have_last) */
	Datum		prevkey;
	int64		bound;			/* rows the query wants (a hint), 0 unknown */
	int64		nreturned;		/* rows returned since the (re)start */
	bool		have_ahead;
	bool		ahead_null;		/* its distance */
	int32		ahead_dist;
	bool		child_done;
	bool		have_last;		/* distance of the last group, to check order */
	bool		last_null;
	int32		last_dist;
	/* for EXPLAIN ANALYZE */
	int64		ngroups;
	int64		nsorted;		/* groups of more than one row */
	int64		largest;
} SimhashNearestSortState;

static Node *SimhashCreateNearestSortState(CustomScan *cscan);
static void SimhashBeginNearestSort(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *SimhashExecNearestSort(CustomScanState *node);
static void SimhashEndNearestSort(CustomScanState *node);
static void SimhashRescanNearestSort(CustomScanState *node);
static void SimhashExplainNearestSort(CustomScanState *node, List *ancestors,
									  ExplainState *es);

static const CustomScanMethods SimhashNearestSortScanMethods = {
	.CustomName = SIMHASH_NEAREST_SORT_NAME,
	.CreateCustomScanState = SimhashCreateNearestSortState,
};

static const CustomExecMethods SimhashNearestSortExecMethods = {
	.CustomName = SIMHASH_NEAREST_SORT_NAME,
	.BeginCustomScan = SimhashBeginNearestSort,
	.ExecCustomScan = SimhashExecNearestSort,
	.EndCustomScan = SimhashEndNearestSort,
	.ReScanCustomScan = SimhashRescanNearestSort,
	.ExplainCustomScan = SimhashExplainNearestSort,
};

/* CreateCustomScanState */
static Node *
SimhashCreateNearestSortState(CustomScan *cscan)
{
	SimhashNearestSortState *state = palloc0(sizeof(SimhashNearestSortState));

	NodeSetTag(state, T_CustomScanState);
	state->css.methods = &SimhashNearestSortExecMethods;
	return (Node *) state;
}

/* The scan tuple column that setrefs.c made of a sort key expression. */
static AttrNumber
SimhashSortKeyColumn(Node *expr)
{
	Var		   *var = (Var *) expr;

	if (!IsA(var, Var) || var->varno != INDEX_VAR)
		elog(ERROR, "unexpected sort key in a nearest sort");
	return var->varattno;
}

/*
 * The simhash index scan under the node, looking through the gating Result
 * that a pseudo-constant qual puts there; NULL if there is none to ask.
 * Found once, at set-up: its scan descriptor is made only at its first row.
 */
static IndexScanState *
SimhashNearestSortFindScan(PlanState *ps)
{
	IndexScanState *iss;

	while (IsA(ps, ResultState) && outerPlanState(ps) != NULL)
		ps = outerPlanState(ps);
	if (!IsA(ps, IndexScanState))
		return NULL;
	iss = (IndexScanState *) ps;
	if (iss->iss_RelationDesc == NULL ||
		!SimhashIsIndexAm(iss->iss_RelationDesc->rd_rel->relam))
		return NULL;
	return iss;
}

/* BeginCustomScan */
static void
SimhashBeginNearestSort(CustomScanState *node, EState *estate, int eflags)
{
	SimhashNearestSortState *state = (SimhashNearestSortState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	TupleDesc	desc = node->ss.ss_ScanTupleSlot->tts_tupleDescriptor;
	List	   *priv = cscan->custom_private;
	ListCell   *lc_expr,
			   *lc_op,
			   *lc_coll,
			   *lc_nulls;
	int			i = 0;

	/* this node neither goes backward nor marks, so neither does the scan */
	state->child = ExecInitNode(linitial(cscan->custom_plans), estate,
								eflags & ~(EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK));
	node->custom_ps = list_make1(state->child);
	state->knn = SimhashNearestSortFindScan(state->child);

	/* the distance, then at least one key to sort a group by */
	state->nkeys = list_length(cscan->custom_exprs) - 1;
	Assert(state->nkeys >= 1);
	state->attnos = palloc(sizeof(AttrNumber) * state->nkeys);
	state->sortops = palloc(sizeof(Oid) * state->nkeys);
	state->collations = palloc(sizeof(Oid) * state->nkeys);
	state->nulls_first = palloc(sizeof(bool) * state->nkeys);
	forfour(lc_expr, cscan->custom_exprs, lc_op, list_nth(priv, SNS_SORTOPS),
			lc_coll, list_nth(priv, SNS_COLLATIONS), lc_nulls, list_nth(priv, SNS_NULLS_FIRST))
	{
		AttrNumber	attno = SimhashSortKeyColumn(lfirst(lc_expr));

		if (i == 0)
			state->dist_attno = attno;
		else
		{
			state->attnos[i - 1] = attno;
			state->sortops[i - 1] = lfirst_oid(lc_op);
			state->collations[i - 1] = lfirst_oid(lc_coll);
			state->nulls_first[i - 1] = (bool) lfirst_int(lc_nulls);
		}
		i++;
	}
	if (TupleDescAttr(desc, state->dist_attno - 1)->atttypid != INT4OID)
		elog(ERROR, "the distance of a nearest sort is not an integer");

	state->bound = intVal(list_nth(priv, SNS_BOUND));

	/*
	 * Have the index order each distance by the included column when the
	 * plan found it can, and tell it how many rows the query wants.  The
	 * flags go on the scan's ORDER BY key, which the scan reads at every
	 * rescan (shrescan); the scan descriptor itself does not exist yet.
	 * Without a scan to ask (EXPLAIN without ANALYZE), the node reads
	 * groups as usual.
	 */
	if (intVal(list_nth(priv, SNS_PAYLOAD_FLAGS)) != 0 && state->knn != NULL &&
		state->knn->iss_NumOrderByKeys >= 1)
	{
		int			flags = intVal(list_nth(priv, SNS_PAYLOAD_FLAGS));

		if (state->bound > 0 && state->bound <= SIMHASH_SK_WANTED_MAX)
			flags |= (int) state->bound << SIMHASH_SK_WANTED_SHIFT;
		state->knn->iss_OrderByKeys[0].sk_flags |= flags;
		state->passthrough = true;
		memset(&state->keyssup, 0, sizeof(SortSupportData));
		state->keyssup.ssup_cxt = CurrentMemoryContext;
		state->keyssup.ssup_collation = state->collations[0];
		state->keyssup.ssup_nulls_first = state->nulls_first[0];
		state->keyssup.abbreviate = false;
		PrepareSortSupportFromOrderingOp(state->sortops[0], &state->keyssup);
	}
	state->first = ExecInitExtraTupleSlot(estate, desc, &TTSOpsMinimalTuple);
	state->ahead = ExecInitExtraTupleSlot(estate, desc, &TTSOpsMinimalTuple);
	state->sorted = ExecInitExtraTupleSlot(estate, desc, &TTSOpsMinimalTuple);
	state->phase = state->passthrough ? SNS_PASS_THROUGH : SNS_READ_GROUP;
}

/*
 * The descriptor of the scan under the node, or NULL before the scan has
 * begun, in an EvalPlanQual recheck, or when there is no scan to ask.
 */
static inline IndexScanDesc
SimhashNearestSortScan(SimhashNearestSortState *state)
{
	IndexScanDesc scan = state->knn ? state->knn->iss_ScanDesc : NULL;

	if (scan == NULL || scan->numberOfOrderBys < 1 || scan->xs_orderbyvals == NULL)
		return NULL;
	return scan;
}

/*
 * The next row of the index scan and its distance, or NULL at the end.
 * The distance is the index's own, the one its order follows (the query
 * value is read once when the scan starts), as long as the scan can be
 * asked; otherwise the one computed for the row.
 */
static TupleTableSlot *
SimhashNearestSortFetch(SimhashNearestSortState *state, int32 *dist, bool *isnull)
{
	TupleTableSlot *slot;
	IndexScanDesc scan;

	if (state->child_done)
		return NULL;
	slot = ExecProcNode(state->child);
	if (TupIsNull(slot))
	{
		state->child_done = true;
		return NULL;
	}
	scan = SimhashNearestSortScan(state);
	if (scan != NULL)
	{
		*isnull = scan->xs_orderbynulls[0];
		*dist = *isnull ? 0 : DatumGetInt32(scan->xs_orderbyvals[0]);
	}
	else
		*dist = DatumGetInt32(slot_getattr(slot, state->dist_attno, isnull));
	return slot;
}

/*
 * Has the index scan returned every row within "dist"?  Only a simhash
 * nearest-neighbour scan can tell; anything else makes the node read on.
 * When the group read so far ("n" rows) reaches the rows the query wants,
 * it is likely the last group: the index then settles the distance
 * without bucketing what lies beyond it.
 */
static bool
SimhashNearestSortGroupDone(SimhashNearestSortState *state, int32 dist, int64 n)
{
	IndexScanDesc scan = SimhashNearestSortScan(state);
	bool		last = state->bound > 0 && state->nreturned + n >= state->bound;

	return scan != NULL && SimhashKnnReturnedWithin(scan, dist, last);
}

/* Add a row to the group's sort, making the sort at first use. */
static void
SimhashNearestSortPut(SimhashNearestSortState *state, TupleTableSlot *slot)
{
	if (state->sort == NULL)
		state->sort = tuplesort_begin_heap(state->first->tts_tupleDescriptor,
										   state->nkeys, state->attnos,
										   state->sortops, state->collations,
										   state->nulls_first, work_mem, NULL,
										   TUPLESORT_NONE);
	tuplesort_puttupleslot(state->sort, slot);
}

/*
 * Read the next group of rows at equal distance: into the sort when it has
 * more than one row.  False when the scan has no more rows.
 */
static bool
SimhashNearestSortReadGroup(SimhashNearestSortState *state)
{
	TupleTableSlot *slot;
	bool		isnull;
	int32		dist;
	int64		n = 1;

	if (state->have_ahead)
	{
		TupleTableSlot *tmp = state->first;

		state->first = state->ahead;
		state->ahead = tmp;
		state->have_ahead = false;
		dist = state->ahead_dist;
		isnull = state->ahead_null;
	}
	else
	{
		slot = SimhashNearestSortFetch(state, &dist, &isnull);
		if (slot == NULL)
			return false;
		ExecCopySlot(state->first, slot);
	}

	/*
	 * Groups come by increasing distance, NULL last: the index's promise.
	 * Only a distance computed per row can break it, when a function in
	 * the ORDER BY returns other values during the query than its
	 * volatility allows (an index scan reads the query value once).
	 */
	if (state->have_last &&
		(state->last_null || (!isnull && dist <= state->last_dist)))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("nearest-neighbor scan returned rows out of distance order"),
				 state->last_null ?
				 errdetail("A row at distance %d came after rows with a NULL distance.", dist) :
				 errdetail("A row at distance %d came after rows at distance %d.",
						   dist, state->last_dist),
				 errhint("Use only STABLE or IMMUTABLE functions in the ORDER BY distance.")));
	state->have_last = true;
	state->last_null = isnull;
	state->last_dist = dist;

	for (;;)
	{
		bool		nextnull;
		int32		nextdist;

		/* rows with a NULL distance form one group, to the end of the scan */
		if (!isnull && SimhashNearestSortGroupDone(state, dist, n))
			break;
		CHECK_FOR_INTERRUPTS();
		slot = SimhashNearestSortFetch(state, &nextdist, &nextnull);
		if (slot == NULL)
			break;
		if (nextnull != isnull || (!isnull && nextdist != dist))
		{
			ExecCopySlot(state->ahead, slot);
			state->have_ahead = true;
			state->ahead_dist = nextdist;
			state->ahead_null = nextnull;
			break;
		}
		if (n == 1)
			SimhashNearestSortPut(state, state->first);
		SimhashNearestSortPut(state, slot);
		n++;
	}

	state->ngroups++;
	state->largest = Max(state->largest, n);
	if (n == 1)
		state->phase = SNS_RETURN_SINGLE;
	else
	{
		state->nsorted++;
		tuplesort_performsort(state->sort);
		state->phase = SNS_RETURN_SORTED;
	}
	return true;
}

/*
 * Return a row: the scan tuple slot, which the projection was built for,
 * is a virtual one; it points at the columns of "row" (kept unchanged until
 * the next call), then goes through the node's targetlist.
 */
static TupleTableSlot *
SimhashNearestSortReturn(CustomScanState *node, TupleTableSlot *row)
{
	TupleTableSlot *scanslot = node->ss.ss_ScanTupleSlot;
	ProjectionInfo *proj = node->ss.ps.ps_ProjInfo;
	int			natts = scanslot->tts_tupleDescriptor->natts;

	slot_getallattrs(row);
	ExecClearTuple(scanslot);
	memcpy(scanslot->tts_values, row->tts_values, sizeof(Datum) * natts);
	memcpy(scanslot->tts_isnull, row->tts_isnull, sizeof(bool) * natts);
	ExecStoreVirtualTuple(scanslot);
	if (proj == NULL)
		return scanslot;
	proj->pi_exprContext->ecxt_scantuple = scanslot;
	return ExecProject(proj);
}

/*
 * The next row when the index returns ties in key order: each row goes
 * through, after a check of that order (a wrong answer must not pass
 * silently).  Rows with a NULL distance come last and are not ordered by
 * the index: the first of them starts a group that is read and sorted as
 * usual.  Returns NULL when the node must go on reading groups.
 */
static TupleTableSlot *
SimhashNearestSortPassThrough(CustomScanState *node, bool *done)
{
	SimhashNearestSortState *state = (SimhashNearestSortState *) node;
	TupleTableSlot *slot;
	int32		dist;
	bool		isnull;
	Datum		key;
	bool		keynull;

	*done = false;
	slot = SimhashNearestSortFetch(state, &dist, &isnull);
	if (slot == NULL)
	{
		*done = true;
		return NULL;
	}

	if (isnull)
	{
		/* the NULL group: read and sorted by the group code, this row first */
		ExecCopySlot(state->ahead, slot);
		state->have_ahead = true;
		state->ahead_dist = 0;
		state->ahead_null = true;
		state->phase = SNS_READ_GROUP;
		return NULL;
	}

	key = slot_getattr(slot, state->attnos[0], &keynull);
	if (state->have_last &&
		(dist < state->last_dist ||
		 (dist == state->last_dist &&
		  ApplySortComparator(key, keynull, state->prevkey, state->prevkey_null,
							  &state->keyssup) < 0)))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("simhash index \"%s\" returned rows out of the order of its included column",
						RelationGetRelationName(state->knn->iss_RelationDesc)),
				 errdetail("The included values stored in the index differ from the rows' values."),
				 errhint("Please REINDEX it.")));
	state->have_last = true;
	state->last_null = false;
	state->last_dist = dist;
	state->prevkey = key;		/* by value (SimhashCheckIncludedColumns) */
	state->prevkey_null = keynull;
	state->nreturned++;
	return SimhashNearestSortReturn(node, slot);
}

/* ExecCustomScan: the next row in the order of every sort key. */
static TupleTableSlot *
SimhashExecNearestSort(CustomScanState *node)
{
	SimhashNearestSortState *state = (SimhashNearestSortState *) node;

	/* the previous row's projection is done with */
	ResetExprContext(node->ss.ps.ps_ExprContext);
	for (;;)
	{
		switch (state->phase)
		{
			case SNS_RETURN_SORTED:
				if (tuplesort_gettupleslot(state->sort, true, false, state->sorted, NULL))
				{
					state->nreturned++;
					return SimhashNearestSortReturn(node, state->sorted);
				}
				tuplesort_reset(state->sort);
				state->phase = SNS_READ_GROUP;
				break;
			case SNS_RETURN_SINGLE:
				state->phase = SNS_READ_GROUP;
				state->nreturned++;
				return SimhashNearestSortReturn(node, state->first);
			case SNS_READ_GROUP:
				if (!SimhashNearestSortReadGroup(state))
					return ExecClearTuple(node->ss.ps.ps_ResultTupleSlot);
				break;
			case SNS_PASS_THROUGH:
				{
					bool		done;
					TupleTableSlot *slot = SimhashNearestSortPassThrough(node, &done);

					if (done)
						return ExecClearTuple(node->ss.ps.ps_ResultTupleSlot);
					if (slot != NULL)
						return slot;
				}
				break;
		}
	}
}

/* EndCustomScan */
static void
SimhashEndNearestSort(CustomScanState *node)
{
	SimhashNearestSortState *state = (SimhashNearestSortState *) node;

	if (state->sort != NULL)
		tuplesort_end(state->sort);
	state->sort = NULL;
	ExecEndNode(state->child);
}

/* ReScanCustomScan: start over; the scan follows changed parameters. */
static void
SimhashRescanNearestSort(CustomScanState *node)
{
	SimhashNearestSortState *state = (SimhashNearestSortState *) node;

	if (state->sort != NULL)
		tuplesort_reset(state->sort);
	state->phase = state->passthrough ? SNS_PASS_THROUGH : SNS_READ_GROUP;
	state->nreturned = 0;
	state->have_ahead = false;
	state->child_done = false;
	state->have_last = false;
	ExecClearTuple(state->first);
	ExecClearTuple(state->ahead);
	ExecClearTuple(state->sorted);

	/* the executor passes changed parameters down to lefttree only */
	if (node->ss.ps.chgParam != NULL)
		UpdateChangedParamSet(state->child, node->ss.ps.chgParam);
	if (state->child->chgParam == NULL)
		ExecReScan(state->child);
}

/* ExplainCustomScan: the sort keys, as an Incremental Sort shows them. */
static void
SimhashExplainNearestSort(CustomScanState *node, List *ancestors, ExplainState *es)
{
	SimhashNearestSortState *state = (SimhashNearestSortState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *priv = cscan->custom_private;
	List	   *context;
	List	   *keys = NIL;
	bool		useprefix = es->verbose || list_length(es->rtable) > 1;
	ListCell   *lc_expr,
			   *lc_coll,
			   *lc_nulls,
			   *lc_desc;

	context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	forfour(lc_expr, cscan->custom_exprs, lc_coll, list_nth(priv, SNS_COLLATIONS),
			lc_nulls, list_nth(priv, SNS_NULLS_FIRST), lc_desc, list_nth(priv, SNS_DESCENDING))
	{
		StringInfoData buf;
		Node	   *expr = lfirst(lc_expr);
		Oid			collation = lfirst_oid(lc_coll);
		bool		desc = lfirst_int(lc_desc);
		bool		nulls_first = lfirst_int(lc_nulls);

		initStringInfo(&buf);
		appendStringInfoString(&buf, deparse_expression(expr, context, useprefix, true));
		if (OidIsValid(collation) && collation != get_typcollation(exprType(expr)))
			appendStringInfo(&buf, " COLLATE %s",
							 quote_identifier(get_collation_name(collation)));
		if (desc)
			appendStringInfoString(&buf, " DESC");
		if (nulls_first && !desc)
			appendStringInfoString(&buf, " NULLS FIRST");
		else if (!nulls_first && desc)
			appendStringInfoString(&buf, " NULLS LAST");
		keys = lappend(keys, buf.data);
	}
	ExplainPropertyList("Sort Key", keys, es);
	/* the index orders ties by the included column: every key is presorted */
	ExplainPropertyList("Presorted Key",
						intVal(list_nth(priv, SNS_PAYLOAD_FLAGS)) != 0 ? keys :
						list_make1(linitial(keys)), es);
	/* groups are read only without the index's order (or for NULL distances) */
	if (es->analyze && (!state->passthrough || state->ngroups > 0))
	{
		ExplainPropertyInteger("Groups", NULL, state->ngroups, es);
		ExplainPropertyInteger("Groups Sorted", NULL, state->nsorted, es);
		ExplainPropertyInteger("Largest Group", "rows", state->largest, es);
	}
}

/*
 * Register the node (from _PG_init), by name: the planner (knnpath.c)
 * finds its methods with GetCustomScanMethods.
 */
void
SimhashInstallNearestSort(void)
{
	RegisterCustomScanMethods(&SimhashNearestSortScanMethods);
}
