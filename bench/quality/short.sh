#!/bin/bash
# bench/quality/short.sh -- recall and false-positive rate of simhash(text)
# on short texts, by length and by k (3..10), English and Chinese.
#
# One command, idempotent:
#   1. ../kernel_docs.sh: linux-source-6.1 and linux-source-6.12 (as run.sh);
#   2. apt-get download fortunes, fortunes-zh, gcc-11-locales and
#      gcc-12-locales into bench/data/debs (unless there, or in
#      $SIMHASH_BENCH_DEBS), dpkg -x them under bench/data/short/;
#   3. short_prepare.py: texts (kernel files, paragraphs and sentences;
#      fortunes; gcc messages), real variants, controlled edits, negatives;
#   4. load them into PostgreSQL; fingerprints and distances in SQL with the
#      extension (short_load.sql, short_eval.sql);
#   5. short_ktime.sql: query time by radius on 1M random fingerprints;
#   6. short_report.py prints the tables (Markdown) to
#      bench/data/quality/short/results/report.md.
#
# Connection: the usual PG* variables; without PGDATABASE the database
# simhash_bench is used (created if missing).  Only the short_* tables of
# schema simhash_bench are replaced.  Needs /usr/bin/python3, dpkg, tar, xz,
# psql, apt-get.
#
# Usage:  bench/quality/short.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
data=$(cd "$here/.." && pwd)/data
work=$data/quality/short
results=$work/results
python=/usr/bin/python3
# shellcheck source=SCRIPTDIR/../common.sh
. "$here/../common.sh"

mkdir -p "$results" "$data/debs" "$data/short"

# ---- 1, 2. packages ------------------------------------------------------------
"$here/../kernel_docs.sh" 6.1 6.12
unpack() {		# unpack PACKAGE DIR: the .deb of PACKAGE into bench/data/short/DIR
	local pkg=$1 dir=$data/short/$2 debs
	if ! compgen -G "$data/debs/${pkg}_*.deb" >/dev/null; then
		if [ -n "${SIMHASH_BENCH_DEBS:-}" ] && compgen -G "$SIMHASH_BENCH_DEBS/${pkg}_*.deb" >/dev/null; then
			cp "$SIMHASH_BENCH_DEBS"/"${pkg}"_*.deb "$data/debs/"
		else
			(cd "$data/debs" && apt-get download "$pkg")
		fi
	fi
	debs=("$data"/debs/"${pkg}"_*.deb)
	if [ ! -f "$dir/.$pkg" ]; then
		dpkg -x "${debs[${#debs[@]}-1]}" "$dir"
		basename "${debs[${#debs[@]}-1]}" >"$dir/.$pkg"
	fi
}
unpack fortunes fortunes
unpack fortunes-zh fortunes
unpack gcc-11-locales gcc-11
unpack gcc-12-locales gcc-12

# ---- 3. texts and pairs ----------------------------------------------------------
if [ ! -f "$work/pairs.tsv" ] || [ "$here/short_prepare.py" -nt "$work/pairs.tsv" ]; then
	echo "== selecting texts and pairs"
	"$python" "$here/short_prepare.py" "$data/linux-source-6.1" "$data/linux-source-6.12" \
		"$data/short/fortunes" "$data/short/gcc-11" "$data/short/gcc-12" "$work"
fi

# ---- 4. database -------------------------------------------------------------------
bench_database
echo "== loading into database $PGDATABASE"
psql_run -f "$here/short_load.sql"
psql_run -c "COPY simhash_bench.short_texts FROM STDIN" <"$work/texts.tsv"
psql_run -c "COPY simhash_bench.short_pairs FROM STDIN" <"$work/pairs.tsv"
echo "== fingerprints and distances"
psql_run -v distfile="$results/dist.csv" -v radiusfile="$results/radius.csv" \
	-f "$here/short_eval.sql"
echo "== query time by radius (1M fingerprints)"
psql_run -v ktimefile="$results/ktime.csv" -f "$here/short_ktime.sql"

# ---- 6. report -----------------------------------------------------------------------
{
	echo "## Short texts ($(date -u '+%Y-%m-%d %H:%M UTC'))"
	echo
	echo "- packages: $(cat "$data"/linux-source-6.1/.extracted "$data"/linux-source-6.12/.extracted \
		"$data"/short/fortunes/.fortunes "$data"/short/fortunes/.fortunes-zh \
		"$data"/short/gcc-11/.gcc-11-locales "$data"/short/gcc-12/.gcc-12-locales | tr '\n' ' ')"
	echo "- server: $(psql -X -tAc 'SELECT version()')"
	echo "- extension: $(psql -X -tAc "SELECT extversion FROM pg_extension WHERE extname = 'simhash'")"
	echo
	echo '```'
	cat "$work/stats.txt"
	echo '```'
	echo
	"$python" "$here/short_report.py" "$results"
} | tee "$results/report.md"
