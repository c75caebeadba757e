/*-------------------------------------------------------------------------
 *
 * simhash_executor.h
 *	  The executor layer's interface: what _PG_init installs.
 *
 * The band join (bandjoin*.c) plans and runs "a <-> b <= k" joins as a
 * CustomScan; the nearest sort (nearestsort.c) is the executor half of
 * "ORDER BY fp <-> q, other keys", whose paths the planner makes
 * (planner/knnpath.c).  Nothing below this layer calls into it.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/executor/simhash_executor.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SIMHASH_EXECUTOR_H
#define SIMHASH_EXECUTOR_H

/* bandjoin.c: the join path hook and simhash.enable_join */
extern void SimhashInstallJoinHook(void);

/* nearestsort.c: the node's methods, registered by name */
extern void SimhashInstallNearestSort(void);

#endif							/* SIMHASH_EXECUTOR_H */
