/*-------------------------------------------------------------------------
 *
 * wordhash.h
 *	  XXH3-64 of a short feature read in place, lower-cased on the fly.
 *
 * XXH3_64bits() of up to 16 bytes reads at most the first and last 4 or 8
 * bytes of its input.  The tokenizer's fast paths hash an ASCII word of
 * the text without copying it: each load of the word's bytes is OR'ed with
 * 0x20 in every byte (which lower-cases ASCII letters and leaves digits
 * alone), so the result is XXH3_64bits() of the lower-cased word, bit for
 * bit.  The arithmetic is XXH3's own (seed 0, default secret), through the
 * helpers xxhash.h defines when inlined (XXH_INLINE_ALL).
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/fingerprint/wordhash.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SIMHASH_WORDHASH_H
#define SIMHASH_WORDHASH_H

#include "textscan.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

/* longest feature SimhashHashShort hashes */
#define SIMHASH_SHORT_HASH		16

/*
 * XXH3_64bits() of the len bytes at s, 1 <= len <= 16, each byte OR'ed with
 * orbyte first (0: the bytes as they are; 0x20: a lower-cased ASCII word).
 * Reads only s[0..len).
 */
static inline uint64
SimhashHashShort(const unsigned char *s, size_t len, uint8 orbyte)
{
	const xxh_u8 *secret = XXH3_kSecret;

	Assert(len >= 1 && len <= SIMHASH_SHORT_HASH);
	if (len > 8)
	{
		uint64		bitflip1 = XXH_readLE64(secret + 24) ^ XXH_readLE64(secret + 32);
		uint64		bitflip2 = XXH_readLE64(secret + 40) ^ XXH_readLE64(secret + 48);
		uint64		lo = SimhashLoadLE64(s, orbyte) ^ bitflip1;
		uint64		hi = SimhashLoadLE64(s + len - 8, orbyte) ^ bitflip2;

		return XXH3_avalanche(len + XXH_swap64(lo) + hi + XXH3_mul128_fold64(lo, hi));
	}
	if (len >= 4)
	{
		uint64		bitflip = XXH_readLE64(secret + 8) ^ XXH_readLE64(secret + 16);
		uint64		in1 = SimhashLoadLE32(s, orbyte);
		uint64		in2 = SimhashLoadLE32(s + len - 4, orbyte);

		return XXH3_rrmxmx((in2 + (in1 << 32)) ^ bitflip, len);
	}
	{
		uint32		c1 = s[0] | orbyte;
		uint32		c2 = s[len >> 1] | orbyte;
		uint32		c3 = s[len - 1] | orbyte;
		uint32		combined = (c1 << 16) | (c2 << 24) | c3 | ((uint32) len << 8);
		uint64		bitflip = XXH_readLE32(secret) ^ XXH_readLE32(secret + 4);

		return XXH64_avalanche((uint64) combined ^ bitflip);
	}
}

#endif							/* SIMHASH_WORDHASH_H */
