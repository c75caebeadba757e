--
-- The fingerprint trigger and the near-duplicate trigger
--
SET jit = off;
CREATE OR REPLACE FUNCTION sqlstate_of(query text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE query;
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
-- every field of the error a statement raises
CREATE FUNCTION error_fields(query text, OUT state text, OUT message text, OUT detail text,
	OUT hint text, OUT table_name text, OUT constraint_name text) LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE query;
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT,
		detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT, table_name = TABLE_NAME,
		constraint_name = CONSTRAINT_NAME;
END $$;

------------------------------------------------------------------------------
-- simhash_fingerprint_trigger
------------------------------------------------------------------------------
CREATE TABLE art (id int PRIMARY KEY, title text, body varchar, note text, fp simhash64);
CREATE TRIGGER art_fp BEFORE INSERT OR UPDATE ON art FOR EACH ROW
	EXECUTE FUNCTION simhash_fingerprint_trigger(fp, title, body);
INSERT INTO art VALUES
	(1, 'Near-duplicates', 'Fingerprints of text, compared bit by bit.', NULL, NULL),
	(2, NULL, 'Only a body.', NULL, 'ffffffffffffffff'),
	(3, 'Only a title', NULL, NULL, NULL),
	(4, NULL, NULL, NULL, '0000000000000000');
-- the value is that of the documented expression; NULL when every text is
SELECT id, fp, fp IS NOT DISTINCT FROM
		(CASE WHEN num_nonnulls(title, body) > 0 THEN simhash(concat_ws(E'\n', title, body)) END)
		AS as_documented
FROM art ORDER BY id;
SELECT simhash('Only a body.') = fp AS one_column FROM art WHERE id = 2;
-- no feature spans two columns: "a" + "b" is not the word "ab"
INSERT INTO art VALUES (5, 'a', 'b', NULL, NULL);
SELECT fp = simhash('a b') AS separate_words, fp <> simhash('ab') AS not_joined FROM art WHERE id = 5;
-- UPDATE recomputes when a text column or the fingerprint is assigned
ALTER TABLE art DISABLE TRIGGER art_fp;
UPDATE art SET fp = '0123456789abcdef' WHERE id = 1;
ALTER TABLE art ENABLE TRIGGER art_fp;
UPDATE art SET note = 'unrelated' WHERE id = 1;
SELECT fp FROM art WHERE id = 1;
UPDATE art SET body = body WHERE id = 1;
SELECT fp = simhash(concat_ws(E'\n', title, body)) AS recomputed FROM art WHERE id = 1;
UPDATE art SET fp = '0123456789abcdef' WHERE id = 1;
SELECT fp = simhash(concat_ws(E'\n', title, body)) AS overwritten FROM art WHERE id = 1;
-- and when the text changes without being assigned, as by an earlier BEFORE
-- trigger (art_body fires before art_fp), also through the SET of an
-- ON CONFLICT DO UPDATE: the fingerprint follows the text
CREATE FUNCTION body_from_note() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.note IS DISTINCT FROM OLD.note THEN
		NEW.body := 'A body about ' || NEW.note;
	END IF;
	RETURN NEW;
END $$;
CREATE TRIGGER art_body BEFORE UPDATE ON art FOR EACH ROW EXECUTE FUNCTION body_from_note();
UPDATE art SET note = 'cats' WHERE id = 1;
SELECT body, fp = simhash(concat_ws(E'\n', title, body)) AS follows_text FROM art WHERE id = 1;
INSERT INTO art (id, note) VALUES (1, 'dogs') ON CONFLICT (id) DO UPDATE SET note = excluded.note;
SELECT body, fp = simhash(concat_ws(E'\n', title, body)) AS follows_text FROM art WHERE id = 1;
-- an unchanged text keeps the stored fingerprint, even a wrong one
ALTER TABLE art DISABLE TRIGGER art_fp;
UPDATE art SET fp = '0123456789abcdef' WHERE id = 1;
ALTER TABLE art ENABLE TRIGGER art_fp;
UPDATE art SET note = 'dogs' WHERE id = 1;
SELECT fp FROM art WHERE id = 1;
DROP TRIGGER art_body ON art;
DROP FUNCTION body_from_note();
DROP TRIGGER art_fp ON art;

-- misuse: each a coded error, nothing stored
CREATE TABLE misuse (id int, t text, n int, fp simhash64, g simhash64 GENERATED ALWAYS AS (simhash(t)) STORED);
CREATE TRIGGER m AFTER INSERT ON misuse FOR EACH ROW EXECUTE FUNCTION simhash_fingerprint_trigger(fp, t);
SELECT sqlstate_of($$INSERT INTO misuse (id, t) VALUES (1, 'x')$$) AS after_row;
DROP TRIGGER m ON misuse;
CREATE TRIGGER m BEFORE INSERT ON misuse FOR EACH STATEMENT EXECUTE FUNCTION simhash_fingerprint_trigger(fp, t);
SELECT sqlstate_of($$INSERT INTO misuse (id, t) VALUES (1, 'x')$$) AS for_each_statement;
DROP TRIGGER m ON misuse;
INSERT INTO misuse (id, t) VALUES (0, 'kept');
CREATE TRIGGER m BEFORE DELETE ON misuse FOR EACH ROW EXECUTE FUNCTION simhash_fingerprint_trigger(fp, t);
SELECT sqlstate_of($$DELETE FROM misuse$$) AS on_delete;
DROP TRIGGER m ON misuse;
CREATE FUNCTION fp_trigger_with(args text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE 'DROP TRIGGER IF EXISTS m ON misuse';
	EXECUTE format('CREATE TRIGGER m BEFORE INSERT OR UPDATE ON misuse FOR EACH ROW EXECUTE FUNCTION simhash_fingerprint_trigger(%s)', args);
	RETURN sqlstate_of($q$INSERT INTO misuse (id, t) VALUES (1, 'x')$q$);
END $$;
SELECT args, fp_trigger_with(args) AS result
FROM (VALUES ('fp'), ('fp, t, nosuch'), ('nosuch, t'), ('n, t'), ('fp, n'), ('g, t'), ('ctid, t')) v(args);
DROP TRIGGER m ON misuse;
SELECT id, t, fp FROM misuse ORDER BY id;
-- a generated text column is computed after BEFORE triggers, which would
-- see no text in it and store a NULL fingerprint: refused with 0A000 when
-- the trigger first fires, also as the second of two text columns
CREATE TABLE gf (id int PRIMARY KEY, raw text,
				 body text GENERATED ALWAYS AS (lower(raw)) STORED, fp simhash64);
CREATE TRIGGER f BEFORE INSERT OR UPDATE ON gf FOR EACH ROW
	EXECUTE FUNCTION simhash_fingerprint_trigger(fp, body);
SELECT state, message, detail, hint FROM error_fields($$INSERT INTO gf (id, raw) VALUES (1, 'Abc')$$);
DROP TRIGGER f ON gf;
CREATE TRIGGER f BEFORE INSERT OR UPDATE ON gf FOR EACH ROW
	EXECUTE FUNCTION simhash_fingerprint_trigger(fp, raw, body);
SELECT state, message FROM error_fields($$INSERT INTO gf (id, raw) VALUES (1, 'Abc')$$);
-- the columns it is generated from work
DROP TRIGGER f ON gf;
CREATE TRIGGER f BEFORE INSERT OR UPDATE ON gf FOR EACH ROW
	EXECUTE FUNCTION simhash_fingerprint_trigger(fp, raw);
INSERT INTO gf (id, raw) VALUES (1, 'Abc');
SELECT id, body, fp = simhash(raw) AS fingerprinted FROM gf ORDER BY id;
DROP TABLE gf;

------------------------------------------------------------------------------
-- simhash_near_duplicate_trigger
------------------------------------------------------------------------------
-- fingerprints at known distances from 0
CREATE FUNCTION bits(n int) RETURNS simhash64 LANGUAGE sql IMMUTABLE AS
$$ SELECT CASE WHEN n >= 64 THEN 'ffffffffffffffff'::simhash64
			   ELSE ((1::int8 << n) - 1)::simhash64 END $$;
SELECT bits(0), bits(3), bits(3) <-> bits(0), bits(64) <-> bits(0);

CREATE TABLE nd (id int PRIMARY KEY, fp simhash64, dup_of int, dup_dist int);
CREATE INDEX nd_fp ON nd USING simhash (fp);

-- reject: the nearest row is named, with the distance
CREATE TRIGGER nd_near BEFORE INSERT OR UPDATE ON nd FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'reject');
INSERT INTO nd (id, fp) VALUES (1, bits(0)), (2, bits(20));
\x on
SELECT * FROM error_fields($$INSERT INTO nd (id, fp) VALUES (3, bits(3))$$);
\x off
INSERT INTO nd (id, fp) VALUES (3, bits(4)), (4, NULL), (5, NULL);
-- a batch holding two near-copies fails as a whole
SELECT sqlstate_of($$INSERT INTO nd (id, fp) VALUES (6, bits(40)), (7, bits(41))$$) AS batch;
SELECT id, fp FROM nd ORDER BY id;
-- an UPDATE that makes a near-copy is caught; one that leaves the
-- fingerprint alone is not checked
SELECT sqlstate_of($$UPDATE nd SET fp = bits(21) WHERE id = 3$$) AS update_near;
ALTER TABLE nd DISABLE TRIGGER nd_near;
INSERT INTO nd (id, fp) VALUES (8, bits(1));
ALTER TABLE nd ENABLE TRIGGER nd_near;
UPDATE nd SET dup_of = 0 WHERE id = 8;
SELECT sqlstate_of($$UPDATE nd SET fp = bits(2) WHERE id = 8$$) AS update_still_near;
UPDATE nd SET fp = bits(30) WHERE id = 8;
DELETE FROM nd WHERE id IN (8);
-- rows of earlier statements of the transaction count, rolled-back ones do not
BEGIN;
INSERT INTO nd (id, fp) VALUES (10, bits(50));
SAVEPOINT s;
INSERT INTO nd (id, fp) VALUES (11, bits(60));
ROLLBACK TO s;
SELECT sqlstate_of($$INSERT INTO nd (id, fp) VALUES (12, bits(52))$$) AS earlier_statement;
INSERT INTO nd (id, fp) VALUES (13, bits(61));
COMMIT;
SELECT id, fp FROM nd ORDER BY id;
DROP TRIGGER nd_near ON nd;
TRUNCATE nd;

-- skip: a batch keeps the first of its near-copies, in VALUES, INSERT ...
-- SELECT and COPY alike
CREATE TRIGGER nd_near BEFORE INSERT OR UPDATE ON nd FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'skip');
INSERT INTO nd (id, fp) VALUES (1, bits(0)), (2, bits(2)), (3, bits(10)), (4, bits(13)), (5, bits(14));
INSERT INTO nd (id, fp) SELECT 100 + i, bits(30 + i % 3) FROM generate_series(1, 9) i;
COPY nd (id, fp) FROM STDIN;
200	ffffffffffffffff
201	fffffffffffffffe
202	7fffffffffffffff
203	00000000ffffffff
\.
SELECT id, fp FROM nd ORDER BY id;
DROP TRIGGER nd_near ON nd;
TRUNCATE nd;

