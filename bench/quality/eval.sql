-- eval.sql -- distances of all labelled pairs under every scheme.
--
-- Needs the tables filled by load.sql/run.sh and schemes.sql.  Writes CSV:
--   :distfile   scheme, kind, d, n   -- histogram of Hamming distances
--   :gainfile   scheme, kind, gained, lost
--               positive pairs within k = 3 under the scheme but not under
--               a_default (gained), and the other way round (lost)
--   :checkfile  consistency checks (expected: 0 mismatches)

\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET work_mem = '256MB';
SET search_path = simhash_bench, public;

CREATE TEMP TABLE pair_d AS
SELECT fa.scheme, p.kind, p.a, p.b, fa.fp <-> fb.fp AS d
FROM pairs AS p
JOIN fp AS fa ON fa.id = p.a
JOIN fp AS fb ON fb.id = p.b AND fb.scheme = fa.scheme;

\pset format csv
\o :distfile
SELECT scheme, kind, d, count(*) AS n
FROM pair_d GROUP BY scheme, kind, d ORDER BY scheme, kind, d;

\o :gainfile
SELECT s.scheme, s.kind,
	   count(*) FILTER (WHERE s.d <= 3 AND a.d > 3) AS gained,
	   count(*) FILTER (WHERE s.d > 3 AND a.d <= 3) AS lost
FROM pair_d AS s
JOIN pair_d AS a ON a.a = s.a AND a.b = s.b AND a.kind = s.kind AND a.scheme = 'a_default'
WHERE s.kind LIKE 'pos%'
GROUP BY s.scheme, s.kind ORDER BY s.scheme, s.kind;

\o :checkfile
-- simhash(text) must equal the f_rel16 scheme rebuilt from simhash_features
-- (weights min(occurrences, max(8, W8/16))): the default as specified
SELECT 'a_default vs f_rel16' AS check_name,
	   count(*) FILTER (WHERE a.fp <> b.fp) AS mismatches
FROM fp AS a
JOIN fp AS b ON b.scheme = 'f_rel16' AND b.id = a.id
WHERE a.scheme = 'a_default';
\o
