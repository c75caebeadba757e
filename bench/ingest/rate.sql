-- bench/ingest/rate.sql -- how near-duplicate the rows are (k = 3), before
-- anything is measured: the rates the measurements run into.
--
-- psql variables: run, n.  Records, under variant "data":
--   paragraphs, base_bytes_avg, arrival_bytes_avg
--   base_rows_with_near         base rows with another base row within k
--   arrivals_<kind>             arriving rows of each kind
--   arrivals_near_base_<kind>   ... of which within k of a base row
--   arrivals_near_base          all kinds
--   arrivals_near_stream        arriving rows within k of a base row or of
--                               an arriving row with a smaller id: what a
--                               COPY (in id order) through the trigger in
--                               link mode must link, exactly
--   edit_distance_p50_<kind>    median distance of an edited copy to its source
\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET work_mem = '256MB';

CREATE INDEX IF NOT EXISTS ing_base_fp ON ing_base USING simhash (fp);
CREATE INDEX IF NOT EXISTS ing_arrivals_fp ON ing_arrivals USING simhash (fp);
ANALYZE ing_base;
ANALYZE ing_arrivals;

SELECT ing_put(:'run', :n, 'data', NULL, 'paragraphs', count(*)) FROM ing_paras;
SELECT ing_put(:'run', :n, 'data', NULL, 'base_bytes_avg', avg(octet_length(body))) FROM ing_base;
SELECT ing_put(:'run', :n, 'data', NULL, 'arrival_bytes_avg', avg(octet_length(body))) FROM ing_arrivals;
SELECT ing_put(:'run', :n, 'data', NULL, 'base_rows_with_near', count(*))
FROM ing_base a WHERE EXISTS (SELECT 1 FROM ing_base b WHERE b.fp <-> a.fp <= 3 AND b.id <> a.id);

CREATE TEMP TABLE ing_near AS
SELECT a.id, a.kind,
	   EXISTS (SELECT 1 FROM ing_base b WHERE b.fp <-> a.fp <= 3) AS near_base,
	   EXISTS (SELECT 1 FROM ing_arrivals e WHERE e.fp <-> a.fp <= 3 AND e.id < a.id) AS near_earlier
FROM ing_arrivals a;

SELECT ing_put(:'run', :n, 'data', NULL, 'arrivals_' || kind, count(*)),
	   ing_put(:'run', :n, 'data', NULL, 'arrivals_near_base_' || kind, count(*) FILTER (WHERE near_base))
FROM ing_near GROUP BY kind;
SELECT ing_put(:'run', :n, 'data', NULL, 'arrivals_near_base', count(*) FILTER (WHERE near_base)),
	   ing_put(:'run', :n, 'data', NULL, 'arrivals_near_stream', count(*) FILTER (WHERE near_base OR near_earlier))
FROM ing_near;
SELECT ing_put(:'run', :n, 'data', NULL, 'edit_distance_p50_' || a.kind,
			   percentile_cont(0.5) WITHIN GROUP (ORDER BY a.fp <-> b.fp))
FROM ing_arrivals a JOIN ing_base b ON b.id = a.src GROUP BY a.kind;
