-- bench/scaleout/setup.sql -- the rows of the scale-out benchmark, on the
-- coordinator (psql variables: nrows, blocks (0 or 1), shard0_host, shard0_port, shard1_host,
-- shard1_port; the shards already hold empty docs_p<i> and doc_blocks_p<i>).
--   sc_local    the single server: nrows rows, simhash index
--   docs        the same rows, hash-partitioned by id over two postgres_fdw
--               shards (docs_p0, docs_p1), a simhash index on each shard
--   doc_copies  (shard, id, fp): each row copied to the shard of each of its
--               blocks (block % 2), the README's pairs recipe; doc_pairs reads
--               each shard's pairs view
--   doc_blocks  (block number, block, id, fp) of every row, partitioned by the
--               block: the earlier design, a join on the block (BLOCKS=1)
--   queries     1,000 query fingerprints: rows of the table with 2 bits flipped
-- Rows: clusters of 9 near-copies (0-3 bits flipped off a random centre, so
-- copies are 0-6 bits apart) making up 90 % of the rows, and random rows.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET maintenance_work_mem = '1GB';
CREATE EXTENSION simhash;
CREATE EXTENSION postgres_fdw;
SELECT setseed(0.12);

CREATE TABLE sc_local (id int8 PRIMARY KEY, fp simhash64 NOT NULL);
-- per copy: nflip (0-3) distinct bits b1, b2, b3
INSERT INTO sc_local
SELECT c * 10 + j,
	   (v # (CASE WHEN nflip > 0 THEN 1::int8 << b1 ELSE 0 END)
		  # (CASE WHEN nflip > 1 THEN 1::int8 << ((b1 + 1 + r2) % 64) ELSE 0 END)
		  # (CASE WHEN nflip > 2 THEN 1::int8 << ((b1 + 33 + r3) % 64) ELSE 0 END))::simhash64
FROM (SELECT c, j, v, floor(random() * 4)::int AS nflip, floor(random() * 64)::int AS b1,
			 floor(random() * 31)::int AS r2, floor(random() * 31)::int AS r3
	  FROM (SELECT c, (floor(random() * 4294967296)::int8 << 32) | floor(random() * 4294967296)::int8 AS v
			FROM generate_series(1, (:nrows * 0.9 / 9)::int8) c OFFSET 0) centres,
		   generate_series(1, 9) j
	  OFFSET 0) copies;
INSERT INTO sc_local
SELECT 100000000 + i, ((floor(random() * 4294967296)::int8 << 32) | floor(random() * 4294967296)::int8)::simhash64
FROM generate_series(1, :nrows - (SELECT count(*) FROM sc_local)) i;
\timing on
\echo build_simhash_index_single_server
CREATE INDEX sc_local_fp ON sc_local USING simhash (fp);
\timing off
VACUUM ANALYZE sc_local;

CREATE TABLE queries AS
SELECT row_number() OVER () AS qid,
	   (fp::int8 # (1::int8 << (id % 64)::int) # (1::int8 << ((id / 64 + 1) % 64)::int))::simhash64 AS fp
FROM (SELECT * FROM sc_local ORDER BY random() LIMIT 1000) s;
ALTER TABLE queries ADD PRIMARY KEY (qid);
ANALYZE queries;

CREATE SERVER shard0 FOREIGN DATA WRAPPER postgres_fdw
	OPTIONS (host :'shard0_host', port :'shard0_port', dbname 'postgres',
			 extensions 'simhash', async_capable 'true', batch_size '10000', fetch_size '10000',
			 fdw_tuple_cost '0.2');
CREATE SERVER shard1 FOREIGN DATA WRAPPER postgres_fdw
	OPTIONS (host :'shard1_host', port :'shard1_port', dbname 'postgres',
			 extensions 'simhash', async_capable 'true', batch_size '10000', fetch_size '10000',
			 fdw_tuple_cost '0.2');
CREATE USER MAPPING FOR CURRENT_USER SERVER shard0;
CREATE USER MAPPING FOR CURRENT_USER SERVER shard1;
CREATE TABLE docs (id int8 NOT NULL, fp simhash64 NOT NULL) PARTITION BY HASH (id);
CREATE FOREIGN TABLE docs_p0 PARTITION OF docs FOR VALUES WITH (MODULUS 2, REMAINDER 0) SERVER shard0;
CREATE FOREIGN TABLE docs_p1 PARTITION OF docs FOR VALUES WITH (MODULUS 2, REMAINDER 1) SERVER shard1;
CREATE TABLE doc_copies (grp int4 NOT NULL, id int8 NOT NULL, fp simhash64 NOT NULL) PARTITION BY LIST (grp);
CREATE FOREIGN TABLE doc_copies_p0 PARTITION OF doc_copies FOR VALUES IN (0) SERVER shard0;
CREATE FOREIGN TABLE doc_copies_p1 PARTITION OF doc_copies FOR VALUES IN (1) SERVER shard1;
CREATE FOREIGN TABLE doc_pairs_p0 (id1 int8, id2 int8, distance int4) SERVER shard0;
CREATE FOREIGN TABLE doc_pairs_p1 (id1 int8, id2 int8, distance int4) SERVER shard1;
CREATE VIEW doc_pairs AS SELECT * FROM doc_pairs_p0 UNION ALL SELECT * FROM doc_pairs_p1;
CREATE TABLE doc_blocks (block int4 NOT NULL, key int4 NOT NULL, id int8 NOT NULL, fp simhash64 NOT NULL)
	PARTITION BY HASH (key);
CREATE FOREIGN TABLE doc_blocks_p0 PARTITION OF doc_blocks FOR VALUES WITH (MODULUS 2, REMAINDER 0)
	SERVER shard0 OPTIONS (use_remote_estimate 'true');
CREATE FOREIGN TABLE doc_blocks_p1 PARTITION OF doc_blocks FOR VALUES WITH (MODULUS 2, REMAINDER 1)
	SERVER shard1 OPTIONS (use_remote_estimate 'true');

\timing on
\echo load_docs_through_coordinator
INSERT INTO docs SELECT id, fp FROM sc_local;
\echo load_doc_copies_through_coordinator
INSERT INTO doc_copies SELECT DISTINCT k % 2, id, fp FROM sc_local, unnest(simhash_blocks(fp)) k;
\timing off
\if :blocks
\timing on
\echo load_doc_blocks_through_coordinator
INSERT INTO doc_blocks SELECT b, simhash_block(fp, b), id, fp FROM sc_local, generate_series(0, 3) b;
\timing off
\endif