-- link: the nearest earlier row, the smallest key among equals
CREATE TRIGGER nd_near BEFORE INSERT OR UPDATE ON nd FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'link', dup_of, dup_dist);
INSERT INTO nd (id, fp) VALUES (5, bits(3)), (3, '0000000000000003'::simhash64), (4, bits(0));
INSERT INTO nd (id, fp) VALUES (1, '0000000000000001'), (2, 'ffff000000000000'), (9, NULL);
INSERT INTO nd (id, fp, dup_of, dup_dist) VALUES (20, 'ffff00000000f000', 77, 77);
SELECT id, fp, dup_of, dup_dist, fp <-> (SELECT fp FROM nd m WHERE m.id = nd.dup_of) AS check_dist
FROM nd ORDER BY id;
DROP TRIGGER nd_near ON nd;
-- options by name, and only the distance
CREATE TRIGGER nd_near BEFORE INSERT ON nd FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'link', 'link_distance=dup_dist');
INSERT INTO nd (id, fp) VALUES (30, 'ffff00000000f001');
SELECT id, dup_of, dup_dist FROM nd WHERE id = 30;
DROP TRIGGER nd_near ON nd;
TRUNCATE nd;

-- k = 0 catches exact copies only (and still locks its own block in every
-- band, so that checks with other radii conflict with it); k = 64
-- everything; a large k locks the whole table instead of key ranges (same
-- results)
CREATE TRIGGER nd_near BEFORE INSERT ON nd FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 0, 'skip');
BEGIN;
INSERT INTO nd (id, fp) VALUES (1, bits(5)), (2, bits(5)), (3, bits(6));
SELECT mode, count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()
	AND objsubid = 21320 GROUP BY mode;
COMMIT;
SELECT array_agg(id ORDER BY id) AS k0 FROM nd;
DROP TRIGGER nd_near ON nd;
TRUNCATE nd;
CREATE TRIGGER nd_near BEFORE INSERT ON nd FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 64, 'skip');
INSERT INTO nd (id, fp) VALUES (1, bits(0)), (2, bits(64)), (3, bits(32));
SELECT array_agg(id ORDER BY id) AS k64 FROM nd;
DROP TRIGGER nd_near ON nd;
TRUNCATE nd;
CREATE TRIGGER nd_near BEFORE INSERT ON nd FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 12, 'skip');
BEGIN;
INSERT INTO nd (id, fp) VALUES (1, bits(0)), (2, bits(12)), (3, bits(13)), (4, bits(26));
SELECT count(*) FILTER (WHERE objsubid = 21321) AS table_locks,
	   count(*) FILTER (WHERE objsubid = 21320) AS cell_locks
FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid();
COMMIT;
SELECT array_agg(id ORDER BY id) AS k12 FROM nd;
DROP TRIGGER nd_near ON nd;
TRUNCATE nd;
-- and k = 3 locks key ranges: the four blocks of the fingerprint
CREATE TRIGGER nd_near BEFORE INSERT ON nd FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'skip');
BEGIN;
INSERT INTO nd (id, fp) VALUES (1, '0123456789abcdef');
SELECT mode, count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()
GROUP BY mode ORDER BY mode;
COMMIT;
DROP TRIGGER nd_near ON nd;
TRUNCATE nd;

-- k 'auto': simhash_radius() of the row's text, so that short texts find
-- their near-copies (the sentences are 4 to 8 bits apart: k = 3 misses
-- them, the radius of an 11-word sentence is 11); a text without features
-- matches nothing, not even another one
CREATE TABLE short_docs (id int PRIMARY KEY, body text, fp simhash64, dup_of int, dup_dist int);
CREATE INDEX ON short_docs USING simhash (fp);
CREATE TRIGGER a_fp BEFORE INSERT ON short_docs FOR EACH ROW
	EXECUTE FUNCTION simhash_fingerprint_trigger(fp, body);
CREATE TRIGGER b_fixed BEFORE INSERT ON short_docs FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'link', dup_of, dup_dist);
INSERT INTO short_docs (id, body) VALUES
	(1, 'The quick brown fox jumps over the lazy dog, said the typographer.'),
	(2, 'The quick brown fox jumped over the lazy dog, said the typographer.');
DROP TRIGGER b_fixed ON short_docs;
CREATE TRIGGER b_auto BEFORE INSERT ON short_docs FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 'auto', 'link', dup_of, dup_dist, 'text=body');
INSERT INTO short_docs (id, body) VALUES
	(3, 'The quick brown fox jumps over the lazy cat, said the typographer.'),
	(4, '!!!'), (5, '...'), (6, NULL);
SELECT id, simhash_radius(body) AS k, dup_of, dup_dist FROM short_docs ORDER BY id;
DROP TABLE short_docs;

-- verify=s: a candidate within k counts only if simhash_jaccard of its
-- text (the text= columns joined as the fingerprint trigger joins them)
-- and the new row's is at least s.  The fingerprints are set by hand, so
-- that an unrelated text can lie within k: bits(n) is n bits from bits(0).
CREATE TABLE vdocs (id int PRIMARY KEY, title text, body text, fp simhash64,
					dup_of int, dup_dist int);
