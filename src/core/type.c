/*-------------------------------------------------------------------------
 *
 * type.c
 *	  The simhash64 type: I/O, casts, comparison, hashing.
 *
 * A simhash64 is an unsigned 64-bit value held in a pass-by-value int64
 * Datum.  Its text form is exactly 16 hexadecimal digits, most significant
 * first; output is lower case, input accepts either case.  There is no "0x"
 * prefix and no surrounding whitespace: a fingerprint is an identifier, and
 * a lenient parser would let two spellings of one value into the data.
 * Comparison is unsigned, so ORDER BY follows the text form.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/core/type.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "libpq/pqformat.h"
#include "utils/builtins.h"
#include "utils/sortsupport.h"
#include "utils/varbit.h"

#include "simhash.h"

#define SIMHASH_HEX_DIGITS	16

PG_FUNCTION_INFO_V1(simhash64_in);
PG_FUNCTION_INFO_V1(simhash64_out);
PG_FUNCTION_INFO_V1(simhash64_recv);
PG_FUNCTION_INFO_V1(simhash64_send);
PG_FUNCTION_INFO_V1(simhash64_to_bit);
PG_FUNCTION_INFO_V1(simhash64_from_bit);
PG_FUNCTION_INFO_V1(simhash64_eq);
PG_FUNCTION_INFO_V1(simhash64_ne);
PG_FUNCTION_INFO_V1(simhash64_lt);
PG_FUNCTION_INFO_V1(simhash64_le);
PG_FUNCTION_INFO_V1(simhash64_gt);
PG_FUNCTION_INFO_V1(simhash64_ge);
PG_FUNCTION_INFO_V1(simhash64_cmp);
PG_FUNCTION_INFO_V1(simhash64_sortsupport);
PG_FUNCTION_INFO_V1(simhash64_hash);
PG_FUNCTION_INFO_V1(simhash64_hash_extended);

/* Value of one hexadecimal digit, or -1. */
static inline int
SimhashHexValue(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Read a fingerprint written as exactly 16 hexadecimal digits (either case)
 * from the first len bytes of s; false if they are anything else.  The text
 * forms of simhash64 and simhash_ball share it.
 */
bool
SimhashParseHex(const char *s, size_t len, uint64 *value)
{
	uint64		v = 0;

	if (len != SIMHASH_HEX_DIGITS)
		return false;
	for (size_t i = 0; i < len; i++)
	{
		int			d = SimhashHexValue(s[i]);

		if (d < 0)
			return false;
		v = (v << 4) | (uint64) d;
	}
	*value = v;
	return true;
}

/*
 * simhash64_in(cstring) -> simhash64
 *		Parse exactly 16 hexadecimal digits.
 */
Datum
simhash64_in(PG_FUNCTION_ARGS)
{
	char	   *str = PG_GETARG_CSTRING(0);
	uint64		value;

	if (!SimhashParseHex(str, strlen(str), &value))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type %s: \"%s\"",
						"simhash64", str),
				 errdetail("A simhash64 value is exactly 16 hexadecimal digits, without prefix or spaces.")));
	PG_RETURN_SIMHASH64(value);
}

/*
 * simhash64_out(simhash64) -> cstring
 *		16 lower-case hexadecimal digits, most significant first.
 */
Datum
simhash64_out(PG_FUNCTION_ARGS)
{
	uint64		value = PG_GETARG_SIMHASH64(0);
	static const char digits[] = "0123456789abcdef";
	char	   *result = palloc(SIMHASH_HEX_DIGITS + 1);

	for (int i = SIMHASH_HEX_DIGITS - 1; i >= 0; i--)
	{
		result[i] = digits[value & 0xF];
		value >>= 4;
	}
	result[SIMHASH_HEX_DIGITS] = '\0';
	PG_RETURN_CSTRING(result);
}

/*
 * simhash64_recv(internal) -> simhash64
 *		Binary input: 8 bytes, network (big-endian) order.
 */
Datum
simhash64_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);

	PG_RETURN_SIMHASH64((uint64) pq_getmsgint64(buf));
}

/*
 * simhash64_send(simhash64) -> bytea
 *		Binary output: 8 bytes, network (big-endian) order.
 */
