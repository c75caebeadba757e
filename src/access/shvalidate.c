/*-------------------------------------------------------------------------
 *
 * shvalidate.c
 *	  amvalidate for the simhash operator classes.
 *
 * Strategies 1 (<@), 2 (<->) and 3 (=), no support functions.  See
 * src/README, "Verification".
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/access/shvalidate.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/amvalidate.h"
#include "access/htup_details.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_amproc.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/syscache.h"

#include "shindex.h"

/*
 * amvalidate: check the operators and functions of an operator class.
 */
bool
shvalidate(Oid opclassoid)
{
	bool		result = true;
	HeapTuple	classtup;
	Form_pg_opclass classform;
	Oid			opcintype;
	HeapTuple	familytup;
	char	   *familyname;
	CatCList   *oprlist;
	CatCList   *proclist;
	bool		seen[SIMHASH_NSTRATEGIES + 1] = {false};

	classtup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclassoid));
	if (!HeapTupleIsValid(classtup))
		elog(ERROR, "cache lookup failed for operator class %u", opclassoid);
	classform = (Form_pg_opclass) GETSTRUCT(classtup);
	opcintype = classform->opcintype;
	familytup = SearchSysCache1(OPFAMILYOID, ObjectIdGetDatum(classform->opcfamily));
	if (!HeapTupleIsValid(familytup))
		elog(ERROR, "cache lookup failed for operator family %u", classform->opcfamily);
	familyname = NameStr(((Form_pg_opfamily) GETSTRUCT(familytup))->opfname);

	oprlist = SearchSysCacheList1(AMOPSTRATEGY, ObjectIdGetDatum(classform->opcfamily));
	proclist = SearchSysCacheList1(AMPROCNUM, ObjectIdGetDatum(classform->opcfamily));

	for (int i = 0; i < proclist->n_members; i++)
	{
		Form_pg_amproc procform = (Form_pg_amproc) GETSTRUCT(&proclist->members[i]->tuple);

		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("simhash operator family %s contains support function %s",
						familyname, format_procedure(procform->amproc)),
				 errdetail("The simhash access method uses no support functions.")));
		result = false;
	}

	for (int i = 0; i < oprlist->n_members; i++)
	{
		Form_pg_amop op = (Form_pg_amop) GETSTRUCT(&oprlist->members[i]->tuple);
		bool		ok;

		switch (op->amopstrategy)
		{
			case SIMHASH_WITHIN_STRATEGY:
				ok = op->amoppurpose == AMOP_SEARCH &&
					op->amoplefttype == opcintype &&
					SimhashIsBallType(op->amoprighttype) &&
					check_amop_signature(op->amopopr, BOOLOID,
										 op->amoplefttype, op->amoprighttype);
				break;
			case SIMHASH_DISTANCE_STRATEGY:
				ok = op->amoppurpose == AMOP_ORDER &&
					op->amoplefttype == opcintype &&
					op->amoprighttype == opcintype &&
					OidIsValid(op->amopsortfamily) &&
					check_amop_signature(op->amopopr, INT4OID,
										 op->amoplefttype, op->amoprighttype);
				break;
			case SIMHASH_EQUAL_STRATEGY:
				ok = op->amoppurpose == AMOP_SEARCH &&
					op->amoplefttype == opcintype &&
					op->amoprighttype == opcintype &&
					check_amop_signature(op->amopopr, BOOLOID,
										 op->amoplefttype, op->amoprighttype);
				break;
			default:
				ereport(INFO,
						(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
						 errmsg("simhash operator family %s contains operator %s with invalid strategy number %d",
								familyname, format_operator(op->amopopr), op->amopstrategy),
						 errdetail("The strategy numbers are 1 (<@), 2 (<->) and 3 (=).")));
				result = false;
				continue;
		}
		if (!ok)
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("simhash operator family %s contains operator %s with wrong signature for strategy %d",
							familyname, format_operator(op->amopopr), op->amopstrategy),
					 errdetail("The operator does not have the argument types, result type or purpose that strategy %d needs.",
							   op->amopstrategy)));
			result = false;
		}
		else if (op->amoplefttype == opcintype)
			seen[op->amopstrategy] = true;
	}

	if (!seen[SIMHASH_WITHIN_STRATEGY])
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("simhash operator class %s is missing the <@ operator (strategy 1)",
						NameStr(classform->opcname))));
		result = false;
	}

	ReleaseCatCacheList(proclist);
	ReleaseCatCacheList(oprlist);
	ReleaseSysCache(familytup);
	ReleaseSysCache(classtup);
	return result;
}
