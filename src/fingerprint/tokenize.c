/*-------------------------------------------------------------------------
 *
 * tokenize.c
 *	  Features of a UTF-8 text for simhash().
 *
 * The token stream: segments, NFKC, case folding, character classes, and
 * the fast paths for ASCII words and Han characters.  The feature table is
 * in featureset.c, the byte classes in textscan.h, the UTF-8 codec in utf8codec.h.  See README.md,
 * "The fingerprint, to the bit", and src/README, "The fingerprint".
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/fingerprint/tokenize.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/unicode_norm.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "featureadd.h"
#include "hancount.h"
#include "simhash.h"
#include "textscan.h"
#include "unicode_table.h"
#include "utf8codec.h"
#include "wordhash.h"

/* property bits of a Han character that is NFKC-stable and does not fold */
#define SIMHASH_HAN_MASK \
	(SIMHASH_UCLASS_MASK | SIMHASH_UFLAG_STABLE | SIMHASH_UFLAG_FOLDS)
#define SIMHASH_HAN_PLAIN		(SIMHASH_UCLASS_HAN | SIMHASH_UFLAG_STABLE)

/* longest normalisation segment, in code points */
#define SIMHASH_MAX_SEGMENT		32

/* bytes of input handled between interrupt checks */
#define SIMHASH_CHUNK			(1024 * 1024)

/*
 * Longest word kept in memory by simhash(text): the bytes of a longer word
 * go into an incremental XXH3 state (which gives the same hash), so one
 * huge word costs no more memory than a short one.
 */
#define SIMHASH_WORD_BUFFER		(64 * 1024)

struct SimhashTokenizer
{
	SimhashFeatureSet *fs;
	char	   *word;			/* UTF-8 of the word being collected */
	size_t		wlen;
	size_t		wsize;
	bool		streaming;		/* has part of the word gone into hstate? */
	XXH3_state_t *hstate;		/* hash of the word's bytes before word[]
								 * (allocated when first needed) */
	void	   *hstate_mem;		/* what palloc returned for hstate */
	pg_wchar	kana_prev;		/* previous kana in the current kana run */
	int			kana_run;		/* length of the current kana run */
	char	   *carry;			/* UTF-8 input not consumed yet */
	size_t		carried;
	SimhashHanCounts han;		/* common Han characters (unless keep_text;
								 * taken at the first one) */
};

/* Look up the property byte of a code point in the generated table. */
static inline uint8
SimhashCharProps(pg_wchar c)
{
	if (c >= 0x110000)
		return SIMHASH_UCLASS_SEP | SIMHASH_UFLAG_BOUNDARY | SIMHASH_UFLAG_STABLE;
	return simhash_ustage2[((uint32) simhash_ustage1[c >> SIMHASH_UBLOCK_BITS]
							<< SIMHASH_UBLOCK_BITS) |
						   (c & ((1 << SIMHASH_UBLOCK_BITS) - 1))];
}

/* Count one occurrence of the feature whose UTF-8 text is s[0..len). */
static inline void
SimhashAddFeature(SimhashFeatureSet *fs, const char *s, size_t len)
{
	SimhashAddFeatureHash(fs, XXH3_64bits(s, len), s, len);
}

/*
 * The word buffer is full: simhash(text), which needs only the hash, moves
 * its bytes into the incremental hash state; otherwise it grows.
 */
static pg_noinline void
SimhashGrowWord(SimhashTokenizer *tk, size_t extra)
{
	if (!tk->fs->keep_text && tk->wlen + extra > SIMHASH_WORD_BUFFER)
	{
		if (tk->hstate == NULL)
		{
			/* XXH3_state_t must be 64-byte aligned, more than palloc's */
			tk->hstate_mem = palloc(sizeof(XXH3_state_t) + 63);
			tk->hstate = (XXH3_state_t *) TYPEALIGN(64, tk->hstate_mem);
		}
		if (!tk->streaming)
		{
			XXH3_64bits_reset(tk->hstate);
			tk->streaming = true;
		}
		XXH3_64bits_update(tk->hstate, tk->word, tk->wlen);
		tk->wlen = 0;
		if (extra <= tk->wsize)
			return;
	}
	if (tk->wlen + extra >= MaxAllocSize - VARHDRSZ)
		SimhashReportFeatureTooLong(tk->wlen);
	while (tk->wlen + extra > tk->wsize)
		tk->wsize *= 2;
	tk->word = repalloc_huge(tk->word, tk->wsize);
}

