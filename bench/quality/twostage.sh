#!/bin/bash
# bench/quality/twostage.sh -- recall and false positives of the two-stage
# query "fp <-> simhash(q) <= k AND simhash_jaccard(body, q) >= s" for
# k = 3..12 and a grid of s: on run.sh's labelled kernel-document pairs
# (English and Chinese), on short.sh's short texts, and on all pairs of the
# 6.12 English documents (how many unrelated pairs are found).
#
# Needs the prepared data and tables of run.sh and short.sh (schema
# simhash_bench): runs them first unless SIMHASH_TWOSTAGE_REUSE=1.  Then
# twostage.sql and twostage_short.sql (CSV into bench/data/quality/twostage/)
# and twostage_report.py
# (Markdown, also in report.md there).
#
# Connection: the usual PG* variables; without PGDATABASE the database
# simhash_bench is used.
#
# Usage:  bench/quality/twostage.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
data=$(cd "$here/.." && pwd)/data
results=$data/quality/twostage
python=/usr/bin/python3
# shellcheck source=SCRIPTDIR/../common.sh
. "$here/../common.sh"
mkdir -p "$results"

if [ "${SIMHASH_TWOSTAGE_REUSE:-0}" != 1 ]; then
	"$here/run.sh"
	"$here/short.sh"
fi
bench_database

echo "== two-stage counts"
start=$SECONDS
psql_run -v kernelfile="$results/kernel.csv" -v allfile="$results/all612.csv" \
	-f "$here/twostage.sql"
psql_run -v shortfile="$results/short.csv" -f "$here/twostage_short.sql"
echo "   ($((SECONDS - start)) s)"
{
	echo "## Two-stage query ($(date -u '+%Y-%m-%d %H:%M UTC'))"
	echo
	echo "- server: $(psql -X -tAc 'SELECT version()')"
	echo "- extension: $(psql -X -tAc "SELECT extversion FROM pg_extension WHERE extname = 'simhash'")"
	echo
	"$python" "$here/twostage_report.py" "$results" "$data/quality/docs.tsv"
} | tee "$results/report.md"
