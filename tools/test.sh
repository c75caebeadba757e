#!/bin/bash
# tools/test.sh -- the whole simhash test suite, from a fresh Debian 12 machine.
#
# Run as root from anywhere: installs the dependencies, builds, installs,
# tests and purges the Debian package in the system's PostgreSQL
# (sql_tests/release/package.sh), builds the extension with -Werror and installs
# it, builds and installs the PGXN release zip (sql_tests/release/pgxn.sh), then
# runs every suite as the postgres user against throw-away clusters
# (sql_tests/run.sh; the pg_regress and isolation suites in the unpacked
# release).
# Prints one line per test and a final "N passed, N failed"; exits non-zero
# if anything failed.
#
# PG_CONFIG selects the PostgreSQL installation to build, install and test
# against (default: the system's PostgreSQL 15); a private copy made with
# tools/dev-pg.sh keeps the system's installation untouched, except for the
# package test, which is about the system's installation.
set -uo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" != 0 ]; then
	echo "test.sh: run me as root (it installs packages and the extension)" >&2
	exit 1
fi

tools/install-deps.sh || { echo "0 passed, 1 failed (dependencies)"; exit 1; }
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}

work=$(mktemp -d /tmp/simhash-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
pre_results=$work/results.pre
: >"$pre_results"

# The Debian package, built, installed into the system's PostgreSQL 15,
# tested and purged -- before "make install" below, which may install into
# the same system (the package test first removes files of an earlier one).
# One package test at a time on this machine.
(
	flock 9
	SIMHASH_RESULTS=$pre_results bash sql_tests/release/package.sh
) 9>/run/lock/simhash-package-test.lock

echo "== building and installing"
build_log=$(mktemp /tmp/simhash-build.XXXXXX)
if ! { make -s clean && make -s all && make -s install; } >"$build_log" 2>&1; then
	cat "$build_log"
	echo "0 passed, 1 failed (build)"
	exit 1
fi

# The PGXN release zip, unpacked, built and installed (over the files just
# installed, from the same sources): the suites below test that build, and
# the pg_regress and isolation suites run in the unpacked release, which is
# its installcheck.  Without it, they run in the checkout.
installcheck_dir=
if SIMHASH_RESULTS=$pre_results bash sql_tests/release/pgxn.sh "$work/pgxn"; then
	installcheck_dir=$(echo "$work"/pgxn/simhash-*)
else
	make -s install >"$build_log" 2>&1 || cat "$build_log"
fi

# PostgreSQL refuses to run as root: test from a copy the postgres user owns
cp -a . "$work/tree"
chown -R postgres: "$work"
runuser -u postgres -- env PG_CONFIG="$PG_CONFIG" SIMHASH_PRE_RESULTS="$pre_results" \
	SIMHASH_INSTALLCHECK_DIR="$installcheck_dir" bash "$work/tree/sql_tests/run.sh"
status=$?
installcheck_dir=${installcheck_dir:-$work/tree}
if [ $status -ne 0 ] && [ -d "$installcheck_dir/results" ]; then
	mkdir -p results
	cp -a "$installcheck_dir"/results/. results/ 2>/dev/null
	cp -a "$installcheck_dir"/regression.diffs . 2>/dev/null
	if [ -d "$installcheck_dir/output_iso" ]; then
		rm -rf output_iso
		cp -a "$installcheck_dir/output_iso" . 2>/dev/null
	fi
	echo "(failure output copied to ./results, ./regression.diffs and ./output_iso)"
fi
exit $status
