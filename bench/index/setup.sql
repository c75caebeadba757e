-- bench/index/setup.sql -- the rows and the query fingerprints of one
-- (size, dataset) of the index benchmark.
--
-- psql variables:
--   prefix    table prefix, e.g. ixb_u_1m
--   n         number of rows
--   dataset   uniform | clustered
--   nq        number of query fingerprints
--   seed      setseed() argument
--   full      1: copies for every method (_plain, _btree4, _gin4, _simhash);
--             0: only _simhash (the 100M run: simhash index and a sequential
--             scan of the same table)
--
-- Rows: (id bigint, fp simhash64).  Every method gets its own copy of the
-- same rows in the same physical order; the baselines read fp::bigint, a
-- binary-coercible cast (no function call).
--   uniform    n random 64-bit fingerprints, id 1..n.
--   clustered  n/100 random centres x 90 copies, each with 0-3 distinct bits
--              flipped (uniformly 0, 1, 2 or 3), plus n/10 random rows; rows
--              are shuffled (copies of a centre are not neighbours in the
--              heap) and numbered 1..n in that order.
-- Queries (<prefix>_q): nq distinct existing rows, each with 2 distinct bits
-- flipped.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET synchronize_seqscans = off;		-- copies keep the physical row order
SET max_parallel_workers_per_gather = 0;
SET work_mem = '256MB';

SELECT :'prefix' || '_plain' AS t_plain, :'prefix' || '_btree4' AS t_btree4,
	   :'prefix' || '_gin4' AS t_gin4, :'prefix' || '_simhash' AS t_simhash,
	   :'prefix' || '_q' AS t_q,
	   CASE WHEN :full = 1 THEN :'prefix' || '_plain' ELSE :'prefix' || '_simhash' END AS t_base
\gset
DROP TABLE IF EXISTS :t_plain, :t_btree4, :t_gin4, :t_simhash, :t_q, ixb_stage;
SELECT setseed(:seed);

CREATE TABLE :t_base (id bigint, fp simhash64);

SELECT :'dataset' = 'uniform' AS is_uniform \gset
\if :is_uniform
-- generate_series in the target list streams (in FROM it would be
-- materialized first)
INSERT INTO :t_base
SELECT i, ((floor(random() * 4294967296)::int8 << 32) | floor(random() * 4294967296)::int8)::simhash64
FROM (SELECT generate_series(1, :n)::int8 AS i) s;
\else
CREATE UNLOGGED TABLE ixb_stage (sk float8, fp bigint);
-- centres x 90 copies; bits b1, b2, b3 distinct, the first nflip of them flipped
INSERT INTO ixb_stage
SELECT random(),
	   v # (CASE WHEN nflip > 0 THEN 1::int8 << b1 ELSE 0 END)
		 # (CASE WHEN nflip > 1 THEN 1::int8 << b2 ELSE 0 END)
		 # (CASE WHEN nflip > 2 THEN 1::int8 << (b3 + (b3 >= greatest(b1, b2))::int) ELSE 0 END)
FROM (
	SELECT v, nflip, b1, b2, r3 + (r3 >= least(b1, b2))::int AS b3
	FROM (
		SELECT v, nflip, b1, (b1 + 1 + r2) % 64 AS b2, r3
		FROM (
			SELECT v, floor(random() * 4)::int AS nflip, floor(random() * 64)::int AS b1,
				   floor(random() * 63)::int AS r2, floor(random() * 62)::int AS r3
			FROM (SELECT (floor(random() * 4294967296)::int8 << 32) | floor(random() * 4294967296)::int8 AS v
				  FROM (SELECT generate_series(1, :n / 100) AS c) c OFFSET 0) centres,
				 generate_series(1, 90) j
			OFFSET 0) a
		OFFSET 0) b
	OFFSET 0) c;
-- noise
INSERT INTO ixb_stage
SELECT random(), (floor(random() * 4294967296)::int8 << 32) | floor(random() * 4294967296)::int8
FROM (SELECT generate_series(1, :n - (:n / 100) * 90) AS i) s;
INSERT INTO :t_base
SELECT row_number() OVER (ORDER BY sk), fp::simhash64 FROM ixb_stage;
DROP TABLE ixb_stage;
\endif

-- query fingerprints: existing rows with 2 distinct bits flipped
CREATE TABLE :t_q (qid int PRIMARY KEY, src bigint, q bigint NOT NULL);
INSERT INTO :t_q
SELECT row_number() OVER (ORDER BY p.ord), t.id,
	   t.fp::bigint # (1::int8 << p.b1) # (1::int8 << ((p.b1 + 1 + p.r2) % 64))
FROM (SELECT DISTINCT ON (id) id, ord, b1, r2
	  FROM (SELECT 1 + floor(random() * :n)::int8 AS id, i AS ord,
				   floor(random() * 64)::int AS b1, floor(random() * 63)::int AS r2
			FROM generate_series(1, :nq + 50) i OFFSET 0) s
	  ORDER BY id, ord) p
JOIN :t_base t USING (id)
ORDER BY p.ord
LIMIT :nq;

\if :full
CREATE TABLE :t_btree4 AS SELECT * FROM :t_plain;
CREATE TABLE :t_gin4 AS SELECT * FROM :t_plain;
CREATE TABLE :t_simhash AS SELECT * FROM :t_plain;
\endif

-- hint bits and visibility map set before any build, so that no build pays
-- for them
\if :full
VACUUM ANALYZE :t_plain;
VACUUM ANALYZE :t_btree4;
VACUUM ANALYZE :t_gin4;
\endif
VACUUM ANALYZE :t_simhash;
VACUUM ANALYZE :t_q;
