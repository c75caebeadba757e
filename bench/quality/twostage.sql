-- twostage.sql -- the two-stage query, fp <-> q <= k AND simhash_jaccard >= s,
-- on the labelled pairs of run.sh and on all pairs of the 6.12 English
-- documents.
--
-- Run by twostage.sh after run.sh has filled schema simhash_bench (docs,
-- pairs); twostage_short.sql does the same for short.sh's texts.  Writes CSV:
--   :kernelfile  kind, k, s, n       labelled kernel pairs within k and with
--                                     a similarity >= s (s = 0: the
--                                     fingerprint alone), and the totals (k = -1)
--                                     (k = 99: simhash_radius of the first text)
--   :allfile     a, b, d, j           every pair of 6.12 English documents
--                                     within 10 bits, with its similarity

\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET work_mem = '256MB';
SET search_path = simhash_bench, public;

CREATE TEMP TABLE grid AS
SELECT k, s FROM generate_series(3, 12) k,
	unnest(ARRAY[0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]::float8[]) s;

-- kernel documents: the similarity only where some k of the grid needs it
CREATE TEMP TABLE kfp AS SELECT id, simhash(body) AS fp FROM docs;
ALTER TABLE kfp ADD PRIMARY KEY (id);
CREATE TEMP TABLE kpairs AS
SELECT p.kind, fa.fp <-> fb.fp AS d,
	   CASE WHEN fa.fp <-> fb.fp <= 12 THEN simhash_jaccard(da.body, db.body) END AS j
FROM pairs AS p
JOIN kfp AS fa ON fa.id = p.a JOIN kfp AS fb ON fb.id = p.b
JOIN docs AS da ON da.id = p.a JOIN docs AS db ON db.id = p.b;

\pset format csv
\o :kernelfile
SELECT kind, -1 AS k, 0 AS s, count(*) AS n FROM kpairs GROUP BY kind
UNION ALL
SELECT p.kind, g.k, g.s, count(*) FILTER (WHERE p.d <= g.k AND p.j >= g.s)
FROM kpairs AS p CROSS JOIN grid AS g
GROUP BY p.kind, g.k, g.s
ORDER BY 1, 2, 3;
\o

-- every pair of 6.12 English documents within 10 bits: the band join, the
-- similarity computed on its pairs only
CREATE TEMP TABLE en612 AS
SELECT d.id, d.body, f.fp FROM docs AS d JOIN kfp AS f USING (id)
WHERE d.ver = '6.12' AND d.lang = 'en';
ANALYZE en612;
\o :allfile
SELECT a.id AS a, b.id AS b, a.fp <-> b.fp AS d, simhash_jaccard(a.body, b.body) AS j
FROM en612 AS a JOIN en612 AS b ON a.fp <-> b.fp <= 10 AND a.id < b.id
ORDER BY 1, 2;
\o
\pset format aligned
SELECT count(*) AS en612_documents, count(*) * (count(*) - 1) / 2 AS en612_pairs FROM en612;
