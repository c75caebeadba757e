--
-- Hamming distance <-> and similarity
--
SELECT setseed(0.25);
CREATE FUNCTION random_fp() RETURNS simhash64 LANGUAGE sql AS
$$ SELECT (floor(random() * 4294967296)::bigint << 32 | floor(random() * 4294967296)::bigint)::simhash64 $$;

-- extremes
SELECT '0000000000000000'::simhash64 <-> 'ffffffffffffffff'::simhash64 AS all_bits,
       'ffffffffffffffff'::simhash64 <-> 'ffffffffffffffff'::simhash64 AS none,
       '8000000000000000'::simhash64 <-> '0000000000000000'::simhash64 AS top_bit,
       '0000000000000001'::simhash64 <-> '0000000000000000'::simhash64 AS bottom_bit,
       hamming('00000000ffffffff', 'ffffffff00000000') AS function_form;
SELECT simhash_similarity('0123456789abcdef', '0123456789abcdef') AS same,
       simhash_similarity('0000000000000000', 'ffffffffffffffff') AS complement,
       simhash_similarity('0000000000000000', '000000000000000f') AS four_bits;
SELECT '0000000000000000'::simhash64 <-> NULL AS null_is_null;

CREATE TABLE pairs AS
SELECT random_fp() AS a, random_fp() AS b, random_fp() AS c FROM generate_series(1, 5000);

