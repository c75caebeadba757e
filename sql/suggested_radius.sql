--
-- simhash_radius(): the search radius proposed for a text or a feature weight
--
-- boundaries: NULL, no features, small and huge weights, negative weights
SELECT simhash_radius(NULL::text) AS null_text, simhash_radius(NULL::int8) AS null_weight;
SELECT simhash_radius('') AS empty, simhash_radius(' ... !!! ') AS punctuation_only,
	   simhash_radius(0) AS zero;
SELECT simhash_radius(1) AS w1, simhash_radius(10) AS w10, simhash_radius(11) AS w11,
	   simhash_radius(16) AS w16, simhash_radius(143) AS w143, simhash_radius(144) AS w144,
	   simhash_radius(2147483647) AS int4_max, simhash_radius(9223372036854775807) AS int8_max;
SELECT simhash_radius(-1);
SELECT simhash_radius(-9223372036854775808);
SELECT simhash_radius(length('abc') - 10);
-- one word repeated a million times weighs 8 (the cap): a tiny text
SELECT simhash_radius(repeat('word ', 1000000)) AS one_word_repeated,
	   simhash_radius(repeat('中', 100000)) AS one_han_repeated;
-- the radius never grows with the weight and stays within [3, 12]
SELECT count(*) FILTER (WHERE simhash_radius(w) > simhash_radius(w - 1)) AS increases,
	   min(simhash_radius(w)), max(simhash_radius(w))
FROM generate_series(2, 5000) AS w;
-- the text form is the weight form of the text's features
SELECT t, simhash_radius(t) AS radius,
	   simhash_radius((SELECT sum(weight)::int8 FROM simhash_features(t))) AS by_weight
FROM (VALUES ('The quick brown fox jumps over the lazy dog, said the typographer.'),
			 ('中文文本的近似重复检测，不需要分词。'),
			 ('the the the the the the the the the the the the a b c'),
			 (repeat('Near-duplicate detection for whole documents. ', 40))) AS v(t);

-- a table of sentences, each with a one-word variant, and unrelated noise
CREATE TABLE sentences (id int PRIMARY KEY, body text NOT NULL,
	fp simhash64 GENERATED ALWAYS AS (simhash(body)) STORED);
INSERT INTO sentences VALUES
	(1, 'The quick brown fox jumps over the lazy dog, said the typographer.'),
	(2, 'The quick brown fox jumped over the lazy dog, said the typographer.'),
	(3, '中文文本的近似重复检测，不需要分词。'),
	(4, '中文文本的近似重复检查，不需要分词。');
-- noise: 1,000 sentences of 3 to 40 words drawn from 60 words
INSERT INTO sentences
SELECT 100 + i, string_agg(w[1 + (hashint4(i * 100 + j) & 2147483647) % 60], ' ' ORDER BY j)
FROM generate_series(1, 1000) AS i,
	 LATERAL generate_series(1, 3 + i % 38) AS j,
	 (SELECT regexp_split_to_array('alpha bravo charlie delta echo foxtrot golf hotel india juliet '
		'kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray '
		'yankee zulu one two three four five six seven eight nine ten red green blue black white '
		'north south east west up down left right in out on off yes no maybe always never often', ' ') AS w) AS v
GROUP BY i;
CREATE INDEX sentences_fp ON sentences USING simhash (fp);
ANALYZE sentences;

-- the fox sentences are 4 bits apart: k = 3 misses them, the proposed radius does not
SELECT a.fp <-> b.fp AS distance, simhash_radius(a.body) AS radius
FROM sentences a, sentences b WHERE a.id = 1 AND b.id = 2;

-- "fp <-> simhash($1) <= simhash_radius($1)" is an index scan: constant,
-- parameter (generic plan) and lateral forms
SET enable_seqscan = off;
EXPLAIN (COSTS OFF)
SELECT id FROM sentences
WHERE fp <-> simhash('the quick brown fox jumps over the lazy dog said the typographer')
	  <= simhash_radius('the quick brown fox jumps over the lazy dog said the typographer');
SELECT id FROM sentences
WHERE fp <-> simhash('the quick brown fox jumps over the lazy dog said the typographer')
	  <= simhash_radius('the quick brown fox jumps over the lazy dog said the typographer')
ORDER BY id;
PREPARE near(text) AS
	SELECT id FROM sentences WHERE fp <-> simhash($1) <= simhash_radius($1) ORDER BY id;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE near('中文文本的近似重复检测，不需要分词。');
EXECUTE near('中文文本的近似重复检测，不需要分词。');
EXECUTE near(NULL);
EXECUTE near('');
RESET plan_cache_mode;
EXPLAIN (COSTS OFF)
SELECT a.id, b.id FROM sentences a
CROSS JOIN LATERAL (SELECT id FROM sentences b
					WHERE b.fp <-> a.fp <= simhash_radius(a.body) AND b.id > a.id) b
WHERE a.id <= 4;
SELECT a.id, b.id FROM sentences a
CROSS JOIN LATERAL (SELECT id FROM sentences b
					WHERE b.fp <-> a.fp <= simhash_radius(a.body) AND b.id > a.id) b
WHERE a.id <= 4 ORDER BY 1, 2;

-- the same answers as a sequential scan, every row's text as the query
CREATE TABLE queries AS
SELECT id, simhash(body) AS q, simhash_radius(body) AS k FROM sentences;
CREATE TABLE by_index AS
SELECT a.id AS q, array_agg(b.id ORDER BY b.id) AS ids
FROM sentences a
CROSS JOIN LATERAL (SELECT id FROM sentences b
					WHERE b.fp <-> simhash(a.body) <= simhash_radius(a.body)) b
GROUP BY a.id;
RESET enable_seqscan;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
SELECT count(*) AS queries,
	   count(*) FILTER (WHERE i.ids IS DISTINCT FROM
		(SELECT array_agg(b.id ORDER BY b.id) FROM sentences b WHERE b.fp <-> q.q <= q.k))
		AS mismatches,
	   sum(cardinality(i.ids)) AS rows_found, min(q.k), max(q.k)
FROM queries q LEFT JOIN by_index i ON i.q = q.id;
RESET enable_indexscan;
RESET enable_bitmapscan;

-- any role may call it
CREATE ROLE radius_user;
SET ROLE radius_user;
SELECT simhash_radius('a short text'), simhash_radius(100);
RESET ROLE;
DROP ROLE radius_user;
DROP TABLE sentences, queries, by_index;
