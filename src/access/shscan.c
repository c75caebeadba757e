/*-------------------------------------------------------------------------
 *
 * shscan.c
 *	  Index scans of the simhash index: the access method's scan callbacks
 *	  and radius searches.
 *
 * A scan is a range scan ("fp <@ simhash_ball(q, k)", "fp = q", or no keys
 * at all; shrange.c), or a nearest-neighbour or sorted one ("ORDER BY
 * fp <-> q"; shknn.c).  See src/README, "Scans".  Also the extension's own
 * searches, and the planner's bounded count (SimhashSampleCountWithin).
 *
 * Index-only scans are not offered (no amcanreturn), yet the planner builds
 * one for a full scan that needs no column; see shgettuple, and src/README
 * "Pins and index-only scans".
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/access/shscan.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/genam.h"
#include "access/relscan.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/typcache.h"

#include "shscan.h"

/*
 * ambeginscan
 */
IndexScanDesc
shbeginscan(Relation r, int nkeys, int norderbys)
{
	IndexScanDesc scan = RelationGetIndexScan(r, nkeys, norderbys);
	SimhashScanOpaque so = palloc0(sizeof(SimhashScanOpaqueData));

	so->ctx = AllocSetContextCreate(CurrentMemoryContext, "simhash scan",
									ALLOCSET_DEFAULT_SIZES);
	so->payload_cxt = CurrentMemoryContext;
	so->curbuf = InvalidBuffer;
	so->parentbuf = InvalidBuffer;
	so->iospin = InvalidBuffer;
	so->internal = false;
	so->maxbatch = 256;
	so->batch = palloc(sizeof(SimhashEntry) * so->maxbatch);
	scan->opaque = so;
	scan->xs_itupdesc = RelationGetDescr(r);
	if (norderbys > 0)
	{
		scan->xs_orderbyvals = palloc0(sizeof(Datum) * norderbys);
		scan->xs_orderbynulls = palloc(sizeof(bool) * norderbys);
	}
	return scan;
}

/*
 * Estimated number of entries per band: the index's statistics, or what its
 * size implies if that is more.  An index created on an empty table keeps
 * reltuples = 0 until VACUUM or ANALYZE, however many rows arrive; trusting
 * it would make every search read a whole band.
 */
double
SimhashEstimateEntries(Relation index)
{
	double		tuples = index->rd_rel->reltuples;
	double		by_size = (double) RelationGetNumberOfBlocks(index) *
		(BLCKSZ / 10.0) / SIMHASH_NTREES;

	return Max(Max(tuples, by_size), 1);
}

/*
 * Return each distance in the order of the included column, as the ORDER BY
 * key's flags ask (nearestsort.c): ascending or descending by its type's
 * default btree order, NULLs first or last; also take the rows hint.  The
 * comparator is looked up once per scan, in the context the scan began in
 * (so->ctx is reset at every rescan); the flags are read at every rescan.
 */
static void
SimhashSetPayloadOrder(IndexScanDesc scan, int flags)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	Relation	index = scan->indexRelation;

	if (!SimhashIndexHasPayload(index))
		elog(ERROR, "simhash index \"%s\" has no included column to order by",
			 RelationGetRelationName(index));
	if (!so->payload_ssup_ready)
	{
		Oid			type = TupleDescAttr(RelationGetDescr(index),
										 IndexRelationGetNumberOfKeyAttributes(index))->atttypid;
		TypeCacheEntry *tc = lookup_type_cache(type, TYPECACHE_LT_OPR);

		if (!OidIsValid(tc->lt_opr))
			elog(ERROR, "type %s has no default btree order", format_type_be(type));
		memset(&so->payload_ssup, 0, sizeof(SortSupportData));
		so->payload_ssup.ssup_cxt = so->payload_cxt;
		so->payload_ssup.ssup_collation = InvalidOid;
		so->payload_ssup.abbreviate = false;
		PrepareSortSupportFromOrderingOp(tc->lt_opr, &so->payload_ssup);
		so->payload_ssup_ready = true;
	}
	/* after the lookup, which sets them for the "<" operator */
	so->payload_ssup.ssup_reverse = (flags & SIMHASH_SK_PAYLOAD_DESC) != 0;
	so->payload_ssup.ssup_nulls_first = (flags & SIMHASH_SK_PAYLOAD_NULLS_FIRST) != 0;
	so->payload_order = true;
	so->wanted = (flags >> SIMHASH_SK_WANTED_SHIFT) & SIMHASH_SK_WANTED_MAX;
}

