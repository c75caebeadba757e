/*-------------------------------------------------------------------------
 *
 * bandjoin.c
 *	  SimhashJoin: an in-memory band join for "a.fp <-> b.fp <= k".
 *
 * The planning half: set_join_pathlist_hook offers the path for an inner
 * join on "dist(x, y) <= k" (any spelling clause.c recognizes), costs it,
 * and turns it into a CustomScan; execution is in bandjoin_exec.c.  See
 * src/README, "The band join".
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/executor/bandjoin.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_language.h"
#include "catalog/pg_opfamily_d.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"
#include "utils/syscache.h"

#include "simhash_am.h"
#include "bandjoin.h"
#include "simhash_executor.h"
#include "simhash_planner.h"

/* the C functions behind hamming() and simhash_within() (distance.c) */

/* positions in the path's custom_private */
enum
{
	SJ_PATH_RINFO,				/* the radius clause ... */
	SJ_PATH_OUTER_ARG,			/* ... and its parts (SimhashJoinClause) */
	SJ_PATH_INNER_ARG,
	SJ_PATH_BOUND,
	SJ_PATH_ADJUST,
	SJ_PATH_OTHERS				/* the other join clauses (RestrictInfos) */
};

static bool simhash_enable_join = true;
static set_join_pathlist_hook_type prev_set_join_pathlist_hook = NULL;

/* A radius clause between the two sides of a join */
typedef struct SimhashJoinClause
{
	RestrictInfo *rinfo;
	Node	   *outer_arg;		/* fingerprint computed from the outer side */
	Node	   *inner_arg;		/* ... and from the inner side */
	Node	   *bound;			/* k, of an integer type */
	int			adjust;			/* 0 for <= and >=, -1 for < and > */
} SimhashJoinClause;

static Plan *SimhashPlanJoinPath(PlannerInfo *root, RelOptInfo *rel,
								 CustomPath *best_path, List *tlist,
								 List *clauses, List *custom_plans);

static const CustomPathMethods SimhashJoinPathMethods = {
	.CustomName = SIMHASH_JOIN_NAME,
	.PlanCustomPath = SimhashPlanJoinPath,
};


/*
 * Split the two fingerprint arguments between the sides: true if one is
 * computed from the outer relation alone and the other from the inner.
 */
static bool
SimhashSplitArgs(PlannerInfo *root, Node *a, Node *b, Relids outer, Relids inner,
				 SimhashJoinClause *out)
{
	Relids		va = pull_varnos(root, a);
	Relids		vb = pull_varnos(root, b);

	if (contain_volatile_functions(a) || contain_volatile_functions(b) ||
		bms_is_empty(va) || bms_is_empty(vb))
		return false;
	if (bms_is_subset(va, outer) && bms_is_subset(vb, inner))
	{
		out->outer_arg = a;
		out->inner_arg = b;
		return true;
	}
	if (bms_is_subset(vb, outer) && bms_is_subset(va, inner))
	{
		out->outer_arg = b;
		out->inner_arg = a;
		return true;
	}
	return false;
}

/*
 * Recognize a radius clause (clause.c) between the outer and inner
 * relations, whose bound is known before the join starts.
 */
static bool
SimhashMatchJoinClause(PlannerInfo *root, RestrictInfo *rinfo, Relids outer,
					   Relids inner, SimhashJoinClause *out)
{
	SimhashRadiusClause rc;

	if (rinfo->pseudoconstant || !SimhashMatchRadiusClause(rinfo->clause, &rc) ||
		!bms_is_empty(pull_varnos(root, rc.bound)))
		return false;
	out->rinfo = rinfo;
	out->bound = rc.bound;
	out->adjust = rc.adjust;
	return SimhashSplitArgs(root, rc.a, rc.b, outer, inner, out);
}

/*
 * The two "col <@ simhash_ball(q, k')" clauses that planner.c derives from
 * the radius clause jc (for an index on either side).
 */
static List *
SimhashDerivedClauses(PlannerInfo *root, const SimhashJoinClause *jc)
{
	Expr	   *radius = SimhashRadiusExpr(jc->bound, jc->adjust);

	return list_make2(SimhashMakeWithinClause(root, jc->outer_arg, jc->inner_arg, radius),
					  SimhashMakeWithinClause(root, jc->inner_arg, jc->outer_arg, radius));
}

/*
 * Probability that an outer and an inner row are within "radius": counted
 * in a simhash index on either side where there is one, as the planner
 * hook counts it for the clause (planner.c; the counts are shared within
 * the statement), else from statistics.  Statistics alone would make the
 * cost follow ANALYZE's sample of the table.
 */
