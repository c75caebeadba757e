-- bench/clusters/measure.sql -- simhash_clusters at k = 3 against the band
-- self-join that lists the same rows' pairs, in one session, alternating.
--   psql -v tab=cl_1m -v rounds=3 -f measure.sql
-- Prints "metric,value" lines.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET jit = off;
-- room for 10M rows: the band join's inner side in one batch (hash_mem,
-- work_mem x hash_mem_multiplier: 2 GB) and simhash_clusters' arrays
-- (maintenance_work_mem); work_mem itself stays at its default, 4 MB, which
-- bounds simhash_clusters' result in memory (the rest goes to a temporary
-- file, as for any set-returning function in FROM)
SET work_mem = '4MB';
SET hash_mem_multiplier = 500;
SET maintenance_work_mem = '1GB';

-- wall time of running a query to its end in the server
CREATE OR REPLACE FUNCTION cl_run_ms(query text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz; r record;
BEGIN
	t0 := clock_timestamp();
	EXECUTE query INTO r;
	RETURN extract(epoch FROM clock_timestamp() - t0) * 1000;
END $$;
-- "SimhashJoin" if the band join runs the query, else "other"
CREATE OR REPLACE FUNCTION cl_top_join(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
		IF line LIKE '%Custom Scan (SimhashJoin)%' THEN
			RETURN 'SimhashJoin';
		END IF;
	END LOOP;
	RETURN 'other';
END $$;

\pset format unaligned
\pset tuples_only on
\pset fieldsep ','
\set join 'SELECT count(*) FROM ' :tab ' a JOIN ' :tab ' b ON a.fp <-> b.fp <= 3 AND a.id < b.id'
\set clusters 'SELECT count(*) FILTER (WHERE size > 1) AS clustered_rows, count(*) FILTER (WHERE size > 1 AND id = cluster) AS clusters, max(size) AS largest FROM simhash_clusters(''SELECT id, fp FROM ' :tab ''', 3)'

SELECT 'rows', count(*) FROM :tab;
SELECT 'join_plan', cl_top_join(:'join');
SELECT 'join_pairs', (:join) AS pairs;
SELECT 'clusters_result', clustered_rows || ' rows in ' || clusters || ' clusters of 2+, largest ' || largest FROM (:clusters) x;
SELECT 'rounds', :rounds;
SELECT 'join_ms', cl_run_ms(:'join'), 'clusters_ms', cl_run_ms(:'clusters') FROM generate_series(1, :rounds);
-- the result kept in memory (work_mem 1 GB; the band join does not use
-- work_mem but through hash_mem, 2 GB either way)
SET work_mem = '1GB';
SET hash_mem_multiplier = 2;
SELECT 'join_ms_work_mem_1GB', cl_run_ms(:'join'), 'clusters_ms_work_mem_1GB', cl_run_ms(:'clusters');