CREATE INDEX ON vdocs USING simhash (fp);
CREATE TRIGGER v BEFORE INSERT OR UPDATE ON vdocs FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'reject', 'text=body', 'verify=0.7');
INSERT INTO vdocs (id, body, fp) VALUES
	(1, 'The quick brown fox jumps over the lazy dog, said the typographer.', bits(0));
-- the similarities the cases below rest on
SELECT simhash_jaccard(body, 'The quick brown fox jumped over the lazy dog, said the typographer.') AS near_copy,
	   simhash_jaccard(body, 'Index pages hold runs of sorted fingerprint keys.') AS unrelated
FROM vdocs WHERE id = 1;
-- an unrelated text 1 bit away is not a near-duplicate
SELECT sqlstate_of($$INSERT INTO vdocs (id, body, fp) VALUES
	(2, 'Index pages hold runs of sorted fingerprint keys.', bits(1))$$) AS unrelated_within_k;
-- a near-copy 2 bits away is: the detail names the row it copies
SELECT state, detail FROM error_fields($$INSERT INTO vdocs (id, body, fp) VALUES
	(3, 'The quick brown fox jumped over the lazy dog, said the typographer.', bits(2))$$);
-- the same near-copy beyond k is not (confirmation only filters candidates)
SELECT sqlstate_of($$INSERT INTO vdocs (id, body, fp) VALUES
	(4, 'The quick brown fox jumped over the lazy dog, said the typographer.', bits(10))$$) AS beyond_k;
-- a NULL text confirms nothing, on either side
SELECT sqlstate_of($$INSERT INTO vdocs (id, body, fp) VALUES (5, NULL, bits(11))$$) AS null_new,
	   sqlstate_of($$INSERT INTO vdocs (id, body, fp) VALUES
	(6, 'The quick brown fox jumped over the lazy dog, said the typographer.', bits(12))$$)
		AS next_to_null_and_copy;
SELECT sqlstate_of($$INSERT INTO vdocs (id, body, fp) VALUES (7, 'Anything at all.', bits(5))$$)
	AS next_to_null;
-- an UPDATE that keeps the fingerprint but changes the text is checked again
SELECT sqlstate_of($$UPDATE vdocs SET body = 'The quick brown fox jumps over the lazy dog, said the typographer!'
	WHERE id = 2$$) AS update_to_copy;
SELECT sqlstate_of($$UPDATE vdocs SET title = 'a title' WHERE id = 2$$) AS update_other_column;
SELECT id, body, fp <-> bits(0) AS bits FROM vdocs ORDER BY id;

-- skip: the unrelated text is stored, the near-copy is not
DROP TRIGGER v ON vdocs;
TRUNCATE vdocs;
CREATE TRIGGER v BEFORE INSERT ON vdocs FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'skip', 'text=body', 'verify=0.7');
INSERT INTO vdocs (id, body, fp) VALUES
	(1, 'The quick brown fox jumps over the lazy dog, said the typographer.', bits(0)),
	(2, 'Index pages hold runs of sorted fingerprint keys.', bits(1)),
	(3, 'The quick brown fox jumped over the lazy dog, said the typographer.', bits(2));
SELECT id, body FROM vdocs ORDER BY id;

-- link: the nearest CONFIRMED row, not the nearest one
DROP TRIGGER v ON vdocs;
TRUNCATE vdocs;
CREATE TRIGGER v BEFORE INSERT ON vdocs FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'link', dup_of, dup_dist,
													'text=body', 'verify=0.7');
INSERT INTO vdocs (id, body, fp) VALUES
	(1, 'The quick brown fox jumps over the lazy dog, said the typographer.', bits(0)),
	(2, 'Index pages hold runs of sorted fingerprint keys.', bits(4)),
	(3, 'The quick brown fox jumped over the lazy dog, said the typographer.', bits(3)),
	(4, NULL, bits(3));
SELECT id, dup_of, dup_dist FROM vdocs ORDER BY id;
DROP TRIGGER v ON vdocs;
TRUNCATE vdocs;
CREATE TRIGGER v BEFORE INSERT ON vdocs FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 40, 'link', 'link_key=dup_of',
													'link_distance=dup_dist', 'text=body', 'verify=0.5');
INSERT INTO vdocs (id, body, fp) SELECT i, b, simhash(b) FROM (VALUES
	(1, 'Fingerprints of text, compared bit by bit, find near-duplicates in large collections.'),
	(2, 'The weather was cold and the river froze over in the first week of January.'),
	(3, 'Fingerprints of text, compared bit by bit, find near-duplicates in big collections.'),
	(4, 'A recipe for bread: flour, water, salt and yeast, and a day of patience.')) v(i, b);
-- with real fingerprints and k = 40, unrelated texts are within k too: each
-- row against the earlier ones within k, their similarities, and the link
-- verify= keeps
SELECT v.id, v.dup_of, v.dup_dist,
	   (SELECT min(e.id) FROM vdocs e WHERE e.id < v.id AND e.fp <-> v.fp <= 40) AS within_k,
	   (SELECT string_agg(e.id || ':' || round(simhash_jaccard(e.body, v.body)::numeric, 2), ' ' ORDER BY e.id)
		FROM vdocs e WHERE e.id < v.id AND e.fp <-> v.fp <= 40) AS similarities
FROM vdocs v ORDER BY v.id;

-- several text columns: the text compared is concat_ws(E'\n', title, body),
-- the fingerprint's text, not one column of it
DROP TRIGGER v ON vdocs;
TRUNCATE vdocs;
CREATE TRIGGER v BEFORE INSERT ON vdocs FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'reject', 'text=title,body', 'verify=0.7');
INSERT INTO vdocs (id, title, body, fp) VALUES
	(1, 'Same title here', 'one two three four five six seven eight', bits(0)),
	(2, NULL, 'red green blue cyan magenta yellow black white', bits(20));
SELECT simhash_jaccard(concat_ws(E'\n', 'Same title here', 'one two three four five six seven eight'),
					   concat_ws(E'\n', 'Same title here', 'alpha beta gamma delta epsilon zeta eta theta')) AS same_title,
	   simhash_jaccard(concat_ws(E'\n', NULL, 'red green blue cyan magenta yellow black white'),
					   concat_ws(E'\n', 'Colours', 'red green blue cyan magenta yellow black white')) AS new_title;
SELECT sqlstate_of($$INSERT INTO vdocs (id, title, body, fp) VALUES
	(3, 'Same title here', 'alpha beta gamma delta epsilon zeta eta theta', bits(1))$$) AS same_title,
	   sqlstate_of($$INSERT INTO vdocs (id, title, body, fp) VALUES
	(4, 'Colours', 'red green blue cyan magenta yellow black white', bits(21))$$) AS new_title,
	   -- (the same words split differently between the columns: the same text)
	   sqlstate_of($$INSERT INTO vdocs (id, title, body, fp) VALUES
	(5, 'one two three four', 'five six seven eight' || E'\n' || 'Same title here', bits(2))$$) AS reordered;

-- k 'auto' and verify= together
DROP TRIGGER v ON vdocs;
TRUNCATE vdocs;
CREATE TRIGGER v BEFORE INSERT ON vdocs FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 'auto', 'skip', 'text=body', 'verify=0.7');
INSERT INTO vdocs (id, body, fp) VALUES
	(1, 'The quick brown fox jumps over the lazy dog, said the typographer.', bits(0)),
	(2, 'Index pages hold runs of sorted fingerprint keys.', bits(1)),
	(3, 'The quick brown fox jumped over the lazy dog, said the typographer.', bits(9));
SELECT id FROM vdocs ORDER BY id;

-- candidates whose text is stored out of line, uncompressed, and long
-- enough to be read in slices (2.3 MB)
DROP TRIGGER v ON vdocs;
TRUNCATE vdocs;
ALTER TABLE vdocs ALTER COLUMN body SET STORAGE EXTERNAL;
CREATE TRIGGER v BEFORE INSERT ON vdocs FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'reject', 'text=body', 'verify=0.9');
INSERT INTO vdocs (id, body, fp)
SELECT 1, string_agg('w' || (i % 5000), ' '), bits(0) FROM generate_series(1, 400000) i;
SELECT pg_column_size(body) > 2000000 AS stored_long FROM vdocs;
SELECT sqlstate_of($$INSERT INTO vdocs (id, body, fp)
	SELECT 2, string_agg('w' || (i % 5000), ' ') || ' and more', bits(1)
	FROM generate_series(1, 400000) i$$) AS long_copy,
	   sqlstate_of($$INSERT INTO vdocs (id, body, fp) VALUES (3, 'w1 w2 w3', bits(2))$$) AS short_text;
