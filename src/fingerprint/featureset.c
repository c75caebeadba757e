/*-------------------------------------------------------------------------
 *
 * featureset.c
 *	  The feature table of simhash(text), and feature hashing.
 *
 * An open-addressing hash table from feature hash to occurrence count
 * (optionally with the features' texts, for simhash_features), sized from
 * the text's length and grown in place; and XXH3-64 of a feature, also for
 * features given by the caller in the server encoding.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/fingerprint/featureset.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "mb/pg_wchar.h"
#include "utils/memutils.h"

#include "featureset.h"
#include "utf8codec.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

/* initial number of hash table slots (a power of 2) */
#define SIMHASH_INITIAL_SLOTS	256
/* most slots allocated up front for a long text (768 kB) */
#define SIMHASH_EXPECT_SLOTS	((uint32) 1 << 16)

/*
 * Tables of up to this many slots (12 MB) grow when half full, larger ones
 * when 3/4 full: short probe sequences where memory does not matter, and
 * 16-32 bytes per distinct feature where it does.
 */
#define SIMHASH_SPARSE_SLOTS	((uint32) 1 << 20)

/* Hash a feature's UTF-8 bytes: XXH3-64 with seed 0. */
uint64
SimhashHashFeature(const char *utf8, size_t len)
{
	return XXH3_64bits(utf8, len);
}

/*
 * Allocate an empty feature set in the current memory context, with room
 * for the features of a text of about expect_bytes bytes: a slot per 2-4
 * bytes (English prose has a distinct word per 25-30 bytes, Chinese a
 * distinct character per 10-20; growing in place costs more than zeroing
 * a sparse table, and nothing walks the empty slots), from 256 up to
 * SIMHASH_EXPECT_SLOTS slots.  Longer texts grow the table as needed.
 * The slots are followed, in the same allocation, by the list of occupied
 * slots (featureset.h), 4 bytes per feature the table may hold.
 */
SimhashFeatureSet *
SimhashCreateFeatureSet(bool keep_text, size_t expect_bytes)
{
	SimhashFeatureSet *fs = palloc0(sizeof(SimhashFeatureSet));
	uint32		nslots = SIMHASH_INITIAL_SLOTS;

	while (nslots < SIMHASH_EXPECT_SLOTS && nslots < expect_bytes / 4)
		nslots *= 2;
	fs->mask = nslots - 1;
	fs->grow_at = nslots / 2;
	fs->slots = palloc(SimhashFeatureSetBytes(nslots, fs->grow_at));
	memset(fs->slots, 0, sizeof(SimhashFeatureSlot) * nslots);
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
pg_noinline void
SimhashGrowFeatureSet(SimhashFeatureSet *fs)
{
	uint32		oldslots = fs->mask + 1;
	uint32		newslots = oldslots * 2;
	uint32		newmask = newslots - 1;
	SimhashFeatureSlot *slots;
	uint32	   *featno = NULL;
	uint32		newgrow = newslots <= SIMHASH_SPARSE_SLOTS ? newslots / 2 : newslots / 4 * 3;
	uint32	   *dense;
	uint32		n = 0;

	if (newslots > SIMHASH_MAX_SLOTS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("text has too many distinct features for simhash"),
				 errdetail("A text may have at most %u distinct features.",
						   (uint32) SIMHASH_MAX_FEATURES),
				 errhint("Fingerprint parts of the text separately.")));

	/* the old list of occupied slots is overwritten: rebuilt below */
	slots = repalloc_huge(fs->slots, SimhashFeatureSetBytes(newslots, newgrow));
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
	dense = (uint32 *) (slots + newslots);
	for (uint32 i = 0; i < newslots; i++)
	{
		slots[i].count &= ~SIMHASH_SLOT_MOVED;
		dense[n] = i;
		n += (slots[i].count != 0);
	}
	Assert(n == fs->nfeatures);

	fs->slots = slots;
	fs->featno = featno;
	fs->mask = newmask;
	fs->grow_at = newgrow;
}

/*
 * Record the first occurrence of a feature in an empty slot past its home,
 * or when its text is kept (SimhashAddFeatureHash does the rest).
 */
pg_noinline void
SimhashNewFeature(SimhashFeatureSet *fs, uint32 slot, uint64 h, const char *s, size_t len)
{
	memcpy(fs->slots[slot].hash, &h, sizeof(h));
	fs->slots[slot].count = 1;
	fs->w8++;
	SimhashFeatureSetOccupied(fs)[fs->nfeatures] = slot;
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

/*
 * Count n > 0 more occurrences of the feature of hash h, in a feature set
 * that does not keep texts (the Han counts of hancount.c).
 */
void
SimhashAddFeatureTimes(SimhashFeatureSet *fs, uint64 h, uint32 n)
{
	uint32		slot = (uint32) h & fs->mask;
	uint32		old;
	uint32		now;

	Assert(!fs->keep_text && n > 0);
	while (fs->slots[slot].count != 0)
	{
		if (SimhashSlotHash(&fs->slots[slot]) == h)
			break;
		slot = (slot + 1) & fs->mask;
	}
	old = fs->slots[slot].count;
	if (old == 0)
	{
		/* a new feature, with its n occurrences */
		memcpy(fs->slots[slot].hash, &h, sizeof(h));
		fs->slots[slot].count = n;
		fs->w8 += Min(n, SIMHASH_CAP_MIN);
		SimhashFeatureSetOccupied(fs)[fs->nfeatures++] = slot;
		if (fs->nfeatures > fs->grow_at)
			SimhashGrowFeatureSet(fs);
		return;
	}
	now = old + Min(n, SIMHASH_MAX_COUNT - old);
	fs->w8 += Min(now, SIMHASH_CAP_MIN) - Min(old, SIMHASH_CAP_MIN);
	fs->slots[slot].count = now;
}

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

/* Sum of the weights of a feature set, each min(occurrences, cap). */
uint64
SimhashFeatureSetSumWeights(const SimhashFeatureSet *fs, uint64 cap)
{
	const uint32 *occupied = SimhashFeatureSetOccupied(fs);
	uint64		sum = 0;

	for (uint32 k = 0; k < fs->nfeatures; k++)
		sum += Min((uint64) fs->slots[occupied[k]].count, cap);
	return sum;
}
