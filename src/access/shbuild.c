/*-------------------------------------------------------------------------
 *
 * shbuild.c
 *	  ambuild and ambuildempty for the simhash index.
 *
 * Spool, sort and bottom-up writing of the five trees, WAL-logged at the
 * end.  See src/README, "WAL" and "Terminology".
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/access/shbuild.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tableam.h"
#include "access/xloginsert.h"
#include "catalog/index.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/smgr.h"
#include "utils/backend_progress.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "shindex.h"
#include "shsort.h"

/* subphases reported in pg_stat_progress_create_index */
#define SIMHASH_PHASE_SCAN		2
#define SIMHASH_PHASE_SORT		3
#define SIMHASH_PHASE_WRITE		4

/*
 * The spools of a build.  An index with an included column spools each
 * entry's payload as a second record with the same key; both spools sort
 * the same set of unique keys, so they are read in step.  Whether the
 * payload is NULL travels in the entry's record, in a bit above the 48 of
 * the rest, so that the payload record can hold a whole Datum.
 */
#define SIMHASH_SPOOL_PAYLOAD_NULL	(UINT64CONST(1) << 63)

typedef struct SimhashBuildState
{
	SimhashSpool *spool;
	SimhashSpool *payloads;		/* key, payload Datum; NULL without one */
	double		indtuples;		/* rows added to the spool */
} SimhashBuildState;

/* Bottom-up writer of one level of one tree */
typedef struct SimhashLevelWriter
{
	Relation	index;
	int			band;
	uint16		level;
	Buffer		buf;			/* page being filled (locked), or invalid */
	SimhashSortKey *lows;		/* low key of every page written */
	BlockNumber *blocks;		/* and its block number */
	int			npages;
	int			maxpages;
} SimhashLevelWriter;

/* Report the name of a build subphase for pg_stat_progress_create_index. */
char *
shbuildphasename(int64 phasenum)
{
	switch (phasenum)
	{
		case PROGRESS_CREATEIDX_SUBPHASE_INITIALIZE:
			return "initializing";
		case SIMHASH_PHASE_SCAN:
			return "scanning table";
		case SIMHASH_PHASE_SORT:
			return "sorting entries";
		case SIMHASH_PHASE_WRITE:
			return "writing trees";
		default:
			return NULL;
	}
}

/* Spool the entries of one heap tuple (table_index_build_scan callback). */
static void
SimhashBuildCallback(Relation index, ItemPointer tid, Datum *values,
					 bool *isnull, bool tupleIsAlive, void *state)
{
	SimhashBuildState *bs = (SimhashBuildState *) state;

	if (ItemPointerGetOffsetNumber(tid) >= (1 << SIMHASH_OFFSET_BITS))
		elog(ERROR, "heap offset %u too large for a simhash index",
			 ItemPointerGetOffsetNumber(tid));

	if (isnull[0])
	{
		uint64		key = ((uint64) SIMHASH_NULL_BAND << SIMHASH_TREE_SHIFT) |
			SimhashMakeSortKey(0, tid);

		if (bs->payloads)
		{
			SimhashSpoolAdd(bs->spool, key, isnull[1] ? SIMHASH_SPOOL_PAYLOAD_NULL : 0);
			SimhashSpoolAdd(bs->payloads, key, isnull[1] ? 0 : (uint64) values[1]);
		}
		else
			SimhashSpoolAdd(bs->spool, key, 0);
	}
	else
	{
		uint64		fp = DatumGetSimhash64(values[0]);

		for (int band = 0; band < SIMHASH_BLOCKS; band++)
		{
			uint64		key = ((uint64) band << SIMHASH_TREE_SHIFT) |
				SimhashMakeSortKey(SimhashBlock(fp, band), tid);
			uint64		rest = SimhashRestOf(fp, band);

			if (bs->payloads)
			{
				SimhashSpoolAdd(bs->spool, key,
								rest | (isnull[1] ? SIMHASH_SPOOL_PAYLOAD_NULL : 0));
				SimhashSpoolAdd(bs->payloads, key, isnull[1] ? 0 : (uint64) values[1]);
			}
			else
				SimhashSpoolAdd(bs->spool, key, rest);
		}
	}
	bs->indtuples += 1;
}

