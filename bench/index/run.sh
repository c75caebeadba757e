#!/bin/bash
# bench/index/run.sh -- the simhash index against stock PostgreSQL 15
# baselines on the same rows, measured side by side in one run.
#
# Usage:  bench/index/run.sh [SIZE ...]        SIZE: 1M, 10M, 100M, 250K, 5000000 ...
#         bench/index/run.sh 1M 10M            (the default)
#         bench/index/run.sh 100M              (simhash index and sequential scan only)
#
# For each size and dataset (uniform random fingerprints; clustered
# near-duplicates: n/100 centres x 90 copies with 0-3 bits flipped, plus 10%
# random rows):
#   1. setup.sql    the rows, one copy per method, and NQ query fingerprints
#                   (existing rows with 2 bits flipped);
#   2. build.sql    simhash; btree4 (four btree expression indexes on the
#                   16-bit blocks); gin4 (one GIN index on the band-tagged
#                   blocks): build time and size, same maintenance_work_mem
#                   (1GB) and no parallel workers; btree4 once more with 2
#                   workers for reference;
#   3. measure.sql  server-side latency (EXPLAIN (ANALYZE, TIMING OFF)
#                   execution time, warm cache) at k = 3 and 6 for: sequential
#                   scan (serial and 2 workers), btree4 (BitmapOr), gin4 (&&),
#                   their exact multi-probe forms at k = 6, simhash (<@ ball
#                   and the "<-> <= k" spelling), nearest neighbours LIMIT 10
#                   (simhash vs sequential top-10 sort; and with a tie-break,
#                   ORDER BY distance, id: the same ten rows as the sort);
#                   recall against the sequential scan; generic plans of the
#                   prepared statements;
#   4. client side: pgbench -M prepared -c 1 -T CLIENT_T per method and k, a
#                   random query fingerprint per transaction (a pgbench CASE
#                   expression over the query table, so the statement is the
#                   bare query); average, p50 and p95 latency from --log;
#   5. single-row INSERT rate: pgbench -M prepared -c 1 and -c 2, INSERT_T
#                   seconds each, INSERT_ROUNDS rounds, tables with no index,
#                   btree4, gin4, simhash (the tables of step 1, which hold
#                   n rows); synchronous_commit as configured;
#   6. bulk load:   INSERT INTO t2 SELECT * FROM t of 1M rows (fewer if n is
#                   smaller) into an empty table that already has the index,
#                   for each method; the simhash index is then checked.
# Sizes of 50M rows and more run the simhash index and the sequential scan
# only (steps 1-4, uniform data) unless FULL=1; LIGHT=1 does the same at any
# size (e.g. to measure the simhash index alone after a change), and writes
# its results to results/light/, which report.py does not read.
#
# Results: ixb_results in the database, exported after every (size,
# dataset) to bench/index/results/run-<id>.csv (with run-<id>.meta);
# report.py turns every CSV there into the tables of RESULTS.md and the plot
# (latency_vs_n.png; with RESULTS_DIR elsewhere, the plot goes there too).
#
# Environment: the usual PG* variables (without PGDATABASE: database
# simhash_index_bench, created if missing; CREATE EXTENSION needs a
# superuser).  Knobs: DATASETS ("uniform clustered"; "uniform" at >= 50M),
# NQ (200 query fingerprints), SEQ_NQ (30; 10 at >= 50M: queries timed for
# each sequential scan), CLIENT_T (10 s), INSERT_T (8 s), INSERT_ROUNDS (2),
# BULK_ROWS (1000000), KEEP=1 (keep the tables), FULL=1, JIT (off: the
# default jit = on compiles the sequential scans' expressions at 10M rows and
# up, which here made them no faster; set JIT=on to measure with it),
# SKIP_CLIENT=1, SKIP_INSERT=1, LIGHT=1, INCLUDE=1 (the simhash index is
# built with INCLUDE (id), the column the tie-break orders by; results go to
# results/include/ or results/light-include/, which report.py does not read),
# RESULTS_DIR (results there instead; e.g. results/pg17), IXB_GIT (the commit
# to record when the tree is a copy without .git).  pgvector.sh measures
# pgvector's HNSW index on the tables a KEEP=1 run leaves.
# Needs psql, pgbench, /usr/bin/python3 (python3-matplotlib for the plot;
# installed with apt-get when missing and running as root), df.
set -eEuo pipefail
# set -e stops without a word; say which command it was
trap 'echo "run.sh: line $LINENO: exit status $?: stopped here" >&2' ERR

