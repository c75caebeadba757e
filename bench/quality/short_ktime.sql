-- short_ktime.sql -- what a larger radius costs at query time.
--
-- 1M uniformly random fingerprints with a simhash index; 200 queries (stored
-- fingerprints with 2 bits flipped) per radius k = 3..16 through the index,
-- 20 through a sequential scan (no parallel workers) as the baseline of the
-- same run.  Writes CSV to :ktimefile: k, method, queries, ms per query,
-- rows per query.  Timings are wall-clock in the server (clock_timestamp
-- around each query, planning included), so they are ratios to read, not
-- absolute figures.

\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET search_path = simhash_bench, public;

DROP TABLE IF EXISTS short_kt;
CREATE TABLE short_kt (id int8, fp simhash64);
INSERT INTO short_kt
SELECT i, ((hashint8(i)::int8 << 32) | (hashint8(-i)::int8 & 4294967295))::simhash64
FROM generate_series(1, 1000000) AS i;
CREATE INDEX ON short_kt USING simhash (fp);
VACUUM ANALYZE short_kt;

CREATE TEMP TABLE short_kq AS
SELECT row_number() OVER () AS n,
	   (fp::int8 # (1::int8 << (id % 64)::int) # (1::int8 << ((id * 7 + 3) % 64)::int))::simhash64 AS q
FROM short_kt WHERE id % 5000 = 17;	-- 200 queries

CREATE TEMP TABLE short_ktime (k int, method text, queries int, ms float8, nrows float8);
DO $$
DECLARE
	q simhash64;
	m text;
	t0 timestamptz;
	cnt int8;
	total int8;
	nq int;
BEGIN
	FOR k IN 3..16 LOOP
		FOREACH m IN ARRAY ARRAY['index', 'seqscan'] LOOP
			IF m = 'seqscan' AND k NOT IN (3, 10, 16) THEN
				CONTINUE;
			END IF;
			PERFORM set_config('enable_indexscan', (m = 'index')::text, true);
			PERFORM set_config('enable_bitmapscan', (m = 'index')::text, true);
			PERFORM set_config('enable_seqscan', (m = 'seqscan')::text, true);
			nq := CASE WHEN m = 'index' THEN 200 ELSE 20 END;
			-- a warm pass, then the timed one
			FOR i IN 1..2 LOOP
				total := 0;
				t0 := clock_timestamp();
				FOR q IN SELECT kq.q FROM short_kq AS kq WHERE kq.n <= nq LOOP
					-- one-shot plans: the settings above apply, q and k are known
					EXECUTE 'SELECT count(*) FROM short_kt WHERE fp <-> $1 <= $2'
						INTO cnt USING q, k;
					total := total + cnt;
				END LOOP;
			END LOOP;
			INSERT INTO short_ktime VALUES (k, m, nq,
				extract(epoch FROM clock_timestamp() - t0) * 1000 / nq, total::float8 / nq);
		END LOOP;
	END LOOP;
END
$$;

\pset format csv
\o :ktimefile
SELECT k, method, queries, round(ms::numeric, 4) AS ms_per_query,
	   round(nrows::numeric, 2) AS rows_per_query
FROM short_ktime ORDER BY method, k;
\o
DROP TABLE short_kt;
