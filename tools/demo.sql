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
\echo '   (coding-style.rst of 6.12 with a few words changed).  Two stages: the index finds'
\echo '   the fingerprints within k bits, and simhash_jaccard confirms each candidate by'
\echo '   comparing its text (EXPLAIN: the index scan, the similarity a filter on its rows)'
SELECT replace(replace(body, 'tabs are 8 characters', 'tabs are eight characters'),
			   'Linux kernel', 'kernel of Linux') AS edited
FROM docs WHERE version = '6.12' AND path = 'Documentation/process/coding-style.rst' \gset
PREPARE near_dups(text, int, float8) AS
	SELECT version, path, title, fp <-> simhash($1) AS distance,
		   round(simhash_jaccard(body, $1)::numeric, 3) AS similarity
	FROM docs WHERE fp <-> simhash($1) <= $2 AND simhash_jaccard(body, $1) >= $3
	ORDER BY distance, version;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE near_dups(:'edited', 7, 0.7);
RESET plan_cache_mode;
EXECUTE near_dups(:'edited', 7, 0.7);

\echo
\echo '== 4. The same for Chinese: a translation with its last tenth cut off'
SELECT substr(body, 1, length(body) * 9 / 10) AS edited_zh
FROM docs WHERE version = '6.12' AND path = 'Documentation/translations/zh_CN/process/coding-style.rst' \gset
EXECUTE near_dups(:'edited_zh', 7, 0.7);

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
\echo '== 9. Rows arriving through the near-duplicate trigger (link mode)'
\echo '   A mirror already holds the 6.1 documentation.  Then the trigger is created, and'
\echo '   the 6.12 documentation arrives one INSERT (one transaction) per document: each'
\echo '   new row gets the key of its nearest earlier row within 3 bits, and the distance.'
CREATE TABLE mirror (
	id bigint PRIMARY KEY,
	version text NOT NULL,
	path text NOT NULL,
	body text NOT NULL,
	fp simhash64,		-- filled by a_fingerprint
	dup_of bigint,		-- filled by b_near_duplicate: the nearest earlier row
	dup_d int			-- and its distance (NULL: nothing within 3 bits)
);
CREATE INDEX ON mirror USING simhash (fp);
CREATE TRIGGER a_fingerprint BEFORE INSERT OR UPDATE OF body ON mirror FOR EACH ROW
	EXECUTE FUNCTION simhash_fingerprint_trigger(fp, body);
INSERT INTO mirror (id, version, path, body)
SELECT id, version, path, body FROM docs WHERE version = '6.1';
CREATE TRIGGER b_near_duplicate BEFORE INSERT ON mirror FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'link', dup_of, dup_d);
\echo '   (synchronous_commit is off for this session: no disk flush per row)'
SET synchronous_commit = off;
SELECT clock_timestamp() AS t0 \gset
SELECT format('INSERT INTO mirror (id, version, path, body) SELECT id, version, path, body FROM docs WHERE id = %s', id)
FROM docs WHERE version = '6.12' ORDER BY id \gexec
SELECT count(*) AS arrived,
	   round(extract(epoch FROM clock_timestamp() - :'t0'::timestamptz)::numeric, 1) AS seconds,
	   count(a.dup_of) AS linked,
	   count(*) FILTER (WHERE a.dup_d = 0) AS same_fingerprint,
	   count(*) FILTER (WHERE a.dup_d > 0) AS edited,
	   count(*) FILTER (WHERE e.path <> a.path) AS moved_or_copied,
	   count(*) FILTER (WHERE e.version = '6.12') AS to_an_earlier_arrival,
	   count(*) FILTER (WHERE a.path ~ '/zh_(CN|TW)/') || ' / ' ||
	   count(a.dup_of) FILTER (WHERE a.path ~ '/zh_(CN|TW)/') AS chinese_arrived_linked
FROM mirror a LEFT JOIN mirror e ON e.id = a.dup_of
WHERE a.version = '6.12';

