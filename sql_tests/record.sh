# sql_tests/record.sh -- sourced by the steps tools/test.sh runs as root
# (package.sh, pgxn.sh).  "record NAME ok|fail" appends "PASS NAME" or
# "FAIL NAME" to $SIMHASH_RESULTS (counted by sql_tests/run.sh) and prints
# it with the seconds since the previous record; SIMHASH_TEST_PREFIX
# ("pg17/") goes before NAME.
step_start=$SECONDS

record() {
	local result=FAIL
	[ "$2" = ok ] && result=PASS
	echo "$result ${SIMHASH_TEST_PREFIX:-}$1" >>"$SIMHASH_RESULTS"
	echo "$result ${SIMHASH_TEST_PREFIX:-}$1 ($((SECONDS - step_start)) s)"
	step_start=$SECONDS
}
