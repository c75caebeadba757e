-- bench/index/build.sql -- build every method's index on its copy of the
-- rows, timing each CREATE INDEX (wall clock around the statement, commit
-- included), then VACUUM ANALYZE.
--
-- psql variables: prefix, run, size, n, dataset, full (see setup.sql),
-- include (1: the simhash index is built with INCLUDE (id)).
--
-- Same settings for every build: maintenance_work_mem = 1GB and
-- max_parallel_maintenance_workers = 0 (in PostgreSQL 15 only btree can build
-- in parallel; GIN and simhash cannot).  btree4 is built a second time with
-- 2 parallel workers (PostgreSQL's default) for reference, then that copy is
-- dropped.  A CHECKPOINT precedes each build so that no build pays for the
-- previous one's dirty pages.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET maintenance_work_mem = '1GB';
SET max_parallel_maintenance_workers = 0;

SELECT :'prefix' || '_plain' AS t_plain, :'prefix' || '_btree4' AS t_btree4,
	   :'prefix' || '_gin4' AS t_gin4, :'prefix' || '_simhash' AS t_simhash,
	   :'prefix' || '_simhash_fp' AS i_simhash, :'prefix' || '_gin4_fp' AS i_gin4,
	   :'prefix' || '_btree4_b0' AS i_b0, :'prefix' || '_btree4_b1' AS i_b1,
	   :'prefix' || '_btree4_b2' AS i_b2, :'prefix' || '_btree4_b3' AS i_b3
\gset

-- simhash
CHECKPOINT;
SELECT clock_timestamp() AS t0 \gset
\if :include
CREATE INDEX :i_simhash ON :t_simhash USING simhash (fp) INCLUDE (id);
\else
CREATE INDEX :i_simhash ON :t_simhash USING simhash (fp);
\endif
SELECT ixb_put(:'run', :'size', :n, :'dataset', 'simhash', NULL, 'build_ms',
			   extract(epoch FROM clock_timestamp() - :'t0'::timestamptz) * 1000);
SELECT ixb_put(:'run', :'size', :n, :'dataset', 'simhash', NULL, 'size_bytes',
			   pg_relation_size(:'i_simhash'));
SELECT ixb_put(:'run', :'size', :n, :'dataset', 'simhash', NULL, 'bytes_per_entry',
			   sum(bytes_per_entry * entries) / sum(entries))
FROM simhash_index_stats(:'i_simhash') WHERE entries > 0;
SELECT ixb_put(:'run', :'size', :n, :'dataset', 'simhash', NULL, 'tree_levels', max(levels))
FROM simhash_index_stats(:'i_simhash');

\if :full
-- btree4: four expression indexes, serial builds
CHECKPOINT;
SELECT clock_timestamp() AS t0 \gset
CREATE INDEX :i_b0 ON :t_btree4 (((fp::bigint >> 48) & 65535));
SELECT ixb_put(:'run', :'size', :n, :'dataset', 'btree4', NULL, 'build_ms_part',
			   extract(epoch FROM clock_timestamp() - :'t0'::timestamptz) * 1000, 'b0');
CHECKPOINT;
SELECT clock_timestamp() AS t0 \gset
CREATE INDEX :i_b1 ON :t_btree4 (((fp::bigint >> 32) & 65535));
SELECT ixb_put(:'run', :'size', :n, :'dataset', 'btree4', NULL, 'build_ms_part',
			   extract(epoch FROM clock_timestamp() - :'t0'::timestamptz) * 1000, 'b1');
CHECKPOINT;
SELECT clock_timestamp() AS t0 \gset
CREATE INDEX :i_b2 ON :t_btree4 (((fp::bigint >> 16) & 65535));
SELECT ixb_put(:'run', :'size', :n, :'dataset', 'btree4', NULL, 'build_ms_part',
			   extract(epoch FROM clock_timestamp() - :'t0'::timestamptz) * 1000, 'b2');
CHECKPOINT;
SELECT clock_timestamp() AS t0 \gset
CREATE INDEX :i_b3 ON :t_btree4 ((fp::bigint & 65535));
SELECT ixb_put(:'run', :'size', :n, :'dataset', 'btree4', NULL, 'build_ms_part',
			   extract(epoch FROM clock_timestamp() - :'t0'::timestamptz) * 1000, 'b3');
SELECT ixb_put(:'run', :'size', :n, :'dataset', 'btree4', NULL, 'build_ms', sum(value))
FROM ixb_results WHERE run = :'run' AND size = :'size' AND dataset = :'dataset'
  AND method = 'btree4' AND metric = 'build_ms_part';
SELECT ixb_put(:'run', :'size', :n, :'dataset', 'btree4', NULL, 'size_bytes',
			   sum(pg_relation_size(indexrelid)))
FROM pg_index WHERE indrelid = :'t_btree4'::regclass;

-- btree4 again with 2 parallel workers per build (reference), then dropped
SET max_parallel_maintenance_workers = 2;
CHECKPOINT;
SELECT clock_timestamp() AS t0 \gset
CREATE INDEX ixb_par_b0 ON :t_btree4 (((fp::bigint >> 48) & 65535));
CREATE INDEX ixb_par_b1 ON :t_btree4 (((fp::bigint >> 32) & 65535));
CREATE INDEX ixb_par_b2 ON :t_btree4 (((fp::bigint >> 16) & 65535));
CREATE INDEX ixb_par_b3 ON :t_btree4 ((fp::bigint & 65535));
SELECT ixb_put(:'run', :'size', :n, :'dataset', 'btree4_par2', NULL, 'build_ms',
			   extract(epoch FROM clock_timestamp() - :'t0'::timestamptz) * 1000);
DROP INDEX ixb_par_b0, ixb_par_b1, ixb_par_b2, ixb_par_b3;
SET max_parallel_maintenance_workers = 0;

-- gin4: one GIN index on the band-tagged blocks (default fastupdate = on)
CHECKPOINT;
SELECT clock_timestamp() AS t0 \gset
CREATE INDEX :i_gin4 ON :t_gin4 USING gin ((ARRAY[
	(((fp::bigint >> 48) & 65535))::int4, (65536 + ((fp::bigint >> 32) & 65535))::int4,
	(131072 + ((fp::bigint >> 16) & 65535))::int4, (196608 + (fp::bigint & 65535))::int4]));
SELECT ixb_put(:'run', :'size', :n, :'dataset', 'gin4', NULL, 'build_ms',
			   extract(epoch FROM clock_timestamp() - :'t0'::timestamptz) * 1000);
SELECT ixb_put(:'run', :'size', :n, :'dataset', 'gin4', NULL, 'size_bytes',
			   pg_relation_size(:'i_gin4'));

VACUUM ANALYZE :t_plain;
VACUUM ANALYZE :t_btree4;
VACUUM ANALYZE :t_gin4;
\endif
VACUUM ANALYZE :t_simhash;
SELECT ixb_put(:'run', :'size', :n, :'dataset', 'table', NULL, 'size_bytes',
			   pg_relation_size(:'t_simhash'));

-- verify the simhash index (every invariant, every visible row indexed)
SELECT clock_timestamp() AS t0 \gset
SELECT simhash_index_check(:'i_simhash', true);
SELECT ixb_put(:'run', :'size', :n, :'dataset', 'simhash', NULL, 'check_ms',
			   extract(epoch FROM clock_timestamp() - :'t0'::timestamptz) * 1000);
