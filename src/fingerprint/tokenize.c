/*-------------------------------------------------------------------------
 *
 * tokenize.c
 *	  Features of a UTF-8 text for simhash().
 *
 * Segments, NFKC, case folding, character classes, XXH3-64.  See README.md,
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

#include "simhash.h"
#include "unicode_table.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

/* property bits of a Han character that is NFKC-stable and does not fold */
#define SIMHASH_HAN_MASK \
	(SIMHASH_UCLASS_MASK | SIMHASH_UFLAG_STABLE | SIMHASH_UFLAG_FOLDS)
#define SIMHASH_HAN_PLAIN		(SIMHASH_UCLASS_HAN | SIMHASH_UFLAG_STABLE)

/* longest normalisation segment, in code points */
#define SIMHASH_MAX_SEGMENT		32

/* bytes of input handled between interrupt checks */
#define SIMHASH_CHUNK			(1024 * 1024)

/* initial number of hash table slots (a power of 2) */
#define SIMHASH_INITIAL_SLOTS	256
/* most slots allocated up front for a long text (768 kB) */
#define SIMHASH_EXPECT_SLOTS	((uint32) 1 << 16)

/*
 * Longest word kept in memory by simhash(text): the bytes of a longer word
 * go into an incremental XXH3 state (which gives the same hash), so one
 * huge word costs no more memory than a short one.
 */
#define SIMHASH_WORD_BUFFER		(64 * 1024)

/*
 * Tables of up to this many slots (12 MB) grow when half full, larger ones
 * when 3/4 full: short probe sequences where memory does not matter, and
 * 16-32 bytes per distinct feature where it does.
 */
#define SIMHASH_SPARSE_SLOTS	((uint32) 1 << 20)

/* count bit that marks a slot already rehashed while the table grows */
#define SIMHASH_SLOT_MOVED		((uint32) 1 << 31)
/* occurrence counts saturate below that bit */
#define SIMHASH_MAX_COUNT		(SIMHASH_SLOT_MOVED - 1)

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
};

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

/* Load 8 bytes of text, s[0] in the lowest byte. */
static inline uint64
SimhashLoad8(const unsigned char *s)
{
	uint64		w;

	memcpy(&w, s, sizeof(w));
#ifdef WORDS_BIGENDIAN
	w = pg_bswap64(w);
#endif
	return w;
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
		uint64		stop = ~SimhashAsciiWordBytes(SimhashLoad8(s + i), &wup) &
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
		uint64		w = SimhashLoad8(s + i);
		uint64		unused;
		uint64		go = ~SimhashAsciiWordBytes(w, &unused) & ~w &
			~SimhashLoad8(s + i + 1) & SIMHASH_HIGH_BITS;
		uint64		stop = ~go & SIMHASH_HIGH_BITS;

		if (stop != 0)
			return i + pg_rightmost_one_pos64(stop) / 8;
		i += 8;
	}
	while (i + 1 < len && s[i] < 0x80 && !SimhashAsciiWordByte(s[i]) && s[i + 1] < 0x80)
		i++;
	return i;
}

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

/* Hash a feature's UTF-8 bytes: XXH3-64 with seed 0. */
uint64
SimhashHashFeature(const char *utf8, size_t len)
{
	return XXH3_64bits(utf8, len);
}

/*
 * Allocate an empty feature set in the current memory context, with room
 * for the features of a text of about expect_bytes bytes: a slot per 8-16
 * bytes (English prose has a distinct word per 25-30 bytes), from 256 up
 * to SIMHASH_EXPECT_SLOTS slots.  Longer texts grow the table as needed.
 */
static SimhashFeatureSet *
SimhashCreateFeatureSet(bool keep_text, size_t expect_bytes)
{
	SimhashFeatureSet *fs = palloc0(sizeof(SimhashFeatureSet));
	uint32		nslots = SIMHASH_INITIAL_SLOTS;

	while (nslots < SIMHASH_EXPECT_SLOTS && nslots < expect_bytes / 16)
		nslots *= 2;
	fs->mask = nslots - 1;
	fs->grow_at = nslots / 2;
	fs->slots = palloc0(sizeof(SimhashFeatureSlot) * nslots);
	fs->keep_text = keep_text;
	if (keep_text)
	{
		fs->featno = palloc(sizeof(uint32) * nslots);
		fs->ends_size = SIMHASH_INITIAL_SLOTS;
		fs->text_end = palloc(sizeof(size_t) * fs->ends_size);
		fs->text_size = 1024;
		fs->text_buf = palloc(fs->text_size);
	}
	return fs;
}

/* Free a feature set and everything it owns. */
void
SimhashFreeFeatureSet(SimhashFeatureSet *fs)
{
	pfree(fs->slots);
	if (fs->keep_text)
	{
		pfree(fs->featno);
		pfree(fs->text_end);
		pfree(fs->text_buf);
	}
	pfree(fs);
}

