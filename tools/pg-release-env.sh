#!/bin/bash
# tools/pg-release-env.sh -- the environment a user of a PostgreSQL major
# version has: the Debian release that ships it, as a chroot, with Debian's
# packages of that PostgreSQL and everything simhash needs to build, test
# and package itself.  Run as root on a Debian machine (12 or later).
#
#	pg-release-env.sh setup VERSION DIR	provision DIR (idempotent: a complete
#						environment is reused as it is)
#	pg-release-env.sh run DIR [-u USER] [--] CMD [ARG...]
#						run CMD in DIR as root or USER (postgres)
#	pg-release-env.sh copy DIR PATH		copy this checkout's source files to
#						PATH inside DIR (fresh, owned by postgres)
#	pg-release-env.sh release VERSION	print the release of VERSION
#	pg-release-env.sh umount DIR		unmount what "run" mounted
#
# VERSION 17 is Debian 13 (trixie), 18 is sid (the development release;
# its packages change daily, so a failure there can be sid's own; the
# mirror's sid Release file may be past its Valid-Until date, which apt is
# told to accept).  The chroot is "debootstrap --variant=minbase", with a
# policy-rc.d that keeps services from starting, no main cluster created on
# package installation, and /proc and a tmpfs on /dev/shm mounted when a
# command runs (PostgreSQL needs both).  DIR/etc/simhash-pg-env records a
# complete provisioning (release, version and package list): a DIR without
# it is provisioned again from scratch.  debootstrap is installed on the
# host with apt-get if it is missing.
set -euo pipefail

mirror=${SIMHASH_DEBIAN_MIRROR:-http://deb.debian.org/debian}
marker=etc/simhash-pg-env

die() {
	echo "pg-release-env.sh: $*" >&2
	exit 1
}

release_of() {						# the Debian release shipping VERSION
	case $1 in
		15) echo bookworm ;;
		17) echo trixie ;;
		18) echo sid ;;
		*) die "no Debian release ships PostgreSQL $1 (known: 15, 17, 18)" ;;
	esac
}

packages_of() {						# what the environment of VERSION holds
	local v=$1
	echo postgresql-"$v" postgresql-server-dev-"$v" postgresql-"$v"-pgvector \
		postgresql-server-dev-all postgresql-common \
		build-essential libxxhash-dev libipc-run-perl \
		python3 python3-psycopg2 python3-xxhash fortunes-zh \
		debhelper dpkg-dev lintian zip unzip locales-all ca-certificates
}

# /proc and /dev/shm of DIR, for PostgreSQL (shared memory, ps titles)
mount_env() {
	local dir=$1
	mountpoint -q "$dir/proc" || mount -t proc proc "$dir/proc"
	mkdir -p "$dir/dev/shm"
	mountpoint -q "$dir/dev/shm" || mount -t tmpfs -o mode=1777 tmpfs "$dir/dev/shm"
}

umount_env() {
	local dir=$1
	! mountpoint -q "$dir/dev/shm" || umount "$dir/dev/shm"
	! mountpoint -q "$dir/proc" || umount "$dir/proc"
}

# The host's debootstrap, installed once (one apt run at a time).
host_debootstrap() {
	command -v debootstrap >/dev/null && return 0
	(
		flock 9
		command -v debootstrap >/dev/null && exit 0
		export DEBIAN_FRONTEND=noninteractive
		apt-get -o DPkg::Lock::Timeout=600 update -q
		apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends \
			debootstrap debian-archive-keyring
	) 9>/run/lock/simhash-pg-release-env.lock
}

# Commands in the chroot: a clean environment, UTF-8, no questions.
in_env() {
	local dir=$1
	shift
	chroot "$dir" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}

