-- bench/index/radius.sql -- one round of radius-query latencies, for
-- comparing builds of the extension (bench/index/radius.sh runs rounds of
-- two builds interleaved, swapping simhash.so between sessions).
--
--   psql -X -v n=1000000 -v words=40 -v nq=200 -v label=new -v round=1 \
--        -f bench/index/radius.sql
--
-- Rows: twostage_setup.sql (ts_docs, n rows of "words" words), plus a btree
-- on id.  Queries (ts_rq, made once): nq random rows with two words
-- replaced.  Each query runs through PL/pgSQL EXECUTE ... USING (a custom
-- plan: planning, with its count in the index, included), one core:
--   btree     SELECT count(id) FROM ts_docs WHERE id BETWEEN $2 AND $2 + 9
--             (stock PostgreSQL: about as many rows as the k = 7 query)
--   one k=K   SELECT count(id) FROM ts_docs WHERE fp <-> simhash($1) <= K
--   two k=K   ... AND simhash_jaccard(body, $1) >= 0.7
-- A warm-up pass over all forms, then one timed pass; the total wall-clock
-- ms of each form, and the backend's CPU ms (its time on a core, from
-- /proc/self/schedstat, in ns: on a machine shared with other jobs the wall
-- clock also counts waiting for a core), go to ts_r (label, round, form,
-- ms, cpu_ms, rows).  radius_report.sql reads ts_r.

\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SELECT setseed(0.27);

\ir twostage_setup.sql

CREATE INDEX IF NOT EXISTS ts_docs_id ON ts_docs (id);
SELECT to_regclass('ts_rq') IS NOT NULL AS have_q \gset
\if :have_q
\else
CREATE TABLE ts_rq AS
SELECT row_number() OVER () AS qid, id,
	   regexp_replace(regexp_replace(body, '^\w+', md5('q1' || id)), '\w+$', md5('q2' || id)) AS q
FROM (SELECT id, body FROM ts_docs ORDER BY random() LIMIT :nq) s;
ANALYZE ts_rq;
\endif
CREATE TABLE IF NOT EXISTS ts_r (label text, round int, form text, ms float8, cpu_ms float8,
								 rows_found int8, nq int);
-- time this backend has spent on a core, ms (Linux; superuser)
CREATE OR REPLACE FUNCTION ts_cpu_ms() RETURNS float8 LANGUAGE sql AS $$
	SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::int8 / 1e6 $$;

SET bench.label = :'label';
SET bench.round = :'round';
DO $$
DECLARE
	r record;
	form text;
	t0 timestamptz;
	c0 float8;
	n int8;
	total float8;
	found int8;
	nq int;
	sql text;
BEGIN
	FOR pass IN 0 .. 1 LOOP
		FOREACH form IN ARRAY ARRAY['btree', 'one k=3', 'one k=6', 'one k=7', 'one k=8',
									'two k=6', 'two k=7', 'two k=8'] LOOP
			IF form = 'btree' THEN
				sql := 'SELECT count(id) FROM ts_docs WHERE id BETWEEN $2 AND $2 + 9';
			ELSE
				sql := 'SELECT count(id) FROM ts_docs WHERE fp <-> simhash($1) <= '
					|| substr(form, 7)
					|| CASE WHEN form LIKE 'two%' THEN ' AND simhash_jaccard(body, $1) >= 0.7' ELSE '' END;
			END IF;
			total := 0;
			found := 0;
			nq := 0;
			c0 := ts_cpu_ms();
			FOR r IN SELECT q, id FROM ts_rq ORDER BY qid LOOP
				t0 := clock_timestamp();
				EXECUTE sql INTO n USING r.q, r.id;
				total := total + extract(epoch FROM clock_timestamp() - t0) * 1000;
				found := found + n;
				nq := nq + 1;
			END LOOP;
			IF pass = 1 THEN
				INSERT INTO ts_r VALUES (current_setting('bench.label'),
										 current_setting('bench.round')::int, form, total,
										 ts_cpu_ms() - c0, found, nq);
			END IF;
		END LOOP;
	END LOOP;
END
$$;
