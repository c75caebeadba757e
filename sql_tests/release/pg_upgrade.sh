#!/bin/bash
# sql_tests/release/pg_upgrade.sh OLD_BINDIR NEW_BINDIR -- pg_upgrade of a
# cluster holding simhash objects from one PostgreSQL major version to a
# later one (tools/test.sh: the machine's 15 to 17 and to 18, in their
# environments).  Run as a non-root user (postgres); simhash must be
# installed in both installations.  LD_LIBRARY_PATH may name the libraries
# the old binaries need (tools/test.sh copies 15's into the environment).
#
# The old cluster gets simhash indexes (plain, INCLUDE, on a partitioned
# table), a fingerprint trigger and near-duplicate triggers (reject on a
# table, skip on a partitioned table).  Radius, nearest and tie-break
# queries and the triggers' answers are recorded with the indexes forced,
# the cluster is upgraded with pg_upgrade (--check first), and on the new
# server: every simhash index passes simhash_index_check(idx, true), the
# same queries return the same rows (and the rows a sequential scan
# returns), the triggers still reject and skip, and the indexes take new
# rows and still check.  Appends "PASS upgrade/..." or "FAIL upgrade/..."
# (after $SIMHASH_TEST_PREFIX) to $SIMHASH_RESULTS.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${SIMHASH_RESULTS:?}"
old=${1:?usage: pg_upgrade.sh OLD_BINDIR NEW_BINDIR}
new=${2:?usage: pg_upgrade.sh OLD_BINDIR NEW_BINDIR}
src=$PWD

. sql_tests/record.sh

work=$(mktemp -d /tmp/simhash-upgrade.XXXXXX)
trap '"$old/pg_ctl" -D "$work/old" -m immediate stop >/dev/null 2>&1
	"$new/pg_ctl" -D "$work/new" -m immediate stop >/dev/null 2>&1
	rm -rf "$work"' EXIT
cd "$work"
oldv=$("$old/postgres" --version | awk '{print $3}')
newv=$("$new/postgres" --version | awk '{print $3}')
echo "== pg_upgrade: PostgreSQL $oldv -> $newv"

free_port() {
	local port
	for port in $(shuf -i 20000-40000 -n 50); do
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			echo "$port"
			return 0
		fi
	done
	return 1
}
port_old=$(free_port)
port_new=$(free_port)
export PGHOST=$work PGUSER=postgres PGDATABASE=postgres
unset PGPASSWORD PGSERVICE PGPORT

start() {						# start BINDIR DATA PORT
	"$1/pg_ctl" -D "$2" -l "$2.log" -w -o "-p $3 -k $work -c listen_addresses=''" start \
		>/dev/null || { cat "$2.log"; return 1; }
}
stop() {						# stop BINDIR DATA
	"$1/pg_ctl" -D "$2" -m fast -w stop >/dev/null
}
sql() {							# sql BINDIR PORT FILE: psql -f FILE
	"$1/psql" -X -q -A -t -v ON_ERROR_STOP=1 -p "$2" -f "$3"
}

# the old cluster and its simhash objects
cat >setup.sql <<'EOF'
CREATE EXTENSION simhash;
CREATE FUNCTION fp_of(i int8) RETURNS simhash64 LANGUAGE sql IMMUTABLE AS
$$ SELECT ((hashint8(i)::int8 << 32) | (hashint8(-i)::int8 & 4294967295))::simhash64 $$;
-- 20,000 random fingerprints and 400 near-copies (1 to 3 bits away)
CREATE TABLE docs (id int8 PRIMARY KEY, g int, fp simhash64);
INSERT INTO docs SELECT i, i % 7, fp_of(i) FROM generate_series(1, 20000) i;
INSERT INTO docs SELECT 100000 + id, 0, (fp::int8 # (1::int8 << (id % 64)::int))::simhash64
	FROM docs WHERE id <= 200;
INSERT INTO docs SELECT 200000 + id, 1, (fp::int8 # 7::int8)::simhash64
	FROM docs WHERE id <= 200;
INSERT INTO docs VALUES (300000, 2, NULL);
CREATE INDEX docs_fp ON docs USING simhash (fp);
CREATE INDEX docs_fp_id ON docs USING simhash (fp) INCLUDE (id);
-- a partitioned table, its index on every partition, a skip trigger
CREATE TABLE parts (id int8, fp simhash64) PARTITION BY RANGE (id);
CREATE TABLE parts_low PARTITION OF parts FOR VALUES FROM (0) TO (10000);
CREATE TABLE parts_high PARTITION OF parts FOR VALUES FROM (10000) TO (1000000);
CREATE INDEX parts_fp ON parts USING simhash (fp);
CREATE INDEX parts_fp_id ON parts USING simhash (fp) INCLUDE (id);
INSERT INTO parts SELECT id, fp FROM docs WHERE id <= 20000;
CREATE TRIGGER b_skip BEFORE INSERT ON parts FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'skip');
-- a fingerprint trigger and a reject trigger
CREATE TABLE pages (id bigserial PRIMARY KEY, body text, fp simhash64);
CREATE INDEX pages_fp ON pages USING simhash (fp);
CREATE TRIGGER a_fingerprint BEFORE INSERT OR UPDATE OF body ON pages FOR EACH ROW
	EXECUTE FUNCTION simhash_fingerprint_trigger(fp, body);
CREATE TRIGGER b_reject BEFORE INSERT OR UPDATE ON pages FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'reject');
INSERT INTO pages (body) SELECT format('Page %s: %s, %s and %s.', i, md5(i::text),
	md5((i * 7)::text), md5((i * 13)::text)) FROM generate_series(1, 300) i;
