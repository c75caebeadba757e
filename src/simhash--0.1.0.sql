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

CREATE FUNCTION hamming(simhash64, simhash64) RETURNS int4
	AS 'MODULE_PATHNAME', 'simhash64_hamming'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
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
