/*-------------------------------------------------------------------------
 *
 * simhash_compat.h
 *	  What differs between the PostgreSQL versions the extension builds
 *	  against (15, 16, 17 and 18), in one place.
 *
 * Every PG_VERSION_NUM test of the extension is in this file, as macros
 * and small inline functions named after what they do; the .c files call
 * those and use each version's own API through them.  Where a version
 * brought a new interface for the same job (the bulk writer for the init
 * fork, ExtendBufferedRel, the comparison type of a PathKey) the newer
 * versions use it.  The planner logic that differs between versions is
 * described in src/README, "PostgreSQL versions".
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/core/simhash_compat.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SIMHASH_COMPAT_H
#define SIMHASH_COMPAT_H

#include <inttypes.h>

#include "access/genam.h"
#include "access/relscan.h"
#include "catalog/pg_class.h"
#include "access/stratnum.h"
#include "nodes/pathnodes.h"
#include "optimizer/cost.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "storage/proc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/relcache.h"

#if PG_VERSION_NUM < 150000
#error "simhash needs PostgreSQL 15 or later"
#endif

/* 16: the varlena macros moved out of postgres.h */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

/* 17: the bulk writer (storage/bulk_write.h) */
#if PG_VERSION_NUM >= 170000
#include "storage/bulk_write.h"
#else
#include "access/xloginsert.h"
#include "storage/smgr.h"
#endif

/* 18: the EXPLAIN property functions have a header of their own */
#if PG_VERSION_NUM >= 180000
#include "commands/explain_format.h"
#else
#include "commands/explain.h"
#endif

/*
 * 18 replaced the postfix pg_attribute_noreturn() by the prefix
 * pg_noreturn; on older versions the same GCC attribute works as a prefix.
 */
#ifndef pg_noreturn
#define pg_noreturn pg_attribute_noreturn()
#endif

/*
 * 16: RelFileNode became RelFileLocator.  The extension only compares
 * locators and hashes their relation number.
 */
#if PG_VERSION_NUM >= 160000
#define SimhashRelLocator(rel)			((rel)->rd_locator)
#define SimhashLocatorNumber(loc)		((loc).relNumber)
#else
typedef RelFileNode RelFileLocator;
#define RelFileLocatorEquals(a, b)		RelFileNodeEquals(a, b)
#define SimhashRelLocator(rel)			((rel)->rd_node)
#define SimhashLocatorNumber(loc)		((loc).relNode)
#endif

/* 17: the local transaction id of a backend moved into its vxid */
#if PG_VERSION_NUM >= 170000
#define SimhashMyLocalXid()				(MyProc->vxid.lxid)
#else
#define SimhashMyLocalXid()				(MyProc->lxid)
#endif

/* 17: LockHeldByMe can accept a stronger lock; we ask for this one */
#if PG_VERSION_NUM >= 170000
#define SimhashLockHeldByMe(tag, mode)	LockHeldByMe(tag, mode, false)
#else
#define SimhashLockHeldByMe(tag, mode)	LockHeldByMe(tag, mode)
#endif

/* 18: vacuum_delay_point says whether ANALYZE calls it */
#if PG_VERSION_NUM >= 180000
#define SimhashVacuumDelayPoint()		vacuum_delay_point(false)
#else
#define SimhashVacuumDelayPoint()		vacuum_delay_point()
#endif

/*
 * 18: RelationGetPrimaryKeyIndex can return a deferrable primary key; the
 * extension wants only an immediate one, as older versions return.
 */
#if PG_VERSION_NUM >= 180000
#define SimhashGetPrimaryKeyIndex(rel)	RelationGetPrimaryKeyIndex(rel, false)
#else
#define SimhashGetPrimaryKeyIndex(rel)	RelationGetPrimaryKeyIndex(rel)
#endif

/*
 * 16: build_attrmap_by_name can leave out columns missing from the input;
 * the extension wants every column to be there (an error otherwise)
 */
#if PG_VERSION_NUM >= 160000
#define SimhashBuildAttrMapByName(indesc, outdesc) \
	build_attrmap_by_name(indesc, outdesc, false)
#else
#define SimhashBuildAttrMapByName(indesc, outdesc) \
	build_attrmap_by_name(indesc, outdesc)
#endif

