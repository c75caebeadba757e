-- bench/scaleout/shard.sql -- a shard's empty partitions (psql variable i)
\set ON_ERROR_STOP on
CREATE EXTENSION simhash;
CREATE TABLE docs_p:i (id int8 PRIMARY KEY, fp simhash64 NOT NULL);
CREATE TABLE doc_blocks_p:i (block int4 NOT NULL, key int4 NOT NULL, id int8 NOT NULL, fp simhash64 NOT NULL);