/*
 * Double the number of slots of a feature set, rehashing its entries in
 * place: the slot array is enlarged (realloc, which for large blocks moves
 * pages instead of copying them), so the old and the new table never exist
 * side by side.  Each entry not yet moved is taken out and put into the
 * first slot from its new home that is empty or holds another entry not yet
 * moved; that one is then moved in turn.  Slots of moved entries never
 * change again, so every entry stays reachable from its home.
 */
static void
SimhashGrowFeatureSet(SimhashFeatureSet *fs)
{
	uint32		oldslots = fs->mask + 1;
	uint32		newslots = oldslots * 2;
	uint32		newmask = newslots - 1;
	SimhashFeatureSlot *slots;
	uint32	   *featno = NULL;

	if (newslots > SIMHASH_MAX_SLOTS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("text has too many distinct features for simhash"),
				 errdetail("A text may have at most %u distinct features.",
						   (uint32) SIMHASH_MAX_FEATURES),
				 errhint("Fingerprint parts of the text separately.")));

	slots = repalloc_huge(fs->slots, sizeof(SimhashFeatureSlot) * newslots);
	memset(slots + oldslots, 0, sizeof(SimhashFeatureSlot) * oldslots);
	if (fs->keep_text)
		featno = repalloc_huge(fs->featno, sizeof(uint32) * newslots);

	for (uint32 i = 0; i < oldslots; i++)
	{
		SimhashFeatureSlot cur;
		uint32		curno = 0;

		if (slots[i].count == 0 || (slots[i].count & SIMHASH_SLOT_MOVED))
			continue;
		cur = slots[i];
		if (featno)
			curno = featno[i];
		slots[i].count = 0;
		for (;;)
		{
			uint32		slot = (uint32) SimhashSlotHash(&cur) & newmask;
			SimhashFeatureSlot next;
			uint32		nextno = 0;

			while (slots[slot].count & SIMHASH_SLOT_MOVED)
				slot = (slot + 1) & newmask;
			next = slots[slot];
			if (featno)
				nextno = featno[slot];
			slots[slot] = cur;
			slots[slot].count |= SIMHASH_SLOT_MOVED;
			if (featno)
				featno[slot] = curno;
			if (next.count == 0)
				break;
			/* an entry not moved yet was there: move it next */
			cur = next;
			curno = nextno;
		}
	}
	for (uint32 i = 0; i < newslots; i++)
		slots[i].count &= ~SIMHASH_SLOT_MOVED;

	fs->slots = slots;
	fs->featno = featno;
	fs->mask = newmask;
	fs->grow_at = newslots <= SIMHASH_SPARSE_SLOTS ? newslots / 2 : newslots / 4 * 3;
}

/* Record the first occurrence of a feature in an empty slot. */
static pg_noinline void
SimhashNewFeature(SimhashFeatureSet *fs, uint32 slot, uint64 h, const char *s, size_t len)
{
	memcpy(fs->slots[slot].hash, &h, sizeof(h));
	fs->slots[slot].count = 1;
	fs->w8++;
	if (fs->keep_text)
	{
		if (fs->text_used + len > fs->text_size)
		{
			while (fs->text_used + len > fs->text_size)
				fs->text_size *= 2;
			fs->text_buf = repalloc_huge(fs->text_buf, fs->text_size);
		}
		if (fs->nfeatures == fs->ends_size)
		{
			fs->ends_size *= 2;
			fs->text_end = repalloc_huge(fs->text_end, sizeof(size_t) * fs->ends_size);
		}
		memcpy(fs->text_buf + fs->text_used, s, len);
		fs->text_used += len;
		fs->text_end[fs->nfeatures] = fs->text_used;
		fs->featno[slot] = fs->nfeatures;
	}
	fs->nfeatures++;

	if (fs->nfeatures > fs->grow_at)
		SimhashGrowFeatureSet(fs);
}

/* Count one occurrence of the feature of hash h whose UTF-8 text is s[0..len). */
static inline void
SimhashAddFeatureHash(SimhashFeatureSet *fs, uint64 h, const char *s, size_t len)
{
	uint32		slot = (uint32) h & fs->mask;

	while (fs->slots[slot].count != 0)
	{
		if (SimhashSlotHash(&fs->slots[slot]) == h)
		{
			uint32		n = fs->slots[slot].count;

			fs->w8 += (n < SIMHASH_CAP_MIN);
			if (n < SIMHASH_MAX_COUNT)
				fs->slots[slot].count = n + 1;
			return;
		}
		slot = (slot + 1) & fs->mask;
	}
	SimhashNewFeature(fs, slot, h, s, len);
}

