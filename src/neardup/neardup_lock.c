/*-------------------------------------------------------------------------
 *
 * neardup_lock.c
 *	  Key-range locks that make the near-duplicate check race-free.
 *
 * A check of fingerprint f within k locks "cells" (band, 16-bit key) until
 * its transaction ends: f's own cell in every band exclusively, every other
 * key within the canonical radii in share mode, so that two checks of
 * fingerprints within k of each other conflict whatever k each used.  A
 * check needing too many cells locks the whole table instead.  See
 * src/README, "The near-duplicate triggers", for the argument, the lock
 * tags and the lock budget.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/neardup/neardup_lock.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/lock.h"
#include "storage/proc.h"

#include "neardup.h"
#include "simhash_am.h"

/* locktag_field4 of the cells of a table, and of the table as a whole */
#define SIMHASH_LOCK_CELL		0x5348	/* "SH" */
#define SIMHASH_LOCK_TABLE		0x5349

/* most cells one check takes before it locks the whole table */
#define SIMHASH_MAX_CHECK_CELLS	64

/*
 * Cells the current transaction holds, over all tables: the budget is the
 * transaction's share of the shared lock table, whichever tables it spends
 * it on.
 */
static LocalTransactionId cells_lxid = InvalidLocalTransactionId;
static int	cells_held = 0;

/*
 * Whole-table locks this backend has newly taken.  Whoever relies on
 * holding one without a break (the key cache of neardup_search.c) notes
 * this and sees it change: a lock released with a subtransaction and taken
 * again may have let other sessions' rows in meanwhile.
 */
static uint64 table_lock_epoch = 0;

/* Cells the current transaction has taken so far. */
static int *
SimhashCellsHeld(void)
{
	if (cells_lxid != SimhashMyLocalXid())
	{
		cells_lxid = SimhashMyLocalXid();
		cells_held = 0;
	}
	return &cells_held;
}

/* One cell to lock: its tag, and whether it is the row's own */
typedef struct SimhashCellLock
{
	uint32		tag;
	bool		own;
} SimhashCellLock;

/*
 * The lock tag of cell (band, key) of table relid for rows of scope hash
 * scope_hash: a hash keyed with the cluster's mock authentication nonce, a
 * random secret pg_control keeps and SQL does not show.  The key hides the
 * cell from roles that cannot take cells of their own; a role that can
 * insert into the table learns the tags of its own scope (src/README, "What
 * pg_locks shows").  The whole scope hash goes in, so that scopes share
 * tags only by a collision of the 32-bit tags.
 */
static uint32
SimhashCellTag(Oid relid, uint32 scope_hash, int band, uint16 key)
{
	static uint64 seed = 0;
	static bool have_seed = false;
	uint32		data[3];

	if (!have_seed)
	{
		memcpy(&seed, GetMockAuthenticationNonce(), sizeof(seed));
		have_seed = true;
	}
	data[0] = relid;
	data[1] = scope_hash;
	data[2] = ((uint32) band << 16) | key;
	return (uint32) hash_bytes_extended((const unsigned char *) data, sizeof(data), seed);
}

/*
 * The canonical per-band radii for a check within k: sum(r_j + 1) = k + 1,
 * spread as evenly as possible (which locks the fewest cells); -1 for a
 * band that is not needed.  Every session uses the same radii for a k.
 */
void
SimhashCanonicalRadii(int k, int *radius)
{
	int			need = k + 1;

	Assert(k >= 0 && k <= SIMHASH_BITS);
	for (int j = 0; j < SIMHASH_BLOCKS; j++)
		radius[j] = need / SIMHASH_BLOCKS + (j < need % SIMHASH_BLOCKS ? 1 : 0) - 1;
}

/* qsort comparator of cell locks, by tag */
static int
SimhashCellCompare(const void *a, const void *b)
{
	uint32		x = ((const SimhashCellLock *) a)->tag;
	uint32		y = ((const SimhashCellLock *) b)->tag;

	return (x > y) - (x < y);
}

