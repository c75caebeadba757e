-- bench/index/tiebreak_floor.sql -- where a tie-break's time goes: what
-- any exact plan that reads the tied rows from the heap must pay, against
-- what the nearest sort pays.
--
-- Usage, after "KEEP=1 bench/index/run.sh SIZE" left the tables:
--   psql -d simhash_index_bench -v prefix=ixb_c_10m -f bench/index/tiebreak_floor.sql
-- (psql variables: prefix; lim, default 10; nq, default 200)
--
-- For each of the first :nq query fingerprints q, with d the distance of
-- the :lim-th nearest row and m the number of rows within d (the rows an
-- exact "ORDER BY fp <-> q, id LIMIT :lim" must compare), five queries:
--   plain     ORDER BY fp <-> q LIMIT :lim
--   first     ORDER BY fp <-> q LIMIT 1
--   group     ORDER BY fp <-> q LIMIT m: every row within d, from the heap,
--             without settling d (no plan can show the tie-break's rows
--             in order without reading each of them)
--   radius    WHERE fp <-> q <= d, an index scan: the same rows, d settled
--   nearest   ORDER BY fp <-> q, id LIMIT :lim (SimhashNearestSort)
-- timed by EXPLAIN (ANALYZE, TIMING OFF), in lagged order as in
-- tiebreak.sql (step j runs kind k on query j + k * nq / 5): each run finds
-- its query's pages as an independent query would.
-- Reported: median times, medians of the per-query ratios to plain, and the
-- median cost of one more row returned by a nearest-neighbour scan,
-- (group - first) / (m - 1).
\set ON_ERROR_STOP 1
\if :{?nq}
\else
\set nq 200
\endif
\if :{?lim}
\else
\set lim 10
\endif
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SET enable_bitmapscan = off;	-- the radius query as an index scan, like the others
SET enable_seqscan = off;

CREATE OR REPLACE FUNCTION pg_temp.tf_time(query text) RETURNS float8
LANGUAGE plpgsql AS $$
DECLARE
	plan jsonb;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ' || query INTO plan;
	IF plan::text NOT LIKE '%Index Scan%' THEN
		RAISE EXCEPTION 'no index scan for %: %', query, plan;
	END IF;
	RETURN (plan -> 0 ->> 'Execution Time')::float8;
END $$;

SELECT set_config('tf.prefix', :'prefix', false), set_config('tf.lim', :'lim', false),
	   set_config('tf.nq', :'nq', false) \g /dev/null

CREATE TEMP TABLE tf_q AS
SELECT 0 AS i, 0::int8 AS q, 0 AS d, 0::int8 AS m WITH NO DATA;

DO $$
DECLARE
	tbl text := current_setting('tf.prefix') || '_simhash';
	qtbl text := current_setting('tf.prefix') || '_q';
	lim int := current_setting('tf.lim')::int;
	r record;
	d int;
	m int8;
	i int := 0;
BEGIN
	FOR r IN EXECUTE format('SELECT q FROM %I WHERE qid <= $1 ORDER BY qid', qtbl)
			 USING current_setting('tf.nq')::int LOOP
		EXECUTE format('SELECT max(fp <-> $1::simhash64) FROM (SELECT fp FROM %I ORDER BY fp <-> $1::simhash64 LIMIT %s) s',
					   tbl, lim) INTO d USING r.q;
		EXECUTE format('SELECT count(*) FROM %I WHERE fp <-> $1::simhash64 <= $2', tbl)
			INTO m USING r.q, d;
		INSERT INTO tf_q VALUES (i, r.q, d, m);
		i := i + 1;
	END LOOP;
END $$;

-- the five kinds, in lagged order
CREATE TEMP TABLE tf_ms (kind int, i int, ms float8);
DO $$
DECLARE
	tbl text := current_setting('tf.prefix') || '_simhash';
	lim int := current_setting('tf.lim')::int;
	n int := (SELECT count(*) FROM tf_q);
	kinds text[] := ARRAY[
		'SELECT id FROM %1$I ORDER BY fp <-> %2$s LIMIT %5$s',
		'SELECT id FROM %1$I ORDER BY fp <-> %2$s LIMIT 1',
		'SELECT id FROM %1$I ORDER BY fp <-> %2$s LIMIT %4$s',
		'SELECT id FROM %1$I WHERE fp <-> %2$s <= %3$s',
		'SELECT id FROM %1$I ORDER BY fp <-> %2$s, id LIMIT %5$s'];
	nk int := cardinality(kinds);
	k int;
	r record;
BEGIN
	FOR j IN 0 .. n - 1 LOOP
		FOR kk IN 0 .. nk - 1 LOOP
			k := (j + kk) % nk;
			SELECT * INTO r FROM tf_q WHERE i = (j + k * (n / nk)) % n;
			INSERT INTO tf_ms
			VALUES (k + 1, r.i,
					pg_temp.tf_time(format(kinds[k + 1], tbl,
										   format('(%s)::bigint::simhash64', r.q), r.d, r.m, lim)));
		END LOOP;
	END LOOP;
END $$;

-- one row per query fingerprint: its five times
CREATE TEMP VIEW tf_w AS
SELECT i, d, m,
	   max(ms) FILTER (WHERE kind = 1) AS plain, max(ms) FILTER (WHERE kind = 2) AS first,
	   max(ms) FILTER (WHERE kind = 3) AS grp, max(ms) FILTER (WHERE kind = 4) AS radius,
	   max(ms) FILTER (WHERE kind = 5) AS nearest
FROM tf_ms JOIN tf_q USING (i) GROUP BY i, d, m;

\echo table :prefix'_simhash', :nq queries, LIMIT :lim
SELECT count(*) AS queries,
	   percentile_cont(0.5) WITHIN GROUP (ORDER BY m) AS rows_within_d,
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY plain)::numeric * 1000, 1) AS plain_us,
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY first)::numeric * 1000, 1) AS first_us,
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY grp)::numeric * 1000, 1) AS group_us,
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY radius)::numeric * 1000, 1) AS radius_us,
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY nearest)::numeric * 1000, 1) AS nearest_us,
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY grp / plain)::numeric, 2) AS group_ratio,
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY radius / plain)::numeric, 2) AS radius_ratio,
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY nearest / plain)::numeric, 2) AS nearest_ratio,
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY (grp - first) / (m - 1))
			 FILTER (WHERE m > 1)::numeric * 1000, 2) AS us_per_row
FROM tf_w \gx
-- the same by d (the distance of the LIMIT-th row)
SELECT d, count(*) AS queries,
	   percentile_cont(0.5) WITHIN GROUP (ORDER BY m) AS rows_within_d,
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY plain)::numeric * 1000, 1) AS plain_us,
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY grp / plain)::numeric, 2) AS group_ratio,
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY radius / plain)::numeric, 2) AS radius_ratio,
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY nearest / plain)::numeric, 2) AS nearest_ratio
FROM tf_w GROUP BY d ORDER BY d;
