-- bench/planner/join_sweep.sql -- which plan the planner picks for
-- "probe JOIN t ON t.fp <-> p.fp <= 3" and how long each alternative takes,
-- over :nanalyze fresh samples of statistics per probe size.
-- Prints "n,sample,chosen,cost_chosen,cost_nestloop,cost_band,
-- rows_per_probe,ms_chosen,ms_nestloop,ms_band,ratio" lines: times are the
-- best of 2 runs, ms_chosen measured on its own; ratio is the time of the
-- alternative that is the chosen plan over the faster alternative's (both
-- measured the same way; ms_chosen when the chosen plan is neither).
-- Parallel query is off unless "workers" sets max_parallel_workers_per_gather;
-- a plan under a Gather is labelled "gather".
\set ON_ERROR_STOP on
SET client_min_messages = warning;
\if :{?workers}
SET max_parallel_workers_per_gather = :workers;
\else
SET max_parallel_workers_per_gather = 0;
\endif
SET jit = off;

-- the join of a probe set against jc_t
CREATE OR REPLACE FUNCTION jc_query(n int) RETURNS text LANGUAGE sql AS
$$SELECT format('SELECT count(*) FROM jc_probe_%s p JOIN jc_t t ON t.fp <-> p.fp <= 3', n)$$;
-- the join node under the Aggregate (and a Gather): "nestedloop" or
-- "band:<built relation>", with "par:" in front under a Gather, and its
-- cost (of one process's share, under a Gather)
CREATE OR REPLACE FUNCTION jc_plan(q text, OUT label text, OUT cost float8, OUT inner_rows float8)
LANGUAGE plpgsql AS $$
DECLARE plan json; j json; prefix text := '';
BEGIN
	EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO plan;
	j := plan -> 0 -> 'Plan' -> 'Plans' -> 0;
	WHILE j ->> 'Node Type' IN ('Gather', 'Aggregate') LOOP
		IF j ->> 'Node Type' = 'Gather' THEN
			prefix := 'par:';
		END IF;
		j := j -> 'Plans' -> 0;
	END LOOP;
	cost := (j ->> 'Total Cost')::float8;
	IF j ->> 'Node Type' = 'Custom Scan' THEN
		label := prefix || 'band:' || replace(j -> 'Plans' -> 1 ->> 'Relation Name', 'jc_', '');
	ELSE
		label := prefix || lower(replace(j ->> 'Node Type', ' ', ''));
		inner_rows := (j -> 'Plans' -> 1 ->> 'Plan Rows')::float8;
	END IF;
END $$;
-- the fastest of "runs" executions of q, in ms (server-side wall time)
CREATE OR REPLACE FUNCTION jc_run_ms(q text, runs int) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz; r record; best float8;
BEGIN
	FOR i IN 1 .. runs LOOP
		t0 := clock_timestamp();
		EXECUTE q INTO r;
		best := least(best, extract(epoch FROM clock_timestamp() - t0) * 1000);
	END LOOP;
	RETURN best;
END $$;

-- the sweep: for each probe size, "nanalyze" times a fresh sample of both
-- tables' statistics (ANALYZE draws a new random sample each time), the
-- plan chosen then, and the time of each alternative (forced with
-- simhash.enable_join and enable_nestloop)
CREATE OR REPLACE FUNCTION jc_sweep(sizes int[], nanalyze int) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE n int; q text; c record; nl record; bj record; ms_c float8; ms_nl float8; ms_bj float8;
BEGIN
	FOREACH n IN ARRAY sizes LOOP
		q := jc_query(n);
		FOR s IN 1 .. nanalyze LOOP
			ANALYZE jc_t;
			EXECUTE format('ANALYZE jc_probe_%s', n);
			PERFORM set_config('simhash.enable_join', 'off', true);
			SELECT * INTO nl FROM jc_plan(q);
			ms_nl := jc_run_ms(q, 2);
			PERFORM set_config('simhash.enable_join', 'on', true);
			PERFORM set_config('enable_nestloop', 'off', true);
			SELECT * INTO bj FROM jc_plan(q);
			ms_bj := jc_run_ms(q, 2);
			PERFORM set_config('enable_nestloop', 'on', true);
			SELECT * INTO c FROM jc_plan(q);
			ms_c := jc_run_ms(q, 2);
			RETURN NEXT format('%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s', n, s, c.label,
							   round(c.cost::numeric), round(nl.cost::numeric), round(bj.cost::numeric),
							   round(nl.inner_rows::numeric, 1), round(ms_c::numeric, 2),
							   round(ms_nl::numeric, 2), round(ms_bj::numeric, 2),
							   round((CASE c.label WHEN nl.label THEN ms_nl WHEN bj.label THEN ms_bj
									  ELSE ms_c END / least(ms_nl, ms_bj))::numeric, 2));
		END LOOP;
	END LOOP;
END $$;

\pset format unaligned
\pset tuples_only on
SELECT count(*) FROM jc_t \g /dev/null
\if :{?sizes}
\else
\set sizes '10,100,1000,10000,50000'
\endif
\if :{?nanalyze}
\else
\set nanalyze 20
\endif
SELECT 'n,sample,chosen,cost_chosen,cost_nestloop,cost_band,rows_per_probe,ms_chosen,ms_nestloop,ms_band,ratio';
SELECT jc_sweep(string_to_array(:'sizes', ',')::int[], :nanalyze);
