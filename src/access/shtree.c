/*-------------------------------------------------------------------------
 *
 * shtree.c
 *	  Descent, move-right and insertion in the simhash B+-trees.
 *
 * Including the two-step split and new roots.  See src/README, "Descent and
 * the Lehman and Yao protocol" and "Insertion and the split protocol".
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/access/shtree.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "shindex.h"

/* batches up to this size go to the append area when they fit */
#define SIMHASH_APPEND_BATCH	8

/* target fill of pages produced by a split, percent */
#define SIMHASH_SPLIT_FILL		90


/* Complain if a page is not a tree page of the expected band and level. */
static void
SimhashCheckTreePage(Relation index, Buffer buf, int band, int level)
{
	Page		page = BufferGetPage(buf);
	SimhashPageOpaque opaque;

	if (!SimhashPageIsValid(page))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" contains unexpected page at block %u",
						RelationGetRelationName(index), BufferGetBlockNumber(buf)),
				 errhint("Please REINDEX it.")));
	opaque = SimhashPageGetOpaque(page);
	if ((opaque->flags & SIMHASH_META) ||
		(band >= 0 && opaque->band != band) ||
		(level >= 0 && opaque->level != level))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" block %u is at band %d level %d, expected band %d level %d",
						RelationGetRelationName(index), BufferGetBlockNumber(buf),
						opaque->band, opaque->level, band, level),
				 errhint("Please REINDEX it.")));
	/* an internal page's pivots must lie within it: descents index them */
	if (!(opaque->flags & SIMHASH_LEAF) &&
		(((PageHeader) page)->pd_lower < MAXALIGN(SizeOfPageHeaderData) + sizeof(SimhashPivot) ||
		 ((PageHeader) page)->pd_lower > ((PageHeader) page)->pd_upper ||
		 ((PageHeader) page)->pd_upper > ((PageHeader) page)->pd_special))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" block %u has a corrupted pivot area",
						RelationGetRelationName(index), BufferGetBlockNumber(buf)),
				 errhint("Please REINDEX it.")));
}

/*
 * Follow right-links from a locked page until reaching the page whose key
 * range covers "target"; returns that page locked in "mode".  The lock on
 * each page is released before the next is taken: pages never go away, so
 * the right-link read under the lock remains a valid place to go.
 */
Buffer
SimhashMoveRight(Relation index, Buffer buf, SimhashSortKey target, int mode)
{
	for (;;)
	{
		Page		page = BufferGetPage(buf);
		SimhashPageOpaque opaque = SimhashPageGetOpaque(page);
		BlockNumber next;
		int			band = opaque->band;
		int			level = opaque->level;

		if ((opaque->flags & SIMHASH_RIGHTMOST) || target < opaque->high)
			return buf;
		next = opaque->rightlink;
		if (next == InvalidBlockNumber)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\" block %u has no right sibling but is not rightmost",
							RelationGetRelationName(index), BufferGetBlockNumber(buf)),
					 errhint("Please REINDEX it.")));
		UnlockReleaseBuffer(buf);
		CHECK_FOR_INTERRUPTS();
		buf = SimhashReadLinkedBuffer(index, next);
		LockBuffer(buf, mode);
		/* a sibling is on the same tree and level */
		SimhashCheckTreePage(index, buf, band, level);
	}
}

/* Refuse an internal page without pivots: a descent could not go on. */
static void
SimhashCheckPivots(Relation index, Buffer buf)
{
	if (SimhashPageNumPivots(BufferGetPage(buf)) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" block %u is an internal page without pivots",
						RelationGetRelationName(index), BufferGetBlockNumber(buf)),
				 errhint("Please REINDEX it.")));
}

/* Index of the last pivot of an internal page whose key is <= target. */
static int
SimhashFindPivot(Page page, SimhashSortKey target)
{
	SimhashPivot *pivots = SimhashPageGetPivots(page);
	int			lo = 0,
				hi = SimhashPageNumPivots(page) - 1,
				found = 0;

	while (lo <= hi)
	{
		int			mid = (lo + hi) / 2;

		if (SimhashPivotKey(&pivots[mid]) <= target)
		{
			found = mid;
			lo = mid + 1;
		}
		else
			hi = mid - 1;
	}
	return found;
}

