/*-------------------------------------------------------------------------
 *
 * simhash_compat_planner.h
 *	  What differs between the PostgreSQL versions the extension builds
 *	  against (15, 16, 17 and 18) in the planner's data structures: path
 *	  keys, equivalence classes, disabled nodes, restriction clauses and
 *	  partitioned indexes.
 *
 * The planner half of simhash_compat.h (which has the rest and the rules
 * both follow): only the planner layer and the band join's planning
 * include it, through simhash_planner.h.  The planner logic that differs
 * between versions is described in src/README, "PostgreSQL versions".
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/core/simhash_compat_planner.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SIMHASH_COMPAT_PLANNER_H
#define SIMHASH_COMPAT_PLANNER_H

#include "access/stratnum.h"
#include "catalog/pg_class.h"
#include "nodes/pathnodes.h"
#include "optimizer/cost.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "utils/lsyscache.h"

#include "simhash_compat.h"

/*
 * 18: a PathKey holds a comparison type instead of a btree strategy.  The
 * extension asks whether it sorts ascending or descending, and for its
 * sort operator.
 */
#if PG_VERSION_NUM >= 180000
#define SimhashPathKeyIsAsc(pk)		((pk)->pk_cmptype == COMPARE_LT)
#define SimhashPathKeyIsDesc(pk)	((pk)->pk_cmptype == COMPARE_GT)
#define SimhashPathKeySortOp(pk, type) \
	get_opfamily_member_for_cmptype((pk)->pk_opfamily, type, type, (pk)->pk_cmptype)
#else
#define SimhashPathKeyIsAsc(pk)		((pk)->pk_strategy == BTLessStrategyNumber)
#define SimhashPathKeyIsDesc(pk)	((pk)->pk_strategy == BTGreaterStrategyNumber)
#define SimhashPathKeySortOp(pk, type) \
	get_opfamily_member((pk)->pk_opfamily, type, type, (pk)->pk_strategy)
#endif

/*
 * 18 keeps the members of an equivalence class that stand for a child
 * relation (a partition) apart, reached with an iterator for the child's
 * relids; before, ec_members holds them all.  SimhashEMIterator visits the
 * members that matter for "relids" on every version.
 */
#if PG_VERSION_NUM >= 180000
typedef EquivalenceMemberIterator SimhashEMIterator;
#define SimhashEMIteratorStart(it, ec, relids) \
	setup_eclass_member_iterator(it, ec, relids)
#define SimhashEMIteratorNext(it)	eclass_member_iterator_next(it)
#else
typedef struct SimhashEMIterator
{
	List	   *members;
	int			next;
} SimhashEMIterator;

/* Start visiting the members of "ec" (all of them: "relids" is not needed). */
static inline void
SimhashEMIteratorStart(SimhashEMIterator *it, EquivalenceClass *ec, Relids relids)
{
	it->members = ec->ec_members;
	it->next = 0;
}

/* The next member, or NULL. */
static inline EquivalenceMember *
SimhashEMIteratorNext(SimhashEMIterator *it)
{
	if (it->next >= list_length(it->members))
		return NULL;
	return (EquivalenceMember *) list_nth(it->members, it->next++);
}
#endif

/*
 * 18: paths count the disabled nodes under them (instead of adding
 * disable_cost); a path of ours has those of its children.
 */
#if PG_VERSION_NUM >= 180000
#define SimhashPathDisabledNodes(path)	((path)->disabled_nodes)
#define SimhashSetDisabledNodes(path, n)	((path)->disabled_nodes = (n))
#else
#define SimhashPathDisabledNodes(path)	0
#define SimhashSetDisabledNodes(path, n)	((void) (n))
#endif

/* cost_incremental_sort, which takes the input's disabled nodes on 18 */
static inline void
SimhashCostIncrementalSort(Path *path, PlannerInfo *root, List *pathkeys,
						   int presorted_keys, Path *input, double limit_tuples)
{
	cost_incremental_sort(path, root, pathkeys, presorted_keys,
#if PG_VERSION_NUM >= 180000
						  input->disabled_nodes,
#endif
						  input->startup_cost, input->total_cost, input->rows,
						  input->pathtarget->width, 0.0, work_mem, limit_tuples);
}

/*
 * A restriction clause derived from "orig" (an equivalent one), to be
 * enforced in its place.  16 replaced outerjoin_delayed and nullable_relids
 * by clone markers and incompatible_relids, and identifies clauses by
 * rinfo_serial: a nestloop drops the join clauses whose serial its inner
 * path enforces, so the derived clause shares the original's serial, as a
 * commuted copy of a clause does.  Then a scan that enforces the derived
 * clause enforces the original, and the other way round.
 */
static inline RestrictInfo *
SimhashMakeDerivedRestrictInfo(PlannerInfo *root, Expr *clause, RestrictInfo *orig)
{
	RestrictInfo *rinfo;

#if PG_VERSION_NUM >= 160000
	rinfo = make_restrictinfo(root, clause, orig->is_pushed_down, orig->has_clone,
							  orig->is_clone, orig->pseudoconstant, orig->security_level,
							  orig->required_relids, orig->incompatible_relids,
							  orig->outer_relids);
	rinfo->rinfo_serial = orig->rinfo_serial;
#else
	rinfo = make_restrictinfo(root, clause, orig->is_pushed_down,
							  orig->outerjoin_delayed, orig->pseudoconstant,
							  orig->security_level, orig->required_relids,
							  orig->outer_relids, orig->nullable_relids);
#endif
	return rinfo;
}

/*
 * 16 lists a partitioned table's partitioned indexes in rel->indexlist
 * (for uniqueness proofs).  They have no storage: the extension must not
 * open them to plan a scan or to count.
 */
#if PG_VERSION_NUM >= 160000
#define SimhashIndexHasStorage(info) \
	(get_rel_relkind((info)->indexoid) != RELKIND_PARTITIONED_INDEX)
#else
#define SimhashIndexHasStorage(info)	true
#endif

#endif							/* SIMHASH_COMPAT_PLANNER_H */
