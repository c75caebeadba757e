-- bench/compare/setup.sql -- the rows of compare_builds.sh (made once, by
-- whichever build is installed; the two builds share the on-disk format).
--
-- psql variables: n (rows of cb_u and cb_c), ing_base (rows already in the
-- ingest table), ing_new (rows arriving), copyfile (server-side file for
-- the COPY measurement).
--   cb_u      n uniform fingerprints hashint8extended(i, 42)
--   cb_c      n clustered: n/100 centres x 90 copies with 0-3 bits flipped,
--             plus 10% random rows, heap order shuffled (the generator of
--             bench/index/knn_compare.sh)
--   cb_uq, cb_cq  200 queries each: existing rows with two bits flipped
--   cb_ing_base   ing_base rows in the same clustered shape (another seed)
--   cb_ing_arr    ing_new rows: half a base row with 0-2 bits flipped (a
--                 near-duplicate at k = 3), half random; written to copyfile
\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET maintenance_work_mem = '1GB';
SET max_parallel_workers_per_gather = 0;
CREATE EXTENSION IF NOT EXISTS simhash;
DROP TABLE IF EXISTS cb_pl, cb_u, cb_c, cb_uq, cb_cq, cb_ing_base, cb_ing_arr, cb_r;

CREATE TABLE cb_u AS
SELECT i AS id, hashint8extended(i, 42)::simhash64 AS fp FROM generate_series(1, :n::int8) i;

-- centre c: hashint8extended(c, 42); copy j flips (j % 4) bits
CREATE TABLE cb_c AS
SELECT row_number() OVER (ORDER BY hashint8extended(c * 97 + j, 7)) AS id, v::simhash64 AS fp
FROM (SELECT c, j, hashint8extended(c, 42)
		# CASE WHEN j % 4 > 0 THEN 1::int8 << (abs(hashint8extended(c * 97 + j, 1)) % 64)::int ELSE 0 END
		# CASE WHEN j % 4 > 1 THEN 1::int8 << (abs(hashint8extended(c * 97 + j, 2)) % 64)::int ELSE 0 END
		# CASE WHEN j % 4 > 2 THEN 1::int8 << (abs(hashint8extended(c * 97 + j, 3)) % 64)::int ELSE 0 END AS v
	  FROM generate_series(1, :n::int8 / 100) c, generate_series(1, 90) j
	  UNION ALL
	  SELECT -i, 0, hashint8extended(i, 43)
	  FROM generate_series(1, :n::int8 - (:n::int8 / 100) * 90) i) s;

CREATE TABLE cb_uq AS
SELECT row_number() OVER (ORDER BY id) AS qid, id,
	   (fp::int8 # (1::int8 << (id % 64)::int) # (1::int8 << ((id * 7 + 3) % 64)::int))::simhash64 AS q
FROM cb_u WHERE id % (:n / 200) = 7 ORDER BY id LIMIT 200;
CREATE TABLE cb_cq AS
SELECT row_number() OVER (ORDER BY id) AS qid, id,
	   (fp::int8 # (1::int8 << (id % 64)::int) # (1::int8 << ((id * 7 + 3) % 64)::int))::simhash64 AS q
FROM cb_c WHERE id % (:n / 200) = 7 ORDER BY id LIMIT 200;

CREATE INDEX cb_u_id ON cb_u (id);
CREATE INDEX cb_u_fp ON cb_u USING simhash (fp);
CREATE INDEX cb_c_fp ON cb_c USING simhash (fp);

CREATE TABLE cb_ing_base AS
SELECT row_number() OVER (ORDER BY hashint8extended(c * 97 + j, 17)) AS id, v AS fp
FROM (SELECT c, j, hashint8extended(c, 52)
		# CASE WHEN j % 4 > 0 THEN 1::int8 << (abs(hashint8extended(c * 97 + j, 11)) % 64)::int ELSE 0 END
		# CASE WHEN j % 4 > 1 THEN 1::int8 << (abs(hashint8extended(c * 97 + j, 12)) % 64)::int ELSE 0 END
		# CASE WHEN j % 4 > 2 THEN 1::int8 << (abs(hashint8extended(c * 97 + j, 13)) % 64)::int ELSE 0 END AS v
	  FROM generate_series(1, :ing_base::int8 / 100) c, generate_series(1, 90) j
	  UNION ALL
	  SELECT -i, 0, hashint8extended(i, 53)
	  FROM generate_series(1, :ing_base::int8 - (:ing_base::int8 / 100) * 90) i) s;
CREATE INDEX ON cb_ing_base (id);
CREATE TABLE cb_ing_arr AS
SELECT i AS id,
	   CASE WHEN i % 2 = 0
			THEN (SELECT b.fp FROM cb_ing_base b WHERE b.id = 1 + abs(hashint8extended(i, 61)) % :ing_base)
				 # CASE WHEN i % 3 > 0 THEN 1::int8 << (abs(hashint8extended(i, 62)) % 64)::int ELSE 0 END
				 # CASE WHEN i % 3 > 1 THEN 1::int8 << (abs(hashint8extended(i, 63)) % 64)::int ELSE 0 END
			ELSE hashint8extended(i, 64) END AS fp
FROM generate_series(1, :ing_new::int8) i;
COPY (SELECT fp::simhash64 FROM cb_ing_arr ORDER BY id) TO :'copyfile';
-- the same as int8, for the baseline COPY into a plain btree-indexed table
SET bench.copyfile = :'copyfile';
DO $$ BEGIN
	EXECUTE format('COPY (SELECT fp FROM cb_ing_arr ORDER BY id) TO %L', current_setting('bench.copyfile') || '.int8');
END $$;

-- cb_pl: bench/planner/setup.sql's pl_sim (1M clustered rows, copies of a
-- centre next to each other; always 1M, whatever n), for the planning time
-- and the band self-join
SELECT setseed(0.5);
CREATE TABLE cb_pl (id bigint, fp simhash64);
-- the flips are drawn per copy (a subquery without outer references would
-- be evaluated once, making all 90 copies of a centre identical); b1, b2,
-- b3 are distinct bits, the first nflip of them flipped, as in
-- bench/index/setup.sql
INSERT INTO cb_pl
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
INSERT INTO cb_pl
SELECT 10000000 + i, ((floor(random() * 4294967296)::int8 << 32) | floor(random() * 4294967296)::int8)::simhash64
FROM generate_series(1, 100000) i;
CREATE INDEX cb_pl_fp ON cb_pl USING simhash (fp);
VACUUM ANALYZE cb_pl;

CREATE TABLE cb_r (label text, round int, metric text, cpu_ms float8, wall_ms float8, result text);
VACUUM ANALYZE cb_u;
VACUUM ANALYZE cb_c;
VACUUM ANALYZE cb_uq;
VACUUM ANALYZE cb_cq;
VACUUM ANALYZE cb_ing_base;
VACUUM ANALYZE cb_ing_arr;
