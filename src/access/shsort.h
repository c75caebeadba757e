/*-------------------------------------------------------------------------
 *
 * shsort.h
 *	  Sorting simhash index entries within a memory budget.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/access/shsort.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHSORT_H
#define SHSORT_H

/* a record: key = tree << 59 | sort key; rest = the other 48 bits */
typedef struct SimhashSpoolEntry
{
	uint64		key;
	uint64		rest;
} SimhashSpoolEntry;

#define SIMHASH_TREE_SHIFT	59

typedef struct SimhashSpool SimhashSpool;

extern void SimhashRadixSort(SimhashSpoolEntry *a, SimhashSpoolEntry *tmp, Size n);
extern SimhashSpool *SimhashSpoolBegin(Size budget);
extern void SimhashSpoolAdd(SimhashSpool *s, uint64 key, uint64 rest);
extern void SimhashSpoolSort(SimhashSpool *s);
extern bool SimhashSpoolNext(SimhashSpool *s, SimhashSpoolEntry *out);
extern int	SimhashSpoolNumRuns(SimhashSpool *s);
extern void SimhashSpoolEnd(SimhashSpool *s);

#endif							/* SHSORT_H */