SELECT id, length(body) FROM vdocs ORDER BY id;
-- an UPDATE that leaves the text alone does not read it: the stored value,
-- the same TOAST pointer before and after, is the same text (both were
-- detoasted, 2.3 MB each, at every such UPDATE); one that sets it is checked
DROP TRIGGER v ON vdocs;
CREATE TRIGGER v BEFORE INSERT OR UPDATE ON vdocs FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'reject', 'text=title,body', 'verify=0.9');
SELECT pg_stat_force_next_flush();		-- the counts below are this transaction's
BEGIN;
UPDATE vdocs SET dup_dist = 1 WHERE id = 1;
SELECT pg_stat_get_xact_blocks_fetched(reltoastrelid) AS toast_blocks_fetched
FROM pg_class WHERE oid = 'vdocs'::regclass;
COMMIT;
SELECT sqlstate_of($$UPDATE vdocs SET body = (SELECT body FROM vdocs WHERE id = 1) || ' w1', fp = bits(1)
	WHERE id = 3$$) AS update_to_long_copy,
	   sqlstate_of($$UPDATE vdocs SET title = 'w2', dup_dist = 2 WHERE id = 3$$) AS update_title;
SELECT id, length(body), title, dup_dist FROM vdocs ORDER BY id;
ALTER TABLE vdocs ALTER COLUMN body SET STORAGE EXTENDED;

-- bad verify= arguments: 22023 with the argument in the detail
DROP TRIGGER v ON vdocs;
TRUNCATE vdocs;
SET client_min_messages = warning;
SELECT args, (SELECT coalesce(state || ': ' || detail, 'ok') FROM error_fields(format(
	$q$DROP TRIGGER IF EXISTS x ON vdocs;
	   CREATE TRIGGER x BEFORE INSERT ON vdocs FOR EACH ROW
	   EXECUTE FUNCTION simhash_near_duplicate_trigger(%s);
	   INSERT INTO vdocs (id, body, fp) VALUES (1, 'a', bits(0));
	   DELETE FROM vdocs$q$, args))) AS error
FROM (VALUES
	('fp, 3, ''reject'', ''text=body'', ''verify=0'''),
	('fp, 3, ''reject'', ''text=body'', ''verify=1'''),
	('fp, 3, ''reject'', ''text=body'', ''verify=.5'''),
	('fp, 3, ''reject'', ''text=body'', ''verify=1.000'''),
	('fp, 3, ''reject'', ''text=body'', ''verify=1.01'''),
	('fp, 3, ''reject'', ''text=body'', ''verify=1.00000000000000000001'''),
	('fp, 3, ''reject'', ''text=body'', ''verify=0.99999999999999999999'''),
	('fp, 3, ''reject'', ''text=body'', ''verify=001.0'''),
	('fp, 3, ''reject'', ''text=body'', ''verify=-0.1'''),
	('fp, 3, ''reject'', ''text=body'', ''verify=NaN'''),
	('fp, 3, ''reject'', ''text=body'', ''verify=inf'''),
	('fp, 3, ''reject'', ''text=body'', ''verify=0.7x'''),
	('fp, 3, ''reject'', ''text=body'', ''verify=1e-1'''),
	('fp, 3, ''reject'', ''text=body'', ''verify= 0.7'''),
	('fp, 3, ''reject'', ''text=body'', ''verify='''),
	('fp, 3, ''reject'', ''text=body'', ''verify=.'''),
	('fp, 3, ''reject'', ''text=body'', ''verify=0.5'', ''verify=0.5'''),
	('fp, 3, ''reject'', ''verify=0.5'''),
	('fp, 3, ''reject'', ''text=body'''),
	('fp, ''auto'', ''reject'', ''verify=0.5'''),
	('fp, 3, ''link'', dup_of, ''verify=0.5'', ''text=body'''),
	('fp, 3, ''reject'', ''text=body'', ''VERIFY=0.5''')
) v(args);
RESET client_min_messages;
DROP TRIGGER x ON vdocs;
DROP TABLE vdocs;

-- a generated text column is computed after BEFORE triggers, which would
-- see no text in it: every new row would be "without text" and never a
-- near-duplicate, an exact copy included (with verify= and with k 'auto').
-- Refused with 0A000 when the trigger first fires.
CREATE TABLE gdocs (id int PRIMARY KEY, raw text,
					body text GENERATED ALWAYS AS (lower(raw)) STORED, fp simhash64);
CREATE INDEX ON gdocs USING simhash (fp);
INSERT INTO gdocs (id, raw, fp) VALUES (1, 'The quick brown fox jumps over the lazy dog.', bits(0));
CREATE TRIGGER v BEFORE INSERT ON gdocs FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'reject', 'text=body', 'verify=0.5');
SELECT state, message, detail, hint FROM error_fields($$INSERT INTO gdocs (id, raw, fp)
	VALUES (2, 'The quick brown fox jumps over the lazy dog.', bits(1))$$);
DROP TRIGGER v ON gdocs;
CREATE TRIGGER v BEFORE INSERT ON gdocs FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 'auto', 'reject', 'text=body');
SELECT state, message FROM error_fields($$INSERT INTO gdocs (id, raw, fp)
	VALUES (3, 'The quick brown fox jumps over the lazy dog.', bits(0))$$);
SELECT id, body FROM gdocs ORDER BY id;
DROP TABLE gdocs;

-- a bulk load: the transaction's own rows are searched in memory (by key
-- past 256 rows); the rows kept are those a first-come scan keeps
CREATE TABLE bulk_src AS
SELECT i AS id, ((hashint8(i / 3)::int8 << 32 | hashint8(-(i / 3))::int8 & 4294967295)
				 # (CASE WHEN i % 3 = 1 THEN 1::int8 << (i % 64) ELSE 0 END)
				 # (CASE WHEN i % 3 = 2 THEN 7::int8 << (i % 60) ELSE 0 END))::simhash64 AS fp
FROM generate_series(1, 3000) i;
CREATE TRIGGER nd_near BEFORE INSERT ON nd FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'link', dup_of, dup_dist);
INSERT INTO nd (id, fp) SELECT id, fp FROM bulk_src ORDER BY id;
-- expected: each row links to the nearest earlier row (smallest id on ties)
CREATE TABLE bulk_expected AS
SELECT s.id, m.id AS dup_of, m.d AS dup_dist
FROM bulk_src s LEFT JOIN LATERAL (
	SELECT e.id, e.fp <-> s.fp AS d FROM bulk_src e
	WHERE e.id < s.id AND e.fp <-> s.fp <= 3 ORDER BY 2, 1 LIMIT 1) m ON true;
SELECT count(*) AS rows, count(*) FILTER (WHERE dup_of IS NOT NULL) AS linked,
	   (SELECT count(*) FROM (SELECT id, dup_of, dup_dist FROM nd
							  EXCEPT SELECT * FROM bulk_expected) d) AS differences
FROM nd;
-- the same with rows rolled back in between: the in-memory search must
-- forget them (past 1024 rows it sorts the rows by key, then chains the
-- newer ones)
TRUNCATE nd;
BEGIN;
INSERT INTO nd (id, fp) SELECT id, fp FROM bulk_src WHERE id <= 1500 ORDER BY id;
SAVEPOINT s;
INSERT INTO nd (id, fp) SELECT id, fp FROM bulk_src WHERE id > 1500 AND id <= 2500 ORDER BY id;
ROLLBACK TO s;
INSERT INTO nd (id, fp) SELECT id, fp FROM bulk_src WHERE id > 2500 ORDER BY id;
COMMIT;
CREATE TABLE bulk_kept AS SELECT * FROM bulk_src WHERE id <= 1500 OR id > 2500;
SELECT count(*) AS rows, count(*) FILTER (WHERE dup_of IS NOT NULL) AS linked,
	   (SELECT count(*) FROM (SELECT id, dup_of, dup_dist FROM nd
							  EXCEPT
							  SELECT s.id, m.id, m.d FROM bulk_kept s LEFT JOIN LATERAL (
								  SELECT e.id, e.fp <-> s.fp AS d FROM bulk_kept e
								  WHERE e.id < s.id AND e.fp <-> s.fp <= 3 ORDER BY 2, 1 LIMIT 1) m ON true) d)
	   AS differences