setup() {
	local v=$1 dir=$2 release want
	release=$(release_of "$v")
	want="$release $v $(packages_of "$v")"
	if [ -f "$dir/$marker" ] && [ "$(cat "$dir/$marker")" = "$want" ]; then
		mount_env "$dir"
		echo "pg-release-env.sh: $dir is a complete $release environment for PostgreSQL $v"
		return 0
	fi
	host_debootstrap
	if [ -e "$dir" ]; then
		# an incomplete or other environment: start over (never through a mount)
		umount_env "$dir"
		if findmnt -rn -o TARGET | grep -q "^$(realpath "$dir")/"; then
			die "$dir has file systems mounted in it; not removing it"
		fi
		rm -rf --one-file-system "$dir"
	fi
	mkdir -p "$dir"
	echo "pg-release-env.sh: debootstrap $release into $dir"
	debootstrap --variant=minbase "$release" "$dir" "$mirror" >"$dir.debootstrap.log" 2>&1 ||
		{ tail -20 "$dir.debootstrap.log"; die "debootstrap $release failed"; }
	rm -f "$dir.debootstrap.log"

	printf '#!/bin/sh\nexit 101\n' >"$dir/usr/sbin/policy-rc.d"
	chmod 755 "$dir/usr/sbin/policy-rc.d"
	mkdir -p "$dir/etc/postgresql-common"
	echo 'create_main_cluster = false' >"$dir/etc/postgresql-common/createcluster.conf"
	echo "deb $mirror $release main" >"$dir/etc/apt/sources.list"
	# sid's Release file on the mirror may be past its Valid-Until date
	echo 'Acquire::Check-Valid-Until "false";' >"$dir/etc/apt/apt.conf.d/99simhash"
	cp /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
	mount_env "$dir"

	echo "pg-release-env.sh: installing PostgreSQL $v and the build and test dependencies"
	# shellcheck disable=SC2046
	if ! in_env "$dir" apt-get -q update >"$dir.apt.log" 2>&1 ||
		! in_env "$dir" apt-get install -y -q --no-install-recommends \
			-o Dpkg::Options::=--force-confold $(packages_of "$v") >>"$dir.apt.log" 2>&1; then
		tail -30 "$dir.apt.log"
		die "installing the packages into $dir failed"
	fi
	rm -f "$dir.apt.log"
	[ -x "$dir/usr/lib/postgresql/$v/bin/pg_config" ] || die "no pg_config $v in $dir"
	echo "$want" >"$dir/$marker"
	echo "pg-release-env.sh: $dir is ready ($release, $(in_env "$dir" /usr/lib/postgresql/"$v"/bin/postgres --version))"
}

run() {
	local dir=$1 user=
	shift
	if [ "${1:-}" = -u ]; then
		user=$2
		shift 2
	fi
	[ "${1:-}" != -- ] || shift
	[ $# -gt 0 ] || die "run: no command"
	[ -f "$dir/$marker" ] || die "$dir is not a complete environment (run setup first)"
	mount_env "$dir"
	if [ -n "$user" ]; then
		in_env "$dir" runuser -u "$user" -- "$@"
	else
		in_env "$dir" "$@"
	fi
}

copy() {
	local dir=$1 path=$2
	[ -f "$dir/$marker" ] || die "$dir is not a complete environment (run setup first)"
	case $path in /*) ;; *) die "copy: PATH must be absolute inside the environment" ;; esac
	rm -rf --one-file-system "${dir:?}$path"
	bash "$(dirname "$0")/copy-tree.sh" "$dir$path"
	in_env "$dir" chown -R postgres: "$path"
}

[ "$(id -u)" = 0 ] || die "run me as root (debootstrap, chroot)"
cmd=${1:-}
shift || true
case $cmd in
	setup)
		[ $# = 2 ] || die "usage: setup VERSION DIR"
		mkdir -p "$(dirname "$2")"
		# one provisioning of DIR at a time
		exec 8>"$2.lock"
		flock 8
		setup "$1" "$2"
		;;
	run) [ $# -ge 2 ] || die "usage: run DIR [-u USER] [--] CMD..."; run "$@" ;;
	copy) [ $# = 2 ] || die "usage: copy DIR PATH"; copy "$1" "$2" ;;
	release) [ $# = 1 ] || die "usage: release VERSION"; release_of "$1" ;;
	umount) [ $# = 1 ] || die "usage: umount DIR"; umount_env "$1" ;;
	*) die "usage: pg-release-env.sh setup|run|copy|release|umount ... (see the file's header)" ;;
esac
