-- bench/index/pgvector_pair.sql -- the simhash index and pgvector's HNSW
-- index timed again one right after the other, per dataset, so that their
-- ratio is taken under the same load (the runs of run.sh and pgvector.sql
-- are minutes apart on a shared machine).  Methods are recorded as
-- "pair:<method>"; nothing is captured.  psql variables: prefix, run, size,
-- n, dataset, nq.  Needs the tables of run.sh (KEEP=1) and pgvector.sql.
-- With the variable ef: the 10 nearest only, simhash against HNSW at that
-- hnsw.ef_search (method knn_hnsw_ef<ef>, as pgvector_ef.sql names it).
\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;

\if :{?ef}
-- (run.sh recreates ixb_templates: pgvector_ef.sql's entry may be gone)
INSERT INTO ixb_templates VALUES
('knn_hnsw_ef' || :'ef', 'hnsw', 'SELECT id FROM $T ORDER BY code <~> $Q::bit(64) LIMIT 10')
ON CONFLICT (method) DO UPDATE SET tbl = EXCLUDED.tbl, template = EXCLUDED.template;
SET hnsw.ef_search = :ef;
SELECT ixb_server(:'run', :'size', :n, :'dataset', 'pair:' || m, 0,
				  ixb_table(:'prefix', m, true), :'prefix' || '_q',
				  (SELECT template FROM ixb_templates t WHERE t.method = m),
				  :nq, :nq, false)
FROM (VALUES (1, 'knn_simhash'), (2, 'knn_hnsw_ef' || :'ef'), (3, 'knn_hnsw_ef' || :'ef'),
			 (4, 'knn_simhash')) v(o, m)
ORDER BY o;
RESET hnsw.ef_search;
\quit
\endif

SELECT ixb_server(:'run', :'size', :n, :'dataset', 'pair:' || m, k,
				  ixb_table(:'prefix', m, true), :'prefix' || '_q',
				  (SELECT template FROM ixb_templates t WHERE t.method = m),
				  :nq, :nq, false)
FROM (VALUES (1, 'simhash', 3), (2, 'hnsw_limit40', 3), (3, 'knn_simhash', 0), (4, 'knn_hnsw', 0),
			 (5, 'knn_hnsw', 0), (6, 'knn_simhash', 0), (7, 'hnsw_limit40', 3), (8, 'simhash', 3)) v(o, m, k)
ORDER BY o;
