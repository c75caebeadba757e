#!/bin/bash
# bench/scaleout/run.sh -- one server against two postgres_fdw shards on the
# same machine: a radius-3 search, the 10 nearest, and listing every
# near-duplicate pair at k = 3.
#
#   1. starts three throw-away servers (tools/cluster.sh): a coordinator and
#      two shards; the coordinator also holds the single-server table;
#   2. setup.sql: NROWS rows (default 2M) in sc_local on the coordinator and,
#      through the coordinator, in the sharded docs and doc_blocks (timed);
#      the shards then build their simhash indexes at the same time (timed);
#   3. pgbench -M prepared -c 1, T seconds, ROUNDS rounds alternating: the
#      radius-3 search and the 10 nearest, single server against sharded
#      (the README's forms: the partitioned table, and for the nearest also
#      the per-shard LIMIT form); every query is first checked to return the
#      single server's rows;
#   4. all pairs within 3 (count(*) of the pair query, so the pairs reach
#      the coordinator but no client): the single server's self-join; the
#      README's recipe (each row copied to the shard of each of its blocks,
#      each shard pairing its copies); the naive self-join of the partitioned
#      table on the coordinator, which fetches every row; with BLOCKS=1 also
#      the earlier design, a table of one row per block joined on the block
#      (one round: it is slow).
#
# Run as a non-root user that can run PostgreSQL (tools/test.sh's postgres
# user), with PG_CONFIG naming the installation that has simhash installed.
# Knobs: NROWS (2000000), T (15), ROUNDS (2), BLOCKS=1, KEEP=1 (leave the
# servers running and print how to reach them).
# Results: printed, and bench/data/scaleout/results.txt.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$root/bench/data/scaleout
mkdir -p "$out"
NROWS=${NROWS:-2000000}
T=${T:-15}
ROUNDS=${ROUNDS:-2}
BLOCKS=${BLOCKS:-0}
. "$root/tools/cluster.sh"

work=$(mktemp -d /tmp/simhash-scaleout.XXXXXX)
conf=(shared_buffers=2GB work_mem=64MB maintenance_work_mem=1GB jit=off
	max_wal_size=8GB checkpoint_timeout=30min autovacuum=off)
declare -A host port
for n in shard0 shard1 coord; do
	cluster_start "$work/$n" "${conf[@]}"
	host[$n]=$PGHOST
	port[$n]=$PGPORT
done
stop_all() {
	if [ -z "${KEEP:-}" ]; then
		for n in coord shard0 shard1; do cluster_stop "$work/$n"; done
		rm -rf "$work"
	else
		echo "servers kept: coordinator PGHOST=${host[coord]} PGPORT=${port[coord]};" \
			"shards on ports ${port[shard0]} ${port[shard1]}"
	fi
}
trap stop_all EXIT

on() {							# on NODE psql-args...
	local n=$1
	shift
	psql -X -q -v ON_ERROR_STOP=1 -h "${host[$n]}" -p "${port[$n]}" -d postgres "$@"
}
result() {						# result NAME VALUE
	echo "$1,$2" | tee -a "$out/results.txt"
}
# milliseconds of a statement, from psql's \timing
timed() {						# timed NODE SQL
	on "$1" -c '\timing on' -c "$2" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1
}

: >"$out/results.txt"
result postgres "$("$PG_BINDIR/postgres" --version)"
result rows "$NROWS"
result cpus "$(nproc)"

echo "== setup: $NROWS rows"
for i in 0 1; do on shard$i -v i=$i -f "$here/shard.sql"; done
on coord -v nrows="$NROWS" -v blocks="$BLOCKS" \
	-v shard0_host="${host[shard0]}" -v shard0_port="${port[shard0]}" \
	-v shard1_host="${host[shard1]}" -v shard1_port="${port[shard1]}" \
	-f "$here/setup.sql" >"$out/setup.log"
