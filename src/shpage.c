/*-------------------------------------------------------------------------
 *
 * shpage.c
 *	  Page layouts of the simhash index: metapage, internal pages, leaves.
 *
 * A leaf keeps most entries in a sorted, compressed area and takes single
 * insertions in a small append area of raw entries (shindex.h has the
 * picture).  In the sorted area each entry is
 *
 *		varint(sort key - previous sort key)	1..9 bytes
 *		rest									6 bytes, little endian
 *
 * except every SIMHASH_RESTART_INTERVAL-th entry, a "restart", whose sort
 * key is written in full (delta from 0) and whose offset is recorded in the
 * restart array, so that a probe can binary-search the restarts and decode
 * at most SIMHASH_RESTART_INTERVAL entries before reaching its key.  Within
 * one key, consecutive TIDs differ by a few hundred heap blocks, so a delta
 * takes about 3 bytes and an entry about 9, against 12 uncompressed.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/shpage.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "shindex.h"

/* Encode v as a little-endian base-128 varint; returns its length. */
static inline int
SimhashPutVarint(char *p, uint64 v)
{
	int			n = 0;

	while (v >= 0x80)
	{
		p[n++] = (char) (v | 0x80);
		v >>= 7;
	}
	p[n++] = (char) v;
	return n;
}

/* Length of the varint encoding of v. */
static inline int
SimhashVarintLength(uint64 v)
{
	int			n = 1;

	while (v >= 0x80)
	{
		v >>= 7;
		n++;
	}
	return n;
}

/* Decode a varint at p; advances p. */
static inline uint64
SimhashGetVarint(const char **p)
{
	const unsigned char *s = (const unsigned char *) *p;
	uint64		v = s[0] & 0x7F;
	int			i = 0;

	while (s[i] & 0x80)
	{
		i++;
		v |= (uint64) (s[i] & 0x7F) << (7 * i);
	}
	*p = (const char *) s + i + 1;
	return v;
}

/* Store the 48-bit rest in 6 bytes. */
static inline void
SimhashPutRest(char *p, uint64 rest)
{
	for (int i = 0; i < 6; i++)
		p[i] = (char) (rest >> (8 * i));
}

/* Load a 48-bit rest from 6 bytes. */
static inline uint64
SimhashGetRest(const char *p)
{
	const unsigned char *s = (const unsigned char *) p;

	return (uint64) s[0] | ((uint64) s[1] << 8) | ((uint64) s[2] << 16) |
		((uint64) s[3] << 24) | ((uint64) s[4] << 32) | ((uint64) s[5] << 40);
}

/* Initialize an empty tree page or metapage. */
void
SimhashInitPage(Page page, uint16 flags, uint16 level, uint16 band)
{
	SimhashPageOpaque opaque;

	PageInit(page, BLCKSZ, sizeof(SimhashPageOpaqueData));
	opaque = SimhashPageGetOpaque(page);
	opaque->high = SIMHASH_SORTKEY_MAX;
	opaque->rightlink = InvalidBlockNumber;
	opaque->flags = flags;
	opaque->level = level;
	opaque->band = band;
	opaque->nsorted = 0;
	opaque->sorted_end = ((PageHeader) page)->pd_lower;
	opaque->page_id = SIMHASH_PAGE_ID;
}

/* Initialize the metapage; the roots are filled in by the caller. */
void
SimhashInitMetaPage(Page page, int fillfactor)
{
	SimhashMetaPageData *meta;

	SimhashInitPage(page, SIMHASH_META, 0, 0);
	meta = SimhashPageGetMeta(page);
	memset(meta, 0, sizeof(SimhashMetaPageData));
	meta->magic = SIMHASH_MAGIC;
	meta->version = SIMHASH_VERSION;
	for (int t = 0; t < SIMHASH_NTREES; t++)
		meta->root[t] = InvalidBlockNumber;
	meta->fillfactor = (uint16) fillfactor;
	/* cover the contents with pd_lower so that generic WAL logs them */
	((PageHeader) page)->pd_lower = (char *) meta + sizeof(SimhashMetaPageData) - (char *) page;
}

/* Does the page look like one of ours (and not all zeroes)? */
bool
SimhashPageIsValid(Page page)
{
	return !PageIsNew(page) &&
		PageGetSpecialSize(page) == MAXALIGN(sizeof(SimhashPageOpaqueData)) &&
		SimhashPageGetOpaque(page)->page_id == SIMHASH_PAGE_ID;
}

/* Complain unless the page is a simhash metapage of the current version. */
void
SimhashCheckMetaPage(Relation index, Page page)
{
	SimhashMetaPageData *meta;

	if (!SimhashPageIsValid(page) ||
		!(SimhashPageGetOpaque(page)->flags & SIMHASH_META))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" is not a simhash index",
						RelationGetRelationName(index))));
	meta = SimhashPageGetMeta(page);
	if (meta->magic != SIMHASH_MAGIC || meta->version != SIMHASH_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has an unsupported simhash layout version %u",
						RelationGetRelationName(index), meta->version),
				 errhint("Please REINDEX it.")));
}

