#!/bin/bash
# bench/clusters/run.sh -- simhash_clusters against the band self-join.
#
#   bench/clusters/run.sh [SIZE ...]       SIZE: 1M or 10M (default: 1M 10M)
#
# For each size, setup.sql builds cl_<size>: clustered fingerprints as in
# bench/planner (centres x 90 copies with 0-3 bits flipped, plus 10 % random
# rows); measure.sql then times, in one session and alternating (ROUNDS
# rounds, default 3), the band self-join that counts all pairs within 3 bits
# and simhash_clusters(..., 3) over the same rows.  The goal (issue 10):
# clusters of 10M rows at k = 3 in at most twice the band join's time.
# Results: printed, and bench/data/clusters/<size>.csv.
# Connection: PG* variables; without PGDATABASE, database simhash_bench.
# SKIP_SETUP=1 reuses the tables of a previous run; EXTRA=1 adds a round
# with work_mem = 1 GB.  Each query runs once per round: ROUNDS=1 at 10M
# is one band join and one simhash_clusters (the smallest run for the goal).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=$(cd "$here/.." && pwd)/data/clusters
mkdir -p "$out"
# shellcheck source=../common.sh
. "$here/../common.sh"
bench_database

sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1M 10M)
for size in "${sizes[@]}"; do
	case $size in
		1M) centres=10000 randoms=100000 ;;
		10M) centres=100000 randoms=1000000 ;;
		*) echo "run.sh: unknown size $size (1M or 10M)" >&2; exit 1 ;;
	esac
	tab=cl_$(echo "$size" | tr 'M' 'm')
	if [ -z "${SKIP_SETUP:-}" ]; then
		echo "== building $tab ($size clustered rows)"
		psql_run -v tab="$tab" -v centres=$centres -v randoms=$randoms -f "$here/setup.sql"
	fi
	echo "== $tab: band self-join and simhash_clusters at k = 3"
	psql_run -v tab="$tab" -v rounds="${ROUNDS:-3}" -v extra="${EXTRA:-0}" -f "$here/measure.sql" | tee "$out/$size.csv"
done
