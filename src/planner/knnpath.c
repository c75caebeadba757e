/*-------------------------------------------------------------------------
 *
 * knnpath.c
 *	  Nearest-neighbour index paths for "ORDER BY fp <-> q, other keys".
 *
 * Core builds no index path for "ORDER BY fp <-> q, id": PostgreSQL 15
 * matches an ORDER BY to an index only when every sort key matches (17 and
 * later match its leading part: SimhashRemovePartialOrderPaths takes those
 * paths back).  The planner hook (planner.c) asks core's index path
 * generator once more with the query's pathkeys cut to the distance, and
 * puts a nearest sort on top, which sorts each group of equal distance (its
 * path and plan are made here, its executor node is nearestsort.c); an
 * index that includes the tie-break column can order each group itself.
 * See src/README, "Nearest neighbours with a tie-break".
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/planner/knnpath.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/stratnum.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/pathnodes.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/tlist.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"

#include "simhash_am.h"
#include "simhash_planner.h"

/* simhash.enable_nearest_sort */
static bool simhash_enable_nearest_sort = true;

static Plan *SimhashPlanNearestSort(PlannerInfo *root, RelOptInfo *rel,
									CustomPath *best_path, List *tlist,
									List *clauses, List *custom_plans);

static const CustomPathMethods SimhashNearestSortPathMethods = {
	.CustomName = SIMHASH_NEAREST_SORT_NAME,
	.PlanCustomPath = SimhashPlanNearestSort,
};

/*
 * Can "index" return rows in the order of "pathkey"?  That is what core's
 * match_pathkeys_to_index accepts for one key: ascending, NULLS LAST, and
 * an equivalence member "col <-> q" or "q <-> col" on the index column whose
 * other operand has no variables and nothing volatile, with the sort
 * semantics of the ordering operator.
 */
static bool
SimhashPathkeyMatchesIndex(PathKey *pathkey, IndexOptInfo *index, Oid dist_opno)
{
	SimhashEMIterator it;
	EquivalenceMember *em;

	if (!SimhashPathKeyIsAsc(pathkey) || pathkey->pk_nulls_first ||
		pathkey->pk_eclass->ec_has_volatile)
		return false;
	if (get_op_opfamily_sortfamily(dist_opno, index->opfamily[0]) != pathkey->pk_opfamily)
		return false;
	SimhashEMIteratorStart(&it, pathkey->pk_eclass, index->rel->relids);
	while ((em = SimhashEMIteratorNext(&it)) != NULL)
	{
		OpExpr	   *op = (OpExpr *) em->em_expr;
		Node	   *left,
				   *right;

		if (!IsA(op, OpExpr) || op->opno != dist_opno || list_length(op->args) != 2)
			continue;
		left = linitial(op->args);
		right = lsecond(op->args);
		if (match_index_to_operand(left, 0, index) &&
			!contain_var_clause(right) && !contain_volatile_functions(right))
			return true;
		if (match_index_to_operand(right, 0, index) &&
			!contain_var_clause(left) && !contain_volatile_functions(left))
			return true;
	}
	return false;
}

/*
 * The first of root->query_pathkeys, when one of the simhash indexes of
 * "rel" can return rows in its order but not in that of all of them (core
 * has built the index path for a complete match already); else NIL.
 */
List *
SimhashKnnPrefixPathkeys(PlannerInfo *root, RelOptInfo *rel, List *simhash_indexes)
{
	int			nkeys = list_length(root->query_pathkeys);
	int			best = 0;
	ListCell   *lc;

	/* the common case, a query without ORDER BY, costs one comparison */
	if (nkeys < 2)
		return NIL;
	foreach(lc, simhash_indexes)
	{
		IndexOptInfo *index = lfirst_node(IndexOptInfo, lc);
		Oid			dist_opno = SimhashGetCatalog()->distance_op;
		int			n = 0;
		ListCell   *lc2;

		/* the indexes are the extension's, with its operators (planner.c) */
		if (!index->amcanorderbyop || !OidIsValid(dist_opno))
			continue;
		foreach(lc2, root->query_pathkeys)
		{
			if (!SimhashPathkeyMatchesIndex(lfirst_node(PathKey, lc2), index, dist_opno))
				break;
			n++;
		}
		best = Max(best, n);
	}
	if (best == 0 || best == nkeys)
		return NIL;

	/*
	 * The scan orders by the first distance only (a second one is ordered
	 * by the executor, see shgettuple), so ask for that alone: the nearest
	 * sort or an Incremental Sort then orders each group by all the rest.
	 */
	return list_make1(linitial(root->query_pathkeys));
}

