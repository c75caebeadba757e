-- bench/compare/focus_round.sql -- ROUND_SQL=focus_round.sql of
-- compare_builds.sh: the two measurements of round.sql whose B/A came out
-- highest in the full runs (planning of <= 3, radius k=3 on clustered
-- rows) with their baselines, each twice per session, in short sessions
-- (more rounds in the same time).  (Header of round.sql:) every
-- measurement once with the simhash.so installed now, into cb_r (label,
-- round, metric, cpu_ms, wall_ms, result).  cpu_ms is the backend's time on
-- a core (/proc/self/schedstat), wall_ms the clock; result a count that both
-- builds must agree on.  Rows: setup.sql.  psql variables: label, round,
-- copyfile.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET max_parallel_maintenance_workers = 0;
SET maintenance_work_mem = '1GB';
SET jit = off;
-- load the library before anything is planned: its planner hook is
-- installed by _PG_init
LOAD 'simhash';
SET bench.label = :'label';
SET bench.round = :'round';
SET bench.copyfile = :'copyfile';

CREATE OR REPLACE FUNCTION cb_cpu_ms() RETURNS float8 LANGUAGE sql AS $$
	SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::int8 / 1e6 $$;

-- one statement, timed, its first column (if any) recorded as the result
CREATE OR REPLACE FUNCTION cb_once(metric text, sql text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz; c0 float8; res text;
BEGIN
	t0 := clock_timestamp();
	c0 := cb_cpu_ms();
	IF sql ILIKE 'SELECT%' THEN
		EXECUTE sql INTO res;
	ELSE
		EXECUTE sql;
		GET DIAGNOSTICS res = ROW_COUNT;
	END IF;
	INSERT INTO cb_r VALUES (current_setting('bench.label'), current_setting('bench.round')::int,
		metric, cb_cpu_ms() - c0, extract(epoch FROM clock_timestamp() - t0) * 1000, res);
END $$;

-- a query with $1 = each query fingerprint q of qtab and $2 = its id, reps
-- passes (EXECUTE ... USING: a custom plan each time, planning included);
-- the sum of the counts is the result
CREATE OR REPLACE FUNCTION cb_loop(metric text, sql text, qtab text, reps int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz; c0 float8; r record; n int8; total int8 := 0;
BEGIN
	t0 := clock_timestamp();
	c0 := cb_cpu_ms();
	FOR i IN 1 .. reps LOOP
		FOR r IN EXECUTE format('SELECT q, id FROM %I ORDER BY qid', qtab) LOOP
			EXECUTE sql INTO n USING r.q, r.id;
			total := total + n;
		END LOOP;
	END LOOP;
	INSERT INTO cb_r VALUES (current_setting('bench.label'), current_setting('bench.round')::int,
		metric, cb_cpu_ms() - c0, extract(epoch FROM clock_timestamp() - t0) * 1000, total);
END $$;

-- EXPLAIN of one query, n times
CREATE OR REPLACE FUNCTION cb_plan(metric text, sql text, n int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz; c0 float8;
BEGIN
	t0 := clock_timestamp();
	c0 := cb_cpu_ms();
	FOR i IN 1 .. n LOOP
		EXECUTE 'EXPLAIN ' || sql;
	END LOOP;
	INSERT INTO cb_r VALUES (current_setting('bench.label'), current_setting('bench.round')::int,
		metric, cb_cpu_ms() - c0, extract(epoch FROM clock_timestamp() - t0) * 1000, n);
END $$;

-- twice each, interleaved
SELECT count(*) FROM cb_pl WHERE fp <-> '0123456789abcdef' <= 3 \g /dev/null
SELECT count(*) FROM cb_c WHERE fp <-> '0123456789abcdef' <= 3 \g /dev/null
SELECT cb_plan('base: plan btree lookup x8000', $q$SELECT fp FROM cb_u WHERE id = 42$q$, 8000);
SELECT cb_plan('plan fp <-> q <= 3 x8000', $q$SELECT id FROM cb_pl WHERE fp <-> '0123456789abcdef' <= 3$q$, 8000);
SELECT cb_loop('base: btree lookup x8000', 'SELECT count(id) FROM cb_u WHERE id BETWEEN $2 AND $2 + 9', 'cb_uq', 40);
SELECT cb_loop('radius k=3 clustered', 'SELECT count(*) FROM cb_c WHERE fp <-> $1 <= 3', 'cb_cq', 10);
SELECT cb_plan('plan fp <-> q <= 3 x8000', $q$SELECT id FROM cb_pl WHERE fp <-> '0123456789abcdef' <= 3$q$, 8000);
SELECT cb_plan('base: plan btree lookup x8000', $q$SELECT fp FROM cb_u WHERE id = 42$q$, 8000);
SELECT cb_loop('radius k=3 clustered', 'SELECT count(*) FROM cb_c WHERE fp <-> $1 <= 3', 'cb_cq', 10);
SELECT cb_loop('base: btree lookup x8000', 'SELECT count(id) FROM cb_u WHERE id BETWEEN $2 AND $2 + 9', 'cb_uq', 40);
