#!/bin/bash
# tools/build-deb.sh [OUTDIR] -- build the Debian packages
# postgresql-NN-simhash from this checkout, one for each version of
# debian/pgversions that the system's release supports (Debian 12: 15,
# Debian 13: 17, sid: 18), and leave postgresql-NN-simhash_VERSION-
# REVISION_ARCH.deb in OUTDIR (default: the checkout's top directory).
#
# debian/control, as committed, is for Debian 12's 15; the build
# regenerates it from debian/control.in for the release it runs in
# (PG_UPDATECONTROL=yes: pg_buildext checkcontrol then updates it instead
# of stopping, as apt.postgresql.org's builds do).
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
	PG_UPDATECONTROL=yes pg_buildext checkcontrol &&
	DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:-} parallel=$jobs" dpkg-buildpackage -us -uc -b ) ||
	{ echo "build-deb.sh: dpkg-buildpackage failed" >&2; exit 1; }

# the package itself (not its -dbgsym companion, nor .changes/.buildinfo)
rm -f "$out"/postgresql-*-simhash_*.deb
for deb in "$scratch"/postgresql-*-simhash_*.deb; do
	cp "$deb" "$out/"
	echo "$out/$(basename "$deb")"
done