here=$(cd "$(dirname "$0")" && pwd)
work=$(cd "$here/.." && pwd)/data/index
results=$here/results
# a light run lacks the baselines of the tables in RESULTS.md: kept apart
[ -z "${LIGHT:-}" ] || results=$here/results/light
# an index with an included column is another index: kept apart too
if [ -n "${INCLUDE:-}" ]; then
	[ -z "${LIGHT:-}" ] && results=$here/results/include || results=$here/results/light-include
fi
# RESULTS_DIR: elsewhere (e.g. another PostgreSQL major, which report.py's
# tables of the 15 runs must not mix in)
[ -z "${RESULTS_DIR:-}" ] || results=$RESULTS_DIR
mkdir -p "$work" "$results"

export PGDATABASE=${PGDATABASE:-simhash_index_bench}
if [ "$(psql -X -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$PGDATABASE'")" != 1 ]; then
	psql -X -q -d postgres -c "CREATE DATABASE \"$PGDATABASE\""
fi

jit=${JIT:-off}
export PGOPTIONS="-c jit=$jit -c max_parallel_workers_per_gather=0 ${PGOPTIONS:-}"
nq=${NQ:-200}
client_t=${CLIENT_T:-10}
insert_t=${INSERT_T:-8}
insert_rounds=${INSERT_ROUNDS:-2}
bulk_rows=${BULK_ROWS:-1000000}
# run.sh --one SIZE DATASET (internal): one size and dataset, in a child
# process, so that a failure (e.g. a server crash caused by another session)
# is retried once (RETRIES) without losing the rest of the run
one=
if [ "${1:-}" = --one ]; then one=1; shift; fi
run=${IXB_RUN:-$(date -u +%Y%m%dT%H%M%SZ)}
export IXB_RUN=$run
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1M 10M)

# shellcheck source=../common.sh
. "$here/../common.sh"
sql() { psql -X -q -v ON_ERROR_STOP=1 -tA -c "$1"; }
log() { echo "[$(date -u +%H:%M:%S)] $*"; }

[ -n "$one" ] || psql_run -f "$here/functions.sql"

# the installed library, to notice a reinstall during the run
so_md5() {
	local so
	so=$(pg_config --pkglibdir 2>/dev/null)/simhash.so
	if [ -f "$so" ]; then md5sum "$so" | cut -c1-12; else echo unknown; fi
}
so_start=$(so_md5)

# ---- run metadata ---------------------------------------------------------------
[ -n "$one" ] || {
	echo "run: $run"
	echo "command: bench/index/run.sh ${sizes[*]}"
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "host: $(uname -srm), $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB RAM", $2 / 1048576}' /proc/meminfo)"
	echo "cpu: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)"
	echo "server: $(sql "SELECT version()")"
	echo "settings: $(sql "SELECT string_agg(name || '=' || current_setting(name), ', ' ORDER BY name) FROM pg_settings WHERE name IN ('shared_buffers', 'maintenance_work_mem', 'work_mem', 'max_wal_size', 'synchronous_commit', 'fsync', 'wal_level', 'effective_cache_size', 'random_page_cost', 'max_worker_processes', 'max_parallel_workers')") jit=$jit (session)"
	echo "env: LIGHT=${LIGHT:-} INCLUDE=${INCLUDE:-} NQ=$nq SEQ_NQ=${SEQ_NQ:-default} CLIENT_T=$client_t INSERT_T=$insert_t INSERT_ROUNDS=$insert_rounds BULK_ROWS=$bulk_rows DATASETS=${DATASETS:-default}"
	echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
	if [ -n "${IXB_GIT:-}" ]; then echo "git: $IXB_GIT"; else
		echo "git: $(bench_git)"
	fi
	echo "simhash.so: $(so_md5)"
} >"$results/run-$run.meta"
[ -n "$one" ] || cat "$results/run-$run.meta"

