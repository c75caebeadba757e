-- bench/scaleout/citus_guide.sql -- the README's Citus guide, statement by
-- statement, on a coordinator (127.0.0.1:26000) and two workers (26001,
-- 26002) that have the simhash and Citus packages installed,
-- shared_preload_libraries = 'citus' and CREATE EXTENSION citus already run.
-- Run with psql -e on the coordinator; the transcript is CITUS.md.
-- bench/scaleout/citus_cluster.sh starts such a cluster.
\set ON_ERROR_STOP off
SELECT citus_version();
SELECT version();
SELECT citus_set_coordinator_host('127.0.0.1', 26000);
SELECT citus_add_node('127.0.0.1', 26001);
SELECT citus_add_node('127.0.0.1', 26002);
CREATE EXTENSION simhash;
SELECT nodeport, success, result FROM run_command_on_workers(
	$$SELECT extversion FROM pg_extension WHERE extname = 'simhash'$$) ORDER BY 1;

-- Everything simhash defines belongs to the extension, on every node: its
-- members by catalog, and the functions, operators and types (other than
-- tables' row types: Citus has views in public) of the schema that belong to
-- no extension
SELECT classid::regclass AS catalog, count(*) AS members
FROM pg_depend WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
  AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'simhash')
GROUP BY 1 ORDER BY 1;
SELECT nodeport, result FROM run_command_on_workers($$
	SELECT string_agg(classid::regclass || ' ' || n, ', ' ORDER BY classid::regclass::text)
	FROM (SELECT classid, count(*) n FROM pg_depend WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
		    AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'simhash') GROUP BY 1) s$$) ORDER BY 1;
