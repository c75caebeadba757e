-- bench/planner/join_summary.sql -- one line per probe size of the sweep
-- in :csv (join_sweep.sql's output): how often each plan was chosen, the
-- cost ranges, the median times and the worst ratio.
\set ON_ERROR_STOP on
CREATE TEMP TABLE jc_sweep_result (n int, sample int, chosen text, cost_chosen float8,
	cost_nestloop float8, cost_band float8, rows_per_probe float8, ms_chosen float8,
	ms_nestloop float8, ms_band float8, ratio float8);
\set copy '\\copy jc_sweep_result FROM ' :'csv' ' WITH (FORMAT csv, HEADER true)'
:copy
\pset format unaligned
\pset fieldsep ' | '
\pset footer off
SELECT '| probe rows', 'chosen (of ' || max(sample) || ')' AS chosen,
	   'nested loop cost' AS nl_cost, 'band join cost', 'rows per probe',
	   'nested loop ms (median)', 'band join ms (median)', 'chosen ms (median)',
	   'worst ratio |'
FROM jc_sweep_result
UNION ALL
SELECT '|---', '---', '---', '---', '---', '---', '---', '---', '---|'
UNION ALL
SELECT * FROM (
	SELECT '| ' || n,
		   (SELECT string_agg(c || ' ' || k, ', ' ORDER BY k DESC)
			FROM (SELECT chosen AS c, count(*) AS k FROM jc_sweep_result r2
				  WHERE r2.n = r.n GROUP BY chosen) x),
		   round(min(cost_nestloop)) || '-' || round(max(cost_nestloop)),
		   round(min(cost_band)) || '-' || round(max(cost_band)),
		   min(rows_per_probe) || '-' || max(rows_per_probe),
		   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms_nestloop)::numeric, 1)::text,
		   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms_band)::numeric, 1)::text,
		   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms_chosen)::numeric, 1)::text,
		   max(ratio) || ' |'
	FROM jc_sweep_result r GROUP BY n ORDER BY n) s;
