/*-------------------------------------------------------------------------
 *
 * clause.c
 *	  Recognize "dist(a, b) <= k" in all its spellings.
 *
 * One recognizer for the index rewrite (planner.c) and the band join
 * (bandjoin.c): each then decides which operand is its column or its side.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/planner/clause.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/stratnum.h"
#include "catalog/pg_opfamily_d.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/lsyscache.h"

#include "simhash_planner.h"

/*
 * If node is the distance between two fingerprints (the operator <-> or
 * the function hamming()), return its two arguments.
 */
static bool
SimhashMatchDistance(Node *node, const SimhashCatalog *cat, Node **a, Node **b)
{
	List	   *args;

	if (node == NULL || !OidIsValid(cat->distance_func))
		return false;
	if (IsA(node, OpExpr) && ((OpExpr *) node)->opno == cat->distance_op)
		args = ((OpExpr *) node)->args;
	else if (IsA(node, FuncExpr) && ((FuncExpr *) node)->funcid == cat->distance_func)
		args = ((FuncExpr *) node)->args;
	else
		return false;
	if (list_length(args) != 2)
		return false;
	*a = linitial(args);
	*b = lsecond(args);
	return true;
}

/*
 * Recognize a radius clause: an integer comparison of a distance with a
 * bound k, as dist <= k, dist < k, k >= dist or k > dist (k of any integer
 * type), or the call simhash_within(a, b, k).  None of a, b and k may be
 * volatile.  Which operand is the indexed column, or which side of a join,
 * is for the caller to decide.
 */
bool
SimhashMatchRadiusClause(Expr *clause, SimhashRadiusClause *out)
{
	const SimhashCatalog *cat = SimhashGetCatalog();

	memset(out, 0, sizeof(SimhashRadiusClause));
	if (IsA(clause, FuncExpr))
	{
		FuncExpr   *f = (FuncExpr *) clause;

		if (f->funcid != cat->within_func || !OidIsValid(f->funcid) ||
			list_length(f->args) != 3)
			return false;
		out->a = linitial(f->args);
		out->b = lsecond(f->args);
		out->bound = lthird(f->args);
		out->within_call = true;
	}
	else if (IsA(clause, OpExpr) && list_length(((OpExpr *) clause)->args) == 2)
	{
		OpExpr	   *op = (OpExpr *) clause;
		int			strategy;
		Oid			lefttype,
					righttype;
		bool		dist_left;

		if (!op_in_opfamily(op->opno, INTEGER_BTREE_FAM_OID))
			return false;
		get_op_opfamily_properties(op->opno, INTEGER_BTREE_FAM_OID, false,
								   &strategy, &lefttype, &righttype);
		if (strategy == BTLessEqualStrategyNumber || strategy == BTLessStrategyNumber)
			dist_left = true;	/* dist <= k, dist < k */
		else if (strategy == BTGreaterEqualStrategyNumber ||
				 strategy == BTGreaterStrategyNumber)
			dist_left = false;	/* k >= dist, k > dist */
		else
			return false;
		if (!SimhashMatchDistance(dist_left ? linitial(op->args) : lsecond(op->args),
								  cat, &out->a, &out->b))
			return false;
		out->bound = dist_left ? lsecond(op->args) : linitial(op->args);
		out->adjust = (strategy == BTLessStrategyNumber ||
					   strategy == BTGreaterStrategyNumber) ? -1 : 0;
	}
	else
		return false;

	return !contain_volatile_functions(out->a) &&
		!contain_volatile_functions(out->b) &&
		!contain_volatile_functions(out->bound);
}
