/*-------------------------------------------------------------------------
 *
 * shleaf.h
 *	  The encoding of simhash leaf entries: writing, iterating, decoding.
 *
 * The builder that writes a leaf's sorted area, the cursor that reads it
 * without decoding the whole page, and the inline decoders of the scans'
 * hot loop (varints, rests, payloads).  shpage.c holds the rest of the
 * page code; nothing here calls into it: a damaged entry is reported with
 * SimhashLeafCorrupt, inline.  Used only inside src/access/.  See
 * src/README, "Entry encoding".
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/access/shleaf.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHLEAF_H
#define SHLEAF_H

#include "access/genam.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#if PG_VERSION_NUM >= 160000
#include "utils/relfilenumbermap.h"
#else
#include "utils/relfilenodemap.h"
#endif

#include "shpage.h"

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

/*
 * The buffer whose page holds the byte at "where", or InvalidBuffer if it is
 * in no buffer (a page image being built).
 */
static inline Buffer
SimhashBufferHolding(const void *where)
{
	const char *p = (const char *) where;

	if (BufferBlocks != NULL && p >= BufferBlocks &&
		p < BufferBlocks + (Size) NBuffers * BLCKSZ)
		return (Buffer) ((p - BufferBlocks) / BLCKSZ) + 1;
	for (int i = 0; i < NLocBuffer; i++)
	{
		const char *block = (const char *) LocalBufferBlockPointers[i];

		if (block != NULL && p >= block && p < block + BLCKSZ)
			return -(i + 1);
	}
	return InvalidBuffer;
}

/*
 * The temporary relation of this session stored in relfilenode "number" of
 * tablespace spc (a local buffer's), or InvalidOid.  PostgreSQL's map from
 * storage to relation (RelidByRelfilenode) leaves temporary relations out,
 * so a damaged leaf of a temporary table's index is looked up here.
 */
static inline Oid
SimhashTempRelidByStorage(Oid spc, Oid number)
{
	Relation	rel;
	ScanKeyData key[2];
	SysScanDesc scan;
	HeapTuple	tup;
	Oid			relid = InvalidOid;

	if (spc == MyDatabaseTableSpace)
		spc = InvalidOid;		/* as pg_class stores it */
	ScanKeyInit(&key[0], Anum_pg_class_reltablespace, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(spc));
	ScanKeyInit(&key[1], Anum_pg_class_relfilenode, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(number));
	rel = table_open(RelationRelationId, AccessShareLock);
	scan = systable_beginscan(rel, ClassTblspcRelfilenodeIndexId, true, NULL, 2, key);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_class form = (Form_pg_class) GETSTRUCT(tup);

		if (form->relpersistence == RELPERSISTENCE_TEMP &&
			isTempOrTempToastNamespace(form->relnamespace))
		{
			relid = form->oid;
			break;
		}
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return relid;
}

/*
 * Report a leaf page whose contents contradict themselves; "where" is any
 * byte of the page.  The decoders see only the page, so the index and the
 * block are found from the buffer that holds it (pinned by the caller).
 * Inline, in core's terms only: the page format's header calls nothing in
 * the page code.
 */
pg_noreturn static inline void
SimhashLeafCorrupt(const void *where, const char *what)
{
	Buffer		buf = SimhashBufferHolding(where);
	RelFileLocator loc;
	ForkNumber	fork;
	BlockNumber blkno;
	Oid			relid;
	char	   *name = NULL;

	if (!BufferIsValid(buf))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("simhash index contains a corrupted leaf page"),
				 errdetail("%s", what),
				 errhint("Please REINDEX it.")));
	BufferGetTag(buf, &loc, &fork, &blkno);
#if PG_VERSION_NUM >= 160000
	relid = RelidByRelfilenumber(loc.spcOid, loc.relNumber);
	if (!OidIsValid(relid) && BufferIsLocal(buf))
		relid = SimhashTempRelidByStorage(loc.spcOid, loc.relNumber);
#else
	relid = RelidByRelfilenode(loc.spcNode, loc.relNode);
	if (!OidIsValid(relid) && BufferIsLocal(buf))
		relid = SimhashTempRelidByStorage(loc.spcNode, loc.relNode);
#endif
	if (OidIsValid(relid))
		name = get_rel_name(relid);
	if (name == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("simhash index with relfilenode %u contains a corrupted leaf page at block %u",
						SimhashLocatorNumber(loc), blkno),
				 errdetail("%s", what),
				 errhint("Please REINDEX it.")));
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("index \"%s\" contains a corrupted leaf page at block %u", name, blkno),
			 errdetail("%s", what),
			 errhint("Please REINDEX it.")));
}

/* Decode a varint at p; advances p. */
static inline uint64
SimhashGetVarint(const char **p)
{
	const unsigned char *s = (const unsigned char *) *p;
	uint64		v = s[0] & 0x7F;
	int			i = 0;

#ifndef WORDS_BIGENDIAN
	{
		/*
		 * Up to eight bytes at once, without a branch per byte: a probe
		 * decodes every entry of its key, hundreds at 10M rows, and the
		 * byte loop's mispredictions were most of the cost.  The varint
		 * ends at the first byte with its top bit clear; pack the 7-bit
		 * groups before it.  (The loop below reads as far, up to 10 bytes.)
		 */
		uint64		w;
		uint64		stops;

		memcpy(&w, s, sizeof(w));
		stops = ~w & UINT64CONST(0x8080808080808080);
		if (likely(stops != 0))
		{
			int			len = pg_rightmost_one_pos64(stops) / 8 + 1;

			if (len < 8)
				w &= (UINT64CONST(1) << (8 * len)) - 1;
			w &= UINT64CONST(0x7f7f7f7f7f7f7f7f);
			w = ((w & UINT64CONST(0x7f007f007f007f00)) >> 1) |
				(w & UINT64CONST(0x007f007f007f007f));
			w = ((w & UINT64CONST(0x3fff00003fff0000)) >> 2) |
				(w & UINT64CONST(0x00003fff00003fff));
			w = ((w & UINT64CONST(0x0fffffff00000000)) >> 4) |
				(w & UINT64CONST(0x000000000fffffff));
			*p = (const char *) s + len;
			return w;
		}
	}
#endif

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

#endif							/* SHLEAF_H */
