/*-------------------------------------------------------------------------
 *
 * selectivity.c
 *	  Planner estimates for "within a Hamming radius" clauses.
 *
 * Two independent uniform fingerprints are within k bits with probability
 * sum_{i<=k} C(64, i) / 2^64 (1.5e-15 for k = 3).  Real columns hold
 * duplicates and near-duplicates, so the statistics ANALYZE gathers are
 * consulted too: the most common values contribute their exact frequency
 * when they lie within the radius, and the histogram sample shows how dense
 * the neighbourhood is.  The estimate is the larger of the two views.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/selectivity.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_type.h"
#include "nodes/nodeFuncs.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"

#include "shindex.h"
#include "simhash_planner.h"

/* radius assumed when the plan does not know it yet */
#define SIMHASH_DEFAULT_RADIUS	3

PG_FUNCTION_INFO_V1(simhash_ball_restrict_sel);
PG_FUNCTION_INFO_V1(simhash_ball_join_sel);

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
double
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
double
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

/* Radius of a simhash_ball(x, k) expression or constant; -1000 if unknown. */
int
SimhashBallExprRadius(Node *node, uint64 *center, bool *center_known)
{
	*center_known = false;
	if (node && IsA(node, Const))
	{
		Const	   *c = (Const *) node;
		SimhashBall *ball;

		if (c->constisnull)
			return -1;			/* a NULL ball contains nothing */
		ball = DatumGetSimhashBall(c->constvalue);
		*center = ball->center;
		*center_known = true;
		return ball->radius;
	}
	if (node && IsA(node, FuncExpr) && list_length(((FuncExpr *) node)->args) == 2)
	{
		Node	   *k = lsecond(((FuncExpr *) node)->args);

		if (IsA(k, Const) && !((Const *) k)->constisnull &&
			((Const *) k)->consttype == INT4OID)
			return DatumGetInt32(((Const *) k)->constvalue);
	}
	return SIMHASH_UNKNOWN_RADIUS;
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

	if (!get_restriction_variable(root, args, varRelid, &vardata, &other, &varonleft))
		PG_RETURN_FLOAT8(SimhashBinomialWithin(SIMHASH_DEFAULT_RADIUS));

	radius = SimhashBallExprRadius(other, &center, &center_known);
	if (radius == SIMHASH_UNKNOWN_RADIUS)
		radius = SIMHASH_DEFAULT_RADIUS;
	SimhashGetColumnStats(&vardata, &st);
	if (center_known)
		sel = SimhashSelectivityWithin(&st, center, radius);
	else
		sel = SimhashSelectivityPairs(&st, &st, true, radius);
	ReleaseVariableStats(vardata);
	CLAMP_PROBABILITY(sel);
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
	int			radius;
	double		sel;

	/* which side is the ball? */
	if (exprType(left) == exprType(right))
		PG_RETURN_FLOAT8(SimhashBinomialWithin(SIMHASH_DEFAULT_RADIUS));
	if (IsA(right, FuncExpr) || IsA(right, Const))
	{
		fpside = left;
		ballside = right;
	}
	else
	{
		fpside = right;
		ballside = left;
	}
	radius = SimhashBallExprRadius(ballside, &center, &center_known);
	if (radius == SIMHASH_UNKNOWN_RADIUS)
		radius = SIMHASH_DEFAULT_RADIUS;
	if (!IsA(ballside, FuncExpr))
		PG_RETURN_FLOAT8(SimhashBinomialWithin(radius));

	examine_variable(root, fpside, 0, &va);
	examine_variable(root, linitial(((FuncExpr *) ballside)->args), 0, &vb);
	SimhashGetColumnStats(&va, &sa);
	SimhashGetColumnStats(&vb, &sb);
	/* the same pg_statistic row on both sides: a self-join */
	sel = SimhashSelectivityPairs(&sa, &sb,
								  HeapTupleIsValid(va.statsTuple) &&
								  va.statsTuple == vb.statsTuple,
								  radius);
	ReleaseVariableStats(va);
	ReleaseVariableStats(vb);
	CLAMP_PROBABILITY(sel);
	PG_RETURN_FLOAT8(sel);
}
