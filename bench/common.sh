# shellcheck shell=bash
# bench/common.sh -- shell helpers shared by the benchmarks (source it).
#
# bench_database: choose the database from the usual PG* variables.  When
# PGDATABASE is unset, use (and create if missing) the database
# simhash_bench, so that a benchmark never litters the default database.
# psql_run: psql without .psqlrc, quiet, stopping at the first error.

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
