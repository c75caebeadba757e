/*-------------------------------------------------------------------------
 *
 * neardup_stmt.c
 *	  What the near-duplicate trigger's row-level security check must know
 *	  of the statement it fires in: which tables it names need SELECT rights.
 *
 * PostgreSQL adds the SELECT policies' USING expressions to the check of a
 * new row when the statement needs SELECT rights on the table it names
 * (rewrite/rowsecurity.c, get_row_security_policies).  A trigger cannot see
 * its statement, but its FmgrInfo is allocated, and fn_mcxt set, in the
 * executor memory context of the statement (es_query_cxt) for INSERT,
 * UPDATE and MERGE.  So an ExecutorRun hook notes, for each such statement
 * as it starts running, the tables its ModifyTable nodes name that need
 * SELECT, under that context, and the trigger looks its fn_mcxt up.  A
 * statement the executor hook does not see (COPY FROM, logical replication
 * apply) needs no SELECT rights; the one during which this library was
 * loaded may have started before the hook was installed, and is "unknown".
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/neardup/neardup_stmt.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "executor/executor.h"
#include "lib/ilist.h"
#include "nodes/plannodes.h"
#include "parser/parsetree.h"
#include "utils/acl.h"
#include "utils/memutils.h"

#include "neardup.h"

/* what a running INSERT, UPDATE or MERGE needs of the trigger's check */
typedef struct SimhashStmtTargets
{
	dlist_node	node;
	MemoryContext cxt;			/* the statement's executor memory */
	List	   *insert_relids;	/* SELECT policies for rows of INSERT events */
	List	   *update_relids;	/* ... of UPDATE events */
	MemoryContextCallback forget;	/* unlinks this when cxt goes away */
} SimhashStmtTargets;

/* the running statements, newest first */
static dlist_head stmt_targets = DLIST_STATIC_INIT(stmt_targets);

static ExecutorRun_hook_type prev_RlsExecutorRun = NULL;

/* the transaction and statement during which the library was loaded */
static TimestampTz loaded_xact_start = 0;
static TimestampTz loaded_stmt_start = 0;

/*
 * Does range table entry "rte" of "stmt" require SELECT rights?  (PostgreSQL
 * 16 moved the required permissions out of the range table entry into
 * permInfos; 15 has them in the entry.)
 */
static bool
SimhashRteNeedsSelect(PlannedStmt *stmt, RangeTblEntry *rte)
{
	return (SimhashRteRequiredPerms(stmt, rte) & ACL_SELECT) != 0;
}

/* Memory context reset callback: the statement is over, forget its entry. */
static void
SimhashForgetStmtTargets(void *arg)
{
	dlist_delete(&((SimhashStmtTargets *) arg)->node);
}

/* The entry of the statement whose executor memory is "cxt", if any. */
static SimhashStmtTargets *
SimhashFindStmtTargets(MemoryContext cxt)
{
	dlist_iter	iter;

	dlist_foreach(iter, &stmt_targets)
	{
		SimhashStmtTargets *t = dlist_container(SimhashStmtTargets, node, iter.cur);

		if (t->cxt == cxt)
			return t;
	}
	return NULL;
}

/*
 * Note, for the triggers of a statement about to run, the tables it writes
 * through a name that needs SELECT rights.  Each ModifyTable of the
 * statement, at the top of the plan or of a sub-plan (a WITH query), names
 * its target in nominalRelation: the range table entry whose permissions
 * the rewriter read to add the SELECT policies.  The entry lives in the
 * statement's executor memory and is unlinked when that memory goes away,
 * at the end of the statement or on error, so no address is ever stale.
 * (At ExecutorRun, not ExecutorStart: the library is often loaded inside
 * ExecutorStart, when the executor opens the table's simhash index.)
 */
static void
SimhashNoteStatementTargets(QueryDesc *queryDesc)
{
	PlannedStmt *stmt = queryDesc->plannedstmt;
	EState	   *estate = queryDesc->estate;
	List	   *plans;
	ListCell   *lc;
	MemoryContext old;
	SimhashStmtTargets *t;

	if (estate == NULL || (stmt->commandType == CMD_SELECT && !stmt->hasModifyingCTE) ||
		SimhashFindStmtTargets(estate->es_query_cxt) != NULL)
		return;
	old = MemoryContextSwitchTo(estate->es_query_cxt);
	t = palloc0(sizeof(SimhashStmtTargets));
	t->cxt = estate->es_query_cxt;
	plans = lcons(stmt->planTree, list_copy(stmt->subplans));
	foreach(lc, plans)
	{
		ModifyTable *mt = lfirst(lc);
		RangeTblEntry *rte;

		if (mt == NULL || !IsA(mt, ModifyTable) ||
			(mt->operation != CMD_INSERT && mt->operation != CMD_UPDATE &&
			 mt->operation != CMD_MERGE) ||
			mt->nominalRelation <= 0)
			continue;
		rte = rt_fetch(mt->nominalRelation, stmt->rtable);
		if (rte->rtekind != RTE_RELATION || !SimhashRteNeedsSelect(stmt, rte))
			continue;
		/* MERGE adds the SELECT policies to its UPDATE actions' rows only */
		if (mt->operation != CMD_MERGE)
			t->insert_relids = list_append_unique_oid(t->insert_relids, rte->relid);
		t->update_relids = list_append_unique_oid(t->update_relids, rte->relid);
	}
	t->forget.func = SimhashForgetStmtTargets;
	t->forget.arg = t;
	dlist_push_head(&stmt_targets, &t->node);
	MemoryContextRegisterResetCallback(estate->es_query_cxt, &t->forget);
	MemoryContextSwitchTo(old);
}

/* ExecutorRun hook: note the statement's targets, then run it (18: no execute_once). */
static void
SimhashRlsExecutorRun(SIMHASH_EXECUTOR_RUN_PARAMS)
{
	SimhashNoteStatementTargets(queryDesc);
	if (prev_RlsExecutorRun)
		SimhashExecutorRunNext(prev_RlsExecutorRun);
	else
		SimhashExecutorRunNext(standard_ExecutorRun);
}

/* Install the executor hook (from _PG_init). */
void
SimhashInstallRowSecurityHook(void)
{
	if (IsTransactionState())
	{
		loaded_xact_start = GetCurrentTransactionStartTimestamp();
		loaded_stmt_start = GetCurrentStatementStartTimestamp();
	}
	prev_RlsExecutorRun = ExecutorRun_hook;
	ExecutorRun_hook = SimhashRlsExecutorRun;
}

/*
 * The tables whose SELECT policies apply to new rows of "cmd" (INSERT or
 * UPDATE) in the statement whose executor memory is "cxt".  *known is false
 * for a statement that may have started before the library was loaded.
 */
List *
SimhashStatementSelectTargets(MemoryContext cxt, CmdType cmd, bool *known)
{
	SimhashStmtTargets *t = SimhashFindStmtTargets(cxt);

	*known = true;
	if (t != NULL)
		return cmd == CMD_INSERT ? t->insert_relids : t->update_relids;
	if (loaded_xact_start == GetCurrentTransactionStartTimestamp() &&
		loaded_stmt_start == GetCurrentStatementStartTimestamp())
		*known = false;
	return NIL;
}