/* Number of raw entries in a leaf's append area. */
int
SimhashLeafAppendCount(Page page)
{
	SimhashPageOpaque opaque = SimhashPageGetOpaque(page);

	return (((PageHeader) page)->pd_lower - opaque->sorted_end) / SIMHASH_RAW_ENTRY_SIZE;
}

/* Number of entries on a leaf. */
int
SimhashLeafNumEntries(Page page)
{
	return SimhashPageGetOpaque(page)->nsorted + SimhashLeafAppendCount(page);
}

/* Bytes still free between the append area and the restart array. */
Size
SimhashLeafFreeSpace(Page page)
{
	PageHeader	ph = (PageHeader) page;

	return ph->pd_upper - ph->pd_lower;
}

/* Comparator for sorting entries by sort key. */
static int
SimhashEntryCompare(const void *a, const void *b)
{
	SimhashSortKey ka = ((const SimhashEntry *) a)->skey;
	SimhashSortKey kb = ((const SimhashEntry *) b)->skey;

	return (ka > kb) - (ka < kb);
}

/*
 * Decode every entry of a leaf into out[] (room for SimhashLeafNumEntries),
 * in sort key order, each sort key once.  Returns the number of entries.
 */
int
SimhashLeafDecode(Page page, SimhashEntry *out)
{
	SimhashPageOpaque opaque = SimhashPageGetOpaque(page);
	const char *p = PageGetContents(page);
	const char *end = (char *) page + opaque->sorted_end;
	SimhashSortKey prev = 0;
	int			nsorted = opaque->nsorted;
	int			nappend = SimhashLeafAppendCount(page);
	SimhashEntry *appended;
	int			i,
				j,
				k;

	for (i = 0; i < nsorted; i++)
	{
		uint64		delta = SimhashGetVarint(&p);

		prev = (i % SIMHASH_RESTART_INTERVAL == 0) ? delta : prev + delta;
		out[i].skey = prev;
		out[i].rest = SimhashGetRest(p);
		p += 6;
	}
	if (p != end)
		elog(ERROR, "simhash leaf sorted area ends at %d, expected %d",
			 (int) (p - (char *) page), (int) opaque->sorted_end);
	if (nappend == 0)
		return nsorted;

	/* sort the appended entries and merge them in from the end */
	appended = palloc(sizeof(SimhashEntry) * nappend);
	for (k = 0; k < nappend; k++)
	{
		memcpy(&appended[k].skey, p, sizeof(uint64));
		appended[k].rest = SimhashGetRest(p + sizeof(uint64));
		p += SIMHASH_RAW_ENTRY_SIZE;
	}
	qsort(appended, nappend, sizeof(SimhashEntry), SimhashEntryCompare);
	i = nsorted - 1;
	j = nappend - 1;
	for (k = nsorted + nappend - 1; k >= 0; k--)
	{
		if (j < 0 || (i >= 0 && out[i].skey > appended[j].skey))
			out[k] = out[i--];
		else
			out[k] = appended[j--];
	}
	pfree(appended);

	/* an entry is in a leaf once; drop repeats, should any exist */
	for (i = 1, k = 1; i < nsorted + nappend; i++)
		if (out[i].skey != out[k - 1].skey)
			out[k++] = out[i];
	return k;
}

/*
 * Start writing a leaf's sorted area from scratch, using at most "limit"
 * bytes of the page's capacity (SimhashLeafCapacity for a full page).  The
 * page's opaque fields other than the counts are kept.
 */
void
SimhashLeafBuilderBegin(SimhashLeafBuilder *b, Page page, Size limit)
{
	Assert(limit <= SimhashLeafCapacity);
	b->page = page;
	b->start = PageGetContents(page);
	b->pos = b->start;
	b->limit = limit;
	b->count = 0;
	b->nrestarts = 0;
	b->prev = 0;
}

/*
 * Add the next entry (sort keys must increase); returns false, changing
 * nothing, if it does not fit within the limit.  The first entry always fits.
 */
bool
SimhashLeafBuilderAdd(SimhashLeafBuilder *b, const SimhashEntry *e)
{
	bool		restart = (b->count % SIMHASH_RESTART_INTERVAL == 0);
	uint64		delta = restart ? e->skey : e->skey - b->prev;
	Size		need = SimhashVarintLength(delta) + 6 + (restart ? sizeof(uint16) : 0);

	Assert(b->count == 0 || e->skey > b->prev);
	if (b->count > 0 &&
		(Size) (b->pos - b->start) + need + b->nrestarts * sizeof(uint16) > b->limit)
		return false;
	if (restart)
		b->restarts[b->nrestarts++] = (uint16) (b->pos - (char *) b->page);
	b->pos += SimhashPutVarint(b->pos, delta);
	SimhashPutRest(b->pos, e->rest);
	b->pos += 6;
	b->prev = e->skey;
	b->count++;
	return true;
}

