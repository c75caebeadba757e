/*-------------------------------------------------------------------------
 *
 * neardup_lock.c
 *	  Key-range locks that make the near-duplicate check race-free.
 *
 * The index entries of a transaction's rows wait in its memory until it
 * commits (shinsert.c), so another transaction checking a near-copy at the
 * same moment cannot see them.  Rather than give up that batching, a check
 * of fingerprint f within k first locks "cells" (band, 16-bit key) and
 * holds them until its transaction ends.  The second of two conflicting
 * checks then waits until the first has committed, its rows written to the
 * index, or aborted; see src/README for the argument, in short:
 *
 *	f's own cell in every band, (j, block_j(f)), is taken in ExclusiveLock.
 *	With the canonical radii r_j for k (sum of r_j + 1 > k, spread evenly),
 *	every other key within r_j bits of block_j(f) is taken in ShareLock.
 *	If g is within k of f, then in some band j their blocks are within r_j
 *	bits (the pigeonhole argument of the index), so f's check holds a lock
 *	on g's own cell there, which g's check holds in ExclusiveLock: they
 *	conflict.  This holds whatever k g was checked with (the trigger's
 *	k may be 'auto', per row), since own cells are locked in all bands.
 *
 * Cells are taken in increasing order, so checks of single rows never
 * deadlock.  The locks are advisory locks of the database with a class of
 * their own (locktag_field4 SIMHASH_LOCK_CELL, which the SQL advisory lock
 * functions never use); pg_locks shows them.  A scope (rows that compete
 * only with rows of equal scope values) hashes into the cell number, which
 * only spares unrelated tenants some waiting: rows of one scope always lock
 * the same cells.
 *
 * Heavyweight locks come from a shared table of limited size, so a check
 * needing too many cells (large k), or a transaction that has taken its
 * share of that table (max_locks_per_transaction cells: a bulk load through
 * the trigger), takes one lock on the whole table instead: ExclusiveLock on
 * its table cell, which conflicts with the RowExclusiveLock every
 * cell-locking check holds there.  It waits for the transactions checking
 * rows at that moment, and then runs alone among the table's near-duplicate
 * checks until it ends.  (Two transactions escalating at once wait for each
 * other: the deadlock detector cancels one, which can retry.)
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/neardup_lock.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/lock.h"
#include "storage/proc.h"

#include "neardup.h"
#include "shindex.h"

/* locktag_field4 of the cells of a table, and of the table as a whole */
#define SIMHASH_LOCK_CELL		0x5348	/* "SH" */
#define SIMHASH_LOCK_TABLE		0x5349

/* most cells one check takes before it locks the whole table */
#define SIMHASH_MAX_CHECK_CELLS	64

/* tables whose cells this backend counts for the current transaction */
#define SIMHASH_CELL_COUNTERS	8

/* cells taken in a transaction, per table (a small LRU; an undercount is harmless) */
typedef struct SimhashCellCounter
{
	LocalTransactionId lxid;
	Oid			relid;
	int			cells;
} SimhashCellCounter;

static SimhashCellCounter cell_counters[SIMHASH_CELL_COUNTERS];
static int	cell_counter_next = 0;

/* The counter of cells the current transaction took on relid. */
static SimhashCellCounter *
SimhashCellCounterFor(Oid relid)
{
	SimhashCellCounter *c;

	for (int i = 0; i < SIMHASH_CELL_COUNTERS; i++)
	{
		c = &cell_counters[i];
		if (c->lxid == MyProc->lxid && c->relid == relid)
			return c;
	}
	c = &cell_counters[cell_counter_next];
	cell_counter_next = (cell_counter_next + 1) % SIMHASH_CELL_COUNTERS;
	c->lxid = MyProc->lxid;
	c->relid = relid;
	c->cells = 0;
	return c;
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
	for (int j = 0; j < SIMHASH_NBANDS; j++)
		radius[j] = need / SIMHASH_NBANDS + (j < need % SIMHASH_NBANDS ? 1 : 0) - 1;
}

/* qsort comparator of cell numbers */
static int
SimhashCellCompare(const void *a, const void *b)
{
	uint32		x = *(const uint32 *) a & ~SIMHASH_CELL_OWN;
	uint32		y = *(const uint32 *) b & ~SIMHASH_CELL_OWN;

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
	int			radius[SIMHASH_NBANDS];
	int			ncells = 0;
	uint32	   *cells;
	uint16	   *ring;
	SimhashCellCounter *counter;
	LOCKTAG		table;

	Assert(k >= 0 && k <= SIMHASH_BITS);
	SET_LOCKTAG_ADVISORY(table, MyDatabaseId, relid, 0, SIMHASH_LOCK_TABLE);
	/* a transaction that holds the whole table needs nothing more */
	if (LockHeldByMe(&table, ExclusiveLock))
		return 0;

	SimhashCanonicalRadii(k, radius);
	for (int j = 0; j < SIMHASH_NBANDS; j++)
	{
		radius[j] = Max(radius[j], 0);	/* own cells in every band */
		for (int bits = 0; bits <= radius[j]; bits++)
			ncells += (int) SimhashRingSize(bits);
	}
	counter = SimhashCellCounterFor(relid);
	if (ncells > SIMHASH_MAX_CHECK_CELLS ||
		counter->cells + ncells > max_locks_per_xact)
	{
		SimhashLockCell(relid, 0, SIMHASH_LOCK_TABLE, ExclusiveLock);
		return 0;
	}
	SimhashLockCell(relid, 0, SIMHASH_LOCK_TABLE, RowExclusiveLock);

	/* cell number: scope hash (13 bits), band (2), key (16); bit 31 marks "own" */
	cells = palloc(sizeof(uint32) * ncells);
	ring = palloc(sizeof(uint16) * SIMHASH_BAND_KEYS);
	ncells = 0;
	for (int j = 0; j < SIMHASH_NBANDS; j++)
	{
		uint16		own = SimhashBlock(fp, j);

		for (int bits = 0; bits <= radius[j]; bits++)
		{
			int			n = SimhashEnumerateRing(own, bits, ring);

			for (int i = 0; i < n; i++)
				cells[ncells++] = ((scope_hash & SIMHASH_SCOPE_MASK) << 18) |
					((uint32) j << 16) | ring[i] | (bits == 0 ? SIMHASH_CELL_OWN : 0);
		}
	}
	qsort(cells, ncells, sizeof(uint32), SimhashCellCompare);
	for (int i = 0; i < ncells; i++)
		SimhashLockCell(relid, cells[i] & ~SIMHASH_CELL_OWN, SIMHASH_LOCK_CELL,
						(cells[i] & SIMHASH_CELL_OWN) ? ExclusiveLock : ShareLock);
	counter->cells += ncells;
	pfree(ring);
	pfree(cells);
	return ncells;
}
