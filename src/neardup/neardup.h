/*-------------------------------------------------------------------------
 *
 * neardup.h
 *	  Near-duplicates caught at INSERT: the triggers, their search and
 *	  their locks.
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/neardup/neardup.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef NEARDUP_H
#define NEARDUP_H

#include "commands/trigger.h"
#include "fmgr.h"
#include "storage/itemptr.h"
#include "utils/relcache.h"

#include "fingerprint.h"

/* fingerprint.c */
extern Datum simhash_text(PG_FUNCTION_ARGS);

/* trigger_util.c */
extern TriggerData *SimhashTriggerData(FunctionCallInfo fcinfo, const char *name);
extern Oid	SimhashTriggerDefiningTable(Trigger *trigger, Oid relid);
extern AttrNumber SimhashTriggerColumn(Relation rel, const char *colname, const char *role);
extern AttrNumber SimhashTriggerFingerprintColumn(Relation rel, const char *colname,
												  const char *role);
extern text *SimhashJoinTextColumns(HeapTuple tuple, TupleDesc desc,
									const AttrNumber *cols, int ncols);
extern Datum SimhashJoinSlotTextColumns(TupleTableSlot *slot, const AttrNumber *cols,
										int ncols, bool *isnull, bool *built);
extern bool SimhashColumnStoredSame(HeapTuple a, HeapTuple b, TupleDesc desc,
									AttrNumber attno);
extern bool SimhashSameTextColumns(HeapTuple a, HeapTuple b, TupleDesc desc,
								   const AttrNumber *cols, int ncols);
extern bool SimhashParseSimilarity(const char *num, double *s);

/* k 'auto': simhash_radius() of the row's text columns, per row */
#define SIMHASH_AUTO_RADIUS		(-1)

/* what the near-duplicate trigger does with a row that has a match */
typedef enum SimhashNearDupAction
{
	SIMHASH_ACTION_REJECT,		/* raise an error (23P01) */
	SIMHASH_ACTION_SKIP,		/* do not store the row */
	SIMHASH_ACTION_LINK			/* store it, naming the match */
} SimhashNearDupAction;

/* one table whose rows compete: the table itself, or a leaf partition */
typedef struct SimhashNearDupLeaf
{
	Oid			relid;
	Oid			indexoid;		/* its simhash index on the fingerprint */
	AttrNumber	fp_attno;		/* column numbers in this table */
	AttrNumber *scope_attno;
	AttrNumber *key_attno;
	AttrNumber *text_attno;		/* text= columns (ntext of them) */
} SimhashNearDupLeaf;

/*
 * The near-duplicate trigger's view of its definition and of the tables
 * whose rows compete, worked out once per statement (trigger_neardup.c).
 */
typedef struct SimhashNearDupInfo
{
	Oid			tgoid;			/* the trigger ... */
	Oid			relid;			/* ... and the table it fires on */
	int			k;				/* the radius, or SIMHASH_AUTO_RADIUS */
	SimhashNearDupAction action;
	int			ntext;			/* text=: the columns of the row's text, for */
	AttrNumber *text_attno;		/* ... k 'auto' and verify= */
	double		verify;			/* verify=s: the least similarity, or -1 */
	AttrNumber	fp_attno;		/* in the table the trigger fires on */
	struct ExprState *fp_expr;	/* a generated fingerprint's expression */
	struct Bitmapset *fp_inputs;	/* ... the columns it reads (as
									 * pull_varattnos offsets them) */
	struct ExprContext *fp_econtext;
	AttrNumber	link_key_attno; /* link: where the match's key goes */
	AttrNumber	link_dist_attno;	/* ... and its distance (or 0) */
	Oid			link_dist_type;
	int			nscope;			/* scope columns */
	AttrNumber *scope_attno;
	FmgrInfo   *scope_eq;
	FmgrInfo   *scope_hash;
	Oid		   *scope_collation;
	int			nkey;			/* the primary key's columns (0: none) */
	char	  **key_name;
	FmgrInfo   *key_cmp;
	FmgrInfo   *key_out;
	Oid		   *key_collation;
	bool	   *key_byval;
	int16	   *key_len;
	Oid			top_relid;		/* the table the trigger was created on */
	int			nleaves;		/* the tables whose rows compete */
	SimhashNearDupLeaf *leaves;
	int			own_leaf;		/* the table the trigger fires on, among them */
	struct SimhashRlsCheck *rls_check[2];	/* row-level security: INSERT, UPDATE */
	MemoryContext cxt;			/* where all this lives: the statement's */
} SimhashNearDupInfo;

/* the nearest earlier row found */
typedef struct SimhashNearMatch
{
	bool		found;
	int			leaf;
	ItemPointerData tid;
	int			dist;
	TransactionId xmin;			/* the transaction that inserted it */
	Datum	   *key;			/* its key (info->nkey values) */
	bool	   *keynull;
} SimhashNearMatch;

/*
 * verify=s: a candidate counts only if simhash_jaccard of its text and the
 * new row's is at least s
 */
typedef struct SimhashNearVerify
{
	double		s;
	text	   *text;			/* the new row's text; NULL: nothing confirms */
	SimhashJaccardSide *features;	/* its features, extracted at first use */
} SimhashNearVerify;

/* neardup_setup.c: the trigger's definition, once per statement */
extern SimhashNearDupInfo *SimhashNearDupSetup(FunctionCallInfo fcinfo,
											   TriggerData *trigdata);

/* neardup_search.c */
extern void SimhashFindNearDuplicate(const SimhashNearDupInfo *info, uint64 fp, int k,
									 const Datum *scope, ItemPointer self,
									 SimhashNearVerify *verify, SimhashNearMatch *best);

/* neardup_rls.c */
struct SimhashRlsCheck;
extern void SimhashCheckRowSecurity(struct SimhashRlsCheck **cache, MemoryContext cxt,
									Relation rel, TupleTableSlot *slot, CmdType cmd);
extern bool SimhashRowSecurityApplies(Relation rel);

/* neardup_stmt.c */
extern void SimhashInstallRowSecurityHook(void);
extern List *SimhashStatementSelectTargets(MemoryContext cxt, CmdType cmd, bool *known);

/* neardup_lock.c */
extern void SimhashCanonicalRadii(int k, int *radius);
extern int	SimhashLockNeighbourhood(Oid relid, uint32 scope_hash, uint64 fp, int k);
extern bool SimhashHoldsWholeTable(Oid relid, uint64 *epoch);

#endif							/* NEARDUP_H */
