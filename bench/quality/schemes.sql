-- schemes.sql -- compute every candidate fingerprint scheme in SQL.
--
-- Fills simhash_bench.fp (scheme, id, fp) for all documents, using only the
-- extension's functions (simhash(text), simhash_features(text) and
-- simhash(text[], float8[])) plus PostgreSQL's regexp functions.
--
--   a_default        simhash(body): the extension's default (TF cap
--                    SIMHASH_TF_CAP as compiled; 8 when this was written)
--   b_cap_none, b_cap256 .. b_cap1
--                    the default's features (simhash_features) with weight
--                    occurrences, least(occurrences, C); cap 1 = binary
--   f_rel10, f_rel16, f_rel20, f_rel50
--                    a cap that grows with the document (see weight_fps)
--   c_words_hanbi    words + Han character bigrams, TF capped at 8
--   d_char4          character 4-grams of the word characters, TF capped at 8
--   e_shingle3       word 3-shingles (a Han character is a word), TF capped at 8
--
-- c, d and e cannot reuse simhash_features (it gives each distinct feature
-- once, not the token sequence), so they tokenize with regular expressions
-- over lower(normalize(body, NFKC)): an approximation of the extension's
-- tokenizer in which "word characters" are explicit code point ranges
-- (ASCII digits and letters, Latin-1 and Latin Extended letters, combining
-- marks, Greek, Cyrillic, kana, Hangul) and "Han" is the CJK ideograph
-- blocks.  Everything else separates tokens, as in the extension.

\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;	-- leave the second core alone
SET work_mem = '256MB';
SET search_path = simhash_bench, public;

-- Regular-expression bracket contents for word and Han characters.
CREATE FUNCTION re_word() RETURNS text IMMUTABLE LANGUAGE sql AS
$$ SELECT '0-9a-z\u00aa\u00b5\u00ba\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02af\u0300-\u036f'
          '\u0370-\u03ff\u0400-\u052f\u3041-\u3096\u30a1-\u30fa\u30fc'
          '\u1100-\u11ff\u3131-\u318e\uac00-\ud7a3' $$;
CREATE FUNCTION re_han() RETURNS text IMMUTABLE LANGUAGE sql AS
$$ SELECT '\u3005\u3007\u3021-\u3029\u3038-\u303b\u3400-\u4dbf\u4e00-\u9fff'
          '\uf900-\ufaff\U00020000-\U0003ffff' $$;

-- Fingerprint of a bag of features (one array element per occurrence),
-- each distinct feature weighing least(occurrences, cap).
CREATE FUNCTION bag_simhash(feats text[], cap int) RETURNS simhash64
IMMUTABLE LANGUAGE sql AS $$
	SELECT simhash(coalesce(array_agg(f), '{}'),
				   coalesce(array_agg(least(n, cap)::float8), '{}'))
	FROM (SELECT f, count(*) AS n FROM unnest(feats) AS f GROUP BY f) AS g
$$;

-- c: tokens are runs of word characters and runs of Han characters; a Han
-- run of length n >= 2 gives its n-1 bigrams, a lone Han character itself.
CREATE FUNCTION feats_words_hanbi(norm text) RETURNS text[]
IMMUTABLE LANGUAGE sql AS $$
	SELECT coalesce(array_agg(coalesce(m[2], substr(m[1], i, 2))), '{}')
	FROM regexp_matches(norm, '([' || re_han() || ']+)|([' || re_word() || ']+)', 'g') AS m,
		 generate_series(1, CASE WHEN m[1] IS NULL THEN 1
								 ELSE greatest(length(m[1]) - 1, 1) END) AS i
$$;

-- d: all overlapping 4-grams of the word and Han characters, everything else
-- (spaces, punctuation, symbols) removed first.  Four passes of the
-- non-overlapping '.{4}' at offsets 1..4 give every 4-gram once (substr()
-- on a long multibyte string is linear, so generate_series + substr would
-- be quadratic).  A text shorter than 4 such characters is one feature.
CREATE FUNCTION feats_char4(norm text) RETURNS text[]
IMMUTABLE LANGUAGE sql AS $$
	WITH s AS (SELECT regexp_replace(norm, '[^' || re_word() || re_han() || ']+', '', 'g') AS s)
	SELECT CASE WHEN length(s) < 4 THEN
				CASE WHEN s = '' THEN '{}'::text[] ELSE ARRAY[s] END
		   ELSE (SELECT array_agg(m[1])
				 FROM generate_series(1, 4) AS k,
					  regexp_matches(substr(s, k), '.{4}', 'g') AS m)
		   END
	FROM s
