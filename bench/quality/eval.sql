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
-- simhash(text) must equal simhash(features, least(occurrences, cap)) for
-- the compiled cap, and simhash_features' weight column must be that cap
SELECT 'a_default vs b_cap' || c.cap AS check_name,
	   count(*) FILTER (WHERE a.fp <> b.fp) AS mismatches
FROM (SELECT max(weight)::int AS cap
	  FROM simhash_features(repeat('x ', 100000))) AS c
JOIN fp AS a ON a.scheme = 'a_default'
JOIN fp AS b ON b.scheme = 'b_cap' || c.cap AND b.id = a.id
GROUP BY c.cap;
\o
