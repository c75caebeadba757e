/*-------------------------------------------------------------------------
 *
 * entry_layout.c
 *	  A stand-alone model of one cost of a radius-7 probe at 10M rows: reading
 *	  and checking the ~150 leaf entries of each of its 68 band keys.  It
 *	  compares the leaf entry encoding of today with a columnar one, to tell
 *	  whether changing the on-disk format would pay off (issue 27's latency
 *	  goal).  Nothing here is used by the extension.
 *
 * Layouts, each in its own memory area per band (4 bands), keys in order:
 *
 *	rowwise	today's sorted area (src/README, "Entry encoding"): per entry a
 *			varint of the sort-key delta (the full sort key every 16th
 *			entry), then the 6-byte rest.  Finding an entry needs the
 *			varint before it decoded: one dependent chain per key.
 *	columns	the same bytes regrouped per 16 entries: one byte giving the
 *			length of the group's varints, the 16 high 32 bits of the
 *			rests, the 16 low 16 bits, then the 16 varints.  A check
 *			reads the 32-bit column at fixed offsets; the low 16 bits and
 *			the varints only of an entry still within reach.
 *
 * Each query draws a random centre block per band and reads the 17 keys
 * within one bit of it in every band (k = 7 over four 16-bit bands), and
 * counts the entries whose rest is within 7 bits of a random rest (each
 * variant its own keys, so that none reads what another brought into the
 * cache); each layout is timed with and without prefetching the next key's
 * bytes while the current key is checked.  The descent to a key's leaf (about as
 * costly again in the index) is not modelled: a table gives each key's
 * offset.  Results: ns per key, the memory far larger than the CPU's
 * caches as a 10M-row index is.
 *
 * Usage:  cc -O2 -march=native -Wall -Wextra -o entry_layout entry_layout.c
 *		   ./entry_layout [ROWS [QUERIES]]		(10000000 and 3000)
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  bench/index/entry_layout.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NKEYS		65536
#define NBANDS		4
#define GROUP		16			/* entries between restarts */
#define RADIUS		7
#define KEY_SHIFT	43			/* as SIMHASH_KEY_SHIFT */
#define REST_MASK	UINT64_C(0xffffffffffff)

typedef struct Layout
{
	uint8_t    *bytes;
	size_t	   *start;			/* byte offset of each key, and the end */
} Layout;

static uint64_t rng_state = UINT64_C(88172645463325252);

