-- twostage_short.sql -- the two-stage query on short.sh's short texts.
--
-- Run by twostage.sh after short.sh has filled simhash_bench.short_texts,
-- short_pairs and short_fp.  Writes CSV to :shortfile:
--   lang, lb, kind, cat, k, s, n   pairs (by language, length bucket of the
--   first text, kind and category) within k bits and with a similarity
--   >= s (s = 0: the fingerprint alone); k = -1: the totals; k = 99: within
--   simhash_radius of the first text.

\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET work_mem = '256MB';
SET search_path = simhash_bench, public;

CREATE TEMP TABLE grid AS
SELECT k, s FROM generate_series(3, 12) k,
	unnest(ARRAY[0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]::float8[]) s;

\pset format csv
-- short texts
CREATE TEMP TABLE spairs AS
SELECT t.lang, short_lbucket(length(t.body)) AS lb, p.kind, p.cat, fa.fp <-> fb.fp AS d, simhash_radius(t.body) AS radius,
	   CASE WHEN fa.fp <-> fb.fp <= 12 THEN simhash_jaccard(t.body, u.body) END AS j
FROM short_pairs AS p
JOIN short_texts AS t ON t.id = p.a JOIN short_texts AS u ON u.id = p.b
JOIN short_fp AS fa ON fa.id = p.a JOIN short_fp AS fb ON fb.id = p.b;

-- per pair, the largest s of the grid it passes (-1: none, or beyond 12
-- bits), then counts by distance: the grid is applied to a small table
CREATE TEMP TABLE sgroups AS
SELECT p.lang, p.lb, p.kind, p.cat, p.d, p.d <= p.radius AS within_radius,
	   coalesce((SELECT max(g.s) FROM (SELECT DISTINCT s FROM grid) AS g WHERE p.j >= g.s), -1) AS smax,
	   count(*) AS n
FROM spairs AS p
GROUP BY 1, 2, 3, 4, 5, 6, 7;

\o :shortfile
SELECT lang, lb, kind, cat, -1 AS k, 0 AS s, sum(n) AS n FROM sgroups GROUP BY lang, lb, kind, cat
UNION ALL
SELECT p.lang, p.lb, p.kind, p.cat, g.k, g.s, coalesce(sum(p.n) FILTER (WHERE p.d <= g.k AND p.smax >= g.s), 0)
FROM sgroups AS p CROSS JOIN grid AS g
GROUP BY p.lang, p.lb, p.kind, p.cat, g.k, g.s
UNION ALL
SELECT p.lang, p.lb, p.kind, p.cat, 99, g.s, coalesce(sum(p.n) FILTER (WHERE p.within_radius AND p.smax >= g.s), 0)
FROM sgroups AS p CROSS JOIN (SELECT DISTINCT s FROM grid) AS g
GROUP BY p.lang, p.lb, p.kind, p.cat, g.s
ORDER BY 1, 2, 3, 4, 5, 6;
\o
