-- bench/planner/join_setup.sql -- the tables of the join-cost sweep.
--   jc_t        300,000 rows: 150,000 random fingerprints and 1,500 clusters
--               of 100 copies of a centre (each copy with 0-3 distinct bits
--               flipped, copies next to each other), simhash index
--   jc_centres  the 1,500 centres
--   jc_probe_N  N = 10, 100, 1,000, 10,000, 50,000 new rows: half copies of
--               random centres with 0-3 bits flipped, half random
\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET maintenance_work_mem = '512MB';
CREATE EXTENSION IF NOT EXISTS simhash;
DROP TABLE IF EXISTS jc_t, jc_centres, jc_probe_10, jc_probe_100, jc_probe_1000,
	jc_probe_10000, jc_probe_50000;
SELECT setseed(0.26);
-- a random 64-bit value, and v with 0-3 distinct random bits flipped
CREATE OR REPLACE FUNCTION jc_random64() RETURNS int8 LANGUAGE sql VOLATILE AS
$$SELECT (floor(random() * 4294967296)::int8 << 32) | floor(random() * 4294967296)::int8$$;
CREATE OR REPLACE FUNCTION jc_flip(v int8) RETURNS int8 LANGUAGE plpgsql VOLATILE AS $$
DECLARE n int := floor(random() * 4)::int; b int; done int8 := 0;
BEGIN
	WHILE n > 0 LOOP
		b := floor(random() * 64)::int;
		IF done & (1::int8 << b) = 0 THEN
			done := done | (1::int8 << b);
			n := n - 1;
		END IF;
	END LOOP;
	RETURN v # done;
END $$;
CREATE TABLE jc_centres AS SELECT c, jc_random64() AS v FROM generate_series(1, 1500) c;
CREATE TABLE jc_t (id bigint, fp simhash64);
INSERT INTO jc_t SELECT c * 100 + j, jc_flip(v)::simhash64
FROM jc_centres, generate_series(1, 100) j ORDER BY c, j;
INSERT INTO jc_t SELECT 1000000 + i, jc_random64()::simhash64 FROM generate_series(1, 150000) i;
CREATE INDEX jc_t_fp ON jc_t USING simhash (fp);
-- probe sets: row i is a copy of a random centre when i is odd, else random
CREATE OR REPLACE FUNCTION jc_make_probe(n int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('CREATE TABLE jc_probe_%s (id int, fp simhash64)', n);
	EXECUTE format($q$INSERT INTO jc_probe_%s
		SELECT i, CASE WHEN i %% 2 = 1
			THEN jc_flip(s.a[1 + floor(random() * 1500)::int])
			ELSE jc_random64() END::simhash64
		FROM generate_series(1, %s) i,
			 (SELECT array_agg(v ORDER BY c) AS a FROM jc_centres) s$q$, n, n);
	EXECUTE format('ANALYZE jc_probe_%s', n);
END $$;
SELECT jc_make_probe(n) FROM unnest('{10,100,1000,10000,50000}'::int[]) n;
DROP FUNCTION jc_make_probe(int);
VACUUM ANALYZE jc_t;
