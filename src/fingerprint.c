/*-------------------------------------------------------------------------
 *
 * fingerprint.c
 *	  Charikar simhash of texts, feature arrays and tsvectors.
 *
 * Every variant ends in the same accumulation: 64 signed counters, one per
 * bit; a feature of weight w adds w to counter i when bit i of its hash is
 * 1 and subtracts w when it is 0; bit i of the fingerprint is 1 exactly when
 * counter i ends up greater than zero (a tie gives 0).  Features are added
 * in a fixed order, so the floating-point sums are reproducible.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/fingerprint.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "tsearch/ts_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"

#include "simhash.h"

PG_FUNCTION_INFO_V1(simhash_text);
PG_FUNCTION_INFO_V1(simhash_features_array);
PG_FUNCTION_INFO_V1(simhash_weighted_features);
PG_FUNCTION_INFO_V1(simhash_tsvector);
PG_FUNCTION_INFO_V1(simhash_features);

/*
 * Weights of tsvector position classes, proportional to ts_rank's default
 * {0.1, 0.2, 0.4, 1.0} for D, C, B, A; indexed by WEP_GETWEIGHT (3 = A).
 */
static const double simhash_tsweights[4] = {1.0, 2.0, 4.0, 10.0};

/* Reset all 64 counters to zero. */
void
SimhashCountersInit(SimhashCounters *c)
{
	memset(c, 0, sizeof(SimhashCounters));
}

/* Push the counters up or down by "weight" according to the bits of "hash". */
void
SimhashCountersAdd(SimhashCounters *c, uint64 hash, double weight)
{
	for (int i = 0; i < SIMHASH_BITS; i++)
		c->acc[i] += ((hash >> i) & 1) ? weight : -weight;
}

/* Read the fingerprint off the counters: bit i is set iff counter i > 0. */
uint64
SimhashCountersFinish(const SimhashCounters *c)
{
	uint64		fp = 0;

	for (int i = 0; i < SIMHASH_BITS; i++)
		if (c->acc[i] > 0)
			fp |= UINT64CONST(1) << i;
	return fp;
}

/*
 * Integer counters for the integer weights of simhash(text), kept as
 * "acc[i] = weight of the features whose bit i is set" plus the total, so
 * that counter i = 2 acc[i] - total.  Features are added 16 bits per lane:
 * each byte of the hash selects, through a table, which of 8 lanes of two
 * 64-bit words receive the weight; the lanes are flushed into acc[] before
 * they could overflow.  That is 16 multiply-adds per feature instead of 64
 * conditional adds.
 */
typedef struct SimhashIntCounters
{
	uint64		lanes[8][2];	/* byte b of the hash: bits 0-3 and 4-7 */
	uint32		pending;		/* weight added to the lanes since the flush */
	uint64		acc[SIMHASH_BITS];
	uint64		total;
} SimhashIntCounters;

static uint64 simhash_spread[256][2];
static bool simhash_spread_ready = false;

/* Build the byte -> 16-bit lanes table. */
static void
SimhashInitSpread(void)
{
	for (int b = 0; b < 256; b++)
	{
		uint64		lo = 0,
					hi = 0;

		for (int j = 0; j < 4; j++)
		{
			if ((b >> j) & 1)
				lo |= UINT64CONST(1) << (16 * j);
			if ((b >> (j + 4)) & 1)
				hi |= UINT64CONST(1) << (16 * j);
		}
		simhash_spread[b][0] = lo;
		simhash_spread[b][1] = hi;
	}
	simhash_spread_ready = true;
}

/* Move the lane sums into the 64-bit counters. */
static void
SimhashIntFlush(SimhashIntCounters *c)
{
	for (int b = 0; b < 8; b++)
	{
		for (int j = 0; j < 4; j++)
		{
			c->acc[8 * b + j] += (c->lanes[b][0] >> (16 * j)) & 0xFFFF;
			c->acc[8 * b + 4 + j] += (c->lanes[b][1] >> (16 * j)) & 0xFFFF;
		}
		c->lanes[b][0] = c->lanes[b][1] = 0;
	}
	c->pending = 0;
}

