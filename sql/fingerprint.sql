--
-- simhash(text) and its variants
--
CREATE OR REPLACE FUNCTION sqlstate_of(query text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE query;
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

-- pinned values: these must never change (tools/simhash_reference.py agrees)
SELECT simhash('Hello, world!') AS hello,
       simhash('The quick brown fox jumps over the lazy dog') AS fox,
       simhash('中文文本，没有空格。') AS chinese,
       simhash('カタカナとひらがな') AS kana;

-- no features: all bits zero (the tie rule: a zero counter gives bit 0)
SELECT simhash('') AS empty, simhash('  ,.;!? ===== ----- ') AS punctuation,
       simhash('😀 👍🏽 🇯🇵') AS emoji_only;
SELECT simhash(NULL::text) IS NULL AS strict;

-- case folding, NFKC, punctuation and spacing do not matter
SELECT simhash('Hello, World!') = simhash('hello world') AS case_and_punct,
       simhash('ＨＥＬＬＯ　ｗｏｒｌｄ') = simhash('hello world') AS fullwidth,
       simhash('café') = simhash(E'cafe\u0301') AS composed_decomposed,
       simhash('STRASSE') = simhash('straße') AS full_folding,
       simhash('ﬁne') = simhash('fine') AS ligature,
       simhash('中文，文本。') = simhash('中文 文本') AS cjk_punctuation;

-- features: words, each Han character, kana bigrams; in order of appearance
SELECT * FROM simhash_features('Hello, hello WORLD! 中文文本 カタカナ 한국어 Ünïcödé x²');
-- a lone kana is a feature; kana runs are cut by other characters
SELECT feature FROM simhash_features('か キ漢ク');

-- simhash(text) is exactly simhash(features, weights)
SELECT simhash(t) = (SELECT simhash(array_agg(feature ORDER BY ordinality),
                                    array_agg(weight ORDER BY ordinality))
                     FROM simhash_features(t) WITH ORDINALITY) AS same
FROM (VALUES ('Hello, world!'), ('a a a a a a a a a a a a b'), ('中文文本，没有空格。'),
             (repeat('lorem ipsum dolor sit amet ', 50) || 'consectetur')) v(t);

-- weights are term frequencies capped at max(8, W/16), W = sum of min(occurrences, 8)
SELECT feature, occurrences, weight
FROM simhash_features(repeat('spam ', 20) || repeat('eggs ', 3) || 'ham');
SELECT count(*) AS features, max(occurrences), max(weight)
FROM simhash_features(repeat('spam ', 100) || (SELECT string_agg('w' || i, ' ') FROM generate_series(1, 320) i));

-- junk cannot decide the fingerprint: appended punctuation changes nothing;
-- an endlessly repeated word weighs at most max(8, W/16), so real text stays
-- nearer its original than the junk, and two different junked texts do not
-- become near-duplicates (the licenses ship with every Debian system)
CREATE TABLE lorem AS
SELECT n, pg_read_file('/usr/share/common-licenses/' || f) AS body
FROM (VALUES (1, 'GPL-3'), (2, 'Apache-2.0')) v(n, f);
SELECT n, simhash(body || repeat(' =====', 10000)) = simhash(body) AS punctuation_ignored,
       (simhash(body || repeat(' spam', 100000)) <-> simhash(body)) <
       (simhash(body || repeat(' spam', 100000)) <-> simhash(repeat(' spam', 100000))) AS nearer_original
FROM lorem ORDER BY n;
SELECT (simhash(a.body || repeat(' spam', 100000)) <-> simhash(b.body || repeat(' spam', 100000))) > 3
       AS junked_texts_stay_apart
FROM lorem a, lorem b WHERE a.n = 1 AND b.n = 2;
SELECT max(weight) = greatest(8, sum(least(occurrences, 8)) / 16) AS spam_weighs_the_cap
FROM simhash_features((SELECT body FROM lorem WHERE n = 1) || repeat(' spam', 100000));

-- near-duplicates are close, unrelated texts are far
SELECT simhash(body) <-> simhash(replace(body, 'a', 'b')) > 10 AS heavy_edit_far,
       simhash(body) <-> simhash(body || ' one more word') <= 3 AS small_edit_close
FROM lorem WHERE n = 1;

-- simhash(text[]): each element weighs 1, repeats add up
SELECT simhash(ARRAY['a', 'b', 'c']) = simhash(ARRAY['c', 'b', 'a']) AS order_free,
       simhash(ARRAY['a', 'a', 'b']) = simhash(ARRAY['a', 'b'], ARRAY[2, 1]::float8[]) AS repeats_add,
       simhash(ARRAY['hello', 'world']) = simhash('Hello, World') AS same_hash,
       simhash(ARRAY[]::text[]) AS empty_array;
SELECT simhash(ARRAY['x'], ARRAY[0]::float8[]) AS zero_weight,
       simhash(ARRAY['x', 'y'], ARRAY[1e300, 1e-300]) = simhash(ARRAY['x']) AS big_weight_wins;

-- bad arrays and weights
SELECT sqlstate_of($$SELECT simhash(ARRAY['a', 'b'], ARRAY[1.0])$$);
SELECT sqlstate_of($$SELECT simhash(ARRAY['a'], ARRAY['NaN']::float8[])$$);
SELECT sqlstate_of($$SELECT simhash(ARRAY['a'], ARRAY['Infinity']::float8[])$$);
SELECT sqlstate_of($$SELECT simhash(ARRAY['a'], ARRAY[-1.0])$$);
SELECT sqlstate_of($$SELECT simhash(ARRAY['a', NULL])$$);
SELECT sqlstate_of($$SELECT simhash(ARRAY['a'], ARRAY[NULL]::float8[])$$);
SELECT sqlstate_of($$SELECT simhash(ARRAY[['a', 'b'], ['c', 'd']])$$);
SELECT simhash(ARRAY['a', 'b'], ARRAY[1.0, 'NaN']);

-- huge and tiny weights: every weight is first scaled by one power of two
-- (the largest into [0.5, 1)), so sums cannot overflow and scaling all
-- weights by a power of two, up to the largest double and down into the
-- subnormals, gives the same fingerprint
SELECT simhash(ARRAY['a', 'b', 'c', 'd', 'e'], array_fill(1.7e308::float8, ARRAY[5])) AS huge,
       simhash(ARRAY['a', 'b', 'c', 'd', 'e'], array_fill(1::float8, ARRAY[5])) AS ones,
       simhash(ARRAY['a', 'b', 'c', 'd', 'e'], array_fill(5e-324::float8, ARRAY[5])) AS tiniest;
CREATE TEMP TABLE weighted AS
SELECT array_agg('f' || i ORDER BY i) AS f, array_agg((i % 7 + 1)::float8 ORDER BY i) AS w
FROM generate_series(1, 300) i;
SELECT k, simhash(f, w) = simhash(f, ARRAY(SELECT x * 2::float8 ^ k
                                           FROM unnest(w) WITH ORDINALITY u(x, o) ORDER BY o)) AS same
FROM weighted, (VALUES (-1070), (-1000), (-60), (1), (60), (1000), (1020)) v(k) ORDER BY k;
-- tools/simhash_reference.py (weighted_simhash) gives the same value
SELECT simhash(ARRAY['alpha', 'beta', 'gamma'], ARRAY[0.5, 3.25, 1e300]) AS reference;

-- simhash(tsvector): lexemes weighted by occurrences and class (D=1 C=2 B=4 A=10, cap 8)
SELECT simhash(to_tsvector('simple', 'cat dog cat')) = simhash(ARRAY['cat', 'cat', 'dog']) AS occurrences,
       simhash('cat:1 dog:2'::tsvector) = simhash(ARRAY['cat', 'dog']) AS positions,
       simhash('cat dog'::tsvector) = simhash(ARRAY['cat', 'dog']) AS no_positions,
       simhash('cat:1A dog:2B'::tsvector) = simhash(ARRAY['cat', 'dog'], ARRAY[8, 4]::float8[]) AS classes,
       simhash(to_tsvector('english', 'The cats were running')) = simhash(ARRAY['cat', 'run']) AS stemming,
       simhash(''::tsvector) AS empty;

-- honest immutability: the same characters give the same fingerprint in
-- databases with other encodings; long texts are converted piecewise, so the
-- features of a 5 MB text are compared too
CREATE VIEW long_texts AS
SELECT string_agg('第' || i || '号中文文本，没有空格 word' || i, '。') AS chinese,
       string_agg('Größe' || i || ' café naïve ÀÉÎÕÜ', ', ') AS latin
FROM generate_series(1, 200000) i;
SELECT simhash('Ça coûte ½ µs, Straße, naïve café ÀÉÎÕÜ') AS latin_fp,
       simhash('中文文本，没有空格。English words 中英混合') AS chinese_fp,
       simhash(chinese) AS long_chinese_fp, simhash(latin) AS long_latin_fp,
       (SELECT count(*) || ' features, ' || sum(occurrences) || ' occurrences'
        FROM simhash_features(chinese)) AS long_chinese_stats,
       (SELECT count(*) || ' features, ' || sum(occurrences) || ' occurrences'
        FROM simhash_features(latin)) AS long_latin_stats
FROM long_texts \gset
SELECT simhash(ARRAY['中文', 'größe']) AS array_fp \gset
\echo :long_chinese_stats / :long_latin_stats
CREATE DATABASE simhash_latin1 TEMPLATE template0 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C';
CREATE DATABASE simhash_euc_cn TEMPLATE template0 ENCODING 'EUC_CN' LC_COLLATE 'C' LC_CTYPE 'C';
CREATE DATABASE simhash_sql_ascii TEMPLATE template0 ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C';
\c simhash_latin1
\encoding UTF8
CREATE EXTENSION simhash;
CREATE VIEW long_texts AS
SELECT string_agg('Größe' || i || ' café naïve ÀÉÎÕÜ', ', ') AS latin
FROM generate_series(1, 200000) i;
SELECT getdatabaseencoding(),
       simhash('Ça coûte ½ µs, Straße, naïve café ÀÉÎÕÜ') = :'latin_fp' AS same,
       simhash(latin) = :'long_latin_fp' AS long_same,
       (SELECT count(*) || ' features, ' || sum(occurrences) || ' occurrences'
        FROM simhash_features(latin)) = :'long_latin_stats' AS long_features_same
FROM long_texts;
SELECT * FROM simhash_features('Ça coûte ½, Straße');
-- NFKC and case folding make characters LATIN1 cannot hold (µ folds to
-- Greek mu; ¨ ´ ¸ ¯ become a space and a combining mark): simhash_features
-- writes them as \uXXXX instead of failing, for every LATIN1 character
SELECT * FROM simhash_features('µ ¨ ´ ¸ ¯ Maße µm ¼');
SELECT count(*) AS features, count(*) FILTER (WHERE feature LIKE '%\\%') AS escaped
FROM simhash_features((SELECT string_agg(chr(i), ' ') FROM generate_series(32, 255) i));
SELECT t, simhash(t) = (SELECT simhash(array_agg(feature ORDER BY ordinality),
                                       array_agg(weight ORDER BY ordinality))
                        FROM simhash_features(t) WITH ORDINALITY) AS identity
FROM (VALUES ('Ça coûte ½, Straße'), ('µ'), ('ÀÉÎÕÜ àéîõü ÿ ß')) v(t);
-- a text stored out of line uncompressed is read in slices
CREATE TABLE stored (body text);
ALTER TABLE stored ALTER body SET STORAGE EXTERNAL;
INSERT INTO stored SELECT latin FROM long_texts;
SELECT simhash(body) = simhash(body || '') AS sliced_same,
       (SELECT count(*) FROM simhash_features(body)) AS sliced_features
FROM stored;
\c simhash_euc_cn
\encoding UTF8
CREATE EXTENSION simhash;
CREATE VIEW long_texts AS
SELECT string_agg('第' || i || '号中文文本，没有空格 word' || i, '。') AS chinese
FROM generate_series(1, 200000) i;
SELECT getdatabaseencoding(),
       simhash('中文文本，没有空格。English words 中英混合') = :'chinese_fp' AS same,
       simhash(chinese) = :'long_chinese_fp' AS long_same,
       (SELECT count(*) || ' features, ' || sum(occurrences) || ' occurrences'
        FROM simhash_features(chinese)) = :'long_chinese_stats' AS long_features_same
FROM long_texts;
-- sliced from TOAST: a 1 MB slice ends inside a two-byte character
CREATE TABLE stored (body text);
ALTER TABLE stored ALTER body SET STORAGE EXTERNAL;
INSERT INTO stored SELECT 'x' || repeat('中文文本，', 300000);
INSERT INTO stored SELECT chinese FROM long_texts;
SELECT simhash(body) = simhash(body || '') AS sliced_same,
       (SELECT string_agg(feature || occurrences, ' ') FROM simhash_features(body)) =
       (SELECT string_agg(feature || occurrences, ' ') FROM simhash_features(body || '')) AS sliced_features_same
FROM stored;
\c simhash_sql_ascii
\encoding UTF8
CREATE EXTENSION simhash;
SELECT getdatabaseencoding(),
       simhash('中文文本，没有空格。English words 中英混合') = :'chinese_fp' AS same;
-- feature arrays, weighted arrays and tsvectors read bytes as UTF-8 too,
-- each byte that is not part of a well-formed sequence being U+FFFD
SELECT simhash(ARRAY[E'\xff']) = simhash(ARRAY[E'\xef\xbf\xbd']) AS array_invalid,
       simhash(ARRAY[E'a\xe4\xb8']) = simhash(ARRAY[E'a\xef\xbf\xbd\xef\xbf\xbd']) AS array_cut,
       simhash(ARRAY[E'\xc0\xafb'], ARRAY[2.0]) = simhash(ARRAY[E'\xef\xbf\xbd\xef\xbf\xbdb'], ARRAY[2.0]) AS weighted_overlong,
       simhash(E'\xed\xa0\x80:1'::tsvector) = simhash(ARRAY[E'\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd']) AS tsvector_surrogate,
       simhash(ARRAY['中文', 'größe']) = :'array_fp' AS array_same,
       simhash(E'a\xffb') = simhash('a b') AS text_invalid;
-- sliced from TOAST, invalid bytes included
CREATE TABLE stored (body text);
ALTER TABLE stored ALTER body SET STORAGE EXTERNAL;
INSERT INTO stored SELECT 'xy' || repeat(E'中文\xff文本\xe4\xb8 ', 150000);
INSERT INTO stored SELECT string_agg('第' || i || E'号中文\xff文本\xe4\xb8', ' ') FROM generate_series(1, 300000) i;
SELECT simhash(body) = simhash(body || '') AS sliced_same,
       (SELECT string_agg(feature || occurrences, ' ') FROM simhash_features(body)) =
       (SELECT string_agg(feature || occurrences, ' ') FROM simhash_features(body || '')) AS sliced_features_same
FROM stored;
\c contrib_regression
DROP DATABASE simhash_latin1;
DROP DATABASE simhash_euc_cn;
DROP DATABASE simhash_sql_ascii;
DROP VIEW long_texts;

-- a text stored out of line uncompressed is read from TOAST in 1 MB
-- slices, which end inside three-byte characters and words: same results
CREATE TABLE stored (body text);
ALTER TABLE stored ALTER body SET STORAGE EXTERNAL;
INSERT INTO stored SELECT 'xy' || repeat('中文文本，', 300000);
INSERT INTO stored SELECT string_agg('Größe' || i || ' café naïve ÀÉÎÕÜ', ', ') FROM generate_series(1, 200000) i;
INSERT INTO stored SELECT repeat('a', 5000000) || ' ' || repeat('B', 5000000);
SELECT octet_length(body), simhash(body) = simhash(body || '') AS sliced_same,
       (SELECT string_agg(feature || occurrences, ' ') FROM simhash_features(body)) =
       (SELECT string_agg(feature || occurrences, ' ') FROM simhash_features(body || '')) AS sliced_features_same
FROM stored;
-- a word longer than the word buffer is hashed incrementally, same hash
SELECT simhash(repeat('aBc', 1000000)) = simhash(ARRAY[repeat('abc', 1000000)]) AS long_word,
       simhash(repeat('ß', 100000)) = simhash(ARRAY[repeat('ss', 100000)]) AS long_folded_word;
DROP TABLE stored;

-- a 100 MB text: linear time and memory, same result as its parts agree
SELECT simhash(repeat('The quick brown fox jumps over the lazy dog. ', 2300000)) =
       simhash(repeat('The quick brown fox jumps over the lazy dog. ', 8)) AS long_text;

-- catalog properties
SELECT p.oid::regprocedure, p.provolatile, p.proparallel, p.proisstrict
FROM pg_proc p WHERE p.proname IN ('simhash', 'simhash_features') ORDER BY 1::text;

DROP TABLE lorem;

-- simhash(text) remembers the last text it fingerprinted (a row arriving
-- through the near-duplicate trigger is fingerprinted by the trigger and
-- again for its generated column); texts of the same length back to back,
-- and a text seen again, still get their own fingerprints
SELECT simhash('kernel') AS kernel \gset
SELECT simhash('kernal') AS kernal \gset
SELECT i, t, simhash(t) = CASE t WHEN 'kernel' THEN :'kernel'::simhash64 ELSE :'kernal'::simhash64 END AS right
FROM (VALUES (1, 'kernel'), (2, 'kernal'), (3, 'kernal'), (4, 'kernel'), (5, 'kernal')) v(i, t)
ORDER BY i;
SELECT :'kernel' <> :'kernal' AS differ;