FROM nd;
DROP TRIGGER nd_near ON nd;
TRUNCATE nd;
DROP TABLE bulk_src, bulk_expected, bulk_kept;

-- the in-memory search sorts the transaction's own rows by each band's
-- block (past 1024 rows): at its edges, rows that all share band 0's block
-- (one bucket of 2,000 rows there; groups of 4 within 2 bits), 30
-- identical rows, NULL fingerprints among them, and rows whose blocks all
-- differ in every band (pairs 4 bits apart, one bit per block, far apart
-- in id order), all linked at k = 4.  Then the same with a work_mem too
-- small for the rows, which are written out every 1,600 or so.  The links
-- are those of a first-come scan.
CREATE TABLE bt_src (id int, fp simhash64);
INSERT INTO bt_src
SELECT i, ((x'5a5a000000000000'::int8 | ((hashint8(i / 4)::int8 << 32 | hashint8(-(i / 4))::int8 & 4294967295)
										 & x'0000ffffffffffff'::int8))
		   # (CASE WHEN i % 4 > 0 THEN 1::int8 << (i % 48) ELSE 0 END)
		   # (CASE WHEN i % 4 > 1 THEN 1::int8 << ((i * 7) % 48) ELSE 0 END))::simhash64
FROM generate_series(1, 2000) i;
INSERT INTO bt_src SELECT 2000 + i, x'0123456789abcdef'::int8::simhash64 FROM generate_series(1, 30) i;
INSERT INTO bt_src SELECT 2100 + i, NULL FROM generate_series(1, 20) i;
INSERT INTO bt_src
SELECT 3000 + (2 * m + p) * 7919 % 10007, ((((m * 2 * 40503 + p) & 65535)::int8 << 48) | (((m * 2 * 52429 + p) & 65535)::int8 << 32) |
						  (((m * 2 * 30011 + p) & 65535)::int8 << 16) | ((m * 2 * 12347 + p) & 65535)::int8)::simhash64
FROM generate_series(0, 999) m, generate_series(0, 1) p;
CREATE TABLE bt_expected AS
SELECT s.id, m.id AS dup_of, m.d AS dup_dist
FROM bt_src s LEFT JOIN LATERAL (
	SELECT e.id, e.fp <-> s.fp AS d FROM bt_src e
	WHERE e.id < s.id AND e.fp <-> s.fp <= 4 ORDER BY 2, 1 LIMIT 1) m ON true;
CREATE TABLE bt_nd (id int PRIMARY KEY, fp simhash64, dup_of int, dup_dist int);
CREATE INDEX bt_nd_fp ON bt_nd USING simhash (fp);
CREATE TRIGGER bt_near BEFORE INSERT ON bt_nd FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 4, 'link', dup_of, dup_dist);
INSERT INTO bt_nd (id, fp) SELECT id, fp FROM bt_src ORDER BY id;
SELECT count(*) AS rows, count(*) FILTER (WHERE dup_of IS NOT NULL) AS linked,
	   count(*) FILTER (WHERE dup_of IS NOT NULL AND id > 3000) AS linked_distinct,
	   (SELECT count(*) FROM ((SELECT id, dup_of, dup_dist FROM bt_nd EXCEPT SELECT * FROM bt_expected)
							  UNION ALL
							  (SELECT * FROM bt_expected EXCEPT SELECT id, dup_of, dup_dist FROM bt_nd)) d)
	   AS differences
FROM bt_nd;
TRUNCATE bt_nd;
SET work_mem = '64kB';
INSERT INTO bt_nd (id, fp) SELECT id, fp FROM bt_src ORDER BY id;
RESET work_mem;
SELECT count(*) AS rows, count(*) FILTER (WHERE dup_of IS NOT NULL) AS linked,
	   (SELECT count(*) FROM ((SELECT id, dup_of, dup_dist FROM bt_nd EXCEPT SELECT * FROM bt_expected)
							  UNION ALL
							  (SELECT * FROM bt_expected EXCEPT SELECT id, dup_of, dup_dist FROM bt_nd)) d)
	   AS differences
FROM bt_nd;
DROP TABLE bt_src, bt_expected, bt_nd;

-- a bulk load into a table that already holds rows: past 16 rows the check
-- locks the whole table and reads key runs through a cache.  A small
-- work_mem flushes the buffered rows twice mid-statement (the cache must
-- start over: rows past 4731 link to flushed rows), a cache of 64kB
-- empties itself when full, and passes the runs of the keys a third of the
-- rows share without keeping them.  The links must be those of a load
-- without the cache.  Rows 2001-2500 copy rows 1-500 of the first load,
-- 4501-6000 rows 2501-4000 of their own (2 bits flipped).
CREATE TABLE kc_src AS
SELECT i AS id, ((CASE WHEN g % 3 = 0 THEN x'1234000000000000'::int8 | (h & x'0000ffffffffffff'::int8)
					   WHEN g % 3 = 1 THEN x'00000000abcd0000'::int8 | (h & x'ffffffff0000ffff'::int8)
					   ELSE h END)
				 # (CASE WHEN g <> i THEN 3::int8 << (i % 62) ELSE 0 END))::simhash64 AS fp
FROM (SELECT i, g, (hashint8(g)::int8 << 32 | hashint8(-g)::int8 & 4294967295) AS h
	  FROM (SELECT i, CASE WHEN i BETWEEN 2001 AND 2500 OR i > 4000 THEN i - 2000 ELSE i END AS g
			FROM generate_series(1, 6000) i) s) t;
CREATE TABLE kc_on (id int PRIMARY KEY, fp simhash64, dup_of int, dup_dist int);
CREATE INDEX kc_on_fp ON kc_on USING simhash (fp);
CREATE TRIGGER kc_link BEFORE INSERT ON kc_on FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'link', dup_of, dup_dist);
CREATE TABLE kc_off (LIKE kc_on INCLUDING ALL);
CREATE TRIGGER kc_link BEFORE INSERT ON kc_off FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'link', dup_of, dup_dist);
CREATE TABLE kc_default (LIKE kc_on INCLUDING ALL);
CREATE TRIGGER kc_link BEFORE INSERT ON kc_default FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'link', dup_of, dup_dist);
INSERT INTO kc_on (id, fp) SELECT id, fp FROM kc_src WHERE id <= 2000 ORDER BY id;
INSERT INTO kc_off (id, fp) SELECT id, fp FROM kc_src WHERE id <= 2000 ORDER BY id;
INSERT INTO kc_default (id, fp) SELECT id, fp FROM kc_src WHERE id <= 2000 ORDER BY id;
BEGIN;
SET LOCAL work_mem = '64kB';
SET LOCAL simhash.neardup_cache_mem = '64kB';
INSERT INTO kc_on (id, fp) SELECT id, fp FROM kc_src WHERE id > 2000 ORDER BY id;
COMMIT;
BEGIN;
SET LOCAL work_mem = '64kB';
SET LOCAL simhash.neardup_cache_mem = 0;
INSERT INTO kc_off (id, fp) SELECT id, fp FROM kc_src WHERE id > 2000 ORDER BY id;
COMMIT;
-- the default cache, which holds every run; the statement says it uses one
BEGIN;
SET LOCAL work_mem = '64kB';
SET LOCAL client_min_messages = debug1;
INSERT INTO kc_default (id, fp) SELECT id, fp FROM kc_src WHERE id > 2000 ORDER BY id;
COMMIT;
SELECT count(*) AS rows, count(*) FILTER (WHERE dup_of IS NOT NULL) AS linked,
	   count(*) FILTER (WHERE id > 4730 AND dup_of = id - 2000) AS linked_to_flushed,
	   (SELECT count(*) FROM ((TABLE kc_on EXCEPT TABLE kc_off)
							  UNION ALL (TABLE kc_off EXCEPT TABLE kc_on)) d) AS differences,
	   (SELECT count(*) FROM ((TABLE kc_default EXCEPT TABLE kc_off)
							  UNION ALL (TABLE kc_off EXCEPT TABLE kc_default)) d) AS default_differences
