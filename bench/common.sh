# shellcheck shell=bash
# bench/common.sh -- shell helpers shared by the benchmarks (source it).
#
# bench_database: choose the database from the usual PG* variables.  When
# PGDATABASE is unset, use (and create if missing) the database
# simhash_bench, so that a benchmark never litters the default database.
# psql_run: psql without .psqlrc, quiet, stopping at the first error.
# bench_git: the checkout's short commit, " (src modified)" after it when
# src/ differs from it, "unknown" without git; also when the benchmark's
# user does not own the checkout (a run as postgres on root's clone).
# bench_rows_of: a row count from "1M", "250k", "5000000".

bench_database() {
	if [ -z "${PGDATABASE:-}" ]; then
		export PGDATABASE=simhash_bench
		if [ "$(psql -X -d postgres -tAc \
			"SELECT 1 FROM pg_database WHERE datname = 'simhash_bench'")" != 1 ]; then
			psql -X -q -d postgres -c "CREATE DATABASE simhash_bench"
		fi
	fi
}

psql_run() {
	psql -X -q -v ON_ERROR_STOP=1 "$@"
}

bench_git() {
	local dir commit modified=
	dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	commit=$(git -c safe.directory='*' -C "$dir" rev-parse --short HEAD 2>/dev/null) || commit=unknown
	git -c safe.directory='*' -C "$dir" diff --quiet HEAD -- ../src 2>/dev/null || modified=' (src modified)'
	echo "$commit$modified"
}

bench_rows_of() {
	case $1 in
	*[mM]) echo $((${1%[mM]} * 1000000)) ;;
	*[kK]) echo $((${1%[kK]} * 1000)) ;;
	*) echo "$1" ;;
	esac
}
