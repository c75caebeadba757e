-- bench/planner/measure.sql -- planning and execution times of the radius
-- query spellings, and the self-join that lists all near-duplicate pairs.
-- Prints CSV-like result lines "metric,value".
\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET jit = off;

-- server-side timing helpers
CREATE OR REPLACE FUNCTION pl_time_explain(query text, n int) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz; ts float8[] := '{}';
BEGIN
	FOR i IN 1 .. n LOOP
		t0 := clock_timestamp();
		EXECUTE 'EXPLAIN ' || query;
		ts := ts || extract(epoch FROM clock_timestamp() - t0) * 1000;
	END LOOP;
	RETURN (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(ts) x);
END $$;
CREATE OR REPLACE FUNCTION pl_exec_ms(query text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE plan json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ' || query INTO plan;
	RETURN (plan -> 0 ->> 'Execution Time')::float8;
END $$;
-- wall time of running a query to its end in the server, without EXPLAIN
-- ANALYZE's per-row instrumentation (which would weigh on tens of millions
-- of joined rows)
CREATE OR REPLACE FUNCTION pl_run_ms(query text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz; r record;
BEGIN
	t0 := clock_timestamp();
	EXECUTE query INTO r;
	RETURN extract(epoch FROM clock_timestamp() - t0) * 1000;
END $$;
-- "SimhashJoin" if the band join runs the query, else "other"
CREATE OR REPLACE FUNCTION pl_top_join(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
		IF line LIKE '%Custom Scan (SimhashJoin)%' THEN
			RETURN 'SimhashJoin';
		END IF;
	END LOOP;
	RETURN 'other';
END $$;
CREATE OR REPLACE FUNCTION pl_exec_p50(template text, n int) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE ts float8[] := '{}'; q text;
BEGIN
	FOR i IN 1 .. n LOOP
		SELECT fp::text INTO q FROM pl_sim WHERE id = (SELECT (1 + (i * 7919) % 10000) * 100 + 1 + i % 90);
		ts := ts || pl_exec_ms(replace(template, '$Q', quote_literal(q)));
	END LOOP;
	RETURN (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(ts) x);
END $$;

\pset format unaligned
\pset tuples_only on
\pset fieldsep ','

-- warm the caches
SELECT count(*) FROM pl_sim WHERE fp <@ simhash_ball('0123456789abcdef', 0) \g /dev/null
SELECT count(*) FROM pl_sim \g /dev/null

SELECT 'plan_ms_distance_le', pl_time_explain($$SELECT id FROM pl_sim WHERE fp <-> '0123456789abcdef' <= 3$$, 500);
SELECT 'plan_ms_ball', pl_time_explain($$SELECT id FROM pl_sim WHERE fp <@ simhash_ball('0123456789abcdef', 3)$$, 500);
SELECT 'plan_ms_within_fn', pl_time_explain($$SELECT id FROM pl_sim WHERE simhash_within(fp, '0123456789abcdef', 3)$$, 500);
SELECT 'plan_ms_no_simhash_index', pl_time_explain($$SELECT id FROM pl_btree WHERE bit_count((fp # 81985529216486895)::bit(64)) <= 3$$, 500);
SELECT 'plan_ms_plain_pkey', pl_time_explain($$SELECT v FROM pl_plain WHERE id = 42$$, 500);

SELECT 'exec_ms_p50_distance_le', pl_exec_p50($$SELECT id FROM pl_sim WHERE fp <-> $Q <= 3$$, 200);
SELECT 'exec_ms_p50_ball', pl_exec_p50($$SELECT id FROM pl_sim WHERE fp <@ simhash_ball($Q, 3)$$, 200);

-- all near-duplicate pairs at k = 3 (one process, as everything here): the
-- plan the planner picks (the band join, SimhashJoin), the nested loop over
-- the simhash index without it, and the same join over the four btrees
SELECT 'selfjoin_plan', pl_top_join($$SELECT count(*) FROM pl_sim a JOIN pl_sim b ON a.fp <-> b.fp <= 3 AND a.id < b.id$$);
SELECT 'selfjoin_pairs', (SELECT count(*) FROM pl_sim a JOIN pl_sim b ON a.fp <-> b.fp <= 3 AND a.id < b.id);
SELECT 'selfjoin_ms_simhash', pl_run_ms($$SELECT count(*) FROM pl_sim a JOIN pl_sim b ON a.fp <-> b.fp <= 3 AND a.id < b.id$$);
SET simhash.enable_join = off;
SELECT 'selfjoin_ms_simhash_nestloop', pl_run_ms($$SELECT count(*) FROM pl_sim a JOIN pl_sim b ON a.fp <-> b.fp <= 3 AND a.id < b.id$$);
RESET simhash.enable_join;
SELECT 'probe_every_row_ms', pl_run_ms($$SELECT sum((SELECT count(*) FROM pl_sim b WHERE b.fp <@ simhash_ball(a.fp, 3))) FROM pl_sim a$$);
SELECT 'selfjoin_ms_btree4', pl_run_ms($$SELECT count(*) FROM pl_btree a JOIN pl_btree b
	ON (((b.fp >> 48) & 65535) = ((a.fp >> 48) & 65535) OR ((b.fp >> 32) & 65535) = ((a.fp >> 32) & 65535)
	 OR ((b.fp >> 16) & 65535) = ((a.fp >> 16) & 65535) OR (b.fp & 65535) = (a.fp & 65535))
	AND bit_count((a.fp # b.fp)::bit(64)) <= 3 AND a.id < b.id$$);
SELECT 'selfjoin_ms_simhash', pl_run_ms($$SELECT count(*) FROM pl_sim a JOIN pl_sim b ON a.fp <-> b.fp <= 3 AND a.id < b.id$$);
-- the same two joins with the copies of a centre scattered over the heap
SELECT 'selfjoin_ms_simhash_shuffled', pl_run_ms($$SELECT count(*) FROM pl_sim_shuffled a JOIN pl_sim_shuffled b ON a.fp <-> b.fp <= 3 AND a.id < b.id$$);
SELECT 'selfjoin_ms_btree4_shuffled', pl_run_ms($$SELECT count(*) FROM pl_btree_shuffled a JOIN pl_btree_shuffled b
	ON (((b.fp >> 48) & 65535) = ((a.fp >> 48) & 65535) OR ((b.fp >> 32) & 65535) = ((a.fp >> 32) & 65535)
	 OR ((b.fp >> 16) & 65535) = ((a.fp >> 16) & 65535) OR (b.fp & 65535) = (a.fp & 65535))
	AND bit_count((a.fp # b.fp)::bit(64)) <= 3 AND a.id < b.id$$);
-- with two parallel workers (the default setting) both plans go parallel
SET max_parallel_workers_per_gather = 2;
SELECT 'selfjoin_ms_simhash_parallel2', pl_run_ms($$SELECT count(*) FROM pl_sim a JOIN pl_sim b ON a.fp <-> b.fp <= 3 AND a.id < b.id$$);
SELECT 'selfjoin_ms_btree4_parallel2', pl_run_ms($$SELECT count(*) FROM pl_btree a JOIN pl_btree b
	ON (((b.fp >> 48) & 65535) = ((a.fp >> 48) & 65535) OR ((b.fp >> 32) & 65535) = ((a.fp >> 32) & 65535)
	 OR ((b.fp >> 16) & 65535) = ((a.fp >> 16) & 65535) OR (b.fp & 65535) = (a.fp & 65535))
	AND bit_count((a.fp # b.fp)::bit(64)) <= 3 AND a.id < b.id$$);
SELECT 'selfjoin_ms_simhash_parallel2', pl_run_ms($$SELECT count(*) FROM pl_sim a JOIN pl_sim b ON a.fp <-> b.fp <= 3 AND a.id < b.id$$);
SET max_parallel_workers_per_gather = 0;
-- without an index (and without the band join, which needs none): a nested
-- loop over all pairs; measured on 1,000 outer rows and scaled
SET enable_indexscan = off; SET enable_bitmapscan = off; SET simhash.enable_join = off;
SELECT 'selfjoin_ms_no_index_per_1000_outer', pl_run_ms($$SELECT count(*) FROM (SELECT * FROM pl_sim ORDER BY id LIMIT 1000) a JOIN pl_sim b ON a.fp <-> b.fp <= 3 AND a.id < b.id$$);
RESET enable_indexscan; RESET enable_bitmapscan; RESET simhash.enable_join;