/* Lock one cell (or the table cell) of relid in the given mode. */
static void
SimhashLockCell(Oid relid, uint32 field3, uint16 field4, LOCKMODE mode)
{
	LOCKTAG		tag;

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, relid, field3, field4);
	(void) LockAcquire(&tag, mode, false, false);
}

/*
 * Take the locks a near-duplicate check of fingerprint fp within k needs on
 * table relid (the table whose rows compete), held until the transaction
 * ends.  scope_hash identifies the scope values of the row (0 without a
 * scope).  Returns the number of cells locked, 0 when the whole table was.
 */
int
SimhashLockNeighbourhood(Oid relid, uint32 scope_hash, uint64 fp, int k)
{
	int			radius[SIMHASH_BLOCKS];
	int			ncells = 0;
	int			nlocks;
	SimhashCellLock *cells;
	uint16	   *ring;
	int		   *held = SimhashCellsHeld();
	LOCKTAG		table;

	Assert(k >= 0 && k <= SIMHASH_BITS);
	SET_LOCKTAG_ADVISORY(table, MyDatabaseId, relid, 0, SIMHASH_LOCK_TABLE);
	/* a transaction that holds the whole table needs nothing more */
	if (SimhashLockHeldByMe(&table, ExclusiveLock))
		return 0;

	SimhashCanonicalRadii(k, radius);
	for (int j = 0; j < SIMHASH_BLOCKS; j++)
	{
		radius[j] = Max(radius[j], 0);	/* own cells in every band */
		ncells += (int) SimhashBallSize(radius[j]);
	}
	if (ncells > SIMHASH_MAX_CHECK_CELLS || *held + ncells > max_locks_per_xact)
	{
		SimhashLockCell(relid, 0, SIMHASH_LOCK_TABLE, ExclusiveLock);
		table_lock_epoch++;
		return 0;
	}
	SimhashLockCell(relid, 0, SIMHASH_LOCK_TABLE, RowExclusiveLock);

	cells = palloc(sizeof(SimhashCellLock) * ncells);
	ring = palloc(sizeof(uint16) * ncells);
	ncells = 0;
	for (int j = 0; j < SIMHASH_BLOCKS; j++)
	{
		/* the ball starts with its centre, f's own cell */
		int			n = SimhashEnumerateBall(SimhashBlock(fp, j), radius[j], ring);

		for (int i = 0; i < n; i++)
		{
			cells[ncells].tag = SimhashCellTag(relid, scope_hash, j, ring[i]);
			cells[ncells].own = (i == 0);
			ncells++;
		}
	}

	/*
	 * In tag order, each tag once in the strongest mode asked for: two cells
	 * of one check sharing a tag must not become a lock upgrade.
	 */
	qsort(cells, ncells, sizeof(SimhashCellLock), SimhashCellCompare);
	nlocks = 0;
	for (int i = 0; i < ncells; i++)
	{
		if (nlocks > 0 && cells[nlocks - 1].tag == cells[i].tag)
			cells[nlocks - 1].own |= cells[i].own;
		else
			cells[nlocks++] = cells[i];
	}
	for (int i = 0; i < nlocks; i++)
		SimhashLockCell(relid, cells[i].tag, SIMHASH_LOCK_CELL,
						cells[i].own ? ExclusiveLock : ShareLock);
	*held += nlocks;
	pfree(ring);
	pfree(cells);
	return nlocks;
}

/*
 * Does this backend hold the whole of table relid for its checks?  *epoch
 * changes whenever such a lock is newly taken, on any table.
 */
bool
SimhashHoldsWholeTable(Oid relid, uint64 *epoch)
{
	LOCKTAG		table;

	SET_LOCKTAG_ADVISORY(table, MyDatabaseId, relid, 0, SIMHASH_LOCK_TABLE);
	*epoch = table_lock_epoch;
	return SimhashLockHeldByMe(&table, ExclusiveLock);
}
