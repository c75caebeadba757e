-- bench/index/twostage.sql -- latency of the two-stage query against the
-- one-stage query on the same rows, in one session.
--
--   psql -X -v n=1000000 -v nq=100 -v reps=3 -f bench/index/twostage.sql
--
-- Rows (ts_docs, rebuilt when n changes): documents of 40 "words" (MD5 hex
-- strings, 1.3 kB, stored inline).  90 % of them come in clusters of 10
-- copies, each copy but the first replacing one word of the cluster's text
-- by its own (copies are about 0.9 similar, some bits apart); 10 % are
-- random.  Queries (ts_q): nq random rows with two words replaced.
-- For k in 3, 6, 7, 8, 10 and each query, times (clock_timestamp around
-- EXECUTE, planning included, one core):
--   one-stage  SELECT count(id) FROM ts_docs WHERE fp <-> simhash($1) <= k
--   two-stage  ... AND simhash_jaccard(body, $1) >= 0.5
-- interleaved, one warm-up round and :reps rounds; reports the median
-- round's mean latency per query, candidates and confirmed rows per query,
-- and the ratio two-stage / one-stage.

\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SELECT setseed(0.27);

\ir twostage_setup.sql

DROP TABLE IF EXISTS ts_q;
CREATE TABLE ts_q AS
SELECT row_number() OVER () AS qid,
	   regexp_replace(regexp_replace(body, '^\w+', md5('q1' || id)), '\w+$', md5('q2' || id)) AS q
FROM (SELECT id, body FROM ts_docs ORDER BY random() LIMIT :nq) s;

CREATE TEMP TABLE ts_t (k int, form text, rep int, ms float8, rows_found int8);
DO $$
DECLARE
	r record;
	k int;
	form text;
	t0 timestamptz;
	n int8;
	total float8;
	found int8;
	sql text;
BEGIN
	FOR rep IN 0 .. current_setting('bench.reps')::int LOOP
		FOREACH k IN ARRAY ARRAY[3, 6, 7, 8, 10] LOOP
			FOREACH form IN ARRAY ARRAY['one-stage', 'two-stage'] LOOP
				sql := 'SELECT count(id) FROM ts_docs WHERE fp <-> simhash($1) <= ' || k
					|| CASE WHEN form = 'two-stage' THEN ' AND simhash_jaccard(body, $1) >= 0.5' ELSE '' END;
				total := 0;
				found := 0;
				FOR r IN SELECT q FROM ts_q ORDER BY qid LOOP
					t0 := clock_timestamp();
					EXECUTE sql INTO n USING r.q;
					total := total + extract(epoch FROM clock_timestamp() - t0) * 1000;
					found := found + n;
				END LOOP;
				INSERT INTO ts_t VALUES (k, form, rep, total, found);
			END LOOP;
		END LOOP;
	END LOOP;
END
$$;

SELECT k, form, count(*) AS rounds,
	   round((percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) / :nq)::numeric, 3) AS ms_per_query,
	   round(min(rows_found)::numeric / :nq, 2) AS rows_per_query
FROM ts_t WHERE rep > 0 GROUP BY k, form ORDER BY k, form;
-- ratios per round, median over rounds: two-stage / one-stage at the same
-- k, and two-stage at k / one-stage at k = 3
SELECT a.k, round((percentile_cont(0.5) WITHIN GROUP (ORDER BY b.ms / a.ms))::numeric, 2) AS two_over_one,
	   round((percentile_cont(0.5) WITHIN GROUP (ORDER BY b.ms / c.ms))::numeric, 2) AS two_over_one_at_3
FROM ts_t a JOIN ts_t b ON b.k = a.k AND b.rep = a.rep AND b.form = 'two-stage'
JOIN ts_t c ON c.k = 3 AND c.rep = a.rep AND c.form = 'one-stage'
WHERE a.form = 'one-stage' AND a.rep > 0 GROUP BY a.k ORDER BY a.k;
SELECT pg_size_pretty(pg_table_size('ts_docs')) AS table_size,
	   (SELECT round(avg(octet_length(body))) FROM ts_docs WHERE id % 1000 = 0) AS avg_body_bytes;
