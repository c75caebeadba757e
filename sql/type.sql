--
-- simhash64: text and binary I/O, casts, comparison, btree and hash classes
--
-- errors are shown as SQLSTATE: message by this helper
CREATE OR REPLACE FUNCTION sqlstate_of(query text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE query;
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

-- text form: 16 hex digits, output lower case, input either case
SELECT '0123456789abcdef'::simhash64, '0123456789ABCDEF'::simhash64,
       '0000000000000000'::simhash64, 'ffffffffffffffff'::simhash64;
SELECT 'DeadBeefCafeF00d'::simhash64::text;

-- rejected: wrong length, bad digits, empty, whitespace, 0x prefix (22P02)
SELECT 'xyz'::simhash64;
SELECT q, sqlstate_of(format('SELECT %L::simhash64', q))
FROM (VALUES (''), ('0'), ('0123456789abcde'), ('0123456789abcdef0'),
             ('0123456789abcdeg'), (' 0123456789abcdef'), ('0123456789abcdef '),
             ('01234567 9abcdef0'), ('0x0123456789abcdef'), ('-123456789abcdef'),
             ('+123456789abcdef'), ('0123456789abcdéf')) v(q);

-- casts to and from bigint share the 64 bits (two's complement)
SELECT 'ffffffffffffffff'::simhash64::bigint AS minus_one,
       '8000000000000000'::simhash64::bigint AS int8_min,
       '7fffffffffffffff'::simhash64::bigint AS int8_max,
       (-1)::bigint::simhash64 AS all_ones,
       1::bigint::simhash64 AS one;
SELECT count(*) AS bigint_roundtrip_failures
FROM generate_series(1, 1000) i,
     LATERAL (SELECT (hashint8(i)::bigint << 32 | hashint8(-i)::bigint & 4294967295) AS v) r
WHERE r.v::simhash64::bigint <> r.v OR r.v::simhash64::text <> lpad(to_hex(r.v), 16, '0');

-- casts to and from bit(64): most significant bit first
SELECT '8000000000000001'::simhash64::bit(64);
SELECT B'1000000000000000000000000000000000000000000000000000000000000011'::simhash64;
SELECT count(*) AS bit_roundtrip_failures
FROM generate_series(1, 1000) i,
     LATERAL (SELECT (hashint8(i)::bigint << 32 | hashint8(-i)::bigint & 4294967295) AS v) r
WHERE r.v::simhash64::bit(64)::simhash64 <> r.v::simhash64
   OR r.v::simhash64::bit(64) <> r.v::bit(64);
SELECT B'101'::simhash64;
SELECT sqlstate_of($$SELECT repeat('1', 63)::bit(63)::simhash64$$),
       sqlstate_of($$SELECT repeat('1', 65)::bit(65)::simhash64$$),
       sqlstate_of($$SELECT repeat('1', 64)::bit(64)::simhash64$$);

-- comparison is unsigned: the order of the text form
SELECT '8000000000000000'::simhash64 > '7fffffffffffffff'::simhash64 AS unsigned_gt,
       'ffffffffffffffff'::simhash64 > '0000000000000000'::simhash64 AS max_gt_zero,
       '0000000000000001'::simhash64 < '0000000000000002'::simhash64 AS lt,
       '0000000000000001'::simhash64 <= '0000000000000001'::simhash64 AS le,
       '0000000000000001'::simhash64 >= '0000000000000002'::simhash64 AS ge,
       '0000000000000001'::simhash64 = '0000000000000001'::simhash64 AS eq,
       '0000000000000001'::simhash64 <> '0000000000000001'::simhash64 AS ne;

CREATE TABLE fps (id int, fp simhash64);
INSERT INTO fps
SELECT i, (hashint8(i % 300)::bigint << 32 | hashint8(-(i % 300))::bigint & 4294967295)::simhash64
FROM generate_series(1, 1200) i;
INSERT INTO fps VALUES (0, NULL), (-1, 'ffffffffffffffff'), (-2, '0000000000000000');

-- ORDER BY agrees with the text form (and puts NULL last)
SELECT count(*) AS order_violations FROM (
	SELECT fp::text AS t, lag(fp::text) OVER (ORDER BY fp) AS prev FROM fps WHERE fp IS NOT NULL
) s WHERE prev > t;
SELECT fp FROM fps ORDER BY fp DESC NULLS LAST LIMIT 2;
SELECT fp FROM fps ORDER BY fp LIMIT 2;

-- DISTINCT and GROUP BY, sorted and hashed
SET enable_hashagg = off;
SELECT count(DISTINCT fp) AS distinct_sorted FROM fps;
SELECT count(*) AS groups_sorted FROM (SELECT fp FROM fps GROUP BY fp) g;
RESET enable_hashagg;
SET enable_sort = off;
EXPLAIN (COSTS OFF) SELECT fp, count(*) FROM fps GROUP BY fp;
SELECT count(*) AS groups_hashed, sum(n) AS rows FROM (SELECT fp, count(*) AS n FROM fps GROUP BY fp) g;
RESET enable_sort;

-- a UNIQUE index (btree) rejects a duplicate fingerprint
CREATE TABLE uniq (fp simhash64 UNIQUE);
INSERT INTO uniq VALUES ('00000000000000ff'), ('ff00000000000000');
INSERT INTO uniq VALUES ('00000000000000FF');
SELECT * FROM uniq WHERE fp = '00000000000000ff';

-- merge join and hash join on simhash64
CREATE TABLE fps2 AS SELECT DISTINCT fp FROM fps WHERE fp IS NOT NULL;
ANALYZE fps, fps2;
SET enable_hashjoin = off; SET enable_nestloop = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM fps JOIN fps2 USING (fp);
SELECT count(*) AS merge_join_rows FROM fps JOIN fps2 USING (fp);
RESET enable_hashjoin; SET enable_mergejoin = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM fps JOIN fps2 USING (fp);
SELECT count(*) AS hash_join_rows FROM fps JOIN fps2 USING (fp);
RESET enable_mergejoin; RESET enable_nestloop;

-- a hash index and hash partitioning use the hash functions
CREATE INDEX fps_hash ON fps USING hash (fp);
SET enable_seqscan = off;
SELECT id FROM fps WHERE fp = 'ffffffffffffffff';
RESET enable_seqscan;
CREATE TABLE hp (fp simhash64) PARTITION BY HASH (fp);
CREATE TABLE hp0 PARTITION OF hp FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE hp1 PARTITION OF hp FOR VALUES WITH (MODULUS 2, REMAINDER 1);
INSERT INTO hp SELECT fp FROM fps2;
SELECT (SELECT count(*) FROM hp0) > 0 AND (SELECT count(*) FROM hp1) > 0 AS both_partitions_used,
       (SELECT count(*) FROM hp) = (SELECT count(*) FROM fps2) AS nothing_lost;

-- binary send/recv: COPY BINARY round trip
SELECT simhash64_send('0123456789abcdef');
\copy (SELECT id, fp FROM fps ORDER BY id) TO 'results/type_copy.bin' WITH (FORMAT binary)
CREATE TABLE fps_copy (id int, fp simhash64);
\copy fps_copy FROM 'results/type_copy.bin' WITH (FORMAT binary)
SELECT count(*) AS copied,
       count(*) FILTER (WHERE c.fp IS NOT DISTINCT FROM f.fp) AS identical
FROM fps_copy c JOIN fps f USING (id);

-- catalog hygiene: every object of the extension has a comment (but the
-- array types that CREATE TYPE makes implicitly, members of the extension
-- since PostgreSQL 16)
SELECT pg_describe_object(classid, objid, objsubid) AS uncommented
FROM pg_depend d
WHERE refclassid = 'pg_extension'::regclass
  AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'simhash')
  AND deptype = 'e'
  AND obj_description(objid, classid::regclass::name) IS NULL
  AND NOT (classid = 'pg_type'::regclass
		   AND objid IN (SELECT typarray FROM pg_type t
						 JOIN pg_depend e ON e.classid = 'pg_type'::regclass AND e.objid = t.oid
						 WHERE e.refobjid = d.refobjid AND e.deptype = 'e'))
ORDER BY 1;

DROP TABLE fps, fps2, fps_copy, uniq, hp;
