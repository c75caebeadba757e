/*-------------------------------------------------------------------------
 *
 * clusters.c
 *	  simhash_clusters(query, k): the near-duplicate clusters of the rows a
 *	  query returns, i.e. the connected components of "within k bits".
 *
 * The query returns (id, fp).  Its rows are read through an SPI cursor in
 * chunks into one compact array of (id, fp) pairs, which is sorted by id
 * (a radix sort; input already in id order costs one pass), so that a
 * row's number is the rank of its id: the representative of a cluster, its
 * smallest id, is its smallest row number, and duplicate ids are adjacent.
 * Components are kept in a union-find over row numbers (union by size,
 * path halving), so that reaching a pair twice is harmless.
 *
 * Candidate pairs are found band by band, as the index and the band join
 * find them (shprobe.c): with per-band radii r_j and sum_j (r_j + 1) > k,
 * any two fingerprints within k bits have, in some band j, blocks within
 * r_j bits of each other.  For each probed band the rows are sorted by the
 * band's 16-bit block (a counting sort), and every bucket of rows sharing a
 * block is joined with itself and, when r_j > 0, with each bucket of a
 * greater key within r_j bits of its own.
 *
 * A bucket is not joined pair by pair.  Its rows are gathered, in order,
 * into groups of rows known to be connected; a group has a reference (its
 * first row) and a reach: no member is further than that from the
 * reference.  A row is compared with each group of the bucket so far: by
 * the triangle inequality, a group whose reference is more than k + reach
 * away holds no row within k; a group whose reference is within k, or that
 * the union-find already connects to the row, is joined at once; otherwise
 * its members are compared until one is within k.  A row that joins two
 * groups merges them.  So a bucket holding one cluster of a million copies
 * costs about a million steps, not half a trillion, and clusters that share
 * a block but lie far apart cost one comparison per group.  Rows with no
 * near neighbour among many unrelated rows of their bucket are compared
 * with each of them, as in the band join.  For small inputs or very large
 * radii all rows form one bucket instead of four bands.
 *
 * Memory: 36 bytes per row (the row, the union-find, one band order at a
 * time), 20 bytes per row of the largest bucket (its groups), and about
 * 400 kB, all within maintenance_work_mem; the limit is checked while the
 * rows are read.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/clusters.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/plancache.h"
#include "utils/portal.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "shindex.h"
#include "simhash_planner.h"

#define SIMHASH_CLUSTERS_FETCH		10000	/* rows per cursor fetch */
#define SIMHASH_CLUSTERS_KEYS		(1 << SIMHASH_BLOCK_BITS)
#define SIMHASH_CLUSTERS_REPORT_MS	10000	/* progress NOTICE interval */
#define SIMHASH_CLUSTERS_MAX_ROWS	(PG_UINT32_MAX - 1)
#define SIMHASH_NO_POS				PG_UINT32_MAX
/* rows between interrupt checks in linear passes */
#define SIMHASH_CLUSTERS_CHUNK		65536

/* the query's rows: its id and fingerprint */
typedef struct SimhashClusterRow
{
	int64		id;
	uint64		fp;
} SimhashClusterRow;

/* rows of a bucket known to be connected (see the file header) */
typedef struct SimhashClusterGroup
{
	uint32		head;			/* first member (a band position): the reference */
	uint32		tail;			/* last member; next[] links them */
	uint32		root;			/* a row of the members' component */
	int32		reach;			/* no member is further from the reference */
} SimhashClusterGroup;

/*
 * Bytes per row: the row, parent and size in the union-find, and a band
 * order (row numbers and fingerprints); per row of the largest bucket: a
 * group and a link.  Fixed: the directory of a band order and the probe
 * masks of a band.
 */
#define SIMHASH_CLUSTERS_ROW_BYTES	(sizeof(SimhashClusterRow) + 3 * sizeof(uint32) + \
									 sizeof(uint64))
#define SIMHASH_CLUSTERS_GROUP_BYTES	(sizeof(SimhashClusterGroup) + sizeof(uint32))
#define SIMHASH_CLUSTERS_FIXED_BYTES	(sizeof(uint32) * (SIMHASH_CLUSTERS_KEYS + 1) + \
										 sizeof(uint16) * SIMHASH_CLUSTERS_KEYS)

