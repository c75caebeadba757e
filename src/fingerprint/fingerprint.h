/*-------------------------------------------------------------------------
 *
 * fingerprint.h
 *	  The fingerprint layer's interface: from text to a simhash64.
 *
 * The 64 counters that features push (fingerprint.c), the features of a
 * text datum (textsource.c), simhash_jaccard (jaccard.c) and the radius
 * proposed for a text (radius.c).  The tokenizer's feature set is declared
 * in featureset.h, used only inside this folder.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/fingerprint/fingerprint.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SIMHASH_FINGERPRINT_H
#define SIMHASH_FINGERPRINT_H

#include "simhash.h"

/*
 * Feature accumulation (fingerprint.c): 64 signed counters that features
 * push up or down according to their hash bits (floating-point weights).
 */
typedef struct SimhashCounters
{
	double		acc[SIMHASH_BITS];	/* counter i: sum of +w or -w */
} SimhashCounters;

extern void SimhashCountersInit(SimhashCounters *c);
extern void SimhashCountersAdd(SimhashCounters *c, uint64 hash, double weight);
extern uint64 SimhashCountersFinish(const SimhashCounters *c);

/* jaccard.c: simhash_jaccard of two text Datums (no cache) */
extern double SimhashTextJaccard(Datum a, Datum b);
/* ... and of one text against many: its features extracted once */
typedef struct SimhashJaccardSide SimhashJaccardSide;
extern SimhashJaccardSide *SimhashJaccardPrepare(Datum t);
extern double SimhashJaccardAgainst(const SimhashJaccardSide *prepared, Datum b);
extern void SimhashJaccardRelease(SimhashJaccardSide *prepared);

/* radius.c: the search radius proposed for a text (simhash_radius) */
extern int	SimhashRadiusOfText(Datum textdatum);

#endif							/* SIMHASH_FINGERPRINT_H */
