-- bench/planner/setup.sql -- the tables of the planner benchmark.
--   pl_sim    1M clustered rows (10,000 centres x 90 copies, each with 0-3
--             distinct bits flipped, copies of a centre next to each other in
--             the heap, plus 100,000 random rows), simhash index
--   pl_btree  the same rows, four btree indexes on the 16-bit blocks
--   pl_plain  100,000 rows (id int primary key, v int): no fingerprints
--   pl_sim_shuffled, pl_btree_shuffled: pl_sim and pl_btree with the rows in
--             random heap order (copies of a centre scattered over the table,
--             as when near-duplicates arrive over time), same indexes
\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET maintenance_work_mem = '1GB';
CREATE EXTENSION IF NOT EXISTS simhash;
DROP TABLE IF EXISTS pl_sim, pl_btree, pl_plain, pl_sim_shuffled, pl_btree_shuffled;
SELECT setseed(0.5);
CREATE TABLE pl_sim (id bigint, fp simhash64);
-- the flips are drawn per copy (a subquery without outer references would
-- be evaluated once, making all 90 copies of a centre identical); b1, b2,
-- b3 are distinct bits, the first nflip of them flipped, as in
-- bench/index/setup.sql
INSERT INTO pl_sim
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
				  FROM generate_series(1, 10000) c OFFSET 0) centres,
				 generate_series(1, 90) j
			OFFSET 0) a
		OFFSET 0) b
	OFFSET 0) copies
ORDER BY c, j;
INSERT INTO pl_sim
SELECT 10000000 + i, ((floor(random() * 4294967296)::int8 << 32) | floor(random() * 4294967296)::int8)::simhash64
FROM generate_series(1, 100000) i;
CREATE TABLE pl_btree AS SELECT id, fp::int8 AS fp FROM pl_sim;
CREATE INDEX pl_sim_fp ON pl_sim USING simhash (fp);
CREATE INDEX pl_btree_b0 ON pl_btree (((fp >> 48) & 65535));
CREATE INDEX pl_btree_b1 ON pl_btree (((fp >> 32) & 65535));
CREATE INDEX pl_btree_b2 ON pl_btree (((fp >> 16) & 65535));
CREATE INDEX pl_btree_b3 ON pl_btree ((fp & 65535));
CREATE TABLE pl_sim_shuffled AS SELECT * FROM pl_sim ORDER BY random();
CREATE TABLE pl_btree_shuffled AS SELECT id, fp::int8 AS fp FROM pl_sim_shuffled;
CREATE INDEX pl_sim_shuffled_fp ON pl_sim_shuffled USING simhash (fp);
CREATE INDEX pl_btree_shuffled_b0 ON pl_btree_shuffled (((fp >> 48) & 65535));
CREATE INDEX pl_btree_shuffled_b1 ON pl_btree_shuffled (((fp >> 32) & 65535));
CREATE INDEX pl_btree_shuffled_b2 ON pl_btree_shuffled (((fp >> 16) & 65535));
CREATE INDEX pl_btree_shuffled_b3 ON pl_btree_shuffled ((fp & 65535));
CREATE TABLE pl_plain AS SELECT i AS id, i AS v FROM generate_series(1, 100000) i;
ALTER TABLE pl_plain ADD PRIMARY KEY (id);
VACUUM ANALYZE pl_sim;
VACUUM ANALYZE pl_btree;
VACUUM ANALYZE pl_plain;
VACUUM ANALYZE pl_sim_shuffled;
VACUUM ANALYZE pl_btree_shuffled;