typedef enum SimhashClustersPhase
{
	SIMHASH_CLUSTERS_READING,
	SIMHASH_CLUSTERS_SORTING,
	SIMHASH_CLUSTERS_JOINING,
	SIMHASH_CLUSTERS_WRITING
} SimhashClustersPhase;

typedef struct SimhashClusters
{
	MemoryContext cxt;			/* every array below */
	int			k;				/* normalized radius */
	Size		limit;			/* maintenance_work_mem in bytes */

	/* the rows, in id order once sorted, and the union-find over them */
	SimhashClusterRow *rows;
	uint32		nrows;
	uint32		maxrows;
	uint32	   *parent;
	uint32	   *size;
	uint32		nclusters;

	/* the plan: bands and their radii, or all rows in one bucket */
	SimhashProbePlan plan;
	bool		whole;
	uint32		maxbucket;

	/* the band being joined: rows sorted by block, where each key starts */
	uint32	   *start;
	uint32	   *band_row;
	uint64	   *band_fp;
	uint16	   *masks;			/* keys within r_j bits of 0, but 0 */
	int			nmasks;

	/* the groups of the bucket being joined */
	SimhashClusterGroup *groups;
	uint32		ngroups;
	uint32	   *next;			/* by position in the bucket */
	uint32		bucket;			/* band position of its first row */

	/* progress */
	SimhashClustersPhase phase;
	int			band;			/* ordinal of the band being joined, from 1 */
	int			nbands;
	double		done;			/* fraction of the phase done */
	uint64		ncompared;		/* row-to-group comparisons */
	uint32		ticks;
	TimestampTz last_report;
} SimhashClusters;

PG_FUNCTION_INFO_V1(simhash_clusters);


/*
 * Report progress with a NOTICE every SIMHASH_CLUSTERS_REPORT_MS, the first
 * one only after that long (short runs stay quiet), and honour cancel.
 */
static void
SimhashClustersProgress(SimhashClusters *st)
{
	TimestampTz now;
	int			pct = (int) (st->done * 100);

	CHECK_FOR_INTERRUPTS();
	now = GetCurrentTimestamp();
	if (!TimestampDifferenceExceeds(st->last_report, now, SIMHASH_CLUSTERS_REPORT_MS))
		return;
	st->last_report = now;
	switch (st->phase)
	{
		case SIMHASH_CLUSTERS_READING:
			ereport(NOTICE, (errmsg("simhash_clusters: %u rows read", st->nrows)));
			break;
		case SIMHASH_CLUSTERS_SORTING:
			ereport(NOTICE, (errmsg("simhash_clusters: sorting %u rows by id", st->nrows)));
			break;
		case SIMHASH_CLUSTERS_JOINING:
			ereport(NOTICE,
					(errmsg("simhash_clusters: band %d of %d, %d%% done, %llu comparisons, %u clusters so far",
							st->band, st->nbands, pct,
							(unsigned long long) st->ncompared, st->nclusters)));
			break;
		case SIMHASH_CLUSTERS_WRITING:
			ereport(NOTICE, (errmsg("simhash_clusters: writing %u rows, %d%% done",
									st->nrows, pct)));
			break;
	}
}

/* Count a unit of work; check for interrupts, and now and then report. */
static inline void
SimhashClustersTick(SimhashClusters *st)
{
	CHECK_FOR_INTERRUPTS();
	if ((++st->ticks & 1023) == 0)
		SimhashClustersProgress(st);
}

/* Memory needed for n rows whose largest bucket holds maxbucket rows. */
static Size
SimhashClustersBytes(Size n, Size maxbucket)
{
	return SIMHASH_CLUSTERS_FIXED_BYTES + n * SIMHASH_CLUSTERS_ROW_BYTES +
		maxbucket * SIMHASH_CLUSTERS_GROUP_BYTES;
}

