-- bench/index/measure.sql -- server-side latencies, recall and KNN checks of
-- one (size, dataset).
--
-- psql variables: prefix, run, size, n, dataset, full (see setup.sql), and
--   nq       queries per index method (all warmed, then all measured)
--   seqnq    queries measured for the sequential scans (each reads the table)
--   truthnq  queries whose exact answer (k = 6) is taken from the sequential
--            scan, for recall: all nq when full, else seqnq
--
-- Every method: one warm pass over its queries, then a measured pass,
-- EXPLAIN (ANALYZE, TIMING OFF) execution time per query.  The warm pass of
-- the sequential scan at k = 6 records its rows: the reference for recall at
-- k = 6 and (rows within 3) k = 3.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET synchronize_seqscans = off;

SELECT :'prefix' || '_q' AS t_q, :'prefix' || CASE WHEN :full = 1 THEN '_plain' ELSE '_simhash' END AS t_base,
	   :'size' || '/' || :'dataset' AS tag, (:full = 1) AS isfull
\gset
DELETE FROM ixb_found WHERE tag = :'tag';
DELETE FROM ixb_knn_d10 WHERE tag = :'tag';

\echo '   sequential scan (reference rows, k = 6)'
SELECT ixb_measure(:'run', :'size', :n, :'dataset', :'prefix', :'isfull', 'seq', 6, :truthnq, :seqnq, true);
\echo '   sequential scan k = 3, and with 2 workers'
SELECT ixb_measure(:'run', :'size', :n, :'dataset', :'prefix', :'isfull', 'seq', 3, 1, :seqnq, false);
SELECT ixb_measure(:'run', :'size', :n, :'dataset', :'prefix', :'isfull', 'seq_par2', 3, 1, :seqnq, false, 2);
SELECT ixb_measure(:'run', :'size', :n, :'dataset', :'prefix', :'isfull', 'seq_par2', 6, 1, :seqnq, false, 2);

\echo '   simhash'
SELECT ixb_measure(:'run', :'size', :n, :'dataset', :'prefix', :'isfull', 'simhash', 3, :nq, :nq, true);
SELECT ixb_measure(:'run', :'size', :n, :'dataset', :'prefix', :'isfull', 'simhash', 6, :nq, :nq, true);
SELECT ixb_measure(:'run', :'size', :n, :'dataset', :'prefix', :'isfull', 'simhash_dist', 3, :nq, :nq, true);
SELECT ixb_measure(:'run', :'size', :n, :'dataset', :'prefix', :'isfull', 'simhash_dist', 6, :nq, :nq, true);

\if :full
\echo '   btree4, gin4 (and their exact multi-probe forms at k = 6)'
SELECT ixb_measure(:'run', :'size', :n, :'dataset', :'prefix', :'isfull', 'btree4', 3, :nq, :nq, true);
SELECT ixb_measure(:'run', :'size', :n, :'dataset', :'prefix', :'isfull', 'btree4', 6, :nq, :nq, true);
SELECT ixb_measure(:'run', :'size', :n, :'dataset', :'prefix', :'isfull', 'btree4_mp', 6, :nq, :nq, true);
SELECT ixb_measure(:'run', :'size', :n, :'dataset', :'prefix', :'isfull', 'gin4', 3, :nq, :nq, true);
SELECT ixb_measure(:'run', :'size', :n, :'dataset', :'prefix', :'isfull', 'gin4', 6, :nq, :nq, true);
SELECT ixb_measure(:'run', :'size', :n, :'dataset', :'prefix', :'isfull', 'gin4_mp', 6, :nq, :nq, true);
\endif

\echo '   nearest neighbours (LIMIT 10)'
SELECT ixb_measure(:'run', :'size', :n, :'dataset', :'prefix', :'isfull', 'knn_simhash', 0, :nq, :nq, true);
SELECT ixb_measure(:'run', :'size', :n, :'dataset', :'prefix', :'isfull', 'knn_seqsort', 0, :seqnq, :seqnq, true);
SELECT ixb_measure(:'run', :'size', :n, :'dataset', :'prefix', :'isfull', 'knn_seqsort_par2', 0, 1, :seqnq, false, 2);
\echo '   nearest neighbours with a tie-break (ORDER BY distance, id LIMIT 10)'
SELECT ixb_measure(:'run', :'size', :n, :'dataset', :'prefix', :'isfull', 'knn_simhash_tie', 0, :nq, :nq, true);
SELECT ixb_measure(:'run', :'size', :n, :'dataset', :'prefix', :'isfull', 'knn_seqsort_tie', 0, :seqnq, :seqnq, true);
-- the two nearest-neighbour scans again, in lagged pairs: their ratio under
-- the same load, each query cold for both (functions.sql, ixb_pair)
SELECT ixb_pair(:'run', :'size', :n, :'dataset', :'prefix', :'isfull', 'knn_simhash_tie', 'knn_simhash', :nq);

\echo '   recall'
SELECT ixb_fill_distances(:'tag', :'t_base', :'t_q');
SELECT ixb_recall(:'run', :'size', :n, :'dataset', m, k)
FROM (VALUES ('simhash', 3), ('simhash', 6), ('simhash_dist', 3), ('simhash_dist', 6),
			 ('btree4', 3), ('btree4', 6), ('btree4_mp', 6),
			 ('gin4', 3), ('gin4', 6), ('gin4_mp', 6)) v(m, k)
WHERE :full = 1 OR m LIKE 'simhash%';
SELECT ixb_knn_check(:'run', :'size', :n, :'dataset', 'knn_simhash', 'knn_seqsort');
SELECT ixb_knn_check(:'run', :'size', :n, :'dataset', 'knn_simhash_tie', 'knn_seqsort_tie', true);
-- radius of the 10th neighbour (how far a KNN scan must look)
SELECT ixb_put(:'run', :'size', :n, :'dataset', 'knn_seqsort', NULL, 'knn_d10_p50',
			   percentile_cont(0.5) WITHIN GROUP (ORDER BY d10))
FROM (SELECT qid, max(d) AS d10 FROM ixb_found WHERE tag = :'tag' AND method = 'knn_seqsort'
	  GROUP BY qid) s;
SELECT ixb_put(:'run', :'size', :n, :'dataset', 'seq', r, 'rows_per_query_p50',
			   percentile_cont(0.5) WITHIN GROUP (ORDER BY c))
FROM (SELECT kk.r, f.qid, count(*) FILTER (WHERE f.d <= kk.r) AS c
	  FROM ixb_found f, (VALUES (3), (6)) kk(r)
	  WHERE f.tag = :'tag' AND f.method = 'seq' GROUP BY kk.r, f.qid) s
GROUP BY r;

\echo '   generic plans (pgbench -M prepared)'
SELECT ixb_generic_plan(:'run', :'size', :n, :'dataset', :'prefix', :'isfull', m, k, w)
FROM (VALUES ('seq', 3, 0), ('seq_par2', 3, 2), ('simhash', 3, 0), ('simhash', 6, 0),
			 ('simhash_dist', 3, 0), ('btree4', 3, 0), ('btree4', 6, 0), ('btree4_mp', 6, 0),
			 ('gin4', 3, 0), ('gin4', 6, 0), ('gin4_mp', 6, 0), ('knn_simhash', 0, 0),
			 ('knn_seqsort', 0, 0), ('knn_simhash_tie', 0, 0)) v(m, k, w)
WHERE :full = 1 OR m LIKE 'simhash%' OR m LIKE 'seq%' OR m LIKE 'knn%';
