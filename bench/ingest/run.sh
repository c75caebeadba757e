#!/bin/bash
# bench/ingest/run.sh -- rows arriving in a table that already holds N rows:
# what the near-duplicate trigger costs, against the same table without it
# and against the stock-PostgreSQL way of writing the same check.
#
# Usage:  bench/ingest/run.sh [SIZE]        SIZE: 1M (default), 100k, 250000 ...
#
# Rows are real text: paragraphs of the Linux 6.1 and 6.12 documentation,
# two per row, with edited copies among the arriving rows (setup.sql says
# exactly how).  N base rows are in every table; N arriving rows wait in
# ing_arrivals.  Steps:
#   1. rows.sh (../kernel_docs.sh and tools/demo_corpus.py): the documents
#      (ing_docs);
#   2. rows.sh (setup.sql): ing_base and ing_arrivals (kept between runs of
#      the same SIZE; REBUILD=1 makes them again); rate.sql: their
#      near-duplicate rates at k = 3;
#   3. a table per variant holding the N base rows (functions.sql,
#      ing_make_table); variants:
#        plain          no fingerprint, no index (id primary key and body only)
#        gen            generated column fp = simhash(body), no index
#        gen_ix         generated column + simhash index
#        fpt_ix         fp filled by simhash_fingerprint_trigger + simhash index
#        b4_ix          generated column + four btree expression indexes on
#                       the 16-bit blocks (btree4)
#        nd_A_gen       gen_ix + simhash_near_duplicate_trigger(fp, 3, A)
#        nd_A_fpt       fpt_ix + simhash_near_duplicate_trigger(fp, 3, A)
#        b4_A           b4_ix + the same check as a PL/pgSQL trigger
#      for A = reject, skip, link; "_w" after a name: each row inserted
#      through ing_ins_<table>(id), a PL/pgSQL function that catches 23P01
#      (reject variants always; gen_w, gen_ix_w, fpt_ix_w are their
#      baselines);
#   4. single-row INSERT: pgbench -n -M prepared, one transaction per row,
#      a random arriving row per transaction:
#        \set id random(1, N)
#        INSERT INTO t (body) SELECT body FROM ing_arrivals WHERE id = :id;
#      INSERT_T seconds per (variant, setting), settings "sync=on c=1",
#      "sync=on c=2" and "sync=off c=1" (synchronous_commit off: no flush
#      wait, what is left is the work of the row); ROUNDS rounds, each
#      running every variant once in a rotated order; a CHECKPOINT before
#      each run; rows stored, rejected/skipped and linked counted from the
#      table;
#   5. COPY of the N arriving rows (in id order) from a server-side file,
#      in text format, bench/data/ingest/arrivals.copy (written once by
#      psql \copy), into a fresh copy of each variant's table holding the N
#      base rows (reject is not measured: its first rejection aborts the
#      COPY); COPY_ROUNDS rounds; the time includes the commit.
#      nd_link_gen's link count is checked against rate.sql's count.
#
# Results: ing_results in the database, exported to
# bench/ingest/results/run-<id>.csv (with run-<id>.meta); report.py turns the
# latest run into the tables of RESULTS.md and the plot.
#
# Environment: the usual PG* variables (without PGDATABASE: database
# simhash_ingest_bench, created if missing; superuser needed for CREATE
# EXTENSION and COPY from a server-side file; the server must be able to
# read bench/data/ingest/).  Knobs: INSERT_T (8), ROUNDS (3), COPY_ROUNDS
# (2), COPY_B4 ("skip": the PL/pgSQL trigger's COPY modes, one round; "" for
# none), VARIANTS (single-row variants, default all), COPY_VARIANTS,
# SKIP_INSERT=1, SKIP_COPY=1, REBUILD=1, KEEP=1 (keep the tables).
# Needs psql, pgbench, /usr/bin/python3 (python3-matplotlib for the plot).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
data=$root/bench/data
work=$data/ingest
results=$here/results
mkdir -p "$work" "$results"

export PGDATABASE=${PGDATABASE:-simhash_ingest_bench}
if [ "$(psql -X -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$PGDATABASE'")" != 1 ]; then
	psql -X -q -d postgres -c "CREATE DATABASE \"$PGDATABASE\""
fi
export PGOPTIONS="-c jit=off -c max_parallel_workers_per_gather=0 -c client_min_messages=warning ${PGOPTIONS:-}"