static Selectivity
SimhashEstimateJoinPairs(PlannerInfo *root, const SimhashJoinClause *jc, int radius)
{
	Node	   *sides[2] = {jc->inner_arg, jc->outer_arg};

	for (int i = 0; i < 2; i++)
	{
		VariableStatData vardata;
		IndexOptInfo *index;

		examine_variable(root, sides[i], 0, &vardata);
		index = SimhashFindIndex(root, &vardata);
		ReleaseVariableStats(vardata);
		if (index != NULL)
			return SimhashEstimateRadius(root, index, sides[i], sides[1 - i], radius);
	}
	return SimhashEstimateRadius(root, NULL, jc->outer_arg, jc->inner_arg, radius);
}

/*
 * The cost model's per-row work, in cpu_operator_cost units, measured
 * against the nested loop over the index in bench/planner (RESULTS.md,
 * "Band join or nested loop"):
 *
 * BUILD: storing one inner row and sorting it into four bands (two
 * counting passes each), the directories and the reordering.
 *
 * PROBE: one probed key of one outer row: the directory lookup and the
 * start of the candidate run, the same while a batch's tables fit in the
 * CPU caches (SIMHASH_JOIN_CACHE_ROWS rows of (id, fingerprint) take about
 * 6 MB, less than the default hash_mem); PROBE_MISS more per doubling of
 * the batch past that, as the directories and rows outgrow the caches.
 * Measured (bench/planner/RESULTS.md, "Listing all near-duplicate pairs"),
 * per probe of one batch: 0.13-0.26 us into batches of 62,500 rows (1M
 * inner rows in 16 batches), 0.27 us into 1,000 rows (reading the outer
 * row included), 1.6 us into one batch of 1M rows.  PROBE is what the
 * earlier slope, which started at 1,024 rows, gave at 1,000 rows, so the
 * small batches of bench/planner/join.sh keep their costs; that slope
 * charged a probe into 62,500 rows 3.4 times one into 1,000 and made the
 * band join over 1M rows in batches dearer than the nested loop it beats
 * 3.5 times.  PROBE_MISS is the earlier slope, not refitted.
 */
#define SIMHASH_JOIN_BUILD_OPS		12.0
#define SIMHASH_JOIN_PROBE_OPS		5.0
#define SIMHASH_JOIN_PROBE_MISS_OPS	2.4
#define SIMHASH_JOIN_CACHE_ROWS		65536.0

/*
 * Cost of the band join, costed like a hash join (initial_cost_hashjoin):
 * startup reads the whole inner side (the relation the tables are built
 * from) and builds its batches; then each outer row is read once, stored
 * and read again for every later batch, and probes each batch's tables;
 * per candidate (an inner row sharing a probed key) a distance test; per
 * pair within k the other join clauses and the output row.
 */
