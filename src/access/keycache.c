/*-------------------------------------------------------------------------
 *
 * keycache.c
 *	  A cache of decoded key runs, for many searches of an index that
 *	  cannot change under them.
 *
 * Real text shares 16-bit blocks among hundreds of rows, so every search
 * of a bulk load through the near-duplicate trigger decodes the same long
 * runs of entries again.  This cache keeps each (index, tree, key) run it
 * has read as plain arrays of fingerprints and sort keys, so that a repeated
 * probe costs a hash lookup and a pass of XOR and popcount.
 *
 * The cache does not know when other backends change the index: its owner
 * must, and resets it (SimhashKeyCacheReset) or drops runs
 * (SimhashKeyCacheForget) whenever it can no longer rule that out.  It
 * notices this backend's own writes by itself: any flush of the insert
 * buffer, and a new relfilenode (TRUNCATE, REINDEX), which is part of every
 * run's tag.  Runs are kept from their second read on.  Memory is bounded
 * by simhash.neardup_cache_mem; the whole cache is emptied when it is full.
 * See src/README, "The key cache".
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/access/keycache.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relscan.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "shscan.h"

/* simhash.neardup_cache_mem, in kB: -1 for maintenance_work_mem, 0 for none */
static int	simhash_neardup_cache_mem = -1;

/*
 * One cached run: entries [start, start + len) of the arrays.  Its tag is
 * node << 18 | tree << 16 | key, "node" numbering the relfilenodes the
 * cache has read (cache->nodes).
 */
typedef struct SimhashKeyRun
{
	uint64		tag;
	uint32		start;
	uint32		len;
	char		status;			/* for simplehash */
} SimhashKeyRun;

#define SH_PREFIX		keyrun
#define SH_ELEMENT_TYPE	SimhashKeyRun
#define SH_KEY_TYPE		uint64
#define SH_KEY			tag
#define SH_HASH_KEY(tb, key)	murmurhash32((uint32) (key) ^ (uint32) ((key) >> 32))
#define SH_EQUAL(tb, a, b)	((a) == (b))
#define SH_SCOPE		static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

struct SimhashKeyCache
{
	MemoryContext cxt;			/* everything below; reset as a whole */
	keyrun_hash *runs;
	RelFileLocator *nodes;			/* the index storage read, by number */
	int			nnodes;
	int			maxnodes;
	uint64	   *fps;			/* the entries' whole fingerprints */
	SimhashSortKey *skeys;		/* ... and sort keys (for their TIDs) */
	uint32		n;				/* entries in the arrays */
	uint32		max;			/* ... and their room */
	Size		budget;			/* bytes for the arrays' room and the runs */
	Size		runbytes;		/* runs cached, at SIMHASH_KEYCACHE_RUN_BYTES */
	uint64		flushes;		/* SimhashPendingFlushes() when last emptied */
	/* the probe plan of the last search: index (node) and radius */
	int64		plan_node;		/* -1: none since the cache was emptied */
	int			plan_radius;
	SimhashProbePlan plan;
	uint8	   *seen;			/* runs read before (not emptied) */
	uint8	   *toolong;		/* runs too long to keep (not emptied) */
};

/*
 * Bytes a cached run costs besides its entries: a simplehash element of 24
 * bytes, in a table at most 90% full whose size is a power of two.
 */
#define SIMHASH_KEYCACHE_RUN_BYTES	64
#define SIMHASH_KEYCACHE_ENTRY_BYTES	(sizeof(uint64) + sizeof(SimhashSortKey))

/* the doorkeeper's bitmaps: 2^18 bits, 32 kB each */
#define SIMHASH_KEYCACHE_SEEN_BITS	18

/* searches probing more keys than this go to the index directly */
#define SIMHASH_KEYCACHE_MAX_PROBES	4096

/* Empty the cache, keeping its budget. */
static void
SimhashKeyCacheEmpty(SimhashKeyCache *cache)
{
	MemoryContextReset(cache->cxt);
	cache->runs = keyrun_create(cache->cxt, 64, NULL);
	cache->nodes = NULL;
	cache->nnodes = cache->maxnodes = 0;
	cache->fps = NULL;
	cache->skeys = NULL;
	cache->n = cache->max = 0;
	cache->runbytes = 0;
	cache->flushes = SimhashPendingFlushes();
	cache->plan_node = -1;
}

/*
 * Create an empty cache in a context of its own below "parent", with the
 * budget simhash.neardup_cache_mem gives; NULL if that is 0.
 */
