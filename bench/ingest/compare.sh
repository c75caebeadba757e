#!/bin/bash
# bench/ingest/compare.sh -- the single-row insert path of two builds of
# the extension on the same rows, measured interleaved, with their ratios.
#
# Usage:  bench/ingest/compare.sh BASE NEW [SIZE]
#         bench/ingest/compare.sh ffe59a8 bcd58ff 1M
#
# BASE and NEW are commits, or WORKTREE (as bench/index/knn_compare.sh
# takes them: ../builds.sh builds each into a private PostgreSQL 15 with a
# cluster of its own, in the same directory, so builds are shared between
# the two scripts).  In each server, database simhash_ingest_bench holds
# rows.sh's rows (SIZE base and SIZE arriving rows, each two paragraphs of
# the kernel documentation; default 1M) and three tables of the base rows
# made by functions.sql's ing_make_table: gen_ix (generated fp, simhash index, no
# trigger: the baseline), nd_skip_gen and nd_link_gen (the same with the
# near-duplicate trigger at k = 3, skip and link).
#
# What is timed: a procedure in one backend inserts NROWS arriving rows,
# one INSERT and one COMMIT per row (synchronous_commit off: the work of
# the row, not the flush), the rows drawn at random with a seed per round
# and call, the same in both builds (drawn with replacement: a later call
# also meets some rows inserted before, caught or linked in both builds).
# Each round runs, per table, BASE then NEW then NEW then BASE (ABBA); round
# 0 warms up.  The figure is the backend's CPU time per row
# (/proc/self/schedstat), which other work on a shared machine moves far
# less than the wall clock; printed per table: the median of each build,
# the median of the per-round ratios NEW / BASE, and for the trigger tables
# the trigger's own cost, the median over rounds of (table - gen_ix) per
# build.  Rows stored and linked must agree between the builds: otherwise a
# line MISMATCH, and the script exits with status 1 after its table.
#
# Knobs: ROUNDS (4; 1 to 400), NROWS (10000), KNNB_DIR (/tmp/knnb),
# SHARED_BUFFERS (1GB), KEEP=1 leaves the servers running.  Run as root.
# Takes about 5 minutes at 1M and the defaults, plus, when a server's rows
# are not those of SIZE, 2-3 minutes per server to load them.
set -euo pipefail

base_rev=${1:?usage: compare.sh BASE NEW [SIZE]}
new_rev=${2:?usage: compare.sh BASE NEW [SIZE]}
size=${3:-1M}
rounds=${ROUNDS:-4}
nrows=${NROWS:-10000}
[ "$rounds" -ge 1 ] && [ "$rounds" -le 400 ] || { echo "ROUNDS must be 1 to 400" >&2; exit 1; }
dir=${KNNB_DIR:-/tmp/knnb}
sb=${SHARED_BUFFERS:-1GB}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
db=simhash_ingest_bench
tables="gen_ix nd_skip_gen nd_link_gen"
# shellcheck source=../common.sh
. "$here/../common.sh"
# shellcheck source=../builds.sh
. "$here/../builds.sh"
n=$(bench_rows_of "$size")

# environment and psql of build NAME, in the benchmark's database
pgenv() {
	local name=$1
	shift
	as_pg env PATH="$dir/pg-$name/usr/lib/postgresql/15/bin:$PATH" PGHOST="$dir/cl-$name" \
		PGPORT="$(cat "$dir/port-$name")" PGUSER=postgres PGDATABASE=$db "$@"
}
q() {
	local name=$1
	shift
	pgenv "$name" psql -X -q -v ON_ERROR_STOP=1 -tA -c "SET client_min_messages = warning" "$@"
}

