/*-------------------------------------------------------------------------
 *
 * shpage.h
 *	  The on-disk format of simhash index pages.
 *
 * Sort keys and entries, the metapage, leaf and internal page layouts and
 * the index options; the encoding of leaf entries is shleaf.h.  Used only
 * inside src/access/; a change here is an on-disk format change (src/README,
 * "Pages" and "Entry encoding").
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/access/shpage.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHPAGE_H
#define SHPAGE_H

#include "access/htup_details.h"
#include "access/itup.h"
#include "storage/bufpage.h"
#include "utils/relcache.h"

#include "simhash.h"

/* ------------------------------------------------------------------------
 * Sort keys and entries
 * ------------------------------------------------------------------------
 */
#define SIMHASH_NULL_BAND		4	/* the tree of NULL fingerprints */
#define SIMHASH_NTREES			5
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

/* the 48 bits of fp that are not block "block" */
static inline uint64
SimhashRestOf(uint64 fp, int block)
{
	int			shift = SIMHASH_BITS - SIMHASH_BLOCK_BITS * (block + 1);
	uint64		low = fp & ((UINT64CONST(1) << shift) - 1);
	uint64		high = (block == 0) ? 0 : fp >> (shift + SIMHASH_BLOCK_BITS);

	return (high << shift) | low;
}

/* reassemble a fingerprint from the key of block "block" and the rest */
static inline uint64
SimhashFingerprintOf(uint16 key, uint64 rest, int block)
{
	int			shift = SIMHASH_BITS - SIMHASH_BLOCK_BITS * (block + 1);
	uint64		low = rest & ((UINT64CONST(1) << shift) - 1);
	uint64		high = (block == 0) ? 0 :
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

/* Is sort key "key" below the high key of a page (always, if rightmost)? */
#define SimhashPageCovers(opaque, key) \
	(((opaque)->flags & SIMHASH_RIGHTMOST) || (key) < (opaque)->high)

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

/* shpage.c: page layouts */
extern void SimhashInitPage(Page page, uint16 flags, uint16 level, uint16 band);
extern void SimhashInitMetaPage(Page page, int fillfactor);
extern bool SimhashPageIsValid(Page page);
extern void SimhashCheckMetaPage(Relation index, Page page);
extern int	SimhashLeafNumEntries(Page page);
extern int	SimhashLeafDecode(Page page, SimhashEntry *out);
extern int	SimhashLeafFill(Page page, const SimhashEntry *entries, int n,
							Size limit);

#endif							/* SHPAGE_H */
