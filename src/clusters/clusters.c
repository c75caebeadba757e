/*-------------------------------------------------------------------------
 *
 * clusters.c
 *	  simhash_clusters(query, k): the near-duplicate clusters of the rows a
 *	  query returns, i.e. the connected components of "within k bits".
 *
 * Reading the query's rows, sorting them by id, the memory bound, the
 * arguments, progress and the result; clusterjoin.c joins them.  See
 * src/README, "Clusters".
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/clusters/clusters.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/plancache.h"
#include "utils/syscache.h"

#include "clusters.h"
#include "simhash_planner.h"

PG_FUNCTION_INFO_V1(simhash_clusters);


/* Memory needed for n rows whose largest bucket holds maxbucket rows. */
static Size
SimhashClustersBytes(Size n, Size maxbucket)
{
	return SIMHASH_CLUSTERS_FIXED_BYTES + n * SIMHASH_CLUSTERS_ROW_BYTES +
		maxbucket * SIMHASH_CLUSTERS_GROUP_BYTES;
}

/*
 * Refuse to go on: n rows need "bytes" ("partial": the query has returned
 * n rows so far and is stopped there).
 */
static void
SimhashClustersRefuse(Size n, Size bytes, bool partial)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("simhash_clusters needs more memory than \"maintenance_work_mem\" allows"),
			 partial ?
			 errdetail("The query returned at least %zu rows, which need %zu kB at about %d bytes per row; \"maintenance_work_mem\" is %d kB.",
					   n, (bytes + 1023) / 1024, (int) SIMHASH_CLUSTERS_ROW_BYTES,
					   maintenance_work_mem) :
			 errdetail("The query returned %zu rows, which need %zu kB at about %d bytes per row; \"maintenance_work_mem\" is %d kB.",
					   n, (bytes + 1023) / 1024, (int) SIMHASH_CLUSTERS_ROW_BYTES,
					   maintenance_work_mem),
			 errhint("Raise \"maintenance_work_mem\", or cluster fewer rows at a time.")));
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
		SimhashClustersRefuse(st->nrows + 1, SimhashClustersBytes(st->nrows + 1, 0), true);
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
	List	   *sources = SPI_plan_get_plan_sources(plan);
	ListCell   *lc;

	if (list_length(sources) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("simhash_clusters query must be a single statement"),
				 errdetail_plural("It has %d statement.", "It has %d statements.",
								  list_length(sources), list_length(sources))));
	foreach(lc, sources)
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
	Oid			idtype;

	if (desc->natts != 2)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("simhash_clusters query must return two columns, an integer id and a simhash64 fingerprint"),
				 errdetail_plural("It returns %d column.", "It returns %d columns.",
								  desc->natts, desc->natts),
				 errhint("Write the query as SELECT id, fp FROM ..., with an integer id.")));
	idtype = getBaseType(TupleDescAttr(desc, 0)->atttypid);
	if (idtype != INT2OID && idtype != INT4OID && idtype != INT8OID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("simhash_clusters query must return an integer id in its first column"),
				 errdetail("Its first column is of type %s.",
						   format_type_be(TupleDescAttr(desc, 0)->atttypid)),
				 errhint("Write the query as SELECT id, fp FROM ..., with an integer id.")));
	if (getBaseType(TupleDescAttr(desc, 1)->atttypid) != fptype)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("simhash_clusters query must return a simhash64 fingerprint in its second column"),
				 errdetail("Its second column is of type %s.",
						   format_type_be(TupleDescAttr(desc, 1)->atttypid)),
				 errhint("Write the query as SELECT id, fp FROM ..., with an integer id.")));
	return idtype;
}

/* Receives the query's rows one by one, as the executor produces them. */
typedef struct SimhashClustersReceiver
{
	DestReceiver pub;
	SimhashClusters *st;
	Oid			fptype;			/* simhash64 */
	Oid			idtype;			/* the id's (base) type */
} SimhashClustersReceiver;

/* rStartup: check the query's columns before its first row. */
static void
SimhashClustersStartup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
	SimhashClustersReceiver *r = (SimhashClustersReceiver *) self;

	r->idtype = SimhashClustersCheckColumns(typeinfo, r->fptype);
}

