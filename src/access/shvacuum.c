/*-------------------------------------------------------------------------
 *
 * shvacuum.c
 *	  ambulkdelete and amvacuumcleanup for the simhash index.
 *
 * A walk along the leaves of each tree under cleanup locks.  See
 * src/README, "VACUUM".
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/access/shvacuum.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "shindex.h"

/* Counts gathered by a pass over the leaves */
typedef struct SimhashVacuumCounts
{
	double		rows;			/* entries of band 0 plus NULL entries */
	double		removed;		/* rows whose entries were removed */
} SimhashVacuumCounts;

/*
 * Walk the leaves of one tree, removing entries whose TID the callback
 * reports dead (when there is a callback), and count the survivors.
 */
static void
SimhashVacuumTree(IndexVacuumInfo *info, int tree, BlockNumber root, uint16 rootlevel,
				  IndexBulkDeleteCallback callback, void *callback_state,
				  SimhashVacuumCounts *counts)
{
	Relation	index = info->index;
	Buffer		buf;
	BlockNumber next;
	SimhashEntry *entries = palloc(sizeof(SimhashEntry) * SIMHASH_MAX_LEAF_ENTRIES);
	bool		counted = (tree == 0 || tree == SIMHASH_NULL_BAND);

	/* the leftmost leaf, then along the right-links */
	buf = SimhashDescendToLevel(index, tree, root, rootlevel, 0, 0, BUFFER_LOCK_SHARE);
	if (callback)
	{
		BlockNumber first = BufferGetBlockNumber(buf);

		UnlockReleaseBuffer(buf);
		buf = SimhashReadLinkedBuffer(index, first);
		LockBufferForCleanup(buf);
	}
	for (;;)
	{
		Page		page = BufferGetPage(buf);
		SimhashPageOpaque op;
		int			n = SimhashLeafDecode(page, entries);
		int			kept = n;
		SimhashPivot *pivots = NULL;
		int			npivots = 0;

		if (callback)
		{
			kept = 0;
			for (int i = 0; i < n; i++)
			{
				ItemPointerData tid;

				SimhashSortKeyTid(entries[i].skey, &tid);
				if (!callback(&tid, callback_state))
					entries[kept++] = entries[i];
			}

			/*
			 * Rewrite the leaf without the dead entries.  Delta encoding is
			 * not monotone (removing an entry can lengthen its successor's
			 * delta and shift the restarts), so the survivors may need a
			 * new right sibling; the walk then visits it too, harmlessly.
			 */
			if (kept < n)
				npivots = SimhashLeafReplace(index, tree, buf, entries, kept, &pivots);
		}
		if (counted)
		{
			counts->rows += kept;
			counts->removed += n - kept;
		}

		op = SimhashPageGetOpaque(BufferGetPage(buf));
		next = (op->flags & SIMHASH_RIGHTMOST) ? InvalidBlockNumber : op->rightlink;
		UnlockReleaseBuffer(buf);
		SimhashInsertLeafPivots(index, tree, pivots, npivots);
		if (next == InvalidBlockNumber)
			break;
		/* sleep for the cost-based delay between pages, holding no lock */
		SimhashVacuumDelayPoint();
		buf = SimhashReadLinkedBuffer(index, next);
		if (callback)
			LockBufferForCleanup(buf);
		else
			LockBuffer(buf, BUFFER_LOCK_SHARE);
	}
	pfree(entries);
}

/* Walk every tree; fill in the statistics. */
static void
SimhashVacuumScan(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
				  IndexBulkDeleteCallback callback, void *callback_state)
{
	BlockNumber roots[SIMHASH_NTREES];
	uint16		levels[SIMHASH_NTREES];
	SimhashVacuumCounts counts = {0, 0};

	SimhashReadRoots(info->index, roots, levels);
	for (int tree = 0; tree < SIMHASH_NTREES; tree++)
		SimhashVacuumTree(info, tree, roots[tree], levels[tree],
						  callback, callback_state, &counts);
	stats->num_index_tuples = counts.rows;
	stats->tuples_removed += counts.removed;
	stats->estimated_count = false;
	stats->num_pages = RelationGetNumberOfBlocks(info->index);
}

/*
 * ambulkdelete: remove the entries of dead heap tuples.
 */
IndexBulkDeleteResult *
shbulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
			 IndexBulkDeleteCallback callback, void *callback_state)
{
	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));
	SimhashVacuumScan(info, stats, callback, callback_state);
	return stats;
}

/*
 * amvacuumcleanup: report statistics; count the entries if bulkdelete did
 * not run.
 */
IndexBulkDeleteResult *
shvacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	if (info->analyze_only)
		return stats;
	if (stats == NULL)
	{
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));
		SimhashVacuumScan(info, stats, NULL, NULL);
	}
	return stats;
}
