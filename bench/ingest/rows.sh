#!/bin/bash
# bench/ingest/rows.sh -- the rows of the ingest benchmarks, made once per
# database: ing_docs (the Linux 6.1 and 6.12 documentation, through
# ../kernel_docs.sh and tools/demo_corpus.py), then setup.sql's ing_base
# (N base rows) and ing_arrivals (N arriving rows); kept while both hold N
# rows, made again with REBUILD=1.  When they are made again, the COPY file
# of run.sh (bench/data/ingest/arrivals.copy) is removed with them.
#
# Usage:  bench/ingest/rows.sh N        (run.sh and compare.sh call it)
#
# Environment: the usual PG* variables, PGDATABASE set by the caller.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
data=$root/bench/data
n=${1:?usage: rows.sh N}
[ -n "${PGDATABASE:-}" ] || { echo "rows.sh: set PGDATABASE" >&2; exit 1; }
# shellcheck source=../common.sh
. "$here/../common.sh"
log() { echo "[$(date -u +%H:%M:%S)] $*"; }

"$here/../kernel_docs.sh" 6.1 6.12
have=$(psql -X -tA -c "SELECT to_regclass('ing_docs') IS NOT NULL AND to_regclass('ing_arrivals') IS NOT NULL AND (SELECT count(*) FROM ing_base) = $n AND (SELECT count(*) FROM ing_arrivals) = $n" 2>/dev/null || echo f)
if [ "$have" != t ] || [ -n "${REBUILD:-}" ]; then
	log "loading the documentation (tools/demo_corpus.py)"
	psql_run -c "DROP TABLE IF EXISTS ing_docs" \
		-c "CREATE TABLE ing_docs (version text, path text, title text, body text)"
	/usr/bin/python3 "$root/tools/demo_corpus.py" "$data" 6.1 6.12 |
		psql_run -c "\\copy ing_docs FROM STDIN"
	log "making $n base rows and $n arriving rows (setup.sql)"
	psql_run -v n="$n" -v w=2000 -v q=35 -f "$here/setup.sql"
	rm -f "$data/ingest/arrivals.copy"
fi