VACUUM ANALYZE;
EOF

# The answers, with the indexes forced (and, for comparison, without).
# Each line starts with the query's name.
cat >queries.sql <<'EOF'
SET enable_seqscan = off;
SELECT 'radius', string_agg(id::text, ',' ORDER BY id) FROM docs WHERE fp <-> fp_of(42) <= 3;
SELECT 'radius-ball', count(*) FROM docs WHERE fp <@ simhash_ball(fp_of(7), 3);
SELECT 'radius-many', sum(n) FROM (SELECT (SELECT count(*) FROM docs d
	WHERE d.fp <-> q.fp <= 3) n FROM docs q WHERE q.id <= 50) s;
SELECT 'nearest', string_agg(id::text || ':' || d, ',') FROM
	(SELECT id, fp <-> fp_of(99) d FROM docs ORDER BY fp <-> fp_of(99) LIMIT 3) s;
SELECT 'nearest-tiebreak', string_agg(id::text || ':' || d, ',') FROM
	(SELECT id, fp <-> fp_of(5) d FROM docs ORDER BY fp <-> fp_of(5), id LIMIT 12) s;
SELECT 'nearest-tiebreak-desc', string_agg(id::text || ':' || d, ',') FROM
	(SELECT id, fp <-> fp_of(5) d FROM docs ORDER BY fp <-> fp_of(5), id DESC LIMIT 12) s;
SELECT 'parts-radius', string_agg(id::text, ',' ORDER BY id) FROM parts
	WHERE fp <-> fp_of(12345) <= 20;
SELECT 'parts-nearest', string_agg(id::text || ':' || d, ',') FROM
	(SELECT id, fp <-> fp_of(3) d FROM parts ORDER BY fp <-> fp_of(3), id LIMIT 8) s;
SELECT 'pages', count(*), count(fp) FROM pages;
SELECT 'pages-near', string_agg(id::text, ',' ORDER BY id) FROM pages
	WHERE fp <-> simhash('Page 17: ' || md5('17') || ', ' || md5('119') || ' and ' || md5('221') || '.') <= 3;
EOF

# The triggers: a near-copy of a page is rejected (the error's code and the
# key it names), a near-copy of a partitioned row is skipped.
cat >triggers.sql <<'EOF'
DO $$
DECLARE
	detail text;
BEGIN
	INSERT INTO pages (body) VALUES (format('Page %s: %s, %s and %s.', 17, md5('17'),
		md5('119'), md5('221')));
	RAISE NOTICE 'not rejected';
EXCEPTION WHEN exclusion_violation THEN
	GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
	RAISE NOTICE 'reject: % (%)', SQLERRM, detail;
