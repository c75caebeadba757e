#!/bin/bash
# tools/install-deps.sh -- install everything simhash needs to build, test
# and demonstrate itself on Debian 12 (bookworm).  Run as root.  Idempotent:
# apt is only called when a package is missing.
set -euo pipefail

if [ "$(id -u)" != 0 ]; then
	echo "install-deps.sh: run me as root (apt-get needs it)" >&2
	exit 1
fi

packages=(
	build-essential            # gcc, make
	postgresql-15              # the server
	postgresql-client-15       # psql, pg_regress, isolation tester, TAP modules
	postgresql-server-dev-15   # headers and PGXS
	postgresql-common          # pg_virtualenv
	libxxhash-dev              # xxhash.h (used header-only)
	libipc-run-perl            # TAP tests (PostgreSQL::Test::Cluster)
	python3                    # reference implementation and test drivers
	python3-xxhash             # reference implementation
	python3-psycopg2           # the SQL fuzzer (sql_tests/checks/fuzz_check.py)
	fortunes-zh                # Chinese test documents
	xz-utils                   # unpacking the kernel documentation (demo, bench)
	ca-certificates
	debhelper                  # the Debian package: dh, dpkg-buildpackage (dpkg-dev)
	postgresql-server-dev-all  # pg_buildext's debhelper add-on (dh --with pgxs)
	lintian                    # checking the package
	zip                        # the PGXN release (make dist)
	unzip                      # unpacking it in the test
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "install-deps.sh: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	# other apt runs on the machine hold the lock for a while: wait for them
	apt-get -o DPkg::Lock::Timeout=600 update
	apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${missing[@]}"
fi
