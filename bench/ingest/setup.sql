-- bench/ingest/setup.sql -- the rows of the ingest benchmark, made from the
-- paragraphs of the Linux 6.1 and 6.12 documentation (ing_docs, loaded by
-- run.sh from tools/demo_corpus.py).  Deterministic: the same documents and
-- n give the same rows, byte for byte.
--
-- psql variables:
--   n      base rows, and as many arriving rows
--   w      partner window (2000): a row's second paragraph is one of the
--          w paragraphs just longer than its first
--   q      percentage of arriving rows that are edited copies of base rows (35)
--
-- 1. ing_paras: every prose file split at blank lines; a paragraph is kept
--    if it has at least 8 whitespace-separated words; exact duplicates
--    (within and across the two versions) are kept once.  Each paragraph has
--    a length rank r (octet length, then md5) and a shuffle rank s (md5).
-- 2. ing_base (n rows): row i (0 .. n-1) is two paragraphs joined by a blank
--    line: the lead, of shuffle rank i mod P, and a partner of similar
--    length, of length rank r_lead + 1 + (hash(r_lead) + 37 u) mod w, where
--    u = i div P (P paragraphs; each paragraph leads 8 base rows at n = 1M,
--    each time with another partner).  Two paragraphs of similar length, so
--    that neither decides the fingerprint alone.  Ids are shuffled (md5).
-- 3. ing_arrivals (n rows): row j is, by hash(j) mod 100,
--    - below q: an edited copy of base row 1 + hash(j + 7919) mod n, one of
--      four kinds in equal shares:
--        exact   the same text (a re-post, a mirror);
--        number  a section number "N.M. " put in front;
--        word    one word (the m-th, m from a hash) replaced by one of ten
--                common words of the documentation;
--        both    a section number and a word replaced;
--    - otherwise fresh: lead of shuffle rank j mod P, partner chosen as for
--      the base with u = 8 + j div P (so no (lead, partner) pair of the base
--      comes again).
--    Ids are shuffled (md5): COPY order and pgbench's random ids mix kinds.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET work_mem = '256MB';

DROP TABLE IF EXISTS ing_paras, ing_base, ing_arrivals;

CREATE TABLE ing_paras AS
SELECT row_number() OVER (ORDER BY octet_length(p), md5(p))::int - 1 AS r,
	   row_number() OVER (ORDER BY md5(p), p)::int - 1 AS s,
	   p
FROM (SELECT DISTINCT btrim(p, E' \t\n') AS p
	  FROM ing_docs, regexp_split_to_table(body, E'\\n[ \\t]*\\n') p) d
WHERE array_length(regexp_split_to_array(btrim(p), E'\\s+'), 1) >= 8;
CREATE UNIQUE INDEX ON ing_paras (r);
CREATE UNIQUE INDEX ON ing_paras (s);
ANALYZE ing_paras;
SELECT count(*) AS np FROM ing_paras \gset

CREATE TABLE ing_base AS
SELECT row_number() OVER (ORDER BY md5('b' || i))::bigint AS id, body, simhash(body) AS fp
FROM (SELECT i, pa.p || E'\n\n' || pb.p AS body
	  FROM (SELECT i, i / :np AS u, i % :np AS s FROM generate_series(0, :n - 1) i) x
	  JOIN ing_paras pa ON pa.s = x.s
	  JOIN ing_paras pb ON pb.r = (pa.r + 1 + ((hashint4(pa.r) & 2147483647) + x.u * 37) % :w) % :np
	  OFFSET 0) y
ORDER BY 1;
ALTER TABLE ing_base ADD PRIMARY KEY (id);

CREATE TABLE ing_arrivals AS
SELECT row_number() OVER (ORDER BY md5('a' || j))::bigint AS id, kind, src, body, simhash(body) AS fp
FROM (
	-- fresh rows
	SELECT j, 'fresh'::text AS kind, NULL::bigint AS src, pa.p || E'\n\n' || pb.p AS body
	FROM (SELECT j, 8 + j / :np AS u, j % :np AS s FROM generate_series(0, :n - 1) j
		  WHERE (hashint4(j) & 2147483647) % 100 >= :q) x
	JOIN ing_paras pa ON pa.s = x.s
	JOIN ing_paras pb ON pb.r = (pa.r + 1 + ((hashint4(pa.r) & 2147483647) + x.u * 37) % :w) % :np
	UNION ALL
	-- edited copies of base rows
	SELECT j, v.kind, b.id,
		   CASE v.kind
			   WHEN 'exact' THEN b.body
			   WHEN 'number' THEN v.num || b.body
			   WHEN 'word' THEN regexp_replace(b.body, '\w+', v.word, 1,
											   1 + v.h2 % greatest(1, regexp_count(b.body, '\w+')))
			   ELSE v.num || regexp_replace(b.body, '\w+', v.word, 1,
											1 + v.h2 % greatest(1, regexp_count(b.body, '\w+')))
		   END
	FROM (SELECT j, hashint4(j) & 2147483647 AS h FROM generate_series(0, :n - 1) j) x
	JOIN ing_base b ON b.id = 1 + (hashint4(x.j + 7919) & 2147483647) % :n
	CROSS JOIN LATERAL (
		SELECT (ARRAY['exact', 'number', 'word', 'both'])[1 + (x.h / 100) % 4] AS kind,
			   (1 + (x.h / 400) % 12) || '.' || (1 + (x.h / 4800) % 9) || '. ' AS num,
			   (ARRAY['system', 'driver', 'device', 'memory', 'kernel', 'support', 'value',
					  'interface', 'function', 'buffer'])[1 + (x.h / 43200) % 10] AS word,
			   hashint4(x.j + 104729) & 2147483647 AS h2) v
	WHERE x.h % 100 < :q
) a
ORDER BY 1;
ALTER TABLE ing_arrivals ADD PRIMARY KEY (id);

VACUUM ANALYZE ing_base;
VACUUM ANALYZE ing_arrivals;
