-- fill.sql -- copy en/zh into the uncompressed tables; vacuum and analyze.
-- (body || '' builds a new value: an INSERT ... SELECT of the bare column
-- would keep the pglz-compressed datums as they are.)
\set ON_ERROR_STOP on
SET client_min_messages = warning;
INSERT INTO simhash_speed.en_plain SELECT path, body || '' FROM simhash_speed.en;
INSERT INTO simhash_speed.zh_plain SELECT path, body || '' FROM simhash_speed.zh;
VACUUM ANALYZE simhash_speed.en, simhash_speed.zh,
	simhash_speed.en_plain, simhash_speed.zh_plain;
SELECT 'uncompressed: ' || count(*) FILTER (WHERE pg_column_compression(body) IS NOT NULL)
	   || ' compressed values left' AS check
FROM (SELECT body FROM simhash_speed.en_plain
	  UNION ALL SELECT body FROM simhash_speed.zh_plain) AS t \gset
\echo :check