/* Remember a finished page of a level: its low key and block. */
static void
SimhashLevelRecord(SimhashLevelWriter *w, SimhashSortKey low, BlockNumber blkno)
{
	if (w->npages == w->maxpages)
	{
		w->maxpages *= 2;
		w->lows = repalloc_huge(w->lows, sizeof(SimhashSortKey) * w->maxpages);
		w->blocks = repalloc_huge(w->blocks, sizeof(BlockNumber) * w->maxpages);
	}
	w->lows[w->npages] = low;
	w->blocks[w->npages] = blkno;
	w->npages++;
}

/* Start a level writer. */
static void
SimhashLevelBegin(SimhashLevelWriter *w, Relation index, int band, uint16 level)
{
	w->index = index;
	w->band = band;
	w->level = level;
	w->buf = InvalidBuffer;
	w->npages = 0;
	w->maxpages = 64;
	w->lows = palloc(sizeof(SimhashSortKey) * w->maxpages);
	w->blocks = palloc(sizeof(BlockNumber) * w->maxpages);
}

/*
 * Start a new page on the level, linking the previous one to it.  Nobody
 * else can see the index during a build, so the previous page can be
 * finished once its successor's block number is known.
 */
static Page
SimhashLevelNewPage(SimhashLevelWriter *w, SimhashSortKey low)
{
	Buffer		buf = SimhashNewBuffer(w->index);
	Page		page = BufferGetPage(buf);

	SimhashInitPage(page, (w->level == 0 ? SimhashLeafFlags(w->index) : 0) |
					SIMHASH_RIGHTMOST, w->level, w->band);
	if (BufferIsValid(w->buf))
	{
		SimhashPageOpaque prev = SimhashPageGetOpaque(BufferGetPage(w->buf));

		prev->rightlink = BufferGetBlockNumber(buf);
		prev->high = low;
		prev->flags &= ~SIMHASH_RIGHTMOST;
		MarkBufferDirty(w->buf);
		UnlockReleaseBuffer(w->buf);
	}
	w->buf = buf;
	SimhashLevelRecord(w, low, BufferGetBlockNumber(buf));
	return page;
}

/* Finish the last page of a level. */
static void
SimhashLevelEnd(SimhashLevelWriter *w)
{
	if (BufferIsValid(w->buf))
	{
		MarkBufferDirty(w->buf);
		UnlockReleaseBuffer(w->buf);
		w->buf = InvalidBuffer;
	}
}

/*
 * Build the internal levels of a tree above "leaves" and return the root's
 * block number and level.
 */
static BlockNumber
SimhashWriteUpperLevels(Relation index, int band, SimhashLevelWriter *below,
						int fillfactor, uint16 *rootlevel)
{
	int			per = Max(2, (int) (SimhashMaxPivots * fillfactor / 100));

	while (below->npages > 1)
	{
		SimhashLevelWriter up;

		CHECK_FOR_INTERRUPTS();
		SimhashLevelBegin(&up, index, band, below->level + 1);
		for (int i = 0; i < below->npages; i += per)
		{
			int			cnt = Min(per, below->npages - i);
			/* the first page of a level starts at 0, below every key */
			SimhashSortKey low = (i == 0) ? 0 : below->lows[i];
			Page		page = SimhashLevelNewPage(&up, low);
			SimhashPivot *pivots = SimhashPageGetPivots(page);

			for (int k = 0; k < cnt; k++)
			{
				SimhashSortKey key = (i + k == 0) ? 0 : below->lows[i + k];

				pivots[k].skey_hi = (uint32) (key >> 32);
				pivots[k].skey_lo = (uint32) key;
				pivots[k].child = below->blocks[i + k];
			}
			((PageHeader) page)->pd_lower += sizeof(SimhashPivot) * cnt;
		}
		SimhashLevelEnd(&up);
		pfree(below->lows);
		pfree(below->blocks);
		*below = up;
	}
	*rootlevel = below->level;
	return below->blocks[0];
}

