-- bench/compare/report.sql -- the table of compare_builds.sh from cb_r:
-- per measurement, the median CPU ms of each build over its sessions, the
-- median over rounds of the per-round ratio B/A (each round: the sum of its
-- two B sessions over the sum of its two A sessions), its range, the same
-- ratio in wall-clock time, and the rounds.  First, lines "MISMATCH" for any
-- measurement whose result (a count) differs between sessions.
\set ON_ERROR_STOP on
SELECT 'MISMATCH ' || metric || ': ' || string_agg(DISTINCT label || '=' || result, ' ')
FROM cb_r GROUP BY metric HAVING count(DISTINCT result) > 1;
\pset tuples_only off
\pset format aligned
\pset footer off
WITH per_round AS (
	SELECT metric, round,
		   sum(cpu_ms) FILTER (WHERE label = 'B') / sum(cpu_ms) FILTER (WHERE label = 'A') AS cpu_ratio,
		   sum(wall_ms) FILTER (WHERE label = 'B') / sum(wall_ms) FILTER (WHERE label = 'A') AS wall_ratio
	FROM cb_r WHERE label IN ('A', 'B') GROUP BY metric, round)
SELECT p.metric,
	   (SELECT round((percentile_cont(0.5) WITHIN GROUP (ORDER BY cpu_ms))::numeric, 1)
		FROM cb_r WHERE label = 'A' AND metric = p.metric) AS a_cpu_ms,
	   (SELECT round((percentile_cont(0.5) WITHIN GROUP (ORDER BY cpu_ms))::numeric, 1)
		FROM cb_r WHERE label = 'B' AND metric = p.metric) AS b_cpu_ms,
	   round((percentile_cont(0.5) WITHIN GROUP (ORDER BY cpu_ratio))::numeric, 3) AS b_over_a_cpu,
	   round(min(cpu_ratio)::numeric, 2) || '-' || round(max(cpu_ratio)::numeric, 2) AS range_cpu,
	   round((percentile_cont(0.5) WITHIN GROUP (ORDER BY wall_ratio))::numeric, 3) AS b_over_a_wall,
	   count(*) AS rounds
FROM per_round p GROUP BY p.metric
ORDER BY array_position(ARRAY['base: btree build 1M', 'index build uniform', 'index build clustered',
	'base: btree lookup x8000', 'radius k=3 uniform', 'radius k=3 clustered', 'radius k=6 uniform',
	'radius k=6 clustered', 'knn 10 uniform', 'knn 10 clustered', 'base: plan btree lookup x8000',
	'plan fp <-> q <= 3 x8000', 'band self-join k=3 (1M clustered)', 'base: insert btree x10000',
	'insert via trigger x10000', 'base: COPY btree', 'COPY via trigger', 'ingest linked rows'], p.metric),
	p.metric;
