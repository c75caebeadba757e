/*-------------------------------------------------------------------------
 *
 * shindex.h
 *	  Internal declarations of the simhash index access method.
 *
 * The interfaces between the access method's files: the AM callbacks,
 * buffers and the metapage, tree descent and insertion, the pending
 * entries, build.  The page format is shpage.h and shleaf.h, what other
 * layers may use simhash_am.h; all are included here.  Only src/access/
 * includes this.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/access/shindex.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHINDEX_H
#define SHINDEX_H

#include "access/amapi.h"
#include "access/generic_xlog.h"
#include "access/relscan.h"
#include "lib/stringinfo.h"
#include "nodes/pathnodes.h"

#include "shleaf.h"
#include "shpage.h"
#include "simhash_am.h"

/* shutils.c: buffers, the metapage and included columns */
extern Buffer SimhashNewBuffer(Relation index);
extern Buffer SimhashReadLinkedBuffer(Relation index, BlockNumber blkno);
extern bool SimhashIndexHasPayload(Relation index);
extern uint16 SimhashLeafFlags(Relation index);
extern void SimhashCheckLeafPayload(Relation index, Buffer buf);
extern void SimhashReadRoots(Relation index, BlockNumber *roots, uint16 *levels);
extern SimhashOptions *SimhashGetOptions(Relation index);
extern int	SimhashGetFillfactor(Relation index);

/* shtree.c: descent and insertion */
extern Buffer SimhashDescend(Relation index, BlockNumber root, SimhashSortKey target,
							 int access);
extern Buffer SimhashDescendToLevel(Relation index, int band, BlockNumber root,
									uint16 rootlevel, SimhashSortKey target,
									uint16 level, int access);
extern Buffer SimhashDescendViaParent(Relation index, int band, BlockNumber root,
									  uint16 rootlevel, SimhashSortKey target,
									  Buffer *parent);
extern Buffer SimhashMoveRight(Relation index, Buffer buf, SimhashSortKey target,
							   int access);
extern void SimhashInsertSorted(Relation index, int band,
								SimhashEntry *entries, int n, bool retry);
extern int	SimhashLeafReplace(Relation index, int band, Buffer buf,
							   const SimhashEntry *entries, int n,
							   SimhashPivot **pivots);
extern void SimhashInsertPivots(Relation index, int band, uint16 level,
								SimhashPivot *pivots, int n);
extern void SimhashInsertLeafPivots(Relation index, int band, SimhashPivot *pivots,
									int npivots);

/* shinsert.c: aminsert and the per-transaction pending entries */
extern bool shinsert(Relation index, Datum *values, bool *isnull,
					 ItemPointer ht_ctid, Relation heapRel,
					 IndexUniqueCheck checkUnique, bool indexUnchanged,
					 struct IndexInfo *indexInfo);
extern void SimhashFlushPending(Relation index);
extern void SimhashFlushAllPending(void);

/* shbuild.c */
extern IndexBuildResult *shbuild(Relation heap, Relation index,
								 struct IndexInfo *indexInfo);
extern void shbuildempty(Relation index);
extern char *shbuildphasename(int64 phasenum);

/* shscan.c */
extern IndexScanDesc shbeginscan(Relation r, int nkeys, int norderbys);
extern void shrescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
					 ScanKey orderbys, int norderbys);
extern bool shgettuple(IndexScanDesc scan, ScanDirection dir);
extern int64 shgetbitmap(IndexScanDesc scan, TIDBitmap *tbm);
extern void shendscan(IndexScanDesc scan);

/* shvacuum.c */
extern IndexBulkDeleteResult *shbulkdelete(IndexVacuumInfo *info,
										   IndexBulkDeleteResult *stats,
										   IndexBulkDeleteCallback callback,
										   void *callback_state);
extern IndexBulkDeleteResult *shvacuumcleanup(IndexVacuumInfo *info,
											  IndexBulkDeleteResult *stats);

/* shcost.c */
extern void shcostestimate(PlannerInfo *root, IndexPath *path,
						   double loop_count, Cost *indexStartupCost,
						   Cost *indexTotalCost, Selectivity *indexSelectivity,
						   double *indexCorrelation, double *indexPages);

/* shvalidate.c */
extern bool shvalidate(Oid opclassoid);

#endif							/* SHINDEX_H */