FROM kc_on;
SELECT sqlstate_of($$SET simhash.neardup_cache_mem = -2$$) AS below_minus_one;
DROP TABLE kc_src, kc_on, kc_off, kc_default;

-- scope: only rows of the same tenant compete; a NULL tenant competes with none
CREATE TABLE tenant_docs (id int PRIMARY KEY, tenant text, site int, fp simhash64);
CREATE INDEX ON tenant_docs USING simhash (fp);
CREATE TRIGGER t_near BEFORE INSERT OR UPDATE ON tenant_docs FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'skip', 'scope=tenant,site');
INSERT INTO tenant_docs VALUES (1, 'a', 1, bits(0)), (2, 'b', 1, bits(0)), (3, 'a', 2, bits(1)),
	(4, 'a', 1, bits(2)), (5, NULL, 1, bits(0)), (6, NULL, 1, bits(0));
SELECT array_agg(id ORDER BY id) AS scoped FROM tenant_docs;
-- moving a row into another scope is checked there
UPDATE tenant_docs SET site = 1 WHERE id = 3;
SELECT id, tenant, site FROM tenant_docs ORDER BY id;

-- a generated fingerprint column (computed after BEFORE triggers: the
-- trigger computes it itself), and the fingerprint trigger sorted first
CREATE TABLE gen (id int PRIMARY KEY, body text,
	fp simhash64 GENERATED ALWAYS AS (simhash(body)) STORED, dup_of int);
CREATE INDEX ON gen USING simhash (fp);
CREATE TRIGGER gen_near BEFORE INSERT OR UPDATE ON gen FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 4, 'link', dup_of);
INSERT INTO gen (id, body) VALUES
	(1, 'The quick brown fox jumps over the lazy dog, said the typographer.'),
	(2, 'The quick brown fox jumped over the lazy dog, said the typographer.'),
	(3, NULL);
UPDATE gen SET body = 'The quick brown fox jumps over the lazy dog, said the typographer!' WHERE id = 3;
SELECT id, dup_of FROM gen ORDER BY id;
CREATE TABLE viatrig (id int PRIMARY KEY, body text, fp simhash64, dup_of int);
CREATE INDEX ON viatrig USING simhash (fp);
CREATE TRIGGER a_fp BEFORE INSERT OR UPDATE ON viatrig FOR EACH ROW
	EXECUTE FUNCTION simhash_fingerprint_trigger(fp, body);
CREATE TRIGGER b_near BEFORE INSERT OR UPDATE ON viatrig FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 4, 'link', dup_of);
INSERT INTO viatrig (id, body) SELECT id, body FROM gen ORDER BY id;
SELECT id, dup_of FROM viatrig ORDER BY id;
-- an UPDATE that leaves a generated fingerprint's input alone takes the old
-- row's stored fingerprint and does not read the text (simhash(body) was
-- computed for the old and the new row at every UPDATE).  PostgreSQL itself
-- computes the column once, as at every UPDATE of a table with a BEFORE
-- UPDATE row trigger: the TOAST blocks read are those of a no-op trigger.
CREATE TABLE genlong (id int PRIMARY KEY, note text, body text,
	fp simhash64 GENERATED ALWAYS AS (simhash(body)) STORED);
ALTER TABLE genlong ALTER COLUMN body SET STORAGE EXTERNAL;
CREATE INDEX ON genlong USING simhash (fp);
INSERT INTO genlong (id, body)
SELECT 1, string_agg('w' || i, ' ') FROM generate_series(1, 400000) i;
CREATE FUNCTION noop_trigger() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE TRIGGER a_noop BEFORE UPDATE ON genlong FOR EACH ROW EXECUTE FUNCTION noop_trigger();
CREATE FUNCTION toast_blocks_read_by(query text) RETURNS int8 LANGUAGE plpgsql AS $$
DECLARE
	before int8 := pg_stat_get_xact_blocks_fetched(
		(SELECT reltoastrelid FROM pg_class WHERE oid = 'genlong'::regclass));
BEGIN
	EXECUTE query;
	RETURN pg_stat_get_xact_blocks_fetched(
		(SELECT reltoastrelid FROM pg_class WHERE oid = 'genlong'::regclass)) - before;
END $$;
CREATE TEMP TABLE noop_reads AS
SELECT toast_blocks_read_by($$UPDATE genlong SET note = 'a' WHERE id = 1$$) AS n;
CREATE TRIGGER b_near BEFORE INSERT OR UPDATE ON genlong FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'reject');
SELECT n > 0 AS postgres_reads_it,
	   toast_blocks_read_by($$UPDATE genlong SET note = 'b' WHERE id = 1$$) = n AS reads_like_noop
FROM noop_reads;
-- one that changes the input computes it
INSERT INTO genlong (id, body) VALUES (2, 'short');
SELECT sqlstate_of($$UPDATE genlong SET body = (SELECT body FROM genlong WHERE id = 1)
	WHERE id = 2$$) AS update_to_copy,
	   sqlstate_of($$UPDATE genlong SET note = 'c', body = 'other' WHERE id = 2$$) AS update_both;
SELECT id, note, length(body), fp = simhash(body) AS fp_of_body FROM genlong ORDER BY id;
DROP TABLE genlong;
DROP FUNCTION toast_blocks_read_by(text);
DROP FUNCTION noop_trigger();

-- a partitioned table: every partition's rows compete
CREATE TABLE pdocs (id int, fp simhash64, PRIMARY KEY (id)) PARTITION BY RANGE (id);
CREATE TABLE pdocs_1 PARTITION OF pdocs FOR VALUES FROM (0) TO (100);
CREATE TABLE pdocs_2 PARTITION OF pdocs FOR VALUES FROM (100) TO (200);
CREATE INDEX ON pdocs USING simhash (fp);
CREATE TRIGGER p_near BEFORE INSERT OR UPDATE ON pdocs FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'reject');
INSERT INTO pdocs VALUES (1, bits(0)), (150, bits(20));
SELECT sqlstate_of($$INSERT INTO pdocs VALUES (151, bits(1))$$) AS other_partition,
	   sqlstate_of($$INSERT INTO pdocs_2 VALUES (152, bits(2))$$) AS into_partition,
	   sqlstate_of($$UPDATE pdocs SET id = 50 WHERE id = 150$$) AS moving_row;
SELECT * FROM pdocs ORDER BY id;
-- a bulk load into both partitions: one key cache for the statement, which
-- both partitions' copies of the trigger share (one message), and link
-- results equal to those without it
CREATE TABLE pdocs_links (id int, fp simhash64, dup_of int, PRIMARY KEY (id)) PARTITION BY RANGE (id);
CREATE TABLE pdocs_links_1 PARTITION OF pdocs_links FOR VALUES FROM (0) TO (100);
CREATE TABLE pdocs_links_2 PARTITION OF pdocs_links FOR VALUES FROM (100) TO (200);
CREATE INDEX ON pdocs_links USING simhash (fp);
CREATE TRIGGER p_link BEFORE INSERT ON pdocs_links FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'link', dup_of);
BEGIN;
SET LOCAL client_min_messages = debug1;
INSERT INTO pdocs_links SELECT i, bits((i * 7) % 60) FROM generate_series(0, 199, 3) i;
COMMIT;
CREATE TABLE pdocs_nocache (LIKE pdocs_links INCLUDING ALL);
CREATE TRIGGER p_link BEFORE INSERT ON pdocs_nocache FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'link', dup_of);
BEGIN;
SET LOCAL simhash.neardup_cache_mem = 0;
INSERT INTO pdocs_nocache SELECT i, bits((i * 7) % 60) FROM generate_series(0, 199, 3) i;
COMMIT;
SELECT count(*) AS rows, count(dup_of) AS linked,
	   (SELECT count(*) FROM ((TABLE pdocs_links EXCEPT TABLE pdocs_nocache)
							  UNION ALL (TABLE pdocs_nocache EXCEPT TABLE pdocs_links)) d) AS differences
