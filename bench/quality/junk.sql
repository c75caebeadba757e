-- junk.sql -- robustness of the default tokens to appended junk, per weighting.
--
-- For 200 English documents (a fixed pseudo-random sample: smallest
-- md5(version || path)), compare the fingerprint of the document with the
-- fingerprint of the document followed by 10,000 repetitions of a junk
-- token: ' spam' (a word, which a cap lets weigh at most the cap) and
-- ' =====' (punctuation, which the tokenizer drops: distance 0 by
-- construction).  Each weighting of weight_fps() (schemes.sql, which must
-- have run) is measured, plus the extension's own simhash(text).
--
-- Writes CSV to the file named by psql variable junkfile, one row per
-- (junk, scheme): mean, median and max distance between clean and junked
-- document, the share of documents still within k = 3 of themselves, and
-- "collide": the share of the 19,900 pairs of different junked documents
-- that are within k = 3 of each other (junk that decides the fingerprint
-- makes unrelated documents near-duplicates; junk 'none' gives the clean
-- documents' own rate).

\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET search_path = simhash_bench, public;

CREATE TEMP TABLE junk_sample AS
SELECT id, body FROM docs WHERE lang = 'en'
ORDER BY md5(ver || ':' || path) LIMIT 200;

-- fingerprints of the clean and the junked documents
CREATE TEMP TABLE junk_fp AS
SELECT s.id, j.junk, c.scheme, c.fp
FROM junk_sample AS s,
	 (VALUES ('none', ''), ('spam', ' spam'), ('=====', ' =====')) AS j(junk, token),
	 LATERAL (SELECT scheme, fp FROM weight_fps(s.body || repeat(j.token, 10000))
			  UNION ALL
			  SELECT 'simhash(text)', simhash(s.body || repeat(j.token, 10000))) AS c;

CREATE TEMP TABLE junk_dist AS
SELECT j.junk, j.scheme, c.fp <-> j.fp AS d
FROM junk_fp AS j JOIN junk_fp AS c USING (id, scheme)
WHERE c.junk = 'none' AND j.junk <> 'none';

CREATE TEMP TABLE junk_collide AS
SELECT x.junk, x.scheme, avg(((x.fp <-> y.fp) <= 3)::int) AS collide
FROM junk_fp AS x JOIN junk_fp AS y USING (junk, scheme)
WHERE x.id < y.id
GROUP BY x.junk, x.scheme;

\pset format csv
\o :junkfile
SELECT junk, scheme,
	   count(d) AS docs,
	   round(avg(d), 2) AS mean_d,
	   percentile_cont(0.5) WITHIN GROUP (ORDER BY d) AS median_d,
	   max(d) AS max_d,
	   round(avg((d <= 3)::int), 3) AS within_3,
	   round(min(c.collide), 5) AS collide
FROM junk_collide AS c LEFT JOIN junk_dist AS d USING (junk, scheme)
GROUP BY junk, scheme
ORDER BY junk, scheme;
\o
