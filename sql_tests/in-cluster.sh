#!/bin/bash
# sql_tests/in-cluster.sh -- the suites that run inside one throw-away
# cluster; sql_tests/run.sh has set PGHOST, PGPORT, PGUSER and PG_CONFIG.
# Appends "PASS name" / "FAIL name" lines to $SIMHASH_RESULTS.
set -uo pipefail
cd "$(dirname "$0")/.."

record() {						# record NAME STATUS
	if [ "$2" = ok ]; then
		echo "PASS ${SIMHASH_TEST_PREFIX:-}$1" | tee -a "$SIMHASH_RESULTS"
	else
		echo "FAIL ${SIMHASH_TEST_PREFIX:-}$1" | tee -a "$SIMHASH_RESULTS"
	fi
}

# pg_regress (REGRESS) and isolation (ISOLATION) suites of the Makefile,
# run in the unpacked PGXN release when tools/test.sh made and installed one
# (sql_tests/release/pgxn.sh): that is the release's installcheck too
installcheck_dir=${SIMHASH_INSTALLCHECK_DIR:-.}
make -s -C "$installcheck_dir" PG_CONFIG="$PG_CONFIG" installcheck >installcheck.log 2>&1
installcheck_status=$?
while read -r name status; do
	record "regress/$name" "$status"
done < <(sed -nE -e 's/^(test |     |ok [0-9]+ +- )? *([A-Za-z0-9_-]+) +\.\.\. (ok|FAILED|failed).*/\2 \3/p' \
	-e 's/^ok [0-9]+ +[-+] +([A-Za-z0-9_-]+) +[0-9]+ ms.*/\1 ok/p' \
	-e 's/^not ok [0-9]+ +[-+] +([A-Za-z0-9_-]+) .*/\1 FAILED/p' installcheck.log)
# (pg_regress of 16 and later prints "ok 2 - name 123 ms" / "not ok 1 - name")
if grep -q "FAILED\|failed (ignored)\|could not\|diff command failed\|^not ok" installcheck.log ||
	! grep -qE "\.\.\. ok|^ok [0-9]" installcheck.log; then
	grep -qE "\.\.\. ok|^ok [0-9]" installcheck.log || { cat installcheck.log; record regress/harness fail; }
	[ -f "$installcheck_dir/regression.diffs" ] && head -100 "$installcheck_dir/regression.diffs"
fi
if [ "$installcheck_dir" != . ]; then
	record pgxn/installcheck "$([ $installcheck_status = 0 ] && echo ok)"
fi

# self-checking scripts: each exits non-zero on failure
for script in sql_tests/checks/*.py; do
	name=$(basename "$script" .py)
	if /usr/bin/python3 "$script"; then
		record "check/$name" ok
	else
		record "check/$name" fail
	fi
done