/* Refuse to go on: n rows (more than n when "more") need "bytes". */
static void
SimhashClustersRefuse(Size n, Size bytes, bool more)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("simhash_clusters needs more memory than \"maintenance_work_mem\" allows"),
			 more ?
			 errdetail("The query returned more than %zu rows, which need more than %zu kB; \"maintenance_work_mem\" is %d kB.",
					   n, (bytes + 1023) / 1024, maintenance_work_mem) :
			 errdetail("The query returned %zu rows, which need %zu kB; \"maintenance_work_mem\" is %d kB.",
					   n, (bytes + 1023) / 1024, maintenance_work_mem),
			 errhint("Raise \"maintenance_work_mem\" (clustering takes about %d bytes per row), or cluster fewer rows at a time.",
					 (int) SIMHASH_CLUSTERS_ROW_BYTES)));
}

/*
 * Make room for more rows: double the array, but never beyond the rows
 * that maintenance_work_mem allows, so that too large a result is refused
 * as soon as it is read past that point.
 */
static void
SimhashClustersGrow(SimhashClusters *st)
{
	Size		fit = 0;
	Size		newmax;

	if (st->limit > SIMHASH_CLUSTERS_FIXED_BYTES)
		fit = (st->limit - SIMHASH_CLUSTERS_FIXED_BYTES) / SIMHASH_CLUSTERS_ROW_BYTES;
	if (st->nrows >= SIMHASH_CLUSTERS_MAX_ROWS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("simhash_clusters cannot cluster more than %u rows",
						SIMHASH_CLUSTERS_MAX_ROWS)));
	if (st->nrows >= fit)
		SimhashClustersRefuse(st->nrows, SimhashClustersBytes(st->nrows, 0), true);
	newmax = Min(Max((Size) st->maxrows * 2, 1024), Min(fit, SIMHASH_CLUSTERS_MAX_ROWS));
	if (st->rows == NULL)
		st->rows = MemoryContextAllocHuge(st->cxt, sizeof(SimhashClusterRow) * newmax);
	else
		st->rows = repalloc_huge(st->rows, sizeof(SimhashClusterRow) * newmax);
	st->maxrows = (uint32) newmax;
}

/*
 * Refuse queries that modify data or lock rows: the query runs read-only,
 * in the caller's snapshot.
 */
static void
SimhashClustersCheckQuery(SPIPlanPtr plan)
{
	ListCell   *lc;

	foreach(lc, SPI_plan_get_plan_sources(plan))
	{
		CachedPlanSource *ps = (CachedPlanSource *) lfirst(lc);
		ListCell   *lq;

		if (ps->commandTag != CMDTAG_SELECT)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("simhash_clusters query must be a read-only SELECT"),
					 errdetail("Its command is %s.", GetCommandTagName(ps->commandTag))));
		foreach(lq, ps->query_list)
		{
			Query	   *q = lfirst_node(Query, lq);

			if (q->commandType != CMD_SELECT || q->hasModifyingCTE || q->rowMarks != NIL)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("simhash_clusters query must be a read-only SELECT"),
						 errdetail("It modifies data or locks rows.")));
		}
	}
}

/*
 * Check that the query returns (integer id, simhash64 fingerprint); returns
 * the id's (base) type.
 */
static Oid
SimhashClustersCheckColumns(TupleDesc desc, Oid fptype)
{
	const char *hint = "Write the query as SELECT id, fp FROM ..., with an id of type smallint, integer or bigint and a fingerprint of type simhash64.";
	Oid			idtype;

	if (desc->natts != 2)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("simhash_clusters query must return two columns, an integer id and a simhash64 fingerprint"),
				 errdetail_plural("It returns %d column.", "It returns %d columns.",
								  desc->natts, desc->natts),
				 errhint("%s", hint)));
	idtype = getBaseType(TupleDescAttr(desc, 0)->atttypid);
	if (idtype != INT2OID && idtype != INT4OID && idtype != INT8OID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("simhash_clusters query must return an integer id in its first column"),
				 errdetail("Its first column is of type %s.",
						   format_type_be(TupleDescAttr(desc, 0)->atttypid)),
				 errhint("%s", hint)));
	if (getBaseType(TupleDescAttr(desc, 1)->atttypid) != fptype)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("simhash_clusters query must return a simhash64 fingerprint in its second column"),
				 errdetail("Its second column is of type %s.",
						   format_type_be(TupleDescAttr(desc, 1)->atttypid)),
				 errhint("%s", hint)));
	return idtype;
}

