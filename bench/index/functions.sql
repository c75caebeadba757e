-- bench/index/functions.sql -- result tables and server-side helpers of the
-- index benchmark.  Idempotent; everything is named ixb_*.
--
--   ixb_results   one row per measurement (kept across runs; exported to CSV)
--   ixb_found     rows returned per (method, k, query): recall and KNN checks
--   ixb_sql()     a query template with $Q (the query fingerprint as a
--                 bigint expression) and $K (the radius) filled in
--   ixb_server()  warm pass (optionally recording the returned ids), then a
--                 measured pass: EXPLAIN (ANALYZE, TIMING OFF) execution time
--                 of every query, p50/p95/mean stored in ixb_results, and the
--                 plan shape
--   ixb_recall()  recall and extra rows of a method against the sequential
--                 scan's rows
\set ON_ERROR_STOP on
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;

CREATE TABLE IF NOT EXISTS ixb_results (
	run		text NOT NULL,		-- run id (UTC timestamp of run.sh)
	size	text NOT NULL,		-- 1M, 10M, 100M
	n		bigint,				-- rows in the table
	dataset	text NOT NULL,		-- uniform, clustered
	method	text NOT NULL,
	k		int,				-- radius, or NULL
	metric	text NOT NULL,
	value	float8,
	info	text,
	at		timestamptz DEFAULT clock_timestamp()
);

CREATE UNLOGGED TABLE IF NOT EXISTS ixb_found (
	tag		text NOT NULL,		-- size/dataset
	method	text NOT NULL,
	k		int NOT NULL,
	qid		int NOT NULL,
	id		bigint NOT NULL,
	d		int					-- exact distance, filled by ixb_fill_distances
);
CREATE INDEX IF NOT EXISTS ixb_found_key ON ixb_found (tag, method, k, qid);

-- Exact distance of every query's 10th nearest row (a sequential sort), kept
-- per size/dataset so that the nearest-neighbour recalls of pgvector.sql and
-- every pgvector_ef.sql reuse one sort of the table per query.
CREATE UNLOGGED TABLE IF NOT EXISTS ixb_knn_d10 (
	tag		text NOT NULL,		-- size/dataset
	qid		int NOT NULL,
	d10		int NOT NULL,
	PRIMARY KEY (tag, qid)
);

-- Record one measurement of the current run (psql variables are passed in).
CREATE OR REPLACE FUNCTION ixb_put(p_run text, p_size text, p_n bigint, p_dataset text,
	p_method text, p_k int, p_metric text, p_value float8, p_info text DEFAULT NULL)
RETURNS void LANGUAGE sql AS $$
	INSERT INTO ixb_results (run, size, n, dataset, method, k, metric, value, info)
	VALUES (p_run, p_size, p_n, p_dataset, p_method, p_k, p_metric, p_value, p_info);
$$;

-- The 16-bit block of band b (0 = most significant) of a fingerprint.
CREATE OR REPLACE FUNCTION ixb_block(fp bigint, b int) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
	SELECT (fp >> (48 - 16 * b)) & 65535
$$;