/* 18: ExecutorRun lost execute_once (a portal runs a plan once anyway) */
#if PG_VERSION_NUM >= 180000
#define SimhashExecutorRun(qd, dir, count)	ExecutorRun(qd, dir, count)
#else
#define SimhashExecutorRun(qd, dir, count)	ExecutorRun(qd, dir, count, true)
#endif

/*
 * 18: index AMs count the index searches of a scan, which EXPLAIN ANALYZE
 * shows as "Index Searches"; older versions count the scan only.
 */
static inline void
SimhashCountIndexSearch(IndexScanDesc scan)
{
	pgstat_count_index_scan(scan->indexRelation);
#if PG_VERSION_NUM >= 180000
	if (scan->instrument)
		scan->instrument->nsearches++;
#endif
}

/*
 * 18: a PathKey holds a comparison type instead of a btree strategy.  The
 * extension asks whether it sorts ascending or descending, and for its
 * sort operator.
 */
#if PG_VERSION_NUM >= 180000
#define SimhashPathKeyIsAsc(pk)		((pk)->pk_cmptype == COMPARE_LT)
#define SimhashPathKeyIsDesc(pk)	((pk)->pk_cmptype == COMPARE_GT)
#define SimhashPathKeySortOp(pk, type) \
	get_opfamily_member_for_cmptype((pk)->pk_opfamily, type, type, (pk)->pk_cmptype)
#else
#define SimhashPathKeyIsAsc(pk)		((pk)->pk_strategy == BTLessStrategyNumber)
#define SimhashPathKeyIsDesc(pk)	((pk)->pk_strategy == BTGreaterStrategyNumber)
#define SimhashPathKeySortOp(pk, type) \
	get_opfamily_member((pk)->pk_opfamily, type, type, (pk)->pk_strategy)
#endif

/*
 * 18 keeps the members of an equivalence class that stand for a child
 * relation (a partition) apart, reached with an iterator for the child's
 * relids; before, ec_members holds them all.  SimhashEMIterator visits the
 * members that matter for "relids" on every version.
 */
#if PG_VERSION_NUM >= 180000
typedef EquivalenceMemberIterator SimhashEMIterator;
#define SimhashEMIteratorStart(it, ec, relids) \
	setup_eclass_member_iterator(it, ec, relids)
#define SimhashEMIteratorNext(it)	eclass_member_iterator_next(it)
#else
typedef struct SimhashEMIterator
{
	List	   *members;
	int			next;
} SimhashEMIterator;

/* Start visiting the members of "ec" (all of them: "relids" is not needed). */
static inline void
SimhashEMIteratorStart(SimhashEMIterator *it, EquivalenceClass *ec, Relids relids)
{
	it->members = ec->ec_members;
	it->next = 0;
}

/* The next member, or NULL. */
static inline EquivalenceMember *
SimhashEMIteratorNext(SimhashEMIterator *it)
{
	if (it->next >= list_length(it->members))
		return NULL;
	return (EquivalenceMember *) list_nth(it->members, it->next++);
}
#endif

/*
 * 18: paths count the disabled nodes under them (instead of adding
 * disable_cost); a path of ours has those of its children.
 */
#if PG_VERSION_NUM >= 180000
#define SimhashPathDisabledNodes(path)	((path)->disabled_nodes)
#define SimhashSetDisabledNodes(path, n)	((path)->disabled_nodes = (n))
#else
#define SimhashPathDisabledNodes(path)	0
#define SimhashSetDisabledNodes(path, n)	((void) (n))
#endif

/* cost_incremental_sort, which takes the input's disabled nodes on 18 */
static inline void
SimhashCostIncrementalSort(Path *path, PlannerInfo *root, List *pathkeys,
						   int presorted_keys, Path *input, double limit_tuples)
{
	cost_incremental_sort(path, root, pathkeys, presorted_keys,
#if PG_VERSION_NUM >= 180000
						  input->disabled_nodes,
#endif
						  input->startup_cost, input->total_cost, input->rows,
						  input->pathtarget->width, 0.0, work_mem, limit_tuples);
}

/*
 * A restriction clause derived from "orig" (an equivalent one), to be
 * enforced in its place.  16 replaced outerjoin_delayed and nullable_relids
 * by clone markers and incompatible_relids, and identifies clauses by
 * rinfo_serial: a nestloop drops the join clauses whose serial its inner
 * path enforces, so the derived clause shares the original's serial, as a
 * commuted copy of a clause does.  Then a scan that enforces the derived
 * clause enforces the original, and the other way round.
 */
