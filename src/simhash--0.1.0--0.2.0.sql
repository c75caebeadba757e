/* src/simhash--0.1.0--0.2.0.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION simhash UPDATE TO '0.2.0'" to load this file. \quit

-- CREATE EXTENSION simhash runs simhash--0.1.0.sql and then this script, as
-- contrib modules do, so a fresh installation and an updated one are the
-- same by construction.  Objects new in 0.2.0, and changes to 0.1.0's, go
-- here, grouped by subject.

------------------------------------------------------------------------------
-- Triggers: fingerprints and near-duplicates caught at INSERT
------------------------------------------------------------------------------

CREATE FUNCTION simhash_fingerprint_trigger() RETURNS trigger
	AS 'MODULE_PATHNAME' LANGUAGE C;
COMMENT ON FUNCTION simhash_fingerprint_trigger() IS
	'trigger filling a simhash64 column from text columns: simhash_fingerprint_trigger(fp_column, text_column [, ...])';

CREATE FUNCTION simhash_near_duplicate_trigger() RETURNS trigger
	AS 'MODULE_PATHNAME' LANGUAGE C;
COMMENT ON FUNCTION simhash_near_duplicate_trigger() IS
	'trigger catching rows within k bits of an earlier row: simhash_near_duplicate_trigger(fp_column, k, ''reject''|''skip''|''link'' [, options])';

------------------------------------------------------------------------------
-- Search radius by text size (bench/quality, "Short texts")
------------------------------------------------------------------------------

CREATE FUNCTION simhash_radius(text) RETURNS int4
	AS 'MODULE_PATHNAME', 'simhash_radius_text'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_radius(text) IS
'search radius proposed for near-duplicates of this text: ceil(36 / sqrt(W)) between 3 and 12, W being the total weight of its features (0 for a text without features)';

CREATE FUNCTION simhash_radius(features int8) RETURNS int4
	AS 'MODULE_PATHNAME', 'simhash_radius_weight'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_radius(int8) IS
'search radius proposed for a text whose features weigh this much in all (about its number of words or Han characters): ceil(36 / sqrt(features)) between 3 and 12, 0 for 0';

------------------------------------------------------------------------------
-- Confirmation: the text similarity that matches the fingerprint
------------------------------------------------------------------------------

-- The second stage of "fp <-> simhash($1) <= k AND simhash_jaccard(body, $1)
-- >= s".  It reads both texts whole (as simhash(text) does, twice), so it is
-- costed like a scan of a few hundred rows: the planner orders it after
-- every cheap qual, evaluates it on the index's candidates only, and never
-- finds a plan that would run it over a whole table attractive.
CREATE FUNCTION simhash_jaccard(a text, b text) RETURNS float8
	AS 'MODULE_PATHNAME', 'simhash_jaccard_text'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION simhash_jaccard(text, text) IS
	'weighted Jaccard similarity of the features of simhash(a) and simhash(b): sum of min weights / sum of max weights, 1 for two texts without features';

------------------------------------------------------------------------------
-- Blocks: the four 16-bit blocks of a fingerprint, as join keys
------------------------------------------------------------------------------

-- Two fingerprints within distance 3 have an equal block, so blocks route
-- near-duplicates to the same shard of a sharded table (README, "Scaling
-- out"): a document is copied to the group of each of its blocks, every
-- group pairs its own copies, and simhash_shared_block() names the one group
-- that reports a pair.  They are also equality join keys (a Citus repartition
-- join on stored block columns).
-- simhash_block() errors for a block number outside 0..3, and a function
-- whose errors depend on its arguments is not leakproof (CREATE FUNCTION's
-- rule); simhash_blocks() cannot fail, and is.
CREATE FUNCTION simhash_block(simhash64, int4) RETURNS int4
	AS 'MODULE_PATHNAME', 'simhash64_block'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_block(simhash64, int4) IS
	'block i (0 to 3, 0 = the most significant 16 bits, as the index''s band i) of a fingerprint, 0 to 65535';

CREATE FUNCTION simhash_blocks(simhash64) RETURNS int4[]
	AS 'MODULE_PATHNAME', 'simhash64_blocks'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION simhash_blocks(simhash64) IS
	'the four blocks of a fingerprint, most significant first: simhash_blocks(fp)[i + 1] = simhash_block(fp, i)';

CREATE FUNCTION simhash_shared_block(simhash64, simhash64) RETURNS int4
	AS 'MODULE_PATHNAME', 'simhash64_shared_block'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION simhash_shared_block(simhash64, simhash64) IS
	'the first block, most significant first, that two fingerprints share (0 to 65535), NULL if none; fingerprints within 3 always share one';

------------------------------------------------------------------------------
-- Clusters: near-duplicate clusters of a query's rows
------------------------------------------------------------------------------

-- The connected components of "within k bits" among the rows of
-- a query (clusters.c).  VOLATILE and PARALLEL UNSAFE as core's ts_stat,
-- which also runs a query given as text: the query may call anything, and
-- it runs read-only through SPI, as the calling role.  Not STRICT: a NULL
-- query or k is an error, not an empty result.
CREATE FUNCTION simhash_clusters(query text, k int4)
RETURNS TABLE (id int8, cluster int8, size int8)
AS 'MODULE_PATHNAME', 'simhash_clusters'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_clusters(text, int4) IS
'near-duplicate clusters of the rows of a query returning (id, fp): each row whose fp is not NULL with its cluster''s smallest id and size, ordered by cluster and id';