# prepare() NAME: rows, tables and the timing procedure in build NAME
prepare() {
	local name=$1 t
	if [ "$(pgenv "$name" psql -X -tA -d postgres -c "SELECT count(*) FROM pg_database WHERE datname = '$db'")" = 0 ]; then
		pgenv "$name" psql -X -q -d postgres -c "CREATE DATABASE $db"
	fi
	q "$name" -c "CREATE EXTENSION IF NOT EXISTS simhash"
	pgenv "$name" "$here/rows.sh" "$n" >&2
	q "$name" -f "$here/functions.sql"
	q "$name" -f "$here/compare.sql"
	log "$name: tables of $n base rows"
	q "$name" -o /dev/null -c "SELECT ing_make_table('ing_gen_ix', 'gen', 'simhash', 'none', '-')"
	for t in skip link; do
		q "$name" -o /dev/null -c "SELECT ing_make_table('ing_nd_${t}_gen', 'gen', 'simhash', 'nd', '$t')"
	done
	for t in $tables; do q "$name" -c "VACUUM ANALYZE ing_$t"; done
	q "$name" -c "TRUNCATE ing_cmp" -c "CHECKPOINT"
}

builds_start_pair "$base_rev" "$new_rev"
# the corpus is fetched here, as root; rows.sh (as postgres) only reads it
"$here/../kernel_docs.sh" 6.1 6.12
chmod -R a+rX "$repo/bench/data"
prepare "$a"
prepare "$b"

for ((r = 0; r <= rounds; r++)); do
	for t in $tables; do
		# each build's first call, then its second: the seed is (round,
		# call), so both builds insert the same rows in the same order
		for xi in "$a 1" "$b 1" "$b 2" "$a 2"; do
			read -r x i <<<"$xi"
			q "$x" -c "SET synchronous_commit = off" \
				-c "CALL ing_cmp_insert('ing_$t', $n, $nrows, $r, $i, '$x')"
		done
	done
	log "round $r of $rounds done (load $(cut -d' ' -f1 /proc/loadavg))"
done

echo "$n base rows, $nrows single-row INSERTs per call, ABBA, $rounds rounds after a warm-up"
echo "| table | $a CPU µs/row, median | $b CPU µs/row, median | $b / $a, median of rounds (each round) | trigger above gen_ix, µs/row, $a / $b |"
echo "|---|---|---|---|---|"
# per round: mean of a build's two calls
per_round() {	# BUILD TABLE
	q "$1" -c "SELECT string_agg(v::text, ' ' ORDER BY round) FROM (SELECT round, avg(cpu_us) v FROM ing_cmp WHERE tab = 'ing_$2' AND round > 0 GROUP BY round) s"
}
ia=$(per_round "$a" gen_ix)
ib=$(per_round "$b" gen_ix)
mismatch=0
for t in $tables; do
	ra=$(per_round "$a" "$t")
	rb=$(per_round "$b" "$t")
	ca=$(q "$a" -c "SELECT string_agg(stored || '/' || linked, ' ' ORDER BY round, call) FROM ing_cmp WHERE tab = 'ing_$t'")
	cb=$(q "$b" -c "SELECT string_agg(stored || '/' || linked, ' ' ORDER BY round, call) FROM ing_cmp WHERE tab = 'ing_$t'")
	if [ "$ca" != "$cb" ]; then
		echo "MISMATCH ing_$t: rows stored/linked $a: $ca; $b: $cb"
		mismatch=1
	fi
	python3 - "$t" "$ra" "$rb" "$ia" "$ib" <<'PY'
import statistics, sys
t = sys.argv[1]
ra, rb, ia, ib = ([float(x) for x in v.split()] for v in sys.argv[2:6])
ratios = [y / x for x, y in zip(ra, rb)]
above = "–" if t == "gen_ix" else (
    f"{statistics.median([x - i for x, i in zip(ra, ia)]):.1f} / "
    f"{statistics.median([y - i for y, i in zip(rb, ib)]):.1f}")
print(f"| {t} | {statistics.median(ra):.1f} | {statistics.median(rb):.1f} | "
      f"{statistics.median(ratios):.2f} ({' '.join(f'{v:.2f}' for v in ratios)}) | {above} |")
PY
done
exit "$mismatch"
