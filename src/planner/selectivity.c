/*-------------------------------------------------------------------------
 *
 * selectivity.c
 *	  Estimates for simhash radius clauses.
 *
 * Counting in the index (gated by SimhashMayCount) or statistics, through
 * SimhashEstimateWithin; the estimators of <@.  See src/README, "Estimates".
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/planner/selectivity.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "catalog/pg_statistic.h"
#include "miscadmin.h"
#include "catalog/pg_type.h"
#include "nodes/nodeFuncs.h"
#include "parser/parsetree.h"
#include "optimizer/paths.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/selfuncs.h"
#include "utils/syscache.h"

#include "simhash_am.h"
#include "simhash_planner.h"

/* most work one counting search may do, in shprobe.c's cost units */
#define SIMHASH_COUNT_BUDGET	30000.0

/* most matches one counting search counts (clustered data can have many) */
#define SIMHASH_COUNT_LIMIT		100000

/* sampled centres for an unknown-centre estimate */
#define SIMHASH_SAMPLE_MCVS		12
#define SIMHASH_SAMPLE_HIST		24

PG_FUNCTION_INFO_V1(simhash_ball_restrict_sel);
PG_FUNCTION_INFO_V1(simhash_ball_join_sel);

/*
 * Recent counts: planning one statement estimates the same neighbourhood
 * for the clause and again for each index path built from it, and a count
 * at k = 6 costs as much as running the query.  A count is reused only
 * within the statement and command that made it (read-only statements of a
 * transaction share a command id); it is an estimate, so concurrent changes
 * to the index during that statement do not matter.
 */
typedef struct SimhashCountMemo
{
	LocalTransactionId lxid;	/* InvalidLocalTransactionId: empty slot */
	TimestampTz stmt;			/* start of the statement that counted */
	CommandId	cid;
	Oid			indexoid;
	uint64		center;
	int			radius;
	double		count;
} SimhashCountMemo;

#define SIMHASH_COUNT_MEMO_SIZE	8

static SimhashCountMemo count_memo[SIMHASH_COUNT_MEMO_SIZE];
static int	count_memo_next = 0;

/* Read the MCV list and histogram of a fingerprint column, if any. */
void
SimhashGetColumnStats(VariableStatData *vardata, SimhashColumnStats *st)
{
	AttStatsSlot sslot;

	memset(st, 0, sizeof(SimhashColumnStats));
	if (!HeapTupleIsValid(vardata->statsTuple))
		return;
	st->have = true;
	st->nullfrac = ((Form_pg_statistic) GETSTRUCT(vardata->statsTuple))->stanullfrac;

	if (get_attstatsslot(&sslot, vardata->statsTuple, STATISTIC_KIND_MCV, InvalidOid,
						 ATTSTATSSLOT_VALUES | ATTSTATSSLOT_NUMBERS))
	{
		st->nmcv = sslot.nvalues;
		st->mcv = palloc(sizeof(uint64) * Max(st->nmcv, 1));
		st->mcvfreq = palloc(sizeof(double) * Max(st->nmcv, 1));
		for (int i = 0; i < st->nmcv; i++)
		{
			st->mcv[i] = DatumGetSimhash64(sslot.values[i]);
			st->mcvfreq[i] = sslot.numbers[i];
			st->mcvsum += sslot.numbers[i];
		}
		free_attstatsslot(&sslot);
	}
	if (get_attstatsslot(&sslot, vardata->statsTuple, STATISTIC_KIND_HISTOGRAM,
						 InvalidOid, ATTSTATSSLOT_VALUES))
	{
		st->nhist = sslot.nvalues;
		st->hist = palloc(sizeof(uint64) * Max(st->nhist, 1));
		for (int i = 0; i < st->nhist; i++)
			st->hist[i] = DatumGetSimhash64(sslot.values[i]);
		free_attstatsslot(&sslot);
	}
}

/*
 * Fraction of all rows (NULLs never match) within "radius" of "center".
 */
