/*-------------------------------------------------------------------------
 *
 * simhash_planner.h
 *	  Planner support: selectivity of radius clauses, index costs.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/simhash_planner.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SIMHASH_PLANNER_H
#define SIMHASH_PLANNER_H

#include "catalog/pg_type_d.h"
#include "nodes/pathnodes.h"
#include "utils/selfuncs.h"

#include "simhash.h"

/* pairs of sample values compared for a join estimate, per side */
#define SIMHASH_MAX_PAIR_VALUES	300
#define SIMHASH_UNKNOWN_RADIUS	(-1000)
/* radius assumed by estimates when it is only known at run time */
#define SIMHASH_ESTIMATE_RADIUS 3

/* The catalog objects of one simhash operator family */
typedef struct SimhashOpfamilyInfo
{
	Oid			dist_opno;		/* simhash64 <-> simhash64 */
	Oid			dist_funcid;	/* its function, hamming() */
	Oid			within_opno;	/* simhash64 <@ simhash_ball */
	Oid			ball_type;		/* simhash_ball */
	Oid			ball_func;		/* simhash_ball(simhash64, int4) */
} SimhashOpfamilyInfo;

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
extern double SimhashSelectivityWithin(const SimhashColumnStats *st, uint64 center,
									   int radius);
extern double SimhashSelectivityPairs(const SimhashColumnStats *a,
									  const SimhashColumnStats *b,
									  bool same, int radius);
extern int	SimhashBallExprRadius(Node *node, uint64 *center, bool *center_known);
extern bool SimhashMayCount(PlannerInfo *root, IndexOptInfo *index);
extern IndexOptInfo *SimhashFindIndex(PlannerInfo *root, VariableStatData *vardata);
extern double SimhashIndexFraction(IndexOptInfo *index, uint64 center, int radius);
extern double SimhashIndexPairFraction(IndexOptInfo *index,
									   const SimhashColumnStats *centres, int radius);

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

/* planner.c */
extern void SimhashInstallPlannerHook(void);
extern bool SimhashLookupOpfamily(Oid opfamily, Oid opcintype, SimhashOpfamilyInfo *info);
extern Expr *SimhashRadiusExpr(Node *bound, int adjust);
extern Expr *SimhashMakeWithinClause(PlannerInfo *root, const SimhashOpfamilyInfo *info,
									 Node *indexexpr, Node *query, Expr *radius);
extern Selectivity SimhashEstimateRadius(PlannerInfo *root, IndexOptInfo *index,
										 Node *indexexpr, Node *query, int radius);

/* knnpath.c */
extern List *SimhashKnnPrefixPathkeys(PlannerInfo *root, RelOptInfo *rel,
									  List *simhash_indexes);
extern void SimhashCreateIndexPaths(PlannerInfo *root, RelOptInfo *rel,
									List *simhash_indexes, List *prefix_pathkeys);

/* shjoin.c */
extern void SimhashInstallJoinHook(void);

#endif							/* SIMHASH_PLANNER_H */