\echo '   Arrivals edited in place (same path, 1 to 3 bits from their 6.1 version):'
SELECT a.dup_d AS d, a.path, octet_length(a.body) - octet_length(e.body) AS bytes_added
FROM mirror a JOIN mirror e ON e.id = a.dup_of
WHERE a.version = '6.12' AND a.dup_d > 0 AND a.path = e.path AND a.path !~ '/zh_(CN|TW)/'
ORDER BY a.dup_d DESC, abs(octet_length(a.body) - octet_length(e.body)) DESC LIMIT 5;
\echo '   ... and in Chinese:'
SELECT a.dup_d AS d, a.path, octet_length(a.body) - octet_length(e.body) AS bytes_added
FROM mirror a JOIN mirror e ON e.id = a.dup_of
WHERE a.version = '6.12' AND a.dup_d > 0 AND a.path = e.path AND a.path ~ '/zh_(CN|TW)/'
ORDER BY a.dup_d DESC, abs(octet_length(a.body) - octet_length(e.body)) DESC LIMIT 5;
\echo '   Arrivals linked to a document at another path: moved since 6.1, or copied within 6.12:'
(SELECT a.dup_d AS d, a.path, e.version AS linked_to_version, e.path AS linked_to_path
 FROM mirror a JOIN mirror e ON e.id = a.dup_of
 WHERE a.version = '6.12' AND e.version = '6.1' AND a.path <> e.path AND a.body <> e.body
 ORDER BY a.dup_d DESC, a.path LIMIT 4)
UNION ALL
(SELECT a.dup_d, a.path, e.version, e.path
 FROM mirror a JOIN mirror e ON e.id = a.dup_of
 WHERE a.version = '6.12' AND e.version = '6.12'
 ORDER BY a.dup_d DESC, a.path LIMIT 4);

\echo '   A crawler stores the edited texts of sections 3 and 4: RETURNING shows the links.'
INSERT INTO mirror (id, version, path, body)
VALUES (-1, 'crawled', 'edited coding-style.rst', :'edited'),
	   (-2, 'crawled', 'edited zh_CN coding-style.rst', :'edited_zh'),
	   (-3, 'crawled', 'a new text', 'Near-duplicate detection inside PostgreSQL, 数据库内的近似重复检测.')
RETURNING id, path, dup_d,
		  (SELECT version || ' ' || path FROM mirror m WHERE m.id = mirror.dup_of) AS dup_of;
RESET synchronous_commit;

\echo
\echo '== 10. The largest near-duplicate clusters of the whole corpus (6.1 and 6.12)'
\echo '   simhash_clusters(): connected components of "within 3 bits", each cluster'
\echo '   named by its smallest id, with its size.'
CREATE TEMP TABLE clusters AS
SELECT * FROM simhash_clusters('SELECT id, fp FROM docs', 3) WHERE size > 1;
SELECT count(DISTINCT cluster) AS clusters, count(*) AS documents_in_them,
	   count(DISTINCT cluster) FILTER (WHERE size = 2) AS of_2,
	   count(DISTINCT cluster) FILTER (WHERE size BETWEEN 3 AND 5) AS of_3_to_5,
	   count(DISTINCT cluster) FILTER (WHERE size > 5) AS larger
FROM clusters;
SELECT c.cluster, c.size,
	   count(*) FILTER (WHERE d.version = '6.1') AS in_6_1,
	   count(DISTINCT d.path) AS paths,
	   (SELECT path FROM docs WHERE id = c.cluster) AS first_document
FROM clusters c JOIN docs d ON d.id = c.id
GROUP BY c.cluster, c.size ORDER BY c.size DESC, c.cluster LIMIT 8;
\echo '   The largest clusters holding Chinese documents (zh_CN, zh_TW), with their members:'
SELECT c.cluster, c.size,
	   string_agg(d.version || ' ' || replace(d.path, 'Documentation/translations/', '…/'), ', '
				  ORDER BY d.id) AS members
FROM clusters c JOIN docs d ON d.id = c.id
WHERE c.cluster IN (SELECT cluster FROM clusters JOIN docs USING (id) WHERE path ~ '/zh_(CN|TW)/')
GROUP BY c.cluster, c.size ORDER BY c.size DESC, c.cluster LIMIT 3;

\echo
\echo '== 11. What simhash(text) looks at: the features of a sentence'
SELECT * FROM simhash_features('Near-duplicate detection, 近似重复检测 (Ａ ＦＵＬＬ-width Test)');