static double
SimhashSelectivityWithin(const SimhashColumnStats *st, uint64 center, int radius)
{
	double		nonnull = 1.0 - st->nullfrac;
	double		mcvpart = 0;
	double		other;
	double		p = SimhashBinomialWithin(radius);

	if (radius < 0)
		return 0;
	if (radius >= SIMHASH_BITS)
		return nonnull;
	for (int i = 0; i < st->nmcv; i++)
		if (SimhashDistance(st->mcv[i], center) <= radius)
			mcvpart += st->mcvfreq[i];
	other = Max(nonnull - st->mcvsum, 0);
	if (st->nhist >= 10)
	{
		int			near = 0;

		for (int i = 0; i < st->nhist; i++)
			if (SimhashDistance(st->hist[i], center) <= radius)
				near++;
		p = Max(p, (double) near / st->nhist);
	}
	return Min(mcvpart + other * p, nonnull);
}

/*
 * Probability that a row of column 1 and a row of column 2 are within
 * "radius" of each other (same = the same column: a self-join).
 */
static double
SimhashSelectivityPairs(const SimhashColumnStats *a, const SimhashColumnStats *b,
						bool same, int radius)
{
	double		p = SimhashBinomialWithin(radius);
	double		nonnull = (1.0 - a->nullfrac) * (1.0 - b->nullfrac);
	double		mcvpairs = 0;
	long		histnear = 0,
				histpairs = 0;

	if (radius < 0)
		return 0;
	if (radius >= SIMHASH_BITS)
		return nonnull;

	/* common values on both sides: their frequencies are exact */
	for (int i = 0; i < Min(a->nmcv, SIMHASH_MAX_PAIR_VALUES); i++)
		for (int j = 0; j < Min(b->nmcv, SIMHASH_MAX_PAIR_VALUES); j++)
			if (SimhashDistance(a->mcv[i], b->mcv[j]) <= radius)
				mcvpairs += a->mcvfreq[i] * b->mcvfreq[j];

	/* the sampled rest: pairs of distinct sample values (a bounded sample) */
	for (int i = 0; i < a->nhist; i += 1 + a->nhist / SIMHASH_MAX_PAIR_VALUES)
		for (int j = 0; j < b->nhist; j += 1 + b->nhist / SIMHASH_MAX_PAIR_VALUES)
		{
			if (same && i == j)
				continue;
			histpairs++;
			if (SimhashDistance(a->hist[i], b->hist[j]) <= radius)
				histnear++;
		}
	if (histpairs >= 100)
		p = Max(p, (double) histnear / histpairs);

	return Min(mcvpairs + Max(nonnull - mcvpairs, 0) * p, nonnull);
}

/* Does pg_class say the table has row-level security enabled? */
static bool
SimhashHasRowSecurity(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	bool		result = false;

	if (HeapTupleIsValid(tup))
	{
		result = ((Form_pg_class) GETSTRUCT(tup))->relrowsecurity;
		ReleaseSysCache(tup);
	}
	return result;
}

/*
 * May the planner count matches in this index for an estimate?  A count
 * visits the entries of every row, including rows the user must not see:
 * under row-level security, inside a security barrier view, or without the
 * right to read the column, the estimate in EXPLAIN would tell whether
 * hidden documents exist.  Then the
 * estimate comes from pg_statistic instead, as core's estimates do.
 */
bool
SimhashMayCount(PlannerInfo *root, IndexOptInfo *index)
{
	RelOptInfo *rel = index->rel;
	Index		relid = rel->relid;
	RangeTblEntry *rte;
	Oid			userid = OidIsValid(rel->userid) ? rel->userid : GetUserId();
	bool		child = false;

	/*
	 * A security barrier view is planned as a subquery of its own, where
	 * nothing marks the relation; refuse under any such view above.
	 */
	for (PlannerInfo *up = root->parent_root; up != NULL; up = up->parent_root)
	{
		ListCell   *lc;

		foreach(lc, up->parse->rtable)
		{
			RangeTblEntry *r = lfirst_node(RangeTblEntry, lc);

			if (r->rtekind == RTE_SUBQUERY && r->security_barrier)
				return false;
		}
	}

	/* from a partition or inheritance child up to the relation named */
	for (;;)
	{
		rte = planner_rt_fetch(relid, root);
		if (rte->securityQuals != NIL ||
			(rte->rtekind == RTE_RELATION && SimhashHasRowSecurity(rte->relid)))
			return false;
		if (root->append_rel_array == NULL || root->append_rel_array[relid] == NULL)
			break;
		relid = root->append_rel_array[relid]->parent_relid;
		child = true;
	}
	if (rte->rtekind != RTE_RELATION)
		return false;
	if (pg_class_aclcheck(rte->relid, userid, ACL_SELECT) == ACLCHECK_OK)
		return true;
	/* the right to read the indexed column is enough */
	return !child && index->indexkeys[0] != 0 &&
		pg_attribute_aclcheck(rte->relid, index->indexkeys[0], userid,
							  ACL_SELECT) == ACLCHECK_OK;
}

