#!/bin/bash
# bench/index/pgvector.sh -- pgvector's HNSW index as a peer of the simhash
# index, on the tables that "KEEP=1 bench/index/run.sh SIZE" left.
#
# Usage:  IXB_RUN=<run id> bench/index/pgvector.sh SIZE [DATASET ...]
#         (DATASET: uniform clustered, the default)
#
# Records into ixb_results under the run id (default: the latest run of
# that size), prints the figures, re-exports the run's CSV to RESULTS_DIR
# (default bench/index/results) and drops the (size, dataset) tables.  Skipped
# with a message when the server has no "vector" extension available
# (Debian: postgresql-NN-pgvector).  What is measured: pgvector.sql.
# HNSW_MWM: maintenance_work_mem of the HNSW build (default 1GB; the graph
# takes about 0.72 KB a row with the defaults, so 10M rows need about 8GB to
# stay in memory).  HNSW_WORKERS: max_parallel_maintenance_workers of the
# build (default 0, a serial build like the other methods'; otherwise the
# build_ms row's info names the workers).  A progress log of the build:
# hnsw_progress.sh.  On the tables a KEEP=1 run leaves: pgvector_pair.sql
# (same-load pairs), pgvector_ef.sql (another ef_search),
# pgvector_parallel.sql (parallel build).  The tables of RESULTS.md from the
# run's CSV: hnsw_report.py.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
results=${RESULTS_DIR:-$here/results}
export PGDATABASE=${PGDATABASE:-simhash_index_bench}
export PGOPTIONS="-c jit=${JIT:-off} -c max_parallel_workers_per_gather=0 ${PGOPTIONS:-}"
sql() { psql -X -q -v ON_ERROR_STOP=1 -tA -c "$1"; }

size=$(echo "${1:?usage: pgvector.sh SIZE [DATASET ...]}" | tr a-z A-Z)
shift
datasets=("$@")
[ ${#datasets[@]} -gt 0 ] || datasets=(uniform clustered)

if [ "$(sql "SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'")" != 1 ]; then
	echo "pgvector.sh: the extension \"vector\" is not available on this server: skipped" >&2
	exit 0
fi
run=${IXB_RUN:-$(sql "SELECT run FROM ixb_results WHERE size = '$size' ORDER BY at DESC LIMIT 1")}
[ -n "$run" ] || { echo "pgvector.sh: no run of size $size in ixb_results" >&2; exit 1; }

for dataset in "${datasets[@]}"; do
	prefix=ixb_${dataset:0:1}_$(echo "$size" | tr A-Z a-z)
	n=$(sql "SELECT count(*) FROM ${prefix}_plain")
	echo "[$(date -u +%H:%M:%S)] == pgvector HNSW, $size $dataset, run $run"
	psql -X -q -v ON_ERROR_STOP=1 -v prefix="$prefix" -v run="$run" -v size="$size" \
		-v n="$n" -v dataset="$dataset" -v nq="${NQ:-200}" -v seqnq="${SEQ_NQ:-30}" \
		-v mwm="${HNSW_MWM:-1GB}" -v workers="${HNSW_WORKERS:-0}" \
		-o /dev/null -f "$here/pgvector.sql"
	psql -X -q -tA -c "SELECT '   ' || rpad(method, 16) || rpad(coalesce('k=' || k, ''), 5)
			|| rpad(metric, 16) || round(value::numeric, 4) || coalesce(' ' || info, '')
		FROM ixb_results WHERE run = '$run' AND size = '$size' AND dataset = '$dataset'
		  AND (method LIKE '%hnsw%' OR metric = 'knn_recall')
		  AND metric IN ('build_ms', 'size_bytes', 'table_bytes', 'srv_p50_ms', 'srv_p95_ms',
						 'recall', 'exact_queries', 'extra_rows', 'knn_recall', 'plan')
		ORDER BY at"
	if [ -z "${KEEP:-}" ]; then
		psql -X -q -c "SET client_min_messages = warning" \
			-c "DROP TABLE IF EXISTS ${prefix}_plain, ${prefix}_btree4, ${prefix}_gin4, ${prefix}_simhash, ${prefix}_hnsw, ${prefix}_q" \
			-c "DELETE FROM ixb_found WHERE tag = '$size/$dataset'" \
			-c "DELETE FROM ixb_knn_d10 WHERE tag = '$size/$dataset'"
	fi
done
mkdir -p "$results"
psql -X -q -v ON_ERROR_STOP=1 -c "\\copy (SELECT run, size, n, dataset, method, k, metric, value, info FROM ixb_results WHERE run = '$run' ORDER BY at) TO '$results/run-$run.csv' CSV HEADER"
echo "results: $results/run-$run.csv"
