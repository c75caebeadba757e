#!/bin/bash
# bench/planner/join.sh -- band join or nested loop: does the planner pick
# the faster plan for "probe JOIN t ON t.fp <-> p.fp <= 3"?
#
#   1. join_setup.sql: jc_t, 300,000 fingerprints (half random, half
#      clusters of 100) with a simhash index, and probe sets of 10, 100,
#      1,000, 10,000 and 50,000 new rows (half near a cluster, half random);
#   2. join_sweep.sql: for each probe size, NANALYZE (20) fresh samples of
#      both tables' statistics (ANALYZE draws a new sample each time), the
#      plan chosen, its cost, the costs of the nested loop and of the band
#      join (each forced: simhash.enable_join = off, enable_nestloop = off),
#      and the time of each (best of 2 runs), and the ratio of the chosen
#      plan's time to the faster alternative's;
#   3. a summary per probe size (join_summary.sql).
# Results: printed, and bench/data/planner/join_sweep.csv
# (join_sweep_workersN.csv with WORKERS=N).
# Connection: PG* variables; without PGDATABASE, database simhash_planner
# (created if missing).  SKIP_SETUP=1 reuses the tables; SIZES (comma-
# separated) and NANALYZE narrow the sweep; WORKERS sets
# max_parallel_workers_per_gather (default 0).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=$(cd "$here/.." && pwd)/data/planner
mkdir -p "$out"
if [ -z "${PGDATABASE:-}" ]; then
	export PGDATABASE=simhash_planner
	psql -X -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'simhash_planner'" |
		grep -q 1 || psql -X -q -d postgres -c "CREATE DATABASE simhash_planner"
fi

if [ -z "${SKIP_SETUP:-}" ]; then
	echo "== building jc_t (300,000 rows) and the probe sets"
	psql -X -q -v ON_ERROR_STOP=1 -f "$here/join_setup.sql" >/dev/null
fi

suffix=${WORKERS:+_workers$WORKERS}
echo "== sweep: plan chosen and time of each alternative per sample of statistics"
psql -X -q -v ON_ERROR_STOP=1 -v sizes="${SIZES:-10,100,1000,10000,50000}" \
	-v nanalyze="${NANALYZE:-20}" ${WORKERS:+-v workers="$WORKERS"} -f "$here/join_sweep.sql" | tee "$out/join_sweep$suffix.csv"

echo "== summary"
psql -X -q -v ON_ERROR_STOP=1 -v csv="$out/join_sweep$suffix.csv" -f "$here/join_summary.sql"