export_results() {
	psql_run -c "\\copy (SELECT run, size, n, dataset, method, k, metric, value, info FROM ixb_results WHERE run = '$run' ORDER BY at) TO '$results/run-$run.csv' CSV HEADER"
}

# ---- disk -------------------------------------------------------------------------
check_disk() {	# bytes needed
	local dir avail
	dir=$(sql "SELECT setting FROM pg_settings WHERE name = 'data_directory'" 2>/dev/null || true)
	[ -n "$dir" ] && [ -d "$dir" ] || dir=/
	avail=$(df -B1 --output=avail "$dir" | tail -1)
	log "disk: $((avail / 1073741824)) GB free under $dir, about $(($1 / 1073741824)) GB needed"
	df -h "$dir" | tail -1
	if [ "$avail" -lt "$1" ]; then
		echo "not enough disk space under $dir" >&2
		exit 1
	fi
}

# ---- client side: pgbench -M prepared -----------------------------------------------
# client METHOD K WORKERS
client() {
	local method=$1 k=$2 workers=$3 script out lat
	script=$work/$prefix-$method-$k.pgb
	sql "SELECT E'\\\\set qid random(1, ' || count(*) || E')\\n\\\\set q case '
			|| string_agg('when :qid = ' || qid || ' then '
				|| CASE WHEN q = -9223372036854775808 THEN '(-9223372036854775807 - 1)' ELSE q::text END,
				' ' ORDER BY qid)
			|| E' else 0 end\\n'
			|| (SELECT replace(replace(replace(template, '\$T', ixb_table('$prefix', '$method', $full = 1)),
										'\$Q', '(:q)::bigint'), '\$K', '$k')
				FROM ixb_templates WHERE method = '$method') || ';'
		 FROM ${prefix}_q" >"$script"
	rm -rf "$work/log" && mkdir -p "$work/log"
	local opts="-c max_parallel_workers_per_gather=$workers"
	[ "$workers" = 0 ] || opts="$opts -c parallel_setup_cost=0 -c parallel_tuple_cost=0"
	out=$(PGOPTIONS="$PGOPTIONS $opts" \
		pgbench -n -M prepared -c 1 -j 1 -T "$client_t" -f "$script" \
			-l --log-prefix="$work/log/tx" 2>&1) || { echo "$out" >&2; exit 1; }
	lat=$(cat "$work/log"/tx.* | awk '{print $3 / 1000}' | sort -g |
		awk '{v[NR] = $1; s += $1} END {
			if (NR == 0) { print "0 0 0 0"; exit }
			i50 = int(0.5 * NR + 0.5); if (i50 < 1) i50 = 1
			i95 = int(0.95 * NR + 0.5); if (i95 < 1) i95 = 1
			printf "%d %.6f %.6f %.6f\n", NR, s / NR, v[i50], v[i95] }')
	read -r ntx avg p50 p95 <<<"$lat"
	local tps
	tps=$(echo "$out" | sed -n 's/^tps = \([0-9.]*\).*/\1/p' | head -1)
	sql "SELECT ixb_put('$run', '$size', $n, '$dataset', '$method', $k, 'cli_avg_ms', $avg);
		 SELECT ixb_put('$run', '$size', $n, '$dataset', '$method', $k, 'cli_p50_ms', $p50);
		 SELECT ixb_put('$run', '$size', $n, '$dataset', '$method', $k, 'cli_p95_ms', $p95);
		 SELECT ixb_put('$run', '$size', $n, '$dataset', '$method', $k, 'cli_tps', ${tps:-0});
		 SELECT ixb_put('$run', '$size', $n, '$dataset', '$method', $k, 'cli_ntx', $ntx)" >/dev/null
	printf '   %-18s k=%s  %6d tx  avg %9.3f ms  p50 %9.3f  p95 %9.3f\n' "$method" "$k" "$ntx" "$avg" "$p50" "$p95"
}

