/* src/simhash--0.1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION simhash" to load this file. \quit

------------------------------------------------------------------------------
-- The simhash64 type
------------------------------------------------------------------------------

CREATE TYPE simhash64;

CREATE FUNCTION simhash64_in(cstring) RETURNS simhash64
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash64_out(simhash64) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash64_recv(internal) RETURNS simhash64
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash64_send(simhash64) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE simhash64 (
	INPUT = simhash64_in,
	OUTPUT = simhash64_out,
	RECEIVE = simhash64_recv,
	SEND = simhash64_send,
	INTERNALLENGTH = 8,
	PASSEDBYVALUE,
	ALIGNMENT = double,
	STORAGE = plain
);

COMMENT ON TYPE simhash64 IS
	'64-bit simhash fingerprint; text form is 16 hexadecimal digits';
COMMENT ON FUNCTION simhash64_in(cstring) IS
	'text input of simhash64: exactly 16 hexadecimal digits';
COMMENT ON FUNCTION simhash64_out(simhash64) IS
	'text output of simhash64: 16 lower-case hexadecimal digits';
COMMENT ON FUNCTION simhash64_recv(internal) IS
	'binary input of simhash64: 8 bytes, network order';
COMMENT ON FUNCTION simhash64_send(simhash64) IS
	'binary output of simhash64: 8 bytes, network order';

------------------------------------------------------------------------------
-- Casts
------------------------------------------------------------------------------

-- simhash64 and bigint share their 64 bits (two's complement for bigint)
CREATE CAST (simhash64 AS bigint) WITHOUT FUNCTION;
CREATE CAST (bigint AS simhash64) WITHOUT FUNCTION;
COMMENT ON CAST (simhash64 AS bigint) IS
	'the same 64 bits read as a signed integer';
COMMENT ON CAST (bigint AS simhash64) IS
	'the same 64 bits read as a fingerprint';

CREATE FUNCTION simhash64_to_bit(simhash64) RETURNS bit
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash64_from_bit(bit) RETURNS simhash64
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash64_to_bit(simhash64) IS
	'fingerprint as bit(64), most significant bit first';
COMMENT ON FUNCTION simhash64_from_bit(bit) IS
	'fingerprint from a 64-bit bit string, most significant bit first';

CREATE CAST (simhash64 AS bit) WITH FUNCTION simhash64_to_bit(simhash64);
CREATE CAST (bit AS simhash64) WITH FUNCTION simhash64_from_bit(bit);
COMMENT ON CAST (simhash64 AS bit) IS
	'fingerprint as bit(64), most significant bit first';
COMMENT ON CAST (bit AS simhash64) IS
	'fingerprint from bit(64); other lengths are an error';

------------------------------------------------------------------------------
-- Comparison (unsigned order), btree and hash operator classes
------------------------------------------------------------------------------

CREATE FUNCTION simhash64_eq(simhash64, simhash64) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash64_ne(simhash64, simhash64) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash64_lt(simhash64, simhash64) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash64_le(simhash64, simhash64) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash64_gt(simhash64, simhash64) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash64_ge(simhash64, simhash64) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash64_cmp(simhash64, simhash64) RETURNS int4
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash64_sortsupport(internal) RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash64_hash(simhash64) RETURNS int4
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash64_hash_extended(simhash64, bigint) RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

COMMENT ON FUNCTION simhash64_eq(simhash64, simhash64) IS 'equal';
COMMENT ON FUNCTION simhash64_ne(simhash64, simhash64) IS 'not equal';
COMMENT ON FUNCTION simhash64_lt(simhash64, simhash64) IS 'less than (unsigned)';
COMMENT ON FUNCTION simhash64_le(simhash64, simhash64) IS 'less than or equal (unsigned)';
COMMENT ON FUNCTION simhash64_gt(simhash64, simhash64) IS 'greater than (unsigned)';
COMMENT ON FUNCTION simhash64_ge(simhash64, simhash64) IS 'greater than or equal (unsigned)';
COMMENT ON FUNCTION simhash64_cmp(simhash64, simhash64) IS 'btree comparison (unsigned)';
COMMENT ON FUNCTION simhash64_sortsupport(internal) IS 'btree sort support';
COMMENT ON FUNCTION simhash64_hash(simhash64) IS 'hash';
COMMENT ON FUNCTION simhash64_hash_extended(simhash64, bigint) IS 'seeded 64-bit hash';

CREATE OPERATOR = (
	LEFTARG = simhash64, RIGHTARG = simhash64, FUNCTION = simhash64_eq,
	COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel,
	HASHES, MERGES
);
CREATE OPERATOR <> (
	LEFTARG = simhash64, RIGHTARG = simhash64, FUNCTION = simhash64_ne,
	COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel
);
CREATE OPERATOR < (
	LEFTARG = simhash64, RIGHTARG = simhash64, FUNCTION = simhash64_lt,
	COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel
);
CREATE OPERATOR <= (
	LEFTARG = simhash64, RIGHTARG = simhash64, FUNCTION = simhash64_le,
	COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel
);
CREATE OPERATOR > (
	LEFTARG = simhash64, RIGHTARG = simhash64, FUNCTION = simhash64_gt,
	COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel
);
CREATE OPERATOR >= (
	LEFTARG = simhash64, RIGHTARG = simhash64, FUNCTION = simhash64_ge,
	COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel
);

COMMENT ON OPERATOR = (simhash64, simhash64) IS 'equal';
COMMENT ON OPERATOR <> (simhash64, simhash64) IS 'not equal';
COMMENT ON OPERATOR < (simhash64, simhash64) IS 'less than (unsigned)';
COMMENT ON OPERATOR <= (simhash64, simhash64) IS 'less than or equal (unsigned)';
COMMENT ON OPERATOR > (simhash64, simhash64) IS 'greater than (unsigned)';
COMMENT ON OPERATOR >= (simhash64, simhash64) IS 'greater than or equal (unsigned)';

CREATE OPERATOR CLASS simhash64_btree_ops
DEFAULT FOR TYPE simhash64 USING btree AS
	OPERATOR	1	<,
	OPERATOR	2	<=,
	OPERATOR	3	=,
	OPERATOR	4	>=,
	OPERATOR	5	>,
	FUNCTION	1	simhash64_cmp(simhash64, simhash64),
	FUNCTION	2	simhash64_sortsupport(internal);
COMMENT ON OPERATOR CLASS simhash64_btree_ops USING btree IS
	'unsigned order of simhash64 (same as the text form)';
COMMENT ON OPERATOR FAMILY simhash64_btree_ops USING btree IS
	'unsigned order of simhash64 (same as the text form)';

CREATE OPERATOR CLASS simhash64_hash_ops
DEFAULT FOR TYPE simhash64 USING hash AS
	OPERATOR	1	=,
	FUNCTION	1	simhash64_hash(simhash64),
	FUNCTION	2	simhash64_hash_extended(simhash64, bigint);
COMMENT ON OPERATOR CLASS simhash64_hash_ops USING hash IS
	'hashing of simhash64 for hash joins, hash aggregation and hash indexes';
COMMENT ON OPERATOR FAMILY simhash64_hash_ops USING hash IS
	'hashing of simhash64 for hash joins, hash aggregation and hash indexes';

------------------------------------------------------------------------------
-- Distance
------------------------------------------------------------------------------

-- The support function changes nothing; calling it during constant folding
-- loads the library, and with it the planner hook that makes
-- "fp <-> q <= k" indexable, before the first query of a session is planned.
CREATE FUNCTION simhash_distance_support(internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_distance_support(internal) IS
	'planner support for hamming() (loads the planner hook early)';

CREATE FUNCTION hamming(simhash64, simhash64) RETURNS int4
	AS 'MODULE_PATHNAME', 'simhash64_hamming'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF
	SUPPORT simhash_distance_support;
COMMENT ON FUNCTION hamming(simhash64, simhash64) IS
	'Hamming distance: number of differing bits, 0 to 64';

CREATE OPERATOR <-> (
	LEFTARG = simhash64, RIGHTARG = simhash64, FUNCTION = hamming,
	COMMUTATOR = <->
);
COMMENT ON OPERATOR <-> (simhash64, simhash64) IS
	'Hamming distance: number of differing bits, 0 to 64';

CREATE FUNCTION simhash_similarity(simhash64, simhash64) RETURNS float8
	AS 'MODULE_PATHNAME', 'simhash64_similarity'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION simhash_similarity(simhash64, simhash64) IS
	'1 - hamming/64: 1 for equal fingerprints, 0 for complementary ones';

------------------------------------------------------------------------------
-- Fingerprints
------------------------------------------------------------------------------

-- IMMUTABLE is honest: the result depends only on the characters of the
-- text.  It is computed on UTF-8 whatever the server encoding, with Unicode
-- tables compiled into the library, and calls nothing locale-dependent.
CREATE FUNCTION simhash(text) RETURNS simhash64
	AS 'MODULE_PATHNAME', 'simhash_text'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash(text) IS
	'simhash fingerprint of a text (words, Han characters, kana bigrams; NFKC, case folded)';

CREATE FUNCTION simhash(text[]) RETURNS simhash64
	AS 'MODULE_PATHNAME', 'simhash_features_array'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash(text[]) IS
	'simhash fingerprint of caller-given features, each of weight 1';

CREATE FUNCTION simhash(text[], float8[]) RETURNS simhash64
	AS 'MODULE_PATHNAME', 'simhash_weighted_features'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash(text[], float8[]) IS
	'simhash fingerprint of caller-given features with caller-given weights';

CREATE FUNCTION simhash(tsvector) RETURNS simhash64
	AS 'MODULE_PATHNAME', 'simhash_tsvector'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash(tsvector) IS
	'simhash fingerprint of the lexemes of a tsvector, weighted by occurrences and position class';

CREATE FUNCTION simhash_features(text,
		OUT feature text, OUT occurrences int4, OUT weight float8)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'simhash_features'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 100;
COMMENT ON FUNCTION simhash_features(text) IS
	'features of simhash(text) with their occurrences and weights, in order of first appearance';

------------------------------------------------------------------------------
-- The simhash_ball type: fingerprints within a radius of a centre
------------------------------------------------------------------------------

CREATE TYPE simhash_ball;

CREATE FUNCTION simhash_ball_in(cstring) RETURNS simhash_ball
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_ball_out(simhash_ball) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_ball_recv(internal) RETURNS simhash_ball
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_ball_send(simhash_ball) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE simhash_ball (
	INPUT = simhash_ball_in,
	OUTPUT = simhash_ball_out,
	RECEIVE = simhash_ball_recv,
	SEND = simhash_ball_send,
	INTERNALLENGTH = 16,
	ALIGNMENT = double,
	STORAGE = plain
);
COMMENT ON TYPE simhash_ball IS
	'all fingerprints within a Hamming radius of a centre; text form ''<16 hex digits>/<radius>''';
COMMENT ON FUNCTION simhash_ball_in(cstring) IS 'text input of simhash_ball';
COMMENT ON FUNCTION simhash_ball_out(simhash_ball) IS 'text output of simhash_ball';
COMMENT ON FUNCTION simhash_ball_recv(internal) IS 'binary input of simhash_ball';
COMMENT ON FUNCTION simhash_ball_send(simhash_ball) IS 'binary output of simhash_ball';

CREATE FUNCTION simhash_ball(simhash64, int4) RETURNS simhash_ball
	AS 'MODULE_PATHNAME', 'simhash_ball_make'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION simhash_ball(simhash64, int4) IS
	'the fingerprints within the given Hamming radius of a centre (a negative radius is empty)';
CREATE FUNCTION simhash_ball_center(simhash_ball) RETURNS simhash64
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION simhash_ball_center(simhash_ball) IS 'centre of a simhash_ball';
CREATE FUNCTION simhash_ball_radius(simhash_ball) RETURNS int4
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION simhash_ball_radius(simhash_ball) IS 'radius of a simhash_ball';

CREATE FUNCTION simhash_ball_restrict_sel(internal, oid, internal, int4) RETURNS float8
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_ball_restrict_sel(internal, oid, internal, int4) IS
	'restriction selectivity of <@ and @> (planner support)';
CREATE FUNCTION simhash_ball_join_sel(internal, oid, internal, int2, internal) RETURNS float8
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_ball_join_sel(internal, oid, internal, int2, internal) IS
	'join selectivity of <@ and @> (planner support)';

CREATE FUNCTION simhash64_within_ball(simhash64, simhash_ball) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION simhash64_within_ball(simhash64, simhash_ball) IS
	'is the fingerprint within the ball?';
CREATE FUNCTION simhash_ball_contains(simhash_ball, simhash64) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION simhash_ball_contains(simhash_ball, simhash64) IS
	'does the ball contain the fingerprint?';

CREATE OPERATOR <@ (
	LEFTARG = simhash64, RIGHTARG = simhash_ball, FUNCTION = simhash64_within_ball,
	COMMUTATOR = @>, RESTRICT = simhash_ball_restrict_sel, JOIN = simhash_ball_join_sel
);
CREATE OPERATOR @> (
	LEFTARG = simhash_ball, RIGHTARG = simhash64, FUNCTION = simhash_ball_contains,
	COMMUTATOR = <@, RESTRICT = simhash_ball_restrict_sel, JOIN = simhash_ball_join_sel
);
COMMENT ON OPERATOR <@ (simhash64, simhash_ball) IS
	'fingerprint is within the ball (indexable: fp <@ simhash_ball(q, k) means fp <-> q <= k)';
COMMENT ON OPERATOR @> (simhash_ball, simhash64) IS
	'ball contains the fingerprint';

------------------------------------------------------------------------------
-- The simhash index access method
------------------------------------------------------------------------------

CREATE FUNCTION simhash_handler(internal) RETURNS index_am_handler
	AS 'MODULE_PATHNAME' LANGUAGE C;
COMMENT ON FUNCTION simhash_handler(internal) IS
	'handler of the simhash index access method';

CREATE ACCESS METHOD simhash TYPE INDEX HANDLER simhash_handler;
COMMENT ON ACCESS METHOD simhash IS
	'exact Hamming-distance search over four 16-bit bands of a simhash64';

CREATE OPERATOR CLASS simhash64_ops
DEFAULT FOR TYPE simhash64 USING simhash AS
	OPERATOR	1	<@ (simhash64, simhash_ball),
	OPERATOR	2	<-> (simhash64, simhash64) FOR ORDER BY integer_ops,
	OPERATOR	3	= (simhash64, simhash64);
COMMENT ON OPERATOR CLASS simhash64_ops USING simhash IS
	'radius search (<@), nearest neighbours (ORDER BY <->) and equality';
COMMENT ON OPERATOR FAMILY simhash64_ops USING simhash IS
	'radius search (<@), nearest neighbours (ORDER BY <->) and equality';

------------------------------------------------------------------------------
-- simhash_within(fp, q, k): "fp <-> q <= k" that any session can index
------------------------------------------------------------------------------

CREATE FUNCTION simhash_within_support(internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_within_support(internal) IS
	'planner support for simhash_within(): the index condition and the selectivity';

-- A SQL body would be inlined before the planner could ask the support
-- function for an index condition, so it is a C function.
CREATE FUNCTION simhash_within(simhash64, simhash64, int4) RETURNS boolean
	AS 'MODULE_PATHNAME', 'simhash64_within'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF
	SUPPORT simhash_within_support;
COMMENT ON FUNCTION simhash_within(simhash64, simhash64, int4) IS
	'are the fingerprints within the given Hamming distance? (uses a simhash index on either argument)';

------------------------------------------------------------------------------
-- Verification and inspection of simhash indexes
------------------------------------------------------------------------------

CREATE FUNCTION simhash_index_check(index regclass, heapallindexed boolean DEFAULT false)
	RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION simhash_index_check(regclass, boolean) IS
	'check the invariants of a simhash index (and that every visible row is indexed); raises an error on corruption';
REVOKE ALL ON FUNCTION simhash_index_check(regclass, boolean) FROM PUBLIC;

CREATE FUNCTION simhash_index_stats(index regclass,
		OUT tree text, OUT levels int4, OUT leaf_pages int8, OUT internal_pages int8,
		OUT entries int8, OUT appended int8, OUT bytes_per_entry float8)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL RESTRICTED ROWS 5;
COMMENT ON FUNCTION simhash_index_stats(regclass) IS
	'pages, entries and bytes per entry of each tree of a simhash index';
REVOKE ALL ON FUNCTION simhash_index_stats(regclass) FROM PUBLIC;

CREATE FUNCTION simhash_index_heavy_keys(index regclass, n int4 DEFAULT 10,
		OUT band int4, OUT key text, OUT entries int8)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL RESTRICTED ROWS 10;
COMMENT ON FUNCTION simhash_index_heavy_keys(regclass, int4) IS
	'the longest key lists of a simhash index (skew from duplicated or clustered data)';
REVOKE ALL ON FUNCTION simhash_index_heavy_keys(regclass, int4) FROM PUBLIC;