/*
 * Next entry of the sorted spools (its tree in the top bits of rec->key);
 * false when they are all read.
 */
static bool
SimhashBuildNext(SimhashBuildState *bs, SimhashSpoolEntry *rec, SimhashEntry *e)
{
	SimhashSpoolEntry payload;

	if (!SimhashSpoolNext(bs->spool, rec))
		return false;
	e->skey = rec->key & ((UINT64CONST(1) << SIMHASH_TREE_SHIFT) - 1);
	e->rest = rec->rest & SIMHASH_REST_MASK;
	e->payload = (Datum) 0;
	e->payload_null = true;
	if (bs->payloads)
	{
		if (!SimhashSpoolNext(bs->payloads, &payload) || payload.key != rec->key)
			elog(ERROR, "simhash build spools are out of step");
		e->payload_null = (rec->rest & SIMHASH_SPOOL_PAYLOAD_NULL) != 0;
		e->payload = (Datum) payload.rest;
	}
	return true;
}

/*
 * Write all five trees from the sorted spools and fill in the metapage.
 */
static void
SimhashWriteTrees(Relation index, SimhashBuildState *bs, Buffer metabuf,
				  int fillfactor)
{
	Size		limit = SimhashLeafCapacity * fillfactor / 100;
	SimhashMetaPageData *meta = SimhashPageGetMeta(BufferGetPage(metabuf));
	SimhashSpoolEntry rec;
	SimhashEntry e;
	bool		have = SimhashBuildNext(bs, &rec, &e);
	int64		done = 0;

	for (int tree = 0; tree < SIMHASH_NTREES; tree++)
	{
		SimhashLevelWriter leaves;
		SimhashLeafBuilder builder;
		bool		open = false;

		SimhashLevelBegin(&leaves, index, tree, 0);
		while (have && (int) (rec.key >> SIMHASH_TREE_SHIFT) == tree)
		{
			if (!open || !SimhashLeafBuilderAdd(&builder, &e))
			{
				/* start the next leaf with this entry */
				if (open)
					SimhashLeafBuilderFinish(&builder);
				SimhashLeafBuilderBegin(&builder, SimhashLevelNewPage(&leaves, e.skey),
										limit);
				SimhashLeafBuilderAdd(&builder, &e);
				open = true;
			}
			have = SimhashBuildNext(bs, &rec, &e);
			if ((++done & 0xFFFF) == 0)
			{
				CHECK_FOR_INTERRUPTS();
				pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE,
											 done / SIMHASH_BLOCKS);
			}
		}
		if (open)
			SimhashLeafBuilderFinish(&builder);
		else
			SimhashLevelNewPage(&leaves, 0);	/* an empty tree: one empty leaf */
		SimhashLevelEnd(&leaves);
		meta->root[tree] = SimhashWriteUpperLevels(index, tree, &leaves, fillfactor,
												   &meta->rootlevel[tree]);
		pfree(leaves.lows);
		pfree(leaves.blocks);
	}
	if (have)
		elog(ERROR, "simhash build spool returned an entry of an unknown tree");
}

/*
 * ambuild: build a simhash index over the rows of heap.
 */