/*
 * Run core's index path generator for "indexes" of "rel" only, as if the
 * query wanted "pathkeys"; the relation and the query are left as they were.
 */
static void
SimhashCreatePathsFor(PlannerInfo *root, RelOptInfo *rel, List *indexes, List *pathkeys)
{
	List	   *saved_indexlist = rel->indexlist;
	List	   *saved_pathkeys = root->query_pathkeys;

	rel->indexlist = indexes;
	root->query_pathkeys = pathkeys;
	create_index_paths(root, rel);
	rel->indexlist = saved_indexlist;
	root->query_pathkeys = saved_pathkeys;
}

/*
 * Remove the nearest-neighbour paths that core built for a leading part of
 * a longer ORDER BY, and build in their place the paths core builds for an
 * ORDER BY that no index matches.  PostgreSQL 15 and 16 match an ORDER BY
 * to an index only as a whole; since 17 core orders a simhash scan by the
 * leading distances it can match (an Incremental Sort then sorts the rest),
 * which is what SimhashCreateIndexPaths does for the first distance, with
 * the derived radius conditions, under a nearest sort.  The plans stay those
 * of every version alike; on 15 and 16 there is nothing to remove.
 * Called with the query's pathkeys when SimhashKnnPrefixPathkeys found a
 * prefix, before anything else of the hook.
 */
void
SimhashRemovePartialOrderPaths(PlannerInfo *root, RelOptInfo *rel, List *simhash_indexes)
{
	int			nkeys = list_length(root->query_pathkeys);
	List	   *indexes = NIL;
	ListCell   *lc;

	foreach(lc, rel->pathlist)
	{
		IndexPath  *ipath = (IndexPath *) lfirst(lc);

		if (IsA(ipath, IndexPath) && ipath->indexorderbys != NIL &&
			list_length(ipath->path.pathkeys) < nkeys &&
			list_member_ptr(simhash_indexes, ipath->indexinfo))
		{
			indexes = list_append_unique_ptr(indexes, ipath->indexinfo);
			rel->pathlist = foreach_delete_current(rel->pathlist, lc);
		}
	}
	if (indexes == NIL)
		return;

	/*
	 * The unordered scans that a path with an ORDER BY took the place of
	 * (build_index_paths makes one path per index and parameterization)
	 */
	SimhashCreatePathsFor(root, rel, indexes, NIL);
}

/*
 * Run core's index path generator for the simhash indexes of "rel" only,
 * and, when prefix_pathkeys is not NIL, as if the query wanted that order:
 * nearest-neighbour paths then carry the prefix as their pathkeys.
 */
void
SimhashCreateIndexPaths(PlannerInfo *root, RelOptInfo *rel, List *simhash_indexes,
						List *prefix_pathkeys)
{
	ListCell   *lc;

	if (prefix_pathkeys == NIL)
	{
		SimhashCreatePathsFor(root, rel, simhash_indexes, root->query_pathkeys);
		return;
	}

	/*
	 * One index at a time, each scan wrapped in its nearest sort before the
	 * next index's: two indexes on the same column give scans of the same
	 * cost, of which add_path would keep one, whereas their nearest sorts
	 * differ (an index with an included column can order the ties).
	 */
	foreach(lc, simhash_indexes)
	{
		SimhashCreatePathsFor(root, rel, list_make1(lfirst(lc)), prefix_pathkeys);
		SimhashAddNearestSortPaths(root, rel, prefix_pathkeys);
	}
}

/*
 * The column a sort key expression is, looking through the RelabelType
 * that a column of a domain type is sorted through; NULL if it is no
 * column.
 */
static Var *
SimhashSortKeyColumnVar(Node *expr)
{
	while (expr && IsA(expr, RelabelType))
		expr = (Node *) ((RelabelType *) expr)->arg;
	return (expr && IsA(expr, Var)) ? (Var *) expr : NULL;
}

/*
 * Can the index scan under a nearest sort return each distance in the order
 * of the one sort key after it, so that the node need not read a group to
 * sort it?  Only when that key is the index's included column, in its
 * type's default btree order (the index compares the values it stores with
 * that order).  Returns the SIMHASH_SK_PAYLOAD_* flags for the scan, or 0;
 * the path's cost and the plan both go by this answer.
 */
