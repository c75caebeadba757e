-- bench/index/pgvector_ef.sql -- pgvector's HNSW nearest 10 at one more
-- ef_search (psql variable ef, 1-1000), on the index pgvector.sql built:
-- what recall 1.0 costs.  Recorded as method knn_hnsw_ef<ef>: server-side
-- p50/p95 as in pgvector.sql and knn_recall against the exact 10th distance
-- (a sequential sort per query).  psql variables: prefix, run, size, n,
-- dataset, nq, ef.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;

SELECT :'prefix' || '_plain' AS t_plain, :'prefix' || '_q' AS t_q,
	   :'size' || '/' || :'dataset' AS tag, 'knn_hnsw_ef' || :'ef' AS m
\gset

INSERT INTO ixb_templates VALUES
(:'m', 'hnsw', 'SELECT id FROM $T ORDER BY code <~> $Q::bit(64) LIMIT 10')
ON CONFLICT (method) DO UPDATE SET tbl = EXCLUDED.tbl, template = EXCLUDED.template;

SET hnsw.ef_search = :ef;
SELECT ixb_measure(:'run', :'size', :n, :'dataset', :'prefix', true, :'m', 0, :nq, :nq, true);
RESET hnsw.ef_search;
SELECT ixb_fill_distances(:'tag', :'t_plain', :'t_q');

SELECT ixb_fill_d10(:'tag', :'t_plain', :'t_q', :nq);
SELECT ixb_put(:'run', :'size', :n, :'dataset', :'m', 0, 'knn_recall',
			   sum(least(c, 10))::float8 / (10 * count(*)),
			   count(*) FILTER (WHERE c >= 10) || ' of ' || count(*) || ' queries with all 10')
FROM (SELECT f.qid, count(*) FILTER (WHERE f.d <= t.d10) AS c
	  FROM ixb_found f JOIN ixb_knn_d10 t USING (qid)
	  WHERE f.tag = :'tag' AND t.tag = :'tag' AND f.method = :'m'
	  GROUP BY f.qid) s;
