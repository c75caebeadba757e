/*-------------------------------------------------------------------------
 *
 * planner.c
 *	  Make "WHERE fp <-> q <= k" use the simhash index.
 *
 * The set_rel_pathlist_hook that derives "col <@ simhash_ball(q, k')" from
 * radius clauses, and the support functions of hamming() and
 * simhash_within().  See src/README, "The planner rewrite".
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/planner/planner.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_opfamily_d.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/supportnodes.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "parser/parse_func.h"
#include "utils/catcache.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"
#include "utils/guc.h"
#include "utils/syscache.h"

#include "simhash_am.h"
#include "simhash_planner.h"

PG_FUNCTION_INFO_V1(simhash_distance_support);
PG_FUNCTION_INFO_V1(simhash_within_support);

static set_rel_pathlist_hook_type prev_set_rel_pathlist_hook = NULL;

/* simhash.enable_rewrite: derive index conditions from distance clauses */
static bool simhash_enable_rewrite = true;

/*
 * Recognize a radius clause on the index column (clause.c), and return the
 * column operand and the query operand.  The query and the bound must not
 * involve the relation.  simhash_within() is left to its support function.
 */
static bool
SimhashMatchIndexClause(PlannerInfo *root, RelOptInfo *rel, RestrictInfo *rinfo,
						IndexOptInfo *index, SimhashRadiusClause *rc,
						Node **indexexpr, Node **query)
{
	if (rinfo->pseudoconstant || !SimhashMatchRadiusClause(rinfo->clause, rc) ||
		rc->within_call)
		return false;
	if (match_index_to_operand(rc->a, 0, index))
	{
		*indexexpr = rc->a;
		*query = rc->b;
	}
	else if (match_index_to_operand(rc->b, 0, index))
	{
		*indexexpr = rc->b;
		*query = rc->a;
	}
	else
		return false;
	return !bms_is_member(rel->relid, pull_varnos(root, *query)) &&
		!bms_is_member(rel->relid, pull_varnos(root, rc->bound));
}

/*
 * The radius k' as an int4 expression: the bound (any integer type) clamped
 * to [-1, 65], plus the adjustment (0 or -1).
 */
