/*-------------------------------------------------------------------------
 *
 * bandjoin.h
 *	  SimhashJoin: what the planning and the execution halves share.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/executor/bandjoin.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHJOIN_H
#define SHJOIN_H

#include "nodes/extensible.h"

#include "simhash_am.h"

#define SIMHASH_JOIN_NAME		"SimhashJoin"
/* memory of one inner row besides its columns: fp + per band (fp, row) */
#define SIMHASH_JOIN_ROW_BYTES	(sizeof(uint64) * (1 + SIMHASH_BLOCKS) + \
								 sizeof(uint32) * SIMHASH_BLOCKS)

/* positions in CustomScan.custom_exprs and custom_private */
enum
{
	SJ_EXPR_OUTER_ARG,
	SJ_EXPR_INNER_ARG,
	SJ_EXPR_BOUND,
	SJ_EXPR_CLAUSE,
	SJ_EXPR_JOINQUAL
};
enum
{
	SJ_PRIV_ADJUST,
	SJ_PRIV_NOUTER
};

/* bandjoin_exec.c */
extern const CustomScanMethods SimhashJoinScanMethods;

#endif							/* SHJOIN_H */
