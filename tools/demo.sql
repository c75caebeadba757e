-- tools/demo.sql -- near-duplicate search on the Linux kernel documentation.
-- Run by tools/demo.sh, which loads the table docs first.
\set ON_ERROR_STOP on
\pset footer off
SET max_parallel_workers_per_gather = 0;

\echo
\echo '== 1. Every document gets a fingerprint as it is stored (a generated column)'
SELECT version, count(*) AS documents, pg_size_pretty(sum(octet_length(body))) AS text
FROM docs GROUP BY version ORDER BY version;
SELECT version, path, fp FROM docs WHERE path = 'Documentation/process/coding-style.rst' ORDER BY version;

\echo
\echo '== 2. An index over the four 16-bit blocks of the fingerprints'
\timing on
CREATE INDEX docs_fp ON docs USING simhash (fp);
\timing off
ANALYZE docs;
SELECT pg_size_pretty(pg_relation_size('docs_fp')) AS index_size;

\echo
\echo '== 3. Near-duplicates of an edited text: the query the extension is made for'
\echo '   (coding-style.rst of 6.12 with a few words changed; EXPLAIN shows the index)'
SELECT replace(replace(body, 'tabs are 8 characters', 'tabs are eight characters'),
			   'Linux kernel', 'kernel of Linux') AS edited
FROM docs WHERE version = '6.12' AND path = 'Documentation/process/coding-style.rst' \gset
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE fp <-> simhash(:'edited') <= 3;
SELECT version, path, title, fp <-> simhash(:'edited') AS distance
FROM docs WHERE fp <-> simhash(:'edited') <= 3 ORDER BY distance, version;

\echo
\echo '== 4. The same for Chinese: a translation with its last tenth cut off'
SELECT substr(body, 1, length(body) * 9 / 10) AS edited_zh
FROM docs WHERE version = '6.12' AND path = 'Documentation/translations/zh_CN/process/coding-style.rst' \gset
SELECT version, path, title, fp <-> simhash(:'edited_zh') AS distance
FROM docs WHERE fp <-> simhash(:'edited_zh') <= 3 ORDER BY distance, version;

\echo
\echo '== 5. How many documents of 6.1 have a near-duplicate (distance <= 3) in 6.12?'
\echo '   (a self-join on the fingerprint distance: a nested loop probing the index)'
\timing on
CREATE TEMP TABLE pairs AS
SELECT a.id AS a, b.id AS b, a.fp <-> b.fp AS distance, a.path = b.path AS same_path
FROM docs a JOIN docs b ON a.fp <-> b.fp <= 3
WHERE a.version = '6.1' AND b.version = '6.12';
\timing off
SELECT count(*) AS pairs_within_3,
	   count(*) FILTER (WHERE distance = 0) AS identical_fingerprints,
	   count(*) FILTER (WHERE distance > 0 AND same_path) AS edited_in_place,
	   count(*) FILTER (WHERE NOT same_path) AS moved_or_copied
FROM pairs;

\echo
\echo '== 6. Some documents that changed between 6.1 and 6.12 but stayed near-duplicates'
SELECT p.distance, a.path, a.title,
	   octet_length(b.body) - octet_length(a.body) AS bytes_added
FROM pairs p JOIN docs a ON a.id = p.a JOIN docs b ON b.id = p.b
WHERE p.distance > 0 AND p.same_path
ORDER BY p.distance DESC, a.path LIMIT 8;

\echo
\echo '== 7. Documents that moved (different path, distance <= 3)'
SELECT p.distance, a.path AS in_6_1, b.path AS in_6_12
FROM pairs p JOIN docs a ON a.id = p.a JOIN docs b ON b.id = p.b
WHERE NOT p.same_path AND a.body <> b.body
ORDER BY p.distance, a.path LIMIT 8;

\echo
\echo '== 8. Nearest neighbours of a document, closest first (ORDER BY ... LIMIT uses the index)'
SELECT fp AS q FROM docs WHERE version = '6.1' AND path = 'Documentation/admin-guide/README.rst' \gset
EXPLAIN (COSTS OFF) SELECT path FROM docs ORDER BY fp <-> :'q' LIMIT 5;
SELECT version, path, fp <-> :'q' AS distance FROM docs ORDER BY fp <-> :'q' LIMIT 5;

\echo
\echo '== 9. What simhash(text) looks at: the features of a sentence'
SELECT * FROM simhash_features('Near-duplicate detection, 近似重复检测 (Ａ ＦＵＬＬ-width Test)');