END $$;
SELECT 'reject', count(*) FROM pages;
INSERT INTO parts SELECT 500000 + id, (fp::int8 # 3::int8)::simhash64 FROM docs WHERE id <= 30;
SELECT 'skip', count(*) FROM parts;
EOF

# the simhash indexes, each checked with heapallindexed
cat >check.sql <<'EOF'
SELECT 'check', c.relname, simhash_index_check(c.oid::regclass, true) IS NOT NULL
FROM pg_class c JOIN pg_am a ON a.oid = c.relam
WHERE a.amname = 'simhash' AND c.relkind = 'i' ORDER BY c.relname;
EOF

cat >writes.sql <<'EOF'
INSERT INTO docs SELECT 400000 + id, 3, (fp::int8 # 24::int8)::simhash64 FROM docs WHERE id <= 100;
INSERT INTO parts SELECT 600000 + i, fp_of(600000 + i) FROM generate_series(1, 100) i;
INSERT INTO pages (body) VALUES ('A new page after the upgrade, about nothing in particular.');
DELETE FROM docs WHERE id BETWEEN 1000 AND 1100;
VACUUM docs;
SELECT 'writes', count(*) FROM docs WHERE fp <-> fp_of(42) <= 5;
EOF
chmod 644 ./*.sql

# with data checksums in both: 18's initdb turns them on by default, and
# pg_upgrade needs the same setting on both sides
# Debian's 15.20 (and 17.12) store a column option pg_attver on every
# column, which sid's 18.6-3 does not know: its pg_restore then fails on
# any table, simhash or not.  Where the new server lacks it, the old
# cluster's user columns lose it before the upgrade (a catalog update, and
# a NOTE saying so).
: >strip.sql
if grep -q pg_attver "$old/postgres" && ! grep -q pg_attver "$new/postgres"; then
	echo "NOTE: $newv does not know $oldv's column option pg_attver: removing it from the old cluster's user columns"
	cat >strip.sql <<'EOF'
UPDATE pg_attribute SET attoptions = nullif(array(SELECT o FROM unnest(attoptions) o
	WHERE o NOT LIKE 'pg_attver=%'), '{}')
WHERE attrelid >= 16384 AND attoptions::text LIKE '%pg_attver=%';
EOF
fi

initdb_() {						# initdb_ BINDIR DATA
	"$1/initdb" -D "$2" -U postgres -A trust --no-sync --encoding=UTF8 --locale=C.UTF-8 -k \
		>"$2.initdb.log" 2>&1 || { cat "$2.initdb.log"; return 1; }
}

if initdb_ "$old" "$work/old" && start "$old" "$work/old" "$port_old" &&
	sql "$old" "$port_old" setup.sql >setup.out 2>&1 &&
	sql "$old" "$port_old" queries.sql >before.out 2>&1 &&
	sql "$old" "$port_old" triggers.sql >before-triggers.out 2>&1 &&
	sql "$old" "$port_old" check.sql >before-check.out 2>&1 &&
	sql "$old" "$port_old" strip.sql >strip.out 2>&1 &&
	stop "$old" "$work/old"; then
	record upgrade/old-cluster ok
else
	cat setup.out before.out before-triggers.out before-check.out strip.out 2>/dev/null | tail -n 40
	record upgrade/old-cluster fail
	exit 0
fi

if initdb_ "$new" "$work/new" &&
	"$new/pg_upgrade" --check -b "$old" -B "$new" -d "$work/old" -D "$work/new" \
		-p "$port_old" -P "$port_new" -s "$work" -U postgres >check.log 2>&1 &&
	"$new/pg_upgrade" -b "$old" -B "$new" -d "$work/old" -D "$work/new" \
		-p "$port_old" -P "$port_new" -s "$work" -U postgres >upgrade.log 2>&1; then
	record upgrade/pg_upgrade ok
else
	tail -n 30 check.log upgrade.log 2>/dev/null
	find "$work/new" -path '*pg_upgrade_output.d*' \( -name '*.txt' -o -name 'pg_upgrade_dump_*.log' \) \
		-exec tail -n 15 {} + 2>/dev/null
	record upgrade/pg_upgrade fail
	exit 0
fi

if ! start "$new" "$work/new" "$port_new"; then
	record upgrade/new-server fail
	exit 0
fi

# every index valid, as many as before
sql "$new" "$port_new" check.sql >after-check.out 2>&1
if [ "$(grep -c '^check|' after-check.out)" = 7 ] && diff -u before-check.out after-check.out; then
	record upgrade/index-check ok
else
	cat after-check.out
	record upgrade/index-check fail
fi

# the same answers as on the old server, and as a sequential scan's
sql "$new" "$port_new" queries.sql >after.out 2>&1
sed 's/^SET enable_seqscan = off;/SET enable_indexscan = off; SET enable_bitmapscan = off;/' \
	queries.sql >queries-seq.sql
sql "$new" "$port_new" queries-seq.sql >after-seq.out 2>&1
if [ "$(grep -c '|' before.out)" = 10 ] && diff -u before.out after.out &&
	diff -u before.out after-seq.out; then
	record upgrade/queries ok
else
	record upgrade/queries fail
fi
# the plans do use the indexes
if "$new/psql" -X -q -A -t -p "$port_new" -c 'SET enable_seqscan = off' \
	-c 'EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE fp <-> fp_of(42) <= 3' \
	-c 'EXPLAIN (COSTS OFF) SELECT id FROM docs ORDER BY fp <-> fp_of(5), id LIMIT 12' \
	>plans.out 2>&1 && [ "$(grep -cE 'Index Scan (on|using) docs_fp' plans.out)" = 2 ]; then
	record upgrade/plans ok
else
	cat plans.out
	record upgrade/plans fail
fi

# the triggers answer as before: reject (same key, same distance), skip
sql "$new" "$port_new" triggers.sql >after-triggers.out 2>&1
if grep -q 'reject: .*near' before-triggers.out && grep -q '^skip|20000$' before-triggers.out &&
	diff -u before-triggers.out after-triggers.out; then
	record upgrade/triggers ok
else
	cat before-triggers.out
	record upgrade/triggers fail
fi

# the upgraded indexes take new rows, deletes and vacuum, and still check
if sql "$new" "$port_new" writes.sql >writes.out 2>&1 &&
	sql "$new" "$port_new" check.sql >after-writes-check.out 2>&1 &&
	diff -u before-check.out after-writes-check.out; then
	record upgrade/writes ok
else
	cat writes.out
	record upgrade/writes fail
fi
stop "$new" "$work/new"
exit 0
