#!/bin/bash
# bench/kernel_docs.sh -- fetch the Linux kernel Documentation trees that the
# benchmarks use as a corpus.  Idempotent; used by quality/run.sh and
# fingerprint/run.sh.
#
#   bench/kernel_docs.sh VERSION...      e.g. bench/kernel_docs.sh 6.1 6.12
#
# For each VERSION, leaves bench/data/linux-source-VERSION/Documentation/:
#   1. the package linux-source-VERSION is taken from bench/data/debs/, or
#      linked/copied from $SIMHASH_BENCH_DEBS if that directory has it, or
#      downloaded there with "apt-get download" (Debian 12 has 6.1 in main
#      and 6.12 in bookworm-security / bookworm-backports);
#   2. dpkg -x unpacks it, and only Documentation/ is extracted from the
#      source tarball under usr/src/ (the rest is deleted again).
# bench/data/ is gitignored.  linux-source-VERSION/.extracted names the
# package the tree came from.
set -euo pipefail

data=$(cd "$(dirname "$0")" && pwd)/data
mkdir -p "$data/debs"

for v in "$@"; do
	tree=$data/linux-source-$v
	if [ -f "$tree/.extracted" ]; then
		continue
	fi

	if ! compgen -G "$data/debs/linux-source-${v}_*.deb" >/dev/null; then
		if [ -n "${SIMHASH_BENCH_DEBS:-}" ] &&
			compgen -G "$SIMHASH_BENCH_DEBS/linux-source-${v}_*.deb" >/dev/null; then
			for f in "$SIMHASH_BENCH_DEBS"/linux-source-"${v}"_*.deb; do
				ln -f "$f" "$data/debs/" 2>/dev/null || cp "$f" "$data/debs/"
			done
		else
			echo "== downloading linux-source-$v" >&2
			(cd "$data/debs" && apt-get download "linux-source-$v")
		fi
	fi

	echo "== extracting Documentation/ of linux-source-$v" >&2
	rm -rf "$tree" "$data/deb-$v"
	debs=("$data"/debs/linux-source-"${v}"_*.deb)
	deb=${debs[${#debs[@]}-1]}		# the last one if there are several
	dpkg -x "$deb" "$data/deb-$v"
	tar -xJf "$data/deb-$v/usr/src/linux-source-$v.tar.xz" -C "$data" \
		--wildcards "linux-source-$v/Documentation/*"
	rm -rf "$data/deb-$v"		# the 150 MB source tarball is not needed any more
	basename "$deb" >"$tree/.extracted"		# remember which package it was
done