/* Add a feature of integer weight w. */
static inline void
SimhashIntAdd(SimhashIntCounters *c, uint64 hash, uint64 w)
{
	if (w > 0xFFFF)
	{
		/* too heavy for a lane: add it bit by bit */
		for (int i = 0; i < SIMHASH_BITS; i++)
			c->acc[i] += ((hash >> i) & 1) * w;
		c->total += w;
		return;
	}
	if (c->pending + w > 0xFFFF)
		SimhashIntFlush(c);
	for (int b = 0; b < 8; b++)
	{
		uint8		byte = (uint8) (hash >> (8 * b));

		c->lanes[b][0] += simhash_spread[byte][0] * w;
		c->lanes[b][1] += simhash_spread[byte][1] * w;
	}
	c->pending += (uint32) w;
	c->total += w;
}

/*
 * The weight cap of an extracted feature set: max(8, W / 16), W being the
 * sum of min(occurrences, 8) over its features.
 */
uint64
SimhashFeatureSetCap(const SimhashFeatureSet *fs)
{
	uint64		w8 = 0;

	for (uint32 slot = 0; slot <= fs->mask; slot++)
		w8 += Min(fs->slots[slot].count, SIMHASH_CAP_MIN);
	return SimhashWeightCap(w8);
}

/*
 * Fingerprint of an extracted feature set: each distinct feature weighs
 * min(occurrences, cap).  The sums are exact integers, so the order of the
 * slots does not matter.
 */
uint64
SimhashFeatureSetFingerprint(const SimhashFeatureSet *fs)
{
	uint64		cap = SimhashFeatureSetCap(fs);
	SimhashIntCounters c;
	uint64		fp = 0;

	if (!simhash_spread_ready)
		SimhashInitSpread();
	memset(&c, 0, sizeof(c));
	for (uint32 slot = 0; slot <= fs->mask; slot++)
	{
		uint32		n = fs->slots[slot].count;

		if (n != 0)
			SimhashIntAdd(&c, fs->slots[slot].hash, Min((uint64) n, cap));
	}
	SimhashIntFlush(&c);

	/* counter i = 2 acc[i] - total; bit i is set iff it is positive */
	for (int i = 0; i < SIMHASH_BITS; i++)
		if (2 * c.acc[i] > c.total)
			fp |= UINT64CONST(1) << i;
	return fp;
}

/* Hash a string in the server encoding as UTF-8. */
static uint64
SimhashHashServerString(const char *s, int len)
{
	char	   *utf8 = pg_server_to_any(s, len, PG_UTF8);
	uint64		h;

	if (utf8 == s)
		return SimhashHashFeature(s, len);
	h = SimhashHashFeature(utf8, strlen(utf8));
	pfree(utf8);
	return h;
}

/* Reject multidimensional arrays, which have no natural feature order. */
static void
SimhashCheckOneDimensional(ArrayType *arr, const char *what)
{
	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("%s must be a one-dimensional array", what),
				 errdetail("The array has %d dimensions.", ARR_NDIM(arr))));
}

/*
 * simhash(text) -> simhash64
 *		The fingerprint of a text, as specified in README.md.
 */
Datum
simhash_text(PG_FUNCTION_ARGS)
{
	text	   *t = PG_GETARG_TEXT_PP(0);
	SimhashFeatureSet *fs = SimhashExtractFeatures(t, false);
	uint64		fp = SimhashFeatureSetFingerprint(fs);

	SimhashFreeFeatureSet(fs);
	PG_FREE_IF_COPY(t, 0);
	PG_RETURN_SIMHASH64(fp);
}

/*
 * simhash(text[]) -> simhash64
 *		Each element is a feature of weight 1; repeated elements add up.
 */
Datum
simhash_features_array(PG_FUNCTION_ARGS)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	SimhashCounters c;

	SimhashCheckOneDimensional(arr, "feature array");
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);

	SimhashCountersInit(&c);
	for (int i = 0; i < n; i++)
	{
		text	   *f;

		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("feature array must not contain nulls"),
					 errdetail("Element %d is null.", i + 1)));
		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		f = DatumGetTextPP(elems[i]);
		SimhashCountersAdd(&c, SimhashHashServerString(VARDATA_ANY(f),
													   VARSIZE_ANY_EXHDR(f)),
						   1.0);
	}
	PG_RETURN_SIMHASH64(SimhashCountersFinish(&c));
}

/*
 * simhash(text[], float8[]) -> simhash64
 *		Features with caller-chosen weights (TF-IDF, say), in array order.
 */
