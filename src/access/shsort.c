/*-------------------------------------------------------------------------
 *
 * shsort.c
 *	  The simhash build spool.
 *
 * Radix sort in memory, sorted runs on disk merged with a heap.  See
 * src/README, "WAL" (the build).
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/access/shsort.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/buffile.h"

#include "shsort.h"

#define RADIX_BITS		11
#define RADIX_BUCKETS	(1 << RADIX_BITS)
#define RADIX_PASSES	6		/* 66 bits cover the 62-bit keys */

/*
 * Below this many records an insertion sort is cheaper: every radix pass
 * clears and scans all RADIX_BUCKETS counters, which for the handful of
 * entries of a single-row INSERT cost more than the rest of the insertion.
 */
#define SIMHASH_RADIX_MIN_RECORDS	64

/* One sorted run on disk and the record at its head during the merge */
typedef struct SimhashRun
{
	BufFile    *file;
	SimhashSpoolEntry head;
} SimhashRun;

struct SimhashSpool
{
	SimhashSpoolEntry *entries; /* in-memory records */
	SimhashSpoolEntry *scratch; /* radix sort buffer, same size */
	Size		capacity;		/* records that fit in the budget */
	Size		count;			/* records in entries[] */
	Size		next;			/* reading: next record of entries[] */
	SimhashRun *runs;			/* spilled runs */
	int			nruns;
	int			maxruns;
	int		   *heap;			/* merge: run indexes, a min-heap on head */
	int			heapsize;
	bool		sorted;
};

/* Sort a few records by key in place (stable, like the radix sort). */
static void
SimhashInsertionSort(SimhashSpoolEntry *a, Size n)
{
	for (Size i = 1; i < n; i++)
	{
		SimhashSpoolEntry e = a[i];
		Size		j = i;

		while (j > 0 && a[j - 1].key > e.key)
		{
			a[j] = a[j - 1];
			j--;
		}
		a[j] = e;
	}
}

/*
 * Sort n records by key with an LSD radix sort (an insertion sort for a
 * few); "tmp" is scratch space of the same size.  Passes whose digit is
 * the same for every record are skipped, which is common for the high
 * digits.
 */
void
SimhashRadixSort(SimhashSpoolEntry *a, SimhashSpoolEntry *tmp, Size n)
{
	Size	   *count;
	SimhashSpoolEntry *src = a;
	SimhashSpoolEntry *dst = tmp;

	if (n < SIMHASH_RADIX_MIN_RECORDS)
	{
		SimhashInsertionSort(a, n);
		return;
	}
	count = palloc(sizeof(Size) * RADIX_BUCKETS);

	for (int pass = 0; pass < RADIX_PASSES; pass++)
	{
		int			shift = pass * RADIX_BITS;
		Size		sum = 0;
		bool		trivial = false;

		CHECK_FOR_INTERRUPTS();
		memset(count, 0, sizeof(Size) * RADIX_BUCKETS);
		for (Size i = 0; i < n; i++)
			count[(src[i].key >> shift) & (RADIX_BUCKETS - 1)]++;
		for (int b = 0; b < RADIX_BUCKETS; b++)
		{
			Size		c = count[b];

			if (c == n)
				trivial = true;
			count[b] = sum;
			sum += c;
		}
		if (trivial)
			continue;
		for (Size i = 0; i < n; i++)
			dst[count[(src[i].key >> shift) & (RADIX_BUCKETS - 1)]++] = src[i];
		{
			SimhashSpoolEntry *t = src;

			src = dst;
			dst = t;
		}
	}
	if (src != a)
		memcpy(a, src, sizeof(SimhashSpoolEntry) * n);
	pfree(count);
}

/* Start a spool that may use about "budget" bytes of memory. */
SimhashSpool *
SimhashSpoolBegin(Size budget)
{
	SimhashSpool *s = palloc0(sizeof(SimhashSpool));

	s->capacity = Max(budget / (2 * sizeof(SimhashSpoolEntry)), 1024);
	s->entries = MemoryContextAllocHuge(CurrentMemoryContext,
										sizeof(SimhashSpoolEntry) * s->capacity);
	s->scratch = MemoryContextAllocHuge(CurrentMemoryContext,
										sizeof(SimhashSpoolEntry) * s->capacity);
	return s;
}