awk '/^(build|load)_/ { name = $1 } /^Time:/ && name { print name "_ms," $2; name = "" }' \
	"$out/setup.log" | tee -a "$out/results.txt"
start=$(date +%s.%N)
for i in 0 1; do
	on shard$i -c "SET maintenance_work_mem = '1GB'" \
		-c "CREATE INDEX docs_p${i}_fp ON docs_p$i USING simhash (fp)" &
done
wait
result build_simhash_indexes_both_shards_at_once_ms "$(echo "($(date +%s.%N) - $start) * 1000" | bc)"
for i in 0 1; do on shard$i -c "VACUUM ANALYZE"; done
on coord -c "ANALYZE docs"
result shard_rows "$(on coord -tAc "SELECT string_agg(n::text, ' ') FROM (SELECT count(*) n FROM docs_p0 UNION ALL SELECT count(*) FROM docs_p1) s")"
result shard_copies "$(on coord -tAc "SELECT string_agg(n::text, ' ') FROM (SELECT count(*) n FROM doc_copies_p0 UNION ALL SELECT count(*) FROM doc_copies_p1) s")"

echo "== radius 3 and 10 nearest: the sharded forms return the single server's rows"
check=$(on coord -tA <<'SQL'
SELECT count(*) FILTER (WHERE l.r IS DISTINCT FROM s.r) || ' of ' || count(*) || ' queries differ; '
	   || sum(l.n) || ' rows found'
FROM queries q,
	 LATERAL (SELECT count(*) n, string_agg(id::text, ',' ORDER BY id) r FROM sc_local WHERE fp <-> q.fp <= 3) l,
	 LATERAL (SELECT string_agg(id::text, ',' ORDER BY id) r FROM docs WHERE fp <-> q.fp <= 3) s;
SELECT count(*) FILTER (WHERE l.r IS DISTINCT FROM s.r) || ' of ' || count(*) || ' nearest-neighbour queries differ'
FROM (SELECT * FROM queries WHERE qid <= 200) q,
	 LATERAL (SELECT string_agg(d::text, ',') r FROM
			  (SELECT fp <-> q.fp d FROM sc_local ORDER BY fp <-> q.fp LIMIT 10) x) l,
	 LATERAL (SELECT string_agg(d::text, ',') r FROM
			  (SELECT d FROM ((SELECT fp <-> q.fp d FROM docs_p0 ORDER BY fp <-> q.fp LIMIT 10)
							  UNION ALL (SELECT fp <-> q.fp d FROM docs_p1 ORDER BY fp <-> q.fp LIMIT 10)) u
			   ORDER BY d LIMIT 10) x) s;
SQL
)
echo "$check"
result correctness "$(echo "$check" | tr '\n' ';')"

cat >"$work/radius_single.sql" <<'SQL'
\set q random(1, 1000)
SELECT id FROM sc_local WHERE fp <-> (SELECT fp FROM queries WHERE qid = :q) <= 3;
SQL
cat >"$work/radius_sharded.sql" <<'SQL'
\set q random(1, 1000)
SELECT id FROM docs WHERE fp <-> (SELECT fp FROM queries WHERE qid = :q) <= 3;
SQL
cat >"$work/knn_single.sql" <<'SQL'
\set q random(1, 1000)
SELECT id, fp <-> (SELECT fp FROM queries WHERE qid = :q) AS d FROM sc_local
ORDER BY fp <-> (SELECT fp FROM queries WHERE qid = :q) LIMIT 10;
SQL
cat >"$work/knn_sharded_partitioned.sql" <<'SQL'
\set q random(1, 1000)
SELECT id, fp <-> (SELECT fp FROM queries WHERE qid = :q) AS d FROM docs
ORDER BY fp <-> (SELECT fp FROM queries WHERE qid = :q) LIMIT 10;
SQL
cat >"$work/knn_sharded_per_shard.sql" <<'SQL'
\set q random(1, 1000)
WITH nearest AS MATERIALIZED (
	(SELECT id, fp <-> (SELECT fp FROM queries WHERE qid = :q) AS d FROM docs_p0
	 ORDER BY fp <-> (SELECT fp FROM queries WHERE qid = :q) LIMIT 10)
	UNION ALL
	(SELECT id, fp <-> (SELECT fp FROM queries WHERE qid = :q) AS d FROM docs_p1
	 ORDER BY fp <-> (SELECT fp FROM queries WHERE qid = :q) LIMIT 10))
