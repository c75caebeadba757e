-- sql_tests/fuzz/known_failures.sql -- minimal reproductions of defects the SQL
-- fuzzer found in src/ that are not fixed yet (fuzz/neardup.py KNOWN_FAILURES).
-- The fuzzer avoids the statements that trigger them unless SIMHASH_FUZZ_KNOWN=1.
-- Run as any role that may create a table: psql -f sql_tests/fuzz/known_failures.sql

-- 1. scope_null_update: server crash (SIGSEGV, every backend restarts).
-- An UPDATE that sets a scope column of a by-reference type (text) to NULL, on a
-- row whose value was not NULL.  SimhashRowScope() stops at the first NULL scope
-- value and leaves (Datum) 0 / unset entries in scope[]; SimhashUpdateKeepsCheck()
-- then calls the type's equality function on every scope column with the old value
-- and that Datum, and texteq dereferences a NULL pointer
-- (src/trigger_neardup.c, SimhashUpdateKeepsCheck).  With scope=a,b and a NULL,
-- b's entry is not even set.
CREATE TABLE scope_null (id int PRIMARY KEY, fp simhash64, site text);
CREATE INDEX ON scope_null USING simhash (fp);
CREATE TRIGGER n BEFORE INSERT OR UPDATE ON scope_null FOR EACH ROW
    EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'reject', 'scope=site');
INSERT INTO scope_null VALUES (1, '0000000000000000', 'a');
UPDATE scope_null SET site = NULL WHERE id = 1;   -- the server crashes here
DROP TABLE scope_null;