FROM pdocs_links;
DROP TABLE pdocs_links, pdocs_nocache;
-- every partition needs the index (here it was created ON ONLY the parent)
CREATE TABLE pdocs2 (id int PRIMARY KEY, fp simhash64) PARTITION BY RANGE (id);
CREATE TABLE pdocs2_1 PARTITION OF pdocs2 FOR VALUES FROM (0) TO (100);
CREATE TABLE pdocs2_2 PARTITION OF pdocs2 FOR VALUES FROM (100) TO (200);
CREATE INDEX ON ONLY pdocs2 USING simhash (fp);
CREATE INDEX ON pdocs2_1 USING simhash (fp);
CREATE TRIGGER p_near BEFORE INSERT ON pdocs2 FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'reject');
SELECT sqlstate_of($$INSERT INTO pdocs2 VALUES (5, bits(40))$$) AS partition_without_index;

-- row-level security: the reject message does not name a row the user
-- cannot see
CREATE ROLE simhash_trigger_user;
CREATE TABLE rls_docs (id int PRIMARY KEY, owner name, fp simhash64);
CREATE INDEX ON rls_docs USING simhash (fp);
CREATE TRIGGER r_near BEFORE INSERT ON rls_docs FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'reject');
INSERT INTO rls_docs VALUES (1, 'someone else', bits(0));
ALTER TABLE rls_docs ENABLE ROW LEVEL SECURITY;
CREATE POLICY own ON rls_docs USING (owner = current_user);
GRANT SELECT, INSERT ON rls_docs TO simhash_trigger_user;
SET ROLE simhash_trigger_user;
INSERT INTO rls_docs VALUES (2, current_user, bits(1));
INSERT INTO rls_docs VALUES (3, current_user, bits(40));
SELECT id FROM rls_docs;
RESET ROLE;
-- nor does link mode write the key of a row the user cannot see into the
-- user's row (the distance tells only that a near-duplicate exists)
CREATE TABLE rls_links (id int PRIMARY KEY, owner name, fp simhash64, dup_of int, dup_bits int);
CREATE INDEX ON rls_links USING simhash (fp);
CREATE TRIGGER r_link BEFORE INSERT ON rls_links FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'link', dup_of, dup_bits);
INSERT INTO rls_links VALUES (1, 'someone else', bits(0));
ALTER TABLE rls_links ENABLE ROW LEVEL SECURITY;
CREATE POLICY own ON rls_links USING (owner = current_user);
GRANT SELECT, INSERT ON rls_links TO simhash_trigger_user;
SET ROLE simhash_trigger_user;
INSERT INTO rls_links (id, owner, fp) VALUES (2, current_user, bits(1));
SELECT id, dup_of, dup_bits FROM rls_links;
RESET ROLE;
SELECT id, dup_of, dup_bits FROM rls_links ORDER BY id;

-- misuse and bad arguments: each a coded error, nothing stored
CREATE FUNCTION nd_trigger_with(args text, timing text DEFAULT 'BEFORE INSERT OR UPDATE',
								level text DEFAULT 'ROW') RETURNS text LANGUAGE plpgsql AS $$
DECLARE result text;
BEGIN
	EXECUTE 'DROP TRIGGER IF EXISTS x ON nd';
	EXECUTE format('CREATE TRIGGER x %s ON nd FOR EACH %s EXECUTE FUNCTION simhash_near_duplicate_trigger(%s)',
				   timing, level, args);
	result := sqlstate_of($q$INSERT INTO nd (id, fp) VALUES (1, '0123456789abcdef')$q$);
	DELETE FROM nd;		-- (what the valid definitions stored)
	RETURN result;
END $$;
SELECT args, timing, level, nd_trigger_with(args, timing, level) AS result
FROM (VALUES
	('fp, 3, ''reject''', 'AFTER INSERT', 'ROW'),
	('fp, 3, ''reject''', 'BEFORE INSERT', 'STATEMENT'),
	('fp, 3', 'BEFORE INSERT', 'ROW'),
	('', 'BEFORE INSERT', 'ROW'),
	('nosuch, 3, ''reject''', 'BEFORE INSERT', 'ROW'),
	('dup_of, 3, ''reject''', 'BEFORE INSERT', 'ROW'),
	('fp, ''-1'', ''reject''', 'BEFORE INSERT', 'ROW'),
	('fp, 65, ''reject''', 'BEFORE INSERT', 'ROW'),
	('fp, ''NULL'', ''reject''', 'BEFORE INSERT', 'ROW'),
	('fp, '''', ''reject''', 'BEFORE INSERT', 'ROW'),
	('fp, ''3.5'', ''reject''', 'BEFORE INSERT', 'ROW'),
	('fp, ''003'', ''reject''', 'BEFORE INSERT', 'ROW'),
	('fp, 3, ''ignore''', 'BEFORE INSERT', 'ROW'),
	('fp, 3, ''reject'', dup_of', 'BEFORE INSERT', 'ROW'),
	('fp, 3, ''reject'', ''bogus=1''', 'BEFORE INSERT', 'ROW'),
	('fp, 3, ''skip'', ''scope=nosuch''', 'BEFORE INSERT', 'ROW'),
	('fp, 3, ''skip'', ''scope=''', 'BEFORE INSERT', 'ROW'),
	('fp, 3, ''link''', 'BEFORE INSERT', 'ROW'),
	('fp, 3, ''link'', fp', 'BEFORE INSERT', 'ROW'),
	('fp, 3, ''link'', dup_of, fp', 'BEFORE INSERT', 'ROW'),
	('fp, 3, ''link'', dup_of, dup_dist, extra', 'BEFORE INSERT', 'ROW'),
	('fp, 3, ''LINK'', dup_of, dup_dist', 'BEFORE INSERT', 'ROW'),
	('fp, ''auto'', ''skip''', 'BEFORE INSERT', 'ROW'),
	('fp, 3, ''skip'', ''text=dup_of''', 'BEFORE INSERT', 'ROW'),
	('fp, ''auto'', ''skip'', ''text=dup_of''', 'BEFORE INSERT', 'ROW'),
	('fp, ''auto'', ''skip'', ''text=nosuch''', 'BEFORE INSERT', 'ROW'),
	-- link columns that would overwrite the key, a scope column or each other
	('fp, 3, ''link'', id', 'BEFORE INSERT', 'ROW'),
	('fp, 3, ''link'', ''link_key=dup_of'', ''link_distance=id''', 'BEFORE INSERT', 'ROW'),
	('fp, 3, ''link'', dup_of, dup_of', 'BEFORE INSERT', 'ROW'),
	('fp, 3, ''link'', ''link_distance=dup_dist'', ''scope=dup_dist''', 'BEFORE INSERT', 'ROW'),
	-- an option given twice
	('fp, 3, ''skip'', ''scope=dup_of'', ''scope=dup_dist''', 'BEFORE INSERT', 'ROW'),
	('fp, 3, ''link'', dup_of, ''link_key=dup_of''', 'BEFORE INSERT', 'ROW'),
	('fp, 3, ''link'', ''link_distance=dup_dist'', ''link_distance=dup_dist''', 'BEFORE INSERT', 'ROW'),
	-- link_key= and link_distance= name one column each, read as identifiers
	('fp, 3, ''link'', ''link_key=DUP_OF'', ''link_distance= dup_dist ''', 'BEFORE INSERT', 'ROW'),
	('fp, 3, ''link'', ''link_key="DUP_OF"''', 'BEFORE INSERT', 'ROW'),
	('fp, 3, ''link'', ''link_key=dup_of,dup_dist''', 'BEFORE INSERT', 'ROW'),
	('fp, 3, ''link'', ''link_distance=''', 'BEFORE INSERT', 'ROW')
) v(args, timing, level);
DROP TRIGGER x ON nd;
-- what the details say (the trigger is created inside the failing statement)
SELECT args, (SELECT detail FROM error_fields(format(
	$q$CREATE TRIGGER x BEFORE INSERT ON nd FOR EACH ROW
	   EXECUTE FUNCTION simhash_near_duplicate_trigger(%s);
	   INSERT INTO nd (id, fp) VALUES (1, '0123456789abcdef')$q$, args)))
