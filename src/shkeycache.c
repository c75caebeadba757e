/*-------------------------------------------------------------------------
 *
 * shkeycache.c
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
 * must, and resets it (SimhashKeyCacheReset) whenever it can no longer rule
 * that out.  It notices this backend's own writes by itself: any flush of
 * the insert buffer, and a new relfilenode (TRUNCATE, REINDEX), which is
 * part of every run's hash key.  Entries VACUUM removes may stay cached:
 * callers look every candidate up in the heap anyway.  Memory is bounded
 * by simhash.neardup_cache_mem; the whole cache is emptied when it is
 * full.  See src/README, "The key cache".
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/shkeycache.c
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
	RelFileNode *nodes;			/* the index storage read, by number */
	int			nnodes;
	int			maxnodes;
	uint64	   *fps;			/* the entries' whole fingerprints */
	SimhashSortKey *skeys;		/* ... and sort keys (for their TIDs) */
	uint32		n;
	uint32		max;
	Size		budget;			/* bytes of entries and runs */
	Size		used;
	uint64		flushes;		/* SimhashPendingFlushes() when last emptied */
};

/* bytes a cached run costs besides its entries (hash entry and overhead) */
#define SIMHASH_KEYCACHE_RUN_BYTES	64
#define SIMHASH_KEYCACHE_ENTRY_BYTES	(sizeof(uint64) + sizeof(SimhashSortKey))

/* searches probing more keys than this go to the index directly */
#define SIMHASH_KEYCACHE_MAX_PROBES	4096

/* Empty the cache, keeping its budget. */
static void
SimhashKeyCacheEmpty(SimhashKeyCache *cache)
{
	MemoryContextReset(cache->cxt);
	cache->runs = keyrun_create(cache->cxt, 1024, NULL);
	cache->nodes = NULL;
	cache->nnodes = cache->maxnodes = 0;
	cache->fps = NULL;
	cache->skeys = NULL;
	cache->n = cache->max = 0;
	cache->used = 0;
	cache->flushes = SimhashPendingFlushes();
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
	SimhashKeyCacheEmpty(cache);
	return cache;
}

/* Forget every run: the index may have changed in ways the cache cannot see. */
void
SimhashKeyCacheReset(SimhashKeyCache *cache)
{
	if (cache->used > 0)
		SimhashKeyCacheEmpty(cache);
}

/*
 * Make room for n more entries, emptying the cache if they would break the
 * budget; false if a run of n entries alone would.
 */
