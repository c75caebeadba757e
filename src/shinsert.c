/*-------------------------------------------------------------------------
 *
 * shinsert.c
 *	  aminsert for the simhash index, with per-transaction batching.
 *
 * A row adds one entry to each of the four band trees.  Written one at a
 * time, every entry costs a generic WAL record whose delta computation reads
 * the whole 8 kB page, which makes bulk loads slow.  So aminsert only
 * remembers the row (fingerprint and TID) in backend-local memory, and the
 * entries are written in sorted batches ("flushed"), one page rewrite per
 * leaf for however many entries land on it.  Correctness rests on flushing
 * before anyone could need the entries:
 *
 *	- other transactions cannot see this transaction's rows before it
 *	  commits, and the flush happens at PRE_COMMIT (and PRE_PREPARE), before
 *	  the commit record, so committed rows always have their index entries
 *	  and a crash before commit loses only uncommitted rows;
 *	- this transaction's own scans of the index flush that index first
 *	  (shrescan), so they see their own inserts;
 *	- parallel workers read shared buffers, not our memory, so every pending
 *	  entry is flushed before a plan that may start workers (ExecutorStart);
 *	- the batch is flushed whenever it reaches work_mem.
 *
 * If the index is dropped, truncated or rebuilt before the flush (its
 * relfilenode changed), the pending rows are discarded: the new index was
 * built from the heap and has them already, or they belonged to rows that
 * are gone.  Rows of aborted subtransactions are flushed like any others;
 * their entries point to dead tuples, which VACUUM removes, exactly as for
 * any index.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/shinsert.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/xact.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "shindex.h"
#include "shsort.h"

/* one buffered row */
typedef struct SimhashPendingRow
{
	uint64		fp;
	ItemPointerData tid;
	bool		isnull;
} SimhashPendingRow;

/* the buffered rows of one index */
typedef struct SimhashPendingIndex
{
	Oid			indexoid;		/* hash key */
	RelFileNode node;			/* the relfilenode the rows were meant for */
	SimhashPendingRow *rows;
	int			nrows;
	int			maxrows;
} SimhashPendingIndex;

/* pending rows of the current transaction, in TopTransactionContext */
static HTAB *pending = NULL;
static int	pending_total = 0;

static ExecutorStart_hook_type prev_ExecutorStart = NULL;

/* Write the pending rows of one index into its trees. */
static void
SimhashWritePending(Relation index, SimhashPendingIndex *p)
{
	MemoryContext tmp = AllocSetContextCreate(CurrentMemoryContext,
											  "simhash flush",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(tmp);
	int			n = p->nrows;
	SimhashSpoolEntry *recs = MemoryContextAllocHuge(tmp, sizeof(SimhashSpoolEntry) * n);
	SimhashSpoolEntry *scratch = MemoryContextAllocHuge(tmp, sizeof(SimhashSpoolEntry) * n);
	SimhashEntry *entries = MemoryContextAllocHuge(tmp, sizeof(SimhashEntry) * n);

	for (int tree = 0; tree < SIMHASH_NTREES; tree++)
	{
		int			m = 0;

		for (int i = 0; i < n; i++)
		{
			SimhashPendingRow *r = &p->rows[i];

			if (r->isnull != (tree == SIMHASH_NULL_BAND))
				continue;
			if (r->isnull)
			{
				recs[m].key = SimhashMakeSortKey(0, &r->tid);
				recs[m].rest = 0;
			}
			else
			{
				recs[m].key = SimhashMakeSortKey(SimhashBlock(r->fp, tree), &r->tid);
				recs[m].rest = SimhashRestOf(r->fp, tree);
			}
			m++;
		}
		if (m == 0)
			continue;
		SimhashRadixSort(recs, scratch, m);
		for (int i = 0; i < m; i++)
		{
			entries[i].skey = recs[i].key;
			entries[i].rest = recs[i].rest;
		}
		SimhashInsertSorted(index, tree, entries, m);
	}

	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);
	pending_total -= p->nrows;
	p->nrows = 0;
}

/*
 * Flush the pending rows of one open index, if any (scans call this so
 * that the transaction sees its own inserts).
 */