-- agrees with stock PostgreSQL's bit_count on the xor
SELECT count(*) FILTER (WHERE (a <-> b) <> bit_count((a::bigint # b::bigint)::bit(64))) AS popcount_mismatches,
       min(a <-> b) >= 0 AND max(a <-> b) <= 64 AS within_0_64
FROM pairs;
-- identity, symmetry, triangle inequality
SELECT count(*) FILTER (WHERE (a <-> a) <> 0) AS identity_violations,
       count(*) FILTER (WHERE (a <-> b) <> (b <-> a)) AS symmetry_violations,
       count(*) FILTER (WHERE (a <-> c) > (a <-> b) + (b <-> c)) AS triangle_violations,
       count(*) FILTER (WHERE (a <-> b) = 0 AND a <> b) AS zero_distance_but_different
FROM pairs;
-- random 64-bit pairs differ in 32 bits on average
SELECT round(avg(a <-> b)) AS mean_distance FROM pairs;
-- flipping k bits gives distance k
SELECT k, count(*) FILTER (WHERE (a <-> (a::bigint # (repeat('0', 64 - k) || repeat('1', k))::bit(64)::bigint)::simhash64) <> k) AS wrong
FROM pairs, generate_series(0, 64, 8) k GROUP BY k ORDER BY k;

-- the properties the planner relies on
SELECT o.oprname, o.oprcom::regoperator AS commutator, p.proleakproof, p.provolatile,
       p.proparallel, p.proisstrict
FROM pg_operator o JOIN pg_proc p ON p.oid = o.oprcode
WHERE o.oprname = '<->' AND o.oprleft = 'simhash64'::regtype;

-- blocks: block 0 is the most significant 16 bits, read unsigned
SELECT simhash_block('0123456789abcdef', 0) AS b0, simhash_block('0123456789abcdef', 1) AS b1,
       simhash_block('0123456789abcdef', 2) AS b2, simhash_block('0123456789abcdef', 3) AS b3,
       simhash_blocks('0123456789abcdef') AS all_four;
SELECT simhash_blocks('ffffffffffffffff') AS all_ones, simhash_blocks('0000000000000000') AS zeros,
       simhash_blocks('8000000000000001') AS end_bits, simhash_blocks('0000ffff00008000') AS mixed;
SELECT simhash_block(NULL, 0) IS NULL AS null_fp, simhash_block('0123456789abcdef', NULL) IS NULL AS null_block,
       simhash_blocks(NULL) IS NULL AS null_blocks;
-- a block number outside 0..3 is an error (22023), whatever the fingerprint
SELECT simhash_block('0123456789abcdef', 4);
\echo :LAST_ERROR_SQLSTATE
SELECT simhash_block('0123456789abcdef', -1);
\echo :LAST_ERROR_SQLSTATE
SELECT simhash_block(NULL::simhash64, 2147483647) IS NULL AS strict_before_range;
SELECT simhash_block('ffffffffffffffff', -2147483648);
\echo :LAST_ERROR_SQLSTATE
-- the blocks are the index's band keys (the key lists of a simhash index)
CREATE TABLE block_keys AS SELECT a AS fp FROM pairs;
INSERT INTO block_keys SELECT '0123456789abcdef' FROM generate_series(1, 50);
CREATE INDEX block_keys_fp ON block_keys USING simhash (fp);
SELECT band, key, entries,
       (SELECT count(*) FROM block_keys WHERE to_hex(simhash_block(fp, band)) = ltrim(key, '0')) AS rows_with_that_block
FROM simhash_index_heavy_keys('block_keys_fp', 4) ORDER BY band;
DROP TABLE block_keys;
-- the pigeonhole rule the block recipes rely on: 3 flipped bits anywhere
-- leave a block equal; 4, one per block, need not
CREATE FUNCTION equal_block(a simhash64, b simhash64) RETURNS boolean LANGUAGE sql AS
$$ SELECT EXISTS (SELECT FROM generate_series(0, 3) i WHERE simhash_block(a, i) = simhash_block(b, i)) $$;
SELECT count(*) FILTER (WHERE a <-> x3 <= 3 AND NOT equal_block(a, x3)) AS within_3_without_equal_block,
       count(*) FILTER (WHERE a <-> x3 = 3) > 1000 AS many_at_3,
       count(*) FILTER (WHERE a <-> x4 = 4 AND NOT equal_block(a, x4)) AS at_4_without_equal_block,
       count(*) FILTER (WHERE simhash_blocks(a) <> ARRAY[simhash_block(a, 0), simhash_block(a, 1),
                                                       simhash_block(a, 2), simhash_block(a, 3)]) AS array_disagrees
FROM (SELECT a,
             (a::bigint # (1::bigint << (b::bigint & 63)::int) # (1::bigint << (b::bigint >> 6 & 63)::int)
                        # (1::bigint << (b::bigint >> 12 & 63)::int))::simhash64 AS x3,
             (a::bigint # (1::bigint << (b::bigint & 15)::int) # (1::bigint << (16 + (b::bigint >> 4 & 15))::int)
                        # (1::bigint << (32 + (b::bigint >> 8 & 15))::int)
                        # (1::bigint << (48 + (b::bigint >> 12 & 15))::int))::simhash64 AS x4
      FROM pairs) s;
-- the first shared block: its value, most significant first; NULL if none
SELECT simhash_shared_block('0123456789abcdef', '0123456789abcdef') AS equal,
       simhash_shared_block('0123456789abcdef', 'f123456789abcdef') AS from_block_1,
       simhash_shared_block('0123456789abcdef', 'f123f567f9abcdef') AS from_block_3,
       simhash_shared_block('ffff00000000ffff', 'ffffffffffff0000') AS all_ones_block_0,
       simhash_shared_block('0123456789abcdef', 'fedcba9876543210') IS NULL AS none,
       simhash_shared_block(NULL, '0123456789abcdef') IS NULL AS null_arg;
-- it is the first block equal_block() finds, and exists within 3 bits
SELECT count(*) FILTER (WHERE a <-> x3 <= 3 AND simhash_shared_block(a, x3) IS NULL) AS within_3_without_shared,
       count(*) FILTER (WHERE simhash_shared_block(a, x3) IS DISTINCT FROM
                              (SELECT simhash_block(a, i) FROM generate_series(0, 3) i
                               WHERE simhash_block(a, i) = simhash_block(x3, i) ORDER BY i LIMIT 1)) AS disagrees,
       count(*) FILTER (WHERE (simhash_shared_block(a, b) IS NULL) = equal_block(a, b)) AS null_iff_none_shared,
       count(*) FILTER (WHERE simhash_shared_block(a, x3) <> simhash_shared_block(x3, a)) AS asymmetric
FROM (SELECT a, b,
             (a::bigint # (1::bigint << (b::bigint & 63)::int) # (1::bigint << (b::bigint >> 6 & 63)::int)
                        # (1::bigint << (b::bigint >> 12 & 63)::int))::simhash64 AS x3
      FROM pairs) s;
DROP FUNCTION equal_block(simhash64, simhash64);
-- the properties the planner and Citus rely on
SELECT p.proname, p.provolatile, p.proisstrict, p.proparallel, p.proleakproof
FROM pg_proc p WHERE p.proname IN ('simhash_block', 'simhash_blocks', 'simhash_shared_block') ORDER BY 1;

DROP TABLE pairs;
DROP FUNCTION random_fp();
