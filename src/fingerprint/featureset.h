/*-------------------------------------------------------------------------
 *
 * featureset.h
 *	  The hash table of a text's features, as the tokenizer fills it.
 *
 * SimhashFeatureSet (simhash.h) maps feature hashes to occurrence counts;
 * featureset.c creates, grows and frees it, and the tokenizer counts each
 * occurrence through the inline function below.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/fingerprint/featureset.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SIMHASH_FEATURESET_H
#define SIMHASH_FEATURESET_H

#include "simhash.h"

/* feature hashes (fingerprint.c), used by the tokenizer */
extern uint64 SimhashHashFeature(const char *utf8, size_t len);
extern uint64 SimhashHashServerString(const char *s, size_t len);

/*
 * Features of a text (tokenize.c): a hash table from feature hash to
 * occurrence count, optionally remembering each feature's text and the
 * order in which features first appeared.
 *
 * A slot takes 12 bytes (the hash as two halves, so that no padding is
 * needed), a table of more than 2^20 slots is at most 3/4 full (smaller
 * ones at most half), and the table grows in place, so the table of n
 * distinct features takes between 16n and 32n bytes at its peak (above
 * 12 MB) and never more than SIMHASH_MAX_SLOTS slots.
 */
typedef struct SimhashFeatureSlot
{
	uint32		hash[2];		/* feature hash (memcpy of a uint64) */
	uint32		count;			/* occurrences; 0 = empty slot */
} SimhashFeatureSlot;

/* largest number of slots: 2^26 slots of 12 bytes are 768 MiB */
#define SIMHASH_MAX_SLOTS		((uint32) 1 << 26)
/* most distinct features of a text: 3/4 of SIMHASH_MAX_SLOTS */
#define SIMHASH_MAX_FEATURES	(SIMHASH_MAX_SLOTS / 4 * 3)

typedef struct SimhashFeatureSet
{
	SimhashFeatureSlot *slots;	/* open addressing, linear probing */
	uint32		mask;			/* number of slots - 1 (a power of 2 minus 1) */
	uint32		nfeatures;		/* number of occupied slots */
	uint32		grow_at;		/* grow when nfeatures exceeds this */
	uint64		w8;				/* sum over features of min(count, 8) */
	bool		keep_text;		/* remember feature text and order? */
	uint32	   *featno;			/* keep_text: slot -> number of the feature
								 * in order of first appearance */
	size_t	   *text_end;		/* keep_text: feature k is text_buf[end[k-1]
								 * .. end[k]) (end[-1] = 0) */
	uint32		ends_size;		/* allocated entries of text_end */
	char	   *text_buf;		/* keep_text: concatenated feature texts */
	size_t		text_used;
	size_t		text_size;
} SimhashFeatureSet;

/* The 64-bit hash of an occupied slot (one unaligned load where allowed). */
static inline uint64
SimhashSlotHash(const SimhashFeatureSlot *slot)
{
	uint64		h;

	memcpy(&h, slot->hash, sizeof(h));
	return h;
}

/* incremental feature extraction from UTF-8 (tokenize.c) */
typedef struct SimhashTokenizer SimhashTokenizer;

extern SimhashTokenizer *SimhashTokenizerCreate(bool keep_text, size_t expect_bytes);
extern void SimhashTokenizerPush(SimhashTokenizer *tk, const char *utf8,
								 size_t len, bool final);
extern SimhashFeatureSet *SimhashTokenizerFinish(SimhashTokenizer *tk);

/* a feature set's memory; the count of one feature */
extern void SimhashFreeFeatureSet(SimhashFeatureSet *fs);
extern uint32 SimhashFeatureSetCount(const SimhashFeatureSet *fs, uint64 h);
pg_noreturn extern void SimhashReportFeatureTooLong(Size len);

/* the features of a text datum in the server encoding (textsource.c) */
extern SimhashFeatureSet *SimhashExtractFeatures(Datum textdatum, bool keep_text);
extern uint64 SimhashFeatureSetFingerprint(const SimhashFeatureSet *fs);
extern uint64 SimhashFeatureSetCap(const SimhashFeatureSet *fs);

/* count bit that marks a slot already rehashed while the table grows */
#define SIMHASH_SLOT_MOVED		((uint32) 1 << 31)
/* occurrence counts saturate below that bit */
#define SIMHASH_MAX_COUNT		(SIMHASH_SLOT_MOVED - 1)

/*
 * Bytes of a table of nslots slots that may hold grow_at + 1 features: the
 * slots, then the numbers of the occupied slots (SimhashFeatureSetOccupied).
 */
#define SimhashFeatureSetBytes(nslots, grow_at) \
	(sizeof(SimhashFeatureSlot) * (Size) (nslots) + sizeof(uint32) * ((Size) (grow_at) + 1))

/*
 * The occupied slots: entry k < fs->nfeatures is the number of one, each
 * once, in no particular order (rebuilt when the table grows).  Stored
 * after the slots, so that the fingerprint visits the features without
 * walking the mostly empty table.
 */
static inline uint32 *
SimhashFeatureSetOccupied(const SimhashFeatureSet *fs)
{
	return (uint32 *) (fs->slots + fs->mask + 1);
}

extern uint64 SimhashFeatureSetSumWeights(const SimhashFeatureSet *fs, uint64 cap);
extern SimhashFeatureSet *SimhashCreateFeatureSet(bool keep_text, size_t expect_bytes);
extern void SimhashNewFeature(SimhashFeatureSet *fs, uint32 slot, uint64 h,
							  const char *s, size_t len);
/* double the slots of a set that holds more than grow_at features */
extern void SimhashGrowFeatureSet(SimhashFeatureSet *fs);
/* n more occurrences of a feature (the Han counts of hancount.c) */
extern void SimhashAddFeatureTimes(SimhashFeatureSet *fs, uint64 h, uint32 n);

#endif							/* SIMHASH_FEATURESET_H */
