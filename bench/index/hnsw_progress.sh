#!/bin/bash
# bench/index/hnsw_progress.sh -- a CSV line every INTERVAL seconds (60) of
# every CREATE INDEX in progress (pg_stat_progress_create_index), with the
# machine's load average: the build rate against the tuples already in the
# graph, kept even if a long build (pgvector's HNSW) has to be cancelled.
# cpu_s is the building backend's CPU time (/proc/PID/stat, utime + stime;
# the server must run on this machine), to tell the machine's load from the
# build's own slowing down.
#
# Usage:  bench/index/hnsw_progress.sh OUT.csv [INTERVAL]   (PG* variables
#         name the server; stops when killed)
set -euo pipefail
out=${1:?usage: hnsw_progress.sh OUT.csv [INTERVAL]}
interval=${2:-60}
[ -s "$out" ] || echo "at,load1,load5,pid,index,phase,tuples_done,tuples_total,elapsed_s,cpu_s" >"$out"
hz=$(getconf CLK_TCK)
while :; do
	load=$(cut -d' ' -f1,2 /proc/loadavg | tr ' ' ,)
	psql -X -q -tA -F, -d "${PGDATABASE:-postgres}" -c "
		SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), '$load', p.pid,
			   p.index_relid::regclass, p.phase, p.tuples_done, p.tuples_total,
			   round(extract(epoch FROM now() - a.query_start))
		FROM pg_stat_progress_create_index p JOIN pg_stat_activity a USING (pid)" |
		while IFS= read -r line; do
			pid=$(echo "$line" | cut -d, -f4)
			# fields 14 and 15 of /proc/PID/stat (after the parenthesised name)
			cpu=$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null |
				awk -v hz="$hz" '{printf "%.1f", ($12 + $13) / hz}')
			echo "$line,$cpu"
		done >>"$out" || true
	sleep "$interval"
done