/*
 * Run the query through a cursor, SIMHASH_CLUSTERS_FETCH rows at a time,
 * keeping the (id, fp) of each row whose fingerprint is not NULL.
 */
static void
SimhashClustersRead(SimhashClusters *st, const char *sql, Oid fptype)
{
	SPIPlanPtr	plan;
	Portal		portal;
	Oid			idtype;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	plan = SPI_prepare(sql, 0, NULL);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	SimhashClustersCheckQuery(plan);
	portal = SPI_cursor_open(NULL, plan, NULL, NULL, true);
	idtype = SimhashClustersCheckColumns(portal->tupDesc, fptype);

	for (;;)
	{
		SPI_cursor_fetch(portal, true, SIMHASH_CLUSTERS_FETCH);
		if (SPI_processed == 0)
			break;
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			HeapTuple	tuple = SPI_tuptable->vals[i];
			TupleDesc	desc = SPI_tuptable->tupdesc;
			bool		isnull;
			Datum		fp = SPI_getbinval(tuple, desc, 2, &isnull);
			Datum		id;

			/* a NULL fingerprint is near nothing: the row is left out */
			if (isnull)
				continue;
			id = SPI_getbinval(tuple, desc, 1, &isnull);
			if (isnull)
				ereport(ERROR,
						(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
						 errmsg("simhash_clusters query returned a NULL id"),
						 errdetail("Rows are named by their id in the result."),
						 errhint("Return a key that is never NULL, such as the primary key, or filter with WHERE id IS NOT NULL.")));
			if (st->nrows == st->maxrows)
				SimhashClustersGrow(st);
			st->rows[st->nrows].id = SimhashIntegerDatum(id, idtype);
			st->rows[st->nrows].fp = DatumGetSimhash64(fp);
			st->nrows++;
		}
		SPI_freetuptable(SPI_tuptable);
		SimhashClustersProgress(st);
	}
	SPI_cursor_close(portal);
	SPI_finish();
}

/*
 * Sort the rows by id: a least significant digit radix sort, a byte per
 * pass, skipping bytes that all ids share; then refuse duplicate ids.
 * Uses 16 bytes per row of scratch, before the union-find and band arrays
 * exist, so within SIMHASH_CLUSTERS_ROW_BYTES.
 */
static void
SimhashClustersSortIds(SimhashClusters *st)
{
	uint32		n = st->nrows;
	SimhashClusterRow *src = st->rows;
	SimhashClusterRow *dst;
	uint32	   *count;
	bool		sorted = true;

	for (uint32 i = 1; i < n && sorted; i++)
		sorted = src[i - 1].id <= src[i].id;
	if (!sorted)
	{
		st->phase = SIMHASH_CLUSTERS_SORTING;
		count = palloc0(sizeof(uint32) * 8 * 256);
		for (uint32 i = 0; i < n; i++)
		{
			uint64		key = (uint64) src[i].id ^ (UINT64CONST(1) << 63);

			for (int b = 0; b < 8; b++)
				count[b * 256 + ((key >> (8 * b)) & 0xFF)]++;
		}
		dst = MemoryContextAllocHuge(st->cxt, sizeof(SimhashClusterRow) * n);
		for (int b = 0; b < 8; b++)
		{
			uint32	   *offset = count + b * 256;
			uint32		sum = 0;
			SimhashClusterRow *swap;

			/* ids sorted as unsigned after flipping the sign bit */
			if (offset[(((uint64) src[0].id ^ (UINT64CONST(1) << 63)) >> (8 * b)) & 0xFF] == n)
				continue;
			for (int v = 0; v < 256; v++)
			{
				uint32		c = offset[v];

				offset[v] = sum;
				sum += c;
			}
			for (uint32 i = 0; i < n; i++)
			{
				uint64		key = (uint64) src[i].id ^ (UINT64CONST(1) << 63);

				if (i % SIMHASH_CLUSTERS_CHUNK == 0)
					SimhashClustersProgress(st);
				dst[offset[(key >> (8 * b)) & 0xFF]++] = src[i];
			}
			swap = src;
			src = dst;
			dst = swap;
		}
		pfree(dst);
		pfree(count);
		st->rows = src;
	}
	for (uint32 i = 1; i < n; i++)
		if (st->rows[i - 1].id == st->rows[i].id)
			ereport(ERROR,
					(errcode(ERRCODE_CARDINALITY_VIOLATION),
					 errmsg("simhash_clusters query returned id " INT64_FORMAT " more than once",
							st->rows[i].id),
					 errdetail("Each row needs an id of its own: the result names rows and clusters by id."),
					 errhint("Return a unique key, such as the primary key.")));
}