size=${1:-1M}
# shellcheck source=../common.sh
. "$here/../common.sh"
n=$(bench_rows_of "$size")
insert_t=${INSERT_T:-8}
rounds=${ROUNDS:-3}
copy_rounds=${COPY_ROUNDS:-2}
copy_b4=${COPY_B4-skip}
run=$(date -u +%Y%m%dT%H%M%SZ)
all_variants="plain gen gen_w gen_ix gen_ix_w fpt_ix fpt_ix_w b4_ix
	nd_reject_gen_w nd_skip_gen nd_link_gen nd_reject_fpt_w nd_skip_fpt nd_link_fpt
	b4_reject_w b4_skip b4_link"
variants=${VARIANTS:-$all_variants}
copy_variants=${COPY_VARIANTS:-plain gen gen_ix fpt_ix nd_skip_gen nd_link_gen nd_skip_fpt nd_link_fpt}
settings=("sync=on c=1" "sync=on c=2" "sync=off c=1")

sql() { psql -X -q -v ON_ERROR_STOP=1 -tA -c "$1"; }
log() { echo "[$(date -u +%H:%M:%S)] $*"; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
put() {	# VARIANT SETTING METRIC VALUE [INFO]
	sql "SELECT ing_put('$run', $n, '$1', $([ -n "$2" ] && echo "'$2'" || echo NULL), '$3', $4, \$i\$${5:-}\$i\$)" >/dev/null
}
export_results() {
	psql_run -c "\\copy (SELECT run, n, variant, setting, metric, value, info FROM ing_results WHERE run = '$run' ORDER BY at) TO '$results/run-$run.csv' CSV HEADER"
}

# variant -> "table fpkind index trigger action wrapped"
spec() {
	local v=${1%_w} w=0
	[ "$v" = "$1" ] || w=1
	case $v in
	plain) echo "ing_plain none none none - $w" ;;
	gen) echo "ing_gen gen none none - $w" ;;
	gen_ix) echo "ing_gen_ix gen simhash none - $w" ;;
	fpt_ix) echo "ing_fpt_ix fpt simhash none - $w" ;;
	b4_ix) echo "ing_b4_ix gen btree4 none - $w" ;;
	nd_*_gen) a=${v#nd_}; echo "ing_$v gen simhash nd ${a%_gen} $w" ;;
	nd_*_fpt) a=${v#nd_}; echo "ing_$v fpt simhash nd ${a%_fpt} $w" ;;
	b4_*) echo "ing_$v gen btree4 b4 ${v#b4_} $w" ;;
	*) echo "unknown variant $1" >&2; exit 1 ;;
	esac
}

so_md5() {
	local so
	so=$(pg_config --pkglibdir 2>/dev/null)/simhash.so
	if [ -f "$so" ]; then md5sum "$so" | cut -c1-12; else echo unknown; fi
}

# ---- run metadata ----------------------------------------------------------------
psql_run -f "$here/functions.sql"
{
	echo "run: $run"
	echo "command: bench/ingest/run.sh $size"
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "host: $(uname -srm), $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB RAM", $2 / 1048576}' /proc/meminfo)"
	echo "cpu: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)"
	echo "server: $(sql "SELECT version()")"
	echo "settings: $(sql "SELECT string_agg(name || '=' || current_setting(name), ', ' ORDER BY name) FROM pg_settings WHERE name IN ('shared_buffers', 'maintenance_work_mem', 'work_mem', 'max_wal_size', 'synchronous_commit', 'fsync', 'wal_level', 'max_locks_per_transaction', 'max_connections')") jit=off (session)"
	echo "env: INSERT_T=$insert_t ROUNDS=$rounds COPY_ROUNDS=$copy_rounds COPY_B4=$copy_b4"
	echo "load average at start: $(loadavg)"
	echo "git: $(bench_git)"
	echo "simhash.so: $(so_md5)"
} >"$results/run-$run.meta"
cat "$results/run-$run.meta"

# ---- 1, 2. rows -------------------------------------------------------------------
"$here/rows.sh" "$n"
log "near-duplicate rates (rate.sql)"
psql_run -v run="$run" -v n="$n" -o /dev/null -f "$here/rate.sql"
psql_run -tA -c "SELECT '   ' || rpad(metric, 32) || round(value::numeric, 1) FROM ing_results
	WHERE run = '$run' AND variant = 'data' ORDER BY at"
