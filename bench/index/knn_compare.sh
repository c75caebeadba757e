#!/bin/bash
# bench/index/knn_compare.sh -- the ten nearest neighbours of two builds of
# the extension on the same rows, measured interleaved, with their ratio.
#
# Usage:  bench/index/knn_compare.sh BASE NEW [ROWS]
#         bench/index/knn_compare.sh 0af6b93 WORKTREE 1000000    (the last measured code)
#         bench/index/knn_compare.sh 0af6b93 9f1c118 3000000   (a bisect step)
#
# BASE and NEW are commits (anything git rev-parse takes), or WORKTREE for
# the files of this working tree as they are.  Each is built into a private
# copy of the system's PostgreSQL 15 (as tools/dev-pg.sh makes) with a
# cluster of its own, so both servers run side by side; the rows are made
# by the same deterministic SQL in both: ROWS (default 3000000) uniform
# codes hashint8extended(i, 42)::simhash64, and the clustered set (ROWS/100
# centres x 90 copies with 0-3 bits flipped, plus 10% random rows) with
# CLUSTERED=1.  Query fingerprints: 200 existing rows with two bits flipped.
# Each round times, in BASE then NEW then NEW then BASE order (ABBA, so a
# load that rises or falls over the round favours neither), a PL/pgSQL loop
# of "ORDER BY fp <-> q LIMIT 10" over the 200 queries, and TIEBREAK=1 the
# same with ", id" (the nearest sort); the first round only warms the cache.
# Printed: ms per query of each round, the median and the best per build,
# and NEW / BASE (> 1: NEW is slower).  The time is the backend's time on a
# CPU (/proc/self/schedstat), which other processes on a shared machine
# inflate far less than the wall clock (also printed); the ratio of the
# medians is the figure; rerun when the rounds scatter.
#
# Knobs: ROUNDS (5), KNNB_DIR (/tmp/knnb: builds, clusters, cached between
# runs; a commit is built once, WORKTREE every time unless REUSE_WORKTREE=1),
# SHARED_BUFFERS (1GB),
# KEEP=1 leaves the servers running.  Run as root (builds; the servers run
# as postgres).  Takes a few minutes at 3M rows, 10-15 at 10M.
set -euo pipefail

base_rev=${1:?usage: knn_compare.sh BASE NEW [ROWS]}
new_rev=${2:?usage: knn_compare.sh BASE NEW [ROWS]}
rows=${3:-3000000}
rounds=${ROUNDS:-5}
dir=${KNNB_DIR:-/tmp/knnb}
sb=${SHARED_BUFFERS:-1GB}
tiebreak=${TIEBREAK:-}
clustered=${CLUSTERED:-}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=../builds.sh
. "$here/../builds.sh"

# psql of build NAME
q() {
	local name=$1
	shift
	as_pg "$dir/pg-$name/usr/lib/postgresql/15/bin/psql" -X -q -v ON_ERROR_STOP=1 -tA \
		-h "$dir/cl-$name" -p "$(cat "$dir/port-$name")" -U postgres -d postgres "$@"
}

