/*-------------------------------------------------------------------------
 *
 * shutils.c
 *	  Buffers, the metapage and options of the simhash index.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/shutils.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/reloptions.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

#include "shindex.h"

/*
 * Add a page to the index and return it pinned and exclusively locked.
 * The page is not initialized.  Pages are never freed, so there is no free
 * space map to consult: every new page extends the relation.
 */
Buffer
SimhashNewBuffer(Relation index)
{
	Buffer		buf;
	bool		needLock = !RELATION_IS_LOCAL(index);

	/* the extension lock makes P_NEW safe against concurrent extenders */
	if (needLock)
		LockRelationForExtension(index, ExclusiveLock);
	buf = ReadBuffer(index, P_NEW);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	if (needLock)
		UnlockRelationForExtension(index, ExclusiveLock);
	return buf;
}

/*
 * Read the root block and level of every tree from the metapage.  The
 * answer may be stale by the time it is used: a root that has since split
 * is still the leftmost page of its level, so descending from it stays
 * correct (Lehman & Yao: move right).
 */
void
SimhashReadRoots(Relation index, BlockNumber *roots, uint16 *levels)
{
	Buffer		buf = ReadBuffer(index, SIMHASH_METAPAGE_BLKNO);
	Page		page;
	SimhashMetaPageData *meta;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	SimhashCheckMetaPage(index, page);
	meta = SimhashPageGetMeta(page);
	for (int t = 0; t < SIMHASH_NTREES; t++)
	{
		roots[t] = meta->root[t];
		levels[t] = meta->rootlevel[t];
		if (roots[t] == InvalidBlockNumber)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\" has no root page for tree %d",
							RelationGetRelationName(index), t)));
	}
	UnlockReleaseBuffer(buf);
}

/* The index's reloptions, or NULL when none were given. */
SimhashOptions *
SimhashGetOptions(Relation index)
{
	return (SimhashOptions *) index->rd_options;
}

/* Leaf fill factor at build time, in percent. */
int
SimhashGetFillfactor(Relation index)
{
	SimhashOptions *opts = SimhashGetOptions(index);

	return opts ? opts->fillfactor : SIMHASH_DEFAULT_FILLFACTOR;
}