static bool
SimhashKeyCacheReserve(SimhashKeyCache *cache, uint32 n)
{
	Size		need = (Size) n * SIMHASH_KEYCACHE_ENTRY_BYTES + SIMHASH_KEYCACHE_RUN_BYTES;

	/* one run may take a quarter: a larger one would empty it all the time */
	if (need > cache->budget / 4)
		return false;
	if (cache->used + need > cache->budget)
		SimhashKeyCacheEmpty(cache);
	if ((Size) cache->n + n > cache->max)
	{
		uint32		max = Max(Max(cache->max * 2, cache->n + n), 4096);

		max = Min(max, (uint32) (cache->budget / SIMHASH_KEYCACHE_ENTRY_BYTES));
		Assert(max >= cache->n + n);
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
	cache->used += need;
	return true;
}

/* The number of the index's relfilenode among those the cache has read. */
static uint64
SimhashKeyCacheNode(SimhashKeyCache *cache, Relation index)
{
	for (int i = cache->nnodes - 1; i >= 0; i--)
		if (RelFileNodeEquals(cache->nodes[i], index->rd_node))
			return (uint64) i;
	if (cache->nnodes == cache->maxnodes)
	{
		cache->maxnodes = Max(8, cache->maxnodes * 2);
		cache->nodes = cache->nodes ?
			repalloc(cache->nodes, sizeof(RelFileNode) * cache->maxnodes) :
			MemoryContextAlloc(cache->cxt, sizeof(RelFileNode) * cache->maxnodes);
	}
	cache->nodes[cache->nnodes] = index->rd_node;
	return (uint64) cache->nnodes++;
}

/* The tag of a run: see SimhashKeyRun. */
static inline uint64
SimhashKeyRunTag(uint64 node, int tree, uint16 key)
{
	return (node << 18) | ((uint64) tree << 16) | key;
}

/* Entries of a run too long for the cache, for the search that read them */
typedef struct SimhashKeyCacheSpill
{
	uint64	   *fps;
	SimhashSortKey *skeys;
	uint32		max;
} SimhashKeyCacheSpill;

/*
 * The run of key "key" of tree "tree", as *fps and *skeys: from the cache,
 * or read through *reader (begun here on first use) and cached if it fits,
 * else copied to *spill.  Returns its length.
 */
static uint32
SimhashKeyCacheRun(SimhashKeyCache *cache, Relation index, IndexScanDesc *reader,
				   SimhashKeyCacheSpill *spill, int tree, uint16 key,
				   const uint64 **fps, const SimhashSortKey **skeys)
{
	uint64	   *to_fps;
	SimhashSortKey *to_skeys;
	uint32		len;
	uint64		node = SimhashKeyCacheNode(cache, index);
	SimhashKeyRun *run = keyrun_lookup(cache->runs, SimhashKeyRunTag(node, tree, key));
	SimhashScanOpaque so;
	bool		found;

	if (run != NULL)
	{
		*fps = cache->fps + run->start;
		*skeys = cache->skeys + run->start;
		return run->len;
	}

	if (*reader == NULL)
		*reader = SimhashBeginKeyProbes(index);
	so = (SimhashScanOpaque) (*reader)->opaque;
	so->nbatch = 0;
	SimhashProbeKey(*reader, tree, key);
	len = (uint32) so->nbatch;
	if (SimhashKeyCacheReserve(cache, len))
	{
		/* the reservation may have emptied the cache, and its node numbers */
		node = SimhashKeyCacheNode(cache, index);
		run = keyrun_insert(cache->runs, SimhashKeyRunTag(node, tree, key), &found);
		Assert(!found);
		run->start = cache->n;
		run->len = len;
		to_fps = cache->fps + cache->n;
		to_skeys = cache->skeys + cache->n;
		cache->n += len;
	}
	else
	{
		if (len > spill->max)
		{
			if (spill->fps)
			{
				pfree(spill->fps);
				pfree(spill->skeys);
			}
			spill->fps = palloc(sizeof(uint64) * len);
			spill->skeys = palloc(sizeof(SimhashSortKey) * len);
			spill->max = len;
		}
		to_fps = spill->fps;
		to_skeys = spill->skeys;
	}
	for (uint32 i = 0; i < len; i++)
	{
		to_fps[i] = SimhashFingerprintOf(key, so->batch[i].rest, tree);
		to_skeys[i] = so->batch[i].skey;
	}
	so->nbatch = 0;
	*fps = to_fps;
	*skeys = to_skeys;
	return len;
}

/*
 * Report the entries of one run within "radius" of "center" that the bands
 * before (radii) did not reach; false once "found" asks to stop.
 */
static bool
SimhashKeyCacheScanRun(const uint64 *fps, const SimhashSortKey *skeys, uint32 len,
					   uint64 center, int radius, const int *radii,
					   SimhashFoundCallback found, void *arg)
{
	for (uint32 e = 0; e < len; e++)
	{
		uint64		counts = SimhashBlockCounts(fps[e] ^ center);
		ItemPointerData tid;

		/* reported by the first band that reaches it */
		if (SimhashLaneSum(counts) > radius || SimhashReachedBefore(counts, radii))
			continue;
		SimhashSortKeyTid(skeys[e], &tid);
		if (!found(&tid, fps[e], SimhashLaneSum(counts), arg))
			return false;
	}
	return true;
}

/*
 * SimhashSearchWithin through the cache: call "found" for every entry of
 * the index within "radius" of "center" until it returns false.  The
 * caller vouches that no other backend has changed the index since the
 * cache was last reset.
 */
void
SimhashKeyCacheSearch(SimhashKeyCache *cache, Relation index, uint64 center, int radius,
					  SimhashFoundCallback found, void *arg)
{
	SimhashProbePlan plan;
	IndexScanDesc reader = NULL;
	uint16	   *keys;
	int			radii[SIMHASH_NBANDS];
	double		nprobes = 0;
	bool		more = true;
	SimhashKeyCacheSpill spill = {0};

	Assert(radius >= SIMHASH_EMPTY_RADIUS && radius <= SIMHASH_BITS);
	if (radius < 0)
		return;
	/* this backend wrote buffered rows into some index since: start over */
	if (cache->flushes != SimhashPendingFlushes())
		SimhashKeyCacheReset(cache);

	SimhashPlanProbes(radius, SimhashEstimateEntries(index), &plan);
	for (int j = 0; j < SIMHASH_NBANDS; j++)
		if (plan.radius[j] >= 0)
			nprobes += SimhashBallSize(plan.radius[j]);
	if (plan.fullscan || nprobes > SIMHASH_KEYCACHE_MAX_PROBES)
	{
		SimhashSearchWithin(index, center, radius, found, arg);
		return;
	}

	keys = palloc(sizeof(uint16) * (Size) nprobes);
	for (int j = 0; j < SIMHASH_NBANDS; j++)
		radii[j] = -1;
	for (int j = 0; more && j < SIMHASH_NBANDS; j++)
	{
		int			nkeys;

		if (plan.radius[j] < 0)
			continue;
		nkeys = SimhashEnumerateBall(SimhashBlock(center, j), plan.radius[j], keys);
		for (int i = 0; more && i < nkeys; i++)
		{
			const uint64 *fps;
			const SimhashSortKey *skeys;
			uint32		len = SimhashKeyCacheRun(cache, index, &reader, &spill, j, keys[i],
												 &fps, &skeys);

			more = SimhashKeyCacheScanRun(fps, skeys, len, center, radius, radii, found, arg);
		}
		radii[j] = plan.radius[j];
		CHECK_FOR_INTERRUPTS();
	}
	pfree(keys);
	if (spill.fps)
	{
		pfree(spill.fps);
		pfree(spill.skeys);
	}
	if (reader != NULL)
	{
		shendscan(reader);
		IndexScanEnd(reader);
	}
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