/*
 * amrescan: read the scan keys and set up the scan.
 */
void
shrescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
		 ScanKey orderbys, int norderbys)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	MemoryContext old;

	/*
	 * This transaction's own pending inserts must be visible to its scans.
	 * The extension's own searches (estimates, the near-duplicate trigger)
	 * look at the pending rows in memory instead, and write nothing.
	 */
	if (!so->internal)
		SimhashFlushPending(scan->indexRelation);

	SimhashReleaseLeaf(so);
	if (BufferIsValid(so->iospin))
		ReleaseBuffer(so->iospin);
	so->iospin = InvalidBuffer;
	MemoryContextReset(so->ctx);
	old = MemoryContextSwitchTo(so->ctx);

	if (scankey && scan->numberOfKeys > 0)
		memmove(scan->keyData, scankey, scan->numberOfKeys * sizeof(ScanKeyData));
	if (orderbys && scan->numberOfOrderBys > 0)
		memmove(scan->orderByData, orderbys, scan->numberOfOrderBys * sizeof(ScanKeyData));

	so->mode = SIMHASH_SCAN_RANGE;
	so->nquals = 0;
	so->qcenter = palloc(sizeof(uint64) * Max(scan->numberOfKeys, 1));
	so->qradius = palloc(sizeof(int) * Max(scan->numberOfKeys, 1));
	so->radius = SIMHASH_BITS;
	so->center = 0;
	for (int i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		key = &scan->keyData[i];
		uint64		c;
		int			r;

		if (key->sk_flags & SK_ISNULL)
		{
			so->mode = SIMHASH_SCAN_EMPTY;
			break;
		}
		if (key->sk_strategy == SIMHASH_WITHIN_STRATEGY)
		{
			SimhashBall *ball = DatumGetSimhashBall(key->sk_argument);

			c = ball->center;
			/* normalized again: a ball stored by 0.1.0 kept any radius */
			r = SimhashNormalizeRadius(ball->radius);
		}
		else if (key->sk_strategy == SIMHASH_EQUAL_STRATEGY)
		{
			c = DatumGetSimhash64(key->sk_argument);
			r = 0;
		}
		else
			elog(ERROR, "unrecognized simhash strategy %d", key->sk_strategy);
		if (r < 0)
		{
			so->mode = SIMHASH_SCAN_EMPTY;
			break;
		}
		so->qcenter[so->nquals] = c;
		so->qradius[so->nquals] = r;
		so->nquals++;
		if (r < so->radius || so->nquals == 1)
		{
			so->center = c;
			so->radius = r;
		}
	}

	so->ordered = (scan->numberOfOrderBys > 0);
	so->order_null = false;
	so->payload_order = false;
	so->wanted = 0;
	if (so->ordered)
	{
		ScanKey		ob = &scan->orderByData[0];

		if (ob->sk_flags & SK_ISNULL)
			so->order_null = true;
		else
			so->ocenter = DatumGetSimhash64(ob->sk_argument);
		if (ob->sk_flags & SIMHASH_SK_PAYLOAD_ORDER)
			SimhashSetPayloadOrder(scan, ob->sk_flags);
	}

	/* scans without quals return NULL rows too (last, when ordered) */
	so->nulls = (so->nquals == 0);
	so->nentries = SimhashEstimateEntries(scan->indexRelation);
	so->hits.items = NULL;
	so->hits.n = so->hits.max = so->hits.pos = 0;
	so->keys = NULL;
	so->nkeys = so->keypos = 0;
	memset(so->buckets, 0, sizeof(so->buckets));
	so->nulls_done = false;
	memset(so->bucket_sorted, 0, sizeof(so->bucket_sorted));
	so->emitted = 0;
	so->emitdist = 0;
	so->nextband = 0;
	so->settled = -1;
	so->certified = -1;
	so->keeplimit = SIMHASH_BITS;
	so->keepcount = Max(so->wanted, SIMHASH_KNN_KEEP_ROWS);
	so->kept = 0;
	for (int i = 0; i < SIMHASH_BLOCKS; i++)
		so->ring[i] = -1;

	if (so->mode != SIMHASH_SCAN_EMPTY && so->ordered && !so->order_null)
	{
		if (so->nquals == 0 || so->ocenter == so->center)
		{
			so->mode = SIMHASH_SCAN_KNN;
			/* the radius around the same centre bounds the distances */
			so->emitlimit = so->radius;
			so->center = so->ocenter;
		}
		else
		{
			so->mode = SIMHASH_SCAN_SORTED;
			/* matches around another centre can be at any distance */
			so->emitlimit = SIMHASH_BITS;
		}
	}
	so->started = false;
	MemoryContextSwitchTo(old);
}