-- The 17 values within one bit of band b's block of q (exact multi-probe of
-- the four btrees for k <= 7: some block is within floor(k/4) = 1 bit).
CREATE OR REPLACE FUNCTION ixb_block_variants(q bigint, b int) RETURNS bigint[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
	SELECT array_agg(ixb_block(q, b) # CASE WHEN i < 0 THEN 0 ELSE 1::int8 << i END ORDER BY i)
	FROM generate_series(-1, 15) i
$$;

-- The same for the band-tagged GIN array: 4 x 17 tags.
CREATE OR REPLACE FUNCTION ixb_gin_variants(q bigint) RETURNS int4[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
	SELECT array_agg((b * 65536 + v)::int4 ORDER BY b, v)
	FROM generate_series(0, 3) b, unnest(ixb_block_variants(q, b)) v
$$;

-- Fill a template: $T table, $Q the query fingerprint as a bigint expression,
-- $K the radius.
CREATE OR REPLACE FUNCTION ixb_sql(template text, tbl text, q bigint, k int) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT replace(replace(replace(template, '$T', tbl), '$Q', '(' || q || ')::bigint'),
				   '$K', coalesce(k, 0)::text)
$$;

-- Shape of a plan: node types (and index names), depth first.
CREATE OR REPLACE FUNCTION ixb_plan_shape(p jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
	s text := p ->> 'Node Type';
	kids text := '';
	c jsonb;
BEGIN
	IF p ? 'Index Name' THEN
		s := s || ' ' || (p ->> 'Index Name');
	END IF;
	IF (p ->> 'Workers Planned') IS NOT NULL THEN
		s := s || ' w=' || (p ->> 'Workers Planned');
	END IF;
	IF p ? 'Plans' THEN
		FOR c IN SELECT jsonb_array_elements(p -> 'Plans') LOOP
			kids := kids || CASE WHEN kids = '' THEN '' ELSE ', ' END || ixb_plan_shape(c);
		END LOOP;
		s := s || '(' || kids || ')';
	END IF;
	RETURN s;
END $$;

-- Parallel workers for the rest of the transaction.  With workers, parallel
-- setup and tuple costs are zeroed: the planner estimates "bit_count(...) <= k"
-- at 1/3 of the table, so it would never gather a selective scan otherwise
-- (run.sh passes the same settings to pgbench).
CREATE OR REPLACE FUNCTION ixb_set_workers(p_workers int) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM set_config('max_parallel_workers_per_gather', p_workers::text, true);
	IF p_workers > 0 THEN
		PERFORM set_config('parallel_setup_cost', '0', true);
		PERFORM set_config('parallel_tuple_cost', '0', true);
	END IF;
END $$;

-- Measure one method at one radius, server-side.
--	 p_tag		size/dataset, the key of ixb_found
--	 p_nwarm	queries run once before measuring (their ids recorded in
--				ixb_found when p_capture)
--	 p_nmeas	queries measured with EXPLAIN (ANALYZE, TIMING OFF)
--	 p_workers	max_parallel_workers_per_gather during the calls
-- Stores srv_p50_ms, srv_p95_ms, srv_mean_ms, srv_nq, srv_plan_p50_ms
-- (planning time, not part of the execution time) and the plan shapes
-- (metric "plan": value = number of distinct shapes over the measured
-- queries, info = each shape with its count).
CREATE OR REPLACE FUNCTION ixb_server(p_run text, p_size text, p_n bigint, p_dataset text,
	p_method text, p_k int, p_tbl text, p_qtbl text, p_template text,
	p_nwarm int, p_nmeas int, p_capture bool, p_workers int DEFAULT 0)
RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
	v_tag text := p_size || '/' || p_dataset;
	r record;
	sql text;
	plan jsonb;
	ms float8[] := '{}';
	plan_ms float8[] := '{}';
	shapes text[] := '{}';
	p50 float8;
BEGIN
	PERFORM ixb_set_workers(p_workers);
	IF p_capture THEN
		DELETE FROM ixb_found WHERE ixb_found.tag = v_tag AND method = p_method AND k = p_k;
	END IF;
	FOR r IN EXECUTE format('SELECT qid, q FROM %I WHERE qid <= $1 ORDER BY qid', p_qtbl)
			 USING p_nwarm LOOP
		sql := ixb_sql(p_template, p_tbl, r.q, p_k);
		IF p_capture THEN
			EXECUTE format('INSERT INTO ixb_found (tag, method, k, qid, id) SELECT %L, %L, %s, %s, s.id FROM (%s) s',
						   v_tag, p_method, p_k, r.qid, sql);
		ELSE
			EXECUTE 'SELECT count(*) FROM (' || sql || ') s';
		END IF;
	END LOOP;
	FOR r IN EXECUTE format('SELECT qid, q FROM %I WHERE qid <= $1 ORDER BY qid', p_qtbl)
			 USING p_nmeas LOOP
		sql := ixb_sql(p_template, p_tbl, r.q, p_k);
		EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ' || sql INTO plan;
		ms := ms || (plan -> 0 ->> 'Execution Time')::float8;
		plan_ms := plan_ms || (plan -> 0 ->> 'Planning Time')::float8;
		shapes := shapes || ixb_plan_shape(plan -> 0 -> 'Plan');
	END LOOP;
	SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) INTO p50 FROM unnest(ms) x;
	PERFORM ixb_put(p_run, p_size, p_n, p_dataset, p_method, p_k, 'srv_p50_ms', p50);
	PERFORM ixb_put(p_run, p_size, p_n, p_dataset, p_method, p_k, 'srv_p95_ms',
					(SELECT percentile_cont(0.95) WITHIN GROUP (ORDER BY x) FROM unnest(ms) x));
	PERFORM ixb_put(p_run, p_size, p_n, p_dataset, p_method, p_k, 'srv_mean_ms',
					(SELECT avg(x) FROM unnest(ms) x));
	PERFORM ixb_put(p_run, p_size, p_n, p_dataset, p_method, p_k, 'srv_nq', cardinality(ms));
	-- planning is not in the execution time; a custom plan pays it every time
	PERFORM ixb_put(p_run, p_size, p_n, p_dataset, p_method, p_k, 'srv_plan_p50_ms',
					(SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(plan_ms) x));
	-- every distinct plan shape, the most frequent first, with its count
	PERFORM ixb_put(p_run, p_size, p_n, p_dataset, p_method, p_k, 'plan',
					(SELECT count(DISTINCT x) FROM unnest(shapes) x),
					(SELECT string_agg(x || ' [' || c || 'x]', ' | ' ORDER BY c DESC, x)
					 FROM (SELECT x, count(*) c FROM unnest(shapes) x GROUP BY x) s));
	RETURN p50;
END $$;

-- Exact distance of every recorded row to its query.
CREATE OR REPLACE FUNCTION ixb_fill_distances(p_tag text, p_tbl text, p_qtbl text)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format($f$
		UPDATE ixb_found f SET d = bit_count((t.fp::bigint # q.q)::bit(64))
		FROM %I t, %I q
		WHERE f.tag = %L AND f.d IS NULL AND t.id = f.id AND q.qid = f.qid$f$,
		p_tbl, p_qtbl, p_tag);
END $$;

-- The exact 10th-neighbour distance of queries 1..p_nq (a sequential sort of
-- p_tbl per query), for those of p_tag not yet in ixb_knn_d10.
CREATE OR REPLACE FUNCTION ixb_fill_d10(p_tag text, p_tbl text, p_qtbl text, p_nq int)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format($f$
		INSERT INTO ixb_knn_d10 (tag, qid, d10)
		SELECT %L, q.qid,
			   (SELECT max(d) FROM (SELECT bit_count((t.fp::bigint # q.q)::bit(64)) AS d
									FROM %I t ORDER BY 1 LIMIT 10) s)
		FROM %I q
		WHERE q.qid <= %s
		  AND NOT EXISTS (SELECT 1 FROM ixb_knn_d10 x WHERE x.tag = %L AND x.qid = q.qid)$f$,
		p_tag, p_tbl, p_qtbl, p_nq, p_tag);
END $$;

-- Recall of a method against the sequential scan (method 'seq', captured at
-- the largest radius) on the queries the sequential scan answered.
CREATE OR REPLACE FUNCTION ixb_recall(p_run text, p_size text, p_n bigint, p_dataset text,
	p_method text, p_k int)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	v_tag text := p_size || '/' || p_dataset;
	truth_rows bigint;
	hits bigint;
	got bigint;
	exact_q bigint;
	nq bigint;
BEGIN
	CREATE TEMP TABLE IF NOT EXISTS ixb_truth (qid int, id bigint);
	TRUNCATE ixb_truth;
	INSERT INTO ixb_truth
	SELECT qid, id FROM ixb_found f
	WHERE f.tag = v_tag AND method = 'seq'
	  AND k = (SELECT max(k) FROM ixb_found g WHERE g.tag = v_tag AND g.method = 'seq')
	  AND d <= p_k;
	SELECT count(DISTINCT qid) INTO nq FROM ixb_found f
	WHERE f.tag = v_tag AND method = 'seq';
	SELECT count(*) INTO truth_rows FROM ixb_truth;
	SELECT count(*) INTO got FROM ixb_found f
	WHERE f.tag = v_tag AND method = p_method AND k = p_k
	  AND qid IN (SELECT qid FROM ixb_found g WHERE g.tag = v_tag AND g.method = 'seq');
	SELECT count(*) INTO hits FROM ixb_found f JOIN ixb_truth t USING (qid, id)
	WHERE f.tag = v_tag AND method = p_method AND k = p_k;
	-- queries whose answer is exactly the sequential scan's
	SELECT count(*) INTO exact_q FROM (
		SELECT qid FROM (SELECT DISTINCT qid FROM ixb_found f
						 WHERE f.tag = v_tag AND method = 'seq') qs
		WHERE NOT EXISTS (
			(SELECT id FROM ixb_truth t WHERE t.qid = qs.qid
			 EXCEPT ALL
			 SELECT id FROM ixb_found f WHERE f.tag = v_tag AND method = p_method AND k = p_k
			   AND f.qid = qs.qid)
			UNION ALL
			(SELECT id FROM ixb_found f WHERE f.tag = v_tag AND method = p_method AND k = p_k
			   AND f.qid = qs.qid
			 EXCEPT ALL
			 SELECT id FROM ixb_truth t WHERE t.qid = qs.qid))) e;
	PERFORM ixb_put(p_run, p_size, p_n, p_dataset, p_method, p_k, 'truth_rows', truth_rows);
	PERFORM ixb_put(p_run, p_size, p_n, p_dataset, p_method, p_k, 'found_rows', got);
	PERFORM ixb_put(p_run, p_size, p_n, p_dataset, p_method, p_k, 'recall',
					CASE WHEN truth_rows = 0 THEN 1 ELSE hits::float8 / truth_rows END);
	PERFORM ixb_put(p_run, p_size, p_n, p_dataset, p_method, p_k, 'extra_rows', got - hits);
	PERFORM ixb_put(p_run, p_size, p_n, p_dataset, p_method, p_k, 'exact_queries', exact_q,
					exact_q || ' of ' || nq);
END $$;

-- KNN check: queries whose sorted top-n distances equal the sequential
-- sort's (ties may pick different rows, never different distances); with
-- p_rows, queries whose rows are the sort's (with a tie-break, "ORDER BY
-- distance, id", the top n are determined).
DROP FUNCTION IF EXISTS ixb_knn_check(text, text, bigint, text, text, text);
CREATE OR REPLACE FUNCTION ixb_knn_check(p_run text, p_size text, p_n bigint, p_dataset text,
	p_method text, p_ref text, p_rows bool DEFAULT false)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	v_tag text := p_size || '/' || p_dataset;
	same bigint;
	nq bigint;
BEGIN
	WITH f AS (SELECT qid, method, CASE WHEN p_rows THEN id ELSE d END AS v FROM ixb_found f
			   WHERE f.tag = v_tag AND method IN (p_method, p_ref)),
		 a AS (SELECT qid, array_agg(v ORDER BY v) ds FROM f WHERE method = p_method GROUP BY qid),
		 b AS (SELECT qid, array_agg(v ORDER BY v) ds FROM f WHERE method = p_ref GROUP BY qid)
	SELECT count(*) FILTER (WHERE a.ds = b.ds), count(*) INTO same, nq
	FROM b LEFT JOIN a USING (qid);
	PERFORM ixb_put(p_run, p_size, p_n, p_dataset, p_method, NULL,
					CASE WHEN p_rows THEN 'knn_same_rows' ELSE 'knn_same_distances' END, same,
					same || ' of ' || nq);
END $$;

-- Two methods' server-side latency measured in lagged pairs.  One stream
-- alternates the two methods, step j running p_method on query j and p_ref
-- on query j + nq/2 (which goes first alternates), so that:
--   * load from outside the benchmark weighs on both methods alike (they
--     interleave, query by query);
--   * every run finds its query's pages as a workload of independent
--     queries would: some nq other queries ran since the other method read
--     them.  Running the two back to back instead lets the second reuse
--     the first's cache lines, and the median of such ratios falls between
--     two modes (first cold, second warm; and the reverse): on clustered
--     data it came out anywhere between 1.6x and 2.1x with the order of
--     the runs (TIEBREAK.md).
-- Stores, for p_method, paired_p50_ms (and p_ref's), and paired_ratio_p50:
-- the median over queries of p_method's time / p_ref's.
CREATE OR REPLACE FUNCTION ixb_pair(p_run text, p_size text, p_n bigint, p_dataset text,
	p_prefix text, p_full bool, p_method text, p_ref text, p_nq int)
RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
	qs bigint[];
	n int;
	sql_a text;
	sql_b text;
	plan jsonb;
	ms_a float8[];
	ms_b float8[];
	ratios float8[] := '{}';
	p50 float8;
BEGIN
	EXECUTE format('SELECT array_agg(q ORDER BY qid) FROM %I WHERE qid <= $1', p_prefix || '_q')
		INTO qs USING p_nq;
	n := cardinality(qs);
	ms_a := array_fill(NULL::float8, ARRAY[n]);
	ms_b := array_fill(NULL::float8, ARRAY[n]);
	FOR j IN 1 .. n LOOP
		DECLARE
			ja int := j;
			jb int := (j - 1 + n / 2) % n + 1;
		BEGIN
			sql_a := ixb_sql((SELECT template FROM ixb_templates WHERE method = p_method),
							 ixb_table(p_prefix, p_method, p_full), qs[ja], 0);
			sql_b := ixb_sql((SELECT template FROM ixb_templates WHERE method = p_ref),
							 ixb_table(p_prefix, p_ref, p_full), qs[jb], 0);
			FOR i IN 0 .. 1 LOOP
				IF (j + i) % 2 = 0 THEN
					EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ' || sql_a INTO plan;
					ms_a[ja] := (plan -> 0 ->> 'Execution Time')::float8;
				ELSE
					EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ' || sql_b INTO plan;
					ms_b[jb] := (plan -> 0 ->> 'Execution Time')::float8;
				END IF;
			END LOOP;
		END;
	END LOOP;
	FOR j IN 1 .. n LOOP
		ratios := ratios || (ms_a[j] / greatest(ms_b[j], 0.001));
	END LOOP;
	SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) INTO p50 FROM unnest(ratios) x;
	PERFORM ixb_put(p_run, p_size, p_n, p_dataset, p_method, 0, 'paired_p50_ms',
					(SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(ms_a) x));
	PERFORM ixb_put(p_run, p_size, p_n, p_dataset, p_ref, 0, 'paired_p50_ms',
					(SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(ms_b) x));
	PERFORM ixb_put(p_run, p_size, p_n, p_dataset, p_method, 0, 'paired_ratio_p50', p50,
					'vs ' || p_ref || ', ' || cardinality(ratios) || ' queries, lagged pairs');
	RETURN p50;
END $$;

-- The queries of every method: $T table, $Q query fingerprint (bigint
-- expression), $K radius.  run.sh turns the same text into pgbench scripts
-- (where $Q becomes a prepared-statement parameter).
CREATE TABLE IF NOT EXISTS ixb_templates (method text PRIMARY KEY, tbl text, template text);
TRUNCATE ixb_templates;
INSERT INTO ixb_templates VALUES
('seq', 'plain', 'SELECT id FROM $T WHERE bit_count((fp::bigint # $Q)::bit(64)) <= $K'),
('seq_par2', 'plain', 'SELECT id FROM $T WHERE bit_count((fp::bigint # $Q)::bit(64)) <= $K'),
('btree4', 'btree4', 'SELECT id FROM $T WHERE (((fp::bigint >> 48) & 65535) = (($Q >> 48) & 65535) OR ((fp::bigint >> 32) & 65535) = (($Q >> 32) & 65535) OR ((fp::bigint >> 16) & 65535) = (($Q >> 16) & 65535) OR (fp::bigint & 65535) = ($Q & 65535)) AND bit_count((fp::bigint # $Q)::bit(64)) <= $K'),
('btree4_mp', 'btree4', 'SELECT id FROM $T WHERE (((fp::bigint >> 48) & 65535) = ANY (ixb_block_variants($Q, 0)) OR ((fp::bigint >> 32) & 65535) = ANY (ixb_block_variants($Q, 1)) OR ((fp::bigint >> 16) & 65535) = ANY (ixb_block_variants($Q, 2)) OR (fp::bigint & 65535) = ANY (ixb_block_variants($Q, 3))) AND bit_count((fp::bigint # $Q)::bit(64)) <= $K'),
('gin4', 'gin4', 'SELECT id FROM $T WHERE ARRAY[(((fp::bigint >> 48) & 65535))::int4, (65536 + ((fp::bigint >> 32) & 65535))::int4, (131072 + ((fp::bigint >> 16) & 65535))::int4, (196608 + (fp::bigint & 65535))::int4] && ARRAY[((($Q >> 48) & 65535))::int4, (65536 + (($Q >> 32) & 65535))::int4, (131072 + (($Q >> 16) & 65535))::int4, (196608 + ($Q & 65535))::int4] AND bit_count((fp::bigint # $Q)::bit(64)) <= $K'),
('gin4_mp', 'gin4', 'SELECT id FROM $T WHERE ARRAY[(((fp::bigint >> 48) & 65535))::int4, (65536 + ((fp::bigint >> 32) & 65535))::int4, (131072 + ((fp::bigint >> 16) & 65535))::int4, (196608 + (fp::bigint & 65535))::int4] && ixb_gin_variants($Q) AND bit_count((fp::bigint # $Q)::bit(64)) <= $K'),
('simhash', 'simhash', 'SELECT id FROM $T WHERE fp <@ simhash_ball($Q::simhash64, $K)'),
('simhash_dist', 'simhash', 'SELECT id FROM $T WHERE fp <-> $Q::simhash64 <= $K'),
('knn_simhash', 'simhash', 'SELECT id FROM $T ORDER BY fp <-> $Q::simhash64 LIMIT 10'),
('knn_seqsort', 'plain', 'SELECT id FROM $T ORDER BY bit_count((fp::bigint # $Q)::bit(64)) LIMIT 10'),
('knn_seqsort_par2', 'plain', 'SELECT id FROM $T ORDER BY bit_count((fp::bigint # $Q)::bit(64)) LIMIT 10'),
('knn_simhash_tie', 'simhash', 'SELECT id FROM $T ORDER BY fp <-> $Q::simhash64, id LIMIT 10'),
('knn_seqsort_tie', 'plain', 'SELECT id FROM $T ORDER BY bit_count((fp::bigint # $Q)::bit(64)), id LIMIT 10');

-- The table a method reads in a (size, dataset): <prefix>_<tbl>, except in
-- the 100M run (only <prefix>_simhash exists; the sequential scans read it).
CREATE OR REPLACE FUNCTION ixb_table(p_prefix text, p_method text, p_full bool) RETURNS text
LANGUAGE sql STABLE AS $$
	SELECT p_prefix || '_' || CASE WHEN p_full THEN tbl ELSE 'simhash' END
	FROM ixb_templates WHERE method = p_method
$$;

-- Server-side measurement of a method by name (template from ixb_templates).
CREATE OR REPLACE FUNCTION ixb_measure(p_run text, p_size text, p_n bigint, p_dataset text,
	p_prefix text, p_full bool, p_method text, p_k int, p_nwarm int, p_nmeas int,
	p_capture bool, p_workers int DEFAULT 0)
RETURNS float8 LANGUAGE sql AS $$
	SELECT ixb_server(p_run, p_size, p_n, p_dataset, p_method, p_k,
					  ixb_table(p_prefix, p_method, p_full), p_prefix || '_q',
					  (SELECT template FROM ixb_templates WHERE method = p_method),
					  p_nwarm, p_nmeas, p_capture, p_workers)
$$;

-- Plan shape of the prepared statement that pgbench -M prepared runs, as a
-- generic plan (what the plan cache uses after five executions when the
-- generic plan is not costlier than the custom ones).
CREATE OR REPLACE FUNCTION ixb_generic_plan(p_run text, p_size text, p_n bigint, p_dataset text,
	p_prefix text, p_full bool, p_method text, p_k int, p_workers int DEFAULT 0)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	sql text;
	plan jsonb;
	q bigint;
	shape text;
BEGIN
	PERFORM ixb_set_workers(p_workers);
	PERFORM set_config('plan_cache_mode', 'force_generic_plan', true);
	SELECT replace(replace(replace(template, '$T', ixb_table(p_prefix, p_method, p_full)),
						   '$Q', '($1)::bigint'), '$K', coalesce(p_k, 0)::text)
	INTO sql FROM ixb_templates WHERE method = p_method;
	EXECUTE format('SELECT q FROM %I WHERE qid = 1', p_prefix || '_q') INTO q;
	EXECUTE 'PREPARE ixb_generic(bigint) AS ' || sql;
	EXECUTE format('EXPLAIN (FORMAT JSON) EXECUTE ixb_generic(%s)', q) INTO plan;
	DEALLOCATE ixb_generic;
	shape := ixb_plan_shape(plan -> 0 -> 'Plan');
	PERFORM ixb_put(p_run, p_size, p_n, p_dataset, p_method, p_k, 'generic_plan', NULL, shape);
	RETURN shape;
END $$;
