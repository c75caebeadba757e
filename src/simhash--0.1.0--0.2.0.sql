/* src/simhash--0.1.0--0.2.0.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION simhash UPDATE TO '0.2.0'" to load this file. \quit

-- CREATE EXTENSION simhash runs simhash--0.1.0.sql and then this script, as
-- contrib modules do, so a fresh installation and an updated one are the
-- same by construction.  Objects new in 0.2.0, and changes to 0.1.0's, go
-- here, grouped by subject.

-- Clusters: the connected components of "within k bits" among the rows of
-- a query (clusters.c).  VOLATILE and PARALLEL UNSAFE as core's ts_stat,
-- which also runs a query given as text: the query may call anything, and
-- it runs read-only through SPI, as the calling role.
CREATE FUNCTION simhash_clusters(query text, k int4)
RETURNS TABLE (id int8, cluster int8, size int8)
AS 'MODULE_PATHNAME', 'simhash_clusters'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_clusters(text, int4) IS
'near-duplicate clusters of the rows of a query returning (id, fp): each row whose fp is not NULL with its cluster''s smallest id and size, ordered by cluster and id';
