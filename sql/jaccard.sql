--
-- simhash_jaccard(text, text): the weighted Jaccard similarity of the
-- features of simhash(), and the two-stage query that confirms the index's
-- candidates with it.  Values against README's definition (the reference
-- implementation compares thousands of texts in sql_tests/checks); plans
-- must run the similarity on the index's candidates only.
--
SET jit = off;

-- the definition on small cases: sum of min weights / sum of max weights
SELECT simhash_jaccard('a b c', 'a b d') AS half,			-- 2 / 4
	   simhash_jaccard('a a a b', 'a b') AS multiset,		-- (1 + 1) / (3 + 1)
	   simhash_jaccard('a b c', 'd e f') AS disjoint,
	   simhash_jaccard('The quick brown fox', 'the QUICK, brown fox!') AS case_punct,
	   simhash_jaccard('ﬁne Ｆｕｌｌ', 'fine full') AS nfkc,
	   simhash_jaccard('中文文本', '中文本子') AS han,		-- 中 文x2 本 vs 中 文 本 子: 3 / 5
	   simhash_jaccard('カタカナ', 'カタカ') AS kana;		-- カタ タカ カナ vs カタ タカ: 2 / 3
-- each text's own cap: 100 x "spam" weighs max(8, W / 16) = 8 in a text of
-- few features, so against 8 x "spam" the similarity is 1
SELECT simhash_jaccard(repeat('spam ', 100), repeat('spam ', 8)) AS capped,
	   simhash_jaccard(repeat('spam ', 100), repeat('spam ', 4)) AS four_of_eight;
-- featureless texts: two of them are alike (both fingerprints are 0), one
-- against a text with features is not
SELECT simhash_jaccard('', '') AS both_empty,
	   simhash_jaccard('!!! ...', '😀 ---') AS both_featureless,
	   simhash_jaccard('', 'word') AS one_empty,
	   simhash_jaccard('word', '...') AS other_empty;
-- STRICT: NULL in, NULL out
SELECT simhash_jaccard(NULL, 'a') IS NULL AS null_a, simhash_jaccard('a', NULL) IS NULL AS null_b,
	   simhash_jaccard(NULL, NULL) IS NULL AS null_both;
-- symmetric, 1 for equal texts, within [0, 1]
SELECT bool_and(simhash_jaccard(x, y) = simhash_jaccard(y, x)) AS symmetric,
	   bool_and(simhash_jaccard(x, x) = 1) AS reflexive,
	   bool_and(simhash_jaccard(x, y) BETWEEN 0 AND 1) AS bounded
FROM (VALUES ('a b c d'), ('a a b'), (''), ('中文 text'), (repeat('x y ', 50))) v1(x),
	 (VALUES ('a b'), ('c c c c'), ('z'), ('文 TEXT'), (repeat('x ', 30))) v2(y);
-- huge texts: 2 MB of one word against 1 MB of it (both capped at 8: 1),
-- 30,000 distinct words against their first half
SELECT simhash_jaccard(repeat('word ', 400000), repeat('word ', 200000)) AS huge_same_word,
	   simhash_jaccard(t, left(t, length(t) / 2)) BETWEEN 0.49 AND 0.51 AS huge_half
FROM (SELECT string_agg(md5(i::text), ' ') AS t FROM generate_series(1, 30000) i) s;
-- stored out of line, compressed and not: the same as in memory
CREATE TABLE jbig (id int, body text);
ALTER TABLE jbig ALTER body SET STORAGE EXTERNAL;
INSERT INTO jbig SELECT 1, string_agg(md5(i::text), ' ') FROM generate_series(1, 200000) i;
INSERT INTO jbig SELECT 2, string_agg(md5(i::text), ' ') FROM generate_series(100001, 300000) i;
SELECT simhash_jaccard(a.body, b.body) AS toasted, 100000.0 / 300000 AS expected
FROM jbig a, jbig b WHERE a.id = 1 AND b.id = 2;
DROP TABLE jbig;
-- invalid input never reaches the function: a text is valid in its encoding
SELECT simhash_jaccard(convert_from('\xff'::bytea, 'UTF8'), 'a');
-- the catalog: immutable, strict, parallel safe, and costly
SELECT provolatile, proisstrict, proparallel, procost >= 1000 AS costly
FROM pg_proc WHERE oid = 'simhash_jaccard(text, text)'::regprocedure;
SELECT obj_description('simhash_jaccard(text, text)'::regprocedure, 'pg_proc') IS NOT NULL AS commented;

-- The two-stage query.  Documents: 300 topics of 6 versions of 40 words,
-- each version replacing 3 words with its own: versions of a topic have a
-- similarity of 0.7 or more, some lie within 10 bits, and so do 6 pairs of
-- unrelated documents (a similarity of 0.05 at most).
CREATE TABLE jdocs (id int PRIMARY KEY, body text, fp simhash64);
INSERT INTO jdocs
SELECT t * 10 + v, body, simhash(body)
FROM generate_series(1, 300) t, generate_series(0, 5) v,
	 LATERAL (SELECT string_agg(CASE WHEN w % 13 = v THEN 'e' || v ELSE 't' || t || 'x' || w END, ' ') AS body
			  FROM generate_series(1, 40) w) b;