static void
SimhashCostJoinPath(PlannerInfo *root, CustomPath *cpath, Path *outer_path,
					Path *inner_path, const SimhashJoinClause *jc, List *others)
{
	double		nouter = outer_path->rows;
	double		ninner = inner_path->rows;
	int			radius = SIMHASH_ESTIMATE_RADIUS;
	SimhashProbePlan plan;
	double		batch_rows;
	double		nprobes = 0;
	double		ncandidates = 0;
	double		probe_ops;
	double		npairs;
	double		width;
	double		nbatches;
	double		outer_pages;
	QualCost	qcost;
	Selectivity sel;
	Cost		startup;
	Cost		run;
	Node	   *bound = estimate_expression_value(root, jc->bound);

	if (IsA(bound, Const) && !((Const *) bound)->constisnull)
		radius = SimhashClampRadius(SimhashIntegerDatum(((Const *) bound)->constvalue,
														exprType(bound)),
									jc->adjust);

	width = inner_path->pathtarget->width + MAXALIGN(SizeofHeapTupleHeader) +
		SIMHASH_JOIN_ROW_BYTES;
	nbatches = ceil(ninner * width / (double) get_hash_memory_limit());
	nbatches = Max(nbatches, 1);
	batch_rows = Max(ninner / nbatches, 1);

	/* a disabled node under the join counts as it does under core's joins */
	SimhashSetDisabledNodes(&cpath->path, SimhashPathDisabledNodes(outer_path) +
							SimhashPathDisabledNodes(inner_path));
	/* the probes of one outer row into one batch */
	SimhashPlanProbes(radius, batch_rows, &plan);
	for (int j = 0; j < SIMHASH_BLOCKS; j++)
	{
		double		keys = SimhashPlanKeys(&plan, j);

		nprobes += keys;
		ncandidates += keys * batch_rows / SIMHASH_BLOCK_KEYS;
	}
	if (plan.fullscan)
	{
		/* band 0's whole order, read once */
		nprobes = 1;
		ncandidates = batch_rows;
	}
	probe_ops = SIMHASH_JOIN_PROBE_OPS + SIMHASH_JOIN_PROBE_MISS_OPS *
		log2(1 + batch_rows / SIMHASH_JOIN_CACHE_ROWS);

	sel = SimhashEstimateJoinPairs(root, jc, Max(radius, 0));
	npairs = clamp_row_est(nouter * ninner * sel);
	cost_qual_eval(&qcost, others, root);

	/* read the inner side, store and sort each row */
	startup = inner_path->total_cost +
		ninner * (cpu_tuple_cost + SIMHASH_JOIN_BUILD_OPS * cpu_operator_cost);

	/* read the outer side; with batches, write it once and read it again */
	run = outer_path->total_cost - outer_path->startup_cost;
	startup += outer_path->startup_cost;
	if (nbatches > 1)
	{
		outer_pages = ceil(nouter * (MAXALIGN(outer_path->pathtarget->width) +
									 MAXALIGN(SizeofMinimalTupleHeader)) / BLCKSZ);
		run += (nbatches - 1) * nouter * cpu_tuple_cost;
		if (outer_pages * BLCKSZ > work_mem * 1024.0)
			run += outer_pages * seq_page_cost * nbatches;
	}

	/* per outer row and batch: its probes and candidates */
	run += nouter * cpu_operator_cost +
		nouter * nbatches * (nprobes * probe_ops + ncandidates) * cpu_operator_cost;

	/* per pair: the other clauses, the joined row, its projection */
	run += npairs * (cpu_tuple_cost + qcost.per_tuple) +
		cpath->path.rows * cpath->path.pathtarget->cost.per_tuple;

	cpath->path.startup_cost = startup;
	cpath->path.total_cost = startup + run;
}

/* A SimhashJoin path (partial if the outer path is). */
static Path *
SimhashMakeJoinPath(PlannerInfo *root, RelOptInfo *joinrel, Path *outer_path,
					Path *inner_path, const SimhashJoinClause *jc, List *others)
{
	CustomPath *cpath = makeNode(CustomPath);
	bool		partial = outer_path->parallel_aware || outer_path->parallel_workers > 0;

	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = joinrel;
	cpath->path.pathtarget = joinrel->reltarget;
	cpath->path.param_info = NULL;
	cpath->path.parallel_aware = false;
	cpath->path.parallel_safe = joinrel->consider_parallel &&
		outer_path->parallel_safe && inner_path->parallel_safe;
	cpath->path.parallel_workers = partial ? outer_path->parallel_workers : 0;
	/* a partial path yields its share of the rows, as its outer path does */
	cpath->path.rows = partial ?
		clamp_row_est(joinrel->rows * outer_path->rows / Max(outer_path->parent->rows, 1)) :
		joinrel->rows;
	cpath->path.pathkeys = NIL;
	cpath->flags = 0;
	cpath->custom_paths = list_make2(outer_path, inner_path);
	cpath->custom_private = list_make5(jc->rinfo, jc->outer_arg, jc->inner_arg, jc->bound,
									   makeInteger(jc->adjust));
	cpath->custom_private = lappend(cpath->custom_private, others);
	cpath->methods = &SimhashJoinPathMethods;
	SimhashCostJoinPath(root, cpath, outer_path, inner_path, jc,
						extract_actual_clauses(others, false));
	return &cpath->path;
}

/*
 * set_join_pathlist_hook: offer a SimhashJoin for an inner join with a
 * radius clause between its sides.
 */
