-- short_eval.sql -- distances of the short-text pairs (short_prepare.py).
--
-- Run by short.sh after it has filled simhash_bench.short_texts and
-- simhash_bench.short_pairs (created by short_load.sql).  Computes, with the
-- extension, every text's fingerprint and feature weight W (the sum of the
-- weights simhash_features gives: about one per word, one per Han
-- character), then writes CSV to the file named by psql variable distfile:
--   lang, lbucket, wbucket, source, unit, kind, cat, d, n
-- a histogram of Hamming distances per language, length bucket and W bucket
-- of the pair's first text, its source and unit, and the pair category.
-- Also writes :radiusfile: the same pairs with simhash_radius(first text)
-- (when the function exists), as lang, lbucket, kind, cat, within, n.

\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET work_mem = '256MB';
SET search_path = simhash_bench, public;

CREATE TABLE short_fp AS
SELECT t.id, simhash(t.body) AS fp, length(t.body) AS len,
	   (SELECT coalesce(sum(weight), 0) FROM simhash_features(t.body))::int8 AS w
FROM short_texts AS t;
ALTER TABLE short_fp ADD PRIMARY KEY (id);
ANALYZE short_fp;

CREATE FUNCTION short_lbucket(n int) RETURNS text IMMUTABLE LANGUAGE sql AS
$$ SELECT CASE WHEN n <= 50 THEN '<=50' WHEN n <= 200 THEN '<=200'
			   WHEN n <= 1000 THEN '<=1000' ELSE '>1000' END $$;
CREATE FUNCTION short_wbucket(w int8) RETURNS text IMMUTABLE LANGUAGE sql AS
$$ SELECT CASE WHEN w <= 4 THEN '<=4' WHEN w <= 8 THEN '<=8' WHEN w <= 16 THEN '<=16'
			   WHEN w <= 32 THEN '<=32' WHEN w <= 64 THEN '<=64'
			   WHEN w <= 128 THEN '<=128' WHEN w <= 256 THEN '<=256'
			   WHEN w <= 1024 THEN '<=1024' ELSE '>1024' END $$;

CREATE TEMP TABLE short_d AS
SELECT t.lang, short_lbucket(fa.len) AS lbucket, short_wbucket(fa.w) AS wbucket,
	   t.source, split_part(t.unit, '+', 1) AS unit, p.kind, p.cat,
	   fa.fp <-> fb.fp AS d, t.id AS a_id
FROM short_pairs AS p
JOIN short_texts AS t ON t.id = p.a
JOIN short_fp AS fa ON fa.id = p.a
JOIN short_fp AS fb ON fb.id = p.b;

\pset format csv
\o :distfile
SELECT lang, lbucket, wbucket, source, unit, kind, cat, d, count(*) AS n
FROM short_d
GROUP BY lang, lbucket, wbucket, source, unit, kind, cat, d
ORDER BY lang, lbucket, wbucket, source, unit, kind, cat, d;
\o

-- the proposed radius, if this build has it
SELECT count(*) > 0 AS has_radius FROM pg_proc
WHERE proname = 'simhash_radius' AND pronargs = 1
	  AND proargtypes[0] = 'text'::regtype \gset
\o :radiusfile
\if :has_radius
SELECT d.lang, d.lbucket, d.kind, d.cat,
	   (d.d <= simhash_radius(t.body)) AS within, count(*) AS n
FROM short_d AS d JOIN short_texts AS t ON t.id = d.a_id
GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5;
\else
SELECT NULL AS lang WHERE false;
\endif
\o
