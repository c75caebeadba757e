#!/bin/bash
# sql_tests/run.sh -- run every suite against the installed extension.
#
# Run as the postgres user from the source tree (tools/test.sh does that).
# pg_regress and isolation suites and the self-checking scripts share one
# pg_virtualenv cluster; TAP tests start their own clusters.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
results=$(mktemp)
export SIMHASH_RESULTS=$results

echo "== pg_regress, isolation and self-checking suites"
pg_virtualenv -o "max_prepared_transactions=10" bash sql_tests/in-cluster.sh

if compgen -G "sql_tests/t/*.pl" >/dev/null; then
	echo "== TAP suites"
	for t in sql_tests/t/*.pl; do
		name=tap/$(basename "$t" .pl)
		mkdir -p tmp_check
		if TESTDIR=$root PATH="/usr/lib/postgresql/15/bin:$PATH" \
			PERL5LIB=/usr/lib/postgresql/15/lib/pgxs/src/test/perl \
			PG_REGRESS=/usr/lib/postgresql/15/lib/pgxs/src/test/regress/pg_regress \
			prove -v "$t" >"tmp_check/$(basename "$t").log" 2>&1; then
			echo "PASS $name" | tee -a "$results"
		else
			tail -30 "tmp_check/$(basename "$t").log"
			echo "FAIL $name" | tee -a "$results"
		fi
	done
fi

passed=$(grep -c '^PASS' "$results")
failed=$(grep -c '^FAIL' "$results")
if [ "$passed" -eq 0 ] && [ "$failed" -eq 0 ]; then
	failed=1		# nothing ran: that is a failure too
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