# ---- single-row inserts -------------------------------------------------------------
insert_rate() {	# TABLE-SUFFIX CLIENTS ROUND
	local tbl=${prefix}_$1 c=$2 script out tps
	script=$work/$prefix-insert-$1.pgb
	cat >"$script" <<EOF
\\set id random(1000000000000, 9000000000000)
\\set fp hash_murmur2(:id)
INSERT INTO $tbl (id, fp) VALUES (:id, (:fp)::bigint::simhash64);
EOF
	sql "CHECKPOINT" >/dev/null
	lsn0=$(sql "SELECT pg_current_wal_lsn()")
	out=$(pgbench -n -M prepared -c "$c" -j "$c" -T "$insert_t" -f "$script" 2>&1) || { echo "$out" >&2; exit 1; }
	lsn1=$(sql "SELECT pg_current_wal_lsn()")
	tps=$(echo "$out" | sed -n 's/^tps = \([0-9.]*\).*/\1/p' | head -1)
	ntx=$(echo "$out" | sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' | head -1)
	wal=$(sql "SELECT round(pg_wal_lsn_diff('$lsn1', '$lsn0') / greatest(${ntx:-0}, 1))")
	sql "SELECT ixb_put('$run', '$size', $n, '$dataset', '$1', NULL, 'insert_tps_c$c', $tps, 'round $3');
		 SELECT ixb_put('$run', '$size', $n, '$dataset', '$1', NULL, 'insert_wal_bytes_c$c', $wal, 'round $3')" >/dev/null
	printf '   %-8s -c %s round %s: %8.1f tps, %6d bytes of WAL per insert (whole cluster)\n' "$1" "$c" "$3" "$tps" "$wal"
}

# ---- bulk load into an empty indexed table -----------------------------------------------
bulk() {	# METHOD
	local m=$1 idx
	case $m in
	plain) idx="" ;;
	btree4) idx="CREATE INDEX ON ixb_bulk (((fp::bigint >> 48) & 65535));
		CREATE INDEX ON ixb_bulk (((fp::bigint >> 32) & 65535));
		CREATE INDEX ON ixb_bulk (((fp::bigint >> 16) & 65535));
		CREATE INDEX ON ixb_bulk ((fp::bigint & 65535));" ;;
	gin4) idx="CREATE INDEX ON ixb_bulk USING gin ((ARRAY[
		(((fp::bigint >> 48) & 65535))::int4, (65536 + ((fp::bigint >> 32) & 65535))::int4,
		(131072 + ((fp::bigint >> 16) & 65535))::int4, (196608 + (fp::bigint & 65535))::int4]));" ;;
	simhash) idx="CREATE INDEX ixb_bulk_fp ON ixb_bulk USING simhash (fp)${INCLUDE:+ INCLUDE (id)};" ;;
	esac
	bulk_once "$m" "$idx" "" || {
		# a failed load is a result too; retry with smaller insert batches
		sql "SELECT ixb_put('$run', '$size', $n, '$dataset', '$m', NULL, 'bulk_insert_error', NULL,
			\$e\$$(tail -1 "$work/bulk.err")\$e\$)" >/dev/null
		echo "   $m: FAILED: $(tail -1 "$work/bulk.err"); again with work_mem = 1MB"
		bulk_once "$m" "$idx" "SET work_mem = '1MB';" "work_mem = 1MB after a failure with the default" || {
			echo "   $m: failed again" >&2
			return 0
		}
	}
	if [ "$m" = simhash ]; then
		sql "SELECT simhash_index_check('ixb_bulk_fp', true)" >/dev/null
		echo "   simhash index after the bulk load: simhash_index_check(heapallindexed) passed"
	fi
	sql "DROP TABLE ixb_bulk" >/dev/null
}

