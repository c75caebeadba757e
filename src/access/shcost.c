/*-------------------------------------------------------------------------
 *
 * shcost.c
 *	  amcostestimate for the simhash index.
 *
 * The cost of the probe plan; disable_cost for the scan without quals.  See
 * src/README, "Cost estimation".
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/access/shcost.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"
#include "utils/spccache.h"

#include "shindex.h"

/*
 * Operator evaluations charged per page of a descent, as btcostestimate
 * charges (50 per page, root to leaf, plus a comparison per level of the
 * binary search): pinning, locking and searching a page costs that much
 * even when it is cached, which is what a nested loop's repeated scans
 * pay (bench/planner, "Band join or nested loop").
 */
#define SIMHASH_DESCENT_LEVEL_OPS	50

/*
 * The smallest radius among the index quals of the path (strategy "=" is
 * radius 0); SIMHASH_BITS when there are none.
 */
static int
SimhashPathRadius(IndexPath *path, bool *has_quals)
{
	IndexOptInfo *index = path->indexinfo;
	int			radius = SIMHASH_BITS;
	ListCell   *lc;

	*has_quals = false;
	foreach(lc, path->indexclauses)
	{
		IndexClause *iclause = lfirst_node(IndexClause, lc);
		ListCell   *lc2;

		foreach(lc2, iclause->indexquals)
		{
			RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc2);
			OpExpr	   *op = (OpExpr *) rinfo->clause;
			int			strategy;
			int			r;

			if (!IsA(op, OpExpr) || list_length(op->args) != 2)
				continue;
			*has_quals = true;
			strategy = get_op_opfamily_strategy(op->opno, index->opfamily[0]);
			if (strategy == SIMHASH_EQUAL_STRATEGY)
				r = 0;
			else
			{
				uint64		center;
				bool		known;

				r = SimhashBallExprRadius(lsecond(op->args), &center, &known);
			}
			radius = Min(radius, Max(r, -1));
		}
	}
	return radius;
}

/* Entries examined and probes made by a search within "radius". */
static void
SimhashSearchWork(int radius, double tuples, double *entries, double *probes,
				  bool *fullscan)
{
	SimhashProbePlan plan;

	SimhashPlanProbes(radius, tuples, &plan);
	*fullscan = plan.fullscan;
	*entries = 0;
	*probes = 0;
	if (radius < 0)
		return;
	if (plan.fullscan)
	{
		*entries = tuples;
		*probes = 1;
		return;
	}
	for (int j = 0; j < SIMHASH_BLOCKS; j++)
		*probes += SimhashPlanKeys(&plan, j);
	*entries = *probes * tuples / (double) SIMHASH_BLOCK_KEYS;
}

/*
 * amcostestimate
 */
void
shcostestimate(PlannerInfo *root, IndexPath *path, double loop_count,
			   Cost *indexStartupCost, Cost *indexTotalCost,
			   Selectivity *indexSelectivity, double *indexCorrelation,
			   double *indexPages)
{
	IndexOptInfo *index = path->indexinfo;
	double		tuples = Max(index->tuples, 1);
	double		leafpages = Max(index->pages, 1);
	double		per_page = Max(tuples * SIMHASH_NTREES / leafpages, 1);
	double		height = Max(index->tree_height, 1);
	double		spc_random_page_cost,
				spc_seq_page_cost;
	bool		has_quals;
	int			radius = SimhashPathRadius(path, &has_quals);
	double		entries,
				probes,
				pages,
				matches;
	bool		fullscan;
	List	   *quals = NIL;
	ListCell   *lc;
	Cost		io,
				cpu;

	get_tablespace_page_costs(index->reltablespace, &spc_random_page_cost,
							  &spc_seq_page_cost);

	/*
	 * Estimate the bare clauses: clauses derived by the planner hook carry a
	 * cached selectivity of 1 (their original clause holds the estimate).
	 */
	foreach(lc, get_quals_from_indexclauses(path->indexclauses))
		quals = lappend(quals, lfirst_node(RestrictInfo, lc)->clause);
	*indexSelectivity = clauselist_selectivity(root, quals, index->rel->relid,
											   JOIN_INNER, NULL);
	matches = *indexSelectivity * index->rel->tuples;

	SimhashSearchWork(radius, tuples, &entries, &probes, &fullscan);

	/* each probe descends the tree and reads at least one leaf */
	pages = fullscan ? entries / per_page + height : probes + entries / per_page;
	pages = Min(pages, leafpages);
	if (loop_count > 1)
		pages = index_pages_fetched(pages * loop_count, (BlockNumber) leafpages,
									leafpages, root) / loop_count;
	io = pages * (fullscan ? spc_seq_page_cost : spc_random_page_cost);
	cpu = entries * cpu_operator_cost +
		probes * ((height + 1) * SIMHASH_DESCENT_LEVEL_OPS +
				  ceil(log2(Max(tuples, 2)))) * cpu_operator_cost +
		matches * cpu_index_tuple_cost;

	*indexStartupCost = 0;
	*indexTotalCost = io + cpu;
	*indexPages = pages;
	*indexCorrelation = 0;

	/*
	 * A scan with neither a qual nor an ORDER BY reads the whole index to
	 * return every row, something a sequential scan does better; the
	 * planner only builds it as an index-only scan for count(*)-like
	 * queries, which this index does not want to serve (see shgettuple).
	 */
	if (!has_quals && path->indexorderbys == NIL)
		*indexTotalCost += disable_cost;

	/*
	 * A nearest-neighbour scan: the first rows come once the smallest rings
	 * are settled; returning everything means reading a whole band.
	 */
	if (path->indexorderbys != NIL)
	{
		double		first_entries,
					first_probes;
		bool		first_full;

		SimhashSearchWork(SIMHASH_BLOCKS - 1, tuples, &first_entries, &first_probes,
						  &first_full);
		*indexStartupCost = first_probes * (spc_random_page_cost +
											height * SIMHASH_DESCENT_LEVEL_OPS * cpu_operator_cost) +
			first_entries * cpu_operator_cost;
		if (!has_quals)
			*indexTotalCost = *indexStartupCost +
				tuples / per_page * spc_seq_page_cost +
				tuples * (cpu_operator_cost + cpu_index_tuple_cost);
		*indexTotalCost = Max(*indexTotalCost, *indexStartupCost);
	}
}
