/*-------------------------------------------------------------------------
 *
 * textscan.h
 *	  Byte classes, eight bytes at a time, and the UTF-8 codec of simhash(text).
 *
 * The scanning primitives of the tokenizer (tokenize.c): which ASCII bytes
 * are word characters, tested in a 64-bit word at a time (SWAR) or a
 * 64-byte block at a time.  The UTF-8 codec is in utf8codec.h.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/fingerprint/textscan.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SIMHASH_TEXTSCAN_H
#define SIMHASH_TEXTSCAN_H

#include "mb/pg_wchar.h"
#include "port/pg_bitutils.h"
#include "port/pg_bswap.h"

#if defined(__SSE2__) && !defined(SIMHASH_NO_SIMD)
#include <emmintrin.h>
#endif

/* classes of bytes: ASCII letters and digits (the word characters below
 * U+0080), and of those the upper-case letters; every other byte is 0 */
#define SIMHASH_BYTE_WORD		1
#define SIMHASH_BYTE_UPPER		2
#define W_	SIMHASH_BYTE_WORD
#define U_	(SIMHASH_BYTE_WORD | SIMHASH_BYTE_UPPER)
static const uint8 simhash_byteclass[256] = {
	['0'] = W_,['1'] = W_,['2'] = W_,['3'] = W_,['4'] = W_,
	['5'] = W_,['6'] = W_,['7'] = W_,['8'] = W_,['9'] = W_,
	['A'] = U_,['B'] = U_,['C'] = U_,['D'] = U_,['E'] = U_,
	['F'] = U_,['G'] = U_,['H'] = U_,['I'] = U_,['J'] = U_,
	['K'] = U_,['L'] = U_,['M'] = U_,['N'] = U_,['O'] = U_,
	['P'] = U_,['Q'] = U_,['R'] = U_,['S'] = U_,['T'] = U_,
	['U'] = U_,['V'] = U_,['W'] = U_,['X'] = U_,['Y'] = U_,
	['Z'] = U_,
	['a'] = W_,['b'] = W_,['c'] = W_,['d'] = W_,['e'] = W_,
	['f'] = W_,['g'] = W_,['h'] = W_,['i'] = W_,['j'] = W_,
	['k'] = W_,['l'] = W_,['m'] = W_,['n'] = W_,['o'] = W_,
	['p'] = W_,['q'] = W_,['r'] = W_,['s'] = W_,['t'] = W_,
	['u'] = W_,['v'] = W_,['w'] = W_,['x'] = W_,['y'] = W_,
	['z'] = W_,
};
#undef W_
#undef U_

/* Is byte b an ASCII letter or digit? */
#define SimhashAsciiWordByte(b)	(simhash_byteclass[(unsigned char) (b)] & SIMHASH_BYTE_WORD)

/*
 * Eight bytes at a time (SWAR): byte k of a 64-bit word is byte k of the
 * text, and a byte is "marked" when its bit 7 is set in a mask.
 */
#define SIMHASH_BYTES(x)		(UINT64CONST(0x0101010101010101) * (x))
#define SIMHASH_HIGH_BITS		SIMHASH_BYTES(0x80)

/* Load 4 bytes little-endian, each OR'ed with orbyte. */
static inline uint32
SimhashLoadLE32(const unsigned char *s, uint8 orbyte)
{
	uint32		v;

	memcpy(&v, s, sizeof(v));
#ifdef WORDS_BIGENDIAN
	v = pg_bswap32(v);
#endif
	return v | ((uint32) 0x01010101 * orbyte);
}

/* Load 8 bytes little-endian, each OR'ed with orbyte. */
static inline uint64
SimhashLoadLE64(const unsigned char *s, uint8 orbyte)
{
	uint64		v;

	memcpy(&v, s, sizeof(v));
#ifdef WORDS_BIGENDIAN
	v = pg_bswap64(v);
#endif
	return v | (UINT64CONST(0x0101010101010101) * orbyte);
}

/*
 * Mark the bytes of w7 in [lo, hi]; w7's bytes must be below 0x80, so that
 * no sum carries into the next byte.
 */
static inline uint64
SimhashBytesInRange(uint64 w7, unsigned char lo, unsigned char hi)
{
	return (w7 + SIMHASH_BYTES(0x80 - lo)) & ~(w7 + SIMHASH_BYTES(0x7F - hi)) &
		SIMHASH_HIGH_BITS;
}

/* Mark the ASCII letters and digits of w; *upper: the upper-case letters. */
static inline uint64
SimhashAsciiWordBytes(uint64 w, uint64 *upper)
{
	uint64		w7 = w & SIMHASH_BYTES(0x7F);
	uint64		ascii = ~w & SIMHASH_HIGH_BITS;
	uint64		letters = SimhashBytesInRange(w7 | SIMHASH_BYTES(0x20), 'a', 'z');
	uint64		digits = SimhashBytesInRange(w7, '0', '9');

	*upper = SimhashBytesInRange(w7, 'A', 'Z') & ascii;
	return (letters | digits) & ascii;
}

/*
 * The end of the run of ASCII letters and digits that starts at s[i]
 * (the first other byte, or len); *upper tells whether the run has an
 * upper-case letter.
 */