# load() NAME: the rows, their index and the queries, unless there already
load() {
	local name=$1 t=knnb_u_$rows
	[ -z "$clustered" ] || t=knnb_c_$rows
	q "$name" -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS simhash"
	if [ "$(q "$name" -c "SELECT count(*) FROM pg_class WHERE relname = '$t'")" = 0 ]; then
		log "$name: loading $t"
		if [ -z "$clustered" ]; then
			q "$name" -c "CREATE TABLE $t AS SELECT i AS id, hashint8extended(i, 42)::simhash64 AS fp FROM generate_series(1, $rows::int8) i"
		else
			# centre c: hashint8extended(c, 42); copy j flips (j % 4) bits
			# chosen by hashes of (c, j); 10% random rows; order shuffled
			q "$name" -c "CREATE TABLE $t AS
				SELECT row_number() OVER (ORDER BY hashint8extended(c * 97 + j, 7)) AS id, v::simhash64 AS fp
				FROM (SELECT c, j, hashint8extended(c, 42)
						# CASE WHEN j % 4 > 0 THEN 1::int8 << (abs(hashint8extended(c * 97 + j, 1)) % 64)::int ELSE 0 END
						# CASE WHEN j % 4 > 1 THEN 1::int8 << (abs(hashint8extended(c * 97 + j, 2)) % 64)::int ELSE 0 END
						# CASE WHEN j % 4 > 2 THEN 1::int8 << (abs(hashint8extended(c * 97 + j, 3)) % 64)::int ELSE 0 END AS v
					  FROM generate_series(1, $rows::int8 / 100) c, generate_series(1, 90) j
					  UNION ALL
					  SELECT -i, 0, hashint8extended(i, 43)
					  FROM generate_series(1, $rows::int8 - ($rows::int8 / 100) * 90) i) s"
		fi
		q "$name" -c "CREATE TABLE ${t}_q AS
			SELECT row_number() OVER (ORDER BY id) AS qid,
				   (fp::int8 # (1::int8 << (id % 64)::int) # (1::int8 << ((id * 7 + 3) % 64)::int))::simhash64 AS q
			FROM $t WHERE id % ($rows / 200) = 7 ORDER BY id LIMIT 200"
	fi
	# the index is this build's own: rebuilt for the working tree
	if [ "$name" = worktree ] || [ "$(q "$name" -c "SELECT count(*) FROM pg_class WHERE relname = '${t}_fp'")" = 0 ]; then
		log "$name: indexing $t"
		q "$name" -c "DROP INDEX IF EXISTS ${t}_fp" -c "CREATE INDEX ${t}_fp ON $t USING simhash (fp)" \
			-c "VACUUM ANALYZE $t" -c "VACUUM ANALYZE ${t}_q"
	fi
	# CPU time of the backend (/proc/self/schedstat, ns): a busy machine
	# stretches the wall clock far more than it does the time on a core
	q "$name" -c "CREATE OR REPLACE FUNCTION knnb_cpu_ns() RETURNS int8 LANGUAGE sql AS
		\$f\$ SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::int8 \$f\$"
	q "$name" -c "DROP FUNCTION IF EXISTS knnb_time(bool)" -c "CREATE FUNCTION knnb_time(tiebreak bool) RETURNS text LANGUAGE plpgsql AS \$f\$
		DECLARE t0 timestamptz; c0 int8; qv simhash64; n int := 0;
		BEGIN
			t0 := clock_timestamp();
			c0 := knnb_cpu_ns();
			FOR qv IN SELECT q FROM ${t}_q ORDER BY qid LOOP
				IF tiebreak THEN
					PERFORM id FROM $t ORDER BY fp <-> qv, id LIMIT 10;
				ELSE
					PERFORM id FROM $t ORDER BY fp <-> qv LIMIT 10;
				END IF;
				n := n + 1;
			END LOOP;
			RETURN round(((knnb_cpu_ns() - c0) / 1e6 / n)::numeric, 3) || ' ' ||
				round((extract(epoch FROM clock_timestamp() - t0) * 1000 / n)::numeric, 3);
		END \$f\$"
}

builds_start_pair "$base_rev" "$new_rev"
load "$a"
load "$b"

# the same answers from both (ids of the ten nearest of the first queries)
t=knnb_u_$rows
[ -z "$clustered" ] || t=knnb_c_$rows
check="SELECT string_agg(ids, ';' ORDER BY qid) FROM (SELECT qid, (SELECT string_agg(id::text, ',' ORDER BY d, id) FROM (SELECT id, fp <-> q AS d FROM $t ORDER BY fp <-> q, id LIMIT 10) x) AS ids FROM ${t}_q WHERE qid <= 20) s"
if [ "$(q "$a" -c "$check")" != "$(q "$b" -c "$check")" ]; then
	echo "warning: the two builds return different rows" >&2
fi

tb=false
[ -z "$tiebreak" ] || tb=true
res_a=()
res_b=()
wall_a=()
wall_b=()
for ((r = 0; r <= rounds; r++)); do
	x1=($(q "$a" -c "SELECT knnb_time($tb)"))
	y1=($(q "$b" -c "SELECT knnb_time($tb)"))
	y2=($(q "$b" -c "SELECT knnb_time($tb)"))
	x2=($(q "$a" -c "SELECT knnb_time($tb)"))
	if [ "$r" = 0 ]; then continue; fi	# warm-up
	res_a+=("${x1[0]}" "${x2[0]}")
	res_b+=("${y1[0]}" "${y2[0]}")
	wall_a+=("${x1[1]}" "${x2[1]}")
	wall_b+=("${y1[1]}" "${y2[1]}")
	echo "round $r  $a: ${x1[0]} ${x2[0]}  $b: ${y1[0]} ${y2[0]} CPU ms/query (wall: ${x1[1]} ${x2[1]} / ${y1[1]} ${y2[1]}), load $(cut -d' ' -f1 /proc/loadavg)"
done
python3 - "$a" "$b" "$rows" "${clustered:+clustered}" "$tiebreak" "${res_a[*]}" "${res_b[*]}" "${wall_a[*]}" "${wall_b[*]}" <<'EOF'
import statistics, sys
a, b, rows, cl, tb, ra, rb, wa, wb = sys.argv[1:]
ra = [float(x) for x in ra.split()]
rb = [float(x) for x in rb.split()]
wa = [float(x) for x in wa.split()]
wb = [float(x) for x in wb.split()]
ma, mb = statistics.median(ra), statistics.median(rb)
print(f"{rows} rows, {'clustered' if cl else 'uniform'}, ORDER BY fp <-> q{', id' if tb else ''} LIMIT 10, 200 queries, {len(ra)} timings each")
print(f"| build | CPU ms/query, median | best | wall ms/query, median | best |")
print(f"|---|---|---|---|---|")
print(f"| {a} (base) | {ma:.3f} | {min(ra):.3f} | {statistics.median(wa):.3f} | {min(wa):.3f} |")
print(f"| {b} (new) | {mb:.3f} | {min(rb):.3f} | {statistics.median(wb):.3f} | {min(wb):.3f} |")
print(f"new / base (CPU): median {mb / ma:.3f}x, best {min(rb) / min(ra):.3f}x")
EOF
