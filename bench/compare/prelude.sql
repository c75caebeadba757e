-- bench/compare/prelude.sql -- the session set-up and measuring functions
-- shared by round.sql and focus_round.sql (included with \ir): settings,
-- LOAD, the psql variables label, round and copyfile as settings, and
-- cb_once / cb_loop / cb_plan, which time a statement, a loop of
-- queries or repeated planning and append a row to cb_r.
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
