/*-------------------------------------------------------------------------
 *
 * hancount.h
 *	  Occurrences of common Han characters, counted by code point.
 *
 * Chinese text is mostly Han characters of U+4000-U+9FFF, each a feature
 * of its own, and a text repeats most of them (a distinct one per five
 * occurrences in the Chinese benchmark).  Instead of hashing every
 * occurrence and probing the feature table for it, the tokenizer counts
 * them in an array indexed by code point, and each distinct character is
 * hashed and entered into the feature table once, with its count, when
 * the text ends (or the list of the characters seen fills up): hancount.c,
 * and the counting in hanscan.h.  The fingerprint and simhash_jaccard
 * depend only on the counts of the features, so nothing else changes;
 * simhash_features, which lists the features in order of first
 * appearance, does not use this.
 *
 * The array (48 kB) belongs to the backend and is all zero between texts;
 * a text that ends by an error leaves it marked dirty, and the next text
 * clears it.  Two texts cannot be tokenized at once in a backend (each is
 * extracted from start to end in one call); a second would be detected.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/fingerprint/hancount.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SIMHASH_HANCOUNT_H
#define SIMHASH_HANCOUNT_H

#include "featureset.h"

/* the code points counted: SIMHASH_HAN_BASE .. + SIMHASH_HAN_CODES - 1 */
#define SIMHASH_HAN_BASE		0x4000
#define SIMHASH_HAN_CODES		0x6000
/*
 * distinct characters listed before the counts go into the feature table
 * (the list, with the entry past its end, is 8 kB: palloc keeps it)
 */
#define SIMHASH_HAN_LISTED		2047

typedef struct SimhashHanCounts
{
	uint16	   *count;			/* the backend's array, by code point -
								 * SIMHASH_HAN_BASE; NULL: not counting */
	uint32	   *listed;			/* indexes whose count went from 0 to 1 (one
								 * more entry to write past the end) */
	uint32		nlisted;
	uint64		epoch;			/* which text owns the array */
} SimhashHanCounts;

extern void SimhashHanCountsStart(SimhashHanCounts *hc);
extern void SimhashHanCountsFlush(SimhashHanCounts *hc, SimhashFeatureSet *fs);
extern void SimhashHanCountsEnd(SimhashHanCounts *hc, SimhashFeatureSet *fs);

#endif							/* SIMHASH_HANCOUNT_H */