SimhashKeyCache *
SimhashKeyCacheCreate(MemoryContext parent)
{
	int			kb = (simhash_neardup_cache_mem < 0) ? maintenance_work_mem :
		simhash_neardup_cache_mem;
	SimhashKeyCache *cache;

	if (kb == 0)
		return NULL;
	cache = MemoryContextAllocZero(parent, sizeof(SimhashKeyCache));
	cache->cxt = AllocSetContextCreate(parent, "simhash key cache",
									   ALLOCSET_DEFAULT_SIZES);
	/* at most 1GB: entry counts stay far below 2^32 */
	cache->budget = Min((Size) kb * 1024, (Size) 1 << 30);
	cache->seen = MemoryContextAllocZero(parent, (Size) 1 << (SIMHASH_KEYCACHE_SEEN_BITS - 3));
	cache->toolong = MemoryContextAllocZero(parent, (Size) 1 << (SIMHASH_KEYCACHE_SEEN_BITS - 3));
	SimhashKeyCacheEmpty(cache);
	return cache;
}

/* The doorkeeper's bit for a run: a hash of it. */
static inline uint32
SimhashKeyCacheBit(Relation index, int tree, uint16 key)
{
	uint32		h = hash_combine(murmurhash32(SimhashLocatorNumber(SimhashRelLocator(index))),
								 murmurhash32(((uint32) tree << 16) | key));

	return h & (((uint32) 1 << SIMHASH_KEYCACHE_SEEN_BITS) - 1);
}

static inline bool
SimhashBitIsSet(const uint8 *bits, uint32 bit)
{
	return (bits[bit >> 3] & (1 << (bit & 7))) != 0;
}

static inline void
SimhashBitSet(uint8 *bits, uint32 bit)
{
	bits[bit >> 3] |= (uint8) (1 << (bit & 7));
}

/* Forget every run: the index may have changed in ways the cache cannot see. */
void
SimhashKeyCacheReset(SimhashKeyCache *cache)
{
	if (cache->n > 0 || cache->runbytes > 0)
		SimhashKeyCacheEmpty(cache);
}

/*
 * Make room for a run of n entries, emptying the cache if it would break
 * the budget: the arrays' room plus the runs' bytes stay within it.  False
 * if a run of n entries alone would take more than a quarter of it (it
 * would empty the cache again and again).
 */
static bool
SimhashKeyCacheReserve(SimhashKeyCache *cache, uint32 n)
{
	Size		limit = cache->budget / 4;

	if ((Size) n * SIMHASH_KEYCACHE_ENTRY_BYTES + SIMHASH_KEYCACHE_RUN_BYTES > limit)
		return false;
	for (;;)
	{
		Size		runbytes = cache->runbytes + SIMHASH_KEYCACHE_RUN_BYTES;
		Size		room = (cache->budget - runbytes) / SIMHASH_KEYCACHE_ENTRY_BYTES;
		uint32		max;

		if (runbytes <= cache->budget && (Size) cache->n + n <= cache->max &&
			(Size) cache->max * SIMHASH_KEYCACHE_ENTRY_BYTES + runbytes <= cache->budget)
			break;				/* fits as it is */
		/* grow the arrays by doubling, within the room the runs leave */
		max = (uint32) Min(Max(Max((Size) cache->max * 2, (Size) cache->n + n), 4096), room);
		if (runbytes > cache->budget || (Size) cache->n + n > max)
		{
			SimhashKeyCacheEmpty(cache);
			continue;			/* an empty cache always has room: see above */
		}
		if (cache->fps == NULL)
		{
			cache->fps = MemoryContextAllocHuge(cache->cxt, sizeof(uint64) * max);
			cache->skeys = MemoryContextAllocHuge(cache->cxt, sizeof(SimhashSortKey) * max);
		}
		else
		{
			cache->fps = repalloc_huge(cache->fps, sizeof(uint64) * max);
			cache->skeys = repalloc_huge(cache->skeys, sizeof(SimhashSortKey) * max);
		}
		cache->max = max;
	}
	cache->runbytes += SIMHASH_KEYCACHE_RUN_BYTES;
	return true;
}

/* The number of the index's relfilenode among those the cache has read. */
static uint64
SimhashKeyCacheNode(SimhashKeyCache *cache, Relation index)
{
	for (int i = cache->nnodes - 1; i >= 0; i--)
		if (RelFileLocatorEquals(cache->nodes[i], SimhashRelLocator(index)))
			return (uint64) i;
	if (cache->nnodes == cache->maxnodes)
	{
		cache->maxnodes = Max(8, cache->maxnodes * 2);
		cache->nodes = cache->nodes ?
			repalloc(cache->nodes, sizeof(RelFileLocator) * cache->maxnodes) :
			MemoryContextAlloc(cache->cxt, sizeof(RelFileLocator) * cache->maxnodes);
	}
	cache->nodes[cache->nnodes] = SimhashRelLocator(index);
	return (uint64) cache->nnodes++;
}

