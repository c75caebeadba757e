/*-------------------------------------------------------------------------
 *
 * shcheck.c
 *	  simhash_index_check, simhash_index_stats, simhash_index_heavy_keys.
 *
 * See src/README, "Verification", for the invariants checked.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/access/shcheck.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "catalog/pg_am.h"
#include "common/hashfn.h"
#include "funcapi.h"
#include "lib/bloomfilter.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"

#include "shindex.h"

PG_FUNCTION_INFO_V1(simhash_index_check);
PG_FUNCTION_INFO_V1(simhash_index_stats);
PG_FUNCTION_INFO_V1(simhash_index_heavy_keys);

/* What a walk over a tree gathers */
typedef struct SimhashTreeSummary
{
	int64		entries;
	int64		appended;		/* entries in append areas */
	int64		leaf_pages;
	int64		internal_pages;
	int			levels;
	int64		used_bytes;		/* leaf bytes used by entries and restarts */
	uint32	   *keycounts;		/* optional: entries per key (SIMHASH_BLOCK_KEYS) */
} SimhashTreeSummary;

/* a visible heap row, in the exact mode of heapallindexed */
typedef struct SimhashHeapRow
{
	uint64		tidkey;			/* hash key: block << 11 | offset */
	uint64		fp;
	Datum		payload;		/* the included column, if any */
	bool		isnull;
	bool		payload_null;
	uint8		seen[SIMHASH_NTREES];	/* entries found per tree */
} SimhashHeapRow;

/* State of simhash_index_check */
typedef struct SimhashCheckState
{
	Relation	index;
	bloom_filter *filter;		/* Bloom mode: (tree, TID, fp) triples */
	HTAB	   *rows;			/* exact mode: the visible rows */
	int64		heaptuples;
	int64		missing;
	ItemPointerData first_missing;
} SimhashCheckState;

/* Raise an index corruption error about a block. */
static void
SimhashCorrupt(Relation index, BlockNumber blkno, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("simhash index \"%s\" is corrupted at block %u",
					RelationGetRelationName(index), blkno),
			 errdetail("%s", what),
			 errhint("Please REINDEX it.")));
}

/*
 * Mix a (tree, TID, fingerprint, payload) tuple into 64 bits for the Bloom
 * filter; an index without an included column has a NULL payload.
 */
static inline uint64
SimhashTripleHash(int tree, SimhashSortKey skey, uint64 fp, Datum payload,
				  bool payload_null)
{
	uint64		tidbits = skey & ((UINT64CONST(1) << SIMHASH_KEY_SHIFT) - 1);
	uint64		pbits = payload_null ? UINT64CONST(0x5BD1E995) :
		hash_bytes_uint32_extended((uint32) payload, (uint64) payload >> 32);

	return hash_bytes_uint32_extended((uint32) tidbits,
									  fp ^ (tidbits >> 32) * UINT64CONST(0x9E3779B97F4A7C15) ^
									  (uint64) (tree + 1) * UINT64CONST(0xC2B2AE3D27D4EB4F) ^
									  pbits * UINT64CONST(0x94D049BB133111EB));
}

/*
 * Open a simhash index and its table for inspection, after checking that
 * the caller may see what inspection shows.  The functions are revoked
 * from PUBLIC, but a role granted EXECUTE must still hold SELECT on the
 * table, and must not be subject to its row-level security: the blocks of
 * the fingerprints in the index, and its counts, belong to every row,
 * including rows that policies hide.  Privileges are checked before any
 * lock is taken, so that nobody can block a table they cannot read.
 */
