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


#endif							/* SIMHASH_FEATURESET_H */
