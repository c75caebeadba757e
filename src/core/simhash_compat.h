/*-------------------------------------------------------------------------
 *
 * simhash_compat.h
 *	  What differs between the PostgreSQL versions the extension builds
 *	  against (15, 16, 17 and 18): storage, locks, the index AM and the
 *	  executor.
 *
 * Every PG_VERSION_NUM test of the extension is in this file or in
 * simhash_compat_planner.h (paths, path keys, equivalence classes and
 * restriction clauses, which only the planner layer and the band join's
 * planning use), as macros and small inline functions named after what
 * they do; the .c files call those and use each version's own API through
 * them.  Where a version brought a new interface for the same job (the
 * bulk writer for the init fork, ExtendBufferedRel) the newer versions use
 * it.  simhash.h includes this file, so every file of the extension sees it.
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
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "storage/proc.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#if PG_VERSION_NUM >= 160000
#include "parser/parse_relation.h"
#include "utils/relfilenumbermap.h"
#else
#include "utils/relfilenodemap.h"
#endif

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
 * 16: RelFileNode became RelFileLocator.  The extension compares
 * locators, hashes their relation number, and names the relation of one.
 */
#if PG_VERSION_NUM >= 160000
#define SimhashRelLocator(rel)			((rel)->rd_locator)
#define SimhashLocatorNumber(loc)		((loc).relNumber)
#define SimhashLocatorSpc(loc)			((loc).spcOid)
#else
typedef RelFileNode RelFileLocator;
#define RelFileLocatorEquals(a, b)		RelFileNodeEquals(a, b)
#define SimhashRelLocator(rel)			((rel)->rd_node)
#define SimhashLocatorNumber(loc)		((loc).relNode)
#define SimhashLocatorSpc(loc)			((loc).spcNode)
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

/*
 * 18: ExecutorRun lost execute_once (a portal runs a plan once anyway).
 * An ExecutorRun hook is declared with SIMHASH_EXECUTOR_RUN_PARAMS and
 * passes the call on with SimhashExecutorRunNext(fn).
 */
#if PG_VERSION_NUM >= 180000
#define SimhashExecutorRun(qd, dir, count)	ExecutorRun(qd, dir, count)
#define SIMHASH_EXECUTOR_RUN_PARAMS \
	QueryDesc *queryDesc, ScanDirection direction, uint64 count
#define SimhashExecutorRunNext(fn)	(fn)(queryDesc, direction, count)
#else
#define SimhashExecutorRun(qd, dir, count)	ExecutorRun(qd, dir, count, true)
#define SIMHASH_EXECUTOR_RUN_PARAMS \
	QueryDesc *queryDesc, ScanDirection direction, uint64 count, bool execute_once
#define SimhashExecutorRunNext(fn)	(fn)(queryDesc, direction, count, execute_once)
#endif

/*
 * 16: the permissions of a range table entry moved into the statement's
 * RTEPermissionInfo list; the rights a statement requires on an entry.
 */
#if PG_VERSION_NUM >= 160000
#define SimhashRteRequiredPerms(stmt, rte) \
	((rte)->perminfoindex != 0 ? \
	 getRTEPermissionInfo((stmt)->permInfos, (rte))->requiredPerms : (AclMode) 0)
#else
#define SimhashRteRequiredPerms(stmt, rte)	((rte)->requiredPerms)
#endif

/* 16: the relation of a relfilenode is found by its RelFileNumber */
#if PG_VERSION_NUM >= 160000
#define SimhashRelidByLocator(loc)	RelidByRelfilenumber((loc).spcOid, (loc).relNumber)
#else
#define SimhashRelidByLocator(loc)	RelidByRelfilenode((loc).spcNode, (loc).relNode)
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