static Relation
SimhashOpenIndex(Oid indexoid, Relation *heap_out)
{
	Oid			heapoid = IndexGetRelation(indexoid, true);
	Relation	heap;
	Relation	index;
	char	   *name;

	if (!OidIsValid(heapoid))
	{
		name = get_rel_name(indexoid);
		if (name == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_TABLE),
					 errmsg("relation with OID %u does not exist", indexoid)));
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a simhash index", name)));
	}
	if (pg_class_aclcheck(heapoid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for table %s", get_rel_name(heapoid)),
				 errdetail("Inspecting a simhash index shows the fingerprints of its table's rows.")));
	if (check_enable_rls(heapoid, InvalidOid, true) == RLS_ENABLED)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("cannot inspect an index of table \"%s\", which has row-level security",
						get_rel_name(heapoid)),
				 errdetail("Inspection would show the fingerprints of rows the policies hide."),
				 errhint("Inspect it as the table's owner or as a role with BYPASSRLS.")));

	/* lock the table first, as every other user of the index does */
	heap = table_open(heapoid, AccessShareLock);
	index = index_open(indexoid, AccessShareLock);
	if (index->rd_index->indrelid != heapoid)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("could not open the table of index \"%s\"",
						RelationGetRelationName(index)),
				 errdetail("The index was dropped and its OID reused meanwhile.")));
	if (!SimhashIsIndexAm(index->rd_rel->relam))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a simhash index", RelationGetRelationName(index))));
	if (RELATION_IS_OTHER_TEMP(index))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot inspect temporary indexes of other sessions")));
	if (!index->rd_index->indisvalid)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("index \"%s\" is not valid", RelationGetRelationName(index)),
				 errhint("Rebuild it with REINDEX or wait for CREATE INDEX CONCURRENTLY to finish.")));
	*heap_out = heap;
	return index;
}

/* Close what SimhashOpenIndex opened. */
static void
SimhashCloseIndex(Relation index, Relation heap)
{
	index_close(index, AccessShareLock);
	table_close(heap, AccessShareLock);
}

/* Key of a TID in the table of visible rows. */
static inline uint64
SimhashTidKey(SimhashSortKey skey)
{
	return skey & ((UINT64CONST(1) << SIMHASH_KEY_SHIFT) - 1);
}

/*
 * heapallindexed: account for one index entry.  In Bloom mode remember it;
 * in exact mode, an entry of a visible row must carry that row's
 * fingerprint (or be in the NULL tree for a NULL one) and included value,
 * and is counted.
 */
static void
SimhashCheckEntry(SimhashCheckState *cs, int tree, const SimhashEntry *e, uint64 fp,
				  BlockNumber blkno)
{
	SimhashSortKey skey = e->skey;

	if (cs->filter)
	{
		uint64		h = SimhashTripleHash(tree, skey, fp, e->payload, e->payload_null);

		bloom_add_element(cs->filter, (unsigned char *) &h, sizeof(h));
	}
	if (cs->rows)
	{
		uint64		key = SimhashTidKey(skey);
		SimhashHeapRow *row = hash_search(cs->rows, &key, HASH_FIND, NULL);
		ItemPointerData tid;

		if (row == NULL)
			return;				/* a dead row's entry: VACUUM's business */
		SimhashSortKeyTid(skey, &tid);
		if ((tree == SIMHASH_NULL_BAND) != row->isnull ||
			(!row->isnull && row->fp != fp))
			SimhashCorrupt(cs->index, blkno,
						   psprintf("The entry of tree %d for row (%u,%u) carries fingerprint %016" PRIx64 ", the row has %s.",
									tree, ItemPointerGetBlockNumber(&tid),
									ItemPointerGetOffsetNumber(&tid), fp,
									row->isnull ? "NULL" : psprintf("%016" PRIx64, row->fp)));
		if (e->payload_null != row->payload_null ||
			(!row->payload_null && e->payload != row->payload))
			SimhashCorrupt(cs->index, blkno,
						   psprintf("The entry of tree %d for row (%u,%u) carries another value of the included column than the row.",
									tree, ItemPointerGetBlockNumber(&tid),
									ItemPointerGetOffsetNumber(&tid)));
		if (row->seen[tree] < 255)
			row->seen[tree]++;
	}
}

/* Downlinks of one tree level, in key order */
typedef struct SimhashDownlinks
{
	BlockNumber *blocks;
	SimhashSortKey *keys;
	int64		n;
	int64		max;
} SimhashDownlinks;