bulk_once() {	# METHOD INDEX-SQL SETTINGS-SQL NOTE
	local m=$1 idx=$2 set=$3 note=${4:-}
	psql_run -tA 2>"$work/bulk.err" <<EOF
SET client_min_messages = warning;
$set
DROP TABLE IF EXISTS ixb_bulk;
CREATE TABLE ixb_bulk (id bigint, fp simhash64);
$idx
CHECKPOINT;
SELECT clock_timestamp() AS t0 \\gset
INSERT INTO ixb_bulk SELECT * FROM ${prefix}_plain WHERE id <= $bulk_rows;
SELECT ixb_put('$run', '$size', $n, '$dataset', '$m', NULL, 'bulk_insert_ms',
			   extract(epoch FROM clock_timestamp() - :'t0'::timestamptz) * 1000,
			   (SELECT count(*) FROM ixb_bulk) || ' rows' || coalesce(nullif(', $note', ', '), '')) \\g /dev/null
SELECT '   ' || rpad('$m', 8) || ' ' || round(value) || ' ms' FROM ixb_results
WHERE run = '$run' AND size = '$size' AND dataset = '$dataset' AND method = '$m' AND metric = 'bulk_insert_ms' \\g
EOF
}

# ---- main loop ---------------------------------------------------------------------------
seed_of() { case $1 in uniform) echo 0.11 ;; *) echo 0.22 ;; esac; }

one_block() {	# SIZE DATASET
	size=$1
	dataset=$2
	n=$(bench_rows_of "$size")
	size=$(echo "$size" | tr a-z A-Z)
	if { [ "$n" -ge 50000000 ] && [ -z "${FULL:-}" ]; } || [ -n "${LIGHT:-}" ]; then full=0; else full=1; fi
	if [ $full = 1 ]; then seqnq=${SEQ_NQ:-30}; truthnq=$nq; else seqnq=${SEQ_NQ:-10}; truthnq=$seqnq; fi
	prefix=ixb_${dataset:0:1}_$(echo "$size" | tr A-Z a-z)
	log "== $size rows ($n), $dataset, tables ${prefix}_*, $([ $full = 1 ] && echo 'all methods' || echo 'simhash and sequential scan only')"
	if [ $full = 1 ]; then check_disk $((n * 400)); else check_disk $((n * 200)); fi
	vars=(-v prefix="$prefix" -v run="$run" -v size="$size" -v n="$n" -v dataset="$dataset"
		-v full="$full" -v nq="$nq" -v seqnq="$seqnq" -v truthnq="$truthnq"
		-v include="$([ -n "${INCLUDE:-}" ] && echo 1 || echo 0)")

	sql "SELECT ixb_put('$run', '$size', $n, '$dataset', 'simhash', NULL, 'library', NULL, '$(so_md5)')" >/dev/null
	log "setup: rows and queries"
	psql_run "${vars[@]}" -v seed="$(seed_of "$dataset")" -o /dev/null -f "$here/setup.sql"
	log "index builds"
	psql_run "${vars[@]}" -o /dev/null -f "$here/build.sql"
	psql_run -c "SELECT '   ' || rpad(method, 12) || rpad(metric, 16) || round(value::numeric, 1) || coalesce(' ' || info, '')
		FROM ixb_results WHERE run = '$run' AND size = '$size' AND dataset = '$dataset'
		  AND metric IN ('build_ms', 'size_bytes', 'check_ms') ORDER BY at" -tA
	log "server-side latencies, recall"
	psql_run "${vars[@]}" -o /dev/null -f "$here/measure.sql"
	psql_run -tA -c "SELECT '   ' || rpad(method, 18) || rpad(coalesce('k=' || k, ''), 5) || rpad(metric, 14) || round(value::numeric, 3)
		FROM ixb_results WHERE run = '$run' AND size = '$size' AND dataset = '$dataset'
		  AND metric IN ('srv_p50_ms', 'recall', 'knn_same_distances', 'knn_same_rows') ORDER BY at"
	export_results

	if [ -z "${SKIP_CLIENT:-}" ]; then
		log "client side (pgbench -M prepared, -c 1, -T $client_t)"
		for k in 3 6; do
			client seq $k 0
			client seq_par2 $k 2
			client simhash $k 0
			if [ $full = 1 ]; then
				client btree4 $k 0
				client gin4 $k 0
			fi
		done
		if [ $full = 1 ]; then
			client btree4_mp 6 0
			client gin4_mp 6 0
		fi
		client knn_simhash 0 0
		client knn_simhash_tie 0 0
		client knn_seqsort 0 0
		export_results
	fi

	if [ $full = 1 ] && [ -z "${SKIP_INSERT:-}" ]; then
		log "single-row INSERT rate (pgbench -M prepared, $insert_t s each)"
		for round in $(seq 1 "$insert_rounds"); do
			for c in 1 2; do
				for m in plain btree4 gin4 simhash; do
					insert_rate $m $c "$round"
				done
			done
		done
		log "bulk load of $bulk_rows rows into an empty indexed table"
		for m in plain btree4 gin4 simhash; do
			bulk $m
		done
		export_results
	fi

	if [ -z "${KEEP:-}" ]; then
		psql_run -c "SET client_min_messages = warning" \
			-c "DROP TABLE IF EXISTS ${prefix}_plain, ${prefix}_btree4, ${prefix}_gin4, ${prefix}_simhash, ${prefix}_q" \
			-c "DELETE FROM ixb_found WHERE tag = '$size/$dataset'" \
			-c "DELETE FROM ixb_knn_d10 WHERE tag = '$size/$dataset'"
	fi
	sql "SELECT ixb_put('$run', '$size', $n, '$dataset', 'simhash', NULL, 'library_end', NULL, '$(so_md5)')" >/dev/null
	export_results
	log "done: $size $dataset"
}