/*
 * Descend from "root" (at "rootlevel") to the page at "level" whose range
 * covers "target", and return it locked in "access".  Upper pages are only
 * share-locked, one at a time.
 */
Buffer
SimhashDescendToLevel(Relation index, int band, BlockNumber root, uint16 rootlevel,
					  SimhashSortKey target, uint16 level, int access)
{
	BlockNumber blkno = root;
	int			curlevel = rootlevel;

	Assert(level <= rootlevel);
	for (;;)
	{
		Buffer		buf = SimhashReadLinkedBuffer(index, blkno);
		int			mode = (curlevel == level) ? access : BUFFER_LOCK_SHARE;
		Page		page;
		SimhashPivot *pivots;

		LockBuffer(buf, mode);
		SimhashCheckTreePage(index, buf, band, curlevel);
		buf = SimhashMoveRight(index, buf, target, mode);
		if (curlevel == level)
			return buf;
		page = BufferGetPage(buf);
		SimhashCheckPivots(index, buf);
		pivots = SimhashPageGetPivots(page);
		blkno = pivots[SimhashFindPivot(page, target)].child;
		UnlockReleaseBuffer(buf);
		curlevel--;
	}
}

/*
 * The leaf of tree "band" covering "target", share-locked, by way of its
 * parent: *parent is a pinned, unlocked page of level 1 kept from a descent
 * to a smaller target in the same tree, or InvalidBuffer.  A page's low
 * bound never rises (splits move keys right), so the kept page still covers
 * the target unless its high key is at or below it; then, or without a kept
 * page, the descent starts at the root.  On return *parent holds the level 1
 * page used, pinned and unlocked.  The tree must have a level above leaves.
 */
Buffer
SimhashDescendViaParent(Relation index, int band, BlockNumber root, uint16 rootlevel,
						SimhashSortKey target, Buffer *parent)
{
	Buffer		pbuf = *parent;
	Buffer		buf;
	Page		page;
	BlockNumber blkno;

	Assert(rootlevel >= 1);
	*parent = InvalidBuffer;
	if (BufferIsValid(pbuf))
	{
		SimhashPageOpaque opaque;

		LockBuffer(pbuf, BUFFER_LOCK_SHARE);
		SimhashCheckTreePage(index, pbuf, band, 1);
		opaque = SimhashPageGetOpaque(BufferGetPage(pbuf));
		if (!SimhashPageCovers(opaque, target))
		{
			UnlockReleaseBuffer(pbuf);
			pbuf = InvalidBuffer;
		}
	}
	if (!BufferIsValid(pbuf))
		pbuf = SimhashDescendToLevel(index, band, root, rootlevel, target, 1,
									 BUFFER_LOCK_SHARE);
	page = BufferGetPage(pbuf);
	SimhashCheckPivots(index, pbuf);
	blkno = SimhashPageGetPivots(page)[SimhashFindPivot(page, target)].child;
	LockBuffer(pbuf, BUFFER_LOCK_UNLOCK);
	*parent = pbuf;

	buf = SimhashReadLinkedBuffer(index, blkno);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	SimhashCheckTreePage(index, buf, band, 0);
	return SimhashMoveRight(index, buf, target, BUFFER_LOCK_SHARE);
}

/*
 * Descend from a root to the leaf covering "target", returned locked in
 * "access" (BUFFER_LOCK_SHARE or BUFFER_LOCK_EXCLUSIVE).
 */
Buffer
SimhashDescend(Relation index, BlockNumber root, SimhashSortKey target, int access)
{
	Buffer		buf = SimhashReadLinkedBuffer(index, root);
	Page		page;
	int			level;
	int			band;

	/* learn the root's level and band from the page itself */
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	SimhashCheckTreePage(index, buf, -1, -1);
	page = BufferGetPage(buf);
	level = SimhashPageGetOpaque(page)->level;
	band = SimhashPageGetOpaque(page)->band;
	UnlockReleaseBuffer(buf);
	return SimhashDescendToLevel(index, band, root, level, target, 0, access);
}

