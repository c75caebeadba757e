#!/bin/bash
# sql_tests/pgxn.sh -- the PGXN release zip, as a user gets it.  Run as root
# (tools/test.sh does, after it has installed the extension with make).
#
# "make dist" in a scratch copy of the checkout; the zip is named from
# META.json's version and holds one directory of that name with META.json
# and only the files needed to build and test; unpacked into a fresh
# directory it builds, installs into $PG_CONFIG's PostgreSQL, and passes
# "make installcheck" in a throw-away cluster.  Appends "PASS pgxn/..." or
# "FAIL pgxn/..." lines to $SIMHASH_RESULTS.
set -uo pipefail
cd "$(dirname "$0")/.."
: "${SIMHASH_RESULTS:?}" "${PG_CONFIG:?}"

record() {						# record NAME ok|fail (and the seconds it took)
	local result=FAIL
	[ "$2" = ok ] && result=PASS
	echo "$result pgxn/$1" >>"$SIMHASH_RESULTS"
	echo "$result pgxn/$1 ($((SECONDS - step_start)) s)"
	step_start=$SECONDS
}
step_start=$SECONDS

work=$(mktemp -d /tmp/simhash-pgxn.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
name=simhash-$(python3 -c 'import json; print(json.load(open("META.json"))["version"])')
zip=$work/tree/$name.zip

echo "== PGXN release: $name.zip"
bash tools/copy-tree.sh "$work/tree"
# what a user needs to build, install and run installcheck, and nothing else
needed="^$name/(META\.json|Makefile|simhash\.control|README\.md|LICENSE|src/[^/]+\.(c|h|sql)"
needed+="|sql/[^/]+\.sql|expected/[^/]+\.out|sql_tests/isolation/(specs/[^/]+\.spec|expected/[^/]+\.out))$"
if make -s -C "$work/tree" dist PG_CONFIG="$PG_CONFIG" >"$work/dist.log" 2>&1 &&
	unzip -Z1 "$zip" >"$work/entries" &&
	grep -qx "$name/META.json" "$work/entries" &&
	! grep -v '/$' "$work/entries" | grep -vE "$needed"; then
	record zip ok
else
	cat "$work/dist.log"
	[ ! -f "$work/entries" ] || grep -v '/$' "$work/entries" | grep -vE "$needed" |
		sed 's/^/not needed: /'
	record zip fail
	exit 0
fi

# unpacked into a fresh directory: build and install
mkdir "$work/unpacked"
unzip -q "$zip" -d "$work/unpacked"
src=$work/unpacked/$name
if make -C "$src" -j"$(nproc)" PG_CONFIG="$PG_CONFIG" >"$work/build.log" 2>&1 &&
	make -C "$src" install PG_CONFIG="$PG_CONFIG" >>"$work/build.log" 2>&1; then
	record build ok
else
	tail -40 "$work/build.log"
	record build fail
	exit 0
fi

# make installcheck there, in a throw-away cluster (the isolation spec
# simhash_own_inserts prepares transactions)
cp tools/cluster.sh "$work/"
chown -R postgres: "$work"
if runuser -u postgres -- env PG_CONFIG="$PG_CONFIG" bash -c '
	. "$1/cluster.sh"
	cluster_start "$1/cluster" max_prepared_transactions=10 || exit 1
	make -C "$2" installcheck PG_CONFIG="$PG_CONFIG"
	status=$?
	cluster_stop "$1/cluster"
	exit $status' _ "$work" "$src" >"$work/installcheck.log" 2>&1; then
	record installcheck ok
else
	grep -E '^(test |not ok|ok )' "$work/installcheck.log"
	[ ! -f "$src/regression.diffs" ] || head -100 "$src/regression.diffs"
	tail -20 "$work/installcheck.log"
	record installcheck fail
fi
exit 0
