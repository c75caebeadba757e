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

/*
 * Count one occurrence of the feature of hash h whose UTF-8 text is s[0..len).
 *
 * The common case, the feature's home slot empty or holding that feature
 * already, takes no branch that depends on which of the two it is: a
 * quarter of the words of English prose are new to their text, so such a
 * branch is mispredicted often, and it can only be resolved once the hash
 * is computed and the slot loaded, after which the work of the following
 * words, begun speculatively, is thrown away.  Both cases store the hash
 * and the count plus one, write the slot's number after the end of the
 * list of occupied slots (featureset.h: there is always room for one more
 * entry) and lengthen the list by one if the slot was empty.  The test is
 * written as one condition so that the compiler does not split it into
 * two branches.  A collision, or a set that keeps the features' texts,
 * takes the general path.
 */
static inline void
SimhashAddFeatureHash(SimhashFeatureSet *fs, uint64 h, const char *s, size_t len)
{
	SimhashFeatureSlot *slots = fs->slots;
	uint32		slot = (uint32) h & fs->mask;
	uint32		n = slots[slot].count;
	uint64		sh = SimhashSlotHash(&slots[slot]);
	uint32		empty = (n == 0);

	/* false only on a collision: the slot is empty or h's */
	if (likely(((sh ^ h) & ((uint64) 0 - (uint64) (n != 0))) == 0) &&
		likely(!fs->keep_text))
	{
		uint32		nf = fs->nfeatures;

		memcpy(slots[slot].hash, &h, sizeof(h));
		slots[slot].count = n + (n < SIMHASH_MAX_COUNT);
		fs->w8 += (n < SIMHASH_CAP_MIN);
		SimhashFeatureSetOccupied(fs)[nf] = slot;
		nf += empty;
		fs->nfeatures = nf;
		if (unlikely(nf > fs->grow_at))
			SimhashGrowFeatureSet(fs);
		return;
	}
	/* a collision, or the text is kept: probe on */
	while (slots[slot].count != 0)
	{
		if (SimhashSlotHash(&slots[slot]) == h)
		{
			n = slots[slot].count;
			fs->w8 += (n < SIMHASH_CAP_MIN);
			if (n < SIMHASH_MAX_COUNT)
				slots[slot].count = n + 1;
			return;
		}
		slot = (slot + 1) & fs->mask;
	}
	SimhashNewFeature(fs, slot, h, s, len);
}

#endif							/* SIMHASH_FEATUREADD_H */
