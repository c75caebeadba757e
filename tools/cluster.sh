#!/bin/bash
# tools/cluster.sh -- start and stop throw-away PostgreSQL clusters.
#
# Sourced by the test driver and the demo.  Every server program comes from
# "$PG_CONFIG --bindir" (default: pg_config on PATH), so the suites run
# against whichever PostgreSQL 15 installation PG_CONFIG names: the system's,
# or a private copy made with tools/dev-pg.sh.  Must run as a non-root user.
#
#	cluster_start DIR [postgres -c options...]	initdb, start; exports PG*
#	cluster_stop DIR							stop and remove DIR

: "${PG_CONFIG:=pg_config}"
PG_BINDIR=$("$PG_CONFIG" --bindir)
export PG_CONFIG PG_BINDIR

# A TCP port nobody listens on (the socket lives in DIR anyway).
cluster_free_port() {
	local port
	for port in $(shuf -i 20000-40000 -n 50); do
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			echo "$port"
			return 0
		fi
	done
	return 1
}

cluster_start() {
	local dir=$1
	shift
	local opts=() o
	for o in "$@"; do
		opts+=(-c "$o")
	done
	mkdir -p "$dir"
	"$PG_BINDIR/initdb" -D "$dir/data" -U postgres -A trust --no-sync \
		--encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
		{ cat "$dir/initdb.log"; return 1; }
	PGPORT=$(cluster_free_port) || return 1
	"$PG_BINDIR/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
		-o "-p $PGPORT -k $dir -c listen_addresses='' -c fsync=off ${opts[*]}" \
		start >/dev/null || { cat "$dir/server.log"; return 1; }
	export PGHOST=$dir PGPORT PGUSER=postgres PGDATABASE=postgres
	unset PGPASSWORD PGSERVICE
}

cluster_stop() {
	local dir=$1
	"$PG_BINDIR/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1
	rm -rf "$dir"
}
