#!/bin/bash
# bench/quality/run.sh -- measure the recall and false-positive rate of
# simhash feature schemes on labelled near-duplicates (Linux kernel
# Documentation 6.1 vs 6.12), and the default tokens' robustness to junk.
#
# One command, idempotent:
#   1. ../kernel_docs.sh: download linux-source-6.1 and linux-source-6.12
#      (apt-get download) into bench/data/debs, unless they are there (or
#      SIMHASH_BENCH_DEBS names a directory that has them: they are linked or
#      copied from it);
#   2. ../kernel_docs.sh: dpkg -x each package and extract only
#      Documentation/ from its tarball;
#   3. prepare.py: select the documents and the labelled pairs (Python);
#   4. load them into PostgreSQL and compute every scheme's fingerprints and
#      the pair distances in SQL, with the extension (load.sql, schemes.sql,
#      eval.sql, junk.sql);
#   5. report.py prints the tables (Markdown); misses.sql lists what the
#      default gets wrong.  Copies land in bench/data/quality/results/.
#
# Connection: the usual PGHOST, PGPORT, PGUSER, PGDATABASE, ... variables.
# Without PGDATABASE the database simhash_bench is used (created if missing).
# Everything lives in schema simhash_bench, which is dropped and recreated;
# CREATE EXTENSION IF NOT EXISTS simhash is run (superuser, or a role that
# may create it).  Needs /usr/bin/python3, dpkg, tar, xz, psql, apt-get.
#
# Usage:  bench/quality/run.sh
#         SIMHASH_BENCH_DEBS=/some/dir bench/quality/run.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
data=$(cd "$here/.." && pwd)/data
work=$data/quality
results=$work/results
versions=(6.1 6.12)			# old, new
python=/usr/bin/python3
# shellcheck source=SCRIPTDIR/../common.sh
. "$here/../common.sh"

mkdir -p "$work" "$results"

# ---- 1, 2. packages and Documentation trees ---------------------------------
"$here/../kernel_docs.sh" "${versions[@]}"

# ---- 3. documents and labelled pairs ----------------------------------------
if [ ! -f "$work/pairs.tsv" ] || [ "$here/prepare.py" -nt "$work/pairs.tsv" ]; then
	echo "== selecting documents and pairs"
	"$python" "$here/prepare.py" --old-name "${versions[0]}" --new-name "${versions[1]}" \
		"$data/linux-source-${versions[0]}" "$data/linux-source-${versions[1]}" "$work"
fi

# ---- 4. database ------------------------------------------------------------
bench_database

echo "== loading into database $PGDATABASE"
psql_run -f "$here/load.sql"
psql_run -c "COPY simhash_bench.docs FROM STDIN" <"$work/docs.tsv"
psql_run -c "COPY simhash_bench.pairs FROM STDIN" <"$work/pairs.tsv"
psql_run -c "ANALYZE simhash_bench.docs, simhash_bench.pairs"

echo "== computing fingerprints"
start=$SECONDS
psql_run -f "$here/schemes.sql"
echo "   ($((SECONDS - start)) s)"

echo "== distances and junk robustness"
psql_run -v distfile="$results/dist.csv" -v gainfile="$results/gains.csv" \
	-v checkfile="$results/check.csv" -f "$here/eval.sql"
psql_run -v junkfile="$results/junk.csv" -f "$here/junk.sql"

# ---- 5. report ----------------------------------------------------------------
{
	echo "## bench/quality results ($(date -u '+%Y-%m-%d %H:%M UTC'))"
	echo
	echo "- packages: $(cat "$data"/linux-source-{"${versions[0]}","${versions[1]}"}/.extracted | tr '\n' ' ')"
	echo "- server: $(psql -X -tAc 'SELECT version()')"
	echo "- extension: $(psql -X -tAc "SELECT extversion FROM pg_extension WHERE extname = 'simhash'")"
	echo
	echo '```'
	cat "$work/stats.txt"
	echo '```'
	echo
	"$python" "$here/report.py" "$results"
} | tee "$results/report.md"
psql_run -f "$here/misses.sql" | tee "$results/misses.txt"
