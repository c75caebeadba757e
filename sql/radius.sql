--
-- Every radius that reaches the extension from SQL, in every spelling,
-- planned and executed by a role that may only read the table: extreme
-- values must neither crash the server (they did: radius 2147483647 in the
-- ball spellings overflowed probe planning) nor change any result.  Each
-- query is compared with a sequential scan of the same rows.
--
-- (disabled scans cost enough to switch JIT compilation on, which is slow)
SET jit = off;
CREATE OR REPLACE FUNCTION sqlstate_of(query text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE query;
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
CREATE FUNCTION rfp(i int8) RETURNS simhash64 LANGUAGE sql IMMUTABLE AS
$$ SELECT ((hashint8(i)::int8 << 32) | (hashint8(-i)::int8 & 4294967295))::simhash64 $$;
CREATE TABLE rdocs (id int8 PRIMARY KEY, fp simhash64);
INSERT INTO rdocs
SELECT c * 100 + j, (rfp(c)::int8 # (CASE WHEN j > 0 THEN 1::int8 << (j * 7 % 64) ELSE 0 END))::simhash64
FROM generate_series(1, 200) c, generate_series(0, 9) j;
INSERT INTO rdocs SELECT 100000 + i, NULL FROM generate_series(1, 20) i;
CREATE INDEX rdocs_fp ON rdocs USING simhash (fp);
ANALYZE rdocs;
CREATE TABLE rprobes AS SELECT c AS pid, rfp(c) AS q FROM generate_series(1, 3) c;
ANALYZE rprobes;
CREATE ROLE simhash_radius_reader;
GRANT SELECT ON rdocs, rprobes TO simhash_radius_reader;

-- ids matching "pred" (a WHERE clause over rdocs d and rprobes p) with the
-- index, and with a sequential scan
CREATE FUNCTION rcompare(pred text, OUT idx int8[], OUT seq int8[])
LANGUAGE plpgsql AS $$
DECLARE
	q text := format('SELECT array_agg(d.id ORDER BY d.id, p.pid) FROM rdocs d, rprobes p WHERE %s', pred);
	plan text;
BEGIN
	PERFORM set_config('enable_seqscan', 'off', true);
	FOR plan IN EXECUTE 'EXPLAIN ' || q LOOP END LOOP;
	EXECUTE q INTO idx;
	PERFORM set_config('enable_seqscan', 'on', true);
	PERFORM set_config('enable_indexscan', 'off', true);
	PERFORM set_config('enable_bitmapscan', 'off', true);
	PERFORM set_config('simhash.enable_join', 'off', true);
	EXECUTE q INTO seq;
	PERFORM set_config('enable_indexscan', 'on', true);
	PERFORM set_config('enable_bitmapscan', 'on', true);
	PERFORM set_config('simhash.enable_join', 'on', true);
END $$;

-- every spelling against every radius: rows that differ from the scan
CREATE FUNCTION rsweep(OUT spelling text, OUT cases int, OUT mismatches int)
RETURNS SETOF record LANGUAGE plpgsql AS $$
DECLARE
	k8 int8;
	s text;
	r record;
	int4_radii int8[] := ARRAY[-2147483648, -2147483647, -65, -2, -1, 0, 1, 2, 3, 4, 5,
		7, 8, 15, 16, 63, 64, 65, 66, 1000, 2147483646, 2147483647];
	int8_radii int8[] := int4_radii || ARRAY[-9223372036854775808, -9223372036854775807,
		-2147483649, 2147483648, 9223372036854775806, 9223372036854775807]::int8[];
	spellings text[] := ARRAY[
		'fp <@ simhash_ball(q, %s::int4)',
		'simhash_ball(q, %s::int4) @> fp',
		'fp <@ ''%s''::simhash_ball',
		'simhash_within(fp, q, %s::int4)',
		'simhash_within(q, fp, %s::int4)',
		'fp <-> q <= %s::int8',
		'fp <-> q < %s::int8',
		'%s::int8 >= q <-> fp',
		'%s::int8 > fp <-> q',
		'hamming(fp, q) <= %s::int8',
		'fp <-> q <= %s::int2'];
BEGIN
	FOREACH s IN ARRAY spellings LOOP
		spelling := s; cases := 0; mismatches := 0;
		FOREACH k8 IN ARRAY (CASE WHEN s LIKE '%int8%' THEN int8_radii
								  WHEN s LIKE '%int2%' THEN ARRAY[-32768, -2, -1, 0, 3, 64, 65, 32767]::int8[]
								  ELSE int4_radii END)
		LOOP
			IF s LIKE '%''::simhash_ball' THEN
				-- a constant ball, its radius written out
				r := rcompare(replace(format(s, rfp(1)::text || '/' || k8), 'fp', 'd.fp') || ' AND p.pid = 1');
			ELSE
				r := rcompare(replace(replace(format(s, '(' || k8 || ')'), 'fp', 'd.fp'), 'q', 'p.q'));
			END IF;
			cases := cases + 1;
			IF r.idx IS DISTINCT FROM r.seq THEN
				mismatches := mismatches + 1;
				RAISE NOTICE 'mismatch: % at %', s, k8;
			END IF;
		END LOOP;
		RETURN NEXT;
	END LOOP;
END $$;

SET ROLE simhash_radius_reader;
SELECT * FROM rsweep();

-- the same radii through a join: the nested loop over the index (ball
-- spelling) and the band join (distance spelling)
SELECT k, (SELECT count(*) FROM rprobes p JOIN rdocs d ON d.fp <@ simhash_ball(p.q, k)) AS ball,
	   (SELECT count(*) FROM rprobes p JOIN rdocs d ON d.fp <-> p.q <= k) AS dist,
	   (SELECT count(*) FROM rprobes p, rdocs d WHERE hamming(d.fp, p.q) <= k) AS expected
FROM unnest(ARRAY[-2147483648, -1, 0, 3, 64, 65, 2147483647]) k;
EXPLAIN (COSTS OFF) SELECT count(*) FROM rprobes p JOIN rdocs d ON d.fp <@ simhash_ball(p.q, 2147483647);
SELECT count(*) FROM rdocs a JOIN rdocs b ON a.fp <-> b.fp <= 9223372036854775807::int8 AND a.id < b.id;
SELECT count(*) FROM rdocs a JOIN rdocs b ON a.fp <-> b.fp < (-9223372036854775808)::int8;

-- nearest neighbours stopped by an extreme radius
SELECT k, (SELECT array_agg(d) FROM (SELECT fp <-> rfp(1) AS d FROM rdocs
			WHERE fp <-> rfp(1) <= k ORDER BY fp <-> rfp(1) LIMIT 5) s) AS nearest
FROM unnest(ARRAY[-2147483648, -1, 0, 64, 2147483647]::int8[]) k;

-- generic plans: the radius arrives at run time
SET plan_cache_mode = force_generic_plan;
PREPARE rball(simhash64, int4) AS SELECT count(*) FROM rdocs WHERE fp <@ simhash_ball($1, $2);
PREPARE rdist(simhash64, int8) AS SELECT count(*) FROM rdocs WHERE fp <-> $1 <= $2;
PREPARE rwithin(simhash64, int4) AS SELECT count(*) FROM rdocs WHERE simhash_within(fp, $1, $2);
SELECT k, (SELECT count(*) FROM rdocs WHERE hamming(fp, rfp(1)) <= k) AS expected
FROM unnest(ARRAY[-2147483648, -1, 0, 64, 2147483647]) k;
EXECUTE rball(rfp(1), -2147483648);
EXECUTE rball(rfp(1), 0);
EXECUTE rball(rfp(1), 2147483647);
EXECUTE rdist(rfp(1), -9223372036854775808);
EXECUTE rdist(rfp(1), 0);
EXECUTE rdist(rfp(1), 9223372036854775807);
EXECUTE rwithin(rfp(1), -2147483648);
EXECUTE rwithin(rfp(1), 2147483647);
RESET plan_cache_mode;
RESET ROLE;

-- a ball keeps its radius normalized to [-1, 64]; its text form is strict
SELECT simhash_ball('0123456789abcdef', 2147483647), simhash_ball('0123456789abcdef', -2147483648),
	   '0123456789abcdef/65'::simhash_ball, '0123456789abcdef/-0'::simhash_ball,
	   '0123456789abcdef/2147483647'::simhash_ball, '0123456789abcdef/-2147483648'::simhash_ball,
	   simhash_ball_radius('0123456789abcdef/100');
SELECT input, sqlstate_of(format('SELECT %L::simhash_ball', input)) AS result FROM (VALUES ('0123456789abcdef/3'), ('0123456789abcdef/ 3'),
	('0123456789abcdef/+3'), ('0123456789abcdef/3 '), ('0123456789abcdef/'),
	('0123456789abcdef/-'), (' 0123456789abcdef/3'), ('0123456789abcdef/2147483648'),
	('0123456789abcdef/-2147483649'), ('0123456789abcdef/0x3'), ('0123456789abcde/3'),
	('0123456789abcdef0/3'), ('0123456789abcdef//3'), ('0123456789abcdeg/3')) v(input);

DROP TABLE rdocs, rprobes;
DROP ROLE simhash_radius_reader;

-- Range scans over many leaves, against a sequential scan, for k = 0..12
-- and larger: uniform fingerprints, clusters of near-copies, a block value
-- shared by 3000 rows (one key over several leaves: the leaf search cannot
-- guess where its entries start), rows appended after the build and rows
-- vacuumed away.  Plain index scans hand over their matches probe by
-- probe and resume from the kept parent page; bitmap scans do not stop.
CREATE TABLE rwide (id int8, fp simhash64);
INSERT INTO rwide SELECT i, rfp(i) FROM generate_series(1, 12000) i;
INSERT INTO rwide
SELECT 100000 + c * 20 + j, (rfp(-c)::int8 # (CASE WHEN j > 0 THEN (1::int8 << (j * 13 % 64)) | (1::int8 << (j * 5 % 64)) ELSE 0 END))::simhash64
FROM generate_series(1, 400) c, generate_series(0, 19) j;
INSERT INTO rwide
SELECT 200000 + i, ((rfp(300000 + i)::int8 & ~65535::int8) | 4660)::simhash64
FROM generate_series(1, 3000) i;
CREATE INDEX rwide_fp ON rwide USING simhash (fp);
INSERT INTO rwide SELECT 300000 + i, rfp(-1000000 - i) FROM generate_series(1, 500) i;
INSERT INTO rwide
SELECT 400000 + i, (rfp(-7)::int8 # (1::int8 << (i % 64)) # (1::int8 << ((i * 7) % 64)))::simhash64
FROM generate_series(1, 200) i;
DELETE FROM rwide WHERE id % 7 = 3;
VACUUM ANALYZE rwide;
CREATE TABLE rwide_q AS
SELECT row_number() OVER () AS qid, q FROM (
	SELECT fp AS q FROM rwide WHERE id IN (5, 777, 100021, 100540, 107999, 200010, 300001, 400003)
	UNION ALL SELECT rfp(-3)
	UNION ALL SELECT ((rfp(-9)::int8 & ~65535::int8) | 4661)::simhash64
	UNION ALL SELECT '0000000000000000'::simhash64
	UNION ALL SELECT 'ffffffffffffffff'::simhash64) s;
CREATE FUNCTION rwide_ids(q simhash64, k int) RETURNS int8[] LANGUAGE sql STABLE AS
$$ SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM rwide WHERE fp <@ simhash_ball(q, k) $$;
CREATE TEMP TABLE rwide_r (scan text, qid int8, k int, ids int8[]);
SET enable_seqscan = off; SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM rwide WHERE fp <@ simhash_ball('0000000000000000', 7);
INSERT INTO rwide_r SELECT 'index', qid, k, rwide_ids(q, k)
FROM rwide_q, unnest(ARRAY[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 16, 20, 24, 31]) k;
SET enable_indexscan = off; SET enable_bitmapscan = on;
EXPLAIN (COSTS OFF) SELECT id FROM rwide WHERE fp <@ simhash_ball('0000000000000000', 7);
INSERT INTO rwide_r SELECT 'bitmap', qid, k, rwide_ids(q, k)
FROM rwide_q, unnest(ARRAY[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 16, 20, 24, 31]) k;
-- the sequential scan
SET enable_seqscan = on; SET enable_indexscan = off; SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM rwide WHERE hamming(fp, '0000000000000000') <= 7;
INSERT INTO rwide_r SELECT 'seq', qid, k,
	(SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM rwide WHERE hamming(fp, q) <= k)
FROM rwide_q, unnest(ARRAY[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 16, 20, 24, 31]) k;
RESET enable_indexscan; RESET enable_bitmapscan; RESET enable_seqscan;
-- every scan, query and radius; how many rows the sequential scan found
SELECT a.scan, count(*) AS compared, count(*) FILTER (WHERE a.ids IS DISTINCT FROM s.ids) AS differ,
	   sum(cardinality(s.ids)) AS seq_rows
FROM rwide_r a JOIN rwide_r s ON s.scan = 'seq' AND s.qid = a.qid AND s.k = a.k
WHERE a.scan <> 'seq' GROUP BY a.scan ORDER BY a.scan;
DROP TABLE rwide, rwide_q;
DROP FUNCTION rwide_ids(simhash64, int);
