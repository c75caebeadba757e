/*-------------------------------------------------------------------------
 *
 * fingerprint.c
 *	  Charikar simhash of texts, feature arrays and tsvectors.
 *
 * Every variant ends in the same accumulation: 64 signed counters, one per
 * bit; a feature of weight w adds w to counter i when bit i of its hash is
 * 1 and subtracts w when it is 0; bit i of the fingerprint is 1 exactly when
 * counter i ends up greater than zero (a tie gives 0).  simhash(text) sums
 * integer weights exactly; the array and tsvector variants sum doubles in a
 * fixed order, so their sums are reproducible too.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/fingerprint/fingerprint.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "tsearch/ts_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/memutils.h"

#include "featureset.h"
#include "fingerprint.h"

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
 * that counter i = 2 acc[i] - total.  Features are added 8 bits per lane:
 * byte b of the hash selects, through a table, which of the 8 byte lanes of
 * lanes[b] receive the weight (one multiply-add per byte of the hash, 8 per
 * feature instead of 64 conditional adds); the lanes are flushed into acc[]
 * before any of them could pass 255.  Features heavier than that (only in
 * long texts, where the cap is above 255) are added bit by bit.
 */
typedef struct SimhashIntCounters
{
	uint64		lanes[8];		/* byte j of lanes[b]: sum for bit 8b + j */
	uint32		pending;		/* weight added to the lanes since the flush */
	uint64		acc[SIMHASH_BITS];
	uint64		total;
} SimhashIntCounters;

/* largest sum a byte lane may hold */
#define SIMHASH_LANE_MAX		255

/* byte value -> a 1 in byte lane j for each bit j that is set */
static uint64 simhash_spread[256];
static bool simhash_spread_ready = false;

/* Build the byte -> 8-bit lanes table. */
static void
SimhashInitSpread(void)
{
	for (int b = 0; b < 256; b++)
	{
		uint64		lanes = 0;

		for (int j = 0; j < 8; j++)
			if ((b >> j) & 1)
				lanes |= UINT64CONST(1) << (8 * j);
		simhash_spread[b] = lanes;
	}
	simhash_spread_ready = true;
}

/* Move the lane sums into the 64-bit counters. */
static pg_noinline void
SimhashIntFlush(SimhashIntCounters *c)
{
	for (int b = 0; b < 8; b++)
	{
		uint64		lanes = c->lanes[b];

		for (int j = 0; j < 8; j++)
			c->acc[8 * b + j] += (lanes >> (8 * j)) & 0xFF;
		c->lanes[b] = 0;
	}
	c->pending = 0;
}

/* Add a feature of integer weight w. */
static inline void
SimhashIntAdd(SimhashIntCounters *c, uint64 hash, uint64 w)
{
	if (w > SIMHASH_LANE_MAX)
	{
		/* too heavy for a lane: add it bit by bit */
		for (int i = 0; i < SIMHASH_BITS; i++)
			c->acc[i] += ((hash >> i) & 1) * w;
		c->total += w;
		return;
	}
	if (c->pending + w > SIMHASH_LANE_MAX)
		SimhashIntFlush(c);
	/* unrolled: gcc -O2 keeps the loop otherwise */
	c->lanes[0] += simhash_spread[(uint8) hash] * w;
	c->lanes[1] += simhash_spread[(uint8) (hash >> 8)] * w;
	c->lanes[2] += simhash_spread[(uint8) (hash >> 16)] * w;
	c->lanes[3] += simhash_spread[(uint8) (hash >> 24)] * w;
	c->lanes[4] += simhash_spread[(uint8) (hash >> 32)] * w;
	c->lanes[5] += simhash_spread[(uint8) (hash >> 40)] * w;
	c->lanes[6] += simhash_spread[(uint8) (hash >> 48)] * w;
	c->lanes[7] += simhash_spread[(uint8) (hash >> 56)] * w;
	c->pending += (uint32) w;
	c->total += w;
}

/*
 * The weight cap of an extracted feature set: max(8, W / 16), W being the
 * sum of min(occurrences, 8) over its features (kept up to date by the
 * tokenizer).
 */
uint64
SimhashFeatureSetCap(const SimhashFeatureSet *fs)
{
	return SimhashWeightCap(fs->w8);
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
	const uint32 *occupied = SimhashFeatureSetOccupied(fs);
	SimhashIntCounters c;
	uint64		fp = 0;

	if (!simhash_spread_ready)
		SimhashInitSpread();
	memset(&c, 0, sizeof(c));
	for (uint32 k = 0; k < fs->nfeatures; k++)
	{
		const SimhashFeatureSlot *slot = &fs->slots[occupied[k]];

		SimhashIntAdd(&c, SimhashSlotHash(slot), Min((uint64) slot->count, cap));
	}
	SimhashIntFlush(&c);

	/* counter i = 2 acc[i] - total; bit i is set iff it is positive */
	for (int i = 0; i < SIMHASH_BITS; i++)
		if (2 * c.acc[i] > c.total)
			fp |= UINT64CONST(1) << i;
	return fp;
}

