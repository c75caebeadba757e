/*-------------------------------------------------------------------------
 *
 * simhash.c
 *	  Module entry point of the simhash extension.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/simhash.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"

#include "simhash.h"

PG_MODULE_MAGIC;
