/*-------------------------------------------------------------------------
 *
 * shindex.h
 *	  Internal declarations of the simhash index access method.
 *
 * Sort keys, page layouts and the interfaces between the access method's
 * files.  See src/README, "Terminology", "Pages" and "Entry encoding".
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/access/shindex.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHINDEX_H
#define SHINDEX_H

#include "access/amapi.h"
#include "access/generic_xlog.h"
#include "access/htup_details.h"
#include "access/itup.h"
#include "access/relscan.h"
#include "lib/stringinfo.h"
#include "nodes/pathnodes.h"
#include "storage/bufpage.h"
#include "utils/relcache.h"

#include "simhash.h"

/* ------------------------------------------------------------------------
 * Sort keys and entries
 * ------------------------------------------------------------------------
 */
#define SIMHASH_NBANDS			4	/* one tree per 16-bit block */
#define SIMHASH_NULL_BAND		4	/* the tree of NULL fingerprints */
#define SIMHASH_NTREES			5
#define SIMHASH_BAND_KEYS		65536	/* 16-bit keys per band */
#define SIMHASH_OFFSET_BITS		11	/* heap offsets are < 2048 */
#define SIMHASH_KEY_SHIFT		43	/* 32 block bits + 11 offset bits */
#define SIMHASH_REST_MASK		UINT64CONST(0xFFFFFFFFFFFF)
#define SIMHASH_SORTKEY_MAX		PG_UINT64_MAX	/* above every real sort key */

typedef uint64 SimhashSortKey;

/*
 * One index entry, decoded.  An index with an included column ("INCLUDE
 * (id)") stores that column's value in every entry: the payload, a Datum of
 * a fixed-length type passed by value.  Entries of indexes without one have
 * payload_null set.
 */
typedef struct SimhashEntry
{
	SimhashSortKey skey;		/* key << 43 | block << 11 | offset */
	uint64		rest;			/* the other 48 bits of the fingerprint */
	Datum		payload;		/* the included column, 0 if NULL */
	bool		payload_null;
} SimhashEntry;

static inline SimhashSortKey
SimhashMakeSortKey(uint16 key, ItemPointer tid)
{
	Assert(ItemPointerGetOffsetNumberNoCheck(tid) < (1 << SIMHASH_OFFSET_BITS));
	return ((uint64) key << SIMHASH_KEY_SHIFT) |
		((uint64) ItemPointerGetBlockNumberNoCheck(tid) << SIMHASH_OFFSET_BITS) |
		(uint64) ItemPointerGetOffsetNumberNoCheck(tid);
}

static inline uint16
SimhashSortKeyKey(SimhashSortKey skey)
{
	return (uint16) (skey >> SIMHASH_KEY_SHIFT);
}

static inline void
SimhashSortKeyTid(SimhashSortKey skey, ItemPointer tid)
{
	ItemPointerSet(tid,
				   (BlockNumber) (skey >> SIMHASH_OFFSET_BITS),
				   (OffsetNumber) (skey & ((1 << SIMHASH_OFFSET_BITS) - 1)));
}

/* Can the heap offset of a sort key be a tuple's on this server's pages? */
static inline bool
SimhashSortKeyOffsetIsValid(SimhashSortKey skey)
{
	OffsetNumber off = (OffsetNumber) (skey & ((1 << SIMHASH_OFFSET_BITS) - 1));

	return off >= FirstOffsetNumber && off <= MaxHeapTuplesPerPage;
}

/* the smallest sort key with the given key */
static inline SimhashSortKey
SimhashKeyLowest(uint16 key)
{
	return (uint64) key << SIMHASH_KEY_SHIFT;
}

/* the 48 bits of fp that are not block "band" */
static inline uint64
SimhashRestOf(uint64 fp, int band)
{
	int			shift = SIMHASH_BITS - SIMHASH_BLOCK_BITS * (band + 1);
	uint64		low = fp & ((UINT64CONST(1) << shift) - 1);
	uint64		high = (band == 0) ? 0 : fp >> (shift + SIMHASH_BLOCK_BITS);

	return (high << shift) | low;
}