void
SimhashFlushPending(Relation index)
{
	SimhashPendingIndex *p;
	Oid			oid = RelationGetRelid(index);

	if (pending == NULL)
		return;
	p = hash_search(pending, &oid, HASH_FIND, NULL);
	if (p == NULL || p->nrows == 0)
		return;
	if (RelFileNodeEquals(p->node, index->rd_node))
		SimhashWritePending(index, p);
	else
	{
		/* rebuilt or truncated since: the new index already has the rows */
		pending_total -= p->nrows;
		p->nrows = 0;
	}
}

/* Flush the pending rows of every index (pre-commit, parallel queries). */
void
SimhashFlushAllPending(void)
{
	HASH_SEQ_STATUS status;
	SimhashPendingIndex *p;

	if (pending == NULL || pending_total == 0)
		return;
	hash_seq_init(&status, pending);
	while ((p = hash_seq_search(&status)) != NULL)
	{
		Relation	index;

		if (p->nrows == 0)
			continue;

		/*
		 * The transaction holds RowExclusiveLock on the index since it
		 * inserted; if the index is gone (dropped in this transaction, or
		 * created in an aborted subtransaction), the rows go with it.
		 */
		index = try_relation_open(p->indexoid, RowExclusiveLock);
		if (index == NULL)
		{
			pending_total -= p->nrows;
			p->nrows = 0;
			continue;
		}
		SimhashFlushPending(index);
		relation_close(index, RowExclusiveLock);
	}
	Assert(pending_total == 0);
}

/* Flush at pre-commit; forget everything at the end of the transaction. */
static void
SimhashXactCallback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			SimhashFlushAllPending();
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			/* the memory belongs to TopTransactionContext, which goes away */
			pending = NULL;
			pending_total = 0;
			break;
	}
}

/* Flush before a plan that may run parallel workers, which cannot see our memory. */
static void
SimhashExecutorStart(QueryDesc *queryDesc, int eflags)
{
	if (pending_total > 0 && queryDesc->plannedstmt->parallelModeNeeded)
		SimhashFlushAllPending();
	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
}

/* Register the transaction callback and the executor hook (from _PG_init). */
void
SimhashInstallInsertHooks(void)
{
	RegisterXactCallback(SimhashXactCallback, NULL);
	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = SimhashExecutorStart;
}

/*
 * aminsert: remember the row; it reaches the index at the next flush.
 */
bool
shinsert(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid,
		 Relation heapRel, IndexUniqueCheck checkUnique, bool indexUnchanged,
		 IndexInfo *indexInfo)
{
	Oid			oid = RelationGetRelid(index);
	SimhashPendingIndex *p;
	bool		found;
	SimhashPendingRow *row;

	if (ItemPointerGetOffsetNumber(ht_ctid) >= (1 << SIMHASH_OFFSET_BITS))
		elog(ERROR, "heap offset %u too large for a simhash index",
			 ItemPointerGetOffsetNumber(ht_ctid));

	if (pending == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(SimhashPendingIndex);
		ctl.hcxt = TopTransactionContext;
		pending = hash_create("simhash pending inserts", 16, &ctl,
							  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		pending_total = 0;
	}
	p = hash_search(pending, &oid, HASH_ENTER, &found);
	if (!found)
	{
		p->node = index->rd_node;
		p->maxrows = 64;
		p->nrows = 0;
		p->rows = MemoryContextAlloc(TopTransactionContext,
									 sizeof(SimhashPendingRow) * p->maxrows);
	}
	else if (!RelFileNodeEquals(p->node, index->rd_node))
	{
		/* rows buffered for an earlier incarnation of the index */
		pending_total -= p->nrows;
		p->nrows = 0;
		p->node = index->rd_node;
	}

	if (p->nrows == p->maxrows)
	{
		p->maxrows *= 2;
		p->rows = repalloc_huge(p->rows, sizeof(SimhashPendingRow) * p->maxrows);
	}
	row = &p->rows[p->nrows++];
	row->isnull = isnull[0];
	row->fp = isnull[0] ? 0 : DatumGetSimhash64(values[0]);
	row->tid = *ht_ctid;
	pending_total++;

	/* bound the memory: a batch of work_mem is plenty to amortize */
	if ((Size) p->nrows * sizeof(SimhashPendingRow) >= (Size) work_mem * 1024)
		SimhashWritePending(index, p);

	return false;
}
