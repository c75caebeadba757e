#!/bin/bash
# bench/fingerprint/run.sh -- throughput of simhash(text) on one core.
#
# One command, idempotent:
#   1. ../kernel_docs.sh fetches the Linux 6.12 Documentation tree;
#   2. corpus.py writes the English corpus (Documentation outside
#      translations/) and the Chinese one (translations/zh_CN and zh_TW),
#      prose files only, as in bench/quality;
#   3. setup.sql/fill.sql load them into schema simhash_speed, once with
#      default storage (pglz-compressed TOAST) and once uncompressed;
#   4. measure.sql times SELECT count(<expr>) FROM <table> server-side
#      (EXPLAIN ANALYZE execution time) for expr = body, length(body),
#      md5(body), simhash(body): one warm-up round, then BENCH_REPS rounds
#      (default 7), median reported, in MB of text per second;
#      jaccard.sql likewise for simhash_jaccard(body, body || ' ') against
#      md5 and simhash of the same two texts (jaccard.csv);
#   5. if perf works here, profile.sql runs simhash over each uncompressed
#      table for PROFILE_SECONDS (default 8) under "perf record" and the top
#      functions are printed (skip with NO_PERF=1).
# Results are printed and copied to bench/data/fingerprint/results/.
#
# Connection: the usual PG* variables; without PGDATABASE the database
# simhash_bench is used (created if missing).  Schema simhash_speed is
# dropped and recreated.  Profiling needs perf (Debian: linux-perf) and the
# right to attach to the server's backends (root, or same user with
# kernel.perf_event_paranoid <= 1).
#
# Usage:  bench/fingerprint/run.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
data=$(cd "$here/.." && pwd)/data
work=$data/fingerprint
results=$work/results
version=6.12
python=/usr/bin/python3
reps=${BENCH_REPS:-7}
profile_seconds=${PROFILE_SECONDS:-8}
# shellcheck source=SCRIPTDIR/../common.sh
. "$here/../common.sh"

mkdir -p "$work" "$results"

# ---- 1, 2. corpus -------------------------------------------------------------
"$here/../kernel_docs.sh" "$version"
if [ ! -f "$work/zh.tsv" ] || [ "$here/corpus.py" -nt "$work/zh.tsv" ]; then
	"$python" "$here/corpus.py" "$data/linux-source-$version" "$work"
fi

# ---- 3. tables ----------------------------------------------------------------
bench_database
echo "== loading into database $PGDATABASE"
psql_run -f "$here/setup.sql"
psql_run -c "COPY simhash_speed.en FROM STDIN" <"$work/en.tsv"
psql_run -c "COPY simhash_speed.zh FROM STDIN" <"$work/zh.tsv"
psql_run -f "$here/fill.sql"

# ---- 4. throughput ------------------------------------------------------------
echo "== measuring ($reps rounds after one warm-up round)"
PGOPTIONS="${PGOPTIONS:-} -c bench.reps=$reps" \
	psql_run -v outfile="$results/throughput.csv" -f "$here/measure.sql"
echo "== simhash_jaccard ($reps rounds after one warm-up round)"
PGOPTIONS="${PGOPTIONS:-} -c bench.reps=$reps" \
	psql_run -v outfile="$results/jaccard.csv" -f "$here/jaccard.sql"

{
	echo "## bench/fingerprint results ($(date -u '+%Y-%m-%d %H:%M UTC'))"
	echo
	echo "- corpus: Documentation of $(cat "$data/linux-source-$version/.extracted")"
	echo "- server: $(psql -X -tAc 'SELECT version()')"
	echo "- CPU: $(lscpu | sed -n 's/^Model name: *//p') ($(nproc) cores)"
	echo "- CFLAGS (pg_config --cflags, which PGXS uses): $(pg_config --cflags 2>/dev/null || echo '?')"
	echo "- $reps rounds after a warm-up round; MB = 10^6 bytes of text (octet_length)"
	echo
	"$python" - "$results/throughput.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
names = {"en": "English, pglz-compressed TOAST", "en_plain": "English, uncompressed",
         "zh": "Chinese, pglz-compressed TOAST", "zh_plain": "Chinese, uncompressed"}
print("| corpus | docs | MB | expression | median ms | min ms | max ms | MB/s | simhash/md5 time |")
print("|---|---|---|---|---|---|---|---|---|")
by = {(r["tab"], r["expr"]): r for r in rows}
for r in rows:
    ratio = ""
    if r["expr"] == "simhash(body)":
        ratio = "%.1fx" % (float(r["median_ms"]) / float(by[(r["tab"], "md5(body)")]["median_ms"]))
    print("| %s | %s | %.1f | `%s` | %s | %s | %s | %s | %s |" % (
        names[r["tab"]], r["docs"], int(r["bytes"]) / 1e6, r["expr"], r["median_ms"],
        r["min_ms"], r["max_ms"], r["mb_per_s"], ratio))
print()
print("simhash alone (median time of simhash(body) minus that of length(body), "
      "which detoasts the same values):")
print()
for tab in names:
    s, l = by[(tab, "simhash(body)")], by[(tab, "length(body)")]
    net = float(s["median_ms"]) - float(l["median_ms"])
    print("- %s: %.0f MB/s" % (names[tab], int(s["bytes"]) / 1e6 / (net / 1e3)))
PY
	echo
	echo "simhash_jaccard (each row: the body and the body with a space appended; MB/s"
	echo "counts the bytes of both texts):"
	echo
	"$python" - "$results/jaccard.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
names = {"en_plain": "English, uncompressed", "zh_plain": "Chinese, uncompressed"}
print("| corpus | docs | MB (both texts) | expression | median ms | min ms | max ms | MB/s |")
print("|---|---|---|---|---|---|---|---|")
for r in rows:
    print("| %s | %s | %.1f | `%s` | %s | %s | %s | %s |" % (
        names[r["tab"]], r["docs"], int(r["bytes"]) / 1e6, r["expr"], r["median_ms"],
        r["min_ms"], r["max_ms"], r["mb_per_s"]))
PY
} | tee "$results/throughput.md"

# ---- 5. profile -----------------------------------------------------------------
if [ -n "${NO_PERF:-}" ]; then
	exit 0
fi
if ! command -v perf >/dev/null || ! perf record -o /dev/null -- true >/dev/null 2>&1; then
	echo "perf is not available or not permitted: no profile (apt-get install linux-perf)"
	exit 0
fi
for tab in en_plain zh_plain; do
	echo
	echo "== perf profile of simhash(body) over simhash_speed.$tab ($profile_seconds s)"
	perfdata=$work/perf-$tab.data
	rm -f "$perfdata" "$perfdata.pid"
	psql_run -v tab="$tab" -v seconds="$profile_seconds" -v perfdata="$perfdata" \
		-f "$here/profile.sql" >/dev/null
	while kill -0 "$(cat "$perfdata.pid")" 2>/dev/null; do
		sleep 0.5
	done
	perf report -i "$perfdata" --stdio --no-children --sort dso,sym -q \
		--percent-limit 0.5 2>/dev/null | sed '/^$/d' | head -25 |
		tee "$results/perf-$tab.txt"
done
