#!/bin/bash
# tools/test.sh -- the whole simhash test suite, from a fresh Debian 12 machine.
#
# Run as root from anywhere: installs the dependencies, builds the extension
# with -Werror, installs it, then runs every suite as the postgres user
# against throw-away clusters (sql_tests/run.sh).  Prints one line per test
# and a final "N passed, N failed"; exits non-zero if anything failed.
#
# PG_CONFIG selects the PostgreSQL installation to build, install and test
# against (default: the system's PostgreSQL 15); a private copy made with
# tools/dev-pg.sh keeps the system's installation untouched.
set -uo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" != 0 ]; then
	echo "test.sh: run me as root (it installs packages and the extension)" >&2
	exit 1
fi

tools/install-deps.sh || { echo "0 passed, 1 failed (dependencies)"; exit 1; }
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}

echo "== building and installing"
build_log=$(mktemp /tmp/simhash-build.XXXXXX)
if ! { make -s clean && make -s all && make -s install; } >"$build_log" 2>&1; then
	cat "$build_log"
	echo "0 passed, 1 failed (build)"
	exit 1
fi

# PostgreSQL refuses to run as root: test from a copy the postgres user owns
work=$(mktemp -d /tmp/simhash-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp -a . "$work/tree"
chown -R postgres: "$work"
runuser -u postgres -- env PG_CONFIG="$PG_CONFIG" bash "$work/tree/sql_tests/run.sh"
status=$?
if [ $status -ne 0 ] && [ -d "$work/tree/results" ]; then
	mkdir -p results
	cp -a "$work/tree"/results/. results/ 2>/dev/null
	cp -a "$work/tree"/regression.diffs . 2>/dev/null
	if [ -d "$work/tree/output_iso" ]; then
		rm -rf output_iso
		cp -a "$work/tree/output_iso" . 2>/dev/null
	fi
	echo "(failure output copied to ./results, ./regression.diffs and ./output_iso)"
fi
exit $status