/* xorshift64: a fixed, portable sequence */
static uint64_t
next_random(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Write v as a little-endian base-128 varint; returns its length. */
static int
put_varint(uint8_t *p, uint64_t v)
{
	int			n = 0;

	while (v >= 0x80)
	{
		p[n++] = (uint8_t) ((v & 0x7f) | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t) v;
	return n;
}

/* Decode a varint of at most 8 bytes with one load (as SimhashGetVarint). */
static inline uint64_t
get_varint(const uint8_t **pp)
{
	const uint8_t *s = *pp;
	uint64_t	w;
	uint64_t	stops;
	int			len;

	memcpy(&w, s, sizeof(w));
	stops = ~w & UINT64_C(0x8080808080808080);
	len = __builtin_ctzll(stops) / 8 + 1;
	if (len < 8)
		w &= (UINT64_C(1) << (8 * len)) - 1;
	w &= UINT64_C(0x7f7f7f7f7f7f7f7f);
	w = ((w & UINT64_C(0x7f007f007f007f00)) >> 1) | (w & UINT64_C(0x007f007f007f007f));
	w = ((w & UINT64_C(0x3fff00003fff0000)) >> 2) | (w & UINT64_C(0x00003fff00003fff));
	w = ((w & UINT64_C(0x0fffffff00000000)) >> 4) | (w & UINT64_C(0x000000000fffffff));
	*pp = s + len;
	return w;
}

/* The 6-byte little-endian rest at p (as SimhashGetRest). */
static inline uint64_t
get_rest(const uint8_t *p)
{
	return (uint64_t) p[0] | ((uint64_t) p[1] << 8) | ((uint64_t) p[2] << 16) |
		((uint64_t) p[3] << 24) | ((uint64_t) p[4] << 32) | ((uint64_t) p[5] << 40);
}

/* Append one key's group of n entries in the columnar layout. */
static size_t
put_group(uint8_t *out, const uint64_t *rests, const uint8_t *varints, int vlen, int n)
{
	size_t		pos = 0;

	out[pos++] = (uint8_t) vlen;
	for (int i = 0; i < n; i++)
	{
		uint32_t	high = (uint32_t) (rests[i] >> 16);

		memcpy(out + pos, &high, 4);
		pos += 4;
	}
	for (int i = 0; i < n; i++)
	{
		uint16_t	low = (uint16_t) rests[i];

		memcpy(out + pos, &low, 2);
		pos += 2;
	}
	memcpy(out + pos, varints, vlen);
	return pos + vlen;
}

/* Fill both layouts of one band with rows entries spread over the keys. */
static void
build_band(Layout *rowwise, Layout *columns, const uint32_t *count, long rows)
{
	size_t		cap = (size_t) rows * 12 + NKEYS * 16;
	size_t		pr = 0,
				pc = 0;

	rowwise->bytes = malloc(cap);
	columns->bytes = malloc(cap);
	rowwise->start = malloc((NKEYS + 1) * sizeof(size_t));
	columns->start = malloc((NKEYS + 1) * sizeof(size_t));
	if (!rowwise->bytes || !columns->bytes || !rowwise->start || !columns->start)
	{
		fprintf(stderr, "entry_layout: out of memory\n");
		exit(1);
	}
	for (int key = 0; key < NKEYS; key++)
	{
		uint64_t	block = 0;
		uint64_t	rests[GROUP];
		uint8_t		varints[GROUP * 10];
		int			vlen = 0,
					n = 0;
		/* heap blocks of a key's rows: spread over the table, in order */
		uint64_t	gap = 2 * (uint64_t) rows / 60 / (count[key] + 1) + 1;

		rowwise->start[key] = pr;
		columns->start[key] = pc;
		for (uint32_t i = 0; i < count[key]; i++)
		{
			uint64_t	delta = (1 + next_random() % gap) << 11;
			uint64_t	rest = next_random() & REST_MASK;
			uint64_t	coded;

			block += delta;
			coded = (i % GROUP == 0) ? ((uint64_t) key << KEY_SHIFT | block) : delta;
			pr += put_varint(rowwise->bytes + pr, coded);
			memcpy(rowwise->bytes + pr, &rest, 6);
			pr += 6;
			rests[n++] = rest;
			vlen += put_varint(varints + vlen, coded);
			if (n == GROUP || i == count[key] - 1)
			{
				pc += put_group(columns->bytes + pc, rests, varints, vlen, n);
				n = 0;
				vlen = 0;
			}
		}
	}
	rowwise->start[NKEYS] = pr;
	columns->start[NKEYS] = pc;
}

/* Prefetch every cache line of key "key" in l. */
static inline void
prefetch_key(const Layout *l, int key)
{
	for (size_t off = l->start[key]; off < l->start[key + 1]; off += 64)
		__builtin_prefetch(l->bytes + off);
}

/* Entries of a key within RADIUS of rest q, rowwise: decode every entry. */
static long
check_rowwise(const Layout *l, int key, uint64_t q)
{
	const uint8_t *p = l->bytes + l->start[key];
	const uint8_t *end = l->bytes + l->start[key + 1];
	long		hits = 0;

	while (p < end)
	{
		(void) get_varint(&p);
		hits += __builtin_popcountll(get_rest(p) ^ q) <= RADIUS;
		p += 6;
	}
	return hits;
}

/* The same, columnar: the high 32 bits first, the rest only when needed. */
static long
check_columns(const Layout *l, int key, uint32_t nentries, uint64_t q)
{
	const uint8_t *p = l->bytes + l->start[key];
	uint32_t	qhigh = (uint32_t) (q >> 16);
	uint16_t	qlow = (uint16_t) q;
	long		hits = 0;

	for (uint32_t left = nentries; left > 0;)
	{
		int			n = left < GROUP ? (int) left : GROUP;
		int			vlen = *p++;
		const uint8_t *lows = p + 4 * n;

		for (int i = 0; i < n; i++)
		{
			uint32_t	high;
			int			d;

			memcpy(&high, p + 4 * i, 4);
			d = __builtin_popcount(high ^ qhigh);
			if (d <= RADIUS)
			{
				uint16_t	low;

				memcpy(&low, lows + 2 * i, 2);
				/* a hit would decode this group's varints for its TID */
				hits += d + __builtin_popcount((uint16_t) (low ^ qlow)) <= RADIUS;
			}
		}
		p += 6 * n + vlen;
		left -= n;
	}
	return hits;
}

/* Seconds of the monotonic clock. */
static double
seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	long		rows = argc > 1 ? atol(argv[1]) : 10000000;
	int			nqueries = argc > 2 ? atoi(argv[2]) : 3000;
	static uint32_t count[NBANDS][NKEYS];
	Layout		rowwise[NBANDS],
				columns[NBANDS];
	double		spent[4] = {0};
	long		hits[4] = {0};
	static const char *const names[4] = {
		"rowwise", "rowwise + prefetch", "columns", "columns + prefetch"
	};
	size_t		bytes_rowwise = 0,
				bytes_columns = 0;

	if (rows < 1 || nqueries < 1)
	{
		fprintf(stderr, "usage: entry_layout [ROWS [QUERIES]]\n");
		return 1;
	}
	for (int b = 0; b < NBANDS; b++)
	{
		for (long i = 0; i < rows; i++)
			count[b][next_random() & 0xffff]++;
		build_band(&rowwise[b], &columns[b], count[b], rows);
		bytes_rowwise += rowwise[b].start[NKEYS];
		bytes_columns += columns[b].start[NKEYS];
	}

	/*
	 * A first pass over the queries is a warm-up.  Every variant draws keys
	 * of its own: keys read by one variant must not be in the cache for the
	 * next (the two rowwise variants share their bytes).
	 */
	for (int pass = 0; pass < 2; pass++)
		for (int qn = 0; qn < nqueries; qn++)
			for (int variant = 0; variant < 4; variant++)
			{
				bool		use_columns = variant >= 2;
				bool		prefetch = variant % 2 == 1;
				Layout	   *l = use_columns ? columns : rowwise;
				uint64_t	q = next_random() & REST_MASK;
				int			band[NBANDS * 17],
							key[NBANDS * 17],
							nkeys = 0;
				double		t0;

				for (int b = 0; b < NBANDS; b++)
				{
					int			centre = (int) (next_random() & 0xffff);

					for (int bit = -1; bit < 16; bit++)
					{
						band[nkeys] = b;
						key[nkeys++] = bit < 0 ? centre : centre ^ (1 << bit);
					}
				}
				t0 = seconds();
				for (int i = 0; i < nkeys; i++)
				{
					if (prefetch && i + 1 < nkeys)
						prefetch_key(&l[band[i + 1]], key[i + 1]);
					hits[variant] += use_columns ?
						check_columns(&l[band[i]], key[i], count[band[i]][key[i]], q) :
						check_rowwise(&l[band[i]], key[i], q);
				}
				if (pass == 1)
					spent[variant] += seconds() - t0;
			}

	printf("%ld rows, %.1f entries a key, %.2f bytes an entry rowwise, %.2f columnar\n",
		   rows, rows / (double) NKEYS, bytes_rowwise / (double) rows / NBANDS,
		   bytes_columns / (double) rows / NBANDS);
	for (int variant = 0; variant < 4; variant++)
		printf("%-20s %7.0f ns a key  (%ld entries within %d)\n",
			   names[variant], spent[variant] / nqueries / (NBANDS * 17) * 1e9,
			   hits[variant], RADIUS);
	return 0;
}