/* Append a downlink, growing the arrays as needed. */
static void
SimhashAddDownlink(SimhashDownlinks *d, BlockNumber child, SimhashSortKey key)
{
	if (d->n == d->max)
	{
		d->max = Max(64, d->max * 2);
		d->blocks = d->blocks ? repalloc_huge(d->blocks, sizeof(BlockNumber) * d->max)
			: palloc(sizeof(BlockNumber) * d->max);
		d->keys = d->keys ? repalloc_huge(d->keys, sizeof(SimhashSortKey) * d->max)
			: palloc(sizeof(SimhashSortKey) * d->max);
	}
	d->blocks[d->n] = child;
	d->keys[d->n] = key;
	d->n++;
}

/* Free a downlink list's arrays. */
static void
SimhashFreeDownlinks(SimhashDownlinks *d)
{
	if (d->blocks)
	{
		pfree(d->blocks);
		pfree(d->keys);
	}
	memset(d, 0, sizeof(SimhashDownlinks));
}

/*
 * Check one leaf page whose keys start at "low" and pass each entry to the
 * heap check; add it to the summary.  "entries" has room for a page.
 */
static void
SimhashWalkLeaf(Relation index, int tree, BlockNumber blkno, Page page,
				SimhashSortKey low, bool check, SimhashCheckState *cs,
				SimhashTreeSummary *sum, SimhashEntry *entries)
{
	SimhashPageOpaque op = SimhashPageGetOpaque(page);
	int			n;
	SimhashLeafCursor cur;
	SimhashEntry e;
	SimhashSortKey prev = 0;
	int			k = 0;

	if (check && ((op->flags & SIMHASH_PAYLOAD) != 0) != SimhashIndexHasPayload(index))
		SimhashCorrupt(index, blkno,
					   "The leaf's entries do not match the index's included columns.");

	/* the sorted area alone must decode in strictly increasing order */
	SimhashLeafCursorSeek(&cur, page, 0);
	while (SimhashLeafCursorNextSorted(&cur, &e))
	{
		if (check && k > 0 && e.skey <= prev)
			SimhashCorrupt(index, blkno, "Sorted entries are out of order.");
		prev = e.skey;
		k++;
	}
	if (check && (k != op->nsorted || cur.pos != cur.end))
		SimhashCorrupt(index, blkno, "The sorted area does not decode to its recorded size.");

	n = SimhashLeafDecode(page, entries);
	for (int i = 0; i < n; i++)
	{
		uint64		fp;

		if (check && i > 0 && entries[i].skey <= entries[i - 1].skey)
			SimhashCorrupt(index, blkno, "An appended entry repeats a sorted one.");
		if (check && (entries[i].skey < low ||
					  !SimhashPageCovers(op, entries[i].skey)))
			SimhashCorrupt(index, blkno, "An entry lies outside the page's key range.");
		if (check && (entries[i].rest & ~SIMHASH_REST_MASK) != 0)
			SimhashCorrupt(index, blkno, "An entry's rest has more than 48 bits.");
		fp = (tree == SIMHASH_NULL_BAND) ? 0 :
			SimhashFingerprintOf(SimhashSortKeyKey(entries[i].skey),
								 entries[i].rest, tree);
		if (check && tree == SIMHASH_NULL_BAND &&
			(SimhashSortKeyKey(entries[i].skey) != 0 || entries[i].rest != 0))
			SimhashCorrupt(index, blkno, "A NULL entry has a fingerprint.");
		if (cs)
			SimhashCheckEntry(cs, tree, &entries[i], fp, blkno);
		if (sum->keycounts)
			sum->keycounts[SimhashSortKeyKey(entries[i].skey)]++;
	}
	sum->entries += n;
	sum->appended += SimhashLeafAppendCount(page);
	sum->leaf_pages++;
	sum->used_bytes += SimhashLeafCapacity - SimhashLeafFreeSpace(page);
}

/*
 * Check the pivots of one internal page whose keys start at "low", and
 * collect its downlinks for the level below.
 */
