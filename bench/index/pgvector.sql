-- bench/index/pgvector.sql -- pgvector's HNSW index (bit_hamming_ops) on
-- the same 64-bit codes as the simhash index, as a pgvector user would
-- store them: bit(64), the fingerprint cast (fp::bigint::bit(64)).
--
-- Runs on the tables of one (size, dataset) that run.sh left with KEEP=1
-- (<prefix>_plain, <prefix>_q, and the sequential scan's rows in ixb_found:
-- the exact answers).  psql variables: prefix, run, size, n, dataset, nq,
-- seqnq (as in measure.sql).
--
-- Build: max_parallel_maintenance_workers = psql variable workers (0, a
-- serial build as for the other methods, unless pgvector.sh's HNSW_WORKERS
-- says otherwise: a parallel build keeps the graph in shared memory of
-- maintenance_work_mem and the leader builds too), default options (m = 16,
-- ef_construction = 64),
-- maintenance_work_mem = psql variable mwm (pgvector.sh: HNSW_MWM, default
-- 1GB; pgvector builds the graph in memory until it no longer fits, then
-- goes on on disk, much slower, with a NOTICE, which is shown).  Then,
-- server-side like measure.sql:
--   hnsw_filter     k = 3: WHERE code <~> q <= 3 (pgvector has no radius
--                   operator; an HNSW index serves only ORDER BY ... LIMIT,
--                   so this is a sequential scan)
--   hnsw_limit40    k = 3: the 40 nearest by the index (ef_search = 40, the
--                   default), then WHERE distance <= 3
--   hnsw_iter       k = 3: WHERE code <~> q <= 3 ORDER BY code <~> q
--                   LIMIT 40 with hnsw.iterative_scan = strict_order (0.8:
--                   the scan goes on until 40 rows pass the filter or
--                   hnsw.max_scan_tuples, 20000, were read)
--   knn_hnsw        LIMIT 10 nearest, ef_search 40 (default) and 200
-- Recall: k = 3 against the sequential scan (ixb_recall); LIMIT 10 against
-- the exact top 10 (every query's 10th distance from a sequential sort): a
-- returned row counts when its distance is at most the exact 10th one.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET maintenance_work_mem = :'mwm';
SET max_parallel_maintenance_workers = :workers;
SET max_parallel_workers_per_gather = 0;
SET synchronize_seqscans = off;
CREATE EXTENSION IF NOT EXISTS vector;

SELECT :'prefix' || '_plain' AS t_plain, :'prefix' || '_hnsw' AS t_hnsw,
	   :'prefix' || '_hnsw_code' AS i_hnsw, :'prefix' || '_q' AS t_q,
	   :'size' || '/' || :'dataset' AS tag
\gset

INSERT INTO ixb_templates VALUES
('hnsw_filter', 'hnsw', 'SELECT id FROM $T WHERE code <~> $Q::bit(64) <= $K'),
('hnsw_limit40', 'hnsw', 'SELECT id FROM (SELECT id, code <~> $Q::bit(64) AS d FROM $T ORDER BY code <~> $Q::bit(64) LIMIT 40) s WHERE d <= $K'),
('hnsw_iter', 'hnsw', 'SELECT id FROM $T WHERE code <~> $Q::bit(64) <= $K ORDER BY code <~> $Q::bit(64) LIMIT 40'),
('knn_hnsw', 'hnsw', 'SELECT id FROM $T ORDER BY code <~> $Q::bit(64) LIMIT 10'),
('knn_hnsw_ef200', 'hnsw', 'SELECT id FROM $T ORDER BY code <~> $Q::bit(64) LIMIT 10')
ON CONFLICT (method) DO UPDATE SET tbl = EXCLUDED.tbl, template = EXCLUDED.template;

SELECT ixb_put(:'run', :'size', :n, :'dataset', 'hnsw', NULL, 'library', NULL,
			   'vector ' || extversion) FROM pg_extension WHERE extname = 'vector';

-- the rows, in the same physical order
DROP TABLE IF EXISTS :t_hnsw;
CREATE TABLE :t_hnsw AS SELECT id, fp::bigint::bit(64) AS code FROM :t_plain;
VACUUM ANALYZE :t_hnsw;
SELECT ixb_put(:'run', :'size', :n, :'dataset', 'hnsw', NULL, 'table_bytes',
			   pg_relation_size(:'t_hnsw'));

CHECKPOINT;
SELECT clock_timestamp() AS t0 \gset
-- pgvector's NOTICE if the graph outgrows maintenance_work_mem
SET client_min_messages = notice;
CREATE INDEX :i_hnsw ON :t_hnsw USING hnsw (code bit_hamming_ops);
SET client_min_messages = warning;
SELECT ixb_put(:'run', :'size', :n, :'dataset', 'hnsw', NULL, 'build_ms',
			   extract(epoch FROM clock_timestamp() - :'t0'::timestamptz) * 1000,
			   'maintenance_work_mem ' || current_setting('maintenance_work_mem')
			   || CASE WHEN :workers > 0 THEN ', max_parallel_maintenance_workers '
						|| :workers ELSE '' END);
SELECT ixb_put(:'run', :'size', :n, :'dataset', 'hnsw', NULL, 'size_bytes',
			   pg_relation_size(:'i_hnsw'));
VACUUM ANALYZE :t_hnsw;

\echo '   k = 3: filter (sequential scan), index LIMIT 40 + filter, iterative scan'
SELECT ixb_measure(:'run', :'size', :n, :'dataset', :'prefix', true, 'hnsw_filter', 3, :nq, :seqnq, true);
SELECT ixb_measure(:'run', :'size', :n, :'dataset', :'prefix', true, 'hnsw_limit40', 3, :nq, :nq, true);
SET hnsw.iterative_scan = strict_order;
SELECT ixb_measure(:'run', :'size', :n, :'dataset', :'prefix', true, 'hnsw_iter', 3, :nq, :nq, true);
RESET hnsw.iterative_scan;
\echo '   nearest 10, ef_search 40 and 200'
SELECT ixb_measure(:'run', :'size', :n, :'dataset', :'prefix', true, 'knn_hnsw', 0, :nq, :nq, true);
SET hnsw.ef_search = 200;
SELECT ixb_measure(:'run', :'size', :n, :'dataset', :'prefix', true, 'knn_hnsw_ef200', 0, :nq, :nq, true);
RESET hnsw.ef_search;

\echo '   recall'
SELECT ixb_fill_distances(:'tag', :'t_plain', :'t_q');
SELECT ixb_recall(:'run', :'size', :n, :'dataset', m, 3)
FROM (VALUES ('hnsw_filter'), ('hnsw_limit40'), ('hnsw_iter')) v(m);

-- exact 10th-neighbour distance of every query (sequential sort)
SELECT ixb_fill_d10(:'tag', :'t_plain', :'t_q', :nq);
SELECT ixb_put(:'run', :'size', :n, :'dataset', m, 0, 'knn_recall',
			   sum(least(c, 10))::float8 / (10 * count(*)),
			   count(*) FILTER (WHERE c >= 10) || ' of ' || count(*) || ' queries with all 10')
FROM (SELECT f.method AS m, f.qid, count(*) FILTER (WHERE f.d <= t.d10) AS c
	  FROM ixb_found f JOIN ixb_knn_d10 t USING (qid)
	  WHERE f.tag = :'tag' AND t.tag = :'tag' AND f.method IN ('knn_hnsw', 'knn_hnsw_ef200', 'knn_simhash')
	  GROUP BY f.method, f.qid) s
GROUP BY m;