int
SimhashNearestSortPayloadFlags(RelOptInfo *rel, Path *child, List *pathkeys)
{
	IndexOptInfo *info;
	PathKey    *pk;
	SimhashEMIterator it;
	EquivalenceMember *em;

	if (list_length(pathkeys) != 2 || !IsA(child, IndexPath))
		return 0;
	info = ((IndexPath *) child)->indexinfo;
	if (info->ncolumns != 2 || info->nkeycolumns != 1)
		return 0;
	pk = lsecond_node(PathKey, pathkeys);
	if (!SimhashPathKeyIsAsc(pk) && !SimhashPathKeyIsDesc(pk))
		return 0;
	SimhashEMIteratorStart(&it, pk->pk_eclass, rel->relids);
	while ((em = SimhashEMIteratorNext(&it)) != NULL)
	{
		Var		   *var = SimhashSortKeyColumnVar((Node *) em->em_expr);

		if (var == NULL || var->varno != rel->relid || var->varlevelsup != 0 ||
			var->varattno != info->indexkeys[1])
			continue;
		if (pk->pk_opfamily !=
			lookup_type_cache(var->vartype, TYPECACHE_BTREE_OPFAMILY)->btree_opf)
			return 0;
		return SIMHASH_SK_PAYLOAD_ORDER |
			(SimhashPathKeyIsDesc(pk) ? SIMHASH_SK_PAYLOAD_DESC : 0) |
			(pk->pk_nulls_first ? SIMHASH_SK_PAYLOAD_NULLS_FIRST : 0);
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * The nearest sort's path and plan (its executor half: nearestsort.c)
 * ------------------------------------------------------------------------
 */

/*
 * A nearest sort over "child", a nearest-neighbour index scan ordered by
 * the first of root->query_pathkeys; it returns every query pathkey.
 */
static Path *
SimhashMakeNearestSortPath(PlannerInfo *root, RelOptInfo *rel, Path *child)
{
	CustomPath *cpath = makeNode(CustomPath);
	Path		sorted;

	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = rel;
	cpath->path.pathtarget = rel->reltarget;
	cpath->path.param_info = NULL;
	cpath->path.parallel_aware = false;
	cpath->path.parallel_safe = child->parallel_safe;
	cpath->path.parallel_workers = 0;
	cpath->path.rows = child->rows;
	cpath->path.pathkeys = root->query_pathkeys;
	cpath->flags = CUSTOMPATH_SUPPORT_PROJECTION;
	cpath->custom_paths = list_make1(child);
	cpath->methods = &SimhashNearestSortPathMethods;

	/*
	 * The node does what an Incremental Sort over the same scan does, with
	 * less searching; costed as core costs that, it competes with the other
	 * plans on the same terms.
	 */
	SimhashCostIncrementalSort(&sorted, root, root->query_pathkeys, 1, child, -1.0);
	cpath->path.startup_cost = sorted.startup_cost;
	cpath->path.total_cost = sorted.total_cost;
	/* the child's disabled nodes, and the sort if enable_incremental_sort is off */
	SimhashSetDisabledNodes(&cpath->path, SimhashPathDisabledNodes(&sorted));

	/* an index that orders ties leaves the node nothing to sort */
	if (SimhashNearestSortPayloadFlags(rel, child, root->query_pathkeys) != 0)
	{
		cpath->path.startup_cost = child->startup_cost;
		cpath->path.total_cost = child->total_cost;
		SimhashSetDisabledNodes(&cpath->path, SimhashPathDisabledNodes(child));
	}
	return &cpath->path;
}

/*
 * Wrap the nearest-neighbour scans that SimhashCreateIndexPaths has just
 * added, ordered by "prefix" (the distance alone), in nearest sorts that
 * return the whole of root->query_pathkeys.  Each scan so wrapped leaves
 * the path list: an Incremental Sort over it would do the same work, and
 * search farther where the row after a group is far away.
 */
void
SimhashAddNearestSortPaths(PlannerInfo *root, RelOptInfo *rel, List *prefix)
{
	List	   *scans = NIL;
	ListCell   *lc;

	if (!simhash_enable_nearest_sort || list_length(prefix) != 1)
		return;
	/* every other key must be computable from this relation's columns */
	for_each_from(lc, root->query_pathkeys, 1)
	{
		PathKey    *pk = lfirst_node(PathKey, lc);

		if (!relation_can_be_sorted_early(root, rel, pk->pk_eclass, false))
			return;
	}
	foreach(lc, rel->pathlist)
	{
		IndexPath  *ipath = (IndexPath *) lfirst(lc);

		if (IsA(ipath, IndexPath) && ipath->path.pathtype == T_IndexScan &&
			ipath->path.param_info == NULL &&
			list_length(ipath->indexorderbys) == 1 &&
			SimhashIsIndexAm(ipath->indexinfo->relam) &&
			compare_pathkeys(ipath->path.pathkeys, prefix) == PATHKEYS_EQUAL)
			scans = lappend(scans, ipath);
	}
	foreach(lc, scans)
	{
		Path	   *scan = lfirst(lc);

		rel->pathlist = list_delete_ptr(rel->pathlist, scan);
		add_path(rel, SimhashMakeNearestSortPath(root, rel, scan));
	}
}

/*
 * How many rows the query can want from this scan, or 0 if that is not
 * known: a constant LIMIT (plus OFFSET) bounds them when the relation is
 * the query's only one, since then nothing above the node groups,
 * aggregates or multiplies rows (root->limit_tuples is -1 if anything
 * does).  Only a hint for the executor, which uses it to tell the index
 * when a group of equal distance is likely the last one read.
 */
static int
SimhashNearestSortBound(PlannerInfo *root, RelOptInfo *rel)
{
	Relids		relids = rel->reloptkind == RELOPT_OTHER_MEMBER_REL ?
		rel->top_parent_relids : rel->relids;

	if (root->limit_tuples < 1.0 || !bms_equal(relids, root->all_baserels))
		return 0;
	return (int) Min(root->limit_tuples, (double) PG_INT32_MAX);
}

/*
 * PlanCustomPath.  The sort keys are computed by the index scan, as junk
 * columns of its targetlist where they are not columns already, and the
 * scan's targetlist is this node's scan tuple.  custom_exprs holds the key
 * expressions, which setrefs.c turns into references to that tuple.  The
 * relation's restriction clauses are the index scan's to check.
 */
static Plan *
SimhashPlanNearestSort(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
					   List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	Plan	   *child = linitial(custom_plans);
	List	   *child_tlist = child->targetlist;
	List	   *exprs = NIL;
	List	   *sortops = NIL;
	List	   *collations = NIL;
	List	   *nulls_first = NIL;
	List	   *descending = NIL;
	ListCell   *lc;

	foreach(lc, best_path->path.pathkeys)
	{
		PathKey    *pk = lfirst_node(PathKey, lc);
		EquivalenceMember *em;
		Oid			sortop;

		em = find_computable_ec_member(root, pk->pk_eclass,
									   get_tlist_exprs(child_tlist, false),
									   rel->relids, false);
		if (em == NULL)
			elog(ERROR, "could not find a sort key expression for the nearest sort");
		sortop = SimhashPathKeySortOp(pk, em->em_datatype);
		if (!OidIsValid(sortop))
			elog(ERROR, "missing sort operator for type %u in opfamily %u",
				 em->em_datatype, pk->pk_opfamily);
		if (tlist_member(em->em_expr, child_tlist) == NULL)
			child_tlist = lappend(child_tlist,
								  makeTargetEntry(copyObject(em->em_expr),
												  list_length(child_tlist) + 1,
												  NULL, true));
		exprs = lappend(exprs, copyObject(em->em_expr));
		sortops = lappend_oid(sortops, sortop);
		collations = lappend_oid(collations, pk->pk_eclass->ec_collation);
		nulls_first = lappend_int(nulls_first, pk->pk_nulls_first);
		descending = lappend_int(descending, SimhashPathKeyIsDesc(pk));
	}
	/* an index scan projects, so its targetlist may grow */
	child->targetlist = child_tlist;

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = NIL;
	cscan->scan.scanrelid = 0;
	cscan->flags = best_path->flags;
	cscan->custom_plans = custom_plans;
	cscan->custom_exprs = exprs;
	cscan->custom_private = list_make4(sortops, collations, nulls_first, descending);
	cscan->custom_private = lappend(cscan->custom_private,
									makeInteger(SimhashNearestSortBound(root, rel)));
	cscan->custom_private =
		lappend(cscan->custom_private,
				makeInteger(SimhashNearestSortPayloadFlags(rel, linitial(best_path->custom_paths),
														   best_path->path.pathkeys)));
	cscan->custom_scan_tlist = copyObject(child_tlist);
	cscan->methods = GetCustomScanMethods(SIMHASH_NEAREST_SORT_NAME, false);
	return &cscan->scan.plan;
}

/* Define simhash.enable_nearest_sort (from _PG_init). */
void
SimhashInstallNearestSortPaths(void)
{
	DefineCustomBoolVariable("simhash.enable_nearest_sort",
							 "Enables the planner's use of simhash nearest sorts.",
							 "A nearest sort orders the rows of a nearest-neighbour "
							 "index scan by the sort keys after the distance.",
							 &simhash_enable_nearest_sort, true, PGC_USERSET, 0,
							 NULL, NULL, NULL);
}
