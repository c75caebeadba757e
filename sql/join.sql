--
-- SimhashJoin: the band join for "a.fp <-> b.fp <= k" between two relations
--
CREATE FUNCTION jfp(i int8) RETURNS simhash64 LANGUAGE sql IMMUTABLE AS
$$ SELECT ((hashint8(i)::int8 << 32) | (hashint8(-i)::int8 & 4294967295))::simhash64 $$;
-- clustered: 60 centres x 25 copies with 0-4 bits flipped (pairs at 0..8
-- bits), random rows, and NULL fingerprints
CREATE TABLE jd (id int8, grp int4, fp simhash64);
INSERT INTO jd
SELECT c * 100 + j, c,
	   (jfp(c)::int8 # (CASE WHEN j % 5 > 0 THEN 1::int8 << (j % 61) ELSE 0 END)
					 # (CASE WHEN j % 5 > 1 THEN 1::int8 << ((j * 7) % 63) ELSE 0 END)
					 # (CASE WHEN j % 5 > 2 THEN 1::int8 << ((j * 13) % 59) ELSE 0 END)
					 # (CASE WHEN j % 5 > 3 THEN 1::int8 << ((j * 5) % 64) ELSE 0 END))::simhash64
FROM generate_series(1, 60) c, generate_series(0, 24) j;
INSERT INTO jd SELECT 100000 + i, 0, jfp(100000 + i) FROM generate_series(1, 600) i;
INSERT INTO jd SELECT 200000 + i, -1, NULL FROM generate_series(1, 20) i;
ANALYZE jd;
-- a second relation: copies of some of jd's centres
CREATE TABLE je (eid int4, fp simhash64);
INSERT INTO je SELECT c, (jfp(c)::int8 # (1::int8 << c % 64))::simhash64 FROM generate_series(1, 90) c;
ANALYZE je;
SET max_parallel_workers_per_gather = 0;	-- but see "parallel" below

-- the reference: every pair within 9 bits, by a nested loop that evaluates
-- the clause
CREATE TABLE ref AS
SELECT a.id AS aid, b.id AS bid, a.fp <-> b.fp AS d FROM jd a, jd b WHERE a.fp <-> b.fp <= 9;
CREATE FUNCTION ref_pairs(k int, strict_lt bool DEFAULT false) RETURNS TABLE (aid int8, bid int8)
LANGUAGE sql AS $$
	SELECT aid, bid FROM ref WHERE CASE WHEN strict_lt THEN d < k ELSE d <= k END
$$;
-- does a query give exactly the reference pairs, and is it a SimhashJoin?
CREATE FUNCTION same_pairs(query text, k int, strict_lt bool DEFAULT false)
RETURNS TABLE (band_join bool, pairs int8, missing int8, extra int8)
LANGUAGE plpgsql AS $$
DECLARE plan text := '';
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
		plan := plan || line || E'\n';
	END LOOP;
	band_join := plan LIKE '%Custom Scan (SimhashJoin)%';
	EXECUTE 'CREATE TEMP TABLE got (aid, bid) AS ' || query;
	SELECT count(*) INTO pairs FROM got;
	SELECT count(*) INTO missing FROM (SELECT * FROM ref_pairs(k, strict_lt) EXCEPT ALL SELECT * FROM got) m;
	SELECT count(*) INTO extra FROM (SELECT * FROM got EXCEPT ALL SELECT * FROM ref_pairs(k, strict_lt)) e;
	DROP TABLE got;
	RETURN NEXT;
END $$;

-- the self-join listing near-duplicate pairs
EXPLAIN (COSTS OFF)
SELECT a.id, b.id FROM jd a JOIN jd b ON a.fp <-> b.fp <= 3 AND a.id < b.id;
SELECT count(*) FROM jd a JOIN jd b ON a.fp <-> b.fp <= 3 AND a.id < b.id;
SELECT count(*) FROM ref_pairs(3) r WHERE r.aid < r.bid;

-- every pair (both orders, and each row with itself) at every radius 0..9,
-- whose probes differ (radius 0 per band up to k = 3, then wider); the
-- other join methods are disabled so that the band join runs at every k
SET enable_nestloop = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT k, (same_pairs(format('SELECT a.id, b.id FROM jd a JOIN jd b ON a.fp <-> b.fp <= %s', k), k)).*
FROM generate_series(0, 9) k;
-- the other spellings
SELECT (same_pairs('SELECT a.id, b.id FROM jd a JOIN jd b ON a.fp <-> b.fp < 4', 4, true)).*;
SELECT (same_pairs('SELECT a.id, b.id FROM jd a JOIN jd b ON 3 >= b.fp <-> a.fp', 3)).*;
SELECT (same_pairs('SELECT a.id, b.id FROM jd a JOIN jd b ON 4 > hamming(a.fp, b.fp)', 4, true)).*;
SELECT (same_pairs('SELECT a.id, b.id FROM jd a JOIN jd b ON a.fp <-> b.fp <= 5::int8', 5)).*;
SELECT (same_pairs('SELECT a.id, b.id FROM jd a JOIN jd b ON a.fp <-> b.fp <= 2::int2', 2)).*;
SELECT (same_pairs('SELECT a.id, b.id FROM jd a JOIN jd b ON simhash_within(a.fp, b.fp, 3)', 3)).*;
-- a radius of 64 and more is every pair; a negative or NULL one none
SELECT (same_pairs('SELECT a.id, b.id FROM jd a JOIN jd b ON a.fp <-> b.fp <= 64', 64)).band_join,
	   (SELECT count(*) FROM jd a JOIN jd b ON a.fp <-> b.fp <= 1000) =
	   (SELECT count(*) ^ 2 FROM jd WHERE fp IS NOT NULL) AS all_pairs;
SELECT count(*) FROM jd a JOIN jd b ON a.fp <-> b.fp <= -1;
SELECT count(*) FROM jd a JOIN jd b ON a.fp <-> b.fp <= NULL::int;
-- a parameter, in a generic plan
PREPARE pairs(int) AS SELECT count(*) FROM jd a JOIN jd b ON a.fp <-> b.fp <= $1 AND a.id < b.id;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE pairs(3);
EXECUTE pairs(3);
EXECUTE pairs(NULL);
EXECUTE pairs(7);
SELECT count(*) FROM ref_pairs(7) r WHERE r.aid < r.bid;
RESET plan_cache_mode;
DEALLOCATE pairs;

-- the other join clauses: fast integer comparisons and general ones
SELECT (same_pairs('SELECT a.id, b.id FROM jd a JOIN jd b ON a.fp <-> b.fp <= 3 AND a.id >= b.id
				   UNION ALL SELECT a.id, b.id FROM jd a JOIN jd b ON a.fp <-> b.fp <= 3 AND a.id < b.id', 3)).*;
EXPLAIN (COSTS OFF)
SELECT a.id, b.id FROM jd a JOIN jd b ON a.fp <-> b.fp <= 3 AND (a.id + b.id) % 3 = 0 AND a.id::text < b.id::text;
SELECT count(*) FROM jd a JOIN jd b ON a.fp <-> b.fp <= 3 AND (a.id + b.id) % 3 = 0 AND a.id::text < b.id::text;
SELECT count(*) FROM ref r JOIN jd a ON a.id = r.aid JOIN jd b ON b.id = r.bid
WHERE r.d <= 3 AND (a.id + b.id) % 3 = 0 AND a.id::text < b.id::text;
-- fingerprints computed by expressions, two different relations
SELECT (same_pairs($$SELECT a.id, b.id FROM jd a JOIN jd b
				   ON (a.fp::int8 # 0)::simhash64 <-> (b.fp::int8 # 0)::simhash64 <= 4$$, 4)).*;
EXPLAIN (COSTS OFF)
SELECT e.eid, d.id FROM je e JOIN jd d ON d.fp <-> e.fp <= 2;
SELECT count(*) FROM je e JOIN jd d ON d.fp <-> e.fp <= 2;
SET simhash.enable_join = off;
SELECT count(*) FROM je e JOIN jd d ON d.fp <-> e.fp <= 2;
RESET simhash.enable_join;
-- within a larger join
SELECT count(*) FROM jd a JOIN jd b ON a.fp <-> b.fp <= 3 AND a.id < b.id JOIN je e ON e.eid = a.grp;
SELECT count(*) FROM ref_pairs(3) r JOIN jd a ON a.id = r.aid JOIN je e ON e.eid = a.grp WHERE r.aid < r.bid;

-- an inner side larger than hash_mem: several batches, the same pairs
CREATE FUNCTION batches(query text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE plan json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON, TIMING OFF, SUMMARY OFF) ' || query INTO plan;
	RETURN (plan -> 0 -> 'Plan' -> 'Plans' -> 0 ->> 'Batches')::int;
END $$;
SET work_mem = '64kB';
SET hash_mem_multiplier = 1;
SELECT batches('SELECT count(*) FROM jd a JOIN jd b ON a.fp <-> b.fp <= 4') > 1 AS several_batches;
SELECT k, (same_pairs(format('SELECT a.id, b.id FROM jd a JOIN jd b ON a.fp <-> b.fp <= %s', k), k)).*
FROM (VALUES (1), (4), (12)) v(k);
RESET work_mem;
RESET hash_mem_multiplier;
-- and the memory of a batch stays within hash_mem, however small: small
-- batches get small key directories (they were 1 MB whatever work_mem was)
CREATE FUNCTION join_memory(query text, wm text, mult float8, OUT batches int, OUT memory_kb int)
LANGUAGE plpgsql AS $$
DECLARE plan json;
BEGIN
	PERFORM set_config('work_mem', wm, true);
	PERFORM set_config('hash_mem_multiplier', mult::text, true);
	EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON, TIMING OFF, SUMMARY OFF) ' || query INTO plan;
	batches := (plan -> 0 -> 'Plan' -> 'Plans' -> 0 ->> 'Batches')::int;
	memory_kb := (plan -> 0 -> 'Plan' -> 'Plans' -> 0 ->> 'Memory Usage')::int;
END $$;
SELECT wm, mult, k, m.batches > 1 AS several_batches,
	   m.memory_kb <= pg_size_bytes(wm) * mult / 1024 AS within_hash_mem
FROM (VALUES ('64kB'), ('100kB'), ('256kB')) w(wm), (VALUES (1.0), (2.0)) h(mult),
	 (VALUES (3), (20)) r(k),
	 LATERAL join_memory(format('SELECT count(*) FROM jd a JOIN jd b ON a.fp <-> b.fp <= %s', k),
						 wm, mult) m
ORDER BY pg_size_bytes(wm), 2, 3;
RESET work_mem;
RESET hash_mem_multiplier;

-- rescans: a radius from the outer query (the inner rows are kept), and an
-- inner side that depends on it (they are loaded again)
SELECT v.k, s.n FROM (VALUES (1), (3), (NULL), (6)) v(k),
	LATERAL (SELECT count(*) AS n FROM jd a JOIN jd b ON a.fp <-> b.fp <= v.k AND a.id < b.id) s;
SELECT k, (SELECT count(*) FROM ref_pairs(k) r WHERE r.aid < r.bid) FROM (VALUES (1), (3), (6)) v(k);
SELECT v.g, s.n FROM (VALUES (1), (2)) v(g),
	LATERAL (SELECT count(*) AS n FROM jd a JOIN (SELECT * FROM jd WHERE grp % 2 = v.g - 1) b
			 ON a.fp <-> b.fp <= 3) s;
SELECT g, count(*) FROM ref_pairs(3) r JOIN jd b ON b.id = r.bid, (VALUES (1), (2)) v(g)
WHERE b.grp % 2 = g - 1 GROUP BY g ORDER BY g;
-- a scrollable cursor reads it backwards through a Material node
DO $$
DECLARE c refcursor;
	forward int;
	backward int;
BEGIN
	OPEN c SCROLL FOR SELECT a.id, b.id FROM jd a JOIN jd b ON a.fp <-> b.fp <= 3 AND a.id < b.id;
	MOVE FORWARD ALL FROM c;
	GET DIAGNOSTICS forward = ROW_COUNT;
	MOVE BACKWARD ALL FROM c;
	GET DIAGNOSTICS backward = ROW_COUNT;
	RAISE NOTICE 'forward %, backward %', forward, backward;
END $$;

-- parallel: each process joins its share of the outer rows against its
-- own copy of the inner side; and the plan node runs in a worker
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 1;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jd a JOIN jd b ON a.fp <-> b.fp <= 3 AND a.id < b.id;
SELECT count(*) FROM jd a JOIN jd b ON a.fp <-> b.fp <= 3 AND a.id < b.id;
-- several batches: a parallel scan cannot be restarted, the kept rows are read
SET work_mem = '64kB';
SET hash_mem_multiplier = 1;
SELECT count(*) FROM jd a JOIN jd b ON a.fp <-> b.fp <= 3 AND a.id < b.id;
RESET work_mem;
RESET hash_mem_multiplier;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;
-- force_parallel_mode, debug_parallel_query since PostgreSQL 16
SELECT set_config(CASE WHEN current_setting('server_version_num')::int >= 160000
					   THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END,
				  'on', false) AS force_parallel;
SELECT count(*) FROM jd a JOIN jd b ON a.fp <-> b.fp <= 3 AND a.id < b.id;
SELECT set_config(CASE WHEN current_setting('server_version_num')::int >= 160000
					   THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END,
				  'off', false) AS force_parallel;

-- the band table (rows sorted by a band's block, a directory of buckets)
-- at its edges, each self-join against the same query without the band
-- join: no rows, one, two, rows that all share band 0's block (one bucket
-- of 2,000 rows there; groups of 4 within 2 bits, 30 identical rows, NULL
-- fingerprints), and rows whose blocks all differ in every band (a bucket
-- per row; pairs 4 bits apart, one bit per block, far apart in the input);
-- the last also in many small batches
CREATE TABLE bt_block (id int8, fp simhash64);
INSERT INTO bt_block
SELECT i, ((x'5a5a000000000000'::int8 | (jfp(i / 4)::int8 & x'0000ffffffffffff'::int8))
		   # (CASE WHEN i % 4 > 0 THEN 1::int8 << (i % 48) ELSE 0 END)
		   # (CASE WHEN i % 4 > 1 THEN 1::int8 << ((i * 7) % 48) ELSE 0 END))::simhash64
FROM generate_series(1, 2000) i;
INSERT INTO bt_block SELECT 3000 + i, jfp(7) FROM generate_series(1, 30) i;
INSERT INTO bt_block SELECT 4000 + i, NULL FROM generate_series(1, 20) i;
CREATE TABLE bt_distinct (id int8, fp simhash64);
INSERT INTO bt_distinct
SELECT (2 * m + p) * 7919 % 10007, ((((m * 2 * 40503 + p) & 65535)::int8 << 48) | (((m * 2 * 52429 + p) & 65535)::int8 << 32) |
				   (((m * 2 * 30011 + p) & 65535)::int8 << 16) | ((m * 2 * 12347 + p) & 65535)::int8)::simhash64
FROM generate_series(0, 999) m, generate_series(0, 1) p ORDER BY 1;
SELECT count(DISTINCT fp::int8 >> 48) AS band0, count(DISTINCT (fp::int8 >> 32) & 65535) AS band1,
	   count(DISTINCT (fp::int8 >> 16) & 65535) AS band2, count(DISTINCT fp::int8 & 65535) AS band3
FROM bt_distinct;
CREATE TABLE bt_empty AS SELECT * FROM bt_block WHERE false;
CREATE TABLE bt_one AS SELECT * FROM bt_block WHERE id = 5;
CREATE TABLE bt_two AS SELECT * FROM bt_block WHERE id IN (4, 5);
ANALYZE bt_block, bt_distinct, bt_empty, bt_one, bt_two;
-- the pairs of a self-join of tab within k by the band join, and the pairs
-- it misses or adds against the plan without it
CREATE FUNCTION bt_pairs(tab text, k int, OUT band_join bool, OUT pairs int8, OUT differences int8)
LANGUAGE plpgsql AS $$
DECLARE q text := format('SELECT a.id AS aid, b.id AS bid FROM %I a JOIN %I b ON a.fp <-> b.fp <= %s',
						 tab, tab, k);
	plan text := '';
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		plan := plan || line || E'\n';
	END LOOP;
	band_join := plan LIKE '%Custom Scan (SimhashJoin)%';
	EXECUTE 'CREATE TEMP TABLE bt_got AS ' || q;
	PERFORM set_config('simhash.enable_join', 'off', true);
	EXECUTE 'CREATE TEMP TABLE bt_want AS ' || q;
	PERFORM set_config('simhash.enable_join', 'on', true);
	SELECT count(*) INTO pairs FROM bt_got;
	SELECT count(*) INTO differences
	FROM ((TABLE bt_got EXCEPT ALL TABLE bt_want) UNION ALL (TABLE bt_want EXCEPT ALL TABLE bt_got)) d;
	DROP TABLE bt_got, bt_want;
END $$;
SELECT tab, k, (bt_pairs(tab, k)).*
FROM unnest(ARRAY['bt_empty', 'bt_one', 'bt_two', 'bt_block', 'bt_distinct']) tab,
	 unnest(ARRAY[0, 3, 4, 8]) k
ORDER BY 1, 2;
SET work_mem = '64kB';
SET hash_mem_multiplier = 1;
SELECT batches('SELECT count(*) FROM bt_distinct a JOIN bt_distinct b ON a.fp <-> b.fp <= 4') > 1
	AS several_batches;
SELECT k, (bt_pairs('bt_distinct', k)).* FROM unnest(ARRAY[3, 4]) k;
RESET work_mem;
RESET hash_mem_multiplier;
DROP TABLE bt_block, bt_distinct, bt_empty, bt_one, bt_two;

RESET enable_nestloop;
RESET enable_hashjoin;
RESET enable_mergejoin;

-- not offered: outer joins, row locks, UPDATE (EvalPlanQual), the GUC off
EXPLAIN (COSTS OFF)
SELECT a.id, b.id FROM jd a LEFT JOIN jd b ON a.fp <-> b.fp <= 3 AND a.id < b.id;
SELECT count(*) FROM jd a LEFT JOIN jd b ON a.fp <-> b.fp <= 3 AND a.id < b.id;
EXPLAIN (COSTS OFF)
SELECT a.id FROM jd a JOIN jd b ON a.fp <-> b.fp <= 3 AND a.id < b.id FOR UPDATE OF a;
CREATE TABLE flagged AS SELECT id, false AS dup FROM jd;
EXPLAIN (COSTS OFF)
UPDATE flagged f SET dup = true FROM jd a, jd b WHERE a.fp <-> b.fp <= 3 AND a.id < b.id AND f.id = b.id;
UPDATE flagged f SET dup = true FROM jd a, jd b WHERE a.fp <-> b.fp <= 3 AND a.id < b.id AND f.id = b.id;
SELECT count(*) FILTER (WHERE dup) FROM flagged;
SELECT count(DISTINCT bid) FROM ref_pairs(3) r WHERE r.aid < r.bid;
SET simhash.enable_join = off;
EXPLAIN (COSTS OFF)
SELECT a.id, b.id FROM jd a JOIN jd b ON a.fp <-> b.fp <= 3 AND a.id < b.id;
RESET simhash.enable_join;

-- the nested loop over the index stays the plan for a few outer rows
CREATE INDEX jd_fp ON jd USING simhash (fp);
EXPLAIN (COSTS OFF)
SELECT a.id, b.id FROM jd a JOIN jd b ON a.fp <-> b.fp <= 3 WHERE a.id IN (101, 205);
SELECT a.id, b.id FROM jd a JOIN jd b ON a.fp <-> b.fp <= 3 WHERE a.id IN (101, 205) ORDER BY 1, 2;
SELECT aid, bid FROM ref_pairs(3) WHERE aid IN (101, 205) ORDER BY 1, 2;
-- with the index the band join drops the derived "<@" clause too
EXPLAIN (COSTS OFF)
SELECT a.id, b.id FROM jd a JOIN jd b ON a.fp <-> b.fp <= 3 AND a.id < b.id;
SELECT (same_pairs('SELECT a.id, b.id FROM jd a JOIN jd b ON a.fp <-> b.fp <= 3', 3)).*;

-- EXPLAIN ANALYZE reports batches and memory
SELECT batches('SELECT count(*) FROM jd a JOIN jd b ON a.fp <-> b.fp <= 3');

-- a few new rows against a big clustered table: the nested loop over the
-- index, not the band join (issue 26).  Statistics sample every row
-- (default_statistics_target 10000 = 3,000,000 rows), so the plan does not
-- depend on ANALYZE's random sample.  jt: 500 clusters of 100 copies with
-- 0-3 bits flipped; jp: 100 new rows, one in ten near a centre.
-- copy j of cluster c: jfp(c) with j % 4 of its bits flipped
CREATE FUNCTION jcopy(c int8, j int) RETURNS simhash64 LANGUAGE sql IMMUTABLE AS
$$ SELECT (jfp(c)::int8 # (CASE WHEN j % 4 > 0 THEN 1::int8 << (j % 61) ELSE 0 END)
					 # (CASE WHEN j % 4 > 1 THEN 1::int8 << ((j * 7 + 3) % 63) ELSE 0 END)
					 # (CASE WHEN j % 4 > 2 THEN 1::int8 << ((j * 13 + 5) % 59) ELSE 0 END))::simhash64 $$;
CREATE TABLE jt (id int8, fp simhash64);
INSERT INTO jt
SELECT c * 1000 + j, jcopy(c, j) FROM generate_series(1, 500) c, generate_series(0, 99) j;
CREATE INDEX jt_fp ON jt USING simhash (fp);
CREATE TABLE jp (id int4, fp simhash64);
INSERT INTO jp SELECT i, CASE WHEN i % 10 = 1
	THEN (jfp(1 + (i * 37) % 500)::int8 # (1::int8 << (i % 64)) # (1::int8 << ((i + 11) % 64)))::simhash64
	ELSE jfp(-i) END FROM generate_series(1, 100) i;
SET default_statistics_target = 10000;
ANALYZE jt;
ANALYZE jp;
RESET default_statistics_target;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jp p JOIN jt t ON t.fp <-> p.fp <= 3;
SELECT count(*) FROM jp p JOIN jt t ON t.fp <-> p.fp <= 3;
-- the band join, forced, finds the same pairs
SET enable_nestloop = off;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jp p JOIN jt t ON t.fp <-> p.fp <= 3;
SELECT count(*) FROM jp p JOIN jt t ON t.fp <-> p.fp <= 3;
RESET enable_nestloop;
-- the rows each probe of the nested loop expects agree with the join's
-- rows (both from jp's rows as centres), whatever sample of jt ANALYZE drew
CREATE FUNCTION loop_rows(query text, OUT join_rows float8, OUT outer_rows float8,
						  OUT rows_per_loop float8) LANGUAGE plpgsql AS $$
DECLARE plan json;
BEGIN
	EXECUTE 'EXPLAIN (FORMAT JSON) ' || query INTO plan;
	plan := plan -> 0 -> 'Plan' -> 'Plans' -> 0;
	join_rows := plan ->> 'Plan Rows';
	outer_rows := plan -> 'Plans' -> 0 ->> 'Plan Rows';
	rows_per_loop := plan -> 'Plans' -> 1 ->> 'Plan Rows';
END $$;
SELECT outer_rows, abs(rows_per_loop * outer_rows - join_rows) <= outer_rows AS agree
FROM loop_rows('SELECT count(*) FROM jp p JOIN jt t ON t.fp <-> p.fp <= 3');
ANALYZE jt;
SELECT outer_rows, abs(rows_per_loop * outer_rows - join_rows) <= outer_rows AS agree
FROM loop_rows('SELECT count(*) FROM jp p JOIN jt t ON t.fp <-> p.fp <= 3');
DROP TABLE jt, jp;

-- all near-duplicate pairs of a big clustered table (a self-join): the band
-- join, which runs its inner side in batches, not the nested loop over the
-- index, which takes 4-5 times as long (bench/planner/RESULTS.md, "Listing
-- all near-duplicate pairs").  A probe was charged more the larger its
-- batch from 1,024 rows up (into 10,000 rows twice, into 62,500 3.4 times
-- what one into 1,000 rows costs; measured, about the same), once per
-- batch, so batches made the band join dearer than the nested loop: here
-- 2,000 clusters of 100 copies at work_mem 512kB (25 batches of 8,000
-- rows), as the 1M-row self-join at the default work_mem (16 of 62,500).
-- First with every row in the statistics, then with ANALYZE's sample of
-- 30,000 rows, several times.
CREATE TABLE js (id int8, fp simhash64);
INSERT INTO js
SELECT c * 1000 + j, jcopy(c, j) FROM generate_series(1, 2000) c, generate_series(0, 99) j;
CREATE INDEX js_fp ON js USING simhash (fp);
SET default_statistics_target = 10000;
ANALYZE js;
RESET default_statistics_target;
SET work_mem = '512kB';
EXPLAIN (COSTS OFF)
SELECT count(*) FROM js a JOIN js b ON a.fp <-> b.fp <= 3 AND a.id < b.id;
CREATE FUNCTION self_join_plans(samples int) RETURNS TABLE (plan text, n bigint)
LANGUAGE plpgsql AS $$
DECLARE
	plans text[] := '{}';
	p json;
BEGIN
	FOR i IN 1..samples LOOP
		ANALYZE js;
		EXECUTE 'EXPLAIN (FORMAT JSON) SELECT count(*) FROM js a JOIN js b '
			'ON a.fp <-> b.fp <= 3 AND a.id < b.id' INTO p;
		p := p -> 0 -> 'Plan' -> 'Plans' -> 0;
		plans := plans || coalesce(p ->> 'Custom Plan Provider', p ->> 'Node Type');
	END LOOP;
	RETURN QUERY SELECT u, count(*) FROM unnest(plans) u GROUP BY u ORDER BY u;
END $$;
SELECT * FROM self_join_plans(5);
RESET work_mem;
DROP TABLE js;