/* reassemble a fingerprint from its band key and rest */
static inline uint64
SimhashFingerprintOf(uint16 key, uint64 rest, int band)
{
	int			shift = SIMHASH_BITS - SIMHASH_BLOCK_BITS * (band + 1);
	uint64		low = rest & ((UINT64CONST(1) << shift) - 1);
	uint64		high = (band == 0) ? 0 :
		(rest >> shift) << (shift + SIMHASH_BLOCK_BITS);

	return high | ((uint64) key << shift) | low;
}

/* ------------------------------------------------------------------------
 * Pages
 * ------------------------------------------------------------------------
 */
#define SIMHASH_PAGE_ID			0xFF9A	/* src/README "Pages": not used by core */
#define SIMHASH_MAGIC			0x53484958	/* "SHIX" */
#define SIMHASH_VERSION			1
#define SIMHASH_METAPAGE_BLKNO	0

/* page flags */
#define SIMHASH_META			(1 << 0)	/* the metapage */
#define SIMHASH_LEAF			(1 << 1)	/* tree leaf (level 0) */
#define SIMHASH_RIGHTMOST		(1 << 2)	/* no right sibling; high key is +inf */
#define SIMHASH_PAYLOAD			(1 << 3)	/* leaf: entries carry the included
											 * column (src/README, "Included
											 * columns") */

/*
 * Special space of every page.  "high" is the exclusive upper bound of the
 * sort keys the page may hold (Lehman & Yao's high key); a reader that finds
 * its target at or above it moves right.
 */
typedef struct SimhashPageOpaqueData
{
	SimhashSortKey high;		/* exclusive upper bound unless RIGHTMOST */
	BlockNumber rightlink;		/* right sibling or InvalidBlockNumber */
	uint16		flags;
	uint16		level;			/* 0 for leaves */
	uint16		band;			/* tree: 0..3, or SIMHASH_NULL_BAND */
	uint16		nsorted;		/* leaf: entries in the sorted area */
	uint16		sorted_end;		/* leaf: end offset of the sorted area */
	uint16		page_id;		/* SIMHASH_PAGE_ID; must be last */
} SimhashPageOpaqueData;

typedef SimhashPageOpaqueData *SimhashPageOpaque;

#define SimhashPageGetOpaque(page) \
	((SimhashPageOpaque) PageGetSpecialPointer(page))

/* contents of the metapage */
typedef struct SimhashMetaPageData
{
	uint32		magic;
	uint32		version;
	BlockNumber root[SIMHASH_NTREES];	/* root page of each tree */
	uint16		rootlevel[SIMHASH_NTREES];	/* its level (0: root is a leaf) */
	uint16		fillfactor;		/* leaf fill at build time, percent */
} SimhashMetaPageData;

#define SimhashPageGetMeta(page) \
	((SimhashMetaPageData *) PageGetContents(page))

/*
 * Leaf pages.  From the page header up: the sorted area (entries in sort
 * key order, delta-encoded, see shpage.c) and then the append area of
 * fixed-size raw entries added one at a time since the page was last
 * rewritten; pd_lower is the end of the append area.  From the special
 * space down: the restart array (uint16 offsets of the sorted-area entries
 * that are encoded in full, every SIMHASH_RESTART_INTERVAL entries, for
 * binary search); pd_upper is its start.  Generic WAL logs only
 * [0, pd_lower) and [pd_upper, BLCKSZ), so an append costs a few dozen bytes.
 */
#define SIMHASH_RAW_ENTRY_SIZE	14	/* 8-byte sort key + 6-byte rest */
#define SIMHASH_RESTART_INTERVAL 16
#define SIMHASH_MAX_APPEND		96	/* rewrite the page beyond this */
#define SIMHASH_MAX_ENCODED_ENTRY 15	/* varint (9) + rest (6) */
#define SIMHASH_MIN_ENCODED_ENTRY 7		/* varint delta (1) + rest (6) */
/*
 * On SIMHASH_PAYLOAD leaves each entry carries the included value after its
 * rest: in the append area a null byte and the Datum (SIMHASH_PAYLOAD_SIZE);
 * in the sorted area a varint of the zigzagged Datum, 1 to 10 bytes, and a
 * NULL as the two bytes 0x80 0x00, which no value encodes to.
 */
#define SIMHASH_PAYLOAD_SIZE	(1 + sizeof(Datum))
#define SIMHASH_MIN_SORTED_PAYLOAD	1
#define SIMHASH_MAX_SORTED_PAYLOAD	10
/* the most entries one leaf page can hold, sorted area and append area */
#define SIMHASH_MAX_LEAF_ENTRIES (BLCKSZ / SIMHASH_MIN_ENCODED_ENTRY + SIMHASH_MAX_APPEND)

/*
 * Internal pages: an array of pivots after the page header, in sort key
 * order; pivot i's child holds the keys in [pivot i, pivot i+1) (the last
 * one up to the page's high key).  The first pivot of the leftmost page of
 * a level is 0, below every real sort key.
 */
typedef struct SimhashPivot
{
	uint32		skey_hi;		/* sort key, split to keep 4-byte alignment */
	uint32		skey_lo;
	BlockNumber child;
} SimhashPivot;

static inline SimhashSortKey
SimhashPivotKey(const SimhashPivot *p)
{
	return ((uint64) p->skey_hi << 32) | p->skey_lo;
}

#define SimhashPageGetPivots(page) ((SimhashPivot *) PageGetContents(page))
#define SimhashPageNumPivots(page) \
	((((PageHeader) (page))->pd_lower - MAXALIGN(SizeOfPageHeaderData)) / sizeof(SimhashPivot))
#define SimhashMaxPivots \
	((BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - MAXALIGN(sizeof(SimhashPageOpaqueData))) / sizeof(SimhashPivot))

/* free bytes of a leaf available for entries, restarts included */
#define SimhashLeafCapacity \
	(BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - MAXALIGN(sizeof(SimhashPageOpaqueData)))

/* ------------------------------------------------------------------------
 * Options
 * ------------------------------------------------------------------------
 */
typedef struct SimhashOptions
{
	int32		vl_len_;		/* varlena header (do not touch directly!) */
	int			fillfactor;		/* leaf fill at build, percent */
} SimhashOptions;

#define SIMHASH_DEFAULT_FILLFACTOR	95
#define SIMHASH_MIN_FILLFACTOR		50

/* ------------------------------------------------------------------------
 * Operator strategies of the simhash64_ops class
 * ------------------------------------------------------------------------
 */
#define SIMHASH_WITHIN_STRATEGY	1	/* simhash64 <@ simhash_ball */
#define SIMHASH_DISTANCE_STRATEGY 2 /* simhash64 <-> simhash64, ORDER BY */
#define SIMHASH_EQUAL_STRATEGY	3	/* simhash64 = simhash64 */
#define SIMHASH_NSTRATEGIES		3

/* ------------------------------------------------------------------------
 * Functions
 * ------------------------------------------------------------------------
 */

/* shpage.c: page layouts */
extern void SimhashInitPage(Page page, uint16 flags, uint16 level, uint16 band);
extern void SimhashInitMetaPage(Page page, int fillfactor);
extern bool SimhashPageIsValid(Page page);
extern void SimhashCheckMetaPage(Relation index, Page page);
extern int	SimhashLeafNumEntries(Page page);
extern int	SimhashLeafDecode(Page page, SimhashEntry *out);
extern int	SimhashLeafFill(Page page, const SimhashEntry *entries, int n,
							Size limit);

/* incremental writing of a leaf's sorted area (shpage.c) */
typedef struct SimhashLeafBuilder
{
	Page		page;
	bool		payload;		/* entries carry the included value */
	char	   *start;			/* start of the sorted area */
	char	   *pos;			/* where the next entry goes */
	Size		limit;			/* bytes available, restarts included */
	int			count;
	int			nrestarts;
	SimhashSortKey prev;
	uint16		restarts[BLCKSZ / (SIMHASH_RESTART_INTERVAL * SIMHASH_MIN_ENCODED_ENTRY) + 1];
} SimhashLeafBuilder;

extern void SimhashLeafBuilderBegin(SimhashLeafBuilder *b, Page page, Size limit);
extern bool SimhashLeafBuilderAdd(SimhashLeafBuilder *b, const SimhashEntry *e);
extern void SimhashLeafBuilderFinish(SimhashLeafBuilder *b);
extern bool SimhashLeafAppend(Page page, const SimhashEntry *entries, int n);
extern Size SimhashLeafFreeSpace(Page page);
extern int	SimhashLeafAppendCount(Page page);

/* leaf iteration without decoding everything (shpage.c) */
typedef struct SimhashLeafCursor
{
	Page		page;
	int			payload_size;	/* bytes of a raw entry's payload: 0 or
								 * SIMHASH_PAYLOAD_SIZE (a varint in the
								 * sorted area) */
	const char *pos;			/* next encoded byte in the sorted area */
	const char *end;			/* end of the sorted area */
	SimhashSortKey prev;		/* previous sort key (delta base) */
	int			nsorted;		/* entries in the sorted area */
	int			nsorted_left;
	int			append_next;	/* index of the next raw entry */
	int			append_count;
} SimhashLeafCursor;

extern void SimhashLeafCursorSeek(SimhashLeafCursor *cur, Page page,
								  SimhashSortKey from);
extern bool SimhashLeafCursorNextAppended(SimhashLeafCursor *cur, SimhashEntry *e);
pg_noreturn extern void SimhashLeafCorrupt(const void *where, const char *what);

/* Decode a varint at p; advances p. */
static inline uint64
SimhashGetVarint(const char **p)
{
	const unsigned char *s = (const unsigned char *) *p;
	uint64		v = s[0] & 0x7F;
	int			i = 0;

	/* at most 10 bytes, even on a damaged page */
	while ((s[i] & 0x80) && i < 9)
	{
		i++;
		v |= (uint64) (s[i] & 0x7F) << (7 * i);
	}
	/* sort keys are below 2^59: nine bytes at most */
	if (unlikely(i == 9))
		SimhashLeafCorrupt(s, "A sort key is encoded in more than nine bytes.");
	*p = (const char *) s + i + 1;
	return v;
}

/* Load a 48-bit rest from 6 bytes. */
static inline uint64
SimhashGetRest(const char *p)
{
	const unsigned char *s = (const unsigned char *) p;

	return (uint64) s[0] | ((uint64) s[1] << 8) | ((uint64) s[2] << 16) |
		((uint64) s[3] << 24) | ((uint64) s[4] << 32) | ((uint64) s[5] << 40);
}

/* Bytes of payload per entry on a leaf: SIMHASH_PAYLOAD_SIZE or 0. */
static inline int
SimhashLeafPayloadSize(Page page)
{
	return (SimhashPageGetOpaque(page)->flags & SIMHASH_PAYLOAD) ?
		(int) SIMHASH_PAYLOAD_SIZE : 0;
}

/* Store an entry's payload (SIMHASH_PAYLOAD_SIZE bytes). */
static inline void
SimhashPutPayload(char *p, const SimhashEntry *e)
{
	Datum		value = e->payload_null ? (Datum) 0 : e->payload;

	p[0] = e->payload_null ? 1 : 0;
	memcpy(p + 1, &value, sizeof(Datum));
}

/* A Datum as a varint-friendly unsigned number: small magnitudes stay small. */
static inline uint64
SimhashZigzag(Datum d)
{
	int64		v = (int64) d;

	return ((uint64) v << 1) ^ (uint64) (v >> 63);
}

/* The inverse of SimhashZigzag. */
static inline Datum
SimhashUnzigzag(uint64 z)
{
	return (Datum) ((z >> 1) ^ (~(z & 1) + 1));
}

/*
 * Load a sorted-area payload at *p (a varint, or 0x80 0x00 for NULL);
 * advances *p.  Rejects every other encoding no writer produces: a varint
 * with a trailing zero byte, or one longer than a 64-bit value needs.  The
 * caller checks that *p stays within the sorted area.
 */
static inline void
SimhashGetSortedPayload(const char **p, SimhashEntry *e)
{
	const unsigned char *s = (const unsigned char *) *p;
	uint64		z = s[0] & 0x7F;
	int			i = 0;

	if (likely(s[0] < 0x80))
	{
		*p += 1;
		e->payload = SimhashUnzigzag(z);
		e->payload_null = false;
		return;
	}
	while ((s[i] & 0x80) && i < 9)
	{
		i++;
		z |= (uint64) (s[i] & 0x7F) << (7 * i);
	}
	*p = (const char *) s + i + 1;
	/* the tenth byte holds the 64th bit alone, and ends the varint */
	if (unlikely(i == 9 && s[9] > 1))
		SimhashLeafCorrupt(s, "An entry's included value is not encoded canonically.");
	if (s[i] == 0)
	{
		if (unlikely(i != 1 || s[0] != 0x80))
			SimhashLeafCorrupt(s, "An entry's included value is not encoded canonically.");
		e->payload = (Datum) 0;
		e->payload_null = true;
		return;
	}
	e->payload = SimhashUnzigzag(z);
	e->payload_null = false;
}

/* Load an entry's raw payload from p, or mark it absent if size is 0. */
static inline void
SimhashGetPayload(const char *p, int size, SimhashEntry *e)
{
	if (size == 0)
	{
		e->payload = (Datum) 0;
		e->payload_null = true;
		return;
	}
	if (unlikely(p[0] != 0 && p[0] != 1))
		SimhashLeafCorrupt(p, "An entry's payload has an invalid null flag.");
	e->payload_null = (p[0] != 0);
	memcpy(&e->payload, p + 1, sizeof(Datum));
	if (unlikely(e->payload_null && e->payload != 0))
		SimhashLeafCorrupt(p, "A NULL payload has a value.");
}

/*
 * Next entry of the sorted area, in sort key order; false at the end.  A
 * cursor always stands on a restart or continues from the previous entry.
 * Inline: a probe of a frequent key decodes thousands of entries.
 */
static inline bool
SimhashLeafCursorNextSorted(SimhashLeafCursor *cur, SimhashEntry *e)
{
	uint64		delta;
	int			index;

	if (cur->nsorted_left <= 0)
		return false;
	index = cur->nsorted - cur->nsorted_left;
	delta = SimhashGetVarint(&cur->pos);
	if (cur->pos + 6 + (cur->payload_size > 0 ? SIMHASH_MIN_SORTED_PAYLOAD : 0) > cur->end)
		SimhashLeafCorrupt(cur->page, "The sorted area ends inside an entry.");
	delta = (index % SIMHASH_RESTART_INTERVAL == 0) ? delta : cur->prev + delta;

	/*
	 * Entries increase strictly and name heap tuples: a damaged page that
	 * still decodes must not send nonsense TIDs to the heap.
	 */
	if (unlikely(delta <= cur->prev ||
				 !SimhashSortKeyOffsetIsValid(delta)))
		SimhashLeafCorrupt(cur->page, "An entry is out of order or names no heap tuple.");
	cur->prev = delta;
	e->skey = cur->prev;
	e->rest = SimhashGetRest(cur->pos);
	cur->pos += 6;
	if (cur->payload_size > 0)
	{
		SimhashGetSortedPayload(&cur->pos, e);
		if (unlikely(cur->pos > cur->end))
			SimhashLeafCorrupt(cur->page, "The sorted area ends inside an entry.");
	}
	else
		SimhashGetPayload(NULL, 0, e);
	cur->nsorted_left--;
	return true;
}

/* shutils.c: buffers, the metapage and included columns */
extern Buffer SimhashNewBuffer(Relation index);
extern bool SimhashIndexHasPayload(Relation index);
extern uint16 SimhashLeafFlags(Relation index);
extern void SimhashCheckLeafPayload(Relation index, Buffer buf);
extern void SimhashCheckIncludedColumns(Relation index);
extern void SimhashReadRoots(Relation index, BlockNumber *roots, uint16 *levels);
extern SimhashOptions *SimhashGetOptions(Relation index);
extern int	SimhashGetFillfactor(Relation index);

/* shtree.c: descent and insertion */
extern Buffer SimhashDescend(Relation index, BlockNumber root, SimhashSortKey target,
							 int access);
extern Buffer SimhashDescendToLevel(Relation index, int band, BlockNumber root,
									uint16 rootlevel, SimhashSortKey target,
									uint16 level, int access);
extern Buffer SimhashDescendViaParent(Relation index, int band, BlockNumber root,
									  uint16 rootlevel, SimhashSortKey target,
									  Buffer *parent);
extern Buffer SimhashMoveRight(Relation index, Buffer buf, SimhashSortKey target,
							   int access);
extern void SimhashInsertSorted(Relation index, int band,
								SimhashEntry *entries, int n, bool retry);
extern int	SimhashLeafReplace(Relation index, int band, Buffer buf,
							   const SimhashEntry *entries, int n,
							   SimhashPivot **pivots);
extern void SimhashInsertPivots(Relation index, int band, uint16 level,
								SimhashPivot *pivots, int n);
extern void SimhashInsertLeafPivots(Relation index, int band, SimhashPivot *pivots,
									int npivots);

/* shinsert.c: aminsert and the per-transaction pending entries */
extern bool shinsert(Relation index, Datum *values, bool *isnull,
					 ItemPointer ht_ctid, Relation heapRel,
					 IndexUniqueCheck checkUnique, bool indexUnchanged,
					 struct IndexInfo *indexInfo);
extern void SimhashFlushPending(Relation index);
extern void SimhashFlushAllPending(void);

/*
 * Searches of the extension's own (shscan.c, shinsert.c): called with each
 * match's TID, fingerprint and distance from the centre; return false to
 * stop.
 */
typedef bool (*SimhashFoundCallback) (ItemPointer tid, uint64 fp, int dist, void *arg);
extern void SimhashPendingWithin(Relation index, uint64 center, int radius,
								 SimhashFoundCallback found, void *arg);
extern uint64 SimhashPendingFlushes(void);
extern void SimhashInstallInsertHooks(void);

/* shbuild.c */
extern IndexBuildResult *shbuild(Relation heap, Relation index,
								 struct IndexInfo *indexInfo);
extern void shbuildempty(Relation index);
extern char *shbuildphasename(int64 phasenum);

/* shprobe.c: which keys to probe for a radius */
typedef struct SimhashProbePlan
{
	int			radius[SIMHASH_NBANDS]; /* per band; -1 = band not probed */
	bool		fullscan;		/* scan band fullscan_band entirely instead */
	int			fullscan_band;
	double		cost;			/* estimated entries + probes, see shprobe.c */
} SimhashProbePlan;

extern void SimhashPlanProbes(int k, double nentries, SimhashProbePlan *plan);
extern int	SimhashEnumerateRing(uint16 center, int bits, uint16 *out);
extern double SimhashRingSize(int bits);
extern int	SimhashEnumerateBall(uint16 center, int bits, uint16 *out);
extern int	SimhashEnumerateBallSorted(uint16 center, int bits, uint16 *out);
extern double SimhashBallSize(int bits);
extern double SimhashPlanKeys(const SimhashProbePlan *plan, int band);
extern double SimhashBinomialWithin(int k);

/*
 * Population counts of the four 16-bit blocks of x, each in its own 16-bit
 * lane (SWAR: no function call per block; this runs for every entry read).
 */
static inline uint64
SimhashBlockCounts(uint64 x)
{
	x = x - ((x >> 1) & UINT64CONST(0x5555555555555555));
	x = (x & UINT64CONST(0x3333333333333333)) + ((x >> 2) & UINT64CONST(0x3333333333333333));
	x = (x + (x >> 4)) & UINT64CONST(0x0F0F0F0F0F0F0F0F);
	return (x + (x >> 8)) & UINT64CONST(0x00FF00FF00FF00FF);
}

/* The count of band "band" (0 = most significant block) from the lanes. */
static inline int
SimhashLane(uint64 counts, int band)
{
	return (int) ((counts >> (SIMHASH_BITS - SIMHASH_BLOCK_BITS * (band + 1))) & 0xFF);
}

/* The sum of the four lanes: the Hamming distance. */
static inline int
SimhashLaneSum(uint64 counts)
{
	return (int) ((counts * UINT64CONST(0x0001000100010001)) >> 48);
}

/*
 * Was a fingerprint at block distances "counts" from the centre already
 * reached by the probes of "radii" (a radius per band, -1 for none)?  A
 * band reaches it when its block is within that band's radius.  Every
 * search that probes band after band reports an entry only when the bands
 * before it did not reach it, so that each entry is reported once.
 */
static inline bool
SimhashReachedBefore(uint64 counts, const int *radii)
{
	for (int i = 0; i < SIMHASH_NBANDS; i++)
		if (radii[i] >= 0 && SimhashLane(counts, i) <= radii[i])
			return true;
	return false;
}

/* shscan.c */
extern IndexScanDesc shbeginscan(Relation r, int nkeys, int norderbys);
extern void shrescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
					 ScanKey orderbys, int norderbys);
