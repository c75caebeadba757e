#!/bin/bash
# sql_tests/in-cluster.sh -- the suites that run inside one throw-away
# cluster; sql_tests/run.sh has set PGHOST, PGPORT, PGUSER and PG_CONFIG.
# Appends "PASS name" / "FAIL name" lines to $SIMHASH_RESULTS.
set -uo pipefail
cd "$(dirname "$0")/.."

record() {						# record NAME STATUS
	if [ "$2" = ok ]; then
		echo "PASS $1" | tee -a "$SIMHASH_RESULTS"
	else
		echo "FAIL $1" | tee -a "$SIMHASH_RESULTS"
	fi
}

# pg_regress (REGRESS) and isolation (ISOLATION) suites of the Makefile,
# run in the unpacked PGXN release when tools/test.sh made and installed one
# (sql_tests/release/pgxn.sh): that is the release's installcheck too.
# Each suite is a "make installcheck" of its own (PGXS stops at the first
# failing suite, which would leave the other unrun).  A suite passes only
# when make exits 0 and every test the Makefile lists is reported "ok"; a
# listed test the log does not report (the harness stopped before it)
# fails, and so does a make that fails, whatever its log says.
installcheck_dir=${SIMHASH_INSTALLCHECK_DIR:-.}
prefix=regress
[ "$installcheck_dir" != . ] && prefix=pgxn

# The value of a Makefile variable (REGRESS, ISOLATION) in $installcheck_dir
make_var() {
	printf 'print-%%:\n\t@echo $($*)\n' |
		make -s --no-print-directory -C "$installcheck_dir" PG_CONFIG="$PG_CONFIG" \
			-f Makefile -f - "print-$1"
}

# The result of each test in a pg_regress log, "name ok|FAILED|failed|not":
# "test name ... ok" (PostgreSQL 15), "ok 1 - name" / "not ok 1 - name" (16+)
regress_results() {
	sed -nE -e 's/^(test |     )? *([A-Za-z0-9_-]+) +\.\.\. (ok|FAILED|failed).*/\2 \3/p' \
		-e 's/^(ok|not) (ok )?[0-9]+ +[-+] +([A-Za-z0-9_-]+) .*/\3 \1/p' "$1"
}

# installcheck_suite VAR OTHER: run the tests VAR lists alone, record each
installcheck_suite() {
	local var=$1 other=$2 log status name result listed diffs
	local -A seen=()
	log=installcheck-${var,,}.log
	make -s -C "$installcheck_dir" PG_CONFIG="$PG_CONFIG" "$other=" installcheck >"$log" 2>&1
	status=$?
	while read -r name result; do
		seen[$name]=$result
	done < <(regress_results "$log")
	listed=$(make_var "$var")
	[ -n "$listed" ] || echo "in-cluster.sh: the Makefile lists no $var tests"
	for name in $listed; do
		record "regress/$name" "${seen[$name]:-not reported}"
	done
	if [ $status -ne 0 ] || [ -z "$listed" ]; then
		echo "== make installcheck ($var) exited with status $status:"
		tail -40 "$log"
		for diffs in "$installcheck_dir/regression.diffs" "$installcheck_dir/output_iso/regression.diffs"; do
			[ -f "$diffs" ] && head -100 "$diffs"
		done
	fi
	record "$prefix/installcheck-${var,,}" "$([ $status = 0 ] && [ -n "$listed" ] && echo ok)"
}
installcheck_suite REGRESS ISOLATION
installcheck_suite ISOLATION REGRESS

# self-checking scripts: each exits non-zero on failure
for script in sql_tests/checks/*.py; do
	name=$(basename "$script" .py)
	if /usr/bin/python3 "$script"; then
		record "check/$name" ok
	else
		record "check/$name" fail
	fi
done
