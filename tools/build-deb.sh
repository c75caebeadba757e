#!/bin/bash
# tools/build-deb.sh [OUTDIR] -- build the Debian package
# postgresql-15-simhash from this checkout, and leave
# postgresql-15-simhash_VERSION-REVISION_ARCH.deb in OUTDIR (default: the
# checkout's top directory).
#
# It is "dpkg-buildpackage -us -uc -b" (debian/rules: dh --with pgxs, i.e.
# pg_buildext), run in a scratch copy of the checkout: dpkg-buildpackage
# writes its packages into the parent directory and its work files into
# debian/, and the checkout stays clean (tools/copy-tree.sh).  The build
# dependencies of debian/control come from tools/install-deps.sh.  The
# build runs the regression suite against the built files (pg_virtualenv);
# DEB_BUILD_OPTIONS=nocheck skips it.  Any user can run it (Rules-Requires-
# Root: no).
set -euo pipefail
out=$(realpath "${1:-$(dirname "$0")/..}")
cd "$(dirname "$0")/.."

scratch=$(mktemp -d /tmp/simhash-deb.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
bash tools/copy-tree.sh "$scratch/src"
# the build-time test runs a cluster as the postgres user, which must read it
chmod -R a+rX "$scratch"

jobs=$(nproc)
( cd "$scratch/src" &&
	DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:-} parallel=$jobs" dpkg-buildpackage -us -uc -b ) ||
	{ echo "build-deb.sh: dpkg-buildpackage failed" >&2; exit 1; }

# the package itself (not its -dbgsym companion, nor .changes/.buildinfo)
rm -f "$out"/postgresql-*-simhash_*.deb
for deb in "$scratch"/postgresql-*-simhash_*.deb; do
	cp "$deb" "$out/"
	echo "$out/$(basename "$deb")"
done
