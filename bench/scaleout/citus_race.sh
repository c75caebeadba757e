#!/bin/bash
# bench/scaleout/citus_race.sh -- two sessions add near-copies through the
# guide's docs_add() at once, at each isolation level, on the cluster of
# citus_cluster.sh after citus_guide.sql has run (docs, doc_copies,
# body_of and docs_add exist).  Per round: session A adds a new document
# and holds its transaction open until session B waits for a block-key
# lock; B, at the round's level, first reads docs (so its worker snapshots
# are taken before the wait), then adds a near-copy; A commits.  The last
# round runs the guide's previous docs_add (no second look through new
# connections) at REPEATABLE READ: the race the second look closes.  A
# transaction that failed with 40001 is retried once.
#
# Run as a non-root user with PG_CONFIG naming the installation's pg_config.
set -uo pipefail
: "${PG_CONFIG:=pg_config}"
bin=$("$PG_CONFIG" --bindir)
q() { "$bin/psql" -X -h 127.0.0.1 -p 26000 -U postgres "$@"; }

q -q <<'SQL'
CREATE OR REPLACE FUNCTION docs_add_v1(new_id bigint, new_body text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	new_fp simhash64 := simhash(new_body);
	other bigint;
BEGIN
	PERFORM pg_advisory_xact_lock(4242, b << 16 | simhash_block(new_fp, b))
	FROM generate_series(0, 3) b ORDER BY b;
	SELECT id INTO other FROM docs WHERE fp <-> new_fp <= 3 LIMIT 1;
	IF FOUND THEN
		RAISE EXCEPTION 'near-duplicate of document %', other USING ERRCODE = '23P01';
	END IF;
	INSERT INTO docs (id, body) VALUES (new_id, new_body);
	RETURN new_id;
END $$;
SQL
# new documents and a near-copy of each (1 to 3 bits apart)
mapfile -t pairs < <(q -At -F ' ' -c "
SELECT c * 10, min(c * 10 + j) FROM generate_series(95000, 95300) c, generate_series(1, 9) j
WHERE simhash(body_of(c * 10)) <-> simhash(body_of(c * 10 + j)) BETWEEN 1 AND 3
GROUP BY c ORDER BY c LIMIT 4")
[ ${#pairs[@]} -eq 4 ] || { echo "no near-copy pairs: has citus_guide.sql run?" >&2; exit 1; }
q -q -c "DELETE FROM docs WHERE id >= 950000; DELETE FROM doc_copies WHERE id >= 950000"

n=0
for round in 'docs_add:READ COMMITTED' 'docs_add:REPEATABLE READ' 'docs_add:SERIALIZABLE' \
	'docs_add_v1:REPEATABLE READ'; do
	fn=${round%%:*} level=${round#*:}
	read -r base copy <<<"${pairs[$n]}"
	n=$((n + 1))
	echo "== $fn, B at $level: A adds $base and holds; B reads docs, then adds its near-copy $copy"
	q -At -c "SELECT 'distance ' || (simhash(body_of($base)) <-> simhash(body_of($copy)))
		|| ', shards ' || get_shard_id_for_distribution_column('docs', $base)
		|| ' and ' || get_shard_id_for_distribution_column('docs', $copy)"
	alog=$(mktemp)
	q -e -v ON_ERROR_STOP=1 >"$alog" 2>&1 <<SQL &
BEGIN;
SELECT $fn($base, body_of($base));
DO \$\$ BEGIN
	WHILE NOT EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory' AND NOT granted) LOOP
		PERFORM pg_sleep(0.05);
	END LOOP;
END \$\$;	-- until B waits for a block-key lock
COMMIT;
SQL
	a=$!
	until [ "$(q -At -c "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted")" -ge 4 ]; do
		sleep 0.05
	done
	blog=$(mktemp)
	q -e -v VERBOSITY=verbose >"$blog" 2>&1 <<SQL
BEGIN ISOLATION LEVEL $level;
SELECT count(*) AS docs_b_sees FROM docs;
SELECT $fn($copy, body_of($copy));
COMMIT;
SQL
	wait $a
	sed 's/^/B: /' "$blog"
	sed 's/^/A: /' "$alog"
	if grep -q 'ERROR:  40001' "$blog"; then
		echo "-- B retries its transaction, as the 40001 hint says"
		q -e -v VERBOSITY=verbose 2>&1 <<SQL | sed 's/^/B: /'
BEGIN ISOLATION LEVEL $level;
SELECT count(*) AS docs_b_sees FROM docs;
SELECT $fn($copy, body_of($copy));
COMMIT;
SQL
	fi
	rm -f "$alog" "$blog"
	q -c "SELECT count(*) AS near_copies_committed, string_agg(id::text, ', ' ORDER BY id) AS ids
		FROM docs WHERE id IN ($base, $copy)"
done