IndexBuildResult *
shbuild(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result;
	SimhashBuildState bs;
	Buffer		metabuf;
	int			fillfactor = SimhashGetFillfactor(index);
	double		reltuples;
	BlockNumber nblocks;

	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data",
			 RelationGetRelationName(index));
	SimhashCheckIncludedColumns(index);

	/*
	 * An exclusion constraint checks each new row by scanning the index with
	 * a dirty snapshot for conflicting rows of concurrent transactions.  Our
	 * inserts are buffered per backend, at the latest until commit, so such
	 * a scan could miss a conflicting row that another session has inserted
	 * but not yet flushed: refuse rather than enforce it wrongly.
	 */
	if (indexInfo->ii_ExclusionOps != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("simhash indexes do not support exclusion constraints"),
				 errdetail("New entries reach a simhash index in batches, at the latest at commit, so a concurrent insertion cannot be checked against them."),
				 errhint("Use a UNIQUE constraint (a btree index) for equal fingerprints.")));

	/* block 0 is the metapage; its roots are filled in at the end */
	metabuf = SimhashNewBuffer(index);
	Assert(BufferGetBlockNumber(metabuf) == SIMHASH_METAPAGE_BLKNO);
	SimhashInitMetaPage(BufferGetPage(metabuf), fillfactor);

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, SIMHASH_PHASE_SCAN);
	if (SimhashIndexHasPayload(index))
	{
		/* the payloads' records take as much room as the entries' */
		bs.spool = SimhashSpoolBegin((Size) maintenance_work_mem * 1024 / 2);
		bs.payloads = SimhashSpoolBegin((Size) maintenance_work_mem * 1024 / 2);
	}
	else
	{
		bs.spool = SimhashSpoolBegin((Size) maintenance_work_mem * 1024);
		bs.payloads = NULL;
	}
	bs.indtuples = 0;
	reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
									   SimhashBuildCallback, (void *) &bs, NULL);

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, SIMHASH_PHASE_SORT);
	if (SimhashSpoolNumRuns(bs.spool) > 0)
		ereport(NOTICE,
				(errmsg("simhash index entries did not fit into \"maintenance_work_mem\"; sorted %d runs on disk",
						SimhashSpoolNumRuns(bs.spool) +
						(bs.payloads ? SimhashSpoolNumRuns(bs.payloads) : 0)),
				 errdetail("The index holds %.0f rows, four entries each.", bs.indtuples),
				 errhint("Increase \"maintenance_work_mem\" to at least %d MB to build faster.",
						 (int) (bs.indtuples * SIMHASH_BLOCKS * 2 * sizeof(SimhashSpoolEntry) *
								(bs.payloads ? 2 : 1) / (1024 * 1024)) + 1)));
	SimhashSpoolSort(bs.spool);
	if (bs.payloads)
		SimhashSpoolSort(bs.payloads);

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, SIMHASH_PHASE_WRITE);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_TOTAL, (int64) bs.indtuples);
	SimhashWriteTrees(index, &bs, metabuf, fillfactor);
	SimhashSpoolEnd(bs.spool);
	if (bs.payloads)
		SimhashSpoolEnd(bs.payloads);

	MarkBufferDirty(metabuf);
	UnlockReleaseBuffer(metabuf);

	/*
	 * WAL-log every page once, now that they are all written.  The pages
	 * were built without WAL; until this record a crash loses the whole
	 * (uncommitted) index, which is what CREATE INDEX promises anyway.
	 */
	nblocks = RelationGetNumberOfBlocks(index);
	if (RelationNeedsWAL(index))
		log_newpage_range(index, MAIN_FORKNUM, 0, nblocks, true);

	result = (IndexBuildResult *) palloc(sizeof(IndexBuildResult));
	result->heap_tuples = reltuples;
	result->index_tuples = bs.indtuples;
	return result;
}

/*
 * ambuildempty: write the init fork of an unlogged index: a metapage and
 * five empty root leaves.
 */
void
shbuildempty(Relation index)
{
	SimhashForkWriter writer;
	SimhashMetaPageData *meta;

	SimhashCheckIncludedColumns(index);

	/*
	 * Written and WAL-logged even with wal_level = minimal: recovery might
	 * otherwise remove the file (see contrib/bloom).
	 */
	SimhashForkWriterStart(&writer, index, INIT_FORKNUM);
	for (BlockNumber blkno = 0; blkno <= SIMHASH_NTREES; blkno++)
	{
		Page		page = SimhashForkWriterPage(&writer);

		if (blkno == SIMHASH_METAPAGE_BLKNO)
		{
			SimhashInitMetaPage(page, SimhashGetFillfactor(index));
			meta = SimhashPageGetMeta(page);
			for (int t = 0; t < SIMHASH_NTREES; t++)
			{
				meta->root[t] = t + 1;
				meta->rootlevel[t] = 0;
			}
		}
		else
			SimhashInitPage(page, SimhashLeafFlags(index) | SIMHASH_RIGHTMOST, 0, blkno - 1);
		SimhashForkWriterWrite(&writer, blkno);
	}
	SimhashForkWriterFinish(&writer);
}
