-- bench/scaleout/shard.sql -- a shard's empty partitions and its pairs view
-- (psql variable i: the shard's number, 0 or 1)
\set ON_ERROR_STOP on
CREATE EXTENSION simhash;
CREATE TABLE docs_p:i (id int8 PRIMARY KEY, fp simhash64 NOT NULL);
CREATE TABLE doc_copies_p:i (grp int4 NOT NULL, id int8 PRIMARY KEY, fp simhash64 NOT NULL);
CREATE VIEW doc_pairs_p:i AS
SELECT a.id AS id1, b.id AS id2, a.fp <-> b.fp AS distance
FROM doc_copies_p:i a JOIN doc_copies_p:i b ON a.fp <-> b.fp <= 3 AND a.id < b.id
WHERE simhash_shared_block(a.fp, b.fp) % 2 = :i;
-- the earlier design, measured for comparison: a row per block, joined on the block
CREATE TABLE doc_blocks_p:i (block int4 NOT NULL, key int4 NOT NULL, id int8 NOT NULL, fp simhash64 NOT NULL);