SELECT (SELECT count(*) FROM pg_proc p WHERE pronamespace = 'public'::regnamespace
		AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'))
	 + (SELECT count(*) FROM pg_type t WHERE typnamespace = 'public'::regnamespace
		AND t.typrelid = 0 AND NOT EXISTS (SELECT FROM pg_type e WHERE e.oid = t.typelem AND e.typrelid <> 0)
		AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_type'::regclass AND d.objid = t.oid AND d.deptype = 'e')
		AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_type'::regclass AND d.objid = t.typelem AND d.deptype = 'e'))
	 + (SELECT count(*) FROM pg_operator o WHERE oprnamespace = 'public'::regnamespace
		AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_operator'::regclass AND d.objid = o.oid AND d.deptype = 'e'))
	   AS objects_outside_the_extension;
-- the functions that are not IMMUTABLE: none of them appears in a query
SELECT p.oid::regprocedure AS function, p.provolatile AS volatility
FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'simhash') AND p.provolatile <> 'i'
ORDER BY 1::text;

-- a distributed table with its simhash index on every shard
CREATE FUNCTION body_of(d int8) RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT string_agg('w' || (hashint8(CASE WHEN j = d % 10 * 4 AND d % 10 > 0
											THEN d * 100 + j ELSE d / 10 * 100 + j END) & 1023)::text,
					  ' ' ORDER BY j)
	FROM generate_series(0, 39) j
$$;
CREATE TABLE docs (id bigint PRIMARY KEY, body text NOT NULL,
				   fp simhash64 GENERATED ALWAYS AS (simhash(body)) STORED);
SELECT create_distributed_table('docs', 'id');
CREATE INDEX docs_fp ON docs USING simhash (fp);
SELECT nodeport, result FROM run_command_on_workers(
	$$SELECT count(*) FROM pg_indexes WHERE indexname LIKE 'docs_fp_%'$$) ORDER BY 1;
INSERT INTO docs (id, body) SELECT i, body_of(i) FROM generate_series(1, 20000) i;
ANALYZE docs;
-- the single-node reference for the results below
CREATE TABLE docs_single AS SELECT id, fp FROM docs;
CREATE INDEX ON docs_single USING simhash (fp);

-- radius: every shard, through its index
EXPLAIN (VERBOSE, COSTS OFF) SELECT id FROM docs WHERE fp <-> simhash(body_of(1230)) <= 3;
SELECT id, fp <-> simhash(body_of(1230)) AS distance FROM docs WHERE fp <-> simhash(body_of(1230)) <= 3 ORDER BY id;
SELECT id, fp <-> simhash(body_of(1230)) AS distance FROM docs_single WHERE fp <-> simhash(body_of(1230)) <= 3 ORDER BY id;
PREPARE radius(text) AS SELECT id FROM docs WHERE fp <-> simhash($1) <= 3;
EXPLAIN (COSTS OFF) EXECUTE radius('w1 w2 w3');
-- nearest: LIMIT per shard
EXPLAIN (COSTS OFF) SELECT id, fp <-> simhash(body_of(4567)) AS d FROM docs ORDER BY fp <-> simhash(body_of(4567)) LIMIT 10;
SELECT string_agg(d::text, ',') AS distances FROM
	(SELECT fp <-> simhash(body_of(4567)) AS d FROM docs ORDER BY fp <-> simhash(body_of(4567)) LIMIT 10) s;
SELECT string_agg(d::text, ',') AS distances FROM
	(SELECT fp <-> simhash(body_of(4567)) AS d FROM docs_single ORDER BY fp <-> simhash(body_of(4567)) LIMIT 10) s;
-- the all-pairs self-join is refused
SELECT a.id, b.id FROM docs a JOIN docs b ON a.fp <-> b.fp <= 3 AND a.id < b.id;
-- the single-node pairs, for comparison
\timing on
SELECT count(*) AS pairs, sum(a.fp <-> b.fp) AS distances
FROM docs_single a JOIN docs_single b ON a.fp <-> b.fp <= 3 AND a.id < b.id;
\timing off

-- 1. copies grouped by block, distributed by group: co-located self-join
CREATE TABLE doc_copies (grp int4 NOT NULL, id bigint NOT NULL, fp simhash64 NOT NULL);
SELECT create_distributed_table('doc_copies', 'grp');
INSERT INTO doc_copies SELECT DISTINCT k % 256, id, fp FROM docs, unnest(simhash_blocks(fp)) k;
SELECT count(*) AS copies, count(DISTINCT id) AS documents FROM doc_copies;
-- how the groups spread over the 32 shards: 256 groups, and for comparison
-- the 32 groups of k % 32
SELECT count(*) FILTER (WHERE result::int > 0) AS shards_with_copies, min(result::int) AS fewest,
	   max(result::int) AS most
FROM run_command_on_shards('doc_copies', 'SELECT count(*) FROM %s');
SELECT count(DISTINCT get_shard_id_for_distribution_column('doc_copies', g)) AS shards_holding_32_groups
FROM generate_series(0, 31) g;
EXPLAIN (COSTS OFF)
SELECT a.id AS id1, b.id AS id2, a.fp <-> b.fp AS distance
FROM doc_copies a JOIN doc_copies b ON a.grp = b.grp AND a.fp <-> b.fp <= 3 AND a.id < b.id
WHERE simhash_shared_block(a.fp, b.fp) % 256 = a.grp;
\timing on
SELECT count(*) AS pairs, sum(distance) AS distances FROM (
SELECT a.id AS id1, b.id AS id2, a.fp <-> b.fp AS distance
FROM doc_copies a JOIN doc_copies b ON a.grp = b.grp AND a.fp <-> b.fp <= 3 AND a.id < b.id
WHERE simhash_shared_block(a.fp, b.fp) % 256 = a.grp) s;
\timing off
-- every pair once, the single node's pairs exactly
SELECT count(*) AS pairs_not_on_single_node FROM (
	SELECT a.id, b.id FROM doc_copies a JOIN doc_copies b ON a.grp = b.grp AND a.fp <-> b.fp <= 3 AND a.id < b.id
	WHERE simhash_shared_block(a.fp, b.fp) % 256 = a.grp
	EXCEPT ALL
	SELECT a.id, b.id FROM docs_single a JOIN docs_single b ON a.fp <-> b.fp <= 3 AND a.id < b.id) s;

-- 2. stored block columns as repartition join keys (minutes: psql -v skip_form2=1 skips it)
\if :{?skip_form2}
\echo 'form 2 skipped (-v skip_form2=1)'
\else
ALTER TABLE docs ADD COLUMN b0 int4 GENERATED ALWAYS AS (simhash_block(simhash(body), 0)) STORED,
				 ADD COLUMN b1 int4 GENERATED ALWAYS AS (simhash_block(simhash(body), 1)) STORED,
				 ADD COLUMN b2 int4 GENERATED ALWAYS AS (simhash_block(simhash(body), 2)) STORED,
				 ADD COLUMN b3 int4 GENERATED ALWAYS AS (simhash_block(simhash(body), 3)) STORED;
SET citus.enable_repartition_joins = on;
\timing on
SELECT count(*) AS pairs, sum(d) AS distances FROM (
SELECT a.id, b.id, a.fp <-> b.fp AS d FROM docs a JOIN docs b ON a.b0 = b.b0 WHERE a.id < b.id AND a.fp <-> b.fp <= 3
UNION ALL
SELECT a.id, b.id, a.fp <-> b.fp FROM docs a JOIN docs b ON a.b1 = b.b1
 WHERE a.id < b.id AND a.fp <-> b.fp <= 3 AND a.b0 <> b.b0
UNION ALL
SELECT a.id, b.id, a.fp <-> b.fp FROM docs a JOIN docs b ON a.b2 = b.b2
 WHERE a.id < b.id AND a.fp <-> b.fp <= 3 AND a.b0 <> b.b0 AND a.b1 <> b.b1
UNION ALL
SELECT a.id, b.id, a.fp <-> b.fp FROM docs a JOIN docs b ON a.b3 = b.b3
 WHERE a.id < b.id AND a.fp <-> b.fp <= 3 AND a.b0 <> b.b0 AND a.b1 <> b.b1 AND a.b2 <> b.b2) s;
\timing off
RESET citus.enable_repartition_joins;
\endif

-- 3. a small probe set broadcast through a MATERIALIZED CTE
EXPLAIN (COSTS OFF)
WITH probe AS MATERIALIZED (SELECT id, fp FROM docs WHERE id > 19990)
SELECT p.id AS probe, d.id, d.fp <-> p.fp AS distance
FROM probe p JOIN docs d ON d.fp <-> p.fp <= 3 AND d.id <> p.id;
WITH probe AS MATERIALIZED (SELECT id, fp FROM docs WHERE id > 19990)
SELECT p.id AS probe, d.id, d.fp <-> p.fp AS distance
FROM probe p JOIN docs d ON d.fp <-> p.fp <= 3 AND d.id <> p.id ORDER BY 1, 2;
SELECT p.id AS probe, d.id, d.fp <-> p.fp AS distance
FROM docs_single p JOIN docs_single d ON d.fp <-> p.fp <= 3 AND d.id <> p.id WHERE p.id > 19990 ORDER BY 1, 2;

-- insert-time check on the coordinator: lock the block keys, look, insert
-- (and keep form 1's copies current in the same transaction)
CREATE FUNCTION docs_add(new_id bigint, new_body text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	new_fp simhash64 := simhash(new_body);
	other bigint;
	failed text;
BEGIN
	-- near-copies within 3 share a block: serialise on the four (block number, block) keys
	PERFORM pg_advisory_xact_lock(4242, b << 16 | simhash_block(new_fp, b))
	FROM generate_series(0, 3) b ORDER BY b;
	-- what this transaction sees, its own rows included
	SELECT id INTO other FROM docs WHERE fp <-> new_fp <= 3 LIMIT 1;
	IF FOUND THEN
		RAISE EXCEPTION 'near-duplicate of document %', other USING ERRCODE = '23P01';
	END IF;
	-- Above READ COMMITTED the workers' snapshots were taken by the transaction's
	-- first statement, maybe before the lock was granted: look again through
	-- new connections (run_command_on_shards), which see everything committed.
	IF current_setting('transaction_isolation') <> 'read committed' THEN
		SELECT string_agg(result, ', ') FILTER (WHERE NOT success),
			   min(result::bigint) FILTER (WHERE success AND result <> '')
		INTO failed, other
		FROM run_command_on_shards('docs', format(
			'SELECT min(id) FROM (SELECT id FROM %%s WHERE fp <-> %L::simhash64 <= 3 LIMIT 1) s', new_fp));
		IF failed IS NOT NULL THEN
			RAISE EXCEPTION 'could not check the shards for near-duplicates: %', failed
				USING ERRCODE = '58000';
		END IF;
		IF other IS NOT NULL THEN
			RAISE EXCEPTION 'could not serialize access due to a concurrent near-duplicate insert'
				USING ERRCODE = '40001',
				DETAIL = format('Document %s, within 3 bits, was committed after this transaction''s snapshot.', other),
				HINT = 'Retry the transaction.';
		END IF;
	END IF;
	INSERT INTO docs (id, body) VALUES (new_id, new_body);
	INSERT INTO doc_copies SELECT DISTINCT k % 256, new_id, new_fp FROM unnest(simhash_blocks(new_fp)) k;
	RETURN new_id;
END $$;
-- a new document and a near-copy of it
SELECT c * 10 AS base, c * 10 + j AS copy, simhash(body_of(c * 10)) <-> simhash(body_of(c * 10 + j)) AS distance
FROM generate_series(90000, 90100) c, generate_series(1, 9) j
WHERE simhash(body_of(c * 10)) <-> simhash(body_of(c * 10 + j)) BETWEEN 1 AND 3 ORDER BY 1, 2 LIMIT 1 \gset
SELECT :base AS base, :copy AS copy, :distance AS distance;
SELECT docs_add(:base, body_of(:base));
SELECT docs_add(:copy, body_of(:copy));
SELECT docs_add(900100, 'something else entirely');
SELECT id, get_shard_id_for_distribution_column('docs', id) AS shard FROM docs WHERE id >= 900000 ORDER BY id;
SELECT get_shard_id_for_distribution_column('docs', :copy) AS shard_the_copy_would_go_to;
-- as the first statement of a REPEATABLE READ transaction: both looks run
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT docs_add(900200, 'another new document, checked twice');
SELECT docs_add(:copy, body_of(:copy));
ROLLBACK;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT docs_add(900200, 'another new document, checked twice');
COMMIT;
-- docs_add kept the copies current: form 1 still reports the single node's pairs
INSERT INTO docs_single SELECT id, fp FROM docs WHERE id >= 900000;
SELECT (SELECT count(*) FROM doc_copies a JOIN doc_copies b ON a.grp = b.grp AND a.fp <-> b.fp <= 3 AND a.id < b.id
		WHERE simhash_shared_block(a.fp, b.fp) % 256 = a.grp) AS pairs,
	   (SELECT count(*) FROM docs_single a JOIN docs_single b ON a.fp <-> b.fp <= 3 AND a.id < b.id) AS single_node_pairs,
	   (SELECT count(*) FROM doc_copies WHERE id >= 900000) AS copies_of_new_documents;

-- the near-duplicate trigger on a distributed table: refused, and with
-- citus.enable_unsafe_triggers it checks the new row's shard only
CREATE TRIGGER docs_neardup BEFORE INSERT ON docs
	FOR EACH ROW EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'reject');
SET citus.enable_unsafe_triggers = on;
CREATE TRIGGER docs_neardup BEFORE INSERT ON docs
	FOR EACH ROW EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'reject');
SELECT i AS id, get_shard_id_for_distribution_column('docs', i) AS shard,
	   get_shard_id_for_distribution_column('docs', 1230) AS shard_of_1230
FROM generate_series(900300, 900301) i;
INSERT INTO docs (id, body) VALUES (900300, body_of(1230));	-- an exact copy of 1230
INSERT INTO docs (id, body) VALUES (900301, body_of(1230));
SELECT id FROM docs WHERE id IN (900300, 900301) ORDER BY id;
DELETE FROM docs WHERE id IN (900300, 900301);
DROP TRIGGER docs_neardup ON docs;
RESET citus.enable_unsafe_triggers;

-- the settings, and where a session SET goes
SELECT name, setting, context, short_desc FROM pg_settings WHERE name LIKE 'simhash.%' ORDER BY 1;
SHOW citus.propagate_set_commands;
SET simhash.enable_join = off;	-- stays on the coordinator: the shards still plan the band join
EXPLAIN (COSTS OFF) SELECT a.id, b.id FROM doc_copies a JOIN doc_copies b
	ON a.grp = b.grp AND a.fp <-> b.fp <= 3 AND a.id < b.id WHERE simhash_shared_block(a.fp, b.fp) % 256 = a.grp;
RESET simhash.enable_join;
SET citus.propagate_set_commands = 'local';
BEGIN;
SET LOCAL simhash.enable_join = off;	-- reaches the shards for this transaction
EXPLAIN (COSTS OFF) SELECT a.id, b.id FROM doc_copies a JOIN doc_copies b
	ON a.grp = b.grp AND a.fp <-> b.fp <= 3 AND a.id < b.id WHERE simhash_shared_block(a.fp, b.fp) % 256 = a.grp;
COMMIT;
RESET citus.propagate_set_commands;

-- inspection functions see the coordinator's empty shell: run them on the shards
SELECT * FROM simhash_index_stats('docs_fp');
SELECT shardid, success, result FROM run_command_on_shards('docs', $$
	SELECT simhash_index_check(i.indexrelid, true)::text || ' ' || count(*) OVER ()
	FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
	WHERE i.indrelid = '%s'::regclass AND a.amname = 'simhash'$$) ORDER BY shardid LIMIT 4;
SELECT count(*) FILTER (WHERE success) AS shards_checked, count(*) AS shards
FROM run_command_on_shards('docs', $$
	SELECT simhash_index_check(i.indexrelid, true) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
	JOIN pg_am a ON a.oid = c.relam WHERE i.indrelid = '%s'::regclass AND a.amname = 'simhash'$$);