/* Make room for "extra" more bytes in the word buffer. */
static inline void
SimhashReserveWord(SimhashTokenizer *tk, size_t extra)
{
	if (tk->wlen + extra > tk->wsize)
		SimhashGrowWord(tk, extra);
}

/* End the current word, if any, making it a feature. */
static inline void
SimhashEndWord(SimhashTokenizer *tk)
{
	if (tk->streaming)
	{
		XXH3_64bits_update(tk->hstate, tk->word, tk->wlen);
		SimhashAddFeatureHash(tk->fs, XXH3_64bits_digest(tk->hstate), NULL, 0);
		tk->streaming = false;
		tk->wlen = 0;
	}
	else if (tk->wlen > 0)
	{
		SimhashAddFeature(tk->fs, tk->word, tk->wlen);
		tk->wlen = 0;
	}
}

/* End the current kana run; a run of one kana is a feature by itself. */
static inline void
SimhashEndKana(SimhashTokenizer *tk)
{
	if (tk->kana_run == 1)
	{
		char		buf[4];

		SimhashAddFeature(tk->fs, buf, SimhashEncodeUtf8(tk->kana_prev, buf));
	}
	tk->kana_run = 0;
}

/* A separator: end the current word and kana run. */
static inline void
SimhashEmitSeparator(SimhashTokenizer *tk)
{
	SimhashEndWord(tk);
	if (tk->kana_run > 0)
		SimhashEndKana(tk);
}

/*
 * Feed one normalised, case-folded code point, whose property byte is
 * props, to the feature extractor.
 */
static inline void
SimhashEmitChar(SimhashTokenizer *tk, pg_wchar c, uint8 props)
{
	char		buf[8];
	int			n;

	switch (props & SIMHASH_UCLASS_MASK)
	{
		case SIMHASH_UCLASS_WORD:
			if (tk->kana_run > 0)
				SimhashEndKana(tk);
			SimhashReserveWord(tk, 4);
			tk->wlen += SimhashEncodeUtf8(c, tk->word + tk->wlen);
			break;
		case SIMHASH_UCLASS_HAN:
			SimhashEndWord(tk);
			if (tk->kana_run > 0)
				SimhashEndKana(tk);
			SimhashAddFeature(tk->fs, buf, SimhashEncodeUtf8(c, buf));
			break;
		case SIMHASH_UCLASS_KANA:
			SimhashEndWord(tk);
			if (tk->kana_run > 0)
			{
				n = SimhashEncodeUtf8(tk->kana_prev, buf);
				n += SimhashEncodeUtf8(c, buf + n);
				SimhashAddFeature(tk->fs, buf, n);
			}
			tk->kana_prev = c;
			tk->kana_run++;
			break;
		default:
			SimhashEmitSeparator(tk);
			break;
	}
}

