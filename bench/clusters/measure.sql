-- bench/clusters/measure.sql -- simhash_clusters at k = 3 against the band
-- self-join that lists the same rows' pairs, in one session, alternating.
--   psql -v tab=cl_1m -v rounds=3 -v extra=0 -f measure.sql
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

-- CPU time (user + system) of this backend so far, in ms, from
-- /proc/self/stat (in clock ticks of 10 ms): unlike wall time, it does not
-- grow when other processes share the machine's two cores
CREATE OR REPLACE FUNCTION cl_cpu_ms() RETURNS float8 LANGUAGE sql AS $$
	SELECT (f[14]::float8 + f[15]::float8) * 10
	FROM regexp_split_to_array(split_part(pg_read_file('/proc/self/stat'), ') ', 2), ' ') AS s(g),
		 LATERAL (SELECT array['', ''] || g AS f) x
$$;
-- wall time and CPU time of running a query to its end in the server, and
-- its one-row result as text
CREATE OR REPLACE FUNCTION cl_run(query text, OUT wall_ms float8, OUT cpu_ms float8, OUT result text)
LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz; c0 float8; r record;
BEGIN
	c0 := cl_cpu_ms();
	t0 := clock_timestamp();
	EXECUTE query INTO r;
	wall_ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
	cpu_ms := cl_cpu_ms() - c0;
	result := r::text;
END $$;
-- the band join and simhash_clusters, one after the other, "rounds" times;
-- each query runs once per round, its result printed with its times
CREATE OR REPLACE FUNCTION cl_rounds(joinq text, clustersq text, rounds int)
RETURNS TABLE (round int, join_wall_ms float8, join_cpu_ms float8,
			   clusters_wall_ms float8, clusters_cpu_ms float8,
			   join_result text, clusters_result text)
LANGUAGE plpgsql AS $$
BEGIN
	FOR r IN 1 .. rounds LOOP
		round := r;
		SELECT * INTO join_wall_ms, join_cpu_ms, join_result FROM cl_run(joinq);
		SELECT * INTO clusters_wall_ms, clusters_cpu_ms, clusters_result FROM cl_run(clustersq);
		RETURN NEXT;
	END LOOP;
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
SELECT 'rounds', :rounds;
-- round, band join wall and CPU ms, simhash_clusters wall and CPU ms, the
-- join's result (pairs within 3 bits) and the clusters' (rows in clusters
-- of 2+, such clusters, the largest)
SELECT 'round_join_wall_cpu_clusters_wall_cpu_ms_results', * FROM cl_rounds(:'join', :'clusters', :rounds);
-- with extra=1: the result kept in memory (work_mem 1 GB; the band join
-- does not use work_mem but through hash_mem, 2 GB either way)
\if :extra
SET work_mem = '1GB';
SET hash_mem_multiplier = 2;
SELECT 'work_mem_1GB_join_wall_cpu_clusters_wall_cpu_ms_results', * FROM cl_rounds(:'join', :'clusters', 1);
\endif