static void
SimhashWalkInternal(Relation index, BlockNumber blkno, Page page, SimhashSortKey low,
					bool check, SimhashTreeSummary *sum, SimhashDownlinks *below)
{
	SimhashPageOpaque op = SimhashPageGetOpaque(page);
	SimhashPivot *pivots = SimhashPageGetPivots(page);
	int			np = SimhashPageNumPivots(page);

	if (check && np == 0)
		SimhashCorrupt(index, blkno, "An internal page has no pivots.");
	for (int i = 0; i < np; i++)
	{
		SimhashSortKey key = SimhashPivotKey(&pivots[i]);

		if (check && ((i == 0 && key != low) ||
					  (i > 0 && key <= SimhashPivotKey(&pivots[i - 1])) ||
					  !SimhashPageCovers(op, key)))
			SimhashCorrupt(index, blkno, "Pivot keys are out of order or out of range.");
		SimhashAddDownlink(below, pivots[i].child, key);
	}
	sum->internal_pages++;
}

/*
 * Walk one tree level by level; check invariants (when "check"), and
 * gather a summary.  With heapallindexed, every leaf entry also goes to
 * SimhashCheckEntry.
 */
static void
SimhashWalkTree(Relation index, int tree, BlockNumber root, uint16 rootlevel,
				bool check, SimhashCheckState *cs, SimhashTreeSummary *sum)
{
	BlockNumber leftmost = root;
	SimhashDownlinks above = {0};	/* downlinks of the level above, in order */
	SimhashEntry *entries = palloc(sizeof(SimhashEntry) * SIMHASH_MAX_LEAF_ENTRIES);

	sum->levels = rootlevel + 1;
	for (int level = rootlevel; level >= 0; level--)
	{
		BlockNumber blkno = leftmost;
		SimhashSortKey low = 0;
		int64		nextchild = 0;
		SimhashDownlinks below = {0};

		while (blkno != InvalidBlockNumber)
		{
			Buffer		buf;
			Page		page;
			SimhashPageOpaque op;

			CHECK_FOR_INTERRUPTS();
			buf = SimhashReadLinkedBuffer(index, blkno);
			LockBuffer(buf, BUFFER_LOCK_SHARE);
			page = BufferGetPage(buf);
			if (!SimhashPageIsValid(page))
				SimhashCorrupt(index, blkno, "The page is not a simhash page.");
			op = SimhashPageGetOpaque(page);
			if (check && (op->band != tree || op->level != level ||
						  (op->flags & SIMHASH_META) ||
						  ((op->flags & SIMHASH_LEAF) != 0) != (level == 0)))
				SimhashCorrupt(index, blkno,
							   psprintf("The page claims tree %d level %d, expected tree %d level %d.",
										op->band, op->level, tree, level));
			if (check && !(op->flags & SIMHASH_RIGHTMOST) && op->high <= low)
				SimhashCorrupt(index, blkno, "The high key does not exceed the low bound.");

			/* downlinks from the level above must match this chain, in order */
			if (check && level < rootlevel)
			{
				if (nextchild < above.n && above.blocks[nextchild] == blkno)
				{
					if (above.keys[nextchild] != low)
						SimhashCorrupt(index, blkno,
									   "The downlink's pivot key differs from the page's low bound.");
					nextchild++;
				}
				else if (blkno == leftmost && above.n > 0)
					SimhashCorrupt(index, blkno, "The leftmost page has no downlink.");
			}

			if (level == 0)
				SimhashWalkLeaf(index, tree, blkno, page, low, check, cs, sum, entries);
			else
				SimhashWalkInternal(index, blkno, page, low, check, sum, &below);

			if (op->flags & SIMHASH_RIGHTMOST)
			{
				if (check && op->rightlink != InvalidBlockNumber)
					SimhashCorrupt(index, blkno, "The rightmost page has a right-link.");
				low = SIMHASH_SORTKEY_MAX;
				blkno = InvalidBlockNumber;
			}
			else
			{
				if (check && op->rightlink == InvalidBlockNumber)
					SimhashCorrupt(index, blkno, "A page that is not rightmost has no right-link.");
				low = op->high;
				blkno = op->rightlink;
			}
			UnlockReleaseBuffer(buf);
		}
		if (check && level < rootlevel && nextchild != above.n)
			SimhashCorrupt(index, above.blocks[nextchild],
						   "A downlink points to a page that is not on the level below, or out of order.");

		if (level > 0)
		{
			if (below.n == 0)
				SimhashCorrupt(index, leftmost, "A level has no downlinks.");
			leftmost = below.blocks[0];
			SimhashFreeDownlinks(&above);
			above = below;
		}
	}
	SimhashFreeDownlinks(&above);
	pfree(entries);
}

