/*-------------------------------------------------------------------------
 *
 * module.c
 *	  Module entry point of the simhash extension.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/module.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/guc.h"

#include "neardup.h"
#include "simhash_am.h"
#include "simhash_executor.h"
#include "simhash_planner.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

/*
 * Load-time initialization: index options, the catalog cache, the hooks
 * that batch index insertions, the planner hooks, and the reserved GUC
 * prefix.
 */
void
_PG_init(void)
{
	SimhashRegisterOptions();
	SimhashRegisterCatalogCallbacks();
	SimhashInstallInsertHooks();
	SimhashInstallRowSecurityHook();
	SimhashInstallKeyCache();
	SimhashInstallPlannerHook();
	SimhashInstallJoinHook();
	SimhashInstallNearestSortPaths();
	SimhashInstallNearestSort();
	MarkGUCPrefixReserved("simhash");
}