/* Merge two sorted entry arrays into out; duplicates keep the newer entry. */
static int
SimhashMergeEntries(const SimhashEntry *a, int na, const SimhashEntry *b, int nb,
					SimhashEntry *out)
{
	int			i = 0,
				j = 0,
				n = 0;

	while (i < na || j < nb)
	{
		if (j >= nb || (i < na && a[i].skey < b[j].skey))
			out[n++] = a[i++];
		else
		{
			if (i < na && a[i].skey == b[j].skey)
				i++;			/* same band key and TID: cannot happen twice */
			out[n++] = b[j++];
		}
	}
	return n;
}

/*
 * Lay out sorted entries over as few pages as a balanced split allows, each
 * filled to about SIMHASH_SPLIT_FILL percent when more than one is needed.
 * Returns palloc'd page images with leaf "flags" (the caller sets their links
 * and high keys).
 */
static Page *
SimhashLayoutLeaves(uint16 flags, int band, const SimhashEntry *entries, int n,
					int *npages)
{
	Page		trial = palloc(BLCKSZ);
	Page	   *pages;
	int			written;
	int			estimate;
	Size		limit;
	int			count = 0;
	int			pos = 0;

	/* does it all fit on one page? */
	SimhashInitPage(trial, flags, 0, band);
	written = SimhashLeafFill(trial, entries, n, SimhashLeafCapacity);
	if (written == n)
	{
		pages = palloc(sizeof(Page));
		pages[0] = trial;
		*npages = 1;
		return pages;
	}

	/* estimate the encoded size from the first page, then balance */
	estimate = (int) ((double) n / written * SimhashLeafCapacity /
					  (SimhashLeafCapacity * SIMHASH_SPLIT_FILL / 100.0)) + 1;
	limit = Min(SimhashLeafCapacity,
				(Size) ((double) SimhashLeafCapacity * n / written / estimate * 1.02) + 1);
	pages = palloc(sizeof(Page) * (estimate + 2));
	while (pos < n)
	{
		Page		page;

		if (count >= estimate + 2)
		{
			estimate *= 2;
			pages = repalloc(pages, sizeof(Page) * (estimate + 2));
		}
		page = (count == 0) ? trial : palloc(BLCKSZ);
		SimhashInitPage(page, flags, 0, band);
		pos += SimhashLeafFill(page, entries + pos, n - pos, limit);
		pages[count++] = page;
	}
	*npages = count;
	return pages;
}

/* First sort key stored on a leaf image (which must not be empty). */
static SimhashSortKey
SimhashLeafFirstKey(Page page)
{
	SimhashLeafCursor cur;
	SimhashEntry e;

	SimhashLeafCursorSeek(&cur, page, 0);
	if (!SimhashLeafCursorNextSorted(&cur, &e))
		elog(ERROR, "simhash split produced an empty leaf");
	return e.skey;
}

/*
 * Write the images pages[1..n) to new buffers and pages[0] over "buf",
 * chaining them with right-links and high keys; fills pivots[0..n-2] with
 * the downlinks the new pages need.  "buf" stays locked.  Used for leaves
 * and internal pages alike.
 *
 * The new pages are written right to left, each linking to the one written
 * before it, at most MAX_GENERIC_XLOG_PAGES per WAL record and locked only
 * while being written (a split can make hundreds of pages).  Nothing points
 * to them until the original page is rewritten last, in one record with its
 * new contents and right-link: a crash before that loses nothing.
 */
