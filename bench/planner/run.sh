#!/bin/bash
# bench/planner/run.sh -- what the planner hook costs and what it buys.
#
#   1. setup.sql: 1M clustered fingerprints with a simhash index (pl_sim),
#      the same rows with four btree indexes on the 16-bit blocks (pl_btree),
#      both again in random heap order (pl_*_shuffled), and a plain table
#      without fingerprints (pl_plain);
#   2. measure.sql: planning time of "fp <-> q <= 3" against the explicit
#      spellings and against tables the hook ignores; execution time of
#      "fp <-> q <= 3" against "fp <@ simhash_ball(q, 3)"; listing all
#      near-duplicate pairs at k = 3 (self-join) with the simhash index, with
#      the four btrees (in cluster order and shuffled), without any index
#      (scaled from 1,000 outer rows), and the time to probe every row once;
#   3. pgbench (simple protocol, so every query is planned) on the plain
#      table, in sessions without and with the library loaded
#      (session_preload_libraries), alternating, 3 x 10 s each;
#   4. the same comparison server-side: the median planning time of that
#      query (2,000 EXPLAINs) in sessions without and with the library.
# Results: printed, and bench/data/planner/results.txt.
# Connection: PG* variables; without PGDATABASE, database simhash_planner
# (created if missing).
# SKIP_SETUP=1 reuses the tables of a previous run.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=$(cd "$here/.." && pwd)/data/planner
mkdir -p "$out"
# shellcheck source=../common.sh
. "$here/../common.sh"
if [ -z "${PGDATABASE:-}" ]; then
	export PGDATABASE=simhash_planner
	psql -X -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'simhash_planner'" |
		grep -q 1 || psql -X -q -d postgres -c "CREATE DATABASE simhash_planner"
fi

if [ -z "${SKIP_SETUP:-}" ]; then
	echo "== building tables (1M clustered rows, simhash and btree indexes)"
	psql_run -f "$here/setup.sql"
fi

echo "== planning and execution times"
psql_run -f "$here/measure.sql" | tee "$out/measure.csv"

# PGOPTIONS for a session "with" or "without" the library loaded at start
library_opts() {
	[ "$1" = with ] && echo "-c session_preload_libraries=simhash" || true
}

echo "== pgbench on a plain table, without and with the library loaded"
cat >"$out/plain.pgbench" <<'PGB'
\set id random(1, 100000)
SELECT v FROM pl_plain WHERE id = :id;
PGB
for round in 1 2 3; do
	for mode in without with; do
		opts=$(library_opts $mode)
		tps=$(PGOPTIONS="$opts" pgbench -n -M simple -c 1 -T 10 -f "$out/plain.pgbench" 2>/dev/null |
			sed -n 's/^tps = \([0-9.]*\).*/\1/p')
		echo "pgbench_tps_${mode}_library,$tps" | tee -a "$out/measure.csv"
	done
done
echo "== planning time of the same query, server-side, without and with the library loaded"
# median of 2,000 EXPLAINs per session (pl_time_explain of measure.sql):
# the hook's cost per planned query, free of the client round trip
for round in 1 2 3; do
	for mode in without with; do
		opts=$(library_opts $mode)
		ms=$(PGOPTIONS="$opts" psql -X -tA -c "SELECT pl_time_explain('SELECT v FROM pl_plain WHERE id = 42', 2000)")
		echo "plan_ms_plain_pkey_${mode}_library,$ms" | tee -a "$out/measure.csv"
	done
done
cp "$out/measure.csv" "$out/results.txt"