/* Number of 16-bit keys within r bits of a key. */
static double
SimhashClustersBall(int r)
{
	double		n = 0;

	for (int i = 0; i <= r; i++)
		n += SimhashRingSize(i);
	return n;
}

/*
 * Choose the bands and their radii, or one bucket for all rows when that
 * compares fewer pairs, and find the largest bucket (which sizes the
 * group arrays).
 */
static void
SimhashClustersPlan(SimhashClusters *st)
{
	double		n = st->nrows;
	double		probe = 0;

	st->whole = false;
	st->maxbucket = 0;
	st->nbands = 0;
	if (st->k < 0 || st->k >= SIMHASH_BITS || st->nrows < 2)
		return;

	/*
	 * A probe here is a directory lookup, not an index descent, so plan as
	 * for a huge index: radii that probe the fewest keys.  Then compare the
	 * pairs the bands would examine, plus their per-key work, with all
	 * pairs.
	 */
	SimhashPlanProbes(st->k, (double) SIMHASH_CLUSTERS_KEYS * SIMHASH_CLUSTERS_KEYS,
					  &st->plan);
	for (int j = 0; j < SIMHASH_NBANDS && !st->plan.fullscan; j++)
	{
		double		ball = SimhashClustersBall(st->plan.radius[j]);

		if (st->plan.radius[j] < 0)
			continue;
		probe += SIMHASH_CLUSTERS_KEYS + n + Min(n, SIMHASH_CLUSTERS_KEYS) * (ball - 1) / 2 +
			n * n / SIMHASH_CLUSTERS_KEYS * ball / 2;
	}
	if (st->plan.fullscan || n * n / 2 <= probe)
	{
		st->whole = true;
		st->nbands = 1;
		st->maxbucket = st->nrows;
		return;
	}

	for (int j = 0; j < SIMHASH_NBANDS; j++)
	{
		if (st->plan.radius[j] < 0)
			continue;
		st->nbands++;
		memset(st->start, 0, sizeof(uint32) * (SIMHASH_CLUSTERS_KEYS + 1));
		for (uint32 i = 0; i < st->nrows; i++)
		{
			if (i % SIMHASH_CLUSTERS_CHUNK == 0)
				CHECK_FOR_INTERRUPTS();
			st->start[SimhashBlock(st->rows[i].fp, j)]++;
		}
		for (int key = 0; key < SIMHASH_CLUSTERS_KEYS; key++)
			st->maxbucket = Max(st->maxbucket, st->start[key]);
	}
}

/* Root of row x's component (path halving). */
static inline uint32
SimhashClustersFind(SimhashClusters *st, uint32 x)
{
	uint32	   *parent = st->parent;

	while (parent[x] != x)
	{
		parent[x] = parent[parent[x]];
		x = parent[x];
	}
	return x;
}

/* Connect the components of rows a and b (union by size). */
static inline void
SimhashClustersUnion(SimhashClusters *st, uint32 a, uint32 b)
{
	a = SimhashClustersFind(st, a);
	b = SimhashClustersFind(st, b);
	if (a == b)
		return;
	if (st->size[a] < st->size[b])
	{
		uint32		t = a;

		a = b;
		b = t;
	}
	st->parent[b] = a;
	st->size[a] += st->size[b];
	st->nclusters--;
}

