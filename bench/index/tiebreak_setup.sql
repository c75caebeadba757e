-- bench/index/tiebreak_setup.sql -- small clusters, where a LIMIT of 9
-- ends at a cluster's edge: the case that makes an Incremental Sort slow.
--
-- Usage: psql -d simhash_index_bench -v n=10000000 -f bench/index/tiebreak_setup.sql
-- then:  psql -d simhash_index_bench -v prefix=ixb_k9 -f bench/index/tiebreak.sql
--
-- Table ixb_k9_simhash (id, fp) with a simhash index: 90 % of the n rows
-- in clusters of 9 copies of a random centre with 0 to 2 bits flipped, 10 %
-- random; ixb_k9_q: 200 query fingerprints, rows of the table with 2 bits
-- flipped (so the 9 copies of the query's cluster are its nearest, and the
-- 10th row lies outside the cluster, about 20 bits away: an Incremental
-- Sort must find it to finish the 9th row's group).
\set ON_ERROR_STOP 1
\if :{?n}
\else
\set n 10000000
\endif
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
DROP TABLE IF EXISTS ixb_k9_simhash, ixb_k9_q;
CREATE FUNCTION pg_temp.k9_fp(i int8) RETURNS int8 LANGUAGE sql IMMUTABLE AS
$$ SELECT (hashint8(i)::int8 << 32) | (hashint8(-i - 1)::int8 & 4294967295) $$;
CREATE TABLE ixb_k9_simhash (id int8, fp simhash64);
INSERT INTO ixb_k9_simhash
SELECT i,
	   CASE WHEN i % 10 = 0 THEN pg_temp.k9_fp(i)
			ELSE pg_temp.k9_fp(-(i / 10) - 1)	-- the centre of i's cluster
				 # (CASE WHEN i % 3 > 0 THEN 1::int8 << (hashint8(i * 7) & 63) ELSE 0 END)
				 # (CASE WHEN i % 3 > 1 THEN 1::int8 << (hashint8(i * 13) & 63) ELSE 0 END)
	   END::simhash64
FROM generate_series(1, :n) i;
CREATE INDEX ixb_k9_simhash_fp ON ixb_k9_simhash USING simhash (fp);
VACUUM ANALYZE ixb_k9_simhash;
CREATE TABLE ixb_k9_q AS
SELECT row_number() OVER ()::int AS qid, id AS src,
	   fp::int8 # (1::int8 << (hashint8(id) & 63)) # (1::int8 << (hashint8(id + 1) & 63)) AS q
FROM (SELECT id, fp FROM ixb_k9_simhash WHERE id % 10 <> 0
	  ORDER BY hashint8(id * 31) LIMIT 200) s;
SELECT count(*) AS rows, pg_size_pretty(pg_relation_size('ixb_k9_simhash_fp')) AS index_size
FROM ixb_k9_simhash;