/* Case fold a normalised code point that folds, and feed the result. */
static pg_noinline void
SimhashEmitFolding(SimhashTokenizer *tk, pg_wchar c)
{
	int			lo = 0,
				hi = lengthof(simhash_folds) - 1;

	while (lo <= hi)
	{
		int			mid = (lo + hi) / 2;

		if (simhash_folds[mid].cp == c)
		{
			for (int k = 0; k < 3 && simhash_folds[mid].to[k] != 0; k++)
				SimhashEmitChar(tk, simhash_folds[mid].to[k],
								SimhashCharProps(simhash_folds[mid].to[k]));
			return;
		}
		if (simhash_folds[mid].cp < c)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	elog(ERROR, "code point U+%04X is flagged as folding but has no folding", c);
}

/* Case fold a normalised code point of property byte props and feed it. */
static inline void
SimhashEmitFolded(SimhashTokenizer *tk, pg_wchar c, uint8 props)
{
	if (props & SIMHASH_UFLAG_FOLDS)
		SimhashEmitFolding(tk, c);
	else
		SimhashEmitChar(tk, c, props);
}

/* Normalise a segment of code points to NFKC and feed the result. */
static pg_noinline void
SimhashEmitNormalized(SimhashTokenizer *tk, const pg_wchar *seg, int n)
{
	pg_wchar	input[SIMHASH_MAX_SEGMENT + 1];
	pg_wchar   *output;

	Assert(n <= SIMHASH_MAX_SEGMENT);
	memcpy(input, seg, sizeof(pg_wchar) * n);
	input[n] = 0;
	output = unicode_normalize(UNICODE_NFKC, input);
	for (pg_wchar *p = output; *p; p++)
		SimhashEmitFolded(tk, *p, SimhashCharProps(*p));
	pfree(output);
}

/*
 * Feed one segment of code points; props is the property byte of its
 * first code point.
 */
static inline void
SimhashEmitSegment(SimhashTokenizer *tk, const pg_wchar *seg, int n, uint8 props)
{
	if (n == 1)
	{
		if (props & SIMHASH_UFLAG_STABLE)
		{
			SimhashEmitFolded(tk, seg[0], props);
			return;
		}
		if (props & SIMHASH_UFLAG_NFKC_SEP)
		{
			/* normalises to separators only: no need to normalise it */
			SimhashEmitSeparator(tk);
			return;
		}
	}
	SimhashEmitNormalized(tk, seg, n);
}

/*
 * Decode the code point at s[0..len) (see SimhashDecodeUtf8).  A sequence
 * cut off by the end is U+FFFD if "final", else 0 is returned: wait for
 * more input.
 */
static inline int
SimhashReadChar(const unsigned char *s, size_t len, bool final, pg_wchar *c)
{
	int			n = SimhashDecodeUtf8(s, len, c);

	if (n == 0 && final)
	{
		*c = 0xFFFD;			/* truncated sequence at the very end */
		n = (int) len;
	}
	return n;
}

/* longest upper-case ASCII word lower-cased on the stack */
#define SIMHASH_SHORT_WORD		64

/*
 * The common case of ASCII text: s[i] is an ASCII letter or digit, and no
 * word or kana run is pending.  Makes features of whole ASCII words, each
 * followed by an ASCII separator, and skips separators each followed by
 * an ASCII byte, for as long as that goes on.  Returns where it stopped,
 * for the general loop to go on from there.
 */
static inline size_t
SimhashFeedAscii(SimhashTokenizer *tk, const unsigned char *s, size_t i, size_t len)
{
	for (;;)
	{
		char		buf[SIMHASH_SHORT_WORD + 8];
		size_t		wl = 0;
		size_t		end;

		/*
		 * Find the end of the word 8 bytes at a time, lower-casing them
		 * into buf as we go: setting bit 5 lower-cases letters and leaves
		 * digits alone (bytes past the end of the word do not matter).
		 */
		for (;;)
		{
			uint64		raw;
			uint64		unused;
			uint64		stop;

			if (i + wl + 8 > len || wl >= SIMHASH_SHORT_WORD)
				return i;		/* near the end, or long: the general path */
			memcpy(&raw, s + i + wl, sizeof(raw));
			stop = ~SimhashAsciiWordBytes(SimhashLoadLE64(s + i + wl, 0), &unused) &
				SIMHASH_HIGH_BITS;
			raw |= SIMHASH_BYTES(0x20);
			memcpy(buf + wl, &raw, sizeof(raw));
			if (stop != 0)
			{
				wl += pg_rightmost_one_pos64(stop) / 8;
				break;
			}
			wl += 8;
		}
		end = i + wl;

		/* a whole word, followed by an ASCII separator? */
		if (end + 1 >= len || s[end] >= 0x80)
			return i;
		SimhashAddFeature(tk->fs, buf, wl);

		/* the separators after it, each followed by ASCII */
		i = end;
		if (s[i + 1] >= 0x80)
			return i;
		i++;
		if (!SimhashAsciiWordByte(s[i]))
		{
			i = SimhashSkipAsciiSeparators(s, i, len);
			if (i >= len || !SimhashAsciiWordByte(s[i]))
				return i;
		}
	}
}

/*
 * The common case of ASCII prose, a block of SIMHASH_BLOCK bytes at a time:
 * from s[i], with no word or kana run pending and s[i] ASCII, makes a
 * feature of every whole word of the block (a run of ASCII letters and
 * digits followed by an ASCII separator), hashed in place.  Only bytes
 * that are ASCII and followed by an ASCII byte are consumed: the byte
 * before a non-ASCII one may start a segment with it.  A word that may go
 * on past the block starts the next block.  Returns where it stopped (i if
 * nothing was done), always at a separator or the start of a word.
 */
static inline size_t
SimhashFeedAsciiBlocks(SimhashTokenizer *tk, const unsigned char *s, size_t i, size_t len)
{
	while (i + SIMHASH_BLOCK < len)
	{
		const unsigned char *blk = s + i;
		uint64		nonascii;
		uint64		words = SimhashClassifyBlock(blk, &nonascii);
		int			lim = SIMHASH_BLOCK;	/* bytes [0, lim) may be consumed */
		bool		more = false;	/* may the next block follow? */
		uint64		todo;

		if (nonascii != 0)
			lim = pg_rightmost_one_pos64(nonascii) - 1;
		else if (blk[SIMHASH_BLOCK] >= 0x80)
			lim = SIMHASH_BLOCK - 1;
		else
			more = true;
		if (lim <= 0)
			return i;
		todo = lim == SIMHASH_BLOCK ? words : words & ((UINT64CONST(1) << lim) - 1);
		while (todo != 0)
		{
			int			st = pg_rightmost_one_pos64(todo);
			uint64		after = ~words >> st;
			int			wl;

			/* the word must end, on an ASCII separator, before lim */
			if (after == 0 || st + pg_rightmost_one_pos64(after) >= lim)
			{
				if (st == 0)
					return i;	/* a word as long as the block */
				lim = st;
				break;
			}
			wl = pg_rightmost_one_pos64(after);
			if (wl <= SIMHASH_SHORT_HASH && !tk->fs->keep_text)
				SimhashAddFeatureHash(tk->fs, SimhashHashShort(blk + st, wl, 0x20),
									  NULL, 0);
			else
			{
				/* long, or its text is wanted: lower-case a copy */
				char		buf[SIMHASH_BLOCK];

				for (int k = 0; k < wl; k++)
					buf[k] = (char) (blk[st + k] | 0x20);
				SimhashAddFeature(tk->fs, buf, wl);
			}
			todo &= ~UINT64CONST(0) << (st + wl);
		}
		i += lim;
		if (!more)
			return i;
	}
	return i;
}

/* the fast path for Chinese (part of this file) */
#include "hanscan.h"

/*
 * Tokenize s[0..len).  Returns the number of bytes consumed.  Unless
 * "final", stops at the start of a segment whose end cannot be known yet;
 * the caller passes the rest again, followed by more input.
 */
static size_t
SimhashFeed(SimhashTokenizer *tk, const unsigned char *s, size_t len, bool final)
{
	size_t		i = 0;

	while (i < len)
	{
		unsigned char b = s[i];
		pg_wchar	c;
		uint8		props;
		int			n;

		if (b < 0x80 && tk->wlen == 0 && !tk->streaming && tk->kana_run == 0 &&
			i + SIMHASH_BLOCK < len &&
			(SimhashLoadLE64(s + i, 0) & SIMHASH_HIGH_BITS) == 0)
		{
			/* fast path: ASCII prose (8 bytes of it at least), a block at a time */
			size_t		start = i;

			i = SimhashFeedAsciiBlocks(tk, s, i, len);
			if (i != start)
				continue;
		}
		if (SimhashAsciiWordByte(b))
		{
			/* fast path: a run of ASCII letters and digits */
			size_t		start;
			bool		upper;

			if (tk->wlen == 0 && !tk->streaming)
			{
				if (tk->kana_run > 0)
					SimhashEndKana(tk);
				start = i;
				i = SimhashFeedAscii(tk, s, i, len);
				if (i != start)
					continue;
			}
			start = i;
			i = SimhashScanAsciiWord(s, i, len, &upper);

			/*
			 * A whole lower-case word between ASCII separators (the common
			 * case) or before a common Han character (a boundary) is hashed
			 * in place, without copying.
			 */
			if (!upper && i < len && tk->wlen == 0 &&
				(s[i] < 0x80 || SimhashCommonHanAt(s, i, len)))
			{
				if (tk->kana_run > 0)
					SimhashEndKana(tk);
				SimhashAddFeature(tk->fs, (const char *) s + start, i - start);
				continue;
			}
			/* the last one may start a segment with what follows */
			if (i == len ? !final : (s[i] >= 0x80 && !SimhashCommonHanAt(s, i, len)))
				i--;
			if (i > start)
			{
				size_t		k = start;
				char	   *out;

				if (tk->kana_run > 0)
					SimhashEndKana(tk);
				SimhashReserveWord(tk, i - start);
				out = tk->word + tk->wlen;
				/* letters and digits only: setting bit 5 lower-cases */
				for (; k + 8 <= i; k += 8, out += 8)
				{
					uint64		w;

					memcpy(&w, s + k, sizeof(w));
					w |= SIMHASH_BYTES(0x20);
					memcpy(out, &w, sizeof(w));
				}
				for (; k < i; k++)
					*out++ = (char) (s[k] | 0x20);
				tk->wlen += i - start;
			}
			/* a Han character ends the word: leave it to the Han path */
			if (i < len && s[i] >= 0x80 && SimhashCommonHanAt(s, i, len))
				SimhashEndWord(tk);
			if (i == len - 1 && !final)
				return i;
			if (i == start)
				goto slow;		/* single letter before a non-ASCII byte */
			continue;
		}
		if (b >= 0xE1 && tk->wlen == 0 && !tk->streaming && tk->kana_run == 0)
		{
			/* fast path: Chinese */
			size_t		start = i;

			i = SimhashFeedHan(tk, s, i, len);
			if (i != start)
				continue;
		}
		if (b < 0x80 && (i + 1 < len ? s[i + 1] < 0x80 || SimhashCommonHanAt(s, i + 1, len) : final))
		{
			/* fast path: ASCII separator followed by ASCII or Han */
			SimhashEmitSeparator(tk);
			i++;
			/* skip a run of separators */
			if (i + 1 < len && s[i] < 0x80 && !SimhashAsciiWordByte(s[i]) && s[i + 1] < 0x80)
				i = SimhashSkipAsciiSeparators(s, i + 1, len);
			continue;
		}

slow:
		/*
		 * General case: normalisation segments, one after the other, as
		 * long as they start with a non-ASCII code point.  (c, n, props)
		 * is the code point at s[i], which starts a segment.
		 */
		n = SimhashReadChar(s + i, len - i, final, &c);
		if (n == 0)
			return i;
		props = SimhashCharProps(c);
		for (;;)
		{
			pg_wchar	seg[SIMHASH_MAX_SEGMENT];
			int			nseg = 1;
			uint8		first = props;
			size_t		j = i + n;

			seg[0] = c;
			for (;;)
			{
				if (j == len)
				{
					if (!final)
						return i;
					n = 0;
					break;
				}
				n = SimhashReadChar(s + j, len - j, final, &c);
				if (n == 0)
					return i;
				props = SimhashCharProps(c);
				if (nseg == SIMHASH_MAX_SEGMENT || (props & SIMHASH_UFLAG_BOUNDARY))
					break;
				seg[nseg++] = c;
				j += n;
			}
			SimhashEmitSegment(tk, seg, nseg, first);
			i = j;
			if (n == 0 || c < 0x80 || (props & SIMHASH_HAN_MASK) == SIMHASH_HAN_PLAIN)
				break;			/* the end, ASCII or Han: back to the fast paths */
		}
	}
	return i;
}

/*
 * Start extracting the features of a text of about expect_bytes bytes (a
 * hint for the size of the feature table; 0 if unknown).
 */
SimhashTokenizer *
SimhashTokenizerCreate(bool keep_text, size_t expect_bytes)
{
	SimhashTokenizer *tk = palloc0(sizeof(SimhashTokenizer));

	tk->fs = SimhashCreateFeatureSet(keep_text, expect_bytes);
	tk->wsize = 64;
	tk->word = palloc(tk->wsize);
	return tk;
}

/*
 * Feed UTF-8 bytes: the next part of the text, cut anywhere ("final" for
 * the last part).  What the tokenizer cannot consume yet (the start of a
 * segment, at most a few hundred bytes) is kept for the next call.
 */
void
SimhashTokenizerPush(SimhashTokenizer *tk, const char *s, size_t len, bool final)
{
	const unsigned char *buf = (const unsigned char *) s;
	char	   *joined = NULL;
	size_t		pos = 0;

	if (tk->carried > 0)
	{
		joined = palloc(tk->carried + len);
		memcpy(joined, tk->carry, tk->carried);
		if (len > 0)
			memcpy(joined + tk->carried, s, len);
		len += tk->carried;
		buf = (const unsigned char *) joined;
		pfree(tk->carry);
		tk->carry = NULL;
		tk->carried = 0;
	}

	while (pos < len)
	{
		size_t		n = Min(len - pos, SIMHASH_CHUNK);
		bool		last = (pos + n == len);

		CHECK_FOR_INTERRUPTS();
		pos += SimhashFeed(tk, buf + pos, n, last && final);
		if (last && !final)
			break;
	}
	if (pos < len)
	{
		Assert(!final);
		tk->carried = len - pos;
		tk->carry = palloc(tk->carried);
		memcpy(tk->carry, buf + pos, tk->carried);
	}
	if (joined)
		pfree(joined);
}

/* End the text: the features, with their occurrences. */
SimhashFeatureSet *
SimhashTokenizerFinish(SimhashTokenizer *tk)
{
	SimhashFeatureSet *fs = tk->fs;

	Assert(tk->carried == 0);
	/* the final feed flushed nothing: end the last word or kana run */
	SimhashEndWord(tk);
	SimhashEndKana(tk);
	if (tk->han.count != NULL)
		SimhashHanCountsEnd(&tk->han, fs);
	pfree(tk->word);
	if (tk->hstate_mem)
		pfree(tk->hstate_mem);
	pfree(tk);
	return fs;
}
