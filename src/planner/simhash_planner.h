/*-------------------------------------------------------------------------
 *
 * simhash_planner.h
 *	  The planner layer's interface: radius clauses, estimates, the
 *	  planner hook, nearest-neighbour paths and the nearest sort's plan.
 *
 * Used by the executor (band join, nearest sort), clusters and _PG_init;
 * the planner itself calls only core/ and access/ (simhash_am.h).
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/planner/simhash_planner.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SIMHASH_PLANNER_H
#define SIMHASH_PLANNER_H

#include "catalog/pg_type_d.h"
#include "nodes/pathnodes.h"
#include "utils/selfuncs.h"

#include "simhash.h"
#include "simhash_compat_planner.h"

/* pairs of sample values compared for a join estimate, per side */
#define SIMHASH_MAX_PAIR_VALUES	300

/* A radius clause "dist(a, b) <= k" in any of its spellings (clause.c) */
typedef struct SimhashRadiusClause
{
	Node	   *a;				/* the two fingerprint operands */
	Node	   *b;
	Node	   *bound;			/* k, of an integer type */
	int			adjust;			/* 0 for <=, >= and simhash_within(); -1 for < and > */
	bool		within_call;	/* spelled simhash_within(a, b, k) */
} SimhashRadiusClause;

/* what pg_statistic says about a fingerprint column */
typedef struct SimhashColumnStats
{
	bool		have;			/* were there statistics at all? */
	double		nullfrac;
	int			nmcv;
	uint64	   *mcv;			/* palloc'd */
	double	   *mcvfreq;
	double		mcvsum;
	int			nhist;
	uint64	   *hist;			/* palloc'd */
} SimhashColumnStats;

extern void SimhashGetColumnStats(VariableStatData *vardata, SimhashColumnStats *st);
extern bool SimhashMayCount(PlannerInfo *root, IndexOptInfo *index);
extern IndexOptInfo *SimhashFindIndex(PlannerInfo *root, VariableStatData *vardata);
extern Selectivity SimhashEstimateWithin(IndexOptInfo *index, const SimhashColumnStats *fp,
										 const uint64 *center,
										 const SimhashColumnStats *centres,
										 bool same, int radius);
extern Selectivity SimhashEstimateFromCentres(PlannerInfo *root, IndexOptInfo *index,
											  VariableStatData *fpvar,
											  const SimhashColumnStats *fp,
											  Node *centres, int radius);

/* An int2, int4 or int8 Datum as an int64 */
static inline int64
SimhashIntegerDatum(Datum d, Oid type)
{
	return type == INT8OID ? DatumGetInt64(d) :
		type == INT2OID ? DatumGetInt16(d) : DatumGetInt32(d);
}

/*
 * The radius k' searched for a bound k: k plus adjust (0, or -1 for a strict
 * comparison), normalized.  A k below 0 finds nothing whatever adjust is,
 * and the sum cannot overflow for any other k.
 */
static inline int
SimhashClampRadius(int64 k, int adjust)
{
	return k < 0 ? SIMHASH_EMPTY_RADIUS : SimhashNormalizeRadius(k + adjust);
}

/* clause.c */
extern bool SimhashMatchRadiusClause(Expr *clause, SimhashRadiusClause *out);

/* planner.c */
extern void SimhashInstallPlannerHook(void);
extern Expr *SimhashRadiusExpr(Node *bound, int adjust);
extern Expr *SimhashMakeWithinClause(PlannerInfo *root, Node *indexexpr, Node *query,
									 Expr *radius);
extern Selectivity SimhashEstimateRadius(PlannerInfo *root, IndexOptInfo *index,
										 Node *indexexpr, Node *query, int radius);

/* knnpath.c */
extern List *SimhashKnnPrefixPathkeys(PlannerInfo *root, RelOptInfo *rel,
									  List *simhash_indexes);
extern void SimhashRemovePartialOrderPaths(PlannerInfo *root, RelOptInfo *rel,
										   List *simhash_indexes);
extern void SimhashCreateIndexPaths(PlannerInfo *root, RelOptInfo *rel,
									List *simhash_indexes, List *prefix_pathkeys);
extern int	SimhashNearestSortPayloadFlags(RelOptInfo *rel, Path *child, List *pathkeys);
extern void SimhashAddNearestSortPaths(PlannerInfo *root, RelOptInfo *rel, List *prefix);
extern void SimhashInstallNearestSortPaths(void);

/*
 * The nearest sort's plan, made by knnpath.c and run by the executor's
 * nearestsort.c: the CustomScan's name (its methods are found by it) and
 * the layout of its custom_private.
 */
#define SIMHASH_NEAREST_SORT_NAME "SimhashNearestSort"

/* custom_private: one list per sort key, the distance first */
typedef enum SimhashNearestSortPrivate
{
	SNS_SORTOPS,				/* OID list: the sort operators */
	SNS_COLLATIONS,				/* OID list */
	SNS_NULLS_FIRST,			/* integer list of booleans */
	SNS_DESCENDING,				/* integer list of booleans, for EXPLAIN */
	SNS_BOUND,					/* Integer: rows the query wants, 0 unknown */
	SNS_PAYLOAD_FLAGS			/* Integer: SIMHASH_SK_PAYLOAD_* for the scan,
								 * 0 if the index cannot order ties */
} SimhashNearestSortPrivate;

#endif							/* SIMHASH_PLANNER_H */