SELECT id, d FROM nearest ORDER BY d, id LIMIT 10;
SQL
echo "== pgbench -M prepared -c 1 -T $T, $ROUNDS rounds"
for round in $(seq 1 "$ROUNDS"); do
	for s in radius_single radius_sharded knn_single knn_sharded_partitioned knn_sharded_per_shard; do
		lat=$(pgbench -n -M prepared -c 1 -T "$T" -h "${host[coord]}" -p "${port[coord]}" \
			-f "$work/$s.sql" postgres 2>/dev/null | sed -n 's/^latency average = \([0-9.]*\) ms/\1/p')
		result "${s}_latency_ms_round$round" "$lat"
	done
done

echo "== all pairs within 3"
pairs_single='SELECT a.id, b.id FROM sc_local a JOIN sc_local b ON a.fp <-> b.fp <= 3 AND a.id < b.id'
pairs_naive='SELECT a.id, b.id FROM docs a JOIN docs b ON a.fp <-> b.fp <= 3 AND a.id < b.id'
pairs_blocks='SELECT a.id AS id1, b.id AS id2, a.fp <-> b.fp AS distance
FROM doc_blocks a JOIN doc_blocks b ON a.block = b.block AND a.key = b.key
WHERE a.id < b.id AND a.fp <-> b.fp <= 3
  AND (a.block < 1 OR simhash_block(a.fp, 0) <> simhash_block(b.fp, 0))
  AND (a.block < 2 OR simhash_block(a.fp, 1) <> simhash_block(b.fp, 1))
  AND (a.block < 3 OR simhash_block(a.fp, 2) <> simhash_block(b.fp, 2))'
digest="SELECT count(*) || ' ' || md5(string_agg(id1 || '-' || id2, ',' ORDER BY id1, id2)) FROM"
result pairs_single "$(on coord -tAc "$digest (SELECT a.id id1, b.id id2 FROM sc_local a JOIN sc_local b ON a.fp <-> b.fp <= 3 AND a.id < b.id) s")"
result pairs_sharded "$(on coord -tAc "$digest doc_pairs")"
on coord -c "EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM doc_pairs" >"$out/pairs_sharded.plan"
on shard0 -c "EXPLAIN DECLARE c CURSOR FOR SELECT * FROM doc_pairs_p0" >"$out/shard0_pairs.plan"
for round in $(seq 1 "$ROUNDS"); do
	result "pairs_single_server_ms_round$round" "$(timed coord "SELECT count(*) FROM ($pairs_single) s")"
	result "pairs_sharded_copies_ms_round$round" "$(timed coord "SELECT count(*) FROM doc_pairs")"
done
result pairs_naive_coordinator_join_ms "$(timed coord "SELECT count(*) FROM ($pairs_naive) s")"
on coord -c "EXPLAIN (VERBOSE, COSTS OFF) $pairs_naive" >"$out/pairs_naive.plan"
if [ "$BLOCKS" = 1 ]; then
	on coord -c "ANALYZE doc_blocks"
	result pairs_block_table "$(on coord -tAc "SET enable_partitionwise_join = on; $digest ($pairs_blocks) s")"
	result pairs_block_table_join_on_shards_ms \
		"$(timed coord "SET enable_partitionwise_join = on; SELECT count(*) FROM ($pairs_blocks) s")"
fi
echo "results in $out/results.txt"
