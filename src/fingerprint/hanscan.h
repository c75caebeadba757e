/*-------------------------------------------------------------------------
 *
 * hanscan.h
 *	  The tokenizer's fast path for Chinese text.
 *
 * Part of tokenize.c, which includes it once, after its own definitions
 * (SimhashTokenizer, SimhashCharProps): Han characters of three bytes
 * recognised from one 32-bit load, the common ones without a table lookup,
 * counted by code point (hancount.h, hancount.c; the counting is here so
 * that hancount.c does not include code that calls it), and the Chinese
 * punctuation between them skipped.  Apart from tokenize.c only to keep
 * files short.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/fingerprint/hanscan.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SIMHASH_HANSCAN_H
#define SIMHASH_HANSCAN_H

#include "hancount.h"
#include "textscan.h"
#include "wordhash.h"

/*
 * The code point of the 3-byte sequence whose first three bytes are the
 * low bytes of v (little-endian), or 0 if they are not a well-formed
 * sequence with a lead byte other than E0 and ED (the fast path leaves
 * those, rare in text, to the general decoder).
 */
static inline pg_wchar
SimhashDecode3Word(uint32 v)
{
	pg_wchar	c;

	if ((v & 0xC0C0F0) != 0x8080E0)
		return 0;
	c = ((v & 0x0F) << 12) | ((v & 0x3F00) >> 2) | ((v >> 16) & 0x3F);
	/* E0 and ED: overlong forms, surrogates and the rest of their range */
	if (c < 0x1000 || (c >= 0xD000 && c < 0xE000))
		return 0;
	return c;
}

/*
 * Is a code point of property byte props, when it is a segment of its own
 * and nothing is pending, only a separator?  As SimhashEmitSegment and
 * SimhashEmitChar treat it: NFKC-stable, not folding and of class SEP, or
 * not stable but normalizing to separators only.
 */
static inline bool
SimhashSkippableSeparator(uint8 props)
{
	if (!(props & SIMHASH_UFLAG_BOUNDARY))
		return false;
	if (props & SIMHASH_UFLAG_STABLE)
		return (props & (SIMHASH_UFLAG_FOLDS | SIMHASH_UCLASS_MASK)) == SIMHASH_UCLASS_SEP;
	return (props & SIMHASH_UFLAG_NFKC_SEP) != 0;
}

/*
 * The properties of the three-byte character whose UTF-8 starts in the low
 * bytes of v, if it is well formed and a boundary; 0 otherwise.
 */
static inline uint8
SimhashBoundaryProps3(uint32 v)
{
	pg_wchar	c = SimhashDecode3Word(v);
	uint8		props;

	if (c == 0)
		return 0;
	props = SimhashCharProps(c);
	return (props & SIMHASH_UFLAG_BOUNDARY) ? props : 0;
}

/*
 * Is the three-byte sequence in the low bytes of v (little-endian) a Han
 * character of U+4000-U+4DBF or U+4E00-U+9FFF (lead byte E4-E9, not E4 B7)?
 * Every code point there is Han, NFKC-stable, not folding and a boundary
 * (Unicode 14; sql_tests/checks/fastpath_check.py covers the whole range),
 * so no table lookup is needed.
 */
static inline bool
SimhashIsCommonHan(uint32 v)
{
	return (v & 0xC0C0F0) == 0x8080E0 && (uint32) ((v & 0xFF) - 0xE4) < 6 &&
		(v & 0xFFFF) != 0xB7E4;
}

/*
 * Does a common Han character start at s[i] (so that s[i] starts a segment,
 * and the character before it is a segment of its own)?
 */
static inline bool
SimhashCommonHanAt(const unsigned char *s, size_t i, size_t len)
{
	return i + 4 <= len && SimhashIsCommonHan((uint32) SimhashLoadLE32(s + i, 0));
}

/* Is the three-byte character at the low bytes of v a plain Han character? */
static inline bool
SimhashIsPlainHan(uint32 v)
{
	pg_wchar	c;

	if (SimhashIsCommonHan(v))
		return true;
	c = SimhashDecode3Word(v);
	return c != 0 && (SimhashCharProps(c) & SIMHASH_HAN_MASK) == SIMHASH_HAN_PLAIN;
}

/*
 * Count one occurrence of the Han character whose three UTF-8 bytes are the
 * low bytes of v (little-endian), well formed, of lead byte E4-E9.  count
 * and listed are hc's, nlisted its number of listed characters, kept by the
 * caller (in a register) and returned updated.  A character's index goes to
 * the list when its count leaves 0, without a branch (an entry is written
 * past the end, and kept only then).
 */
