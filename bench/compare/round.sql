-- bench/compare/round.sql -- one session of compare_builds.sh: every
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

-- warm the caches
SELECT count(*) FROM cb_u \g /dev/null
SELECT count(*) FROM cb_c \g /dev/null
SELECT count(*) FROM cb_pl \g /dev/null
SELECT count(*) FROM cb_u WHERE fp <-> '0123456789abcdef' <= 3 \g /dev/null
SELECT count(*) FROM cb_c WHERE fp <-> '0123456789abcdef' <= 3 \g /dev/null

-- 1. bench/index: builds, radius, ten nearest; baselines: a btree build on
-- the same rows and a btree range lookup
SELECT cb_once('base: btree build 1M', 'CREATE INDEX cb_tmp_bt ON cb_u ((fp::int8))');
DROP INDEX cb_tmp_bt;
SELECT cb_once('index build uniform', 'CREATE INDEX cb_tmp_u ON cb_u USING simhash (fp)');
DROP INDEX cb_tmp_u;
SELECT cb_once('index build clustered', 'CREATE INDEX cb_tmp_c ON cb_c USING simhash (fp)');
DROP INDEX cb_tmp_c;
SELECT cb_loop('base: btree lookup x8000', 'SELECT count(id) FROM cb_u WHERE id BETWEEN $2 AND $2 + 9', 'cb_uq', 40);
SELECT cb_loop('radius k=3 uniform', 'SELECT count(*) FROM cb_u WHERE fp <-> $1 <= 3', 'cb_uq', 20);
SELECT cb_loop('radius k=3 clustered', 'SELECT count(*) FROM cb_c WHERE fp <-> $1 <= 3', 'cb_cq', 10);
SELECT cb_loop('radius k=6 uniform', 'SELECT count(*) FROM cb_u WHERE fp <-> $1 <= 6', 'cb_uq', 6);
SELECT cb_loop('radius k=6 clustered', 'SELECT count(*) FROM cb_c WHERE fp <-> $1 <= 6', 'cb_cq', 4);
SELECT cb_loop('knn 10 uniform', 'SELECT count(*) FROM (SELECT id FROM cb_u ORDER BY fp <-> $1 LIMIT 10) s', 'cb_uq', 1);
SELECT cb_loop('knn 10 clustered', 'SELECT count(*) FROM (SELECT id FROM cb_c ORDER BY fp <-> $1 LIMIT 10) s', 'cb_cq', 3);

-- 2. bench/planner: planning time (as measure.sql, on its pl_sim), baseline
-- the planning of a primary-key-style lookup; the band self-join at k = 3
SELECT cb_plan('plan fp <-> q <= 3 x8000', $q$SELECT id FROM cb_pl WHERE fp <-> '0123456789abcdef' <= 3$q$, 8000);
SELECT cb_plan('base: plan btree lookup x8000', $q$SELECT fp FROM cb_u WHERE id = 42$q$, 8000);
SET enable_nestloop = off;
SELECT cb_once('band self-join k=3 (1M clustered)', $q$SELECT count(*) FROM cb_pl a JOIN cb_pl b ON a.fp <-> b.fp <= 3 AND a.id < b.id$q$);
RESET enable_nestloop;

-- 3. bench/ingest: a fresh table holding the base rows, simhash index,
-- near-duplicate trigger (k = 3, link); 10,000 single-row INSERTs, then a
-- COPY of the arriving rows.  Baseline: the same into a table with a btree
-- on the fingerprint and no trigger.
DROP TABLE IF EXISTS cb_t, cb_tb;
CREATE TABLE cb_t (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, fp simhash64, dup_of bigint, dup_dist int);
INSERT INTO cb_t (fp) SELECT fp::simhash64 FROM cb_ing_base ORDER BY id;
CREATE INDEX cb_t_fp ON cb_t USING simhash (fp);
CREATE TRIGGER b_check BEFORE INSERT OR UPDATE ON cb_t FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'link', dup_of, dup_dist);
CREATE TABLE cb_tb (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, fp int8);
INSERT INTO cb_tb (fp) SELECT fp FROM cb_ing_base ORDER BY id;
CREATE INDEX cb_tb_fp ON cb_tb (fp);
VACUUM ANALYZE cb_t;
VACUUM ANALYZE cb_tb;
CHECKPOINT;
CREATE OR REPLACE FUNCTION cb_inserts(metric text, tab text, n int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz; c0 float8; v int8;
BEGIN
	t0 := clock_timestamp();
	c0 := cb_cpu_ms();
	FOR v IN SELECT fp FROM cb_ing_arr WHERE id <= n ORDER BY id LOOP
		IF tab = 'cb_t' THEN
			INSERT INTO cb_t (fp) VALUES (v::simhash64);
		ELSE
			INSERT INTO cb_tb (fp) VALUES (v);
		END IF;
	END LOOP;
	INSERT INTO cb_r VALUES (current_setting('bench.label'), current_setting('bench.round')::int,
		metric, cb_cpu_ms() - c0, extract(epoch FROM clock_timestamp() - t0) * 1000, n);
END $$;
SELECT cb_inserts('base: insert btree x10000', 'cb_tb', 10000);
SELECT cb_inserts('insert via trigger x10000', 'cb_t', 10000);
SELECT cb_once('base: COPY btree', format('COPY cb_tb (fp) FROM %L', current_setting('bench.copyfile') || '.int8'));
SELECT cb_once('COPY via trigger', format('COPY cb_t (fp) FROM %L', current_setting('bench.copyfile')));
SELECT cb_once('ingest linked rows', 'SELECT count(*) FROM cb_t WHERE dup_of IS NOT NULL');
DROP TABLE cb_t, cb_tb;
