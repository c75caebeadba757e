-- bench/index/radius_report.sql -- the tables of radius.sql's rounds (ts_r):
-- per build and form, the median over rounds of the mean ms per query, rows
-- per query, and the medians of the per-round ratios to the btree query
-- and to the one-stage k = 3 query of the same session; then each form's
-- time in build "new" over build "old" (median of ratios of rounds paired
-- by number).  Once with wall-clock time (ms), once with CPU time (cpu_ms).

\set ON_ERROR_STOP on
SELECT label, form, count(*) AS rounds,
	   round((percentile_cont(0.5) WITHIN GROUP (ORDER BY ms / nq))::numeric, 3) AS ms_per_query,
	   round(min(rows_found)::numeric / min(nq), 2) AS rows_per_query,
	   round((percentile_cont(0.5) WITHIN GROUP (ORDER BY ms / (SELECT b.ms FROM ts_r b
			WHERE b.label = a.label AND b.round = a.round AND b.form = 'btree')))::numeric, 2) AS over_btree,
	   round((percentile_cont(0.5) WITHIN GROUP (ORDER BY ms / (SELECT b.ms FROM ts_r b
			WHERE b.label = a.label AND b.round = a.round AND b.form = 'one k=3')))::numeric, 2) AS over_one_k3
FROM ts_r a GROUP BY label, form ORDER BY label, form;

SELECT n.form,
	   round((percentile_cont(0.5) WITHIN GROUP (ORDER BY n.ms / o.ms))::numeric, 2) AS new_over_old
FROM ts_r n JOIN ts_r o ON o.form = n.form AND o.round = n.round AND o.label = 'old'
WHERE n.label = 'new' GROUP BY n.form ORDER BY n.form;

-- the same in CPU time
SELECT label, form, count(*) AS rounds,
	   round((percentile_cont(0.5) WITHIN GROUP (ORDER BY cpu_ms / nq))::numeric, 3) AS cpu_ms_per_query,
	   round(min(rows_found)::numeric / min(nq), 2) AS rows_per_query,
	   round((percentile_cont(0.5) WITHIN GROUP (ORDER BY cpu_ms / (SELECT b.cpu_ms FROM ts_r b
			WHERE b.label = a.label AND b.round = a.round AND b.form = 'btree')))::numeric, 2) AS over_btree,
	   round((percentile_cont(0.5) WITHIN GROUP (ORDER BY cpu_ms / (SELECT b.cpu_ms FROM ts_r b
			WHERE b.label = a.label AND b.round = a.round AND b.form = 'one k=3')))::numeric, 2) AS over_one_k3
FROM ts_r a GROUP BY label, form ORDER BY label, form;

SELECT n.form,
	   round((percentile_cont(0.5) WITHIN GROUP (ORDER BY n.cpu_ms / o.cpu_ms))::numeric, 2) AS new_over_old
FROM ts_r n JOIN ts_r o ON o.form = n.form AND o.round = n.round AND o.label = 'old'
WHERE n.label = 'new' GROUP BY n.form ORDER BY n.form;
