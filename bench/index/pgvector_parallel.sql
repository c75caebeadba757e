-- bench/index/pgvector_parallel.sql -- pgvector's HNSW build again on the
-- table pgvector.sql made (<prefix>_hnsw), with max_parallel_maintenance_
-- workers = workers (the leader builds too), to compare with the serial
-- build of the same rows.  Recorded as method hnsw_par<workers>: build_ms,
-- size_bytes; the index is dropped afterwards.  psql variables: prefix, run,
-- size, n, dataset, workers, mwm (maintenance_work_mem: a parallel build
-- keeps the graph in shared memory of that size).
\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET maintenance_work_mem = :'mwm';
SET max_parallel_maintenance_workers = :workers;

SELECT :'prefix' || '_hnsw' AS t_hnsw, :'prefix' || '_hnsw_par' AS i_par,
	   'hnsw_par' || :'workers' AS m
\gset

DROP INDEX IF EXISTS :i_par;
CHECKPOINT;
SELECT clock_timestamp() AS t0 \gset
SET client_min_messages = notice;
CREATE INDEX :i_par ON :t_hnsw USING hnsw (code bit_hamming_ops);
SET client_min_messages = warning;
SELECT ixb_put(:'run', :'size', :n, :'dataset', :'m', NULL, 'build_ms',
			   extract(epoch FROM clock_timestamp() - :'t0'::timestamptz) * 1000,
			   'maintenance_work_mem ' || current_setting('maintenance_work_mem')
			   || ', max_parallel_maintenance_workers ' || :workers);
SELECT ixb_put(:'run', :'size', :n, :'dataset', :'m', NULL, 'size_bytes',
			   pg_relation_size(:'i_par'));
DROP INDEX :i_par;
