-- bench/compare/focus_round.sql -- ROUND_SQL=focus_round.sql of
-- compare_builds.sh: the two measurements of round.sql whose B/A came out
-- highest in the full runs (planning of <= 3, radius k=3 on clustered
-- rows) with their baselines, each twice per session, in short sessions
-- (more rounds in the same time).  (Header of round.sql:) every
-- measurement once with the simhash.so installed now, into cb_r (label,
-- round, metric, cpu_ms, wall_ms, result).  cpu_ms is the backend's time on
-- a core (/proc/self/schedstat), wall_ms the clock; result a count that both
-- builds must agree on.  Rows: setup.sql.  psql variables: label, round,
-- copyfile.
\ir prelude.sql

-- twice each, interleaved
SELECT count(*) FROM cb_pl WHERE fp <-> '0123456789abcdef' <= 3 \g /dev/null
SELECT count(*) FROM cb_c WHERE fp <-> '0123456789abcdef' <= 3 \g /dev/null
SELECT cb_plan('base: plan btree lookup x8000', $q$SELECT fp FROM cb_u WHERE id = 42$q$, 8000);
SELECT cb_plan('plan fp <-> q <= 3 x8000', $q$SELECT id FROM cb_pl WHERE fp <-> '0123456789abcdef' <= 3$q$, 8000);
SELECT cb_loop('base: btree lookup x8000', 'SELECT count(id) FROM cb_u WHERE id BETWEEN $2 AND $2 + 9', 'cb_uq', 40);
SELECT cb_loop('radius k=3 clustered', 'SELECT count(*) FROM cb_c WHERE fp <-> $1 <= 3', 'cb_cq', 10);
SELECT cb_plan('plan fp <-> q <= 3 x8000', $q$SELECT id FROM cb_pl WHERE fp <-> '0123456789abcdef' <= 3$q$, 8000);
SELECT cb_plan('base: plan btree lookup x8000', $q$SELECT fp FROM cb_u WHERE id = 42$q$, 8000);
SELECT cb_loop('radius k=3 clustered', 'SELECT count(*) FROM cb_c WHERE fp <-> $1 <= 3', 'cb_cq', 10);
SELECT cb_loop('base: btree lookup x8000', 'SELECT count(id) FROM cb_u WHERE id BETWEEN $2 AND $2 + 9', 'cb_uq', 40);