static inline size_t
SimhashScanAsciiWord(const unsigned char *s, size_t i, size_t len, bool *upper)
{
	uint64		up = 0;

	while (i + 8 <= len)
	{
		uint64		wup;
		uint64		stop = ~SimhashAsciiWordBytes(SimhashLoadLE64(s + i, 0), &wup) &
			SIMHASH_HIGH_BITS;

		/* the bits of the bytes before the first stop (all if none) */
		up |= wup & ((stop & (~stop + 1)) - 1);
		if (stop != 0)
		{
			*upper = (up != 0);
			return i + pg_rightmost_one_pos64(stop) / 8;
		}
		i += 8;
	}
	while (i < len && SimhashAsciiWordByte(s[i]))
	{
		up |= simhash_byteclass[s[i]] & SIMHASH_BYTE_UPPER;
		i++;
	}
	*upper = (up != 0);
	return i;
}

/*
 * The end of the run of ASCII separators from s[i] each followed by an
 * ASCII byte (a separator before a non-ASCII byte may start a segment with
 * it and is left to the general path).
 */
static inline size_t
SimhashSkipAsciiSeparators(const unsigned char *s, size_t i, size_t len)
{
	while (i + 9 <= len)
	{
		uint64		w = SimhashLoadLE64(s + i, 0);
		uint64		unused;
		uint64		go = ~SimhashAsciiWordBytes(w, &unused) & ~w &
			~SimhashLoadLE64(s + i + 1, 0) & SIMHASH_HIGH_BITS;
		uint64		stop = ~go & SIMHASH_HIGH_BITS;

		if (stop != 0)
			return i + pg_rightmost_one_pos64(stop) / 8;
		i += 8;
	}
	while (i + 1 < len && s[i] < 0x80 && !SimhashAsciiWordByte(s[i]) && s[i + 1] < 0x80)
		i++;
	return i;
}

/*
 * Gather bit 7 of each byte of a SWAR mask into a byte: bit k is set when
 * byte k is marked (the partial products land on distinct bits, so the
 * multiplication cannot carry into the top byte).
 */
static inline uint32
SimhashPackMarks(uint64 marks)
{
	return (uint32) (((marks >> 7) * UINT64CONST(0x0102040810204080)) >> 56);
}

/* bytes classified at a time by SimhashClassifyBlock */
#define SIMHASH_BLOCK			64

/*
 * Classify the SIMHASH_BLOCK bytes at s: bit k of the result is set when
 * s[k] is an ASCII letter or digit, and bit k of *nonascii when s[k] is not
 * ASCII.  With SSE2 (every x86-64) 16 bytes at a time; elsewhere, or built
 * with -DSIMHASH_NO_SIMD, in plain C eight bytes at a time.  Both give the
 * same masks.
 */
#if defined(__SSE2__) && !defined(SIMHASH_NO_SIMD)
static inline uint64
SimhashClassifyBlock(const unsigned char *s, uint64 *nonascii)
{
	const __m128i bit5 = _mm_set1_epi8(0x20);
	const __m128i below_a = _mm_set1_epi8('a' - 1);
	const __m128i above_z = _mm_set1_epi8('z' + 1);
	const __m128i below_0 = _mm_set1_epi8('0' - 1);
	const __m128i above_9 = _mm_set1_epi8('9' + 1);
	uint64		word = 0;
	uint64		high = 0;

	for (int k = 0; k < SIMHASH_BLOCK / 16; k++)
	{
		__m128i		x = _mm_loadu_si128((const __m128i *) (s + 16 * k));
		__m128i		lower = _mm_or_si128(x, bit5);

		/* signed compares: non-ASCII bytes are negative, so never in range */
		__m128i		letters = _mm_and_si128(_mm_cmpgt_epi8(lower, below_a),
											_mm_cmpgt_epi8(above_z, lower));
		__m128i		digits = _mm_and_si128(_mm_cmpgt_epi8(x, below_0),
										   _mm_cmpgt_epi8(above_9, x));

		word |= (uint64) (uint32) _mm_movemask_epi8(_mm_or_si128(letters, digits)) << (16 * k);
		high |= (uint64) (uint32) _mm_movemask_epi8(x) << (16 * k);
	}
	*nonascii = high;
	return word;
}
#else
static inline uint64
SimhashClassifyBlock(const unsigned char *s, uint64 *nonascii)
{
	uint64		word = 0;
	uint64		any = 0;

	for (int k = 0; k < SIMHASH_BLOCK / 8; k++)
	{
		uint64		w = SimhashLoadLE64(s + 8 * k, 0);
		uint64		unused;

		any |= w;
		word |= (uint64) SimhashPackMarks(SimhashAsciiWordBytes(w, &unused)) << (8 * k);
	}
	*nonascii = 0;
	if (any & SIMHASH_HIGH_BITS)
	{
		for (int k = 0; k < SIMHASH_BLOCK / 8; k++)
			*nonascii |= (uint64) SimhashPackMarks(SimhashLoadLE64(s + 8 * k, 0) &
												   SIMHASH_HIGH_BITS) << (8 * k);
	}
	return word;
}
#endif

#endif							/* SIMHASH_TEXTSCAN_H */