/* The tag of a run: see SimhashKeyRun. */
static inline uint64
SimhashKeyRunTag(uint64 node, int tree, uint16 key)
{
	return (node << 18) | ((uint64) tree << 16) | key;
}

/*
 * A run's entries, wherever they are: the i-th fingerprint and sort key are
 * fps[i * stride] and skeys[i * stride].
 */
typedef struct SimhashRunView
{
	const uint64 *fps;
	const SimhashSortKey *skeys;
	int			stride;
	uint32		len;
} SimhashRunView;

/*
 * The run of key "key" of tree "tree", for a search within "radius" of
 * "center": from the cache, or read through *reader (begun here on first
 * use).  Only a run read before in this cache's life, and not found too
 * long to keep, is read whole and kept (if it fits): the doorkeeper.  A
 * statement of one row, or of keys no other row shares, so pays nothing
 * for the cache.  Other runs are read keeping only the entries within
 * "radius", and stay in the reader's batch, each entry's rest turned into
 * its whole fingerprint, until the next call.
 */
static SimhashRunView
SimhashKeyCacheRun(SimhashKeyCache *cache, Relation index, uint64 *node,
				   IndexScanDesc *reader, int tree, uint16 key, uint64 center, int radius)
{
	SimhashKeyRun *run = keyrun_lookup(cache->runs, SimhashKeyRunTag(*node, tree, key));
	uint32		bit;
	bool		keep;
	SimhashRunView view;
	SimhashScanOpaque so;
	uint32		len;
	bool		found;

	if (run != NULL)
	{
		view.fps = cache->fps + run->start;
		view.skeys = cache->skeys + run->start;
		view.stride = 1;
		view.len = run->len;
		return view;
	}

	bit = SimhashKeyCacheBit(index, tree, key);
	keep = SimhashBitIsSet(cache->seen, bit) && !SimhashBitIsSet(cache->toolong, bit);
	SimhashBitSet(cache->seen, bit);
	if (*reader == NULL)
		*reader = SimhashBeginKeyProbes(index);
	so = (SimhashScanOpaque) (*reader)->opaque;
	so->nbatch = 0;
	/* SimhashProbeKey drops entries beyond so->radius of so->center */
	so->center = center;
	so->radius = keep ? SIMHASH_BITS : radius;
	SimhashProbeKey(*reader, tree, key);
	len = (uint32) so->nbatch;
	for (uint32 i = 0; i < len; i++)
		so->batch[i].rest = SimhashFingerprintOf(key, so->batch[i].rest, tree);
	view.len = len;
	if (keep && !SimhashKeyCacheReserve(cache, len))
	{
		SimhashBitSet(cache->toolong, bit);
		keep = false;
	}
	if (!keep)
	{
		view.fps = &so->batch[0].rest;
		view.skeys = &so->batch[0].skey;
		StaticAssertStmt(sizeof(SimhashEntry) % sizeof(uint64) == 0,
						 "the view steps through SimhashEntry in uint64 units");
		view.stride = sizeof(SimhashEntry) / sizeof(uint64);
		return view;
	}

	/* the reservation may have emptied the cache, and its node numbers */
	*node = SimhashKeyCacheNode(cache, index);
	run = keyrun_insert(cache->runs, SimhashKeyRunTag(*node, tree, key), &found);
	Assert(!found);
	run->start = cache->n;
	run->len = len;
	for (uint32 i = 0; i < len; i++)
	{
		cache->fps[cache->n + i] = so->batch[i].rest;
		cache->skeys[cache->n + i] = so->batch[i].skey;
	}
	cache->n += len;
	view.fps = cache->fps + run->start;
	view.skeys = cache->skeys + run->start;
	view.stride = 1;
	return view;
}

/*
 * Report the entries of one run within "radius" of "center" that the bands
 * before (radii) did not reach; false once "found" asks to stop.
 */
