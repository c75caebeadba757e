/*-------------------------------------------------------------------------
 *
 * shpage.c
 *	  Page layouts of the simhash index.
 *
 * The metapage, internal pages, and leaves with their sorted (delta-encoded,
 * with restarts) and append areas; checks of a leaf's layout before it is
 * decoded.  See src/README, "Pages" and "Entry encoding".
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/access/shpage.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "shindex.h"

static void SimhashCheckLeafLayout(Page page);

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

/* Length of an entry's sorted-area payload (see SimhashGetSortedPayload). */
static inline int
SimhashSortedPayloadLength(const SimhashEntry *e)
{
	return e->payload_null ? 2 : SimhashVarintLength(SimhashZigzag(e->payload));
}

/* Store an entry's sorted-area payload; returns its length. */
static inline int
SimhashPutSortedPayload(char *p, const SimhashEntry *e)
{
	if (e->payload_null)
	{
		p[0] = (char) 0x80;
		p[1] = 0;
		return 2;
	}
	return SimhashPutVarint(p, SimhashZigzag(e->payload));
}

/* Store the 48-bit rest in 6 bytes. */
static inline void
SimhashPutRest(char *p, uint64 rest)
{
	for (int i = 0; i < 6; i++)
		p[i] = (char) (rest >> (8 * i));
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
						RelationGetRelationName(index)),
				 errdetail("Block %u is not a simhash metapage.", SIMHASH_METAPAGE_BLKNO),
				 errhint("Please REINDEX it.")));
	meta = SimhashPageGetMeta(page);
	if (meta->magic != SIMHASH_MAGIC || meta->version != SIMHASH_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has an unsupported simhash layout version %u",
						RelationGetRelationName(index), meta->version),
				 errdetail("The metapage at block %u has magic number 0x%08X and layout version %u; this library reads version %u.",
						   SIMHASH_METAPAGE_BLKNO, meta->magic, meta->version, SIMHASH_VERSION),
				 errhint("Please REINDEX it.")));
}

/* Size of one raw entry of a leaf's append area. */
static inline Size
SimhashLeafRawEntrySize(Page page)
{
	return SIMHASH_RAW_ENTRY_SIZE + SimhashLeafPayloadSize(page);
}

