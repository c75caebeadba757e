/*-------------------------------------------------------------------------
 *
 * shinsert.c
 *	  aminsert for the simhash index, with per-transaction batching.
 *
 * The insert buffer: flush points, the stale-row check, searches of pending
 * rows.  See src/README, "The insert buffer".
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/access/shinsert.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_am_d.h"
#include "executor/executor.h"
#include "tcop/utility.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "bandtable.h"
#include "shindex.h"
#include "shsort.h"

/* one buffered row */
typedef struct SimhashPendingRow
{
	uint64		fp;
	Datum		payload;		/* the included column, if the index has one */
	SubTransactionId subxid;	/* the subtransaction that inserted it */
	ItemPointerData tid;
	bool		isnull;
	bool		payload_null;
	bool		ours;			/* a tuple this transaction inserted */
} SimhashPendingRow;

/*
 * Rows buffered for one relfilenode of an index.  The extension's own
 * searches (the near-duplicate trigger, estimates) look at them in memory;
 * for large groups, "chains" link the rows of each band key, newest first,
 * so that a search probes keys instead of reading every row.
 */
typedef struct SimhashPendingGroup
{
	RelFileLocator node;
	SimhashPendingRow *rows;
	int			nrows;
	int			maxrows;
	bool		interrupted;	/* a write of these rows failed half-way */
	int			nchained;		/* rows [0, nchained) are searchable: */
	/* rows [0, nsnap), sorted by each band's key: a key's rows side by side */
	int			nsnap;
	int			snap_room;
	uint32	   *snap_start[SIMHASH_BLOCKS]; /* per key: first position, and end */
	uint64	   *snap_fp[SIMHASH_BLOCKS];	/* the rows' fingerprints, in key order */
	int32	   *snap_row[SIMHASH_BLOCKS];	/* the rows */
	/* rows [nsnap, nchained), in per-key chains, newest first */
	int32	   *head[SIMHASH_BLOCKS];	/* per key: newest row, or -1 */
	int32	   *next[SIMHASH_BLOCKS];	/* per row: older row of its key, or -1 */
} SimhashPendingGroup;

/* below this many rows a search reads them all rather than chain them */
#define SIMHASH_PENDING_CHAIN_MIN	256

/*
 * Rows are sorted into the snapshot again once the chained rows past it
 * outnumber this, or a quarter of the snapshot: walking a chain misses the
 * cache at every step, and real text puts hundreds of rows on one key.
 */
#define SIMHASH_PENDING_SNAPSHOT_MIN	1024

/*
 * The buffered rows of one index, grouped by the relfilenode the index had
 * when they were inserted: TRUNCATE or REINDEX give the index a new one,
 * and rolling back to a savepoint before them restores the old one, whose
 * rows are then needed again.  Only the group of the current relfilenode
 * is ever written; the others are dropped at the end of the transaction.
 */
typedef struct SimhashPendingIndex
{
	Oid			indexoid;		/* hash key */
	int			ngroups;
	SimhashPendingGroup *groups;
} SimhashPendingIndex;

/* pending rows of the current transaction, in TopTransactionContext */
static HTAB *pending = NULL;

/* writes of pending rows into an index so far, by this backend */
static uint64 pending_flushes = 0;
static int	pending_total = 0;

static ExecutorStart_hook_type prev_ExecutorStart = NULL;
static ProcessUtility_hook_type prev_ProcessUtility = NULL;

/*
 * Is the tuple at "tid" (on the pinned, share-locked heap page) one this
 * transaction inserted and that has not died since?  A speculative tuple
 * killed by ON CONFLICT has no inserting transaction any more; one of an
 * aborted subtransaction is no longer the current transaction's; a freed
 * or reused line pointer holds nothing or a stranger.
 */
