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

/* count bit that marks a slot already rehashed while the table grows */
#define SIMHASH_SLOT_MOVED		((uint32) 1 << 31)
/* occurrence counts saturate below that bit */
#define SIMHASH_MAX_COUNT		(SIMHASH_SLOT_MOVED - 1)

extern SimhashFeatureSet *SimhashCreateFeatureSet(bool keep_text, size_t expect_bytes);
extern void SimhashNewFeature(SimhashFeatureSet *fs, uint32 slot, uint64 h,
							  const char *s, size_t len);

/* Count one occurrence of the feature of hash h whose UTF-8 text is s[0..len). */
static inline void
SimhashAddFeatureHash(SimhashFeatureSet *fs, uint64 h, const char *s, size_t len)
{
	uint32		slot = (uint32) h & fs->mask;

	while (fs->slots[slot].count != 0)
	{
		if (SimhashSlotHash(&fs->slots[slot]) == h)
		{
			uint32		n = fs->slots[slot].count;

			fs->w8 += (n < SIMHASH_CAP_MIN);
			if (n < SIMHASH_MAX_COUNT)
				fs->slots[slot].count = n + 1;
			return;
		}
		slot = (slot + 1) & fs->mask;
	}
	SimhashNewFeature(fs, slot, h, s, len);
}


#endif							/* SIMHASH_FEATURESET_H */