expect_links=$(sql "SELECT value::bigint FROM ing_results WHERE run = '$run' AND variant = 'data' AND metric = 'arrivals_near_stream'")
if [ ! -s "$work/arrivals.copy" ]; then
	psql_run -c "\\copy (SELECT body FROM ing_arrivals ORDER BY id) TO '$work/arrivals.copy'"
fi
chmod a+r "$work/arrivals.copy"
put data "" copy_file_bytes "$(stat -c %s "$work/arrivals.copy")" "$work/arrivals.copy"

make_table() {	# TABLE-NAME VARIANT
	local t=$1 fk ix tr ac
	read -r _ fk ix tr ac _ <<<"$(spec "$2")"
	psql_run -c "SELECT ing_make_table('$t', '$fk', '$ix', '$tr', '$ac')" -o /dev/null
	psql_run -c "VACUUM ANALYZE $t"
}

# counts of new rows (id > n): stored, linked
counts() { sql "SELECT count(*) || ' ' || count(dup_of) FROM $1 WHERE id > $n"; }

# ---- 3, 4. single-row INSERT ------------------------------------------------------------
# Run pgbench "$@" with C clients and sample the CPU time of its server
# backends (/proc/PID/schedstat: nanoseconds on a CPU since the backend
# started) every 50 ms until pgbench ends: sets pgb_out and cpu_ns (0 if the
# server's /proc is not readable here).  On a machine shared with other
# work, the CPU time per transaction is the figure that load does not move.
exec {tick}<> <(:)
pgbench_cpu() {	# C ARGS...
	local want=$1 pg pids="" p v start
	shift
	# only this run's backends: the previous run's may still be exiting
	start=$(sql "SELECT clock_timestamp()")
	pgbench "$@" >"$work/pgbench.out" 2>&1 &
	pg=$!
	for _ in $(seq 1 200); do
		pids=$(sql "SELECT string_agg(pid::text, ' ') FROM pg_stat_activity
			WHERE application_name = 'pgbench' AND datname = current_database()
			  AND backend_start >= '$start'")
		[ "$(wc -w <<<"$pids")" -ge "$want" ] && break
		read -r -t 0.05 -u "$tick" _ || true
	done
	declare -A last=()
	while kill -0 "$pg" 2>/dev/null; do
		for p in $pids; do
			if read -r v _ 2>/dev/null </proc/"$p"/schedstat; then last[$p]=$v; fi
		done
		read -r -t 0.05 -u "$tick" _ || true
	done
	wait "$pg" || { cat "$work/pgbench.out" >&2; exit 1; }
	pgb_out=$(cat "$work/pgbench.out")
	cpu_ns=0
	for p in $pids; do cpu_ns=$((cpu_ns + ${last[$p]:-0})); done
}

insert_run() {	# VARIANT SETTING ROUND
	local v=$1 setting=$2 t wrapped sync c script tps ntx r0 l0 r1 l1 caught la cpu_us
	read -r t _ _ _ _ wrapped <<<"$(spec "$v")"
	sync=${setting#sync=}; sync=${sync%% *}; c=${setting##*c=}
	script=$work/insert-$v.pgb
	if [ "$wrapped" = 1 ]; then
		printf '\\set id random(1, %s)\nSELECT ing_ins_%s(:id);\n' "$n" "$t" >"$script"
	else
		printf '\\set id random(1, %s)\nINSERT INTO %s (body) SELECT body FROM ing_arrivals WHERE id = :id;\n' "$n" "$t" >"$script"
	fi
	sql "CHECKPOINT" >/dev/null
	read -r r0 l0 <<<"$(counts "$t")"
	la=$(loadavg)
	PGOPTIONS="$PGOPTIONS -c synchronous_commit=$sync" \
		pgbench_cpu "$c" -n -M prepared -c "$c" -j "$c" -T "$insert_t" -f "$script"
	read -r r1 l1 <<<"$(counts "$t")"
	tps=$(echo "$pgb_out" | sed -n 's/^tps = \([0-9.]*\).*/\1/p' | head -1)
	ntx=$(echo "$pgb_out" | sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' | head -1)
	case $v in
	*link*) caught=$((l1 - l0)) ;;
	*) caught=$((ntx - (r1 - r0))) ;;
	esac
	cpu_us=$(awk -v ns="$cpu_ns" -v t="$ntx" 'BEGIN { printf "%.2f", (t > 0 ? ns / t / 1000 : 0) }')
	put "$v" "$setting" tps "$tps" "round $3; load $la"
	put "$v" "$setting" ntx "$ntx" "round $3"
	put "$v" "$setting" caught "$caught" "round $3"
	[ "$cpu_ns" = 0 ] || put "$v" "$setting" cpu_us_per_tx "$cpu_us" "round $3"
	printf '   %-16s %-12s round %s: %8.1f tps %7d tx %6d caught %8.1f us CPU/tx (load %s)\n' \
		"$v" "$setting" "$3" "$tps" "$ntx" "$caught" "$cpu_us" "$la"
}

if [ -z "${SKIP_INSERT:-}" ]; then
	log "tables for single-row inserts ($n rows each)"
	made=" "
	for v in $variants; do
		read -r t _ <<<"$(spec "$v")"
		case $made in *" $t "*) continue ;; esac
		make_table "$t" "$v"
		made="$made$t "
		echo "   $t"
	done
	sql "CHECKPOINT" >/dev/null
	read -r -a vlist <<<"$(echo $variants)"
	nv=${#vlist[@]}
	for round in $(seq 1 "$rounds"); do
		log "single-row INSERT, round $round of $rounds ($insert_t s per run)"
		for setting in "${settings[@]}"; do
			for i in $(seq 0 $((nv - 1))); do
				insert_run "${vlist[$(((i + round - 1) % nv))]}" "$setting" "$round"
			done
		done
		export_results
	done
fi

# ---- 5. COPY ------------------------------------------------------------------------------
copy_run() {	# VARIANT ROUND
	local v=$1 ms cpu r l la
	make_table ing_copy "$v"
	sql "CHECKPOINT" >/dev/null
	la=$(loadavg)
	# wall time around the COPY (autocommit: its commit included), and the
	# backend's CPU time over the same span from /proc/PID/schedstat
	read -r ms cpu <<<"$(psql_run -tA <<EOF
SELECT clock_timestamp() AS t0,
	   split_part(pg_read_file('/proc/' || pg_backend_pid() || '/schedstat'), ' ', 1)::bigint AS c0 \\gset
COPY ing_copy (body) FROM '$work/arrivals.copy';
SELECT round(extract(epoch FROM clock_timestamp() - :'t0'::timestamptz) * 1000) || ' ' ||
	   round((split_part(pg_read_file('/proc/' || pg_backend_pid() || '/schedstat'), ' ', 1)::bigint - :c0) / 1e6);
EOF
)"
	read -r r l <<<"$(counts ing_copy)"
	put "$v" copy copy_ms "$ms" "round $2; load $la"
	put "$v" copy copy_cpu_ms "$cpu" "round $2"
	put "$v" copy rows_stored "$r" "round $2"
	put "$v" copy rows_linked "$l" "round $2"
	printf '   %-16s round %s: %9.0f ms (%9.0f ms CPU) %8d stored %8d linked (load %s)\n' "$v" "$2" "$ms" "$cpu" "$r" "$l" "$la"
	if [ "$v" = nd_link_gen ] && [ "$l" != "$expect_links" ]; then
		echo "   WARNING: $l rows linked, rate.sql expects $expect_links" >&2
		put "$v" copy link_mismatch "$l" "expected $expect_links"
	fi
	sql "DROP TABLE ing_copy" >/dev/null
}

if [ -z "${SKIP_COPY:-}" ]; then
	for round in $(seq 1 "$copy_rounds"); do
		log "COPY of $n rows into a table of $n rows, round $round of $copy_rounds"
		for v in $copy_variants; do
			copy_run "$v" "$round"
		done
		if [ "$round" = 1 ]; then
			for a in $copy_b4; do
				copy_run "b4_$a" "$round"
			done
		fi
		export_results
	done
fi

if [ -z "${KEEP:-}" ]; then
	for v in $all_variants; do
		read -r t _ <<<"$(spec "$v")"
		sql "DROP TABLE IF EXISTS $t" >/dev/null
	done
fi
echo "load average at end: $(loadavg)" >>"$results/run-$run.meta"
export_results
log "results: $results/run-$run.csv"

# ---- report ---------------------------------------------------------------------------------
if ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-matplotlib >/dev/null
	else
		echo "python3-matplotlib is missing: no plot" >&2
	fi
fi
/usr/bin/python3 "$here/report.py" "$results" --plot "$here/ingest.png" >"$work/report.md"
log "tables: $work/report.md; plot: $here/ingest.png"