static bool
SimhashTupleIsOurs(Page page, OffsetNumber off, TransactionId *last_xmin)
{
	ItemId		lp;
	TransactionId xmin;

	if (off < FirstOffsetNumber || off > PageGetMaxOffsetNumber(page))
		return false;
	lp = PageGetItemId(page, off);
	if (!ItemIdIsNormal(lp))
		return false;
	/* raw: COPY FREEZE marks our own tuples frozen, keeping our xid */
	xmin = HeapTupleHeaderGetRawXmin((HeapTupleHeader) PageGetItem(page, lp));
	if (TransactionIdEquals(xmin, *last_xmin))
		return true;
	if (!TransactionIdIsCurrentTransactionId(xmin))
		return false;
	*last_xmin = xmin;
	return true;
}

/*
 * Drop the rows of a group whose tuples died or moved since they were
 * buffered (see the file header), keeping the others in their order.
 * "recs" and "scratch" are scratch space for n records each.
 */
static void
SimhashDropStaleRows(Relation index, SimhashPendingGroup *p,
					 SimhashSpoolEntry *recs, SimhashSpoolEntry *scratch)
{
	Relation	heap = table_open(index->rd_index->indrelid, AccessShareLock);
	bool		is_heap = (heap->rd_rel->relam == HEAP_TABLE_AM_OID);
	Buffer		buf = InvalidBuffer;
	TransactionId last_xmin = InvalidTransactionId;
	SimhashPendingRow *rows = p->rows;
	int			n = p->nrows;
	int			ndead = 0;
	bool		sorted = true;

	/*
	 * Visit the rows in TID order, and in buffered order for equal TIDs.
	 * Bulk loads buffer them in TID order already; others need a (stable)
	 * sort.
	 */
	for (int i = 1; i < n && sorted; i++)
		sorted = ItemPointerCompare(&rows[i - 1].tid, &rows[i].tid) <= 0;
	if (!sorted)
	{
		for (int i = 0; i < n; i++)
		{
			recs[i].key = SimhashMakeSortKey(0, &rows[i].tid);
			recs[i].rest = (uint64) i;
		}
		SimhashRadixSort(recs, scratch, n);
	}

	for (int i = 0; i < n; i++)
	{
		SimhashPendingRow *r = &rows[sorted ? i : recs[i].rest];
		SimhashPendingRow *next = (i + 1 == n) ? NULL :
			&rows[sorted ? i + 1 : recs[i + 1].rest];
		BlockNumber blkno = ItemPointerGetBlockNumber(&r->tid);
		bool		keep;

		/* a later row for the same TID means this one's tuple died */
		if (next != NULL && ItemPointerEquals(&next->tid, &r->tid))
			keep = false;
		else if (!r->ours || !is_heap)
			keep = true;
		else
		{
			if (!BufferIsValid(buf) || BufferGetBlockNumber(buf) != blkno)
			{
				if (BufferIsValid(buf))
					UnlockReleaseBuffer(buf);
				buf = ReadBuffer(heap, blkno);
				LockBuffer(buf, BUFFER_LOCK_SHARE);
			}
			keep = SimhashTupleIsOurs(BufferGetPage(buf),
									  ItemPointerGetOffsetNumber(&r->tid), &last_xmin);
		}
		if (!keep)
		{
			/* marked through its TID: no valid TID has offset 0 */
			ItemPointerSetOffsetNumber(&r->tid, InvalidOffsetNumber);
			ndead++;
		}
		if ((i & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
	table_close(heap, AccessShareLock);

	if (ndead > 0)
	{
		int			kept = 0;

		for (int i = 0; i < n; i++)
			if (ItemPointerGetOffsetNumberNoCheck(&rows[i].tid) != InvalidOffsetNumber)
				rows[kept++] = rows[i];
		pending_total -= ndead;
		p->nrows = kept;
		p->nchained = 0;
	}
}

/*
 * Write a group of pending rows into the index's trees, and empty it.  If
 * an error interrupts the write, the rows stay, some of them already in
 * some trees; the next attempt knows it and adds nothing twice.
 */
static void
SimhashWritePending(Relation index, SimhashPendingGroup *p)
{
	bool		retry = p->interrupted;
	MemoryContext tmp = AllocSetContextCreate(CurrentMemoryContext,
											  "simhash flush",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(tmp);
	int			n = p->nrows;
	bool		payload = SimhashIndexHasPayload(index);
	SimhashSpoolEntry *recs = MemoryContextAllocHuge(tmp, sizeof(SimhashSpoolEntry) * n);
	SimhashSpoolEntry *scratch = MemoryContextAllocHuge(tmp, sizeof(SimhashSpoolEntry) * n);
	SimhashEntry *entries = MemoryContextAllocHuge(tmp, sizeof(SimhashEntry) * n);

	SimhashDropStaleRows(index, p, recs, scratch);
	n = p->nrows;
	p->interrupted = true;
	/* counted before the first write: key caches must not trust what they hold */
	pending_flushes++;

	for (int tree = 0; tree < SIMHASH_NTREES; tree++)
	{
		int			m = 0;

		for (int i = 0; i < n; i++)
		{
			SimhashPendingRow *r = &p->rows[i];

			if (r->isnull != (tree == SIMHASH_NULL_BAND))
				continue;
			recs[m].key = SimhashMakeSortKey(r->isnull ? 0 : SimhashBlock(r->fp, tree),
											 &r->tid);
			/* with a payload, sort row numbers and look the row up after */
			if (payload)
				recs[m].rest = (uint64) i;
			else
				recs[m].rest = r->isnull ? 0 : SimhashRestOf(r->fp, tree);
			m++;
		}
		if (m == 0)
			continue;
		SimhashRadixSort(recs, scratch, m);
		for (int i = 0; i < m; i++)
		{
			entries[i].skey = recs[i].key;
			if (payload)
			{
				SimhashPendingRow *r = &p->rows[recs[i].rest];

				entries[i].rest = r->isnull ? 0 : SimhashRestOf(r->fp, tree);
				entries[i].payload = r->payload;
				entries[i].payload_null = r->payload_null;
			}
			else
			{
				entries[i].rest = recs[i].rest;
				entries[i].payload = (Datum) 0;
				entries[i].payload_null = true;
			}
		}
		SimhashInsertSorted(index, tree, entries, m, retry);
	}

	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);
	pending_total -= p->nrows;
	p->nrows = 0;
	p->nchained = 0;
	p->interrupted = false;
}

/*
 * How many times this backend has written pending rows into an index: a
 * cache of index contents (keycache.c) is stale once this changes.
 */
uint64
SimhashPendingFlushes(void)
{
	return pending_flushes;
}

/* The group of rows for the index's current relfilenode, or NULL. */
static SimhashPendingGroup *
SimhashCurrentGroup(SimhashPendingIndex *p, Relation index)
{
	for (int i = 0; i < p->ngroups; i++)
		if (RelFileLocatorEquals(p->groups[i].node, SimhashRelLocator(index)))
			return &p->groups[i];
	return NULL;
}

/*
 * Flush the pending rows of one open index, if any (scans call this so
 * that the transaction sees its own inserts).
 */
void
SimhashFlushPending(Relation index)
{
	SimhashPendingIndex *p;
	SimhashPendingGroup *g;
	Oid			oid = RelationGetRelid(index);

	if (pending == NULL || pending_total == 0)
		return;
	p = hash_search(pending, &oid, HASH_FIND, NULL);
	if (p == NULL)
		return;
	g = SimhashCurrentGroup(p, index);
	if (g != NULL && g->nrows > 0)
		SimhashWritePending(index, g);
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
		SimhashPendingGroup *g;

		/*
		 * The transaction holds RowExclusiveLock on the index since it
		 * inserted; if the index is gone (dropped in this transaction, or
		 * created in an aborted subtransaction), the rows go with it.
		 */
		index = try_relation_open(p->indexoid, RowExclusiveLock);
		if (index != NULL)
		{
			g = SimhashCurrentGroup(p, index);
			if (g != NULL && g->nrows > 0)
				SimhashWritePending(index, g);
			relation_close(index, RowExclusiveLock);
		}
	}
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

/*
 * Forget the rows of an aborted subtransaction (and of its children): their
 * tuples are dead, and VACUUM may reclaim their TIDs for other rows before
 * this transaction ends, so their entries must never be written.  Rows are
 * in insertion order and subtransaction ids only grow, so the rows of the
 * aborted subtransaction are the tail of each group.
 */
static void
SimhashSubXactCallback(SubXactEvent event, SubTransactionId mySubid,
					   SubTransactionId parentSubid, void *arg)
{
	HASH_SEQ_STATUS status;
	SimhashPendingIndex *p;

	if (event != SUBXACT_EVENT_ABORT_SUB || pending == NULL || pending_total == 0)
		return;
	hash_seq_init(&status, pending);
	while ((p = hash_seq_search(&status)) != NULL)
	{
		for (int i = 0; i < p->ngroups; i++)
		{
			SimhashPendingGroup *g = &p->groups[i];

			while (g->nrows > 0 && g->rows[g->nrows - 1].subxid >= mySubid)
			{
				g->nrows--;
				pending_total--;
			}
			g->nchained = 0;	/* the chains may name removed rows */
		}
	}
}

/* Sort rows [0, nrows) of a group into its snapshot, by each band's key. */
static void
SimhashPendingSnapshot(SimhashPendingGroup *g)
{
	SimhashBandRows rows;

	/* an error while allocating must leave no half-made snapshot in use */
	g->nsnap = 0;
	if (g->snap_room < g->nrows)
	{
		g->snap_room = 0;
		for (int j = 0; j < SIMHASH_BLOCKS; j++)
		{
			if (g->snap_fp[j])
				pfree(g->snap_fp[j]);
			if (g->snap_row[j])
				pfree(g->snap_row[j]);
			g->snap_fp[j] = NULL;
			g->snap_row[j] = NULL;
		}
		for (int j = 0; j < SIMHASH_BLOCKS; j++)
		{
			g->snap_fp[j] = MemoryContextAllocHuge(TopTransactionContext,
												   sizeof(uint64) * g->maxrows);
			g->snap_row[j] = MemoryContextAllocHuge(TopTransactionContext,
													sizeof(int32) * g->maxrows);
			if (g->snap_start[j] == NULL)
				g->snap_start[j] = MemoryContextAlloc(TopTransactionContext,
													  SimhashBandTableDirBytes(SIMHASH_BLOCK_BITS));
		}
		g->snap_room = g->maxrows;
	}
	rows = (SimhashBandRows) {.fp = &g->rows[0].fp, .isnull = &g->rows[0].isnull,
	.stride = sizeof(SimhashPendingRow), .nrows = g->nrows};
	for (int j = 0; j < SIMHASH_BLOCKS; j++)
	{
		/* one bucket per key; row numbers are below maxrows, an int */
		SimhashBandTable table = {.band = j, .dir_bits = SIMHASH_BLOCK_BITS,
		.fp = g->snap_fp[j], .row = (uint32 *) g->snap_row[j], .start = g->snap_start[j]};

		SimhashBandTableSort(&table, &rows, NULL);
	}
	g->nsnap = g->nrows;
}

/*
 * Make every row of a group searchable: rows since the snapshot go into the
 * chains, or, when they have become many, everything into a new snapshot.
 */
static void
SimhashPendingChain(SimhashPendingGroup *g)
{
	if (g->head[SIMHASH_BLOCKS - 1] == NULL)
	{
		int32	   *head[SIMHASH_BLOCKS];
		int32	   *next[SIMHASH_BLOCKS];

		/* all or nothing: an allocation that fails leaves the group as it was */
		for (int j = 0; j < SIMHASH_BLOCKS; j++)
		{
			head[j] = MemoryContextAllocHuge(TopTransactionContext,
											 sizeof(int32) * SIMHASH_BLOCK_KEYS);
			next[j] = MemoryContextAllocHuge(TopTransactionContext,
											 sizeof(int32) * g->maxrows);
		}
		memcpy(g->head, head, sizeof(head));
		memcpy(g->next, next, sizeof(next));
		g->nchained = 0;
	}
	if (g->nchained == 0)
	{
		/* nothing searchable: also what named rows now removed is gone */
		g->nsnap = 0;
		for (int j = 0; j < SIMHASH_BLOCKS; j++)
			memset(g->head[j], 0xFF, sizeof(int32) * SIMHASH_BLOCK_KEYS);
	}
	if (g->nrows - g->nsnap > Max(SIMHASH_PENDING_SNAPSHOT_MIN, g->nsnap / 4))
	{
		SimhashPendingSnapshot(g);
		for (int j = 0; j < SIMHASH_BLOCKS; j++)
			memset(g->head[j], 0xFF, sizeof(int32) * SIMHASH_BLOCK_KEYS);
		g->nchained = g->nrows;
		return;
	}
	for (int i = Max(g->nchained, g->nsnap); i < g->nrows; i++)
	{
		if (g->rows[i].isnull)
			continue;
		for (int j = 0; j < SIMHASH_BLOCKS; j++)
		{
			uint16		key = SimhashBlock(g->rows[i].fp, j);

			g->next[j][i] = g->head[j][key];
			g->head[j][key] = i;
		}
	}
	g->nchained = g->nrows;
}

/*
 * One row a probe of the pending rows reached: false if "found" says stop.
 * It is reported only if within the radius and reached by no earlier band.
 */
static inline bool
SimhashPendingVisit(SimhashPendingGroup *g, int32 row, uint64 fp, uint64 center,
					int radius, const int *earlier, SimhashFoundCallback found,
					void *arg)
{
	uint64		counts = SimhashBlockCounts(fp ^ center);
	int			dist = SimhashLaneSum(counts);

	if (dist > radius || SimhashReachedBefore(counts, earlier))
		return true;
	return found(&g->rows[row].tid, fp, dist, arg);
}

/*
 * Call "found" for every row this backend has buffered for "index" whose
 * fingerprint lies within "radius" of "center", until it returns false.
 * Nothing is written: the near-duplicate trigger and the planner's counts
 * see the transaction's own rows here.  A row may belong to a tuple that
 * died since (see the file header): callers that care look at the heap.
 */
void
SimhashPendingWithin(Relation index, uint64 center, int radius,
					 SimhashFoundCallback found, void *arg)
{
	Oid			oid = RelationGetRelid(index);
	SimhashPendingIndex *p;
	SimhashPendingGroup *g;
	SimhashProbePlan plan;
	uint16	   *keys;

	if (pending == NULL || pending_total == 0 || radius < 0)
		return;
	p = hash_search(pending, &oid, HASH_FIND, NULL);
	if (p == NULL || (g = SimhashCurrentGroup(p, index)) == NULL || g->nrows == 0)
		return;

	SimhashPlanProbes(radius, g->nrows, &plan);
	if (g->nrows < SIMHASH_PENDING_CHAIN_MIN || plan.fullscan)
	{
		for (int i = 0; i < g->nrows; i++)
		{
			SimhashPendingRow *r = &g->rows[i];

			if (!r->isnull && SimhashDistance(r->fp, center) <= radius &&
				!found(&r->tid, r->fp, SimhashDistance(r->fp, center), arg))
				return;
		}
		return;
	}

	/* probe each band's keys as an index scan would (shprobe.c) */
	SimhashPendingChain(g);
	{
		double		room = 1;

		for (int j = 0; j < SIMHASH_BLOCKS; j++)
			room = Max(room, SimhashBallSize(plan.radius[j]));
		keys = palloc(sizeof(uint16) * (Size) room);
	}
	for (int j = 0; j < SIMHASH_BLOCKS; j++)
	{
		int			nkeys = SimhashEnumerateBall(SimhashBlock(center, j), plan.radius[j], keys);
		int			earlier[SIMHASH_BLOCKS];

		/* reported once: by the first band that reaches it */
		for (int e = 0; e < SIMHASH_BLOCKS; e++)
			earlier[e] = (e < j) ? plan.radius[e] : -1;
		for (int k = 0; k < nkeys; k++)
		{
			bool		more = true;

			if (g->nsnap > 0)
			{
				uint32		end = g->snap_start[j][keys[k] + 1];

				for (uint32 pos = g->snap_start[j][keys[k]]; more && pos < end; pos++)
					more = SimhashPendingVisit(g, g->snap_row[j][pos], g->snap_fp[j][pos],
											   center, radius, earlier, found, arg);
			}
			for (int32 i = g->head[j][keys[k]]; more && i >= 0; i = g->next[j][i])
				more = SimhashPendingVisit(g, i, g->rows[i].fp, center, radius, earlier,
										   found, arg);
			if (!more)
			{
				pfree(keys);
				return;
			}
			CHECK_FOR_INTERRUPTS();
		}
	}
	pfree(keys);
}

/*
 * Does a utility statement need the pending rows written first?  Most do:
 * some change a relation's storage in place (TRUNCATE of a table created in
 * this transaction) or copy it to a new relfilenode (ALTER INDEX SET
 * TABLESPACE), and buffered rows must not outlive the storage they were
 * meant for.  Not transaction control (COMMIT writes them anyway, an
 * aborted transaction must not), and not the statements that only plan or
 * run queries, whose scans write what they need themselves: above all
 * EXPLAIN, so that planning writes nothing.
 */
static bool
SimhashUtilityNeedsFlush(Node *stmt)
{
	switch (nodeTag(stmt))
	{
		case T_TransactionStmt:
		case T_ExplainStmt:
		case T_PrepareStmt:
		case T_ExecuteStmt:
		case T_DeallocateStmt:
		case T_DeclareCursorStmt:
		case T_FetchStmt:
		case T_ClosePortalStmt:
		case T_VariableSetStmt:
		case T_VariableShowStmt:
		case T_DoStmt:
		case T_CallStmt:
			return false;
		default:
			return true;
	}
}

/* Flush before the utility statements that need it (see above). */
static void
SimhashProcessUtility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
					  ProcessUtilityContext context, ParamListInfo params,
					  QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	if (pending_total > 0 && SimhashUtilityNeedsFlush(pstmt->utilityStmt))
		SimhashFlushAllPending();
	if (prev_ProcessUtility)
		prev_ProcessUtility(pstmt, queryString, readOnlyTree, context, params,
							queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params,
								queryEnv, dest, qc);
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
	RegisterSubXactCallback(SimhashSubXactCallback, NULL);
	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = SimhashExecutorStart;
	prev_ProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = SimhashProcessUtility;
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
	SimhashPendingGroup *g;
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
		p->ngroups = 0;
		p->groups = NULL;
	}
	g = SimhashCurrentGroup(p, index);
	if (g == NULL)
	{
		p->groups = p->groups ?
			repalloc(p->groups, sizeof(SimhashPendingGroup) * (p->ngroups + 1)) :
			MemoryContextAlloc(TopTransactionContext, sizeof(SimhashPendingGroup));
		g = &p->groups[p->ngroups++];
		memset(g, 0, sizeof(SimhashPendingGroup));
		g->node = SimhashRelLocator(index);
		g->maxrows = 64;
		g->rows = MemoryContextAlloc(TopTransactionContext,
									 sizeof(SimhashPendingRow) * g->maxrows);
	}

	if (g->nrows == g->maxrows)
	{
		int			newmax = g->maxrows * 2;

		/* maxrows grows last: a failed allocation leaves every array big enough */
		g->rows = repalloc_huge(g->rows, sizeof(SimhashPendingRow) * newmax);
		for (int j = 0; j < SIMHASH_BLOCKS; j++)
			if (g->next[j])
				g->next[j] = repalloc_huge(g->next[j], sizeof(int32) * newmax);
		g->maxrows = newmax;
	}
	row = &g->rows[g->nrows++];
	row->isnull = isnull[0];
	row->fp = isnull[0] ? 0 : DatumGetSimhash64(values[0]);
	/* by value and fixed-length (SimhashCheckIncludedColumns): the Datum is it */
	row->payload_null = !SimhashIndexHasPayload(index) || isnull[1];
	row->payload = row->payload_null ? (Datum) 0 : values[1];
	row->tid = *ht_ctid;
	row->subxid = GetCurrentSubTransactionId();
	/* CREATE INDEX CONCURRENTLY's validation adds other transactions' rows */
	row->ours = !indexInfo->ii_Concurrent;
	pending_total++;

	/* bound the memory: a batch of work_mem is plenty to amortize */
	if ((Size) g->nrows * sizeof(SimhashPendingRow) >= (Size) work_mem * 1024)
		SimhashWritePending(index, g);

	return false;
}