static void
SimhashWriteSplit(Relation index, Buffer buf, Page *pages, int n,
				  SimhashSortKey *lows, SimhashPivot *pivots)
{
	SimhashPageOpaque origop = SimhashPageGetOpaque(BufferGetPage(buf));
	BlockNumber next = origop->rightlink;
	int			i = n - 1;
	GenericXLogState *state;

	while (i >= 1)
	{
		Buffer		bufs[MAX_GENERIC_XLOG_PAGES];
		int			k;

		state = GenericXLogStart(index);
		for (k = 0; k < MAX_GENERIC_XLOG_PAGES && i >= 1; k++, i--)
		{
			SimhashPageOpaque op = SimhashPageGetOpaque(pages[i]);
			Page		p;

			bufs[k] = SimhashNewBuffer(index);
			if (i == n - 1)
			{
				op->high = origop->high;
				op->flags = (op->flags & ~SIMHASH_RIGHTMOST) |
					(origop->flags & SIMHASH_RIGHTMOST);
			}
			else
			{
				op->high = lows[i + 1];
				op->flags &= ~SIMHASH_RIGHTMOST;
			}
			op->rightlink = next;
			p = GenericXLogRegisterBuffer(state, bufs[k], GENERIC_XLOG_FULL_IMAGE);
			memcpy(p, pages[i], BLCKSZ);
			next = BufferGetBlockNumber(bufs[k]);
			pivots[i - 1].skey_hi = (uint32) (lows[i] >> 32);
			pivots[i - 1].skey_lo = (uint32) lows[i];
			pivots[i - 1].child = next;
		}
		GenericXLogFinish(state);
		while (k > 0)
			UnlockReleaseBuffer(bufs[--k]);
	}

	/* the original page, pointing to the first new page */
	{
		SimhashPageOpaque op = SimhashPageGetOpaque(pages[0]);

		op->high = lows[1];
		op->rightlink = next;
		op->flags &= ~SIMHASH_RIGHTMOST;
		state = GenericXLogStart(index);
		memcpy(GenericXLogRegisterBuffer(state, buf, GENERIC_XLOG_FULL_IMAGE),
			   pages[0], BLCKSZ);
		GenericXLogFinish(state);
	}
}

/*
 * Replace the contents of the exclusively locked leaf "buf" with the sorted
 * entries[0..n), spreading them over new right siblings when they do not
 * fit.  "buf" stays locked.  Returns the number of downlinks the caller
 * must insert at level 1 (with SimhashInsertPivots, after unlocking), and
 * sets *pivots to them.
 */
int
SimhashLeafReplace(Relation index, int band, Buffer buf,
				   const SimhashEntry *entries, int n, SimhashPivot **pivots)
{
	Page		page = BufferGetPage(buf);
	int			npages;
	Page	   *pages;
	SimhashSortKey *lows;

	*pivots = NULL;
	SimhashCheckLeafPayload(index, buf);
	pages = SimhashLayoutLeaves(SimhashLeafFlags(index), band, entries, n, &npages);
	if (npages == 1)
	{
		SimhashPageOpaque op = SimhashPageGetOpaque(page);
		SimhashPageOpaque np = SimhashPageGetOpaque(pages[0]);
		GenericXLogState *state;

		np->high = op->high;
		np->rightlink = op->rightlink;
		np->flags = op->flags;
		state = GenericXLogStart(index);
		memcpy(GenericXLogRegisterBuffer(state, buf, 0), pages[0], BLCKSZ);
		GenericXLogFinish(state);
		pfree(pages[0]);
		pfree(pages);
		return 0;
	}

	lows = palloc(sizeof(SimhashSortKey) * npages);
	for (int i = 0; i < npages; i++)
		lows[i] = SimhashLeafFirstKey(pages[i]);
	*pivots = palloc(sizeof(SimhashPivot) * npages);
	SimhashWriteSplit(index, buf, pages, npages, lows, *pivots);
	for (int i = 0; i < npages; i++)
		pfree(pages[i]);
	pfree(pages);
	pfree(lows);
	return npages - 1;
}

/*
 * Insert sorted entries, all within the range of the exclusively locked
 * leaf "buf", into that leaf; releases the buffer.
 */
