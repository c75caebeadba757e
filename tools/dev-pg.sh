#!/bin/bash
# tools/dev-pg.sh DIR -- a private, relocated copy of the system's
# PostgreSQL 15 (server, headers, PGXS) under DIR, for development.
#
# PostgreSQL finds its files relative to its programs, so the copy is a
# complete installation of its own: "make PG_CONFIG=DIR/usr/lib/postgresql/
# 15/bin/pg_config install" installs the extension into it and not into the
# system, and tools/test.sh with the same PG_CONFIG tests against it.  Lets
# several working trees build and test side by side.  Run as root.
set -euo pipefail
dir=${1:?usage: tools/dev-pg.sh DIR}
mkdir -p "$dir/usr/lib/postgresql" "$dir/usr/share/postgresql" "$dir/usr/include"
cp -a /usr/lib/postgresql/15 "$dir/usr/lib/postgresql/"
cp -a /usr/share/postgresql/15 "$dir/usr/share/postgresql/"
cp -a /usr/include/postgresql "$dir/usr/include/"
rm -f "$dir"/usr/lib/postgresql/15/lib/simhash.so "$dir"/usr/share/postgresql/15/extension/simhash*
echo "PG_CONFIG=$dir/usr/lib/postgresql/15/bin/pg_config"