/*
 * Sort the rows by the block of band j (a counting sort) into band_row and
 * band_fp; start[key] .. start[key + 1] are then the positions of key.
 */
static void
SimhashClustersSortBand(SimhashClusters *st, int j)
{
	uint32	   *start = st->start;
	uint32		sum = 0;

	memset(start, 0, sizeof(uint32) * (SIMHASH_CLUSTERS_KEYS + 1));
	for (uint32 i = 0; i < st->nrows; i++)
		start[SimhashBlock(st->rows[i].fp, j)]++;
	for (int key = 0; key < SIMHASH_CLUSTERS_KEYS; key++)
	{
		uint32		c = start[key];

		start[key] = sum;
		sum += c;
	}
	for (uint32 i = 0; i < st->nrows; i++)
	{
		uint64		fp = st->rows[i].fp;
		uint32		pos = start[SimhashBlock(fp, j)]++;

		if (i % SIMHASH_CLUSTERS_CHUNK == 0)
			CHECK_FOR_INTERRUPTS();
		st->band_row[pos] = i;
		st->band_fp[pos] = fp;
	}
	/* each start[key] is now where key ends: shift to where it starts */
	memmove(start + 1, start, sizeof(uint32) * SIMHASH_CLUSTERS_KEYS);
	start[0] = 0;
}

/* The probe masks of radius r: every nonzero key within r bits of 0. */
static void
SimhashClustersMasks(SimhashClusters *st, int r)
{
	st->nmasks = 0;
	for (int bits = 1; bits <= r; bits++)
		st->nmasks += SimhashEnumerateRing(0, bits, st->masks + st->nmasks);
}

/* Is some member of a group, but its head, within k of fp? */
static bool
SimhashClustersNearMember(SimhashClusters *st, const SimhashClusterGroup *g, uint64 fp)
{
	uint32		steps = 0;

	for (uint32 pos = st->next[g->head - st->bucket]; pos != SIMHASH_NO_POS;
		 pos = st->next[pos - st->bucket])
	{
		if (++steps % SIMHASH_CLUSTERS_CHUNK == 0)
			CHECK_FOR_INTERRUPTS();
		if (SimhashDistance(fp, st->band_fp[pos]) <= st->k)
			return true;
	}
	return false;
}

/* Merge group "from" into group "into" (from > into); "from" is removed. */
static void
SimhashClustersMergeGroups(SimhashClusters *st, uint32 into, uint32 from)
{
	SimhashClusterGroup *a = &st->groups[into];
	SimhashClusterGroup *b = &st->groups[from];
	int			d = SimhashDistance(st->band_fp[a->head], st->band_fp[b->head]);

	st->next[a->tail - st->bucket] = b->head;
	a->tail = b->tail;
	/* b's members are within d + b's reach of a's reference */
	a->reach = Min(SIMHASH_BITS, Max(a->reach, d + b->reach));
	*b = st->groups[--st->ngroups];
}

/*
 * Connect the row at band position pos to every group of the current
 * bucket that holds a row within k of it, merging those groups.  Returns
 * the first such group, or -1.
 */
static int64
SimhashClustersMatch(SimhashClusters *st, uint32 pos)
{
	uint64		fp = st->band_fp[pos];
	uint32		row = st->band_row[pos];
	int64		found = -1;

	st->ncompared += st->ngroups;
	for (uint32 g = 0; g < st->ngroups; g++)
	{
		SimhashClusterGroup *grp = &st->groups[g];
		int			d = SimhashDistance(fp, st->band_fp[grp->head]);

		/* no member can be within k: they are within reach of the head */
		if (d - grp->reach > st->k)
			continue;
		if (d > st->k &&
			SimhashClustersFind(st, row) != SimhashClustersFind(st, grp->root) &&
			!SimhashClustersNearMember(st, grp, fp))
			continue;
		SimhashClustersUnion(st, row, grp->root);
		if (found < 0)
			found = g;
		else
			SimhashClustersMergeGroups(st, (uint32) found, g--);
	}
	return found;
}

/*
 * Join the rows of one bucket (band positions s .. e) with each other,
 * gathering them into groups.
 */