static void
SimhashLeafInsert(Relation index, int band, Buffer buf,
				  const SimhashEntry *entries, int n, bool retry)
{
	Page		page = BufferGetPage(buf);
	GenericXLogState *state;
	SimhashEntry *old;
	SimhashEntry *all;
	int			nold,
				nall,
				npivots;
	SimhashPivot *pivots;

	/* an append or a rewrite must keep every entry's payload */
	SimhashCheckLeafPayload(index, buf);

	/*
	 * A few entries: append them, logging a few dozen bytes.  Not when
	 * retrying an interrupted batch: some entries may already be here, and
	 * only the merge below drops duplicates.
	 */
	if (n <= SIMHASH_APPEND_BATCH && !retry)
	{
		state = GenericXLogStart(index);
		if (SimhashLeafAppend(GenericXLogRegisterBuffer(state, buf, 0), entries, n))
		{
			GenericXLogFinish(state);
			UnlockReleaseBuffer(buf);
			return;
		}
		GenericXLogAbort(state);
	}

	/* otherwise rewrite the leaf, splitting it if the entries do not fit */
	old = palloc(sizeof(SimhashEntry) * Max(SimhashLeafNumEntries(page), 1));
	nold = SimhashLeafDecode(page, old);
	all = palloc(sizeof(SimhashEntry) * (nold + n));
	nall = SimhashMergeEntries(old, nold, entries, n, all);
	pfree(old);
	npivots = SimhashLeafReplace(index, band, buf, all, nall, &pivots);
	UnlockReleaseBuffer(buf);
	pfree(all);

	/* step 2: downlinks for the new leaves */
	SimhashInsertLeafPivots(index, band, pivots, npivots);
}

/*
 * Make a new root at "level" above the current root (at level - 1), whose
 * first pivot points to the old root and the rest are "pivots".  Returns
 * the number of pivots placed; the caller inserts the rest normally.  If
 * somebody else has already grown the tree to "level", places nothing.
 */
static int
SimhashNewRoot(Relation index, int band, uint16 level, SimhashPivot *pivots, int n)
{
	Buffer		metabuf = ReadBuffer(index, SIMHASH_METAPAGE_BLKNO);
	SimhashMetaPageData *meta;
	Buffer		rootbuf;
	GenericXLogState *state;
	Page		root;
	Page		metapage;
	SimhashPivot *dst;
	int			take;

	/* the metapage lock serializes root changes of all trees */
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	meta = SimhashPageGetMeta(BufferGetPage(metabuf));
	if (meta->rootlevel[band] >= level)
	{
		UnlockReleaseBuffer(metabuf);
		return 0;
	}
	Assert(meta->rootlevel[band] == level - 1);

	rootbuf = SimhashNewBuffer(index);
	state = GenericXLogStart(index);
	root = GenericXLogRegisterBuffer(state, rootbuf, GENERIC_XLOG_FULL_IMAGE);
	metapage = GenericXLogRegisterBuffer(state, metabuf, 0);
	SimhashInitPage(root, SIMHASH_RIGHTMOST, level, band);
	dst = SimhashPageGetPivots(root);
	dst[0].skey_hi = 0;
	dst[0].skey_lo = 0;
	dst[0].child = meta->root[band];
	take = Min(n, (int) SimhashMaxPivots - 1);
	memcpy(dst + 1, pivots, sizeof(SimhashPivot) * take);
	((PageHeader) root)->pd_lower += sizeof(SimhashPivot) * (take + 1);
	meta = SimhashPageGetMeta(metapage);
	meta->root[band] = BufferGetBlockNumber(rootbuf);
	meta->rootlevel[band] = level;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(rootbuf);
	UnlockReleaseBuffer(metabuf);
	return take;
}

/*
 * Insert the downlinks of the leaves a rewrite added (npivots of them, maybe
 * none) into level 1, and free them.
 */
void
SimhashInsertLeafPivots(Relation index, int band, SimhashPivot *pivots, int npivots)
{
	if (npivots > 0)
	{
		SimhashInsertPivots(index, band, 1, pivots, npivots);
		pfree(pivots);
	}
}

/*
 * Insert sorted pivots (downlinks to new pages at level - 1) into the pages
 * of "level", splitting them as needed, and growing a new root when the
 * level does not exist yet.
 */
