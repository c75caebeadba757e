-- measure.sql -- server-side throughput of simhash(text) and baselines.
--
-- For every table and expression, runs
--     SELECT count(<expr>) FROM simhash_speed.<table>
-- under EXPLAIN (ANALYZE, TIMING OFF) and keeps the executor's "Execution
-- Time", so that nothing is sent to the client.  count(x) evaluates x for
-- every row (it must know whether x is null), and every expression but
-- the first reads the detoasted text:
--   body          the scan floor: no detoasting at all
--   length(body)  detoast (decompress) + count UTF-8 characters
--   md5(body)     detoast + MD5 (a known hash)
--   simhash(body) detoast + simhash
-- One parallel-free core (max_parallel_workers_per_gather = 0); one warm-up
-- round, then :reps rounds, each round running every measurement once
-- (interleaved, so drift hits all alike).  Writes CSV to :outfile with the
-- median, min and max time and the throughput in MB (10^6 bytes of
-- uncompressed text, octet_length) per second.

\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SET search_path = simhash_speed, public;

-- Execution time in ms of one query, measured by the executor.
CREATE OR REPLACE FUNCTION exec_ms(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ' || q INTO plan;
	RETURN (plan -> 0 ->> 'Execution Time')::float8;
END
$$;

CREATE TEMP TABLE cases AS
SELECT t.tab, e.ord, e.expr
FROM (VALUES ('en'), ('en_plain'), ('zh'), ('zh_plain')) AS t(tab),
	 (VALUES (1, 'body'), (2, 'length(body)'), (3, 'md5(body)'),
			 (4, 'simhash(body)')) AS e(ord, expr);

CREATE TEMP TABLE timings (tab text, expr text, rep int, ms float8);

DO $$
DECLARE
	c record;
BEGIN
	FOR rep IN 0 .. current_setting('bench.reps')::int LOOP
		FOR c IN SELECT * FROM cases ORDER BY tab, ord LOOP
			INSERT INTO timings
			VALUES (c.tab, c.expr, rep,
					exec_ms(format('SELECT count(%s) FROM simhash_speed.%I',
								   c.expr, c.tab)));
		END LOOP;
	END LOOP;
END
$$;

CREATE TEMP TABLE sizes AS
SELECT 'en' AS tab, count(*) AS docs, sum(octet_length(body)) AS bytes FROM en
UNION ALL SELECT 'en_plain', count(*), sum(octet_length(body)) FROM en_plain
UNION ALL SELECT 'zh', count(*), sum(octet_length(body)) FROM zh
UNION ALL SELECT 'zh_plain', count(*), sum(octet_length(body)) FROM zh_plain;

\pset format csv
\o :outfile
SELECT t.tab, s.docs, s.bytes, t.expr, count(*) AS reps,
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY t.ms)::numeric, 1) AS median_ms,
	   round(min(t.ms)::numeric, 1) AS min_ms,
	   round(max(t.ms)::numeric, 1) AS max_ms,
	   round((s.bytes / 1e6 / (percentile_cont(0.5) WITHIN GROUP (ORDER BY t.ms) / 1e3))::numeric, 1)
		   AS mb_per_s
FROM timings AS t JOIN sizes AS s USING (tab) JOIN cases AS c USING (tab, expr)
WHERE t.rep > 0
GROUP BY t.tab, s.docs, s.bytes, t.expr, c.ord
ORDER BY t.tab, c.ord;
\o
