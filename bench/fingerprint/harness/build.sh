#!/bin/bash
# bench/fingerprint/harness/build.sh -- build fpharness (see fpharness.c)
# from the checkout's src/ with the compiler flags PGXS uses.
#
#   bench/fingerprint/harness/build.sh [OUTPUT] [extra CFLAGS...]
#
# SIMHASH_SRC: the src/ to build from (default: this checkout's).
# PG_CONFIG as for the extension (default: pg_config on PATH).  Needs
# libpgcommon.a (postgresql-server-dev-15) for unicode_normalize().
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=${SIMHASH_SRC:-$here/../../../src}
# src/ by layer since the house layout; a flat src/ for older commits
if [ -d "$src/fingerprint" ]; then fp=$src/fingerprint inc="-I$src/core -I$src/fingerprint"; else fp=$src inc="-I$src"; fi
out=${1:-$here/fpharness}
shift || true
pgc=${PG_CONFIG:-pg_config}
# shellcheck disable=SC2046,SC2086
gcc $("$pgc" --cflags) $("$pgc" --cppflags) -Wno-missing-prototypes -Wno-unused-parameter \
	$inc -I"$("$pgc" --includedir-server)" "$@" \
	-no-pie -o "$out" "$here/fpharness.c" \
	"$fp/tokenize.c" "$fp/textsource.c" "$fp/fingerprint.c" \
	$([ -f "$fp/featureset.c" ] && echo "$fp/featureset.c") \
	$([ -f "$fp/hancount.c" ] && echo "$fp/hancount.c") \
	-L"$("$pgc" --pkglibdir)" -L"$("$pgc" --libdir)" -lpgcommon -lpgport \
	-Wl,--unresolved-symbols=ignore-all
