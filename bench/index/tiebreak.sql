-- bench/index/tiebreak.sql -- what a tie-break costs a nearest-neighbour
-- query, with the nearest sort and with an Incremental Sort, by LIMIT.
--
-- Usage, after "KEEP=1 bench/index/run.sh SIZE" left the tables:
--   psql -d simhash_index_bench -v prefix=ixb_u_10m -f bench/index/tiebreak.sql
--
-- For each LIMIT n (5, 9, 10, 20, 100: 9 is the size of the clusters of
-- tiebreak_setup.sql, where the n-th row is the last near-copy and the
-- next row is far away) and each of the first :nq query fingerprints
-- (default 200), three queries are timed by EXPLAIN (ANALYZE, TIMING OFF)
-- (server-side execution time, pages in shared buffers):
--   plain     ORDER BY fp <-> q LIMIT n
--   nearest   ORDER BY fp <-> q, id LIMIT n   (SimhashNearestSort)
--   incsort   the same with simhash.enable_nearest_sort = off (Incremental Sort)
-- in lagged order: step j runs plain on query j, nearest on query j + nq/3
-- and incsort on query j + 2nq/3 (the order rotating), so that the three
-- interleave (the machine's noise weighs on all alike) and every run finds
-- its query's pages as independent queries would, some nq queries after
-- the last run that read them.  Back-to-back runs of one query would let
-- the later ones reuse the first one's CPU cache, which moved the ratios on
-- clustered data by up to 0.5 from one run to the next.
-- Reported: the median time of each, and the medians of the per-query
-- ratios nearest/plain and incsort/plain.  Each tie-break query's rows are
-- checked against a sequential sort's for the first 10 queries.
\set ON_ERROR_STOP 1
\if :{?nq}
\else
\set nq 200
\endif
SET max_parallel_workers_per_gather = 0;
SET jit = off;

CREATE OR REPLACE FUNCTION pg_temp.tb_time(query text, nearest bool) RETURNS float8
LANGUAGE plpgsql AS $$
DECLARE
	plan jsonb;
	node text := CASE WHEN query NOT LIKE '%, id LIMIT%' THEN 'Index Scan'
					  WHEN nearest THEN 'SimhashNearestSort'
					  ELSE 'Incremental Sort' END;
BEGIN
	PERFORM set_config('simhash.enable_nearest_sort', nearest::text, true);
	EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ' || query INTO plan;
	PERFORM set_config('simhash.enable_nearest_sort', 'on', true);
	IF plan::text NOT LIKE '%' || node || '%' THEN
		RAISE EXCEPTION 'unexpected plan for %: %', query, plan;
	END IF;
	RETURN (plan -> 0 ->> 'Execution Time')::float8;
END $$;

CREATE OR REPLACE FUNCTION pg_temp.tb_run(tbl text, qtbl text, lim int, nq int)
RETURNS TABLE (n int, plain_ms float8, nearest_ms float8, incsort_ms float8,
			   nearest_ratio float8, incsort_ratio float8, checked int)
LANGUAGE plpgsql AS $$
DECLARE
	qs int8[];
	nqs int;
	k int;
	qi int;
	q text;
	t float8[];
	plain float8[] := '{}';
	nearest float8[] := '{}';
	incsort float8[] := '{}';
	rn float8[] := '{}';
	ri float8[] := '{}';
	got int8[];
	want int8[];
BEGIN
	checked := 0;
	EXECUTE format('SELECT array_agg(q ORDER BY qid) FROM %I WHERE qid <= $1', qtbl) INTO qs USING nq;
	nqs := cardinality(qs);
	t := array_fill(NULL::float8, ARRAY[3, nqs]);
	-- step j runs kind k on query j + k * nq / 3: lagged, see the header
	FOR j IN 0 .. nqs - 1 LOOP
		FOR i IN 0 .. 2 LOOP
			k := (j + i) % 3;
			qi := (j + k * (nqs / 3)) % nqs + 1;
			q := format('(%s)::bigint::simhash64', qs[qi]);
			t[k + 1][qi] := pg_temp.tb_time(format('SELECT id FROM %I ORDER BY fp <-> %s%s LIMIT %s',
												   tbl, q, CASE WHEN k = 0 THEN '' ELSE ', id' END, lim),
											k < 2);
		END LOOP;
	END LOOP;
	FOR qi IN 1 .. nqs LOOP
		plain := plain || t[1][qi];
		nearest := nearest || t[2][qi];
		incsort := incsort || t[3][qi];
		rn := rn || (t[2][qi] / greatest(t[1][qi], 0.001));
		ri := ri || (t[3][qi] / greatest(t[1][qi], 0.001));
		IF qi <= 10 THEN
			q := format('(%s)::bigint::simhash64', qs[qi]);
			EXECUTE format('SELECT array_agg(id) FROM (SELECT id FROM %I ORDER BY fp <-> %s, id LIMIT %s) s',
						   tbl, q, lim) INTO got;
			EXECUTE format('SELECT array_agg(id) FROM (SELECT id FROM %I ORDER BY hamming(fp, %s) + 0, id LIMIT %s) s',
						   tbl, q, lim) INTO want;
			IF got IS DISTINCT FROM want THEN
				RAISE EXCEPTION 'rows differ from a sort''s for query % at LIMIT %', qi, lim;
			END IF;
			checked := checked + 1;
		END IF;
	END LOOP;
	n := lim;
	SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) INTO plain_ms FROM unnest(plain) x;
	SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) INTO nearest_ms FROM unnest(nearest) x;
	SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) INTO incsort_ms FROM unnest(incsort) x;
	SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) INTO nearest_ratio FROM unnest(rn) x;
	SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) INTO incsort_ratio FROM unnest(ri) x;
	RETURN NEXT;
END $$;

\echo table :prefix'_simhash', :nq queries
SELECT r.n AS "LIMIT", round(plain_ms::numeric, 3) AS plain_ms,
	   round(nearest_ms::numeric, 3) AS nearest_sort_ms, round(incsort_ms::numeric, 3) AS incremental_sort_ms,
	   round(nearest_ratio::numeric, 2) AS nearest_sort_ratio, round(incsort_ratio::numeric, 2) AS incremental_sort_ratio,
	   checked AS rows_checked
FROM unnest(ARRAY[5, 9, 10, 20, 100]) l,
	 LATERAL pg_temp.tb_run(:'prefix' || '_simhash', :'prefix' || '_q', l, :nq) r;