extern bool shgettuple(IndexScanDesc scan, ScanDirection dir);
extern int64 shgetbitmap(IndexScanDesc scan, TIDBitmap *tbm);
extern void shendscan(IndexScanDesc scan);
extern void SimhashSearchWithin(Relation index, uint64 center, int radius,
								SimhashFoundCallback found, void *arg);
extern int64 SimhashCountWithin(Relation index, uint64 center, int radius, int64 limit);

/* shkeycache.c: decoded key runs for repeated searches */
typedef struct SimhashKeyCache SimhashKeyCache;
extern SimhashKeyCache *SimhashKeyCacheCreate(MemoryContext parent);
extern void SimhashKeyCacheReset(SimhashKeyCache *cache);
extern bool SimhashKeyCacheSearch(SimhashKeyCache *cache, Relation index, uint64 center,
								  int radius, SimhashFoundCallback found, void *arg);
extern void SimhashKeyCacheForget(SimhashKeyCache *cache, Relation index, uint64 fp);
extern void SimhashInstallKeyCache(void);

/*
 * Flags of the ORDER BY scan key, in the bits skey.h leaves to access
 * methods: the nearest sort node (nearestsort.c) sets them to have each
 * distance returned in the order of the index's included column, by the
 * default btree order of its type (src/README, "Included columns").
 */
