/*-------------------------------------------------------------------------
 *
 * neardup_search.c
 *	  Find the nearest earlier row within k of a new row's fingerprint, for
 *	  the near-duplicate trigger.
 *
 * Candidates come from each competing table's simhash index (through the
 * key cache of access/keycache.c while the transaction holds the whole table)
 * and from the rows this backend has inserted but not yet written to it
 * (shinsert.c), without writing anything.  Each candidate is then looked
 * up in its table with a dirty snapshot, which sees committed rows and
 * those in progress, this transaction's own rows of this very statement
 * included.  Its fingerprint and scope are read from the row itself, so an
 * index entry or pending row of a tuple that died and whose TID was reused
 * cannot mislead.  A candidate that another transaction is still inserting or
 * deleting is waited for, and the search starts again, as core does for
 * unique and exclusion constraints.  The locks of neardup_lock.c, taken
 * before, make such waits rare: they are only for rows that came in
 * without this trigger.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/neardup/neardup_search.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/datum.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "neardup.h"
#include "simhash_am.h"

/* a fingerprint near the new row's, in some competing table */
typedef struct SimhashCandidate
{
	int			leaf;			/* which competing table */
	ItemPointerData tid;
	int			dist;
	bool		cached;			/* from the key cache (else read just now) */
	bool		stale;			/* ... and names a dead row that moved */
	uint64		fp;				/* the entry's fingerprint */
} SimhashCandidate;

typedef struct SimhashCandidates
{
	SimhashCandidate *items;
	int			n;
	int			max;
	int			leaf;			/* table being searched */
	bool		cached;			/* ... through the key cache */
} SimhashCandidates;

/* SimhashFoundCallback: remember a candidate. */
static bool
SimhashAddCandidate(ItemPointer tid, uint64 fp, int dist, void *arg)
{
	SimhashCandidates *c = (SimhashCandidates *) arg;

	if (c->n == c->max)
	{
		c->max = Max(16, c->max * 2);
		c->items = c->items ? repalloc_huge(c->items, sizeof(SimhashCandidate) * c->max) :
			palloc(sizeof(SimhashCandidate) * c->max);
	}
	c->items[c->n].leaf = c->leaf;
	c->items[c->n].tid = *tid;
	c->items[c->n].dist = dist;
	c->items[c->n].cached = c->cached;
	c->items[c->n].stale = false;
	c->items[c->n].fp = fp;
	c->n++;
	return true;
}

/* qsort comparator: by distance, then table, then TID */
static int
SimhashCandidateCompare(const void *a, const void *b)
{
	const SimhashCandidate *x = a;
	const SimhashCandidate *y = b;

	if (x->dist != y->dist)
		return x->dist - y->dist;
	if (x->leaf != y->leaf)
		return x->leaf - y->leaf;
	return ItemPointerCompare((ItemPointer) &x->tid, (ItemPointer) &y->tid);
}

/* Compare the keys of two matches: <0, 0, >0 (by TID without a key). */
static int
SimhashCompareKeys(const SimhashNearDupInfo *info, const SimhashNearMatch *a,
				   const SimhashNearMatch *b)
{
	if (info->nkey == 0)
	{
		if (a->leaf != b->leaf)
			return a->leaf - b->leaf;
		return ItemPointerCompare((ItemPointer) &a->tid, (ItemPointer) &b->tid);
	}
	for (int i = 0; i < info->nkey; i++)
	{
		int32		c;

		if (a->keynull[i] != b->keynull[i])
			return a->keynull[i] ? 1 : -1;
		if (a->keynull[i])
			continue;
		c = DatumGetInt32(FunctionCall2Coll(&info->key_cmp[i], info->key_collation[i],
											a->key[i], b->key[i]));
		if (c != 0)
			return c;
	}
	return 0;
}

/*
 * Does the row in "slot", of competing table "leaf", match: within k of fp,
 * in the same scope, and not the row being updated?  Sets *dist.
 */
static bool
SimhashRowMatches(const SimhashNearDupInfo *info, int leaf, TupleTableSlot *slot,
				  uint64 fp, const Datum *scope, ItemPointer self, int dist)
{
	const SimhashNearDupLeaf *l = &info->leaves[leaf];
	bool		isnull;
	Datum		d;

	if (self != NULL && leaf == info->own_leaf && ItemPointerEquals(self, &slot->tts_tid))
		return false;

	/*
	 * The row's own fingerprint must be at the distance its entry said: one
	 * that differs belongs to a tuple that took the TID of a dead one, and
	 * has entries of its own, which bring it up at its own distance.
	 */
	d = slot_getattr(slot, l->fp_attno, &isnull);
	if (isnull || SimhashDistance(DatumGetSimhash64(d), fp) != dist)
		return false;
	for (int i = 0; i < info->nscope; i++)
	{
		d = slot_getattr(slot, l->scope_attno[i], &isnull);
		/* SQL equality: a NULL scope value is equal to nothing */
		if (isnull ||
			!DatumGetBool(FunctionCall2Coll(&info->scope_eq[i], info->scope_collation[i],
											d, scope[i])))
			return false;
	}
	return true;
}

