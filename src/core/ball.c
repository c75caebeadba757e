/*-------------------------------------------------------------------------
 *
 * ball.c
 *	  The simhash_ball type: all fingerprints within a radius of a centre.
 *
 * "fp <@ simhash_ball(q, k)" is the index-friendly spelling of
 * "fp <-> q <= k": its operator has the indexed column as a direct
 * argument, which the planner needs to consider an index scan.  The text
 * form is "<16 hex digits>/<radius>", e.g. '0123456789abcdef/3'.  A negative
 * radius is an empty ball and a radius of 64 or more contains everything,
 * so every ball is made with its radius normalized to [-1, 64]
 * ('.../1000' reads back as '.../64'): the planner, the index and the band
 * join can then trust any radius a ball carries.  Balls stored by version
 * 0.1.0, which kept the radius as given, are normalized where they are read.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/core/ball.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "libpq/pqformat.h"
#include "nodes/primnodes.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "simhash.h"

PG_FUNCTION_INFO_V1(simhash_ball_in);
PG_FUNCTION_INFO_V1(simhash_ball_out);
PG_FUNCTION_INFO_V1(simhash_ball_recv);
PG_FUNCTION_INFO_V1(simhash_ball_send);
PG_FUNCTION_INFO_V1(simhash_ball_make);
PG_FUNCTION_INFO_V1(simhash_ball_center);
PG_FUNCTION_INFO_V1(simhash_ball_radius);
PG_FUNCTION_INFO_V1(simhash64_within_ball);
PG_FUNCTION_INFO_V1(simhash_ball_contains);

/* Allocate a ball; its radius is normalized to [-1, 64]. */
static SimhashBall *
SimhashMakeBall(uint64 center, int64 radius)
{
	SimhashBall *ball = palloc0(sizeof(SimhashBall));

	ball->center = center;
	ball->radius = SimhashNormalizeRadius(radius);
	return ball;
}

/* Report a malformed ball literal. */
static void
SimhashBallSyntaxError(const char *str)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
			 errmsg("invalid input syntax for type %s: \"%s\"", "simhash_ball", str),
			 errdetail("A simhash_ball is 16 hexadecimal digits, a slash and an integer radius (digits with an optional minus sign), as in '0123456789abcdef/3'.")));
}

/*
 * simhash_ball_in(cstring) -> simhash_ball
 *		As strict as simhash64's input: the centre's 16 hexadecimal digits,
 *		a slash, then an optional minus sign and decimal digits, nothing
 *		else (no spaces, no plus sign).  The radius is an int4, as in
 *		simhash_ball(q, k), and is normalized.
 */
Datum
simhash_ball_in(PG_FUNCTION_ARGS)
{
	char	   *str = PG_GETARG_CSTRING(0);
	const char *slash = strchr(str, '/');
	const char *p;
	uint64		center;
	int64		radius = 0;
	bool		negative;

	if (slash == NULL || !SimhashParseHex(str, slash - str, &center))
		SimhashBallSyntaxError(str);
	p = slash + 1;
	negative = (*p == '-');
	if (negative)
		p++;
	if (*p == '\0')
		SimhashBallSyntaxError(str);
	for (; *p != '\0'; p++)
	{
		if (*p < '0' || *p > '9')
			SimhashBallSyntaxError(str);
		radius = radius * 10 + (*p - '0');
		if (radius > (int64) PG_INT32_MAX + 1)
			SimhashBallSyntaxError(str);
	}
	if (!negative && radius > PG_INT32_MAX)
		SimhashBallSyntaxError(str);
	PG_RETURN_POINTER(SimhashMakeBall(center, negative ? -radius : radius));
}

/*
 * simhash_ball_out(simhash_ball) -> cstring
 */
Datum
simhash_ball_out(PG_FUNCTION_ARGS)
{
	SimhashBall *ball = PG_GETARG_SIMHASHBALL(0);

	PG_RETURN_CSTRING(psprintf("%016" PRIx64 "/%d",
							   ball->center, ball->radius));
}

/*
 * simhash_ball_recv(internal) -> simhash_ball: 8-byte centre, 4-byte radius
 */
Datum
simhash_ball_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	uint64		center = (uint64) pq_getmsgint64(buf);
	int32		radius = (int32) pq_getmsgint(buf, 4);

	PG_RETURN_POINTER(SimhashMakeBall(center, radius));
}

/*
 * simhash_ball_send(simhash_ball) -> bytea
 */
Datum
simhash_ball_send(PG_FUNCTION_ARGS)
{
	SimhashBall *ball = PG_GETARG_SIMHASHBALL(0);
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendint64(&buf, (int64) ball->center);
	pq_sendint32(&buf, ball->radius);
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/*
 * simhash_ball(simhash64, int4) -> simhash_ball
 */
Datum
simhash_ball_make(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(SimhashMakeBall(PG_GETARG_SIMHASH64(0), PG_GETARG_INT32(1)));
}

/* simhash_ball_center(simhash_ball) -> simhash64 */
Datum
simhash_ball_center(PG_FUNCTION_ARGS)
{
	PG_RETURN_SIMHASH64(PG_GETARG_SIMHASHBALL(0)->center);
}

/* simhash_ball_radius(simhash_ball) -> int4 */
Datum
simhash_ball_radius(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(PG_GETARG_SIMHASHBALL(0)->radius);
}

/*
 * simhash64 <@ simhash_ball: is the fingerprint within the ball?
 */
Datum
simhash64_within_ball(PG_FUNCTION_ARGS)
{
	uint64		fp = PG_GETARG_SIMHASH64(0);
	SimhashBall *ball = PG_GETARG_SIMHASHBALL(1);

	PG_RETURN_BOOL(SimhashDistance(fp, ball->center) <= ball->radius);
}

/*
 * simhash_ball @> simhash64: does the ball contain the fingerprint?
 */
Datum
simhash_ball_contains(PG_FUNCTION_ARGS)
{
	SimhashBall *ball = PG_GETARG_SIMHASHBALL(0);
	uint64		fp = PG_GETARG_SIMHASH64(1);

	PG_RETURN_BOOL(SimhashDistance(fp, ball->center) <= ball->radius);
}

/*
 * Radius of a simhash_ball(x, k) expression or constant, normalized to
 * [-1, 64]; if it is not known at plan time, the radius that estimates
 * assume, SIMHASH_ESTIMATE_RADIUS.
 */
int
SimhashBallExprRadius(Node *node, uint64 *center, bool *center_known)
{
	*center_known = false;
	if (node && IsA(node, Const) && SimhashIsBallType(((Const *) node)->consttype))
	{
		Const	   *c = (Const *) node;
		SimhashBall *ball;

		if (c->constisnull)
			return -1;			/* a NULL ball contains nothing */
		ball = DatumGetSimhashBall(c->constvalue);
		*center = ball->center;
		*center_known = true;
		/* normalized again: a ball stored by 0.1.0 kept any radius */
		return SimhashNormalizeRadius(ball->radius);
	}
	if (node && IsA(node, FuncExpr) && list_length(((FuncExpr *) node)->args) == 2 &&
		((FuncExpr *) node)->funcid == SimhashGetCatalog()->ball_func)
	{
		Node	   *k = lsecond(((FuncExpr *) node)->args);

		if (IsA(k, Const) && !((Const *) k)->constisnull &&
			((Const *) k)->consttype == INT4OID)
			return SimhashNormalizeRadius(DatumGetInt32(((Const *) k)->constvalue));
	}
	return SIMHASH_ESTIMATE_RADIUS;
}
