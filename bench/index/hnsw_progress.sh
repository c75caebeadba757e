#!/bin/bash
# bench/index/hnsw_progress.sh -- a CSV line every INTERVAL seconds (60) of
# every CREATE INDEX in progress (pg_stat_progress_create_index), with the
# machine's load average: the build rate against the tuples already in the
# graph, kept even if a long build (pgvector's HNSW) has to be cancelled.
#
# Usage:  bench/index/hnsw_progress.sh OUT.csv [INTERVAL]   (PG* variables
#         name the server; stops when killed)
set -euo pipefail
out=${1:?usage: hnsw_progress.sh OUT.csv [INTERVAL]}
interval=${2:-60}
[ -s "$out" ] || echo "at,load1,load5,pid,index,phase,tuples_done,tuples_total,elapsed_s" >"$out"
while :; do
	load=$(cut -d' ' -f1,2 /proc/loadavg | tr ' ' ,)
	psql -X -q -tA -F, -d "${PGDATABASE:-postgres}" -c "
		SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), '$load', p.pid,
			   p.index_relid::regclass, p.phase, p.tuples_done, p.tuples_total,
			   round(extract(epoch FROM now() - a.query_start))
		FROM pg_stat_progress_create_index p JOIN pg_stat_activity a USING (pid)" >>"$out" || true
	sleep "$interval"
done