/*
 * verify=s: is the row in "slot", of competing table "leaf", confirmed by
 * its text, simhash_jaccard(its text, the new row's) >= s?  A NULL text on
 * either side confirms nothing.  The new row's features are extracted at
 * the first candidate, the candidate's text read (and detoasted) only now,
 * for candidates within k that passed every other test.
 */
static bool
SimhashRowConfirmed(const SimhashNearDupInfo *info, int leaf, TupleTableSlot *slot,
					SimhashNearVerify *verify)
{
	bool		isnull;
	bool		built;
	Datum		d;
	double		sim;

	if (verify == NULL)
		return true;
	if (verify->text == NULL)
		return false;
	d = SimhashJoinSlotTextColumns(slot, info->leaves[leaf].text_attno, info->ntext, &isnull,
								   &built);
	if (isnull)
		return false;
	if (verify->features == NULL)
		verify->features = SimhashJaccardPrepare(PointerGetDatum(verify->text));
	sim = SimhashJaccardAgainst(verify->features, d);
	if (built)
		pfree(DatumGetPointer(d));
	return sim >= verify->s;
}

/* Copy what a match needs to be reported out of "slot" (current context). */
static void
SimhashKeepMatch(const SimhashNearDupInfo *info, int leaf, TupleTableSlot *slot,
				 int dist, SimhashNearMatch *m)
{
	const SimhashNearDupLeaf *l = &info->leaves[leaf];
	bool		isnull;

	m->found = true;
	m->leaf = leaf;
	m->tid = slot->tts_tid;
	m->dist = dist;
	m->xmin = DatumGetTransactionId(slot_getsysattr(slot, MinTransactionIdAttributeNumber,
													&isnull));
	for (int i = 0; i < info->nkey; i++)
	{
		Datum		d = slot_getattr(slot, l->key_attno[i], &m->keynull[i]);

		m->key[i] = m->keynull[i] ? (Datum) 0 :
			datumCopy(d, info->key_byval[i], info->key_len[i]);
	}
}

/*
 * Did the dead row an index entry names move to a new TID (a committed
 * UPDATE that was not HOT), rather than die (deleted, or inserted by an
 * aborted transaction)?  The entry names the root of a HOT chain, maybe a
 * redirect since pruning: the chain's last tuple is the one whose t_ctid
 * leads on to the row's next version.  "fetch" and "slot" are the caller's,
 * for rel.
 */
static bool
SimhashRowMoved(Relation rel, IndexFetchTableData *fetch, TupleTableSlot *slot,
				ItemPointer tid)
{
	ItemPointerData last;
	bool		have = false;
	bool		call_again = false;
	bool		all_dead;
	bool		moved = false;

	/* SnapshotAny returns every tuple of the chain, in order */
	do
	{
		if (table_index_fetch_tuple(fetch, tid, SnapshotAny, slot, &call_again, &all_dead))
		{
			last = slot->tts_tid;
			have = true;
		}
	} while (call_again);

	if (have)
	{
		SnapshotData dirty;
		TableScanDesc scan;
		ItemPointerData latest = last;

		InitDirtySnapshot(dirty);
		scan = table_beginscan_tid(rel, &dirty);
		if (table_tuple_tid_valid(scan, &latest))
		{
			table_tuple_get_latest_tid(scan, &latest);
			moved = !ItemPointerEquals(&latest, &last);
		}
		table_endscan(scan);
	}
	return moved;
}

/*
 * Look the candidates of one distance up in their tables; fills *best with
 * the matching row of the smallest key.  Returns an in-progress
 * transaction to wait for (and *token, for a speculative insertion), or
 * InvalidTransactionId.  Sets *stale if a candidate from the key cache
 * names a dead tuple whose row moved: the index has an entry the cached
 * run lacks.
 */
