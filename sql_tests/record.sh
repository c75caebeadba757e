# sql_tests/record.sh -- sourced by the steps tools/test.sh runs as root
# (package.sh, pgxn.sh).  "record NAME ok|fail" appends "PASS NAME" or
# "FAIL NAME" to $SIMHASH_RESULTS (counted by sql_tests/run.sh) and prints
# it with the seconds since the previous record.
step_start=$SECONDS

record() {
	local result=FAIL
	[ "$2" = ok ] && result=PASS
	echo "$result $1" >>"$SIMHASH_RESULTS"
	echo "$result $1 ($((SECONDS - step_start)) s)"
	step_start=$SECONDS
}