/* Finish the page: counts, pd_lower/pd_upper and the restart array. */
void
SimhashLeafBuilderFinish(SimhashLeafBuilder *b)
{
	PageHeader	ph = (PageHeader) b->page;
	SimhashPageOpaque opaque = SimhashPageGetOpaque(b->page);

	opaque->nsorted = (uint16) b->count;
	opaque->sorted_end = (uint16) (b->pos - (char *) b->page);
	ph->pd_lower = opaque->sorted_end;
	ph->pd_upper = ph->pd_special - b->nrestarts * sizeof(uint16);
	memcpy((char *) b->page + ph->pd_upper, b->restarts,
		   b->nrestarts * sizeof(uint16));
	Assert(ph->pd_lower <= ph->pd_upper);
}

/*
 * Replace the contents of a leaf with entries[0..n) (sorted), writing as
 * many as fit in "limit" bytes.  Returns the number written (>= 1 if n > 0).
 */
int
SimhashLeafFill(Page page, const SimhashEntry *entries, int n, Size limit)
{
	SimhashLeafBuilder b;
	int			i;

	SimhashLeafBuilderBegin(&b, page, limit);
	for (i = 0; i < n; i++)
		if (!SimhashLeafBuilderAdd(&b, &entries[i]))
			break;
	SimhashLeafBuilderFinish(&b);
	return i;
}

/*
 * Append raw entries to a leaf if they fit and the append area stays small;
 * returns false (changing nothing) otherwise.
 */
bool
SimhashLeafAppend(Page page, const SimhashEntry *entries, int n)
{
	PageHeader	ph = (PageHeader) page;
	char	   *p;

	if (SimhashLeafAppendCount(page) + n > SIMHASH_MAX_APPEND ||
		ph->pd_lower + (Size) n * SIMHASH_RAW_ENTRY_SIZE > ph->pd_upper)
		return false;
	p = (char *) page + ph->pd_lower;
	for (int i = 0; i < n; i++)
	{
		memcpy(p, &entries[i].skey, sizeof(uint64));
		SimhashPutRest(p + sizeof(uint64), entries[i].rest);
		p += SIMHASH_RAW_ENTRY_SIZE;
	}
	ph->pd_lower = p - (char *) page;
	return true;
}

/*
 * Position a cursor on a leaf at the first sorted entry whose sort key may
 * be >= "from" (an earlier one at worst), and at the start of the append
 * area.  The caller must hold a lock on the page while using the cursor.
 */
void
SimhashLeafCursorSeek(SimhashLeafCursor *cur, Page page, SimhashSortKey from)
{
	PageHeader	ph = (PageHeader) page;
	SimhashPageOpaque opaque = SimhashPageGetOpaque(page);
	const uint16 *restarts = (const uint16 *) ((char *) page + ph->pd_upper);
	int			nrestarts = (ph->pd_special - ph->pd_upper) / sizeof(uint16);
	int			lo = 0,
				hi = nrestarts - 1,
				found = 0;

	/* last restart whose sort key is <= from */
	while (lo <= hi)
	{
		int			mid = (lo + hi) / 2;
		const char *q = (char *) page + restarts[mid];

		if (SimhashGetVarint(&q) <= from)
		{
			found = mid;
			lo = mid + 1;
		}
		else
			hi = mid - 1;
	}

	cur->page = page;
	cur->end = (char *) page + opaque->sorted_end;
	cur->prev = 0;
	if (nrestarts == 0)
	{
		cur->pos = cur->end;
		cur->nsorted_left = 0;
	}
	else
	{
		cur->pos = (char *) page + restarts[found];
		cur->nsorted_left = opaque->nsorted - found * SIMHASH_RESTART_INTERVAL;
	}
	cur->append_next = 0;
	cur->append_count = SimhashLeafAppendCount(page);
}

/*
 * Next entry of the sorted area, in sort key order; false at the end.  A
 * cursor always stands on a restart or continues from the previous entry.
 */
bool
SimhashLeafCursorNextSorted(SimhashLeafCursor *cur, SimhashEntry *e)
{
	uint64		delta;
	SimhashPageOpaque opaque;
	int			index;

	if (cur->nsorted_left <= 0)
		return false;
	opaque = SimhashPageGetOpaque(cur->page);
	index = opaque->nsorted - cur->nsorted_left;
	delta = SimhashGetVarint(&cur->pos);
	cur->prev = (index % SIMHASH_RESTART_INTERVAL == 0) ? delta : cur->prev + delta;
	e->skey = cur->prev;
	e->rest = SimhashGetRest(cur->pos);
	cur->pos += 6;
	cur->nsorted_left--;
	return true;
}

/* Next raw entry of the append area (unsorted); false at the end. */
bool
SimhashLeafCursorNextAppended(SimhashLeafCursor *cur, SimhashEntry *e)
{
	const char *p;

	if (cur->append_next >= cur->append_count)
		return false;
	p = cur->end + (Size) cur->append_next * SIMHASH_RAW_ENTRY_SIZE;
	memcpy(&e->skey, p, sizeof(uint64));
	e->rest = SimhashGetRest(p + sizeof(uint64));
	cur->append_next++;
	return true;
}