Datum
simhash_weighted_features(PG_FUNCTION_ARGS)
{
	ArrayType  *farr = PG_GETARG_ARRAYTYPE_P(0);
	ArrayType  *warr = PG_GETARG_ARRAYTYPE_P(1);
	Datum	   *felems,
			   *welems;
	bool	   *fnulls,
			   *wnulls;
	int			nf,
				nw;
	SimhashCounters c;

	SimhashCheckOneDimensional(farr, "feature array");
	SimhashCheckOneDimensional(warr, "weight array");
	deconstruct_array(farr, TEXTOID, -1, false, TYPALIGN_INT, &felems, &fnulls, &nf);
	deconstruct_array(warr, FLOAT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
					  &welems, &wnulls, &nw);
	if (nf != nw)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("feature and weight arrays must have the same length"),
				 errdetail("There are %d features and %d weights.", nf, nw)));

	SimhashCountersInit(&c);
	for (int i = 0; i < nf; i++)
	{
		text	   *f;
		double		w;

		if (fnulls[i] || wnulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s array must not contain nulls",
							fnulls[i] ? "feature" : "weight"),
					 errdetail("Element %d is null.", i + 1)));
		w = DatumGetFloat8(welems[i]);
		if (isnan(w) || isinf(w) || w < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("feature weight must be a finite number greater than or equal to zero"),
					 errdetail("Weight %d is %s.", i + 1, float8out_internal(w))));
		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		f = DatumGetTextPP(felems[i]);
		SimhashCountersAdd(&c, SimhashHashServerString(VARDATA_ANY(f),
													   VARSIZE_ANY_EXHDR(f)),
						   w);
	}
	PG_RETURN_SIMHASH64(SimhashCountersFinish(&c));
}

/*
 * simhash(tsvector) -> simhash64
 *		Lexemes are features.  A lexeme weighs the sum over its positions of
 *		1, 2, 4 or 10 for position class D, C, B or A (1 if the tsvector has
 *		no positions), capped like term frequencies at max(8, W / 16) with W
 *		the sum of min(weight, 8).
 */
Datum
simhash_tsvector(PG_FUNCTION_ARGS)
{
	TSVector	tsv = PG_GETARG_TSVECTOR(0);
	WordEntry  *entries = ARRPTR(tsv);
	char	   *strings = STRPTR(tsv);
	SimhashCounters c;

	double	   *weights = palloc(sizeof(double) * Max(tsv->size, 1));
	uint64		w8 = 0;
	double		cap;

	for (int i = 0; i < tsv->size; i++)
	{
		WordEntry  *we = &entries[i];
		int			npos = POSDATALEN(tsv, we);

		weights[i] = 0;
		if (npos == 0)
			weights[i] = 1.0;
		for (int k = 0; k < npos; k++)
			weights[i] += simhash_tsweights[WEP_GETWEIGHT(POSDATAPTR(tsv, we)[k])];
		w8 += (uint64) Min(weights[i], (double) SIMHASH_CAP_MIN);
	}
	cap = (double) SimhashWeightCap(w8);

	SimhashCountersInit(&c);
	for (int i = 0; i < tsv->size; i++)
		SimhashCountersAdd(&c, SimhashHashServerString(strings + entries[i].pos,
													   entries[i].len),
						   Min(weights[i], cap));
	pfree(weights);
	PG_FREE_IF_COPY(tsv, 0);
	PG_RETURN_SIMHASH64(SimhashCountersFinish(&c));
}

/*
 * simhash_features(text) -> setof (feature text, occurrences int4, weight float8)
 *		The features simhash(text) uses, in order of first appearance, with
 *		the weights it gives them.
 */
Datum
simhash_features(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	text	   *t = PG_GETARG_TEXT_PP(0);
	SimhashFeatureSet *fs;

	uint64		cap;

	InitMaterializedSRF(fcinfo, 0);
	fs = SimhashExtractFeatures(t, true);
	cap = SimhashFeatureSetCap(fs);

	for (uint32 k = 0; k < fs->nfeatures; k++)
	{
		uint32		slot = fs->order[k];
		uint32		n = fs->slots[slot].count;
		char	   *utf8;
		char	   *server;
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		utf8 = fs->text_buf + fs->text_off[slot];
		server = pg_any_to_server(utf8, (int) fs->text_len[slot], PG_UTF8);
		if (server == utf8)
			values[0] = PointerGetDatum(cstring_to_text_with_len(utf8,
																 fs->text_len[slot]));
		else
			values[0] = PointerGetDatum(cstring_to_text(server));
		values[1] = Int32GetDatum((int32) Min(n, (uint32) PG_INT32_MAX));
		values[2] = Float8GetDatum((double) Min((uint64) n, cap));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	SimhashFreeFeatureSet(fs);
	return (Datum) 0;
}
