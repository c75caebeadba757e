--
-- the simhash index access method
--
CREATE OR REPLACE FUNCTION sqlstate_of(query text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE query;
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
-- deterministic pseudo-random fingerprints
CREATE FUNCTION fp_of(i int8) RETURNS simhash64 LANGUAGE sql IMMUTABLE AS
$$ SELECT ((hashint8(i)::int8 << 32) | (hashint8(-i)::int8 & 4294967295))::simhash64 $$;
-- flip the bits set in a mask
CREATE FUNCTION fp_flip(fp simhash64, mask int8) RETURNS simhash64 LANGUAGE sql IMMUTABLE AS
$$ SELECT (fp::int8 # mask)::simhash64 $$;

SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'simhash64_ops';
SELECT amname, amtype FROM pg_am WHERE amname = 'simhash';

-- 20,000 random fingerprints, 30 near-copies of row 7 (0..3 bits flipped),
-- and some NULLs
CREATE TABLE docs (id int8 PRIMARY KEY, fp simhash64);
INSERT INTO docs SELECT i, fp_of(i) FROM generate_series(1, 20000) i;
INSERT INTO docs SELECT 100000 + i, fp_flip(fp_of(7), (1::int8 << (i % 60)) | (1::int8 << ((i * 7) % 61)))
	FROM generate_series(1, 30) i;
INSERT INTO docs VALUES (-1, NULL), (-2, NULL);
CREATE INDEX docs_fp ON docs USING simhash (fp);
ANALYZE docs;

-- a small table makes a small index
CREATE TABLE tiny AS SELECT i AS id, fp_of(i) AS fp FROM generate_series(1, 1000) i;
CREATE INDEX tiny_fp ON tiny USING simhash (fp);
SELECT pg_relation_size('tiny_fp') / current_setting('block_size')::int AS tiny_index_pages;
SELECT * FROM simhash_index_stats('tiny_fp');

-- the planner picks the index for selective searches
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE fp <@ simhash_ball(fp_of(7), 3);
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE simhash_ball(fp_of(7), 3) @> fp;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE fp = fp_of(7);
EXPLAIN (COSTS OFF) SELECT id, fp <-> fp_of(7) FROM docs ORDER BY fp <-> fp_of(7) LIMIT 5;
-- and a sequential scan when the radius makes the index useless
EXPLAIN (COSTS OFF) SELECT count(*) FROM docs WHERE fp <@ simhash_ball(fp_of(7), 40);

-- radius search: the near-copies of row 7, exactly as a sequential scan finds them
SELECT count(*) AS within_3, min(id), max(id) FROM docs WHERE fp <@ simhash_ball(fp_of(7), 3);
SELECT id, fp <-> fp_of(7) AS d FROM docs WHERE fp <@ simhash_ball(fp_of(7), 1) ORDER BY id;
SELECT id FROM docs WHERE fp = fp_of(7);

-- every radius from 0 to 64 agrees with a sequential scan, for index and bitmap scans
CREATE TABLE expected AS
SELECT k, q, array_agg(id ORDER BY id) FILTER (WHERE id IS NOT NULL) AS ids
FROM generate_series(0, 64) k CROSS JOIN (VALUES (fp_of(7)), (fp_of(12345)), ('0000000000000000'::simhash64)) v(q)
LEFT JOIN docs ON hamming(fp, q) <= k
GROUP BY k, q;
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(*) FILTER (WHERE e.ids IS DISTINCT FROM
	(SELECT array_agg(id ORDER BY id) FROM docs WHERE fp <@ simhash_ball(e.q, e.k))) AS index_scan_differences,
	count(*) AS cases
FROM expected e;
SET enable_indexscan = off; SET enable_bitmapscan = on;
SELECT count(*) FILTER (WHERE e.ids IS DISTINCT FROM
	(SELECT array_agg(id ORDER BY id) FROM docs WHERE fp <@ simhash_ball(e.q, e.k))) AS bitmap_scan_differences
FROM expected e;
RESET enable_indexscan; RESET enable_bitmapscan; RESET enable_seqscan;

-- nearest neighbours: distances in order, the same as a sort; NULLs last
SET enable_seqscan = off;
SELECT id, fp <-> fp_of(7) AS d FROM docs ORDER BY fp <-> fp_of(7) LIMIT 8;
SELECT array_agg(d) = (SELECT array_agg(d) FROM (SELECT hamming(fp, fp_of(99)) d FROM docs ORDER BY 1 LIMIT 50) s)
	AS knn_matches_sort
FROM (SELECT fp <-> fp_of(99) AS d FROM docs ORDER BY fp <-> fp_of(99) LIMIT 50) s;
SELECT id, fp <-> fp_of(7) AS d FROM docs ORDER BY fp <-> fp_of(7) OFFSET 20050;
-- the scan keeps only the rows a caller is expected to take (a few hundred)
-- and searches again when it wants more: every row once, in order
SELECT c, (SELECT array_agg(d) FROM (SELECT fp <-> fp_of(c) AS d FROM docs ORDER BY fp <-> fp_of(c)) s) =
		  (SELECT array_agg(hamming(fp, fp_of(c)) ORDER BY hamming(fp, fp_of(c)) NULLS LAST) FROM docs)
	AS all_distances_in_order,
	(SELECT count(DISTINCT id) FROM (SELECT id FROM docs ORDER BY fp <-> fp_of(c)) s) AS distinct_rows,
	(SELECT array_agg(id) FROM (SELECT id FROM docs ORDER BY fp <-> fp_of(c), id LIMIT 1500) s) =
		  (SELECT array_agg(id) FROM (SELECT id FROM docs ORDER BY hamming(fp, fp_of(c)), id LIMIT 1500) s)
	AS tie_broken_1500_match
FROM (VALUES (7), (99), (12345)) v(c);
-- nearest within a radius, and nearest to another centre within a radius
SELECT id, fp <-> fp_of(7) AS d FROM docs WHERE fp <@ simhash_ball(fp_of(7), 2)
	ORDER BY fp <-> fp_of(7), id LIMIT 3;
SELECT count(*) FROM (SELECT id FROM docs WHERE fp <@ simhash_ball(fp_of(7), 3)
	ORDER BY fp <-> fp_flip(fp_of(7), 15)) s;
-- no index-only scans (scans do not keep leaves pinned), and no full-index
-- scans for count(*); when forced, a full index-only scan still answers
VACUUM docs;
EXPLAIN (COSTS OFF) SELECT fp FROM docs WHERE fp <@ simhash_ball(fp_of(7), 1);
SELECT fp FROM docs WHERE fp <@ simhash_ball(fp_of(7), 1);
ANALYZE tiny;
SET enable_seqscan = on;
EXPLAIN (COSTS OFF) SELECT count(*) FROM tiny;
SET enable_seqscan = off; SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM tiny;
SELECT count(*) FROM tiny;
SET enable_bitmapscan = on;
-- a radius around one centre, ordered by the distance to another
SELECT count(*) AS sorted_by_far_centre FROM (
	SELECT id FROM docs WHERE fp <@ simhash_ball(fp_of(7), 3)
	ORDER BY fp <-> ((fp_of(7)::int8) # (-1)::int8)::simhash64 LIMIT 50) s;
SELECT array_agg(d) AS distances_to_far_centre FROM (
	SELECT fp <-> ((fp_of(7)::int8) # (-1)::int8)::simhash64 AS d FROM docs
	WHERE fp = fp_of(7) ORDER BY fp <-> ((fp_of(7)::int8) # (-1)::int8)::simhash64) s;
-- a NULL query matches nothing; a NULL ORDER BY argument orders nothing
SELECT count(*) FROM docs WHERE fp <@ simhash_ball(NULL, 3);
SELECT count(*) FROM docs WHERE fp <@ NULL::simhash_ball;
SELECT count(*) FROM (SELECT id FROM docs ORDER BY fp <-> NULL LIMIT 10) s;
SELECT count(*) FROM (SELECT fp FROM docs ORDER BY fp <-> NULL) s;
-- negative radius: empty ball
SELECT count(*) FROM docs WHERE fp <@ simhash_ball(fp_of(7), -1);
RESET enable_seqscan;

-- DML: inserts, updates and deletes are visible at once, in the same transaction too
BEGIN;
INSERT INTO docs VALUES (200001, fp_flip(fp_of(7), 3));
UPDATE docs SET fp = fp_flip(fp_of(7), 7) WHERE id = 42;
DELETE FROM docs WHERE id = 100001;
SET LOCAL enable_seqscan = off;
SELECT count(*) AS within_3_in_transaction FROM docs WHERE fp <@ simhash_ball(fp_of(7), 3);
SELECT id FROM docs WHERE id IN (200001, 42, 100001) AND fp <@ simhash_ball(fp_of(7), 3) ORDER BY id;
ROLLBACK;
SET enable_seqscan = off;
SELECT count(*) AS within_3_after_rollback FROM docs WHERE fp <@ simhash_ball(fp_of(7), 3);
RESET enable_seqscan;

-- VACUUM removes the entries of deleted rows; the index stays valid
DELETE FROM docs WHERE id % 3 = 0;
VACUUM docs;
SELECT tree, entries FROM simhash_index_stats('docs_fp');
SELECT simhash_index_check('docs_fp', heapallindexed => true);

-- growth: ten times the rows since CREATE INDEX, without a rebuild
INSERT INTO docs SELECT i, fp_of(i) FROM generate_series(300000, 500000) i;
SELECT simhash_index_check('docs_fp', heapallindexed => true);
SELECT tree, levels, entries FROM simhash_index_stats('docs_fp');
SET enable_seqscan = off;
SELECT count(*) AS within_3_after_growth FROM docs WHERE fp <@ simhash_ball(fp_of(7), 3);
RESET enable_seqscan;

-- clustered data: a thousand copies of one fingerprint
INSERT INTO docs SELECT 600000 + i, fp_of(5) FROM generate_series(1, 1000) i;
SELECT band, entries FROM simhash_index_heavy_keys('docs_fp', 4) ORDER BY band;
SET enable_seqscan = off;
SELECT count(*) FROM docs WHERE fp <@ simhash_ball(fp_of(5), 0);
RESET enable_seqscan;
SELECT simhash_index_check('docs_fp', true);

-- one flush that spreads a leaf over hundreds of new leaves (one key, one statement)
CREATE TABLE bulk (id int8, fp simhash64);
CREATE INDEX bulk_fp ON bulk USING simhash (fp);
INSERT INTO bulk SELECT i, fp_of(i) FROM generate_series(1, 100000) i;
INSERT INTO bulk SELECT i, fp_of(5) FROM generate_series(1, 250000) i;
SELECT simhash_index_check('bulk_fp', true);
SET enable_seqscan = off;
SELECT count(*) FROM bulk WHERE fp = fp_of(5);
RESET enable_seqscan;
-- VACUUM after deleting every other copy rewrites (and may split) those leaves
DELETE FROM bulk WHERE id % 2 = 0 AND fp = fp_of(5);
VACUUM bulk;
SELECT simhash_index_check('bulk_fp', true);
DROP TABLE bulk;

-- rows buffered before a TRUNCATE or REINDEX that is rolled back are kept
CREATE TABLE sp (id int8, fp simhash64);
CREATE INDEX sp_fp ON sp USING simhash (fp);
BEGIN;
INSERT INTO sp SELECT i, fp_of(i) FROM generate_series(1, 10) i;
SAVEPOINT s;
TRUNCATE sp;
INSERT INTO sp VALUES (100, fp_of(100));
ROLLBACK TO s;
COMMIT;
BEGIN;
INSERT INTO sp SELECT i, fp_of(i) FROM generate_series(11, 20) i;
SAVEPOINT s;
REINDEX INDEX sp_fp;
INSERT INTO sp VALUES (101, fp_of(101));
ROLLBACK TO s;
COMMIT;
SET enable_seqscan = off;
SELECT count(*) AS found_through_index
FROM generate_series(1, 20) i WHERE EXISTS (SELECT 1 FROM sp WHERE fp = fp_of(i));
RESET enable_seqscan;
SELECT simhash_index_check('sp_fp', true);
-- and rows of a TRUNCATE's earlier incarnation are dropped at commit
BEGIN;
INSERT INTO sp SELECT i, fp_of(i) FROM generate_series(21, 30) i;
TRUNCATE sp;
INSERT INTO sp VALUES (102, fp_of(102));
COMMIT;
SET enable_seqscan = off;
SELECT id FROM sp WHERE fp = fp_of(102);
SELECT count(*) FROM sp WHERE fp = fp_of(25);
RESET enable_seqscan;
SELECT simhash_index_check('sp_fp', true);
DROP TABLE sp;

-- TRUNCATE of a table created in the same transaction works in place: the
-- rows buffered before it must not reach the index afterwards
BEGIN;
CREATE TABLE tr (id int8, fp simhash64);
CREATE INDEX tr_fp ON tr USING simhash (fp);
INSERT INTO tr VALUES (1, 'aaaaaaaaaaaaaaaa');
TRUNCATE tr;
INSERT INTO tr VALUES (2, '5555555555555555');
COMMIT;
SET enable_seqscan = off;
SELECT id FROM tr WHERE fp = 'aaaaaaaaaaaaaaaa';
SELECT id FROM tr WHERE fp = '5555555555555555';
RESET enable_seqscan;
SELECT simhash_index_check('tr_fp', true);
DROP TABLE tr;

-- an index created on an empty table says it has no entries (reltuples 0)
-- until VACUUM or ANALYZE: searches must not believe it and read a whole
-- band instead of probing a few keys
CREATE TABLE fresh (id int8, fp simhash64) WITH (autovacuum_enabled = off);
CREATE INDEX fresh_fp ON fresh USING simhash (fp);
INSERT INTO fresh SELECT i, fp_of(i) FROM generate_series(1, 100000) i;
SELECT reltuples FROM pg_class WHERE relname = 'fresh_fp';
CREATE FUNCTION index_blocks(query text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE plan json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON, TIMING OFF) ' || query INTO plan;
	RETURN (plan -> 0 -> 'Plan' ->> 'Shared Hit Blocks')::int +
		   (plan -> 0 -> 'Plan' ->> 'Shared Read Blocks')::int;
END $$;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT index_blocks($$SELECT id FROM fresh WHERE fp <@ simhash_ball(fp_of(77), 3)$$) < 40 AS probes_keys;
RESET enable_seqscan;
RESET enable_bitmapscan;
DROP TABLE fresh;
DROP FUNCTION index_blocks(text);

-- COPY FREEZE marks this transaction's own rows frozen: they are still its
-- own when the buffered entries are checked against the heap at commit
BEGIN;
CREATE TABLE fz (id int8, fp simhash64);
CREATE INDEX fz_fp ON fz USING simhash (fp);
COPY fz FROM STDIN (FREEZE);
1	aaaaaaaaaaaaaaaa
2	5555555555555555
3	\N
\.
COMMIT;
SET enable_seqscan = off;
SELECT id FROM fz WHERE fp = 'aaaaaaaaaaaaaaaa';
SELECT id FROM fz WHERE fp <@ simhash_ball('5555555555555554', 1);
RESET enable_seqscan;
SELECT simhash_index_check('fz_fp', true);
SELECT tree, entries FROM simhash_index_stats('fz_fp') WHERE entries > 0;
DROP TABLE fz;

-- moving the index to another tablespace keeps the rows buffered before
SET allow_in_place_tablespaces = on;
CREATE TABLESPACE simhash_ts LOCATION '';
CREATE TABLE ts (id int8, fp simhash64);
CREATE INDEX ts_fp ON ts USING simhash (fp);
BEGIN;
INSERT INTO ts SELECT i, fp_of(i) FROM generate_series(1, 100) i;
ALTER INDEX ts_fp SET TABLESPACE simhash_ts;
COMMIT;
SELECT simhash_index_check('ts_fp', true);
SET enable_seqscan = off;
SELECT count(*) FROM generate_series(1, 100) i WHERE EXISTS (SELECT 1 FROM ts WHERE fp = fp_of(i));
RESET enable_seqscan;
DROP TABLE ts;
DROP TABLESPACE simhash_ts;
RESET allow_in_place_tablespaces;

-- a parallel worker reads the index, not this backend's buffered rows:
-- they are written before a plan that may start workers
CREATE TABLE par (id int8, fp simhash64);
CREATE INDEX par_fp ON par USING simhash (fp);
INSERT INTO par SELECT i, fp_of(i) FROM generate_series(1, 1000) i;
BEGIN;
INSERT INTO par SELECT 2000 + i, fp_flip('aaaaaaaaaaaaaaaa', 1::int8 << i) FROM generate_series(0, 9) i;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
SET LOCAL parallel_leader_participation = off;
SELECT set_config(CASE WHEN current_setting('server_version_num')::int >= 160000
					   THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END,
				  'on', true) AS force_parallel;
SELECT count(*) AS found_by_worker FROM par WHERE fp <@ simhash_ball('aaaaaaaaaaaaaaaa', 1);
COMMIT;
SELECT simhash_index_check('par_fp', true);
DROP TABLE par;

-- the rows of a rolled-back subtransaction leave the insert buffer at once:
-- estimates, which count buffered rows in memory, no longer see them
CREATE TABLE est (id int8, fp simhash64) WITH (autovacuum_enabled = off);
INSERT INTO est SELECT i, fp_of(i) FROM generate_series(1, 2000) i;
CREATE INDEX est_fp ON est USING simhash (fp);
ANALYZE est;
CREATE FUNCTION est_rows() RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE plan json;
BEGIN
	EXECUTE 'EXPLAIN (FORMAT JSON) SELECT id FROM est WHERE fp <-> ''aaaaaaaaaaaaaaaa'' <= 2' INTO plan;
	RETURN (plan -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
END $$;
BEGIN;
SAVEPOINT s;
INSERT INTO est SELECT 10000 + i, 'aaaaaaaaaaaaaaaa' FROM generate_series(1, 500) i;
SELECT est_rows() >= 500 AS buffered_rows_counted;
ROLLBACK TO s;
SELECT est_rows() < 100 AS rolled_back_rows_gone;
COMMIT;
DROP TABLE est;
DROP FUNCTION est_rows();

-- a flush interrupted by a statement timeout inside a savepoint is retried
-- without writing any entry twice
CREATE TABLE intr (id int8, fp simhash64);
CREATE INDEX intr_fp ON intr USING simhash (fp);
INSERT INTO intr SELECT i, fp_of(i) FROM generate_series(1, 200000) i;
BEGIN;
INSERT INTO intr SELECT i, fp_of(i) FROM generate_series(200001, 230000) i;
SAVEPOINT s;
SET LOCAL statement_timeout = '2ms';
\set SHOW_CONTEXT never
SELECT count(*) FROM intr WHERE fp <@ simhash_ball(fp_of(3), 0);
\set SHOW_CONTEXT errors
ROLLBACK TO s;
COMMIT;
SELECT simhash_index_check('intr_fp', true);
SELECT tree, entries FROM simhash_index_stats('intr_fp');
DROP TABLE intr;

-- options
CREATE INDEX docs_fp_ff ON docs USING simhash (fp) WITH (fillfactor = 60);
SELECT (SELECT sum(leaf_pages) FROM simhash_index_stats('docs_fp_ff')) >
	   (SELECT sum(leaf_pages) FROM simhash_index_stats('docs_fp')) AS lower_fill_more_pages;
SELECT sqlstate_of($$CREATE INDEX ON docs USING simhash (fp) WITH (fillfactor = 10)$$);
SELECT sqlstate_of($$CREATE INDEX ON docs USING simhash (fp) WITH (pages = 10)$$);
DROP INDEX docs_fp_ff;

-- errors
SELECT sqlstate_of($$CREATE INDEX ON docs USING simhash (id)$$);
SELECT sqlstate_of($$CREATE INDEX ON docs USING simhash (fp, id)$$);
SELECT sqlstate_of($$CREATE UNIQUE INDEX ON docs USING simhash (fp)$$);
-- exclusion constraints are refused (entries are buffered until commit)
ALTER TABLE docs ADD CONSTRAINT docs_fp_excl EXCLUDE USING simhash (fp WITH =);
SELECT count(*) AS exclusion_constraints FROM pg_constraint WHERE conrelid = 'docs'::regclass AND contype = 'x';
SELECT sqlstate_of($$SELECT simhash_index_check('docs_pkey')$$);
SELECT sqlstate_of($$SELECT simhash_index_check('docs')$$);
SELECT sqlstate_of($$SELECT 'xyz/3'::simhash_ball$$);
SELECT sqlstate_of($$SELECT '0123456789abcdef/'::simhash_ball$$);
SELECT sqlstate_of($$SELECT '0123456789abcdef/9999999999'::simhash_ball$$);
SELECT '0123456789ABCDEF/3'::simhash_ball, simhash_ball('0123456789abcdef', -1),
	simhash_ball_center('0123456789abcdef/3'), simhash_ball_radius('0123456789abcdef/3');

-- REINDEX, REINDEX CONCURRENTLY and CREATE INDEX CONCURRENTLY
REINDEX INDEX docs_fp;
SELECT simhash_index_check('docs_fp', true);
REINDEX INDEX CONCURRENTLY docs_fp;
SELECT simhash_index_check('docs_fp', true);
CREATE INDEX CONCURRENTLY docs_fp2 ON docs USING simhash (fp);
SELECT simhash_index_check('docs_fp2', true);
DROP INDEX docs_fp2;

-- unlogged tables, temporary tables and partitioned tables
CREATE UNLOGGED TABLE ul (fp simhash64);
CREATE INDEX ON ul USING simhash (fp);
INSERT INTO ul SELECT fp_of(i) FROM generate_series(1, 2000) i;
SET enable_seqscan = off;
SELECT count(*) FROM ul WHERE fp <@ simhash_ball(fp_of(77), 0);
CREATE TEMP TABLE tmp (fp simhash64);
CREATE INDEX tmp_fp ON tmp USING simhash (fp);
INSERT INTO tmp SELECT fp_of(i) FROM generate_series(1, 2000) i;
SELECT count(*) FROM tmp WHERE fp <@ simhash_ball(fp_of(77), 0);
SELECT simhash_index_check('tmp_fp', true);
CREATE TABLE parted (id int, fp simhash64) PARTITION BY RANGE (id);
CREATE TABLE parted_1 PARTITION OF parted FOR VALUES FROM (0) TO (1000);
CREATE TABLE parted_2 PARTITION OF parted FOR VALUES FROM (1000) TO (2000);
CREATE INDEX parted_fp ON parted USING simhash (fp);
INSERT INTO parted SELECT i, fp_of(i) FROM generate_series(0, 1999) i;
EXPLAIN (COSTS OFF) SELECT id FROM parted WHERE fp <@ simhash_ball(fp_of(1500), 2);
SELECT id FROM parted WHERE fp <@ simhash_ball(fp_of(1500), 2);
RESET enable_seqscan;

-- progress of CREATE INDEX is reported with the access method's phase names
-- (what pg_stat_progress_create_index shows; unknown numbers give NULL)
SELECT p, pg_indexam_progress_phasename(a.oid, p) AS phase
FROM pg_am a, generate_series(0, 5) p WHERE a.amname = 'simhash' ORDER BY p;

DROP TABLE docs, tiny, expected, ul, tmp, parted;
DROP FUNCTION fp_of(int8), fp_flip(simhash64, int8);