/* Occurrences of the feature of hash h in a feature set (0 if absent). */
uint32
SimhashFeatureSetCount(const SimhashFeatureSet *fs, uint64 h)
{
	uint32		slot = (uint32) h & fs->mask;

	while (fs->slots[slot].count != 0)
	{
		if (SimhashSlotHash(&fs->slots[slot]) == h)
			return fs->slots[slot].count;
		slot = (slot + 1) & fs->mask;
	}
	return 0;
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
			stop = ~SimhashAsciiWordBytes(SimhashLoad8(s + i + wl), &unused) &
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

/* Is s[0..2] a well-formed 3-byte sequence other than E0 and ED ones? */
#define SimhashPlain3(s) \
	((s)[0] >= 0xE1 && (s)[0] <= 0xEF && (s)[0] != 0xED && \
	 ((s)[1] & 0xC0) == 0x80 && ((s)[2] & 0xC0) == 0x80)
#define SimhashDecode3(s) \
	(((pg_wchar) ((s)[0] & 0x0F) << 12) | ((pg_wchar) ((s)[1] & 0x3F) << 6) | \
	 ((s)[2] & 0x3F))

/*
 * Chinese: from s[i], Han characters of three bytes, NFKC-stable and not
 * folding, each followed by a boundary (so each is a segment of its own),
 * with no word or kana run pending: each is a feature of its own, hashed
 * in place (a well-formed sequence is the UTF-8 of what it decodes to).
 * Returns where it stopped, i itself if s[i] is no such character.
 */
static inline size_t
SimhashFeedHan(SimhashTokenizer *tk, const unsigned char *s, size_t i, size_t len)
{
	if (i + 6 > len || !SimhashPlain3(s + i) ||
		(SimhashCharProps(SimhashDecode3(s + i)) & SIMHASH_HAN_MASK) != SIMHASH_HAN_PLAIN)
		return i;
	/* s[i..i+2] is such a character: is the next one a boundary? */
	while (i + 6 <= len)
	{
		const unsigned char *next = s + i + 3;
		uint8		props;

		if (*next < 0x80)
		{
			/* ASCII is a boundary: back to the ASCII paths */
			SimhashAddFeature(tk->fs, (const char *) s + i, 3);
			return i + 3;
		}
		if (!SimhashPlain3(next))
			break;
		props = SimhashCharProps(SimhashDecode3(next));
		if (!(props & SIMHASH_UFLAG_BOUNDARY))
			break;
		SimhashAddFeature(tk->fs, (const char *) s + i, 3);
		i += 3;
		if ((props & SIMHASH_HAN_MASK) != SIMHASH_HAN_PLAIN)
			break;
	}
	return i;
}

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
			 * case) is hashed in place, without copying.
			 */
			if (!upper && i < len && s[i] < 0x80 && tk->wlen == 0)
			{
				if (tk->kana_run > 0)
					SimhashEndKana(tk);
				SimhashAddFeature(tk->fs, (const char *) s + start, i - start);
				continue;
			}
			/* the last one may start a segment with what follows */
			if (i == len ? !final : s[i] >= 0x80)
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
		if (b < 0x80 && (i + 1 < len ? s[i + 1] < 0x80 : final))
		{
			/* fast path: ASCII separator followed by ASCII */
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
	pfree(tk->word);
	if (tk->hstate_mem)
		pfree(tk->hstate_mem);
	pfree(tk);
	return fs;
}

/*
 * Hash a caller-given feature, a string in the server encoding, as UTF-8.
 * In an SQL_ASCII database the bytes are read as UTF-8 with the decoder of
 * simhash(text): each byte that is not part of a well-formed sequence
 * counts as U+FFFD.
 */
uint64
SimhashHashServerString(const char *s, size_t len)
{
	int			encoding = GetDatabaseEncoding();
	char	   *utf8;
	uint64		h;

	if (encoding == PG_UTF8)
		return XXH3_64bits(s, len);
	if (encoding == PG_SQL_ASCII)
	{
		XXH3_state_t state;
		char		buf[1024];
		size_t		used = 0;
		size_t		pos = 0;

		if (pg_verify_mbstr(PG_UTF8, s, (int) len, true))
			return XXH3_64bits(s, len);

		/* repair it piecewise into an incremental hash */
		XXH3_64bits_reset(&state);
		while (pos < len)
		{
			pg_wchar	c;
			int			n = SimhashDecodeUtf8((const unsigned char *) s + pos,
											  len - pos, &c);

			if (n == 0)
			{
				c = 0xFFFD;		/* cut off by the end: its first byte */
				n = 1;
			}
			if (used > sizeof(buf) - 4)
			{
				XXH3_64bits_update(&state, buf, used);
				used = 0;
			}
			used += SimhashEncodeUtf8(c, buf + used);
			pos += n;
		}
		XXH3_64bits_update(&state, buf, used);
		return XXH3_64bits_digest(&state);
	}

	utf8 = pg_server_to_any(s, (int) len, PG_UTF8);
	if (utf8 == s)
		return XXH3_64bits(s, len);
	h = XXH3_64bits(utf8, strlen(utf8));
	pfree(utf8);
	return h;
}

/* Raise the error for a feature whose text of len bytes cannot be returned. */
void
SimhashReportFeatureTooLong(Size len)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("feature is too long to be returned"),
			 errdetail("A feature of more than %zu bytes of UTF-8 cannot be returned as a text value.",
					   len),
			 errhint("Use simhash(text), which needs no feature texts.")));
}
