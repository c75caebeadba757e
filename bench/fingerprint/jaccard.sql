-- jaccard.sql -- server-side throughput of simhash_jaccard(text, text)
-- against simhash(text) and md5(text), per byte of input.
--
-- Run by run.sh after measure.sql (which defines exec_ms), on the
-- uncompressed tables.  Every row gives two texts that differ (the body,
-- and the body with a space appended, so that neither is the cached text
-- of the previous call): simhash_jaccard reads both, so its input is twice
-- the bytes of the body.  The baselines see the same two texts:
--   md5(body) + md5(body || ' ')          MD5 of both
--   simhash(body) <-> simhash(body || ' ')  both fingerprints
--   simhash_jaccard(body, body || ' ')      the similarity
-- One core; one warm-up round, then :reps rounds, interleaved.  Writes CSV
-- to :outfile: MB/s counts the bytes of both texts.

\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SET search_path = simhash_speed, public;

CREATE TEMP TABLE jcases AS
SELECT t.tab, e.ord, e.expr
FROM (VALUES ('en_plain'), ('zh_plain')) AS t(tab),
	 (VALUES (1, 'length(md5(body) || md5(body || '' ''))'),
			 (2, 'simhash(body) <-> simhash(body || '' '')'),
			 (3, 'simhash_jaccard(body, body || '' '')')) AS e(ord, expr);
CREATE TEMP TABLE jtimings (tab text, expr text, rep int, ms float8);

DO $$
DECLARE
	c record;
BEGIN
	FOR rep IN 0 .. current_setting('bench.reps')::int LOOP
		FOR c IN SELECT * FROM jcases ORDER BY tab, ord LOOP
			INSERT INTO jtimings
			VALUES (c.tab, c.expr, rep,
					exec_ms(format('SELECT count(%s) FROM simhash_speed.%I', c.expr, c.tab)));
		END LOOP;
	END LOOP;
END
$$;

CREATE TEMP TABLE jsizes AS
SELECT 'en_plain' AS tab, count(*) AS docs, 2 * sum(octet_length(body)) + count(*) AS bytes FROM en_plain
UNION ALL SELECT 'zh_plain', count(*), 2 * sum(octet_length(body)) + count(*) FROM zh_plain;

\pset format csv
\o :outfile
SELECT t.tab, s.docs, s.bytes, t.expr, count(*) AS reps,
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY t.ms)::numeric, 1) AS median_ms,
	   round(min(t.ms)::numeric, 1) AS min_ms,
	   round(max(t.ms)::numeric, 1) AS max_ms,
	   round((s.bytes / 1e6 / (percentile_cont(0.5) WITHIN GROUP (ORDER BY t.ms) / 1e3))::numeric, 1)
		   AS mb_per_s
FROM jtimings AS t JOIN jsizes AS s USING (tab) JOIN jcases AS c USING (tab, expr)
WHERE t.rep > 0
GROUP BY t.tab, s.docs, s.bytes, t.expr, c.ord
ORDER BY t.tab, c.ord;
\o