static void
SimhashClustersGroupBucket(SimhashClusters *st, uint32 s, uint32 e)
{
	st->ngroups = 0;
	st->bucket = s;
	for (uint32 pos = s; pos < e; pos++)
	{
		int64		g = SimhashClustersMatch(st, pos);

		st->next[pos - s] = SIMHASH_NO_POS;
		if (g >= 0)
		{
			SimhashClusterGroup *grp = &st->groups[g];
			int			d = SimhashDistance(st->band_fp[pos], st->band_fp[grp->head]);

			st->next[grp->tail - s] = pos;
			grp->tail = pos;
			grp->reach = Max(grp->reach, d);
		}
		else
		{
			SimhashClusterGroup *grp = &st->groups[st->ngroups++];

			grp->head = grp->tail = pos;
			grp->root = st->band_row[pos];
			grp->reach = 0;
		}
		if (st->whole)
			st->done = (double) pos / st->nrows;
		SimhashClustersTick(st);
	}
}

/*
 * Join every pair of rows within k: band by band, bucket by bucket, or all
 * rows as one bucket.
 */
static void
SimhashClustersJoin(SimhashClusters *st)
{
	st->phase = SIMHASH_CLUSTERS_JOINING;
	if (st->k >= SIMHASH_BITS)
	{
		/* every row is within 64 bits of every other */
		for (uint32 i = 1; i < st->nrows; i++)
			SimhashClustersUnion(st, 0, i);
		return;
	}
	if (st->whole)
	{
		st->band = 1;
		for (uint32 i = 0; i < st->nrows; i++)
		{
			st->band_row[i] = i;
			st->band_fp[i] = st->rows[i].fp;
		}
		SimhashClustersGroupBucket(st, 0, st->nrows);
		return;
	}
	st->band = 0;
	for (int j = 0; j < SIMHASH_NBANDS && st->nbands > 0; j++)
	{
		uint32	   *start = st->start;

		if (st->plan.radius[j] < 0)
			continue;
		st->band++;
		SimhashClustersSortBand(st, j);
		SimhashClustersMasks(st, st->plan.radius[j]);
		for (int key = 0; key < SIMHASH_CLUSTERS_KEYS; key++)
		{
			if (start[key] == start[key + 1])
				continue;
			st->done = (double) key / SIMHASH_CLUSTERS_KEYS;
			SimhashClustersGroupBucket(st, start[key], start[key + 1]);
			/* the buckets of greater keys within r_j bits */
			for (int m = 0; m < st->nmasks; m++)
			{
				int			other = key ^ st->masks[m];

				if (other < key)
					continue;
				for (uint32 pos = start[other]; pos < start[other + 1]; pos++)
				{
					SimhashClustersMatch(st, pos);
					SimhashClustersTick(st);
				}
			}
		}
	}
}

/*
 * Write the result: each row's id, its cluster's smallest id and size,
 * ordered by cluster and id.  The rows are in id order, so a cluster's
 * first row in that order is its representative, and clusters come in the
 * order of their first rows; a counting sort by cluster (in the band
 * arrays, free now) keeps the id order inside each.
 */
static void
SimhashClustersEmit(SimhashClusters *st, ReturnSetInfo *rsinfo)
{
	uint32	   *offset = st->band_row;	/* by root: where its rows go */
	uint32	   *order = (uint32 *) st->band_fp; /* rows by (cluster, id) */
	uint32		next = 0;
	int64		cluster = 0;

	st->phase = SIMHASH_CLUSTERS_WRITING;
	memset(offset, 0xFF, sizeof(uint32) * st->nrows);
	for (uint32 i = 0; i < st->nrows; i++)
	{
		uint32		r = SimhashClustersFind(st, i);

		if (i % SIMHASH_CLUSTERS_CHUNK == 0)
			CHECK_FOR_INTERRUPTS();
		st->parent[i] = r;
		if (offset[r] == SIMHASH_NO_POS)
		{
			offset[r] = next;
			next += st->size[r];
		}
		order[offset[r]++] = i;
	}
	for (uint32 p = 0; p < st->nrows; p++)
	{
		uint32		i = order[p];
		uint32		r = st->parent[i];
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		if (p == 0 || r != st->parent[order[p - 1]])
			cluster = st->rows[i].id;
		values[0] = Int64GetDatum(st->rows[i].id);
		values[1] = Int64GetDatum(cluster);
		values[2] = Int64GetDatum((int64) st->size[r]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		if (p % SIMHASH_CLUSTERS_CHUNK == 0)
		{
			st->done = (double) p / st->nrows;
			SimhashClustersProgress(st);
		}
	}
}

/* The OID of type simhash64: in the schema of this function. */
static Oid
SimhashClustersFpType(FunctionCallInfo fcinfo)
{
	Oid			nsp = get_func_namespace(fcinfo->flinfo->fn_oid);
	Oid			type = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
									   CStringGetDatum("simhash64"),
									   ObjectIdGetDatum(nsp));

	if (!OidIsValid(type))
		elog(ERROR, "type simhash64 not found next to function simhash_clusters");
	return type;
}