static bool
SimhashKeyCacheScanRun(SimhashRunView run, uint64 center, int radius, const int *radii,
					   SimhashFoundCallback found, void *arg)
{
	for (uint32 e = 0; e < run.len; e++)
	{
		uint64		fp = run.fps[(Size) e * run.stride];
		uint64		counts = SimhashBlockCounts(fp ^ center);
		ItemPointerData tid;

		/* reported by the first band that reaches it */
		if (SimhashLaneSum(counts) > radius || SimhashReachedBefore(counts, radii))
			continue;
		SimhashSortKeyTid(run.skeys[(Size) e * run.stride], &tid);
		if (!found(&tid, fp, SimhashLaneSum(counts), arg))
			return false;
	}
	return true;
}

/*
 * SimhashSearchWithin through the cache: call "found" for every entry of
 * the index within "radius" of "center" until it returns false.  The
 * caller vouches that no other backend has added entries to the index
 * since the cache was last reset (see SimhashKeyCacheForget for entries
 * that moved).  Returns false, having done nothing, for probe plans over
 * SIMHASH_KEYCACHE_MAX_PROBES keys and whole-band scans (large radii, small
 * indexes): those are for SimhashSearchWithin.
 */
bool
SimhashKeyCacheSearch(SimhashKeyCache *cache, Relation index, uint64 center, int radius,
					  SimhashFoundCallback found, void *arg)
{
	SimhashProbePlan plan;
	IndexScanDesc reader = NULL;
	uint16	   *keys;
	int			radii[SIMHASH_BLOCKS];
	double		nprobes = 0;
	bool		more = true;
	uint64		node;

	Assert(radius >= SIMHASH_EMPTY_RADIUS && radius <= SIMHASH_BITS);
	if (radius < 0)
		return true;
	/* this backend wrote buffered rows into some index since: start over */
	if (cache->flushes != SimhashPendingFlushes())
		SimhashKeyCacheReset(cache);

	/*
	 * The plan depends on the index's size only to choose between probes
	 * and a whole-band scan, and any plan is exact: it is worked out again
	 * for another index or radius, and when the cache starts over (the
	 * index may have grown), not for every row.
	 */
	node = SimhashKeyCacheNode(cache, index);
	if (cache->plan_node != (int64) node || cache->plan_radius != radius)
	{
		SimhashPlanProbes(radius, SimhashEstimateEntries(index), &cache->plan);
		cache->plan_node = (int64) node;
		cache->plan_radius = radius;
	}
	plan = cache->plan;
	for (int j = 0; j < SIMHASH_BLOCKS; j++)
		if (plan.radius[j] >= 0)
			nprobes += SimhashBallSize(plan.radius[j]);
	if (plan.fullscan || nprobes > SIMHASH_KEYCACHE_MAX_PROBES)
		return false;

	keys = palloc(sizeof(uint16) * (Size) nprobes);
	for (int j = 0; j < SIMHASH_BLOCKS; j++)
		radii[j] = -1;
	for (int j = 0; more && j < SIMHASH_BLOCKS; j++)
	{
		int			nkeys;

		if (plan.radius[j] < 0)
			continue;
		nkeys = SimhashEnumerateBallSorted(SimhashBlock(center, j), plan.radius[j], keys);
		for (int i = 0; more && i < nkeys; i++)
			more = SimhashKeyCacheScanRun(SimhashKeyCacheRun(cache, index, &node, &reader, j,
															 keys[i], center, radius),
										  center, radius, radii, found, arg);
		radii[j] = plan.radius[j];
		CHECK_FOR_INTERRUPTS();
	}
	pfree(keys);
	if (reader != NULL)
	{
		shendscan(reader);
		IndexScanEnd(reader);
	}
	return true;
}

/*
 * Drop the runs of index that hold fingerprint fp, one per band: an entry
 * of fp turned out stale (its row moved to a new TID), so the index has
 * entries these runs lack.
 */
void
SimhashKeyCacheForget(SimhashKeyCache *cache, Relation index, uint64 fp)
{
	uint64		node = SimhashKeyCacheNode(cache, index);

	for (int j = 0; j < SIMHASH_BLOCKS; j++)
		(void) keyrun_delete(cache->runs, SimhashKeyRunTag(node, j, SimhashBlock(fp, j)));
}

/* Register simhash.neardup_cache_mem (from _PG_init). */
void
SimhashInstallKeyCache(void)
{
	DefineCustomIntVariable("simhash.neardup_cache_mem",
							"Sets the memory the near-duplicate trigger may use to cache index key runs during bulk loads.",
							"-1 uses maintenance_work_mem; 0 turns the cache off.  "
							"The cache serves statements that lock the whole table for their checks.",
							&simhash_neardup_cache_mem, -1, -1, MAX_KILOBYTES,
							PGC_USERSET, GUC_UNIT_KB, NULL, NULL, NULL);
}