/* table_index_build_scan callback: is this visible row in the index? */
static void
SimhashCheckHeapCallback(Relation index, ItemPointer tid, Datum *values,
						 bool *isnull, bool tupleIsAlive, void *state)
{
	SimhashCheckState *cs = (SimhashCheckState *) state;
	SimhashSortKey skey = SimhashMakeSortKey(0, tid);
	uint64		fp = isnull[0] ? 0 : DatumGetSimhash64(values[0]);
	bool		payload_null = !SimhashIndexHasPayload(index) || isnull[1];
	Datum		payload = payload_null ? (Datum) 0 : values[1];
	bool		lacking = false;

	cs->heaptuples++;
	if (cs->rows)
	{
		uint64		key = SimhashTidKey(skey);
		bool		found;
		SimhashHeapRow *row = hash_search(cs->rows, &key, HASH_ENTER, &found);

		row->fp = fp;
		row->isnull = isnull[0];
		row->payload = payload;
		row->payload_null = payload_null;
		memset(row->seen, 0, sizeof(row->seen));
		return;
	}
	if (isnull[0])
	{
		uint64		h = SimhashTripleHash(SIMHASH_NULL_BAND, skey, 0, payload, payload_null);

		lacking = bloom_lacks_element(cs->filter, (unsigned char *) &h, sizeof(h));
	}
	else
	{
		for (int band = 0; band < SIMHASH_BLOCKS && !lacking; band++)
		{
			uint64		h = SimhashTripleHash(band, skey, fp, payload, payload_null);

			lacking = bloom_lacks_element(cs->filter, (unsigned char *) &h, sizeof(h));
		}
	}
	if (lacking)
	{
		if (cs->missing == 0)
			cs->first_missing = *tid;
		cs->missing++;
	}
}

/*
 * simhash_index_check(index regclass, heapallindexed boolean) -> void
 */