static pg_attribute_always_inline uint32
SimhashHanCountsAdd(SimhashHanCounts *hc, uint16 *count, uint32 *listed,
					uint32 nlisted, SimhashFeatureSet *fs, uint32 v)
{
	uint32		c = ((v & 0x0F) << 12) | ((v & 0x3F00) >> 2) | ((v >> 16) & 0x3F);
	uint32		idx = c - SIMHASH_HAN_BASE;
	uint32		n;

	Assert(idx < SIMHASH_HAN_CODES);
	n = (uint32) count[idx] + 1;
	listed[nlisted] = idx;
	nlisted += (n == 1);
	count[idx] = (uint16) n;
	if (unlikely(n == PG_UINT16_MAX || nlisted == SIMHASH_HAN_LISTED))
	{
		hc->nlisted = nlisted;
		SimhashHanCountsFlush(hc, fs);
		nlisted = 0;
	}
	return nlisted;
}

/*
 * Count the Han character whose three bytes are the low bytes of v, a
 * segment of its own, as a feature.  A common one (SimhashIsCommonHan, as
 * the caller knows from "common") is
 * counted by code point (hancount.h) unless the features' texts are kept;
 * hc, count, listed and *nlisted are the tokenizer's counts, the last kept
 * by the caller in a local variable.  Any other is hashed (XXH3_64bits of
 * its three bytes) and counted in the feature table.
 */
static pg_attribute_always_inline void
SimhashAddHan(SimhashTokenizer *tk, uint16 *count, uint32 *listed,
			  uint32 *nlisted, uint32 v, bool common)
{
	unsigned char b[3];

	Assert(common == SimhashIsCommonHan(v));
	if (common && count != NULL)
	{
		*nlisted = SimhashHanCountsAdd(&tk->han, count, listed, *nlisted, tk->fs, v);
		return;
	}
	b[0] = (unsigned char) v;
	b[1] = (unsigned char) (v >> 8);
	b[2] = (unsigned char) (v >> 16);
	SimhashAddFeatureHash(tk->fs, SimhashHashShort(b, 3, 0), (const char *) b, 3);
}

/*
 * Chinese: from s[i], Han characters of three bytes, NFKC-stable and not
 * folding, each followed by a boundary (so each is a segment of its own),
 * with no word or kana run pending: each is a feature of its own (a
 * well-formed sequence is the UTF-8 of what it decodes to); separators of
 * three bytes between them are skipped.  Returns where it stopped, i itself
 * if s[i] is no such character.
 */
static inline size_t
SimhashFeedHan(SimhashTokenizer *tk, const unsigned char *s, size_t i, size_t len)
{
	uint16	   *count = tk->han.count;
	uint32	   *listed = tk->han.listed;
	uint32		nlisted = tk->han.nlisted;
	uint32		cur;
	bool		common;			/* is cur a common Han character? */

	if (i + 7 > len)
		return i;
	cur = (uint32) SimhashLoadLE32(s + i, 0);
	if (!SimhashIsPlainHan(cur))
		return i;
	common = SimhashIsCommonHan(cur);
	if (count == NULL && !tk->fs->keep_text)
	{
		/* the text's first Han character: take the counts */
		SimhashHanCountsStart(&tk->han);
		count = tk->han.count;
		listed = tk->han.listed;
		nlisted = 0;
	}
	/* cur, at s[i], is such a character: is the next one a boundary? */
	while (i + 7 <= len)
	{
		uint32		v = (uint32) SimhashLoadLE32(s + i + 3, 0);
		uint8		props;

		if (SimhashIsCommonHan(v))
		{
			/* the common case: Han after Han */
			SimhashAddHan(tk, count, listed, &nlisted, cur, common);
			cur = v;
			common = true;
			i += 3;
			continue;
		}
		if ((v & 0x80) == 0)
		{
			/* ASCII is a boundary: back to the ASCII paths */
			SimhashAddHan(tk, count, listed, &nlisted, cur, common);
			i += 3;
			break;
		}
		props = SimhashBoundaryProps3(v);
		if (props == 0)
			break;
		SimhashAddHan(tk, count, listed, &nlisted, cur, common);
		i += 3;
		cur = v;
		common = false;
		if ((props & SIMHASH_HAN_MASK) == SIMHASH_HAN_PLAIN)
			continue;

		/*
		 * Chinese punctuation (U+3001, U+FF0C, ...): a separator that is a
		 * segment of its own ends nothing here (no word or kana run is
		 * pending), so it is skipped if the character after it is a
		 * boundary.
		 */
		if (!SimhashSkippableSeparator(props) || i + 7 > len)
			break;
		v = (uint32) SimhashLoadLE32(s + i + 3, 0);
		if ((v & 0x80) == 0)
		{
			i += 3;				/* ASCII next */
			break;
		}
		if (SimhashIsCommonHan(v))
		{
			i += 3;
			cur = v;
			common = true;
			continue;
		}
		props = SimhashBoundaryProps3(v);
		if (props == 0)
			break;
		i += 3;
		cur = v;
		common = false;
		if ((props & SIMHASH_HAN_MASK) != SIMHASH_HAN_PLAIN)
			break;
	}
	tk->han.nlisted = nlisted;
	return i;
}

#endif							/* SIMHASH_HANSCAN_H */
