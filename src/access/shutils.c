/*-------------------------------------------------------------------------
 *
 * shutils.c
 *	  Buffers, the metapage, options and included columns of the simhash
 *	  index.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/access/shutils.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/reloptions.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
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
	return SimhashExtendRelation(index);
}

/*
 * Pin block blkno of the index, a block that a page of it links to (a root,
 * a pivot's child, a right sibling): a link past the end of the file is
 * damage, reported as such (XX002) rather than as a failed read of the
 * storage layer (XX001, or 58P01 beyond the last segment).  The number of
 * blocks is cached in rd_amcache and looked up again only for a link past
 * it: the index never shrinks (a rebuild gets a new relation file and a
 * relcache invalidation, which resets the cache).
 */
Buffer
SimhashReadLinkedBuffer(Relation index, BlockNumber blkno)
{
	BlockNumber *known = (BlockNumber *) index->rd_amcache;

	if (known == NULL || blkno >= *known)
	{
		BlockNumber nblocks = RelationGetNumberOfBlocks(index);

		if (known == NULL)
		{
			known = MemoryContextAlloc(index->rd_indexcxt, sizeof(BlockNumber));
			index->rd_amcache = known;
		}
		*known = nblocks;
		if (blkno >= nblocks)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\" links to block %u past its end",
							RelationGetRelationName(index), blkno),
					 errdetail("The index has %u blocks.", nblocks),
					 errhint("Please REINDEX it.")));
	}
	return ReadBuffer(index, blkno);
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
							RelationGetRelationName(index), t),
					 errdetail("The metapage at block %u names none.", SIMHASH_METAPAGE_BLKNO),
					 errhint("Please REINDEX it.")));
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

/*
 * Does the index store an included column in its entries?  Only one, of a
 * fixed-length type passed by value (SimhashCheckIncludedColumns).
 */
bool
SimhashIndexHasPayload(Relation index)
{
	return IndexRelationGetNumberOfAttributes(index) >
		IndexRelationGetNumberOfKeyAttributes(index);
}

/* The flags of a new leaf of the index. */
uint16
SimhashLeafFlags(Relation index)
{
	return SIMHASH_LEAF | (SimhashIndexHasPayload(index) ? SIMHASH_PAYLOAD : 0);
}

/*
 * Complain unless the leaf in "buf" has the layout of the index's entries:
 * with a payload exactly when the index has an included column.  Readers
 * that pass entries on (scans, splits, VACUUM) check this first, so that
 * a damaged flag cannot drop or invent included values.
 */
void
SimhashCheckLeafPayload(Relation index, Buffer buf)
{
	Page		page = BufferGetPage(buf);
	bool		has = (SimhashPageGetOpaque(page)->flags & SIMHASH_PAYLOAD) != 0;

	if (has != SimhashIndexHasPayload(index))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" block %u has entries %s an included column",
						RelationGetRelationName(index), BufferGetBlockNumber(buf),
						has ? "with" : "without"),
				 errhint("Please REINDEX it.")));
}

/*
 * Refuse included columns that entries cannot hold: more than one, or one
 * whose values are not fixed-length and passed by value (CREATE INDEX and
 * REINDEX come here through ambuild and ambuildempty).
 */
void
SimhashCheckIncludedColumns(Relation index)
{
	TupleDesc	desc = RelationGetDescr(index);
	int			nincluded = IndexRelationGetNumberOfAttributes(index) -
		IndexRelationGetNumberOfKeyAttributes(index);
	Form_pg_attribute att;

	if (nincluded == 0)
		return;
	if (nincluded > 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("simhash indexes can include at most one column"),
				 errdetail("Index \"%s\" includes %d columns.",
						   RelationGetRelationName(index), nincluded),
				 errhint("Include only the column that breaks ties in ORDER BY fp <-> q, column.")));
	att = TupleDescAttr(desc, IndexRelationGetNumberOfKeyAttributes(index));
	if (!att->attbyval || att->attlen <= 0 || att->attlen > (int) sizeof(Datum))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("simhash indexes cannot include column \"%s\" of type %s",
						NameStr(att->attname), format_type_be(att->atttypid)),
				 errdetail("Every entry stores the included value, which must be of a fixed-length type passed by value."),
				 errhint("Include a column of a type such as bigint, integer, date or timestamp.")));
}
