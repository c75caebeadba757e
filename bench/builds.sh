# shellcheck shell=bash
# bench/builds.sh -- two or more builds of the extension side by side, for
# the benchmarks that compare commits (source it): bench/index/knn_compare.sh
# and bench/ingest/compare.sh.
#
# The caller sets: dir (where builds and clusters live, e.g. /tmp/knnb),
# repo (the repository root) and sb (shared_buffers of the servers).  Each
# commit is built once into $dir/pg-NAME, a private copy of the system's
# PostgreSQL 15 (as tools/dev-pg.sh makes), with its cluster in
# $dir/cl-NAME; WORKTREE is this working tree's files, rebuilt every time
# unless REUSE_WORKTREE=1.  Run as root: it builds, then hands
# $dir to postgres, which runs the servers.

mkdir -p "$dir"
chmod 755 "$dir"

log() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }

# a build's name: the short commit, or "worktree"
name_of() {
	if [ "$1" = WORKTREE ]; then echo worktree; else git -C "$repo" rev-parse --short=7 "$1^{commit}"; fi
}

# build() NAME REV: the extension of REV installed into $dir/pg-NAME
build() {
	local name=$1 rev=$2 pfx=$dir/pg-$1 src=$dir/src-$1
	local pgc=$pfx/usr/lib/postgresql/15/bin/pg_config
	if [ ! -x "$pgc" ]; then
		mkdir -p "$pfx/usr/lib/postgresql" "$pfx/usr/share/postgresql" "$pfx/usr/include"
		cp -a /usr/lib/postgresql/15 "$pfx/usr/lib/postgresql/"
		cp -a /usr/share/postgresql/15 "$pfx/usr/share/postgresql/"
		cp -a /usr/include/postgresql "$pfx/usr/include/"
	fi
	if { [ "$rev" != WORKTREE ] || [ -n "${REUSE_WORKTREE:-}" ]; } && [ -f "$src/.built" ]; then
		return 0
	fi
	log "building $name"
	rm -rf "$src"
	mkdir -p "$src"
	if [ "$rev" = WORKTREE ]; then
		(cd "$repo" && tar -c --exclude=.git --exclude=bench/data --exclude='*.o' --exclude='*.so' --exclude='*.bc' . ) | tar -x -C "$src"
	else
		git -C "$repo" archive "$rev" | tar -x -C "$src"
	fi
	make -C "$src" PG_CONFIG="$pgc" -s -j2 >"$src/build.log" 2>&1 || { cat "$src/build.log"; exit 1; }
	make -C "$src" PG_CONFIG="$pgc" -s install >>"$src/build.log" 2>&1 || { cat "$src/build.log"; exit 1; }
	touch "$src/.built"
	chown -R postgres: "$dir"
}

as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

# start() NAME PORT: the cluster of build NAME, initialized if new
start() {
	local name=$1 port=$2 bin=$dir/pg-$1/usr/lib/postgresql/15/bin cl=$dir/cl-$1
	if [ ! -f "$cl/data/PG_VERSION" ]; then
		as_pg mkdir -p "$cl"
		as_pg "$bin/initdb" -D "$cl/data" -U postgres -A trust --no-sync --encoding=UTF8 --locale=C.UTF-8 >/dev/null
	fi
	as_pg "$bin/pg_ctl" -D "$cl/data" status >/dev/null 2>&1 && as_pg "$bin/pg_ctl" -D "$cl/data" -m fast -w stop >/dev/null
	as_pg "$bin/pg_ctl" -D "$cl/data" -l "$cl/server.log" -w \
		-o "-p $port -k $cl -c listen_addresses='' -c fsync=off -c shared_buffers=$sb -c maintenance_work_mem=1GB -c max_parallel_workers_per_gather=0 -c jit=off" \
		start >/dev/null
}

stop() {
	local bin=$dir/pg-$1/usr/lib/postgresql/15/bin
	as_pg "$bin/pg_ctl" -D "$dir/cl-$1/data" -m fast -w stop >/dev/null 2>&1 || true
}

# builds_start_pair BASE NEW: both built and their servers started (ports
# 5471 and 5472); sets a and b to their names; stopped at exit unless KEEP=1
builds_start_pair() {
	a=$(name_of "$1")
	b=$(name_of "$2")
	[ "$a" != "$b" ] || { echo "BASE and NEW are the same build" >&2; exit 1; }
	build "$a" "$1"
	build "$b" "$2"
	echo 5471 >"$dir/port-$a"
	echo 5472 >"$dir/port-$b"
	chown postgres: "$dir"/port-*
	start "$a" 5471
	start "$b" 5472
	[ -n "${KEEP:-}" ] || trap 'stop "$a"; stop "$b"' EXIT
}