static TransactionId
SimhashCheckCandidates(const SimhashNearDupInfo *info, SimhashCandidate *c, int n,
					   uint64 fp, const Datum *scope, ItemPointer self,
					   SimhashNearVerify *verify, SimhashNearMatch *best, uint32 *token,
					   bool *stale)
{
	SimhashNearMatch m;

	m.key = palloc(sizeof(Datum) * Max(info->nkey, 1));
	m.keynull = palloc(sizeof(bool) * Max(info->nkey, 1));
	for (int i = 0; i < n; i++)
	{
		Relation	rel = table_open(info->leaves[c[i].leaf].relid, AccessShareLock);
		IndexFetchTableData *fetch = table_index_fetch_begin(rel);
		TupleTableSlot *slot = table_slot_create(rel, NULL);
		SnapshotData dirty;
		bool		call_again = false;
		bool		all_dead;
		bool		fetched = false;
		TransactionId xwait = InvalidTransactionId;

		do
		{
			CHECK_FOR_INTERRUPTS();
			InitDirtySnapshot(dirty);
			if (!table_index_fetch_tuple(fetch, (ItemPointer) &c[i].tid, &dirty, slot,
										 &call_again, &all_dead))
				continue;
			fetched = true;
			if (!SimhashRowMatches(info, c[i].leaf, slot, fp, scope, self, c[i].dist))
				continue;

			/*
			 * The text of this tuple version cannot change: one that does not
			 * confirm needs no wait for its inserter or deleter.
			 */
			if (!SimhashRowConfirmed(info, c[i].leaf, slot, verify))
				continue;
			/* another transaction is inserting or deleting it: wait, see */
			if (TransactionIdIsValid(dirty.xmin) || TransactionIdIsValid(dirty.xmax))
			{
				xwait = TransactionIdIsValid(dirty.xmin) ? dirty.xmin : dirty.xmax;
				*token = dirty.speculativeToken;
				best->tid = slot->tts_tid;	/* for the wait's context */
				break;
			}
			SimhashKeepMatch(info, c[i].leaf, slot, c[i].dist, &m);
			if (!best->found || SimhashCompareKeys(info, &m, best) < 0)
			{
				Datum	   *key = best->key;
				bool	   *keynull = best->keynull;

				*best = m;
				/* swap the key arrays: best keeps m's, m reuses best's */
				m.key = key;
				m.keynull = keynull;
			}
		} while (call_again);

		/*
		 * A dead entry whose row an UPDATE moved to a new TID, with a new
		 * entry the cached run may lack (an UPDATE that keeps the
		 * fingerprint takes no lock).
		 */
		c[i].stale = c[i].cached && !fetched &&
			SimhashRowMoved(rel, fetch, slot, (ItemPointer) &c[i].tid);
		*stale |= c[i].stale;
		ExecDropSingleTupleTableSlot(slot);
		table_index_fetch_end(fetch);
		if (TransactionIdIsValid(xwait))
		{
			if (*token != 0)
				SpeculativeInsertionWait(xwait, *token);
			else
				XactLockTableWait(xwait, rel, &best->tid, XLTW_None);
			table_close(rel, AccessShareLock);
			return xwait;
		}
		table_close(rel, AccessShareLock);
	}
	return InvalidTransactionId;
}

/*
 * The key caches of the running statements, one per memory context the
 * triggers' state lives in (the statement's) and top table: the copies of
 * a trigger on the partitions of a table, and several triggers on one
 * table, share one cache and so one budget.
 */
typedef struct SimhashSharedKeyCache
{
	MemoryContext owner;
	Oid			top_relid;
	SimhashKeyCache *cache;		/* NULL: turned off */
	uint64		epoch;			/* SimhashHoldsWholeTable's epoch it trusts */
	MemoryContextCallback unlink;
	struct SimhashSharedKeyCache *next;
} SimhashSharedKeyCache;

static SimhashSharedKeyCache *shared_keycaches = NULL;

/* MemoryContextCallback: the statement's state is going away. */
static void
SimhashUnlinkKeyCache(void *arg)
{
	for (SimhashSharedKeyCache **p = &shared_keycaches; *p != NULL; p = &(*p)->next)
		if (*p == arg)
		{
			*p = (*p)->next;
			break;
		}
}

/*
 * The key cache the search of the competing tables' indexes may use, or
 * NULL.  Only while this backend holds the whole table (lock escalation:
 * a bulk load) can no other session's check insert rows, so only then do
 * runs read before keep up with the index; the cache is emptied when that
 * lock was taken again since.  See src/README, "The key cache", for what
 * the lock does not hold back.
 */