Datum
simhash_index_check(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	bool		heapallindexed = PG_GETARG_BOOL(1);
	Relation	heap;
	Relation	index;
	BlockNumber roots[SIMHASH_NTREES];
	uint16		levels[SIMHASH_NTREES];
	SimhashTreeSummary sums[SIMHASH_NTREES];
	SimhashCheckState cs;
	Snapshot	snapshot = InvalidSnapshot;

	index = SimhashOpenIndex(indexoid, &heap);
	SimhashFlushPending(index);

	memset(&cs, 0, sizeof(cs));
	cs.index = index;
	SimhashReadRoots(index, roots, levels);
	memset(sums, 0, sizeof(sums));

	if (!heapallindexed)
	{
		for (int tree = 0; tree < SIMHASH_NTREES; tree++)
			SimhashWalkTree(index, tree, roots[tree], levels[tree], true, NULL, &sums[tree]);
	}
	else
	{
		double		reltuples = Max(heap->rd_rel->reltuples, 1000);
		IndexInfo  *indexInfo = BuildIndexInfo(index);
		TableScanDesc scan;
		bool		exact = reltuples * 64 <= (double) maintenance_work_mem * 1024;

		/*
		 * The snapshot comes first: the rows it sees committed before it,
		 * so their entries were written before (at pre-commit), and VACUUM
		 * cannot remove them while the snapshot is registered.  Only rows
		 * visible to it are considered, as amcheck does.
		 */
		snapshot = RegisterSnapshot(GetTransactionSnapshot());
		indexInfo->ii_Concurrent = true;
		if (exact)
		{
			/*
			 * Exact: collect the visible rows, then every entry of a visible
			 * row must carry its fingerprint, once per tree.
			 */
			HASHCTL		ctl;
			HASH_SEQ_STATUS status;
			SimhashHeapRow *row;

			ctl.keysize = sizeof(uint64);
			ctl.entrysize = sizeof(SimhashHeapRow);
			ctl.hcxt = CurrentMemoryContext;
			cs.rows = hash_create("simhash check rows", (long) reltuples, &ctl,
								  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
			scan = table_beginscan_strat(heap, snapshot, 0, NULL, true, true);
			table_index_build_scan(heap, index, indexInfo, true, false,
								   SimhashCheckHeapCallback, (void *) &cs, scan);
			for (int tree = 0; tree < SIMHASH_NTREES; tree++)
				SimhashWalkTree(index, tree, roots[tree], levels[tree], true, &cs, &sums[tree]);
			hash_seq_init(&status, cs.rows);
			while ((row = hash_seq_search(&status)) != NULL)
			{
				for (int tree = 0; tree < SIMHASH_NTREES; tree++)
				{
					int			want = (tree == SIMHASH_NULL_BAND) == row->isnull ? 1 : 0;

					if (row->seen[tree] != want)
					{
						if (cs.missing == 0)
							ItemPointerSet(&cs.first_missing,
										   (BlockNumber) (row->tidkey >> SIMHASH_OFFSET_BITS),
										   (OffsetNumber) (row->tidkey & ((1 << SIMHASH_OFFSET_BITS) - 1)));
						cs.missing++;
						break;
					}
				}
			}
			hash_destroy(cs.rows);
		}
		else
		{
			/* Bloom: remember every entry, then look up every visible row */
			ereport(NOTICE,
					(errmsg("simhash_index_check checks heap rows against a Bloom filter"),
					 errdetail("An exact check of stale and repeated entries needs about %.0f MB of maintenance_work_mem.",
							   reltuples * 64 / (1024 * 1024))));
			cs.filter = bloom_create((int64) (reltuples * 6 + RelationGetNumberOfBlocks(index) * 900),
									 maintenance_work_mem, 0);
			for (int tree = 0; tree < SIMHASH_NTREES; tree++)
				SimhashWalkTree(index, tree, roots[tree], levels[tree], true, &cs, &sums[tree]);
			scan = table_beginscan_strat(heap, snapshot, 0, NULL, true, true);
			table_index_build_scan(heap, index, indexInfo, true, false,
								   SimhashCheckHeapCallback, (void *) &cs, scan);
			bloom_free(cs.filter);
		}
		UnregisterSnapshot(snapshot);
		if (cs.missing > 0)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("simhash index \"%s\" lacks entries, or repeats them, for " INT64_FORMAT " of " INT64_FORMAT " rows of table \"%s\"",
							RelationGetRelationName(index), cs.missing, cs.heaptuples,
							RelationGetRelationName(heap)),
					 errdetail("The first such row is at (%u,%u).",
							   ItemPointerGetBlockNumber(&cs.first_missing),
							   ItemPointerGetOffsetNumber(&cs.first_missing)),
					 errhint("Please REINDEX it.")));
	}

	SimhashCloseIndex(index, heap);
	PG_RETURN_VOID();
}

/*
 * Flush this backend's buffered entries and summarize trees 0 .. ntrees-1
 * into sums; with keycounts, also count each tree's entries per key.
 */
static void
SimhashSummarizeTrees(Relation index, int ntrees, SimhashTreeSummary *sums,
					  uint32 **keycounts)
{
	BlockNumber roots[SIMHASH_NTREES];
	uint16		levels[SIMHASH_NTREES];

	Assert(ntrees <= SIMHASH_NTREES);
	SimhashFlushPending(index);
	SimhashReadRoots(index, roots, levels);
	for (int tree = 0; tree < ntrees; tree++)
	{
		memset(&sums[tree], 0, sizeof(SimhashTreeSummary));
		if (keycounts != NULL)
			sums[tree].keycounts = keycounts[tree] =
				palloc0(sizeof(uint32) * SIMHASH_BLOCK_KEYS);
		SimhashWalkTree(index, tree, roots[tree], levels[tree], false, NULL,
						&sums[tree]);
	}
}

