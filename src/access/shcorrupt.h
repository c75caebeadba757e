/*-------------------------------------------------------------------------
 *
 * shcorrupt.h
 *	  Reporting a damaged leaf page from code that sees only the page.
 *
 * The leaf decoders (shleaf.h) get a page pointer, not the index or the
 * block; SimhashLeafCorrupt finds both from the shared or local buffer
 * that holds the page, so that the error names them.  Inline and in
 * core's terms only, so that the page-format headers call nothing in the
 * page code.  Used only inside src/access/.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/access/shcorrupt.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHCORRUPT_H
#define SHCORRUPT_H

#include "access/genam.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"

#include "simhash.h"

/*
 * The buffer whose page holds the byte at "where", or InvalidBuffer if it is
 * in no buffer (a page image being built).
 */
static inline Buffer
SimhashBufferHolding(const void *where)
{
	const char *p = (const char *) where;

	if (BufferBlocks != NULL && p >= BufferBlocks &&
		p < BufferBlocks + (Size) NBuffers * BLCKSZ)
		return (Buffer) ((p - BufferBlocks) / BLCKSZ) + 1;
	for (int i = 0; i < NLocBuffer; i++)
	{
		const char *block = (const char *) LocalBufferBlockPointers[i];

		if (block != NULL && p >= block && p < block + BLCKSZ)
			return -(i + 1);
	}
	return InvalidBuffer;
}

/*
 * The temporary relation of this session stored in relfilenode "number" of
 * tablespace spc (a local buffer's), or InvalidOid.  PostgreSQL's map from
 * storage to relation (RelidByRelfilenode) leaves temporary relations out,
 * so a damaged leaf of a temporary table's index is looked up here.
 */
static inline Oid
SimhashTempRelidByStorage(Oid spc, Oid number)
{
	Relation	rel;
	ScanKeyData key[2];
	SysScanDesc scan;
	HeapTuple	tup;
	Oid			relid = InvalidOid;

	if (spc == MyDatabaseTableSpace)
		spc = InvalidOid;		/* as pg_class stores it */
	ScanKeyInit(&key[0], Anum_pg_class_reltablespace, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(spc));
	ScanKeyInit(&key[1], Anum_pg_class_relfilenode, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(number));
	rel = table_open(RelationRelationId, AccessShareLock);
	scan = systable_beginscan(rel, ClassTblspcRelfilenodeIndexId, true, NULL, 2, key);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_class form = (Form_pg_class) GETSTRUCT(tup);

		if (form->relpersistence == RELPERSISTENCE_TEMP &&
			isTempOrTempToastNamespace(form->relnamespace))
		{
			relid = form->oid;
			break;
		}
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return relid;
}

/*
 * Report a leaf page whose contents contradict themselves; "where" is any
 * byte of the page.  The decoders see only the page, so the index and the
 * block are found from the buffer that holds it (pinned by the caller).
 * Inline, in core's terms only: the page format's header calls nothing in
 * the page code.
 */
pg_noreturn static inline void
SimhashLeafCorrupt(const void *where, const char *what)
{
	Buffer		buf = SimhashBufferHolding(where);
	RelFileLocator loc;
	ForkNumber	fork;
	BlockNumber blkno;
	Oid			relid;
	char	   *name = NULL;

	if (!BufferIsValid(buf))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("simhash index contains a corrupted leaf page"),
				 errdetail("%s", what),
				 errhint("Please REINDEX it.")));
	BufferGetTag(buf, &loc, &fork, &blkno);
	relid = SimhashRelidByLocator(loc);
	if (!OidIsValid(relid) && BufferIsLocal(buf))
		relid = SimhashTempRelidByStorage(SimhashLocatorSpc(loc), SimhashLocatorNumber(loc));
	if (OidIsValid(relid))
		name = get_rel_name(relid);
	if (name == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("simhash index with relfilenode %u contains a corrupted leaf page at block %u",
						SimhashLocatorNumber(loc), blkno),
				 errdetail("%s", what),
				 errhint("Please REINDEX it.")));
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("index \"%s\" contains a corrupted leaf page at block %u", name, blkno),
			 errdetail("%s", what),
			 errhint("Please REINDEX it.")));
}

#endif							/* SHCORRUPT_H */