/*
 * A simhash index on the variable's column that the planner knows and may
 * count in (see SimhashMayCount), or NULL.
 */
IndexOptInfo *
SimhashFindIndex(PlannerInfo *root, VariableStatData *vardata)
{
	ListCell   *lc;

	if (vardata->rel == NULL || vardata->var == NULL)
		return NULL;
	foreach(lc, vardata->rel->indexlist)
	{
		IndexOptInfo *index = lfirst_node(IndexOptInfo, lc);

		if (SimhashIsIndexAm(index->relam) && SimhashIndexHasStorage(index) &&
			match_index_to_operand(vardata->var, 0, index))
			return SimhashMayCount(root, index) ? index : NULL;
	}
	return NULL;
}

/*
 * Index entries within "radius" of "center", counted (or, for probe plans
 * of many keys, estimated from a sample of the keys) once per statement;
 * see SimhashSampleCountWithin.
 */
static double
SimhashCountNeighbours(Oid indexoid, uint64 center, int radius)
{
	LocalTransactionId lxid = SimhashMyLocalXid();
	TimestampTz stmt = GetCurrentStatementStartTimestamp();
	CommandId	cid = GetCurrentCommandId(false);
	SimhashCountMemo *m;
	Relation	rel;
	double		count;

	for (int i = 0; i < SIMHASH_COUNT_MEMO_SIZE; i++)
	{
		m = &count_memo[i];
		if (m->lxid == lxid && lxid != InvalidLocalTransactionId &&
			m->stmt == stmt && m->cid == cid && m->indexoid == indexoid && m->center == center && m->radius == radius)
			return m->count;
	}

	rel = index_open(indexoid, NoLock);
	count = SimhashSampleCountWithin(rel, center, radius, SIMHASH_COUNT_LIMIT);
	index_close(rel, NoLock);

	m = &count_memo[count_memo_next];
	count_memo_next = (count_memo_next + 1) % SIMHASH_COUNT_MEMO_SIZE;
	m->lxid = lxid;
	m->stmt = stmt;
	m->cid = cid;
	m->indexoid = indexoid;
	m->center = center;
	m->radius = radius;
	m->count = count;
	return count;
}

/*
 * Fraction of the indexed rows within "radius" of "center", counted in the
 * index; -1 when the search would cost too much.  *lower (if not NULL) is
 * set when the count stopped at SIMHASH_COUNT_LIMIT, so that the fraction
 * is only a lower bound.  The planner already holds a lock on the index.
 */
static double
SimhashIndexFraction(IndexOptInfo *index, uint64 center, int radius, bool *lower)
{
	SimhashProbePlan plan;
	double		rows = Max(index->tuples, 1);
	double		count;

	if (lower)
		*lower = false;
	if (radius < 0)
		return 0;
	SimhashPlanProbes(radius, rows, &plan);
	if (radius >= SIMHASH_BITS || plan.cost > SIMHASH_COUNT_BUDGET)
		return -1;
	count = SimhashCountNeighbours(index->indexoid, center, radius);
	if (lower)
		*lower = (count >= SIMHASH_COUNT_LIMIT);
	return Min(count / rows, 1.0);
}

/*
 * Probability that an indexed row is within "radius" of a centre drawn
 * from the distribution "centres" describes, averaging the counted
 * neighbourhoods of its most common values and histogram values; -1 if
 * there is nothing to sample or counting is too costly.
 */