/*
 * simhash_index_stats(index regclass) -> setof (tree text, levels int4,
 *		leaf_pages int8, internal_pages int8, entries int8, appended int8,
 *		bytes_per_entry float8)
 */
Datum
simhash_index_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	heap;
	Relation	index;
	SimhashTreeSummary sums[SIMHASH_NTREES];

	InitMaterializedSRF(fcinfo, 0);
	index = SimhashOpenIndex(PG_GETARG_OID(0), &heap);
	SimhashSummarizeTrees(index, SIMHASH_NTREES, sums, NULL);
	for (int tree = 0; tree < SIMHASH_NTREES; tree++)
	{
		SimhashTreeSummary sum = sums[tree];
		Datum		values[7];
		bool		nulls[7] = {false};

		values[0] = CStringGetTextDatum(tree == SIMHASH_NULL_BAND ? "nulls" :
										psprintf("band %d", tree));
		values[1] = Int32GetDatum(sum.levels);
		values[2] = Int64GetDatum(sum.leaf_pages);
		values[3] = Int64GetDatum(sum.internal_pages);
		values[4] = Int64GetDatum(sum.entries);
		values[5] = Int64GetDatum(sum.appended);
		if (sum.entries > 0)
			values[6] = Float8GetDatum((double) sum.used_bytes / sum.entries);
		else
			nulls[6] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	SimhashCloseIndex(index, heap);
	return (Datum) 0;
}

/* qsort comparator: uint64 in decreasing order */
static int
SimhashCompareDescending(const void *a, const void *b)
{
	uint64		x = *(const uint64 *) a;
	uint64		y = *(const uint64 *) b;

	return (x < y) - (x > y);
}

/*
 * simhash_index_heavy_keys(index regclass, n int4) -> setof (band int4,
 *		key text, entries int8): the n longest key lists over all bands.
 */
Datum
simhash_index_heavy_keys(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			limit = PG_GETARG_INT32(1);
	Relation	heap;
	Relation	index;
	SimhashTreeSummary sums[SIMHASH_BLOCKS];
	uint32	   *counts[SIMHASH_BLOCKS];

	if (limit < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of keys must not be negative")));
	InitMaterializedSRF(fcinfo, 0);
	index = SimhashOpenIndex(PG_GETARG_OID(0), &heap);
	SimhashSummarizeTrees(index, SIMHASH_BLOCKS, sums, counts);

	/* sort the non-empty key lists by length, longest first */
	{
		int64		nkeys = 0;
		uint64	   *packed;

		for (int band = 0; band < SIMHASH_BLOCKS; band++)
			for (int key = 0; key < SIMHASH_BLOCK_KEYS; key++)
				nkeys += (counts[band][key] != 0);
		packed = palloc(sizeof(uint64) * Max(nkeys, 1));
		nkeys = 0;
		for (int band = 0; band < SIMHASH_BLOCKS; band++)
			for (int key = 0; key < SIMHASH_BLOCK_KEYS; key++)
				if (counts[band][key] != 0)
					packed[nkeys++] = ((uint64) counts[band][key] << 20) |
						((uint64) band << 16) | (uint64) key;
		qsort(packed, nkeys, sizeof(uint64), SimhashCompareDescending);
		for (int64 i = 0; i < Min(nkeys, (int64) limit); i++)
		{
			Datum		values[3];
			bool		nulls[3] = {false};

			values[0] = Int32GetDatum((int32) ((packed[i] >> 16) & 0xF));
			values[1] = CStringGetTextDatum(psprintf("%04x", (unsigned) (packed[i] & 0xFFFF)));
			values[2] = Int64GetDatum((int64) (packed[i] >> 20));
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
		pfree(packed);
	}
	SimhashCloseIndex(index, heap);
	return (Datum) 0;
}