CREATE INDEX jdocs_fp ON jdocs USING simhash (fp);
ANALYZE jdocs;
SELECT body AS q FROM jdocs WHERE id = 1811 \gset

-- literal: the index scan, the similarity a filter on its candidates
EXPLAIN (COSTS OFF)
SELECT id FROM jdocs WHERE fp <-> simhash(:'q') <= 10 AND simhash_jaccard(body, :'q') >= 0.5;
-- written the other way round: the same plan
EXPLAIN (COSTS OFF)
SELECT id FROM jdocs WHERE simhash_jaccard(body, :'q') >= 0.5 AND fp <-> simhash(:'q') <= 10;
-- the fingerprint alone finds an unrelated document; the similarity drops it
SELECT id, fp <-> simhash(:'q') AS distance, round(simhash_jaccard(body, :'q')::numeric, 3) AS similarity
FROM jdocs WHERE fp <-> simhash(:'q') <= 10 ORDER BY id;
SELECT id FROM jdocs WHERE fp <-> simhash(:'q') <= 10 AND simhash_jaccard(body, :'q') >= 0.5 ORDER BY id;
-- without the index, the cheap distance comes first among the filters, so
-- the similarity runs only on rows within k
SET enable_indexscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF)
SELECT id FROM jdocs WHERE simhash_jaccard(body, :'q') >= 0.5 AND fp <-> simhash(:'q') <= 10;
-- and gives the same rows
SELECT id FROM jdocs WHERE fp <-> simhash(:'q') <= 10 AND simhash_jaccard(body, :'q') >= 0.5 ORDER BY id;
RESET enable_indexscan;
RESET enable_bitmapscan;

-- prepared, generic plan: the same shape with parameters
PREPARE two_stage(text, int, float8) AS
	SELECT id FROM jdocs WHERE fp <-> simhash($1) <= $2 AND simhash_jaccard(body, $1) >= $3 ORDER BY id;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE two_stage(:'q', 10, 0.5);
EXECUTE two_stage(:'q', 10, 0.5);
RESET plan_cache_mode;
DEALLOCATE two_stage;

-- all pairs: the band join, the similarity a join filter on its pairs
EXPLAIN (COSTS OFF)
SELECT a.id, b.id FROM jdocs a JOIN jdocs b
	ON a.fp <-> b.fp <= 3 AND a.id < b.id AND simhash_jaccard(a.body, b.body) >= 0.5;
-- at a larger k too the band join (here 4 times as fast as the nested loop
-- over the index); the nested loop, forced, filters its candidates
EXPLAIN (COSTS OFF)
SELECT a.id, b.id FROM jdocs a JOIN jdocs b
	ON a.fp <-> b.fp <= 10 AND a.id < b.id AND simhash_jaccard(a.body, b.body) >= 0.5;
SET simhash.enable_join = off;
EXPLAIN (COSTS OFF)
SELECT a.id, b.id FROM jdocs a JOIN jdocs b
	ON a.fp <-> b.fp <= 10 AND a.id < b.id AND simhash_jaccard(a.body, b.body) >= 0.5;
RESET simhash.enable_join;
-- the unrelated pairs within 10 bits go, every version pair stays
SELECT count(*) AS pairs, count(*) FILTER (WHERE a.id / 10 <> b.id / 10) AS unrelated
FROM jdocs a JOIN jdocs b ON a.fp <-> b.fp <= 10 AND a.id < b.id;
CREATE TEMP TABLE two_stage_pairs AS
SELECT a.id AS aid, b.id AS bid FROM jdocs a JOIN jdocs b
	ON a.fp <-> b.fp <= 10 AND a.id < b.id AND simhash_jaccard(a.body, b.body) >= 0.5;
SELECT count(*) AS pairs, count(*) FILTER (WHERE aid / 10 <> bid / 10) AS unrelated FROM two_stage_pairs;
-- the same pairs as a nested loop evaluating both conditions
SET simhash.enable_join = off;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
CREATE TEMP TABLE seq_pairs AS
SELECT a.id AS aid, b.id AS bid FROM jdocs a JOIN jdocs b
	ON a.fp <-> b.fp <= 10 AND a.id < b.id AND simhash_jaccard(a.body, b.body) >= 0.5;
SELECT (SELECT count(*) FROM (TABLE seq_pairs EXCEPT TABLE two_stage_pairs) m) AS missing,
	   (SELECT count(*) FROM (TABLE two_stage_pairs EXCEPT TABLE seq_pairs) e) AS extra;
RESET simhash.enable_join;
RESET enable_indexscan;
RESET enable_bitmapscan;
DROP TABLE jdocs;
