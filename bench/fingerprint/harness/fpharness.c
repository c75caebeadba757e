/*-------------------------------------------------------------------------
 *
 * fpharness.c
 *	  simhash(text)'s tokenizer and fingerprint outside the server, for
 *	  profiling and for comparing builds (bench/fingerprint/harness).
 *
 * Links src/fingerprint/tokenize.c, src/fingerprint/textsource.c and src/fingerprint/fingerprint.c as they are
 * compiled for the extension, with the few server functions they call on
 * the simhash(text) path replaced by the ones below (palloc is malloc,
 * the database encoding is UTF8).  Everything else they reference is left
 * unresolved at link time and never called.  Not part of the extension.
 *
 *	fpharness [-r ROUNDS] [-m MAXBYTES] [-o FPFILE] CORPUS.tsv...
 *
 * Reads bench/fingerprint's COPY-format corpora (path TAB body), computes
 * the fingerprint of every body ROUNDS times and prints the bytes, the CPU
 * time of the best round (CLOCK_PROCESS_CPUTIME_ID, which a busy machine
 * disturbs less than the wall clock) and its MB/s; -o writes one fingerprint per line (the
 * bit-for-bit comparison between builds).  Under callgrind, count only
 * SimhashHarnessRun: --toggle-collect=SimhashHarnessRun.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  bench/fingerprint/harness/fpharness.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>
#include <time.h>

#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "featureset.h"

/* ---- the server functions the simhash(text) path calls ---- */

volatile sig_atomic_t InterruptPending = false;
MemoryContext TopMemoryContext = NULL;
MemoryContext CurrentMemoryContext = NULL;

/* Out of memory: give up. */
static void *
SimhashHarnessCheck(void *p)
{
	if (p == NULL)
	{
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	return p;
}

void *
palloc(Size size)
{
	return SimhashHarnessCheck(malloc(size ? size : 1));
}

void *
palloc0(Size size)
{
	return SimhashHarnessCheck(calloc(1, size ? size : 1));
}

void *
palloc_extended(Size size, int flags)
{
	return (flags & MCXT_ALLOC_ZERO) ? palloc0(size) : palloc(size);
}

void *
repalloc(void *p, Size size)
{
	return SimhashHarnessCheck(realloc(p, size));
}

void *
repalloc_huge(void *p, Size size)
{
	return SimhashHarnessCheck(realloc(p, size));
}

void
pfree(void *p)
{
	free(p);
}

void *
MemoryContextAlloc(MemoryContext context, Size size)
{
	return palloc(size);
}

void
ProcessInterrupts(void)
{
}

int
GetDatabaseEncoding(void)
{
	return PG_UTF8;
}

struct varlena *
pg_detoast_datum_packed(struct varlena *datum)
{
	return datum;
}

bool
errstart(int elevel, const char *domain)
{
	fprintf(stderr, "error raised (level %d)\n", elevel);
	exit(3);
}

bool
errstart_cold(int elevel, const char *domain)
{
	return errstart(elevel, domain);
}

/* ---- the harness ---- */

typedef struct SimhashHarnessDoc
{
	struct varlena *v;			/* body as a 4-byte-header text */
	uint64		fp;
} SimhashHarnessDoc;

/* Decode a COPY text-format field in place; returns its length. */
static size_t
SimhashHarnessUnescape(char *s, size_t len)
{
	size_t		o = 0;

	for (size_t i = 0; i < len; i++)
	{
		char		c = s[i];

		if (c == '\\' && i + 1 < len)
		{
			char		e = s[++i];

			c = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' :
				e == 'b' ? '\b' : e == 'f' ? '\f' : e == 'v' ? '\v' : e;
		}
		s[o++] = c;
	}
	return o;
}

/* The fingerprint of every document; the work callgrind counts. */
pg_noinline void SimhashHarnessRun(SimhashHarnessDoc *docs, int ndocs);
pg_noinline void
SimhashHarnessRun(SimhashHarnessDoc *docs, int ndocs)
{
	for (int d = 0; d < ndocs; d++)
	{
		SimhashFeatureSet *fs = SimhashExtractFeatures(PointerGetDatum(docs[d].v), false);

		docs[d].fp = SimhashFeatureSetFingerprint(fs);
		SimhashFreeFeatureSet(fs);
	}
}

int
main(int argc, char **argv)
{
	int			rounds = 1;
	size_t		maxbytes = SIZE_MAX;
	const char *fpfile = NULL;
	SimhashHarnessDoc *docs = NULL;
	int			ndocs = 0,
				room = 0;
	size_t		total = 0;
	double		best = 1e30;
	int			opt;

	while ((opt = getopt(argc, argv, "r:m:o:")) != -1)
	{
		if (opt == 'r')
			rounds = atoi(optarg);
		else if (opt == 'm')
			maxbytes = (size_t) atoll(optarg);
		else if (opt == 'o')
			fpfile = optarg;
		else
			return 1;
	}
	for (int a = optind; a < argc; a++)
	{
		FILE	   *f = fopen(argv[a], "r");
		char	   *line = NULL;
		size_t		cap = 0;
		ssize_t		n;

		if (!f)
		{
			perror(argv[a]);
			return 1;
		}
		while (total < maxbytes && (n = getline(&line, &cap, f)) > 0)
		{
			char	   *tab = memchr(line, '\t', n);
			size_t		blen;
			struct varlena *v;

			if (!tab)
				continue;
			if (n > 0 && line[n - 1] == '\n')
				n--;
			blen = SimhashHarnessUnescape(tab + 1, line + n - (tab + 1));
			v = palloc(VARHDRSZ + blen);
			SET_VARSIZE(v, VARHDRSZ + blen);
			memcpy(VARDATA(v), tab + 1, blen);
			if (ndocs == room)
			{
				room = room ? room * 2 : 1024;
				docs = repalloc(docs, sizeof(SimhashHarnessDoc) * room);
			}
			docs[ndocs++].v = v;
			total += blen;
		}
		free(line);
		fclose(f);
	}

	for (int r = 0; r < rounds; r++)
	{
		struct timespec t0,
					t1;
		double		s;

		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
		SimhashHarnessRun(docs, ndocs);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
		s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
		if (s < best)
			best = s;
	}
	printf("%d docs, %zu bytes, best of %d: %.1f ms CPU, %.1f MB/s\n",
		   ndocs, total, rounds, best * 1e3, total / 1e6 / best);
	if (fpfile)
	{
		FILE	   *f = fopen(fpfile, "w");

		for (int d = 0; d < ndocs; d++)
			fprintf(f, "%016llx\n", (unsigned long long) docs[d].fp);
		fclose(f);
	}
	return 0;
}
