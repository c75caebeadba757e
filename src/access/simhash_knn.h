/*-------------------------------------------------------------------------
 *
 * simhash_knn.h
 *	  The nearest-sort protocol: how the executor talks to a KNN scan.
 *
 * The nearest sort node (src/executor/nearestsort.c) runs over a simhash
 * nearest-neighbour index scan ("ORDER BY fp <-> q").  Beyond what the
 * index AM API carries, it tells the scan two things and asks it one:
 *
 * - through private bits of the ORDER BY scan key's sk_flags, set before
 *   amrescan (the bits skey.h leaves to access methods, above 0xFFFF):
 *   whether to return the rows of each distance in the order of the
 *   index's included column (SIMHASH_SK_PAYLOAD_*), and a 12-bit hint of
 *   how many rows the query will take (its LIMIT, SIMHASH_SK_WANTED_*);
 * - SimhashKnnReturnedWithin(): has the scan returned every row at this
 *   distance, so that the node can sort a group without reading the row
 *   after it?
 *
 * The planner (src/planner/knnpath.c) chooses the payload order, the
 * executor adds the hint; shscan.c and shknn.c read them.  See src/README,
 * "Nearest neighbours with a tie-break".
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/access/simhash_knn.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SIMHASH_KNN_H
#define SIMHASH_KNN_H

#include "access/relscan.h"

/*
 * Flags of the ORDER BY scan key, in the bits skey.h leaves to access
 * methods: the nearest sort node (nearestsort.c) sets them to have each
 * distance returned in the order of the index's included column, by the
 * default btree order of its type (src/README, "Included columns").
 */
#define SIMHASH_SK_PAYLOAD_ORDER		0x00010000
#define SIMHASH_SK_PAYLOAD_DESC			0x00020000
#define SIMHASH_SK_PAYLOAD_NULLS_FIRST	0x00040000
/*
 * And, in the 12 bits above them, how many rows the caller expects to take
 * (a hint, 0 if unknown or more than SIMHASH_SK_WANTED_MAX): the distance
 * that completes them is settled by the lean one-distance read.
 */
#define SIMHASH_SK_WANTED_SHIFT			19
#define SIMHASH_SK_WANTED_MAX			4095

/*
 * Rows a nearest-neighbour scan keeps at least before it drops farther
 * entries as it reads them (more if the caller's hint says so); a caller
 * that takes more makes the scan search again for a larger number.
 */
#define SIMHASH_KNN_KEEP_ROWS			256

/* shknn.c: has the scan returned every row at distance "dist"? */
extern bool SimhashKnnReturnedWithin(IndexScanDesc scan, int dist, bool last);

#endif							/* SIMHASH_KNN_H */