Expr *
SimhashRadiusExpr(Node *bound, int adjust)
{
	Oid			type = exprType(bound);
	Expr	   *k8;

	if (IsA(bound, Const))
	{
		Const	   *c = (Const *) bound;

		if (c->constisnull)
			return (Expr *) makeNullConst(INT4OID, -1, InvalidOid);
		return (Expr *) makeConst(INT4OID, -1, InvalidOid, sizeof(int32),
								  Int32GetDatum(SimhashClampRadius(SimhashIntegerDatum(c->constvalue, type),
																   adjust)),
								  false, true);
	}

	/*
	 * int4(int8larger(int8smaller(int8(k), 65), -1) + adjust): clamped
	 * before the adjustment, so that no bound can overflow.  Strict functions
	 * rather than LEAST/GREATEST, which ignore NULLs: a NULL k must give a
	 * NULL radius (no rows), because the index condition replaces the
	 * original clause.
	 */
	if (type == INT8OID)
		k8 = (Expr *) bound;
	else
		k8 = (Expr *) makeFuncExpr(type == INT2OID ? F_INT8_INT2 : F_INT8_INT4, INT8OID,
								   list_make1(bound), InvalidOid, InvalidOid,
								   COERCE_EXPLICIT_CAST);
	k8 = (Expr *) makeFuncExpr(F_INT8SMALLER, INT8OID,
							   list_make2(k8, makeConst(INT8OID, -1, InvalidOid, sizeof(int64),
														Int64GetDatum(SIMHASH_BITS + 1), false,
														FLOAT8PASSBYVAL)),
							   InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
	k8 = (Expr *) makeFuncExpr(F_INT8LARGER, INT8OID,
							   list_make2(k8, makeConst(INT8OID, -1, InvalidOid, sizeof(int64),
														Int64GetDatum(-1), false,
														FLOAT8PASSBYVAL)),
							   InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
	if (adjust != 0)
		k8 = (Expr *) makeFuncExpr(F_INT8PL, INT8OID,
								   list_make2(k8, makeConst(INT8OID, -1, InvalidOid, sizeof(int64),
															Int64GetDatum(adjust), false,
															FLOAT8PASSBYVAL)),
								   InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
	return (Expr *) makeFuncExpr(F_INT4_INT8, INT4OID, list_make1(k8), InvalidOid,
								 InvalidOid, COERCE_EXPLICIT_CAST);
}

/* Build "col <@ simhash_ball(query, radius)". */
Expr *
SimhashMakeWithinClause(PlannerInfo *root, Node *indexexpr, Node *query, Expr *radius)
{
	const SimhashCatalog *cat = SimhashGetCatalog();
	Expr	   *ball;

	ball = (Expr *) makeFuncExpr(cat->ball_func, cat->ball_type,
								 list_make2(copyObject(query), radius),
								 InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
	ball = (Expr *) eval_const_expressions(root, (Node *) ball);
	return make_opclause(cat->within_op, BOOLOID, false,
						 (Expr *) copyObject(indexexpr), ball,
						 InvalidOid, InvalidOid);
}

/*
 * Selectivity of "dist(indexexpr, query) <= radius": from the column's
 * statistics, against a known centre, another column, or (for a parameter)
 * a centre assumed to come from the same distribution as the column.
 */
Selectivity
SimhashEstimateRadius(PlannerInfo *root, IndexOptInfo *index, Node *indexexpr,
					  Node *query, int radius)
{
	VariableStatData va;
	SimhashColumnStats sa;
	Selectivity sel = -1;

	if (index != NULL && !SimhashMayCount(root, index))
		index = NULL;
	examine_variable(root, indexexpr, 0, &va);
	SimhashGetColumnStats(&va, &sa);
	if (IsA(query, Const))
	{
		uint64		center;

		if (((Const *) query)->constisnull)
			sel = 0;
		else
		{
			center = DatumGetSimhash64(((Const *) query)->constvalue);
			sel = SimhashEstimateWithin(index, &sa, &center, NULL, false, radius);
		}
	}
	else
	{
		/* centres from another column, or like the column's own rows */
		sel = SimhashEstimateFromCentres(root, index, &va, &sa, query, radius);
	}
	ReleaseVariableStats(va);
	return sel;
}

/*
 * Derive "col <@ simhash_ball(q, k)" clauses for one simhash index from the
 * clauses of "list" (baserestrictinfo or joininfo); returns the new ones.
 */
static List *
SimhashDeriveClauses(PlannerInfo *root, RelOptInfo *rel, IndexOptInfo *index,
					 List *list, List *existing, List **originals)
{
	List	   *derived = NIL;
	ListCell   *lc;

	foreach(lc, list)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		SimhashRadiusClause rc;
		Node	   *indexexpr;
		Node	   *query;
		Expr	   *radius;
		Expr	   *clause;
		RestrictInfo *newrinfo;
		ListCell   *lc2;
		bool		dup = false;
		int			estradius;

		if (!SimhashMatchIndexClause(root, rel, rinfo, index, &rc, &indexexpr, &query))
			continue;
		radius = SimhashRadiusExpr(rc.bound, rc.adjust);
		clause = SimhashMakeWithinClause(root, indexexpr, query, radius);

		/* once per clause, even with several simhash indexes or calls */
		foreach(lc2, existing)
			if (equal(((RestrictInfo *) lfirst(lc2))->clause, clause))
				dup = true;
		foreach(lc2, derived)
			if (equal(((RestrictInfo *) lfirst(lc2))->clause, clause))
				dup = true;
		if (dup)
			continue;

		newrinfo = SimhashMakeDerivedRestrictInfo(root, clause, rinfo);

		/*
		 * Rows are counted once: the original clause carries the estimate,
		 * the derived one (equivalent to it) multiplies by 1.
		 */
		estradius = IsA(radius, Const) && !((Const *) radius)->constisnull ?
			DatumGetInt32(((Const *) radius)->constvalue) : SIMHASH_ESTIMATE_RADIUS;
		rinfo->norm_selec = rinfo->outer_selec =
			SimhashEstimateRadius(root, index, indexexpr, query, estradius);
		newrinfo->norm_selec = newrinfo->outer_selec = 1.0;
		derived = lappend(derived, newrinfo);
		*originals = lappend(*originals, rinfo);
	}
	return derived;
}

/*
 * Size the relation's parameterized scans again.  There a join clause is
 * estimated as a restriction, which ignores the estimate cached in the
 * original clause: count its derived clause instead (and only once, when
 * both are in the list).
 */
static void
SimhashResizeParameterized(PlannerInfo *root, RelOptInfo *rel,
						   List *originals, List *derivations)
{
	ListCell   *lc;

	foreach(lc, rel->ppilist)
	{
		ParamPathInfo *ppi = (ParamPathInfo *) lfirst(lc);
		List	   *clauses = NIL;
		ListCell   *lc2;

		foreach(lc2, ppi->ppi_clauses)
		{
			void	   *clause = lfirst(lc2);
			ListCell   *o,
					   *d;

			forboth(o, originals, d, derivations)
			{
				if (lfirst(o) == clause)
				{
					clause = list_member_ptr(ppi->ppi_clauses, lfirst(d)) ? NULL : lfirst(d);
					break;
				}
			}
			if (clause != NULL)
				clauses = lappend(clauses, clause);
		}
		ppi->ppi_rows = get_parameterized_baserel_size(root, rel, clauses);
	}
	foreach(lc, rel->pathlist)
	{
		Path	   *path = (Path *) lfirst(lc);

		if (path->param_info != NULL)
			path->rows = path->param_info->ppi_rows;
	}
}

/*
 * Attribute the index clauses of "path" (and of the index paths under a
 * bitmap path) that use a derived clause to the original clause they came
 * from.  An IndexClause's rinfo is the clause it enforces and its indexquals
 * what the index evaluates; the derivation is exact (lossy stays false), so
 * createplan.c then leaves the original out of the scan's filter.
 */
static void
SimhashAttributeIndexClauses(Path *path, List *originals, List *derivations)
{
	ListCell   *lc;

	check_stack_depth();
	switch (nodeTag(path))
	{
		case T_IndexPath:
			foreach(lc, ((IndexPath *) path)->indexclauses)
			{
				IndexClause *iclause = lfirst_node(IndexClause, lc);
				ListCell   *o,
						   *d;

				forboth(o, originals, d, derivations)
				{
					if (iclause->rinfo == lfirst(d) && !iclause->lossy)
					{
						iclause->rinfo = lfirst(o);
						break;
					}
				}
			}
			break;
		case T_BitmapHeapPath:
			SimhashAttributeIndexClauses(((BitmapHeapPath *) path)->bitmapqual,
										 originals, derivations);
			break;
		case T_BitmapAndPath:
			foreach(lc, ((BitmapAndPath *) path)->bitmapquals)
				SimhashAttributeIndexClauses(lfirst(lc), originals, derivations);
			break;
		case T_BitmapOrPath:
			foreach(lc, ((BitmapOrPath *) path)->bitmapquals)
				SimhashAttributeIndexClauses(lfirst(lc), originals, derivations);
			break;
		default:
			break;
	}
}

/*
 * set_rel_pathlist_hook: add simhash index paths for radius clauses.
 */
static void
SimhashSetRelPathlist(PlannerInfo *root, RelOptInfo *rel, Index rti, RangeTblEntry *rte)
{
	List	   *simhash_indexes = NIL;
	List	   *knn_pathkeys;	/* ORDER BY distance, then more (knnpath.c) */
	List	   *originals = NIL;	/* recognized clauses ... */
	List	   *derivations = NIL;	/* ... and what they became */
	List	   *restrictions = NIL; /* the derived restriction clauses */
	ListCell   *lc;

	if (prev_set_rel_pathlist_hook)
		prev_set_rel_pathlist_hook(root, rel, rti, rte);

	/* only plain relations with a simhash index: a pointer comparison each */
	if (rel->reloptkind != RELOPT_BASEREL && rel->reloptkind != RELOPT_OTHER_MEMBER_REL)
		return;
	if (rel->rtekind != RTE_RELATION || IS_DUMMY_REL(rel) || rte->tablesample != NULL)
		return;
	foreach(lc, rel->indexlist)
	{
		IndexOptInfo *index = lfirst_node(IndexOptInfo, lc);

		if (SimhashIsIndexAm(index->relam) && SimhashIndexHasStorage(index) &&
			SimhashIsOpfamilyComplete(index->opfamily[0]))
			simhash_indexes = lappend(simhash_indexes, index);
	}
	if (simhash_indexes == NIL)
		return;
	knn_pathkeys = SimhashKnnPrefixPathkeys(root, rel, simhash_indexes);
	if (knn_pathkeys != NIL)
		SimhashRemovePartialOrderPaths(root, rel, simhash_indexes);

	/* simhash.enable_rewrite = off leaves distance clauses alone */
	if (simhash_enable_rewrite)
	{
		foreach(lc, simhash_indexes)
		{
			IndexOptInfo *index = lfirst_node(IndexOptInfo, lc);
			List	   *newrestrict;
			List	   *newjoin;

			newrestrict = SimhashDeriveClauses(root, rel, index, rel->baserestrictinfo,
											   rel->baserestrictinfo, &originals);
			newjoin = SimhashDeriveClauses(root, rel, index, rel->joininfo,
										   rel->joininfo, &originals);
			rel->baserestrictinfo = list_concat(rel->baserestrictinfo, newrestrict);
			rel->joininfo = list_concat(rel->joininfo, newjoin);
			derivations = list_concat(derivations, newrestrict);
			derivations = list_concat(derivations, newjoin);
			restrictions = list_concat(restrictions, newrestrict);
		}
	}
	if (derivations == NIL)
	{
		/* the nearest-neighbour paths with a tie-break are no rewrite */
		if (knn_pathkeys != NIL)
			SimhashCreateIndexPaths(root, rel, simhash_indexes, knn_pathkeys);
		return;
	}

	/*
	 * A partial index matches restriction clauses from its own copy of the
	 * list, made before this hook ran (the clauses its predicate does not
	 * imply); give it the derived ones too.  Any other index shares the
	 * relation's list, which already has them.
	 */
	foreach(lc, simhash_indexes)
	{
		IndexOptInfo *index = lfirst_node(IndexOptInfo, lc);

		if (index->indpred != NIL && index->predOK &&
			index->indrestrictinfo != rel->baserestrictinfo)
			index->indrestrictinfo = list_concat_copy(index->indrestrictinfo,
													  restrictions);
	}

	/* the estimate of the original clauses changed: size the relation again */
	if (rel->baserestrictinfo != NIL)
	{
		double		oldrows = rel->rows;

		set_baserel_size_estimates(root, rel);
		foreach(lc, rel->pathlist)
		{
			Path	   *path = (Path *) lfirst(lc);

			if (path->param_info == NULL && path->rows == oldrows)
				path->rows = rel->rows;
		}
	}

	/* parameterized scans already planned, then core's index paths */
	SimhashResizeParameterized(root, rel, originals, derivations);
	SimhashCreateIndexPaths(root, rel, simhash_indexes, knn_pathkeys);
	/* the new paths' sizes too */
	SimhashResizeParameterized(root, rel, originals, derivations);

	/*
	 * Finally let the index clauses name the original clauses.  Only paths
	 * of our simhash indexes can hold derived clauses, and every path that
	 * does is in one of these lists (or under a bitmap path in them); an
	 * IndexClause shared by several paths is rewritten once.
	 */
	foreach(lc, rel->pathlist)
		SimhashAttributeIndexClauses(lfirst(lc), originals, derivations);
	foreach(lc, rel->partial_pathlist)
		SimhashAttributeIndexClauses(lfirst(lc), originals, derivations);
}

/* Install the planner hook and its GUC (from _PG_init). */
void
SimhashInstallPlannerHook(void)
{
	DefineCustomBoolVariable("simhash.enable_rewrite",
							 "Enables the planner's rewrite of distance clauses into simhash index conditions.",
							 "With it off, \"fp <-> q <= k\" is evaluated row by row; "
							 "\"fp <@ simhash_ball(q, k)\" and simhash_within() still use the index.",
							 &simhash_enable_rewrite, true, PGC_USERSET, 0,
							 NULL, NULL, NULL);
	prev_set_rel_pathlist_hook = set_rel_pathlist_hook;
	set_rel_pathlist_hook = SimhashSetRelPathlist;
}

/*
 * Support function of the distance function hamming(): it changes nothing.
 * Constant folding calls it for every query that mentions <->, which loads
 * this library (and its planner hook) before the query's paths are built.
 */
Datum
simhash_distance_support(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(NULL);
}

/*
 * Support function of simhash_within(fp, q, k): "fp <@ simhash_ball(q, k)"
 * as an exact index condition, and the selectivity of the call.
 */
Datum
simhash_within_support(PG_FUNCTION_ARGS)
{
	Node	   *rawreq = (Node *) PG_GETARG_POINTER(0);

	if (IsA(rawreq, SupportRequestIndexCondition))
	{
		SupportRequestIndexCondition *req = (SupportRequestIndexCondition *) rawreq;
		FuncExpr   *fexpr = (FuncExpr *) req->node;
		Node	   *indexexpr;
		Node	   *query;
		Node	   *radius;

		if (!IsA(fexpr, FuncExpr) || list_length(fexpr->args) != 3 ||
			req->indexarg > 1 || req->indexcol != 0 ||
			!SimhashIsOpfamilyComplete(req->opfamily))
			PG_RETURN_POINTER(NULL);
		indexexpr = list_nth(fexpr->args, req->indexarg);
		query = list_nth(fexpr->args, 1 - req->indexarg);
		radius = lthird(fexpr->args);
		/* the other arguments must be computable before scanning the index */
		if (!is_pseudo_constant_for_index(req->root, query, req->index) ||
			!is_pseudo_constant_for_index(req->root, radius, req->index))
			PG_RETURN_POINTER(NULL);
		req->lossy = false;
		PG_RETURN_POINTER(list_make1(SimhashMakeWithinClause(req->root, indexexpr, query,
															 (Expr *) radius)));
	}
	if (IsA(rawreq, SupportRequestSelectivity))
	{
		SupportRequestSelectivity *req = (SupportRequestSelectivity *) rawreq;
		Node	   *k = lthird(req->args);
		int			radius = SIMHASH_ESTIMATE_RADIUS;

		if (list_length(req->args) != 3)
			PG_RETURN_POINTER(NULL);
		if (IsA(k, Const) && !((Const *) k)->constisnull)
			radius = SimhashNormalizeRadius(DatumGetInt32(((Const *) k)->constvalue));
		if (IsA(linitial(req->args), Const))
			req->selectivity = SimhashEstimateRadius(req->root, NULL, lsecond(req->args),
													 linitial(req->args), radius);
		else
			req->selectivity = SimhashEstimateRadius(req->root, NULL, linitial(req->args),
													 lsecond(req->args), radius);
		PG_RETURN_POINTER(req);
	}
	PG_RETURN_POINTER(NULL);
}