static double
SimhashIndexPairFraction(IndexOptInfo *index, const SimhashColumnStats *centres, int radius)
{
	double		nonnull = 1.0 - centres->nullfrac;
	double		sum = 0,
				mcvweight = 0,
				histsum = 0;
	int			nmcv = Min(centres->nmcv, SIMHASH_SAMPLE_MCVS);
	int			nhist = 0;

	if (!centres->have || (centres->nmcv == 0 && centres->nhist == 0))
		return -1;
	for (int i = 0; i < nmcv; i++)
	{
		double		f = SimhashIndexFraction(index, centres->mcv[i], radius, NULL);

		if (f < 0)
			return -1;
		sum += centres->mcvfreq[i] * f;
		mcvweight += centres->mcvfreq[i];
	}
	for (int i = 0; i < centres->nhist; i += Max(1, centres->nhist / SIMHASH_SAMPLE_HIST))
	{
		double		f = SimhashIndexFraction(index, centres->hist[i], radius, NULL);

		if (f < 0)
			return -1;
		histsum += f;
		nhist++;
	}
	if (nhist > 0)
		sum += Max(nonnull - mcvweight, 0) * histsum / nhist;
	else if (mcvweight > 0)
		sum = sum * nonnull / mcvweight;
	return Min(sum, 1.0);
}

/*
 * The one decision tree of every estimate: the probability that a row of
 * the fingerprint column (statistics "fp", simhash index "index" or NULL
 * when it may not be counted) is within "radius" of a centre.  The centre
 * is "center" when known, else drawn from "centres" (another column's
 * statistics, or NULL for the column's own rows; "same" when they are the
 * same pg_statistic row).  Counting in the index comes first; statistics
 * when it would cost too much or there is no index.
 */
Selectivity
SimhashEstimateWithin(IndexOptInfo *index, const SimhashColumnStats *fp,
					  const uint64 *center, const SimhashColumnStats *centres,
					  bool same, int radius)
{
	double		sel = -1;

	if (center != NULL)
	{
		bool		lower = false;

		if (index)
			sel = SimhashIndexFraction(index, *center, radius, &lower);
		if (sel < 0)
			sel = SimhashSelectivityWithin(fp, *center, radius);
		else if (lower)
		{
			/*
			 * The count stopped at its limit: more rows are near, and the
			 * statistics (a most common value, say) may know how many.
			 */
			sel = Max(sel, SimhashSelectivityWithin(fp, *center, radius));
		}
	}
	else
	{
		if (centres == NULL || !centres->have)
		{
			centres = fp;
			same = true;
		}
		if (index)
			sel = SimhashIndexPairFraction(index, centres, radius);
		if (sel < 0)
			sel = SimhashSelectivityPairs(fp, centres, same, radius);
	}
	CLAMP_PROBABILITY(sel);
	return sel;
}

/*
 * Selectivity of "dist(fp, c) <= radius" where the centres c are the
 * values of another expression (a column, or a nested loop's outer side):
 * from both statistics, the same sample when both are one column's.
 */
Selectivity
SimhashEstimateFromCentres(PlannerInfo *root, IndexOptInfo *index, VariableStatData *fpvar,
						   const SimhashColumnStats *fp, Node *centres, int radius)
{
	VariableStatData cvar;
	SimhashColumnStats cst;
	Selectivity sel;

	examine_variable(root, centres, 0, &cvar);
	SimhashGetColumnStats(&cvar, &cst);
	sel = SimhashEstimateWithin(index, fp, NULL, &cst,
								HeapTupleIsValid(cvar.statsTuple) &&
								cvar.statsTuple == fpvar->statsTuple, radius);
	ReleaseVariableStats(cvar);
	return sel;
}

/*
 * Restriction selectivity of "fp <@ ball" and "ball @> fp".
 */