void
SimhashInsertPivots(Relation index, int band, uint16 level,
					SimhashPivot *pivots, int n)
{
	while (n > 0)
	{
		BlockNumber roots[SIMHASH_NTREES];
		uint16		levels[SIMHASH_NTREES];
		Buffer		buf;
		Page		page;
		SimhashPageOpaque opaque;
		SimhashPivot *old;
		SimhashPivot *all;
		int			nold,
					m,
					nall,
					i,
					j,
					k;

		CHECK_FOR_INTERRUPTS();
		SimhashReadRoots(index, roots, levels);
		if (levels[band] < level)
		{
			int			placed = SimhashNewRoot(index, band, level, pivots, n);

			pivots += placed;
			n -= placed;
			continue;
		}

		buf = SimhashDescendToLevel(index, band, roots[band], levels[band],
									SimhashPivotKey(&pivots[0]), level,
									BUFFER_LOCK_EXCLUSIVE);
		page = BufferGetPage(buf);
		opaque = SimhashPageGetOpaque(page);

		/* the pivots that belong on this page */
		for (m = 1; m < n; m++)
			if (!SimhashPageCovers(opaque, SimhashPivotKey(&pivots[m])))
				break;

		/* merge them into the page's pivots */
		nold = SimhashPageNumPivots(page);
		old = SimhashPageGetPivots(page);
		all = palloc(sizeof(SimhashPivot) * (nold + m));
		for (i = 0, j = 0, k = 0; i < nold || j < m;)
		{
			if (j >= m || (i < nold && SimhashPivotKey(&old[i]) < SimhashPivotKey(&pivots[j])))
				all[k++] = old[i++];
			else
				all[k++] = pivots[j++];
		}
		nall = k;

		if (nall <= (int) SimhashMaxPivots)
		{
			GenericXLogState *state = GenericXLogStart(index);
			Page		p = GenericXLogRegisterBuffer(state, buf, 0);

			memcpy(SimhashPageGetPivots(p), all, sizeof(SimhashPivot) * nall);
			((PageHeader) p)->pd_lower = MAXALIGN(SizeOfPageHeaderData) +
				sizeof(SimhashPivot) * nall;
			GenericXLogFinish(state);
			UnlockReleaseBuffer(buf);
		}
		else
		{
			/* split the internal page into balanced parts */
			int			per = (int) (SimhashMaxPivots * SIMHASH_SPLIT_FILL / 100);
			int			npages = (nall + per - 1) / per;
			Page	   *pages = palloc(sizeof(Page) * npages);
			SimhashSortKey *lows = palloc(sizeof(SimhashSortKey) * npages);
			SimhashPivot *up = palloc(sizeof(SimhashPivot) * npages);
			int			pos = 0;

			for (i = 0; i < npages; i++)
			{
				int			cnt = (nall - pos) / (npages - i);

				pages[i] = palloc(BLCKSZ);
				SimhashInitPage(pages[i], 0, level, band);
				memcpy(SimhashPageGetPivots(pages[i]), all + pos, sizeof(SimhashPivot) * cnt);
				((PageHeader) pages[i])->pd_lower += sizeof(SimhashPivot) * cnt;
				lows[i] = SimhashPivotKey(&all[pos]);
				pos += cnt;
			}
			SimhashWriteSplit(index, buf, pages, npages, lows, up);
			UnlockReleaseBuffer(buf);
			SimhashInsertPivots(index, band, level + 1, up, npages - 1);
			for (i = 0; i < npages; i++)
				pfree(pages[i]);
			pfree(pages);
			pfree(lows);
			pfree(up);
		}
		pfree(all);
		pivots += m;
		n -= m;
	}
}

/*
 * Insert entries (sorted by sort key, no duplicates) into tree "band".
 * With "retry", some of them may already be in the tree (an earlier attempt
 * was interrupted by an error): they are not added twice.
 */
void
SimhashInsertSorted(Relation index, int band, SimhashEntry *entries, int n,
					bool retry)
{
	BlockNumber roots[SIMHASH_NTREES];
	uint16		levels[SIMHASH_NTREES];
	int			i = 0;

	while (i < n)
	{
		Buffer		buf;
		SimhashPageOpaque opaque;
		int			j;

		CHECK_FOR_INTERRUPTS();
		/* re-read the roots: a split of the previous leaf may have grown the tree */
		SimhashReadRoots(index, roots, levels);
		buf = SimhashDescendToLevel(index, band, roots[band], levels[band],
									entries[i].skey, 0, BUFFER_LOCK_EXCLUSIVE);
		opaque = SimhashPageGetOpaque(BufferGetPage(buf));
		for (j = i + 1; j < n; j++)
			if (!SimhashPageCovers(opaque, entries[j].skey))
				break;
		SimhashLeafInsert(index, band, buf, entries + i, j - i, retry);
		i = j;
	}
}
