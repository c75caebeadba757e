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

DROP TABLE pairs;
DROP FUNCTION random_fp();