#define SIMHASH_SK_PAYLOAD_ORDER		0x00010000
#define SIMHASH_SK_PAYLOAD_DESC			0x00020000
#define SIMHASH_SK_PAYLOAD_NULLS_FIRST	0x00040000
/*
 * And, in the 12 bits above them, how many rows the caller expects to take
 * (a hint, 0 if unknown or more than SIMHASH_SK_WANTED_MAX): the distance
 * that completes them is settled by the lean one-distance read.
 */
#define SIMHASH_SK_WANTED_SHIFT			19
#define SIMHASH_SK_WANTED_MAX			4095

/*
 * Rows a nearest-neighbour scan keeps at least before it drops farther
 * entries as it reads them (more if the caller's hint says so); a caller
 * that takes more makes the scan search again for a larger number.
 */
#define SIMHASH_KNN_KEEP_ROWS			256

/* shknn.c: asked by the nearest sort node */
extern bool SimhashKnnReturnedWithin(IndexScanDesc scan, int dist, bool last);

/* shvacuum.c */
extern IndexBulkDeleteResult *shbulkdelete(IndexVacuumInfo *info,
										   IndexBulkDeleteResult *stats,
										   IndexBulkDeleteCallback callback,
										   void *callback_state);
extern IndexBulkDeleteResult *shvacuumcleanup(IndexVacuumInfo *info,
											  IndexBulkDeleteResult *stats);

/* shcost.c */
extern void shcostestimate(PlannerInfo *root, IndexPath *path,
						   double loop_count, Cost *indexStartupCost,
						   Cost *indexTotalCost, Selectivity *indexSelectivity,
						   double *indexCorrelation, double *indexPages);

/* shhandler.c */
extern void SimhashRegisterOptions(void);

/* shvalidate.c */
extern bool shvalidate(Oid opclassoid);

#endif							/* SHINDEX_H */
