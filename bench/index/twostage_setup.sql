-- bench/index/twostage_setup.sql -- the rows of twostage.sql and radius.sql
-- (included by them with \ir; psql variables n, and words, default 40).
--
-- ts_docs is rebuilt when it does not hold n rows of "words" words:
-- documents of MD5 hex strings (33 bytes a word with its space).  90 % come
-- in clusters of 10 copies, each copy but the first replacing one word of
-- the cluster's text by its own; 10 % are random.

\if :{?words}
\else
\set words 40
\endif

SELECT to_regclass('ts_docs') IS NOT NULL AS have_table \gset
\if :have_table
SELECT count(*) = :n AND (SELECT length(body) FROM ts_docs LIMIT 1) = :words * 33 - 1
	AS have_rows FROM ts_docs \gset
\else
\set have_rows f
\endif
\if :have_rows
\else
DROP TABLE IF EXISTS ts_docs;
CREATE TABLE ts_docs (id bigint, body text, fp simhash64);
INSERT INTO ts_docs
SELECT i, body, simhash(body)
FROM generate_series(1, :n) i,
	 LATERAL (SELECT string_agg(CASE
					WHEN i > :n * 9 / 10 THEN md5('r' || i || 'w' || w)
					WHEN i % 10 > 0 AND w = (i % 10) * :words / 10 THEN md5('c' || i)
					ELSE md5('t' || (i / 10) || 'w' || w) END, ' ') AS body
			  FROM generate_series(1, :words) w) b;
CREATE INDEX ts_docs_fp ON ts_docs USING simhash (fp);
VACUUM ANALYZE ts_docs;
\endif