/* receiveSlot: keep the (id, fp) of a row whose fingerprint is not NULL. */
static bool
SimhashClustersReceive(TupleTableSlot *slot, DestReceiver *self)
{
	SimhashClustersReceiver *r = (SimhashClustersReceiver *) self;
	SimhashClusters *st = r->st;
	bool		isnull;
	Datum		fp = slot_getattr(slot, 2, &isnull);
	Datum		id;

	/* a NULL fingerprint is near nothing: the row is left out */
	if (isnull)
		return true;
	id = slot_getattr(slot, 1, &isnull);
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("simhash_clusters query returned a NULL id"),
				 errdetail("Rows are named by their id in the result."),
				 errhint("Return a key that is never NULL, such as the primary key.")));
	if (st->nrows == st->maxrows)
		SimhashClustersGrow(st);
	st->rows[st->nrows].id = SimhashIntegerDatum(id, r->idtype);
	st->rows[st->nrows].fp = DatumGetSimhash64(fp);
	st->nrows++;
	if (st->nrows % SIMHASH_CLUSTERS_CHUNK == 0)
		SimhashClustersProgress(st);
	return true;
}

/* rShutdown, rDestroy: nothing to release */
static void
SimhashClustersReceiverNoop(DestReceiver *self)
{
}

/*
 * Run the query, read-only, in the caller's snapshot and with the caller's
 * rights, handing its rows straight to SimhashClustersReceive: SPI keeps
 * none of them.
 */
static void
SimhashClustersRead(SimhashClusters *st, const char *sql, Oid fptype)
{
	SPIPlanPtr	plan;
	SPIExecuteOptions options;
	SimhashClustersReceiver receiver;
	int			ret;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	plan = SPI_prepare(sql, 0, NULL);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	SimhashClustersCheckQuery(plan);

	memset(&receiver, 0, sizeof(receiver));
	receiver.pub.receiveSlot = SimhashClustersReceive;
	receiver.pub.rStartup = SimhashClustersStartup;
	receiver.pub.rShutdown = SimhashClustersReceiverNoop;
	receiver.pub.rDestroy = SimhashClustersReceiverNoop;
	receiver.pub.mydest = DestNone;
	receiver.st = st;
	receiver.fptype = fptype;
	memset(&options, 0, sizeof(options));
	options.read_only = true;
	options.must_return_tuples = true;
	options.dest = &receiver.pub;
	ret = SPI_execute_plan_extended(plan, &options);
	if (ret < 0)
		elog(ERROR, "SPI_execute_plan_extended failed: %s", SPI_result_code_string(ret));
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
			SimhashClusterRow *swap;

			/* ids sorted as unsigned after flipping the sign bit */
			if (offset[(((uint64) src[0].id ^ (UINT64CONST(1) << 63)) >> (8 * b)) & 0xFF] == n)
				continue;
			(void) SimhashCountsToStarts(offset, 256);
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

	st->phase = SIMHASH_CLUSTERS_SORTING;
	/* give back the unused end of the row array before counting */
	if (st->rows != NULL && st->maxrows > n)
	{
		st->rows = repalloc_huge(st->rows, sizeof(SimhashClusterRow) * n);
		st->maxrows = n;
	}
	st->start = MemoryContextAlloc(st->cxt, sizeof(uint32) * (SIMHASH_BLOCK_KEYS + 1));
	st->masks = MemoryContextAlloc(st->cxt, sizeof(uint16) * SIMHASH_BLOCK_KEYS);
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
 * Reject a NULL query or k, and k outside 0 .. 64: not STRICT, because a
 * clustering that silently returns nothing, or every row alone, would pass
 * for a result (a NULL k from a missing setting, a negative one from
 * arithmetic gone wrong).
 */
static void
SimhashClustersCheckArgs(FunctionCallInfo fcinfo)
{
	int32		k;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("simhash_clusters %s must not be NULL",
						PG_ARGISNULL(0) ? "query" : "k"),
				 errhint("Pass the query as text, such as 'SELECT id, fp FROM docs', and k from 0 to 64.")));
	k = PG_GETARG_INT32(1);
	if (k < 0 || k > SIMHASH_BITS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("simhash_clusters k must be between 0 and %d", SIMHASH_BITS),
				 errdetail("k is %d.", k),
				 errhint("k is the most bits in which two rows of one cluster may differ.")));
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
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *sql;
	SimhashClusters st;

	SimhashClustersCheckArgs(fcinfo);
	sql = text_to_cstring(PG_GETARG_TEXT_PP(0));
	InitMaterializedSRF(fcinfo, 0);
	memset(&st, 0, sizeof(st));
	st.k = PG_GETARG_INT32(1);
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