static void
SimhashSetJoinPathlist(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
					   RelOptInfo *innerrel, JoinType jointype,
					   JoinPathExtraData *extra)
{
	Path	   *outer_path = outerrel->cheapest_total_path;
	Path	   *inner_path = innerrel->cheapest_total_path;
	SimhashJoinClause jc;
	const SimhashCatalog *cat = SimhashGetCatalog();
	List	   *others = NIL;
	List	   *derived;
	bool		found = false;
	ListCell   *lc;

	if (prev_set_join_pathlist_hook)
		prev_set_join_pathlist_hook(root, joinrel, outerrel, innerrel, jointype, extra);

	if (!simhash_enable_join || jointype != JOIN_INNER)
		return;
	/* no EvalPlanQual rechecks: this node cannot re-check one row pair */
	if (root->parse->commandType == CMD_UPDATE || root->parse->commandType == CMD_DELETE ||
		root->parse->commandType == CMD_MERGE || root->rowMarks != NIL)
		return;
	if (root->placeholder_list != NIL || !bms_is_empty(joinrel->lateral_relids))
		return;
	if (outer_path == NULL || inner_path == NULL ||
		outer_path->param_info != NULL || inner_path->param_info != NULL)
		return;

	foreach(lc, extra->restrictlist)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);

		if (!found && SimhashMatchJoinClause(root, rinfo, outerrel->relids,
											 innerrel->relids, &jc))
			found = true;
	}
	if (!found || !SimhashIsOpfamilyComplete(cat->opfamily) ||
		exprType(jc.outer_arg) != cat->fingerprint_type ||
		exprType(jc.inner_arg) != cat->fingerprint_type)
		return;

	/* every other clause, except what planner.c derived from this one */
	derived = SimhashDerivedClauses(root, &jc);
	foreach(lc, extra->restrictlist)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);

		if (rinfo != jc.rinfo && !list_member(derived, rinfo->clause))
			others = lappend(others, rinfo);
	}

	add_path(joinrel, SimhashMakeJoinPath(root, joinrel, outer_path, inner_path, &jc, others));

	/*
	 * Under a Gather: each process streams its share of a partial outer path
	 * past its own copy of the inner side (nothing is shared, so the node
	 * itself is not parallel-aware).
	 */
	if (joinrel->consider_parallel && outerrel->partial_pathlist != NIL &&
		inner_path->parallel_safe)
	{
		Path	   *partial = linitial(outerrel->partial_pathlist);

		if (partial->param_info == NULL)
			add_partial_path(joinrel, SimhashMakeJoinPath(root, joinrel, partial, inner_path,
														  &jc, others));
	}
}

/*
 * PlanCustomPath: the scan tuple is the outer plan's targetlist followed by
 * the inner plan's; setrefs.c rewrites the targetlist, the quals and
 * custom_exprs to refer to it.
 */
static Plan *
SimhashPlanJoinPath(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
					List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	List	   *priv = best_path->custom_private;
	RestrictInfo *rinfo = list_nth(priv, SJ_PATH_RINFO);
	Node	   *outer_arg = list_nth(priv, SJ_PATH_OUTER_ARG);
	Node	   *inner_arg = list_nth(priv, SJ_PATH_INNER_ARG);
	Node	   *bound = list_nth(priv, SJ_PATH_BOUND);
	int			adjust = intVal(list_nth(priv, SJ_PATH_ADJUST));
	List	   *others = list_nth(priv, SJ_PATH_OTHERS);
	Plan	   *outer_plan = linitial(custom_plans);
	Plan	   *inner_plan = lsecond(custom_plans);
	List	   *scan_tlist = NIL;
	AttrNumber	resno = 1;
	ListCell   *lc;

	foreach(lc, outer_plan->targetlist)
		scan_tlist = lappend(scan_tlist,
							 makeTargetEntry(copyObject(lfirst_node(TargetEntry, lc)->expr),
											 resno++, NULL, false));
	foreach(lc, inner_plan->targetlist)
		scan_tlist = lappend(scan_tlist,
							 makeTargetEntry(copyObject(lfirst_node(TargetEntry, lc)->expr),
											 resno++, NULL, false));

	/*
	 * The other join clauses go to custom_exprs rather than the plan's qual,
	 * so that EXPLAIN shows them qualified, as the Join Filter they are.
	 */
	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = NIL;
	cscan->scan.scanrelid = 0;
	cscan->flags = best_path->flags;
	cscan->custom_plans = custom_plans;
	cscan->custom_exprs = list_make5(copyObject(outer_arg), copyObject(inner_arg),
									 copyObject(bound), copyObject(rinfo->clause),
									 extract_actual_clauses(others, false));
	cscan->custom_private = list_make2(makeInteger(adjust),
									   makeInteger(list_length(outer_plan->targetlist)));
	cscan->custom_scan_tlist = scan_tlist;
	cscan->methods = &SimhashJoinScanMethods;
	return &cscan->scan.plan;
}

/* Install the join hook, its GUC and the plan node's methods (_PG_init). */
void
SimhashInstallJoinHook(void)
{
	DefineCustomBoolVariable("simhash.enable_join",
							 "Enables the planner's use of simhash band joins.",
							 "A band join loads one side of a join on \"a <-> b <= k\" "
							 "into memory and streams the other past it.",
							 &simhash_enable_join, true, PGC_USERSET, 0,
							 NULL, NULL, NULL);
	RegisterCustomScanMethods(&SimhashJoinScanMethods);
	prev_set_join_pathlist_hook = set_join_pathlist_hook;
	set_join_pathlist_hook = SimhashSetJoinPathlist;
}