/* Sort the in-memory records and write them out as a new run. */
static void
SimhashSpoolDump(SimhashSpool *s)
{
	SimhashRun *run;

	SimhashRadixSort(s->entries, s->scratch, s->count);
	if (s->nruns == s->maxruns)
	{
		s->maxruns = Max(16, s->maxruns * 2);
		s->runs = s->runs ? repalloc(s->runs, sizeof(SimhashRun) * s->maxruns)
			: palloc(sizeof(SimhashRun) * s->maxruns);
	}
	run = &s->runs[s->nruns++];
	run->file = BufFileCreateTemp(false);
	BufFileWrite(run->file, s->entries, sizeof(SimhashSpoolEntry) * s->count);
	if (BufFileSeek(run->file, 0, 0, SEEK_SET) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not rewind temporary file of simhash index build: %m")));
	s->count = 0;
}

/* Add one record. */
void
SimhashSpoolAdd(SimhashSpool *s, uint64 key, uint64 rest)
{
	Assert(!s->sorted);
	if (s->count == s->capacity)
		SimhashSpoolDump(s);
	s->entries[s->count].key = key;
	s->entries[s->count].rest = rest;
	s->count++;
}

/* Read the next record of a run into its head; false at the end. */
static bool
SimhashRunAdvance(SimhashRun *run)
{
	size_t		got = BufFileRead(run->file, &run->head, sizeof(SimhashSpoolEntry));

	if (got == 0)
		return false;
	if (got != sizeof(SimhashSpoolEntry))
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read temporary file of simhash index build")));
	return true;
}

/* Restore the heap property downwards from position i. */
static void
SimhashHeapSiftDown(SimhashSpool *s, int i)
{
	for (;;)
	{
		int			l = 2 * i + 1,
					r = l + 1,
					m = i;

		if (l < s->heapsize &&
			s->runs[s->heap[l]].head.key < s->runs[s->heap[m]].head.key)
			m = l;
		if (r < s->heapsize &&
			s->runs[s->heap[r]].head.key < s->runs[s->heap[m]].head.key)
			m = r;
		if (m == i)
			return;
		{
			int			t = s->heap[i];

			s->heap[i] = s->heap[m];
			s->heap[m] = t;
		}
		i = m;
	}
}

/* Finish input: sort what is in memory, or prepare the merge of runs. */
void
SimhashSpoolSort(SimhashSpool *s)
{
	s->sorted = true;
	if (s->nruns == 0)
	{
		SimhashRadixSort(s->entries, s->scratch, s->count);
		s->next = 0;
		return;
	}
	if (s->count > 0)
		SimhashSpoolDump(s);
	pfree(s->scratch);
	s->scratch = NULL;
	s->heap = palloc(sizeof(int) * s->nruns);
	s->heapsize = 0;
	for (int i = 0; i < s->nruns; i++)
		if (SimhashRunAdvance(&s->runs[i]))
			s->heap[s->heapsize++] = i;
	for (int i = s->heapsize / 2 - 1; i >= 0; i--)
		SimhashHeapSiftDown(s, i);
}

/* Next record in key order; false when all have been read. */
bool
SimhashSpoolNext(SimhashSpool *s, SimhashSpoolEntry *out)
{
	Assert(s->sorted);
	if (s->nruns == 0)
	{
		if (s->next >= s->count)
			return false;
		*out = s->entries[s->next++];
		return true;
	}
	if (s->heapsize == 0)
		return false;
	{
		SimhashRun *run = &s->runs[s->heap[0]];

		*out = run->head;
		if (!SimhashRunAdvance(run))
			s->heap[0] = s->heap[--s->heapsize];
		SimhashHeapSiftDown(s, 0);
	}
	return true;
}

/* Number of runs written to disk (0: everything was sorted in memory). */
int
SimhashSpoolNumRuns(SimhashSpool *s)
{
	return s->nruns;
}

/* Release the spool's memory and temporary files. */
void
SimhashSpoolEnd(SimhashSpool *s)
{
	for (int i = 0; i < s->nruns; i++)
		BufFileClose(s->runs[i].file);
	if (s->runs)
		pfree(s->runs);
	if (s->heap)
		pfree(s->heap);
	if (s->scratch)
		pfree(s->scratch);
	pfree(s->entries);
	pfree(s);
}