if [ -n "$one" ]; then
	one_block "$1" "$2"
	exit 0
fi

wait_server() {
	for _ in $(seq 1 60); do
		pg_isready -q && return 0
		sleep 2
	done
	return 1
}

failed=()
for size in "${sizes[@]}"; do
	if [ "$(bench_rows_of "$size")" -ge 50000000 ] && [ -z "${FULL:-}" ]; then
		datasets=${DATASETS:-uniform}
	else
		datasets=${DATASETS:-uniform clustered}
	fi
	for dataset in $datasets; do
		attempt=0
		until "$0" --one "$size" "$dataset"; do
			attempt=$((attempt + 1))
			log "FAILED: $size $dataset (attempt $attempt)"
			wait_server || { echo "server unreachable" >&2; exit 1; }
			if [ $attempt -gt "${RETRIES:-1}" ]; then
				failed+=("$size/$dataset")
				break
			fi
			sql "DELETE FROM ixb_results WHERE run = '$run' AND size = '$(echo "$size" | tr a-z A-Z)' AND dataset = '$dataset'" >/dev/null
			log "retrying $size $dataset"
		done
	done
done
export_results
log "results: $results/run-$run.csv"
[ ${#failed[@]} -eq 0 ] || echo "FAILED (no results): ${failed[*]}" >&2
if [ "$(so_md5)" != "$so_start" ]; then
	echo "WARNING: simhash.so was reinstalled during the run ($so_start -> $(so_md5)); see metric 'library' per size and dataset" >&2
fi

# ---- report --------------------------------------------------------------------------------
if ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-matplotlib >/dev/null
	else
		echo "python3-matplotlib is missing: no plot" >&2
	fi
fi
if [ -n "${LIGHT:-}" ]; then
	# the light run's own tables, without touching the plot of the full runs
	/usr/bin/python3 "$here/report.py" "$results" >"$work/report-light.md"
	log "tables: $work/report-light.md"
	exit 0
fi
# the tracked plot is drawn from the tracked results only
plot=$here/latency_vs_n.png
[ "$results" = "$here/results" ] || plot=$results/latency_vs_n.png
/usr/bin/python3 "$here/report.py" "$results" --plot "$plot" >"$work/report.md"
log "tables: $work/report.md; plot: $plot"
