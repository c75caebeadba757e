/*-------------------------------------------------------------------------
 *
 * utf8codec.h
 *	  The strict UTF-8 decoder and encoder of simhash(text).
 *
 * Used by the tokenizer (tokenize.c) and by featureset.c to hash
 * caller-given features; every well-formed code point decodes exactly as
 * a strict decoder would, so fingerprints match the reference.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/fingerprint/utf8codec.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SIMHASH_UTF8CODEC_H
#define SIMHASH_UTF8CODEC_H

#include "mb/pg_wchar.h"

/*
 * Decode one code point from s[0..len).  Returns the number of bytes used,
 * or 0 if the sequence is cut off by the end of the buffer.  Ill-formed
 * sequences yield U+FFFD and consume one byte, so every well-formed code
 * point is decoded exactly as a strict decoder would.
 */
static inline int
SimhashDecodeUtf8(const unsigned char *s, size_t len, pg_wchar *cp)
{
	unsigned char b0 = s[0];
	int			n;
	pg_wchar	c;
	unsigned char lo = 0x80,
				hi = 0xBF;

	if (b0 < 0x80)
	{
		*cp = b0;
		return 1;
	}
	/* fast path: three bytes, any lead but E0 (overlong) and ED (surrogates) */
	if (b0 >= 0xE1 && b0 <= 0xEF && b0 != 0xED && len >= 3 &&
		(s[1] & 0xC0) == 0x80 && (s[2] & 0xC0) == 0x80)
	{
		*cp = ((pg_wchar) (b0 & 0x0F) << 12) | ((pg_wchar) (s[1] & 0x3F) << 6) |
			(s[2] & 0x3F);
		return 3;
	}
	if (b0 >= 0xC2 && b0 <= 0xDF)
	{
		n = 2;
		c = b0 & 0x1F;
	}
	else if (b0 >= 0xE0 && b0 <= 0xEF)
	{
		n = 3;
		c = b0 & 0x0F;
		if (b0 == 0xE0)
			lo = 0xA0;
		else if (b0 == 0xED)
			hi = 0x9F;
	}
	else if (b0 >= 0xF0 && b0 <= 0xF4)
	{
		n = 4;
		c = b0 & 0x07;
		if (b0 == 0xF0)
			lo = 0x90;
		else if (b0 == 0xF4)
			hi = 0x8F;
	}
	else
	{
		*cp = 0xFFFD;
		return 1;
	}

	for (int i = 1; i < n; i++)
	{
		unsigned char b;

		if ((size_t) i >= len)
			return 0;			/* maybe completed by the next chunk */
		b = s[i];
		if (b < lo || b > hi)
		{
			*cp = 0xFFFD;
			return 1;
		}
		lo = 0x80;
		hi = 0xBF;
		c = (c << 6) | (b & 0x3F);
	}
	*cp = c;
	return n;
}

/* Write the UTF-8 encoding of c to buf; returns its length. */
static inline int
SimhashEncodeUtf8(pg_wchar c, char *buf)
{
	if (c < 0x80)
	{
		buf[0] = (char) c;
		return 1;
	}
	if (c < 0x800)
	{
		buf[0] = (char) (0xC0 | (c >> 6));
		buf[1] = (char) (0x80 | (c & 0x3F));
		return 2;
	}
	if (c < 0x10000)
	{
		buf[0] = (char) (0xE0 | (c >> 12));
		buf[1] = (char) (0x80 | ((c >> 6) & 0x3F));
		buf[2] = (char) (0x80 | (c & 0x3F));
		return 3;
	}
	buf[0] = (char) (0xF0 | (c >> 18));
	buf[1] = (char) (0x80 | ((c >> 12) & 0x3F));
	buf[2] = (char) (0x80 | ((c >> 6) & 0x3F));
	buf[3] = (char) (0x80 | (c & 0x3F));
	return 4;
}

#endif							/* SIMHASH_UTF8CODEC_H */