static SimhashKeyCache *
SimhashUsableKeyCache(const SimhashNearDupInfo *info)
{
	SimhashSharedKeyCache *sc;
	uint64		epoch;

	if (!SimhashHoldsWholeTable(info->top_relid, &epoch))
		return NULL;
	for (sc = shared_keycaches; sc != NULL; sc = sc->next)
		if (sc->owner == info->cxt && sc->top_relid == info->top_relid)
			break;
	if (sc == NULL)
	{
		sc = MemoryContextAllocZero(info->cxt, sizeof(SimhashSharedKeyCache));
		sc->owner = info->cxt;
		sc->top_relid = info->top_relid;
		sc->cache = SimhashKeyCacheCreate(info->cxt);
		sc->epoch = epoch;
		sc->unlink.func = SimhashUnlinkKeyCache;
		sc->unlink.arg = sc;
		MemoryContextRegisterResetCallback(info->cxt, &sc->unlink);
		sc->next = shared_keycaches;
		shared_keycaches = sc;
		if (sc->cache != NULL)
			elog(DEBUG1, "near-duplicate checks read the simhash index through a key cache");
	}
	else if (sc->cache != NULL && sc->epoch != epoch)
		SimhashKeyCacheReset(sc->cache);
	sc->epoch = epoch;
	return sc->cache;
}

/* Drop the cached runs that hold the stale candidates of c[0..n). */
static void
SimhashForgetStale(const SimhashNearDupInfo *info, SimhashKeyCache *cache,
				   const SimhashCandidate *c, int n)
{
	for (int i = 0; i < n; i++)
	{
		Relation	index;

		if (!c[i].stale)
			continue;
		index = index_open(info->leaves[c[i].leaf].indexoid, AccessShareLock);
		SimhashKeyCacheForget(cache, index, c[i].fp);
		index_close(index, AccessShareLock);
	}
}

/*
 * Find the nearest row within k of fingerprint fp among the competing
 * tables, in the scope "scope" (info->nscope values), other than the row
 * "self" of the trigger's own table (an UPDATE's old row; NULL for INSERT)
 * and, with verify= (else NULL), confirmed by its text.  Ties go to the
 * smallest key (to the first TID without one).
 */
void
SimhashFindNearDuplicate(const SimhashNearDupInfo *info, uint64 fp, int k, const Datum *scope,
						 ItemPointer self, SimhashNearVerify *verify, SimhashNearMatch *best)
{
	SimhashCandidates cands;
	bool		refreshed = false;

	best->key = palloc(sizeof(Datum) * Max(info->nkey, 1));
	best->keynull = palloc(sizeof(bool) * Max(info->nkey, 1));
	for (;;)
	{
		int			start;
		uint32		token = 0;
		bool		waited = false;
		bool		stale = false;
		SimhashKeyCache *cache = SimhashUsableKeyCache(info);

		best->found = false;
		memset(&cands, 0, sizeof(cands));
		for (int leaf = 0; leaf < info->nleaves; leaf++)
		{
			Relation	index = index_open(info->leaves[leaf].indexoid, AccessShareLock);

			cands.leaf = leaf;
			cands.cached = true;
			if (cache == NULL ||
				!SimhashKeyCacheSearch(cache, index, fp, k, SimhashAddCandidate, &cands))
			{
				cands.cached = false;
				SimhashSearchWithin(index, fp, k, SimhashAddCandidate, &cands);
			}
			cands.cached = false;
			SimhashPendingWithin(index, fp, k, SimhashAddCandidate, &cands);
			index_close(index, AccessShareLock);
		}
		if (cands.n == 0)
			return;
		qsort(cands.items, cands.n, sizeof(SimhashCandidate), SimhashCandidateCompare);

		/* nearest first: stop at the first distance with a live match */
		for (start = 0; start < cands.n && !best->found;)
		{
			int			end = start;

			while (end < cands.n && cands.items[end].dist == cands.items[start].dist)
				end++;
			if (TransactionIdIsValid(SimhashCheckCandidates(info, cands.items + start,
															end - start, fp, scope,
															self, verify, best, &token,
															&stale)))
			{
				waited = true;
				break;
			}
			start = end;
		}

		/*
		 * A cached entry within the distances looked at names a row that
		 * moved: the index has an entry the cache lacks.  Read those runs
		 * again and search once more.
		 */
		if (!waited && stale && !refreshed)
		{
			SimhashForgetStale(info, cache, cands.items, start);
			refreshed = true;
			pfree(cands.items);
			continue;
		}
		pfree(cands.items);
		if (!waited)
			return;
		/* another session's row: it may have added or moved more */
		if (cache != NULL)
			SimhashKeyCacheReset(cache);
	}
}