Datum
simhash_ball_restrict_sel(PG_FUNCTION_ARGS)
{
	PlannerInfo *root = (PlannerInfo *) PG_GETARG_POINTER(0);
	List	   *args = (List *) PG_GETARG_POINTER(2);
	int			varRelid = PG_GETARG_INT32(3);
	VariableStatData vardata;
	Node	   *other;
	bool		varonleft;
	SimhashColumnStats st;
	uint64		center = 0;
	bool		center_known;
	int			radius;
	double		sel;
	IndexOptInfo *index;

	if (!get_restriction_variable(root, args, varRelid, &vardata, &other, &varonleft))
		PG_RETURN_FLOAT8(SimhashBinomialWithin(SIMHASH_ESTIMATE_RADIUS));

	/* the variable must be the fingerprint, not a column of balls */
	if (!SimhashIsBallType(exprType(other)) || SimhashIsBallType(exprType(vardata.var)))
	{
		ReleaseVariableStats(vardata);
		PG_RETURN_FLOAT8(SimhashBinomialWithin(SIMHASH_ESTIMATE_RADIUS));
	}

	radius = SimhashBallExprRadius(other, &center, &center_known);
	SimhashGetColumnStats(&vardata, &st);
	index = SimhashFindIndex(root, &vardata);
	if (!center_known && IsA(other, FuncExpr) &&
		((FuncExpr *) other)->funcid == SimhashGetCatalog()->ball_func &&
		list_length(((FuncExpr *) other)->args) == 2)
	{
		/*
		 * The centre comes from another relation (a parameterized scan of a
		 * nested loop): its rows are the centres, as in the join estimate,
		 * so that the rows per loop agree with the join's rows whatever
		 * sample ANALYZE drew of this column.
		 */
		sel = SimhashEstimateFromCentres(root, index, &vardata, &st,
										 linitial(((FuncExpr *) other)->args), radius);
	}
	else
		sel = SimhashEstimateWithin(index, &st, center_known ? &center : NULL, NULL, true,
									radius);
	ReleaseVariableStats(vardata);
	PG_RETURN_FLOAT8(sel);
}

/*
 * Join selectivity of "a.fp <@ simhash_ball(b.fp, k)" (and the commuted form).
 */
Datum
simhash_ball_join_sel(PG_FUNCTION_ARGS)
{
	PlannerInfo *root = (PlannerInfo *) PG_GETARG_POINTER(0);
	List	   *args = (List *) PG_GETARG_POINTER(2);
	Node	   *left = linitial(args);
	Node	   *right = lsecond(args);
	Node	   *fpside;
	Node	   *ballside;
	VariableStatData va,
				vb;
	SimhashColumnStats sa,
				sb;
	uint64		center;
	bool		center_known;
	bool		same;
	int			radius;
	double		sel;
	IndexOptInfo *index;
	IndexOptInfo *other_index;

	/* which side is the ball?  (known by its type) */
	if (SimhashIsBallType(exprType(right)) && !SimhashIsBallType(exprType(left)))
	{
		fpside = left;
		ballside = right;
	}
	else if (SimhashIsBallType(exprType(left)) && !SimhashIsBallType(exprType(right)))
	{
		fpside = right;
		ballside = left;
	}
	else
		PG_RETURN_FLOAT8(SimhashBinomialWithin(SIMHASH_ESTIMATE_RADIUS));
	radius = SimhashBallExprRadius(ballside, &center, &center_known);
	/* only simhash_ball(x, k) tells where the centres come from */
	if (!IsA(ballside, FuncExpr) ||
		((FuncExpr *) ballside)->funcid != SimhashGetCatalog()->ball_func ||
		list_length(((FuncExpr *) ballside)->args) != 2)
		PG_RETURN_FLOAT8(SimhashBinomialWithin(radius));

	examine_variable(root, fpside, 0, &va);
	examine_variable(root, linitial(((FuncExpr *) ballside)->args), 0, &vb);
	SimhashGetColumnStats(&va, &sa);
	SimhashGetColumnStats(&vb, &sb);
	/* the same pg_statistic row on both sides: a self-join */
	same = HeapTupleIsValid(va.statsTuple) && va.statsTuple == vb.statsTuple;
	/* count in whichever side has an index: the relation is symmetric */
	index = SimhashFindIndex(root, &va);
	other_index = index ? NULL : SimhashFindIndex(root, &vb);
	if (other_index)
		sel = SimhashEstimateWithin(other_index, &sb, NULL, &sa, same, radius);
	else
		sel = SimhashEstimateWithin(index, &sa, NULL, &sb, same, radius);
	ReleaseVariableStats(va);
	ReleaseVariableStats(vb);
	PG_RETURN_FLOAT8(sel);
}