Datum
simhash64_send(PG_FUNCTION_ARGS)
{
	uint64		value = PG_GETARG_SIMHASH64(0);
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendint64(&buf, (int64) value);
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/*
 * simhash64_to_bit(simhash64) -> bit(64)
 *		The first bit of the bit string is the most significant bit (63).
 */
Datum
simhash64_to_bit(PG_FUNCTION_ARGS)
{
	uint64		value = PG_GETARG_SIMHASH64(0);
	VarBit	   *result = palloc0(VARBITTOTALLEN(SIMHASH_BITS));
	bits8	   *p;

	SET_VARSIZE(result, VARBITTOTALLEN(SIMHASH_BITS));
	VARBITLEN(result) = SIMHASH_BITS;
	p = VARBITS(result);
	for (int i = 0; i < 8; i++)
		p[i] = (bits8) (value >> (56 - 8 * i));
	PG_RETURN_VARBIT_P(result);
}

/*
 * simhash64_from_bit(bit) -> simhash64
 *		Inverse of simhash64_to_bit; the bit string must be 64 bits long.
 */
Datum
simhash64_from_bit(PG_FUNCTION_ARGS)
{
	VarBit	   *arg = PG_GETARG_VARBIT_P(0);
	uint64		value = 0;
	bits8	   *p;

	if (VARBITLEN(arg) != SIMHASH_BITS)
		ereport(ERROR,
				(errcode(ERRCODE_STRING_DATA_LENGTH_MISMATCH),
				 errmsg("cannot cast a bit string of length %d to simhash64",
						VARBITLEN(arg)),
				 errdetail("A simhash64 value has exactly 64 bits.")));
	p = VARBITS(arg);
	for (int i = 0; i < 8; i++)
		value = (value << 8) | p[i];
	PG_RETURN_SIMHASH64(value);
}

/* Three-way unsigned comparison. */
static inline int
SimhashCompare(uint64 a, uint64 b)
{
	return (a > b) - (a < b);
}

/* simhash64 = simhash64 */
Datum
simhash64_eq(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(PG_GETARG_SIMHASH64(0) == PG_GETARG_SIMHASH64(1));
}

/* simhash64 <> simhash64 */
Datum
simhash64_ne(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(PG_GETARG_SIMHASH64(0) != PG_GETARG_SIMHASH64(1));
}

/* simhash64 < simhash64, unsigned */
Datum
simhash64_lt(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(PG_GETARG_SIMHASH64(0) < PG_GETARG_SIMHASH64(1));
}

/* simhash64 <= simhash64, unsigned */
Datum
simhash64_le(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(PG_GETARG_SIMHASH64(0) <= PG_GETARG_SIMHASH64(1));
}

/* simhash64 > simhash64, unsigned */
Datum
simhash64_gt(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(PG_GETARG_SIMHASH64(0) > PG_GETARG_SIMHASH64(1));
}

/* simhash64 >= simhash64, unsigned */
Datum
simhash64_ge(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(PG_GETARG_SIMHASH64(0) >= PG_GETARG_SIMHASH64(1));
}

/* btree support function 1: three-way comparison */
Datum
simhash64_cmp(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(SimhashCompare(PG_GETARG_SIMHASH64(0),
								   PG_GETARG_SIMHASH64(1)));
}

/* Sort comparator working on Datums directly. */
static int
SimhashFastCompare(Datum a, Datum b, SortSupport ssup)
{
	return SimhashCompare(DatumGetSimhash64(a), DatumGetSimhash64(b));
}

/* btree support function 2: sort support */
Datum
simhash64_sortsupport(PG_FUNCTION_ARGS)
{
	SortSupport ssup = (SortSupport) PG_GETARG_POINTER(0);

	ssup->comparator = SimhashFastCompare;
	PG_RETURN_VOID();
}

/* hash support function 1: 32-bit hash */
Datum
simhash64_hash(PG_FUNCTION_ARGS)
{
	uint64		value = PG_GETARG_SIMHASH64(0);

	return hash_uint32((uint32) value ^ (uint32) (value >> 32));
}

/* hash support function 2: seeded 64-bit hash */
Datum
simhash64_hash_extended(PG_FUNCTION_ARGS)
{
	uint64		value = PG_GETARG_SIMHASH64(0);

	return hash_uint32_extended((uint32) value ^ (uint32) (value >> 32),
								PG_GETARG_INT64(1));
}
