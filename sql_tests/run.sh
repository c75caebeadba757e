#!/bin/bash
# sql_tests/run.sh -- run every suite against the installed extension.
#
# Run as a non-root user (the postgres user; tools/test.sh does that) from
# the source tree.  The server comes from $PG_CONFIG (default: pg_config on
# PATH), see tools/cluster.sh.  pg_regress and isolation suites and the
# self-checking scripts share one throw-away cluster; TAP tests start their
# own clusters.  Prints PASS/FAIL per suite and "N passed, N failed".
# SIMHASH_TEST_PREFIX (tools/test.sh: "pg17/") is put before every test
# name; with SIMHASH_RESULTS_OUT the PASS/FAIL lines are also written to
# that file, and the summary names the prefix.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
. tools/cluster.sh
results=$(mktemp)
export SIMHASH_RESULTS=$results
# results of the steps tools/test.sh ran as root (package, PGXN release)
if [ -n "${SIMHASH_PRE_RESULTS:-}" ] && [ -f "$SIMHASH_PRE_RESULTS" ]; then
	cat "$SIMHASH_PRE_RESULTS" >>"$results"
fi

echo "== pg_regress, isolation and self-checking suites ($("$PG_BINDIR/postgres" --version))"
cluster=$(mktemp -d /tmp/simhash-cluster.XXXXXX)
if cluster_start "$cluster" max_prepared_transactions=10; then
	bash sql_tests/in-cluster.sh
	cluster_stop "$cluster"
else
	echo "FAIL ${SIMHASH_TEST_PREFIX:-}cluster" | tee -a "$results"
fi

# TAP suites, one "make installcheck-tap" (PGXS's prove wiring) each
if compgen -G "sql_tests/t/*.pl" >/dev/null; then
	echo "== TAP suites"
	tap_logs=$(mktemp -d /tmp/simhash-tap.XXXXXX)
	for t in sql_tests/t/*.pl; do
		name=${SIMHASH_TEST_PREFIX:-}tap/$(basename "$t" .pl)
		log=$tap_logs/$(basename "$t").log
		if make -s --no-print-directory PG_CONFIG="$PG_CONFIG" installcheck-tap \
			PROVE_TESTS="$t" PROVE_FLAGS="-I sql_tests/t -v" >"$log" 2>&1; then
			echo "PASS $name" | tee -a "$results"
		else
			tail -30 "$log"
			echo "FAIL $name" | tee -a "$results"
		fi
	done
	rm -rf "$tap_logs"
fi

passed=$(grep -c '^PASS' "$results")
failed=$(grep -c '^FAIL' "$results")
if [ "$passed" -eq 0 ] && [ "$failed" -eq 0 ]; then
	failed=1		# nothing ran: that is a failure too
fi
if [ -n "${SIMHASH_RESULTS_OUT:-}" ]; then
	cp "$results" "$SIMHASH_RESULTS_OUT"
	echo "${SIMHASH_TEST_PREFIX:-}run.sh: $passed passed, $failed failed"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