/* Read the roots and begin the scan proper, once. */
static void
SimhashStartScan(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	MemoryContext old = MemoryContextSwitchTo(so->ctx);

	SimhashReadRoots(scan->indexRelation, so->roots, so->levels);
	if (so->mode == SIMHASH_SCAN_RANGE || so->mode == SIMHASH_SCAN_SORTED)
		SimhashRangeBegin(scan);
	so->started = true;
	if (!so->internal)
		SimhashCountIndexSearch(scan);
	MemoryContextSwitchTo(old);
}

/*
 * amgettuple: next matching TID.  Distances are exact: no recheck.
 */
bool
shgettuple(IndexScanDesc scan, ScanDirection dir)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	SimhashHit	hit;

	if (dir != ForwardScanDirection)
		elog(ERROR, "simhash index scans only go forward");
	if (so->mode == SIMHASH_SCAN_EMPTY)
		return false;
	if (!so->started)
		SimhashStartScan(scan);

	if (so->mode == SIMHASH_SCAN_KNN || so->mode == SIMHASH_SCAN_SORTED)
	{
		if (!SimhashOrderedNext(scan, &hit))
			return false;
	}
	else
	{
		if (so->hits.pos >= so->hits.n && !SimhashRangeNext(scan))
			return false;
		hit = so->hits.items[so->hits.pos++];
	}

	scan->xs_heaptid = hit.tid;
	scan->xs_recheck = false;
	if (scan->xs_want_itup)
	{
		/*
		 * The index does not offer index-only scans (amcanreturn), but the
		 * planner still builds them for a full index scan that needs no
		 * column, like count(*).  Only that shape can come here: a scan
		 * that reads leaf by leaf and keeps each pinned (see
		 * SimhashReadLeaf).  During recovery VACUUM's replay does not wait
		 * for such pins, so refuse rather than risk a wrong answer.
		 */
		Datum		values[INDEX_MAX_KEYS];
		bool		isnull[INDEX_MAX_KEYS];

		if (RecoveryInProgress())
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("index-only scans of simhash indexes are not supported during recovery"),
					 errhint("SET enable_indexonlyscan = off.")));
		if (so->mode != SIMHASH_SCAN_RANGE || !so->fullscan)
			elog(ERROR, "unexpected index-only scan of a simhash index");
		values[0] = Simhash64GetDatum(hit.fp);
		isnull[0] = hit.isnull;
		/* the included column, if any (SimhashCheckIncludedColumns) */
		values[1] = hit.payload;
		isnull[1] = hit.payload_null;
		Assert(scan->xs_itupdesc->natts <= 2);
		if (scan->xs_itup)
			pfree(scan->xs_itup);
		scan->xs_itup = index_form_tuple(scan->xs_itupdesc, values, isnull);
	}
	if (scan->numberOfOrderBys > 0)
	{
		scan->xs_recheckorderby = false;
		scan->xs_orderbynulls[0] = (hit.dist < 0);
		scan->xs_orderbyvals[0] = Int32GetDatum(hit.dist < 0 ? 0 : hit.dist);

		/*
		 * "ORDER BY fp <-> q1, fp <-> q2": the scan orders by the first
		 * distance only.  Report 0, a lower bound, for the others (NULL for
		 * a NULL fingerprint, where every distance is NULL) and have the
		 * executor compute them: its reorder queue then holds each group of
		 * equal first distance until the scan has moved past it.
		 */
		for (int i = 1; i < scan->numberOfOrderBys; i++)
		{
			scan->xs_recheckorderby = true;
			scan->xs_orderbynulls[i] = hit.isnull;
			scan->xs_orderbyvals[i] = Int32GetDatum(0);
		}
	}
	return true;
}

/*
 * amgetbitmap: add every matching TID to the bitmap.
 */
int64
shgetbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	int64		ntids = 0;

	if (so->mode == SIMHASH_SCAN_EMPTY)
		return 0;
	so->ordered = false;
	if (so->mode != SIMHASH_SCAN_RANGE)
		so->mode = SIMHASH_SCAN_RANGE;
	if (!so->started)
		SimhashStartScan(scan);
	while (SimhashRangeNext(scan))
	{
		for (int i = 0; i < so->hits.n; i++)
			tbm_add_tuples(tbm, &so->hits.items[i].tid, 1, false);
		ntids += so->hits.n;
	}
	return ntids;
}

/*
 * amendscan
 */
