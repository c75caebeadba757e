/*-------------------------------------------------------------------------
 *
 * clusters.h
 *	  simhash_clusters: what reading and writing the rows (clusters.c) and
 *	  joining them (clusterjoin.c) share.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/clusters/clusters.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SIMHASH_CLUSTERS_H
#define SIMHASH_CLUSTERS_H

#include "miscadmin.h"
#include "utils/timestamp.h"

#include "simhash_am.h"

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
#define SIMHASH_CLUSTERS_FIXED_BYTES	(sizeof(uint32) * (SIMHASH_BLOCK_KEYS + 1) + \
										 sizeof(uint16) * SIMHASH_BLOCK_KEYS)

typedef enum SimhashClustersPhase
{
	SIMHASH_CLUSTERS_READING,
	SIMHASH_CLUSTERS_SORTING,
	SIMHASH_CLUSTERS_JOINING,
	SIMHASH_CLUSTERS_WRITING
} SimhashClustersPhase;

/* the state of one call */
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

/* clusterjoin.c */
extern void SimhashClustersProgress(SimhashClusters *st);
extern void SimhashClustersPlan(SimhashClusters *st);
extern void SimhashClustersJoin(SimhashClusters *st);

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

#endif							/* SIMHASH_CLUSTERS_H */
