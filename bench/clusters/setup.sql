-- bench/clusters/setup.sql -- one table of clustered fingerprints, as in
-- bench/planner/setup.sql: :centres centres x 90 copies, each copy with 0-3
-- distinct bits flipped (copies of a centre next to each other in the heap),
-- plus :randoms random rows.  No index: neither the band join nor
-- simhash_clusters needs one.
--   psql -v tab=cl_1m -v centres=10000 -v randoms=100000 -f setup.sql
\set ON_ERROR_STOP on
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
DROP TABLE IF EXISTS :tab;
SELECT setseed(0.5);
CREATE TABLE :tab (id bigint, fp simhash64);
-- the flips are drawn per copy; b1, b2, b3 are distinct bits, the first
-- nflip of them flipped (see bench/planner/setup.sql)
INSERT INTO :tab
SELECT c * 100 + j,
	   (v # (CASE WHEN nflip > 0 THEN 1::int8 << b1 ELSE 0 END)
		  # (CASE WHEN nflip > 1 THEN 1::int8 << b2 ELSE 0 END)
		  # (CASE WHEN nflip > 2 THEN 1::int8 << (b3 + (b3 >= greatest(b1, b2))::int) ELSE 0 END))::simhash64
FROM (
	SELECT c, j, v, nflip, b1, b2, r3 + (r3 >= least(b1, b2))::int AS b3
	FROM (
		SELECT c, j, v, nflip, b1, (b1 + 1 + r2) % 64 AS b2, r3
		FROM (
			SELECT c, j, v, floor(random() * 4)::int AS nflip, floor(random() * 64)::int AS b1,
				   floor(random() * 63)::int AS r2, floor(random() * 62)::int AS r3
			FROM (SELECT c, (floor(random() * 4294967296)::int8 << 32) |
							 floor(random() * 4294967296)::int8 AS v
				  FROM generate_series(1, :centres) c OFFSET 0) centres,
				 generate_series(1, 90) j
			OFFSET 0) a
		OFFSET 0) b
	OFFSET 0) copies
ORDER BY c, j;
INSERT INTO :tab
SELECT 1000000000 + i, ((floor(random() * 4294967296)::int8 << 32) | floor(random() * 4294967296)::int8)::simhash64
FROM generate_series(1, :randoms) i;
VACUUM ANALYZE :tab;
