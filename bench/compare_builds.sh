#!/bin/bash
# bench/compare_builds.sh -- two builds of simhash.so in one PostgreSQL,
# alternated session by session (A B B A per round), over the index,
# planner and ingest measurements of bench/compare/round.sql; prints, per
# measurement, the median CPU ms of each build and the median over rounds
# of the per-round ratio B/A, beside stock-PostgreSQL baselines ("base: ...")
# measured in the same sessions (their B/A shows the noise).
#
#   PG_CONFIG=... PGHOST=... PGPORT=... bash bench/compare_builds.sh A.so B.so [ROUNDS]
#
# A.so and B.so: two builds of the extension for the PostgreSQL of PG_CONFIG,
# with the same SQL script and on-disk index format (the rows and indexes of
# bench/compare/setup.sql are made once and read by both).  Between sessions
# $libdir/simhash.so is replaced by rename (a running backend keeps the file
# it mapped, as bench/index/radius.sh does); each session is a new backend
# that LOADs the library first.  Leaves B.so installed.  Run as root; psql
# runs as postgres.  The server must be able to write COPYFILE.
#
# Knobs: ROUNDS (5; argument 3), DB (postgres), N (1000000: rows of the
# uniform and clustered tables; the planner table cb_pl is always 1M),
# ING_BASE (300000 rows in the ingest table), ING_NEW (100000 rows COPYed),
# COPYFILE (/tmp/compare_builds.copy), SKIP_SETUP=1 (reuse the tables;
# cb_r, the results, is emptied unless KEEP_RESULTS=1), ROUND_SQL (file
# under bench/compare/ run per session: round.sql, or focus_round.sql for
# two measurements and their baselines in short sessions).
#
# Time per session about 30-40 s at the defaults on 2 shared cores; the
# setup about 10 s.  The CPU time of the backend (/proc/self/schedstat) is
# the figure: on a loaded machine the wall clock also counts waiting for a
# core.  Result counts (rows found, pairs, links) must agree between
# builds: a line "MISMATCH" says they do not.
set -euo pipefail
a_so=${1:?usage: compare_builds.sh A.so B.so [ROUNDS]}
b_so=${2:?usage: compare_builds.sh A.so B.so [ROUNDS]}
rounds=${3:-${ROUNDS:-5}}
db=${DB:-postgres}
n=${N:-1000000}
copyfile=${COPYFILE:-/tmp/compare_builds.copy}
libdir=$("${PG_CONFIG:-pg_config}" --pkglibdir)
bindir=$("${PG_CONFIG:-pg_config}" --bindir)
here=$(cd "$(dirname "$0")" && pwd)

log() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }

install_so() {
	cp "$1" "$libdir/simhash.so.tmp"
	mv "$libdir/simhash.so.tmp" "$libdir/simhash.so"
}

q() {
	runuser -u postgres -- env PGHOST="${PGHOST:-}" PGPORT="${PGPORT:-5432}" \
		"$bindir/psql" -X -q -v ON_ERROR_STOP=1 -d "$db" "$@"
}

if [ -z "${SKIP_SETUP:-}" ]; then
	install_so "$b_so"
	log "setup: N=$n"
	q -v n="$n" -v ing_base="${ING_BASE:-300000}" -v ing_new="${ING_NEW:-100000}" \
		-v copyfile="$copyfile" -f "$here/compare/setup.sql" >/dev/null
elif [ -z "${KEEP_RESULTS:-}" ]; then
	q -c "DELETE FROM cb_r"
fi

for r in $(seq 1 "$rounds"); do
	for label in A B B A; do
		if [ "$label" = A ]; then install_so "$a_so"; else install_so "$b_so"; fi
		log "round $r: $label (load $(cut -d' ' -f1 /proc/loadavg))"
		q -v label="$label" -v round="$r" -v copyfile="$copyfile" -f "$here/compare/${ROUND_SQL:-round.sql}" >/dev/null
	done
done
install_so "$b_so"

q -tA -f "$here/compare/report.sql"
