#!/bin/bash
# sql_tests/release/pgxn.sh DIR -- the PGXN release zip, as a user gets it.  Run as
# root (tools/test.sh does, after it has installed the extension with make).
#
# "make dist" in a scratch copy of the checkout; the zip is named from
# META.json's version and holds one directory of that name with META.json
# and only the files needed to build and test; unpacked into DIR (fresh)
# it builds and installs into $PG_CONFIG's PostgreSQL.  Exits 0 when it
# did: then "make installcheck" in DIR/simhash-VERSION is the release's
# last check, which tools/test.sh has sql_tests/in-cluster.sh run there.
# Appends "PASS pgxn/..." or "FAIL pgxn/..." lines to $SIMHASH_RESULTS.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${SIMHASH_RESULTS:?}" "${PG_CONFIG:?}"
dir=${1:?usage: sql_tests/release/pgxn.sh DIR}

. sql_tests/record.sh

work=$(mktemp -d /tmp/simhash-pgxn.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
name=simhash-$(python3 -c 'import json; print(json.load(open("META.json"))["version"])')
zip=$work/tree/$name.zip

echo "== PGXN release: $name.zip"
bash tools/copy-tree.sh "$work/tree"
# what a user needs to build, install and run installcheck, and nothing else
needed="^$name/(META\.json|Makefile|simhash\.control|README\.md|src/README|LICENSE|src/([a-z]+/)?[^/]+\.(c|h|sql)|src/[a-z]+/README"
needed+="|sql/[^/]+\.sql|expected/[^/]+\.out|sql_tests/isolation/(specs/[^/]+\.spec|expected/[^/]+\.out))$"
if make -s -C "$work/tree" dist PG_CONFIG="$PG_CONFIG" >"$work/dist.log" 2>&1 &&
	unzip -Z1 "$zip" >"$work/entries" &&
	grep -qx "$name/META.json" "$work/entries" &&
	! grep -v '/$' "$work/entries" | grep -vE "$needed"; then
	record pgxn/zip ok
else
	cat "$work/dist.log"
	[ ! -f "$work/entries" ] || grep -v '/$' "$work/entries" | grep -vE "$needed" |
		sed 's/^/not needed: /'
	record pgxn/zip fail
	exit 1
fi

# unpacked into a fresh directory: build and install
rm -rf "$dir"
mkdir -p "$dir"
unzip -q "$zip" -d "$dir"
src=$dir/$name
if make -C "$src" -j"$(nproc)" PG_CONFIG="$PG_CONFIG" >"$work/build.log" 2>&1 &&
	make -C "$src" install PG_CONFIG="$PG_CONFIG" >>"$work/build.log" 2>&1; then
	record pgxn/build ok
else
	tail -40 "$work/build.log"
	record pgxn/build fail
	exit 1
fi
exit 0
