/*-------------------------------------------------------------------------
 *
 * featureadd.h
 *	  The tokenizer's inline path for counting one feature.
 *
 * Apart from featureset.h so that the table's own code (featureset.c)
 * does not include the inline path that calls back into it for the rare
 * case (a new feature whose text is kept, or a table that must grow):
 * only the tokenizer includes this file.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/fingerprint/featureadd.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SIMHASH_FEATUREADD_H
#define SIMHASH_FEATUREADD_H

#include "featureset.h"

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
	if (unlikely(fs->keep_text || fs->nfeatures >= fs->grow_at))
	{
		SimhashNewFeature(fs, slot, h, s, len);
		return;
	}
	memcpy(fs->slots[slot].hash, &h, sizeof(h));
	fs->slots[slot].count = 1;
	fs->w8++;
	SimhashFeatureSetOccupied(fs)[fs->nfeatures++] = slot;
}

#endif							/* SIMHASH_FEATUREADD_H */