/*
 * Check the memory bound for the rows read, sort them by id and allocate
 * the union-find, band and group arrays.
 */
static void
SimhashClustersPrepare(SimhashClusters *st)
{
	Size		n = Max(st->nrows, 1);
	Size		bytes;

	/* give back the unused end of the row array before counting */
	if (st->rows != NULL && st->maxrows > n)
	{
		st->rows = repalloc_huge(st->rows, sizeof(SimhashClusterRow) * n);
		st->maxrows = n;
	}
	st->start = MemoryContextAlloc(st->cxt, sizeof(uint32) * (SIMHASH_CLUSTERS_KEYS + 1));
	st->masks = MemoryContextAlloc(st->cxt, sizeof(uint16) * SIMHASH_CLUSTERS_KEYS);
	SimhashClustersPlan(st);
	bytes = SimhashClustersBytes(st->nrows, st->maxbucket);
	if (bytes > st->limit)
		SimhashClustersRefuse(st->nrows, bytes, false);

	SimhashClustersSortIds(st);
	st->parent = MemoryContextAllocHuge(st->cxt, sizeof(uint32) * n);
	st->size = MemoryContextAllocHuge(st->cxt, sizeof(uint32) * n);
	st->band_row = MemoryContextAllocHuge(st->cxt, sizeof(uint32) * n);
	st->band_fp = MemoryContextAllocHuge(st->cxt, sizeof(uint64) * n);
	st->groups = MemoryContextAllocHuge(st->cxt,
										sizeof(SimhashClusterGroup) * Max(st->maxbucket, 1));
	st->next = MemoryContextAllocHuge(st->cxt, sizeof(uint32) * Max(st->maxbucket, 1));
	for (uint32 i = 0; i < st->nrows; i++)
	{
		st->parent[i] = i;
		st->size[i] = 1;
	}
	st->nclusters = st->nrows;
}

/*
 * simhash_clusters(query text, k int4) RETURNS TABLE (id, cluster, size):
 * every row of the query whose fingerprint is not NULL, with the smallest
 * id of its cluster and the cluster's number of rows, ordered by cluster
 * and id.
 */
Datum
simhash_clusters(PG_FUNCTION_ARGS)
{
	char	   *sql = text_to_cstring(PG_GETARG_TEXT_PP(0));
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	SimhashClusters st;

	InitMaterializedSRF(fcinfo, 0);
	memset(&st, 0, sizeof(st));
	st.k = SimhashNormalizeRadius(PG_GETARG_INT32(1));
	st.limit = (Size) maintenance_work_mem * 1024;
	st.cxt = AllocSetContextCreate(CurrentMemoryContext, "simhash_clusters",
								   ALLOCSET_DEFAULT_SIZES);
	st.phase = SIMHASH_CLUSTERS_READING;
	st.last_report = GetCurrentTimestamp();

	SimhashClustersRead(&st, sql, SimhashClustersFpType(fcinfo));
	SimhashClustersPrepare(&st);
	SimhashClustersJoin(&st);
	SimhashClustersEmit(&st, rsinfo);
	MemoryContextDelete(st.cxt);
	return (Datum) 0;
}
