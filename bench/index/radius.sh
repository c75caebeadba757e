#!/bin/bash
# bench/index/radius.sh -- radius.sql rounds of two builds of simhash.so,
# interleaved (old, new, new, old, ...), each round a new session.
#
#   PG_CONFIG=... bash bench/index/radius.sh OLD.so NEW.so ROUNDS DB n words nq
#
# Swaps $libdir/simhash.so by rename between sessions (a running backend
# keeps the file it mapped); the on-disk index format of both builds must
# be the same.  Leaves NEW.so installed.  Psql runs as the postgres user,
# with the PG* environment of the caller; then radius_report.sql.
set -euo pipefail
old=$1 new=$2 rounds=$3 db=$4 n=$5 words=$6 nq=$7
libdir=$("${PG_CONFIG:-pg_config}" --pkglibdir)
here=$(cd "$(dirname "$0")" && pwd)

install_so() {
	cp "$1" "$libdir/simhash.so.tmp"
	mv "$libdir/simhash.so.tmp" "$libdir/simhash.so"
}

run() {
	runuser -u postgres -- env PGHOST="$PGHOST" PGPORT="$PGPORT" \
		psql -X -q -d "$db" -v n="$n" -v words="$words" -v nq="$nq" \
		-v label="$1" -v round="$2" -f "$here/radius.sql"
}

for r in $(seq 1 "$rounds"); do
	if [ $((r % 2)) = 1 ]; then order="old new"; else order="new old"; fi
	for label in $order; do
		if [ "$label" = old ]; then install_so "$old"; else install_so "$new"; fi
		run "$label" "$r"
	done
done
install_so "$new"
runuser -u postgres -- env PGHOST="$PGHOST" PGPORT="$PGPORT" \
	psql -X -d "$db" -f "$here/radius_report.sql"