FROM (VALUES ('fp, 3, ''link'', id'), ('fp, 3, ''link'', dup_of, dup_of'),
			 ('fp, 3, ''link'', ''link_distance=dup_dist'', ''scope=dup_dist'''),
			 ('fp, 3, ''skip'', ''scope=dup_of'', ''scope=dup_dist'''),
			 ('fp, 3, ''link'', ''link_key=dup_of,dup_dist''')) v(args);
-- column names with capitals and spaces, in double quotes as in SQL
CREATE TABLE quoted (id int PRIMARY KEY, "Owner Id" int, fp simhash64, "Dup Of" int, "dist" int);
CREATE INDEX ON quoted USING simhash (fp);
CREATE TRIGGER n BEFORE INSERT ON quoted FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'link', 'scope="Owner Id"',
													'link_key="Dup Of"', 'link_distance=DIST');
INSERT INTO quoted (id, "Owner Id", fp) VALUES (1, 7, bits(0)), (2, 7, bits(1)), (3, 8, bits(1));
SELECT * FROM quoted ORDER BY id;
-- an index with INCLUDE serves the trigger: its one key column is the fingerprint
CREATE TABLE incl (id int PRIMARY KEY, fp simhash64, n int);
CREATE INDEX ON incl USING simhash (fp) INCLUDE (n);
CREATE TRIGGER n BEFORE INSERT ON incl FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'reject');
INSERT INTO incl VALUES (1, bits(0), 1);
SELECT sqlstate_of($$INSERT INTO incl VALUES (2, bits(1), 2)$$) AS near_copy;
SELECT sqlstate_of($$INSERT INTO incl VALUES (3, bits(20), 3)$$) AS far;
DROP TABLE quoted, incl;
-- no simhash index, a partial one, a dropped or renamed column, no primary key
CREATE TABLE noidx (id int PRIMARY KEY, fp simhash64, fp2 simhash64, d int);
CREATE TRIGGER n BEFORE INSERT ON noidx FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'reject');
\x on
SELECT * FROM error_fields($$INSERT INTO noidx VALUES (1, bits(0))$$);
\x off
CREATE INDEX ON noidx USING simhash (fp) WHERE id > 10;
SELECT sqlstate_of($$INSERT INTO noidx VALUES (1, bits(0))$$) AS partial_index;
CREATE INDEX ON noidx USING simhash (fp);
SELECT sqlstate_of($$INSERT INTO noidx VALUES (1, bits(0))$$) AS with_index;
ALTER TABLE noidx RENAME COLUMN fp TO fingerprint;
SELECT sqlstate_of($$INSERT INTO noidx VALUES (2, bits(10))$$) AS renamed;
SELECT detail, hint FROM error_fields($$INSERT INTO noidx VALUES (2, bits(10))$$);
ALTER TABLE noidx DROP COLUMN fingerprint;
SELECT sqlstate_of($$INSERT INTO noidx VALUES (3, bits(20))$$) AS dropped;
CREATE TABLE nopk (id int, fp simhash64, dup_of int);
CREATE INDEX ON nopk USING simhash (fp);
CREATE TRIGGER n BEFORE INSERT ON nopk FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'link', dup_of);
SELECT sqlstate_of($$INSERT INTO nopk VALUES (1, bits(0))$$) AS link_without_key;
DROP TRIGGER n ON nopk;
CREATE TRIGGER n BEFORE INSERT ON nopk FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'reject');
INSERT INTO nopk VALUES (1, bits(0));
INSERT INTO nopk VALUES (2, bits(1));
SELECT * FROM noidx;
SELECT * FROM nopk;

-- an UPDATE that sets a scope column to NULL takes the row out of scope
-- (found by the fuzzer: comparing the old scope with the unset new one
-- crashed the server); one of two scope columns, the first or the second
CREATE TABLE scope_null (id int PRIMARY KEY, fp simhash64, site text, lang text);
CREATE INDEX ON scope_null USING simhash (fp);
CREATE TRIGGER n BEFORE INSERT OR UPDATE ON scope_null FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'reject', 'scope=site,lang');
INSERT INTO scope_null VALUES (1, bits(0), 'a', 'en'), (2, bits(20), 'a', 'en');
UPDATE scope_null SET lang = NULL WHERE id = 1;
UPDATE scope_null SET site = NULL WHERE id = 2;
-- a row out of scope blocks nothing; coming back into scope, it is checked
INSERT INTO scope_null VALUES (3, bits(1), 'a', 'en');
SELECT sqlstate_of($$UPDATE scope_null SET lang = 'en' WHERE id = 1$$) AS back_in_scope;
UPDATE scope_null SET lang = 'fr' WHERE id = 1;
SELECT id, fp <-> bits(0) AS bits, site, lang FROM scope_null ORDER BY id;

-- the fingerprint trigger takes any number of text columns (300 arguments
-- overflowed a fixed array and crashed the server)
CREATE TABLE many (id int, body text, fp simhash64);
DO $$ BEGIN
	EXECUTE format('CREATE TRIGGER many_fp BEFORE INSERT ON many FOR EACH ROW
		EXECUTE FUNCTION simhash_fingerprint_trigger(fp%s)', repeat(', body', 300));
END $$;
INSERT INTO many (id, body) VALUES (1, 'alpha beta');
SELECT fp = simhash(repeat(E'alpha beta\n', 299) || 'alpha beta') AS concat_of_300 FROM many;

-- the fingerprint trigger honours a domain's constraints
CREATE DOMAIN nonzero_fp AS simhash64 CHECK (VALUE <> '0000000000000000');
CREATE TABLE dom (id int, body text, fp nonzero_fp);
CREATE TRIGGER dom_fp BEFORE INSERT ON dom FOR EACH ROW
	EXECUTE FUNCTION simhash_fingerprint_trigger(fp, body);
INSERT INTO dom VALUES (1, 'some words here');
SELECT sqlstate_of($$INSERT INTO dom VALUES (2, '')$$) AS empty_text_in_domain;
SELECT count(*) FROM dom;

-- pg_locks shows cells by a keyed hash, not by band and block
CREATE TABLE locked (id int, fp simhash64);
CREATE INDEX ON locked USING simhash (fp);
CREATE TRIGGER l_near BEFORE INSERT ON locked FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'reject');
BEGIN;
INSERT INTO locked VALUES (1, '0123456789abcdef');
SELECT count(*) AS cells,
	   count(*) FILTER (WHERE objid::int8 IN (x'0123'::int8, x'14567'::int8,
			x'289ab'::int8, x'3cdef'::int8)) AS cells_showing_blocks
FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND objsubid = 21320;
COMMIT;

-- the lock budget counts a transaction's cells over all its tables: rows
-- spread over twelve tables still end in a table lock, not in exhausting
-- the shared lock table
DO $$ BEGIN
	FOR t IN 1..12 LOOP
		EXECUTE format('CREATE TABLE spread%s (id int, fp simhash64)', t);
		EXECUTE format('CREATE INDEX ON spread%s USING simhash (fp)', t);
		EXECUTE format('CREATE TRIGGER s BEFORE INSERT ON spread%s FOR EACH ROW
			EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, ''reject'')', t);
	END LOOP;
END $$;
BEGIN;
DO $$ BEGIN
	FOR i IN 1..5 LOOP
		FOR t IN 1..12 LOOP
			EXECUTE format('INSERT INTO spread%s VALUES ($1, bits($1 %% 60))', t) USING i * 12 + t;
		END LOOP;
	END LOOP;
END $$;
SELECT count(*) FILTER (WHERE objsubid = 21320) <= current_setting('max_locks_per_transaction')::int
		AS cells_within_budget,
	   count(*) FILTER (WHERE objsubid = 21321 AND mode = 'ExclusiveLock') > 0 AS some_table_locked
FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid();
COMMIT;
DO $$ BEGIN
	FOR t IN 1..12 LOOP
		EXECUTE format('DROP TABLE spread%s', t);
	END LOOP;
END $$;

DROP TABLE art, misuse, nd, tenant_docs, gen, viatrig, pdocs, pdocs2, rls_docs, noidx, nopk,
	scope_null, rls_links, many, dom, locked;
DROP DOMAIN nonzero_fp;
DROP FUNCTION fp_trigger_with(text), nd_trigger_with(text, text, text), bits(int), error_fields(text);
DROP ROLE simhash_trigger_user;
