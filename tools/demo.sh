#!/bin/bash
# tools/demo.sh -- the main job: install, build, start a throw-away cluster
# and find near-duplicates in the Linux kernel documentation.
#
# Run as root on a fresh Debian 12 machine.  Installs the dependencies,
# builds and installs the extension, downloads the kernel documentation of
# Linux 6.1 and 6.12 (Debian's linux-source packages, about 300 MB, kept in
# bench/data/), loads it into a temporary cluster (pg_virtualenv) with a
# fingerprint per document, builds a simhash index and shows what it finds.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" != 0 ]; then
	echo "demo.sh: run me as root (it installs packages and the extension)" >&2
	exit 1
fi

tools/install-deps.sh
echo "== building and installing the extension"
make -s clean >/dev/null
make -s all >/dev/null
make -s install >/dev/null

echo "== fetching the kernel documentation (cached in bench/data/)"
bench/kernel_docs.sh 6.1 6.12

echo "== starting a throw-away cluster and loading the documents"
export SIMHASH_DEMO_DATA=$PWD/bench/data
pg_virtualenv bash -c '
	set -euo pipefail
	psql -X -q -v ON_ERROR_STOP=1 <<SQL
CREATE EXTENSION simhash;
CREATE TABLE docs (
	id bigserial PRIMARY KEY,
	version text NOT NULL,
	path text NOT NULL,
	title text,
	body text NOT NULL,
	fp simhash64 GENERATED ALWAYS AS (simhash(body)) STORED
);
SQL
	python3 tools/demo_corpus.py "$SIMHASH_DEMO_DATA" 6.1 6.12 |
		psql -X -q -v ON_ERROR_STOP=1 -c "\\copy docs (version, path, title, body) FROM STDIN"
	psql -X -q -v ON_ERROR_STOP=1 -f tools/demo.sql
'
