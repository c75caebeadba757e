/*-------------------------------------------------------------------------
 *
 * bandjoin_exec.c
 *	  SimhashJoin execution: load the inner side into four band orders,
 *	  stream the outer side past it.
 *
 * The node's callbacks, its set-up and the probe plan; the inner batches
 * are built in bandjoin_table.c and probed in bandjoin_probe.c.  See src/README,
 * "The band join".
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/executor/bandjoin_exec.c
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

#include "simhash_am.h"
#include "bandjoin_exec.h"
#include "simhash_planner.h"

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