static inline RestrictInfo *
SimhashMakeDerivedRestrictInfo(PlannerInfo *root, Expr *clause, RestrictInfo *orig)
{
	RestrictInfo *rinfo;

#if PG_VERSION_NUM >= 160000
	rinfo = make_restrictinfo(root, clause, orig->is_pushed_down, orig->has_clone,
							  orig->is_clone, orig->pseudoconstant, orig->security_level,
							  orig->required_relids, orig->incompatible_relids,
							  orig->outer_relids);
	rinfo->rinfo_serial = orig->rinfo_serial;
#else
	rinfo = make_restrictinfo(root, clause, orig->is_pushed_down,
							  orig->outerjoin_delayed, orig->pseudoconstant,
							  orig->security_level, orig->required_relids,
							  orig->outer_relids, orig->nullable_relids);
#endif
	return rinfo;
}

/*
 * 16 lists a partitioned table's partitioned indexes in rel->indexlist
 * (for uniqueness proofs).  They have no storage: the extension must not
 * open them to plan a scan or to count.
 */
#if PG_VERSION_NUM >= 160000
#define SimhashIndexHasStorage(info) \
	(get_rel_relkind((info)->indexoid) != RELKIND_PARTITIONED_INDEX)
#else
#define SimhashIndexHasStorage(info)	true
#endif

/*
 * Extend a relation by one page, returned pinned and exclusively locked
 * and not initialized.  16 has ExtendBufferedRel, which takes the extension
 * lock itself; before it, P_NEW under the extension lock.
 */
static inline Buffer
SimhashExtendRelation(Relation rel)
{
#if PG_VERSION_NUM >= 160000
	return ExtendBufferedRel(BMR_REL(rel), MAIN_FORKNUM, NULL, EB_LOCK_FIRST);
#else
	Buffer		buf;
	bool		needLock = !RELATION_IS_LOCAL(rel);

	if (needLock)
		LockRelationForExtension(rel, ExclusiveLock);
	buf = ReadBuffer(rel, P_NEW);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	if (needLock)
		UnlockRelationForExtension(rel, ExclusiveLock);
	return buf;
#endif
}

/*
 * Writing a fork page by page outside shared buffers, WAL-logged and synced
 * at the end (the init fork of an unlogged index).  17 has the bulk writer
 * for it; before it, smgrwrite, log_newpage and smgrimmedsync.
 */
typedef struct SimhashForkWriter
{
	Relation	rel;
	ForkNumber	fork;
#if PG_VERSION_NUM >= 170000
	BulkWriteState *bulk;
	BulkWriteBuffer buf;
#else
	Page		page;
#endif
} SimhashForkWriter;

/* Start writing "fork" of "rel". */
static inline void
SimhashForkWriterStart(SimhashForkWriter *w, Relation rel, ForkNumber fork)
{
	w->rel = rel;
	w->fork = fork;
#if PG_VERSION_NUM >= 170000
	w->bulk = smgr_bulk_start_rel(rel, fork);
	w->buf = NULL;
#else
	w->page = (Page) palloc(BLCKSZ);
#endif
}

/* A page to fill for the next SimhashForkWriterWrite. */
static inline Page
SimhashForkWriterPage(SimhashForkWriter *w)
{
#if PG_VERSION_NUM >= 170000
	w->buf = smgr_bulk_get_buf(w->bulk);
	return (Page) w->buf;
#else
	return w->page;
#endif
}

/* Write and WAL-log the page filled, a standard page, as block "blkno". */
static inline void
SimhashForkWriterWrite(SimhashForkWriter *w, BlockNumber blkno)
{
#if PG_VERSION_NUM >= 170000
	smgr_bulk_write(w->bulk, blkno, w->buf, true);
	w->buf = NULL;
#else
	PageSetChecksumInplace(w->page, blkno);
	smgrwrite(RelationGetSmgr(w->rel), w->fork, blkno, (char *) w->page, true);
	log_newpage(&SimhashRelLocator(w->rel), w->fork, blkno, w->page, true);
#endif
}

/* Finish: the writes bypassed shared buffers, so sync them. */
static inline void
SimhashForkWriterFinish(SimhashForkWriter *w)
{
#if PG_VERSION_NUM >= 170000
	smgr_bulk_finish(w->bulk);
#else
	smgrimmedsync(RelationGetSmgr(w->rel), w->fork);
	pfree(w->page);
#endif
}

#endif							/* SIMHASH_COMPAT_H */