/* Reject multidimensional arrays, which have no natural feature order. */
static void
SimhashCheckOneDimensional(ArrayType *arr, bool weights)
{
	if (ARR_NDIM(arr) <= 1)
		return;
	if (weights)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("weight array must be one-dimensional"),
				 errdetail("The array has %d dimensions.", ARR_NDIM(arr))));
	ereport(ERROR,
			(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
			 errmsg("feature array must be one-dimensional"),
			 errdetail("The array has %d dimensions.", ARR_NDIM(arr))));
}

/*
 * The last text simhash(text) fingerprinted, with its fingerprint.  A row
 * arriving in a table whose fingerprint is a generated column and that has
 * the near-duplicate trigger is fingerprinted twice, since BEFORE triggers
 * run before generated columns are computed.  Remembering one text costs a
 * comparison per call (and a copy when it differs) and spares the second
 * fingerprint; the function is immutable, so the answer cannot change.
 */
#define SIMHASH_MEMO_MAX_BYTES	(1024 * 1024)
static char *memo_text = NULL;
static Size memo_len = 0;
static Size memo_room = 0;
static uint64 memo_fp;
static bool memo_valid = false;

/* The remembered fingerprint of these bytes, if they are the last text's. */
static bool
SimhashMemoLookup(const char *data, Size len, uint64 *fp)
{
	if (!memo_valid || len != memo_len || memcmp(data, memo_text, len) != 0)
		return false;
	*fp = memo_fp;
	return true;
}

/* Remember a text and its fingerprint (texts up to 1 MB). */
static void
SimhashMemoStore(const char *data, Size len, uint64 fp)
{
	if (len > SIMHASH_MEMO_MAX_BYTES)
		return;
	memo_valid = false;
	if (len > memo_room || memo_text == NULL)
	{
		Size		room = Max(len, 1024);

		if (memo_text)
			pfree(memo_text);
		/* nothing dangles if the allocation fails */
		memo_text = NULL;
		memo_room = 0;
		memo_text = MemoryContextAlloc(TopMemoryContext, room);
		memo_room = room;
	}
	memcpy(memo_text, data, len);
	memo_len = len;
	memo_fp = fp;
	memo_valid = true;
}

/*
 * simhash(text) -> simhash64
 *		The fingerprint of a text, as specified in README.md.
 */
Datum
simhash_text(PG_FUNCTION_ARGS)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(PG_GETARG_DATUM(0));
	bool		plain = !VARATT_IS_EXTERNAL(v) && !VARATT_IS_COMPRESSED(v);
	SimhashFeatureSet *fs;
	uint64		fp;

	if (plain && SimhashMemoLookup(VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v), &fp))
		PG_RETURN_SIMHASH64(fp);
	fs = SimhashExtractFeatures(PG_GETARG_DATUM(0), false);
	fp = SimhashFeatureSetFingerprint(fs);
	SimhashFreeFeatureSet(fs);
	if (plain)
		SimhashMemoStore(VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v), fp);
	PG_RETURN_SIMHASH64(fp);
}