void
shendscan(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	SimhashReleaseLeaf(so);
	if (BufferIsValid(so->iospin))
		ReleaseBuffer(so->iospin);
	MemoryContextDelete(so->ctx);
	pfree(so->batch);
	pfree(so);
}

/*
 * The extension's own search of an index: call "found" for every entry
 * within "radius" of "center" (of any row, live or dead: the caller looks
 * at the heap if it cares) until it returns false.  This backend's pending
 * rows are not written first, so nothing here writes WAL; see
 * SimhashPendingWithin for them.
 */
void
SimhashSearchWithin(Relation index, uint64 center, int radius,
					SimhashFoundCallback found, void *arg)
{
	IndexScanDesc scan = shbeginscan(index, 1, 0);
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	SimhashBall ball;
	ScanKeyData key;
	bool		more = true;

	memset(&ball, 0, sizeof(ball));
	ball.center = center;
	ball.radius = radius;
	ScanKeyEntryInitialize(&key, 0, 1, SIMHASH_WITHIN_STRATEGY, InvalidOid,
						   InvalidOid, InvalidOid, PointerGetDatum(&ball));
	so->internal = true;
	shrescan(scan, &key, 1, NULL, 0);
	if (so->mode != SIMHASH_SCAN_EMPTY)
	{
		SimhashStartScan(scan);
		while (more && SimhashRangeNext(scan))
			for (int i = 0; more && i < so->hits.n; i++)
				more = found(&so->hits.items[i].tid, so->hits.items[i].fp,
							 SimhashDistance(so->hits.items[i].fp, center), arg);
	}
	shendscan(scan);
	IndexScanEnd(scan);
}

/*
 * A scan that serves only SimhashProbeKey calls, for callers that choose
 * their own keys (the key cache): every entry of a probed key is batched,
 * unless the caller sets so->center and a radius below 64 in so->radius.
 * End it with shendscan and IndexScanEnd.
 */
IndexScanDesc
SimhashBeginKeyProbes(Relation index)
{
	IndexScanDesc scan = shbeginscan(index, 0, 0);
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	so->internal = true;
	shrescan(scan, NULL, 0, NULL, 0);
	Assert(so->radius == SIMHASH_BITS);
	SimhashReadRoots(index, so->roots, so->levels);
	so->started = true;
	return scan;
}

/* SimhashSearchWithin callback of SimhashCountWithin: count up to a limit. */
static bool
SimhashCountOne(ItemPointer tid, uint64 fp, int dist, void *arg)
{
	int64	   *left = (int64 *) arg;

	return --(*left) > 0;
}

/*
 * Count the entries within "radius" of "center", this backend's pending
 * rows included, stopping at "limit"; for the planner's estimates.
 */
int64
SimhashCountWithin(Relation index, uint64 center, int radius, int64 limit)
{
	int64		left = limit;

	if (limit <= 0)
		return 0;
	SimhashSearchWithin(index, center, radius, SimhashCountOne, &left);
	if (left > 0)
		SimhashPendingWithin(index, center, radius, SimhashCountOne, &left);
	return limit - left;
}

/* keys probed beyond each band's centre key by SimhashSampleCountWithin */
#define SIMHASH_COUNT_SAMPLE_KEYS	8

/* a probe key of a sampled count, and the keys of its ring it stands for */
typedef struct SimhashSampleKey
{
	uint16		key;
	double		weight;			/* 0: the centre key, counted exactly */
} SimhashSampleKey;

/*
 * The keys band "band" probes in a sampled count: the centre key, and
 * about one in "step" keys of each ring 1..r, spread over the ring and
 * staggered from band to band, each weighted by the ring's keys per key
 * probed.  Sorted by key (the probes reuse the leaf).  Returns how many.
 */
static int
SimhashSampleBandKeys(uint16 center, int band, int r, double step,
					  SimhashSampleKey *out, uint16 *ring)
{
	int			n = 0;

	out[n].key = center;
	out[n++].weight = 0;
	for (int i = 1; i <= r; i++)
	{
		int			size = SimhashEnumerateRing(center, i, ring);
		int			take = Max(1, (int) rint(size / step));

		for (int m = 0; m < take; m++)
		{
			int			pos = (int) (((m + (band + 0.5) / SIMHASH_BLOCKS) * size) / take);

			out[n].key = ring[Min(pos, size - 1)];
			out[n++].weight = (double) size / take;
		}
	}
	/* by insertion: a few keys */
	for (int i = 1; i < n; i++)
	{
		SimhashSampleKey k = out[i];
		int			j = i;

		for (; j > 0 && out[j - 1].key > k.key; j--)
			out[j] = out[j - 1];
		out[j] = k;
	}
	return n;
}

