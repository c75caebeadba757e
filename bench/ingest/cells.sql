-- bench/ingest/cells.sql -- what coarser lock cells of the near-duplicate
-- trigger would cost: for cells of b bits per band (the 16-bit block
-- itself at b = 16, a hash of it into 2^b values otherwise, one value per
-- band at b = 0), the share of pairs of arriving rows that are not within
-- k = 3 of each other but share a cell in some band (so that two
-- concurrent single-row checks of them wait for each other needlessly),
-- over 2M random pairs of ing_arrivals, and exactly at b = 16 from the
-- block counts of each band.  A row in flight tells at most 4 b bits
-- through its cells.  Needs the tables of run.sh (ing_arrivals); results
-- in RESULTS.md, "Lock cells: bits told against false waits".
--   psql -d simhash_ingest_bench -f bench/ingest/cells.sql
\timing off
SET max_parallel_workers_per_gather = 0;
SET work_mem = '512MB';
DROP TABLE IF EXISTS lc_fp, lc_pairs;
CREATE TABLE lc_fp AS SELECT row_number() OVER (ORDER BY id) AS i, simhash(body)::int8 AS f FROM ing_arrivals;
CREATE INDEX ON lc_fp (i);
-- 2M pairs of arriving rows drawn at random (as pgbench's random(1, N) does)
SELECT setseed(0.26);
CREATE TABLE lc_pairs AS
SELECT a.f AS f1, b.f AS f2
FROM (SELECT g, 1 + floor(random() * 1000000)::int8 AS i1, 1 + floor(random() * 1000000)::int8 AS i2
      FROM generate_series(1, 2000000) g) p
JOIN lc_fp a ON a.i = p.i1 JOIN lc_fp b ON b.i = p.i2;
-- cell of band j at b bits: the block itself at 16, else a hash of it
CREATE OR REPLACE FUNCTION lc_cell(f int8, j int, b int) RETURNS int LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN b = 16 THEN ((f >> (48 - 16 * j)) & 65535)::int
              WHEN b = 0 THEN 0
              ELSE hashint4((((f >> (48 - 16 * j)) & 65535)::int) + 65536 * j) & ((1 << b) - 1) END $$;
SELECT b AS cell_bits, 4 * b AS bits_told,
       count(*) AS pairs,
       count(*) FILTER (WHERE near) AS pairs_within_3,
       count(*) FILTER (WHERE share AND NOT near) AS false_waits,
       round(count(*) FILTER (WHERE share AND NOT near)::numeric / count(*) FILTER (WHERE NOT near), 6) AS false_wait_rate
FROM (SELECT b, hamming(f1::simhash64, f2::simhash64) <= 3 AS near,
             EXISTS (SELECT FROM generate_series(0, 3) j WHERE lc_cell(f1, j, b) = lc_cell(f2, j, b)) AS share
      FROM lc_pairs, (VALUES (16), (12), (8), (4), (2), (0)) v(b)) s
GROUP BY b ORDER BY b DESC;
-- the same at 16 bits, exactly over all pairs: sum over bands of sum of p^2
SELECT j, round(sum(c::numeric * c) / 1e12, 8) AS p_share_band, max(c) AS busiest_block
FROM (SELECT j, count(*) AS c FROM lc_fp, generate_series(0, 3) j GROUP BY j, (f >> (48 - 16 * j)) & 65535) s
GROUP BY j ORDER BY j;
-- random fingerprints, for comparison
SELECT round(1 - (1 - 1 / 65536.0) ^ 4, 8) AS random_16, round(1 - (1 - 1 / 256.0) ^ 4, 6) AS random_8;
DROP TABLE lc_fp, lc_pairs;
DROP FUNCTION lc_cell(int8, int, int);