/* Number of raw entries in a leaf's append area. */
int
SimhashLeafAppendCount(Page page)
{
	SimhashPageOpaque opaque = SimhashPageGetOpaque(page);

	return (((PageHeader) page)->pd_lower - opaque->sorted_end) / SimhashLeafRawEntrySize(page);
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
	int			payload_size = SimhashLeafPayloadSize(page);
	SimhashEntry *appended;
	int			i,
				j,
				k;

	SimhashCheckLeafLayout(page);
	for (i = 0; i < nsorted; i++)
	{
		uint64		delta = SimhashGetVarint(&p);

		if (p + 6 + (payload_size > 0 ? SIMHASH_MIN_SORTED_PAYLOAD : 0) > end)
			SimhashLeafCorrupt(page, "The sorted area ends inside an entry.");
		prev = (i % SIMHASH_RESTART_INTERVAL == 0) ? delta : prev + delta;
		out[i].skey = prev;
		out[i].rest = SimhashGetRest(p);
		p += 6;
		if (payload_size > 0)
		{
			SimhashGetSortedPayload(&p, &out[i]);
			if (p > end)
				SimhashLeafCorrupt(page, "The sorted area ends inside an entry.");
		}
		else
			SimhashGetPayload(NULL, 0, &out[i]);
	}
	if (p != end)
		SimhashLeafCorrupt(page, "The sorted area does not decode to its recorded size.");
	if (nappend == 0)
		return nsorted;

	/* sort the appended entries and merge them in from the end */
	appended = palloc(sizeof(SimhashEntry) * nappend);
	for (k = 0; k < nappend; k++)
	{
		memcpy(&appended[k].skey, p, sizeof(uint64));
		appended[k].rest = SimhashGetRest(p + sizeof(uint64));
		SimhashGetPayload(p + SIMHASH_RAW_ENTRY_SIZE, payload_size, &appended[k]);
		p += SIMHASH_RAW_ENTRY_SIZE + payload_size;
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
	b->payload = SimhashLeafPayloadSize(page) > 0;
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
	Size		need = SimhashVarintLength(delta) + 6 +
		(b->payload ? SimhashSortedPayloadLength(e) : 0) +
		(restart ? sizeof(uint16) : 0);

	Assert(b->count == 0 || e->skey > b->prev);
	if (b->count > 0 &&
		(Size) (b->pos - b->start) + need + b->nrestarts * sizeof(uint16) > b->limit)
		return false;
	if (restart)
		b->restarts[b->nrestarts++] = (uint16) (b->pos - (char *) b->page);
	b->pos += SimhashPutVarint(b->pos, delta);
	SimhashPutRest(b->pos, e->rest);
	b->pos += 6;
	if (b->payload)
		b->pos += SimhashPutSortedPayload(b->pos, e);
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
	Size		raw = SimhashLeafRawEntrySize(page);
	char	   *p;

	if (SimhashLeafAppendCount(page) + n > SIMHASH_MAX_APPEND ||
		ph->pd_lower + (Size) n * raw > ph->pd_upper)
		return false;
	p = (char *) page + ph->pd_lower;
	for (int i = 0; i < n; i++)
	{
		memcpy(p, &entries[i].skey, sizeof(uint64));
		SimhashPutRest(p + sizeof(uint64), entries[i].rest);
		if (raw > SIMHASH_RAW_ENTRY_SIZE)
			SimhashPutPayload(p + SIMHASH_RAW_ENTRY_SIZE, &entries[i]);
		p += raw;
	}
	ph->pd_lower = p - (char *) page;
	return true;
}

/*
 * Check the layout of a leaf before decoding it, so that no damaged page
 * makes a reader leave the page: the areas are nested as shpage.c lays
 * them out, and the sorted area's size and the restart array fit the entry
 * count.  A few comparisons; the restarts a search reads are checked where
 * it reads them (SimhashLeafCursorSeek).
 */
static void
SimhashCheckLeafLayout(Page page)
{
	PageHeader	ph = (PageHeader) page;
	SimhashPageOpaque opaque;
	Size		start = MAXALIGN(SizeOfPageHeaderData);
	Size		sorted_bytes;
	Size		payload_size;
	int			nrestarts;
	const uint16 *restarts;

	if (!SimhashPageIsValid(page) || !(SimhashPageGetOpaque(page)->flags & SIMHASH_LEAF))
		SimhashLeafCorrupt(page, "The page is not a simhash leaf.");
	opaque = SimhashPageGetOpaque(page);
	if (opaque->sorted_end < start || opaque->sorted_end > ph->pd_lower ||
		ph->pd_lower > ph->pd_upper || ph->pd_upper > ph->pd_special ||
		ph->pd_special > BLCKSZ)
		SimhashLeafCorrupt(page, "The page's areas overlap.");
	payload_size = SimhashLeafPayloadSize(page);
	if ((ph->pd_lower - opaque->sorted_end) % (SIMHASH_RAW_ENTRY_SIZE + payload_size) != 0 ||
		SimhashLeafAppendCount(page) > SIMHASH_MAX_APPEND)
		SimhashLeafCorrupt(page, "The append area is not a whole number of entries, or too long.");
	sorted_bytes = opaque->sorted_end - start;
	if (sorted_bytes < (Size) opaque->nsorted *
		(SIMHASH_MIN_ENCODED_ENTRY + (payload_size > 0 ? SIMHASH_MIN_SORTED_PAYLOAD : 0)) ||
		sorted_bytes > (Size) opaque->nsorted *
		(SIMHASH_MAX_ENCODED_ENTRY + (payload_size > 0 ? SIMHASH_MAX_SORTED_PAYLOAD : 0)))
		SimhashLeafCorrupt(page, "The sorted area's size does not fit its entry count.");
	nrestarts = (ph->pd_special - ph->pd_upper) / sizeof(uint16);
	if (nrestarts != (opaque->nsorted + SIMHASH_RESTART_INTERVAL - 1) / SIMHASH_RESTART_INTERVAL)
		SimhashLeafCorrupt(page, "The restart array does not fit the entry count.");
	restarts = (const uint16 *) ((char *) page + ph->pd_upper);
	if (nrestarts > 0 && restarts[0] != start)
		SimhashLeafCorrupt(page, "The first restart is not the first entry.");
}

/* Sort key of restart i of a leaf, which must point into the sorted area. */
static inline SimhashSortKey
SimhashRestartKey(Page page, const uint16 *restarts, int i)
{
	const char *q = (char *) page + restarts[i];

	if (restarts[i] < MAXALIGN(SizeOfPageHeaderData) ||
		restarts[i] + SIMHASH_MIN_ENCODED_ENTRY > SimhashPageGetOpaque(page)->sorted_end)
		SimhashLeafCorrupt(page, "A restart points outside the sorted area.");
	return SimhashGetVarint(&q);
}

/*
 * Position a cursor on a leaf at the first sorted entry whose sort key may
 * be >= "from" (an earlier one at worst), and at the start of the append
 * area.  The caller must hold a lock on the page while using the cursor.
 *
 * The restart is found by interpolation: band keys are hashes, spread
 * evenly over a leaf's key range, so the guess is within a restart or two
 * of the one wanted, and one to three restarts are read (each a cache miss on
 * a page just brought in) rather than a binary search's six or seven; a
 * binary search finishes if the guess was far off.
 */
void
SimhashLeafCursorSeek(SimhashLeafCursor *cur, Page page, SimhashSortKey from)
{
	PageHeader	ph = (PageHeader) page;
	SimhashPageOpaque opaque = SimhashPageGetOpaque(page);
	const uint16 *restarts = (const uint16 *) ((char *) page + ph->pd_upper);
	int			nrestarts = (ph->pd_special - ph->pd_upper) / sizeof(uint16);
	int			found = 0;
	SimhashSortKey first;

	SimhashCheckLeafLayout(page);

	/* last restart whose sort key is <= from (the first if none is) */
	first = nrestarts > 1 ? SimhashRestartKey(page, restarts, 0) : 0;
	if (nrestarts > 1 && first < from)
	{
		double		span;
		double		guess;
		int			lo = 0,		/* its key is <= from */
					hi = nrestarts - 1; /* keys of later restarts are > from */
		bool		up = false;

		/* the leaf covers [first, high): where does "from" fall in it? */
		if (!(opaque->flags & SIMHASH_RIGHTMOST) && opaque->high > first)
			span = (double) (opaque->high - first);
		else
			span = (double) (SimhashRestartKey(page, restarts, nrestarts - 1) - first) *
				nrestarts / Max(nrestarts - 1, 1);
		guess = span > 0 ? (double) (from - first) / span * nrestarts : 0;
		for (int step = 0; lo < hi; step++)
		{
			int			mid;

			if (step == 0)
				mid = (int) Min(guess, (double) hi);
			else if (step < 3)
				mid = up ? lo + 1 : hi; /* the neighbour across the guess */
			else
				mid = (lo + hi + 1) / 2;
			mid = Max(Min(mid, hi), lo + 1);
			up = SimhashRestartKey(page, restarts, mid) <= from;
			if (up)
				lo = mid;
			else
				hi = mid - 1;
		}
		found = lo;
	}

	cur->page = page;
	cur->payload_size = SimhashLeafPayloadSize(page);
	cur->end = (char *) page + opaque->sorted_end;
	cur->prev = 0;
	cur->nsorted = opaque->nsorted;
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

/* Next raw entry of the append area (unsorted); false at the end. */
bool
SimhashLeafCursorNextAppended(SimhashLeafCursor *cur, SimhashEntry *e)
{
	const char *p;

	if (cur->append_next >= cur->append_count)
		return false;
	p = cur->end + (Size) cur->append_next * (SIMHASH_RAW_ENTRY_SIZE + cur->payload_size);
	memcpy(&e->skey, p, sizeof(uint64));
	if (!SimhashSortKeyOffsetIsValid(e->skey))
		SimhashLeafCorrupt(cur->page, "An entry names no heap tuple.");
	e->rest = SimhashGetRest(p + sizeof(uint64));
	SimhashGetPayload(p + SIMHASH_RAW_ENTRY_SIZE, cur->payload_size, e);
	cur->append_next++;
	return true;
}