$$;

-- e: word 3-shingles over tokens = runs of word characters and single Han
-- characters; fewer than 3 tokens make one shingle of all of them.
CREATE FUNCTION feats_shingle3(norm text) RETURNS text[]
IMMUTABLE LANGUAGE sql AS $$
	SELECT coalesce(array_agg(sh), '{}')
	FROM (SELECT concat_ws(' ', tok, lead(tok, 1) OVER w, lead(tok, 2) OVER w) AS sh,
				 ord, count(*) OVER () AS n
		  FROM regexp_matches(norm, '[' || re_han() || ']|[' || re_word() || ']+', 'g')
			   WITH ORDINALITY AS t(m, ord),
			   LATERAL (SELECT m[1] AS tok) AS x
		  WINDOW w AS (ORDER BY ord)) AS s
	WHERE ord <= greatest(n - 2, 1)
$$;

\echo computing a_default
INSERT INTO fp SELECT 'a_default', id, simhash(body) FROM docs;

-- b and f: the default's features (one simhash_features pass per text)
-- with other weights, all at once:
--   b_capC      least(occurrences, C); b_cap_none: occurrences
--   f_relD      least(occurrences, greatest(8, floor(W8 / D))), where W8 is
--               the document's total weight under cap 8: a cap that grows
--               with the document (an extra candidate, not in the brief)
-- Weights are integers, so the sums are exact and the order is irrelevant.
-- Also used by junk.sql.
CREATE FUNCTION weight_fps(body text) RETURNS TABLE (scheme text, fp simhash64)
IMMUTABLE LANGUAGE sql AS $$
	SELECT c.scheme,
		   simhash(ft.f,
				   (SELECT coalesce(array_agg(least(o, CASE WHEN c.d IS NOT NULL
															THEN greatest(8, ft.w8 / c.d)
															ELSE coalesce(c.cap, o) END)::float8
											  ORDER BY i), '{}')
					FROM unnest(ft.n) WITH ORDINALITY AS u(o, i)))
	FROM (SELECT coalesce(array_agg(feature ORDER BY ord), '{}') AS f,
				 coalesce(array_agg(occurrences ORDER BY ord), '{}') AS n,
				 coalesce(sum(least(occurrences, 8)), 0)::int8 AS w8
		  FROM simhash_features(body) WITH ORDINALITY AS sf(feature, occurrences, weight, ord)
		 ) AS ft,
		 (VALUES ('b_cap_none', NULL::int, NULL::int), ('b_cap256', 256, NULL),
				 ('b_cap128', 128, NULL), ('b_cap64', 64, NULL), ('b_cap32', 32, NULL),
				 ('b_cap16', 16, NULL), ('b_cap8', 8, NULL), ('b_cap4', 4, NULL),
				 ('b_cap2', 2, NULL), ('b_cap1', 1, NULL),
				 ('f_rel10', NULL, 10), ('f_rel16', NULL, 16), ('f_rel20', NULL, 20),
				 ('f_rel50', NULL, 50)
		 ) AS c(scheme, cap, d)
$$;

\echo computing b_cap*, f_rel*
INSERT INTO fp SELECT w.scheme, d.id, w.fp FROM docs AS d, weight_fps(d.body) AS w;

\echo computing c_words_hanbi, d_char4, e_shingle3
CREATE TEMP TABLE norm AS
SELECT id, lower(normalize(body, NFKC)) AS norm FROM docs;
INSERT INTO fp SELECT 'c_words_hanbi', id, bag_simhash(feats_words_hanbi(norm), 8) FROM norm;
INSERT INTO fp SELECT 'd_char4', id, bag_simhash(feats_char4(norm), 8) FROM norm;
INSERT INTO fp SELECT 'e_shingle3', id, bag_simhash(feats_shingle3(norm), 8) FROM norm;

ANALYZE fp;