/* Raise the error for a null at index i (from 0) of a feature array. */
static void
SimhashRejectNullFeature(int i)
{
	ereport(ERROR,
			(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
			 errmsg("feature array must not contain nulls"),
			 errdetail("Element %d is null.", i + 1)));
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

	SimhashCheckOneDimensional(arr, false);
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);

	SimhashCountersInit(&c);
	for (int i = 0; i < n; i++)
	{
		text	   *f;

		if (nulls[i])
			SimhashRejectNullFeature(i);
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
 *		Every weight is first multiplied by the same power of two, 2^-e
 *		where e is the binary exponent of the largest weight (frexp), so
 *		that the largest is in [0.5, 1): the sums cannot overflow, and
 *		multiplying all weights by a power of two (exact in floating point)
 *		gives the same fingerprint.  For weights that sum without overflow
 *		this changes nothing, since the scaling is exact.
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
	double		maxw = 0;
	int			scale = 0;
	SimhashCounters c;

	SimhashCheckOneDimensional(farr, false);
	SimhashCheckOneDimensional(warr, true);
	deconstruct_array(farr, TEXTOID, -1, false, TYPALIGN_INT, &felems, &fnulls, &nf);
	deconstruct_array(warr, FLOAT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
					  &welems, &wnulls, &nw);
	if (nf != nw)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("feature and weight arrays must have the same length"),
				 errdetail("There are %d features and %d weights.", nf, nw)));

	/* check everything first: the scale depends on the largest weight */
	for (int i = 0; i < nf; i++)
	{
		double		w;

		if (fnulls[i])
			SimhashRejectNullFeature(i);
		if (wnulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("weight array must not contain nulls"),
					 errdetail("Element %d is null.", i + 1)));
		w = DatumGetFloat8(welems[i]);
		if (isnan(w) || isinf(w) || w < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("feature weight must be a finite number greater than or equal to zero"),
					 errdetail("Weight %d is %s.", i + 1, float8out_internal(w))));
		maxw = Max(maxw, w);
	}
	if (maxw > 0)
		(void) frexp(maxw, &scale);

	SimhashCountersInit(&c);
	for (int i = 0; i < nf; i++)
	{
		text	   *f = DatumGetTextPP(felems[i]);

		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		SimhashCountersAdd(&c, SimhashHashServerString(VARDATA_ANY(f),
													   VARSIZE_ANY_EXHDR(f)),
						   ldexp(DatumGetFloat8(welems[i]), -scale));
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
 * A feature's UTF-8 text as a text datum in the server encoding.  Case
 * folding and NFKC produce characters that some encodings cannot hold (µ
 * folds to Greek μ, which LATIN1 lacks): such a character is written
 * \uXXXX, or \UXXXXXXXX beyond the BMP, in lower-case hexadecimal.  A
 * backslash is a separator, never part of a feature, so an escape cannot be
 * mistaken for feature text.
 */
static text *
SimhashFeatureText(const char *utf8, size_t len, int encoding, Oid proc)
{
	StringInfoData buf;
	size_t		pos = 0;

	if (encoding == PG_UTF8 || encoding == PG_SQL_ASCII)
		proc = InvalidOid;		/* no conversion */

	initStringInfo(&buf);
	appendStringInfoSpaces(&buf, VARHDRSZ); /* room for the header */
	while (pos < len)
	{
		size_t		piece = Min(len - pos, 1024);
		int			done;

		/* whole characters only */
		while (pos + piece < len && (utf8[pos + piece] & 0xC0) == 0x80)
			piece--;
		if (buf.len + piece * MAX_CONVERSION_GROWTH + 16 >= MaxAllocSize)
			SimhashReportFeatureTooLong(pos + piece);
		if (!OidIsValid(proc))
		{
			appendBinaryStringInfo(&buf, utf8 + pos, (int) piece);
			pos += piece;
			continue;
		}
		enlargeStringInfo(&buf, (int) (piece * MAX_CONVERSION_GROWTH + 16));
		done = pg_do_encoding_conversion_buf(proc, PG_UTF8, encoding,
											 (unsigned char *) utf8 + pos, (int) piece,
											 (unsigned char *) buf.data + buf.len,
											 buf.maxlen - buf.len, true);
		buf.len += strlen(buf.data + buf.len);
		pos += done;
		if ((size_t) done < piece)
		{
			/* a character the server encoding cannot represent */
			const unsigned char *p = (const unsigned char *) utf8 + pos;
			pg_wchar	cp = utf8_to_unicode(p);

			appendStringInfo(&buf, cp > 0xFFFF ? "\\U%08x" : "\\u%04x", cp);
			pos += pg_utf_mblen(p);
		}
	}
	SET_VARSIZE(buf.data, buf.len);
	return (text *) buf.data;
}

/*
 * simhash_features(text) -> setof (feature text, occurrences int4, weight float8)
 *		The features simhash(text) uses, in order of first appearance, with
 *		the weights it gives them.  Characters of a feature that the server
 *		encoding cannot hold are escaped (SimhashFeatureText).
 */
Datum
simhash_features(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			encoding = GetDatabaseEncoding();
	Oid			proc = InvalidOid;
	SimhashFeatureSet *fs;
	uint32	   *counts;
	uint64		cap;

	InitMaterializedSRF(fcinfo, 0);
	if (encoding != PG_UTF8 && encoding != PG_SQL_ASCII)
	{
		proc = FindDefaultConversionProc(PG_UTF8, encoding);
		if (!OidIsValid(proc))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_FUNCTION),
					 errmsg("default conversion function for encoding \"%s\" to \"%s\" does not exist",
							pg_encoding_to_char(PG_UTF8),
							pg_encoding_to_char(encoding))));
	}
	fs = SimhashExtractFeatures(PG_GETARG_DATUM(0), true);
	cap = SimhashFeatureSetCap(fs);

	/* occurrences in order of first appearance */
	counts = palloc_extended(sizeof(uint32) * Max(fs->nfeatures, 1), MCXT_ALLOC_HUGE);
	for (uint32 k = 0; k < fs->nfeatures; k++)
	{
		uint32		slot = SimhashFeatureSetOccupied(fs)[k];

		counts[fs->featno[slot]] = fs->slots[slot].count;
	}

	for (uint32 k = 0; k < fs->nfeatures; k++)
	{
		size_t		start = k > 0 ? fs->text_end[k - 1] : 0;
		uint32		n = counts[k];
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		if ((k & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		values[0] = PointerGetDatum(SimhashFeatureText(fs->text_buf + start,
													   fs->text_end[k] - start,
													   encoding, proc));
		values[1] = Int32GetDatum((int32) Min(n, (uint32) PG_INT32_MAX));
		values[2] = Float8GetDatum((double) Min((uint64) n, cap));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		pfree(DatumGetPointer(values[0]));
	}
	pfree(counts);
	SimhashFreeFeatureSet(fs);
	return (Datum) 0;
}
