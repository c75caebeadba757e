#!/bin/bash
# bench/scaleout/citus_cluster.sh start|stop [DIR] -- a throw-away Citus
# cluster on loopback for citus_guide.sql and citus_race.sh: a coordinator
# (port 26000) and two workers (26001, 26002) under DIR (default
# /tmp/simhash-citus), each with the settings README's Citus section lists:
# shared_preload_libraries = 'citus', max_prepared_transactions = 100,
# wal_level = logical, max_connections = 200, citus.node_conninfo =
# 'sslmode=disable' (these servers have no certificates), trust auth on
# 127.0.0.1.  CREATE EXTENSION citus is run on every node; the guide adds
# the nodes and creates simhash.
#
# Run as a non-root user, with PG_CONFIG naming the PostgreSQL 15 that has
# Citus and simhash installed.
set -euo pipefail
: "${PG_CONFIG:=pg_config}"
bin=$("$PG_CONFIG" --bindir)
dir=${2:-/tmp/simhash-citus}
case ${1:-} in
start)
	for port in 26000 26001 26002; do
		d=$dir/$port
		mkdir -p "$d"
		"$bin/initdb" -D "$d" -U postgres -A trust --no-sync --encoding=UTF8 \
			--locale=C.UTF-8 >"$dir/initdb-$port.log"
		cat >>"$d/postgresql.conf" <<CONF
port = $port
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
shared_preload_libraries = 'citus'
max_prepared_transactions = 100
wal_level = logical
max_connections = 200
citus.node_conninfo = 'sslmode=disable'
fsync = off
CONF
		"$bin/pg_ctl" -D "$d" -l "$dir/$port.log" -w start >/dev/null
		"$bin/psql" -X -q -h 127.0.0.1 -p "$port" -U postgres -c 'CREATE EXTENSION citus'
	done
	echo "coordinator: psql -h 127.0.0.1 -p 26000 -U postgres"
	;;
stop)
	for port in 26000 26001 26002; do
		"$bin/pg_ctl" -D "$dir/$port" -m fast -w stop >/dev/null 2>&1 || true
	done
	rm -rf "$dir"
	;;
*)
	echo "usage: $0 start|stop [DIR]" >&2
	exit 2
	;;
esac