/* SimhashPendingWithin callback of SimhashSampleCountWithin: count all. */
static bool
SimhashSampleCountPending(ItemPointer tid, uint64 fp, int dist, void *arg)
{
	*(double *) arg += 1;
	return true;
}

/*
 * Estimate the entries within "radius" of "center", this backend's pending
 * rows included, for the planner; exact (SimhashCountWithin, up to "limit")
 * when the probe plan has at most SIMHASH_COUNT_SAMPLE_KEYS keys beyond the
 * bands' centre keys.  Otherwise the entries that share a probed band's
 * block with the centre are counted exactly (the centre keys: the k <= 3
 * search; near-duplicates are mostly there), and the rest, which lie under
 * the other keys of the balls, from about SIMHASH_COUNT_SAMPLE_KEYS of
 * those keys, scaled: a k = 7 count probes 12 keys instead of 68.  Stops
 * once "limit" entries were read.  See src/README, "Estimates".
 */
double
SimhashSampleCountWithin(Relation index, uint64 center, int radius, int64 limit)
{
	IndexScanDesc scan;
	SimhashScanOpaque so;
	SimhashProbePlan plan;
	double		outer = 0;
	double		count = 0;
	double		step;
	int			centres[SIMHASH_BLOCKS];
	int64		read = 0;

	if (limit <= 0)
		return 0;
	radius = SimhashNormalizeRadius(radius);
	if (radius < 0)
		return 0;
	/* the scan's plan (shrescan, SimhashRangeBegin) */
	SimhashPlanProbes(radius, SimhashEstimateEntries(index), &plan);
	for (int j = 0; j < SIMHASH_BLOCKS; j++)
	{
		centres[j] = plan.radius[j] >= 0 ? 0 : -1;
		if (plan.radius[j] >= 0)
			outer += SimhashBallSize(plan.radius[j]) - 1;
	}
	if (plan.fullscan || outer <= SIMHASH_COUNT_SAMPLE_KEYS)
		return (double) SimhashCountWithin(index, center, radius, limit);

	scan = SimhashBeginKeyProbes(index);
	so = (SimhashScanOpaque) scan->opaque;
	/* SimhashProbeKey drops entries beyond so->radius of so->center */
	so->center = center;
	so->radius = radius;
	step = outer / SIMHASH_COUNT_SAMPLE_KEYS;
	for (int band = 0; band < SIMHASH_BLOCKS && read < limit; band++)
	{
		int			r = plan.radius[band];
		int			radii[SIMHASH_BLOCKS];
		int			before[SIMHASH_BLOCKS];
		SimhashSampleKey *keys;
		uint16	   *ring;
		int			nkeys;

		if (r < 0)
			continue;
		/* the bands before this one, as the scan probes them */
		for (int j = 0; j < SIMHASH_BLOCKS; j++)
		{
			radii[j] = j < band ? plan.radius[j] : -1;
			before[j] = j < band ? centres[j] : -1;
		}
		keys = palloc(sizeof(SimhashSampleKey) * (SIMHASH_COUNT_SAMPLE_KEYS + r + 1));
		ring = palloc(sizeof(uint16) * (int) SimhashRingSize(Min(r, SIMHASH_BLOCK_BITS / 2)));
		nkeys = SimhashSampleBandKeys(SimhashBlock(center, band), band, r, step, keys, ring);
		for (int i = 0; i < nkeys && read < limit; i++)
		{
			CHECK_FOR_INTERRUPTS();
			SimhashProbeKey(scan, band, keys[i].key);
			read += so->nbatch;
			for (int b = 0; b < so->nbatch; b++)
			{
				SimhashEntry *e = &so->batch[b];
				uint64		fp = SimhashFingerprintOf(SimhashSortKeyKey(e->skey),
													  e->rest, band);
				uint64		counts = SimhashBlockCounts(fp ^ center);

				if (keys[i].weight == 0)
				{
					/* shares this block: counted unless a band before did */
					if (!SimhashReachedBefore(counts, before))
						count += 1;
				}
				else if (!SimhashReachedBefore(counts, centres) &&
						 !SimhashReachedBefore(counts, radii))
					count += keys[i].weight;
			}
			so->nbatch = 0;
		}
		pfree(keys);
		pfree(ring);
	}
	shendscan(scan);
	IndexScanEnd(scan);
	SimhashPendingWithin(index, center, radius, SimhashSampleCountPending, &count);
	return count;
}
