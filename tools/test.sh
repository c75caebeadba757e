#!/bin/bash
# tools/test.sh [--pg "VERSIONS"] -- the whole simhash test suite, from a
# fresh Debian 12 machine, on every PostgreSQL major version Debian ships.
#
# Run as root from anywhere.  For each version (default: the list below;
# --pg "17" or SIMHASH_PG_VERSIONS="17" picks some):
#
# - 15 is the machine's own PostgreSQL (Debian 12).  17 and 18 run in the
#   environment a user of them has, a chroot of the Debian release that
#   ships them (17: Debian 13, 18: sid), provisioned by
#   tools/pg-release-env.sh under $SIMHASH_PG_ENV_ROOT (a complete one is
#   reused; the provisionings run in the background while 15 is tested).
# - In each: builds, installs, tests and purges the Debian package
#   postgresql-NN-simhash (sql_tests/release/package.sh), builds the
#   extension with -Werror and installs it, builds and installs the PGXN
#   release zip (sql_tests/release/pgxn.sh), then runs every suite as the
#   postgres user against throw-away clusters (sql_tests/run.sh; the
#   pg_regress and isolation suites in the unpacked release).
# - For 17 and 18: pg_upgrade of a 15 cluster holding simhash indexes and
#   triggers to that version (sql_tests/release/pg_upgrade.sh), with the
#   machine's PostgreSQL 15 copied into the environment.
#
# Prints one line per test, named after its version ("PASS pg17/regress/
# index"), a summary per version, and last "N passed, N failed" over all
# versions; exits non-zero if anything failed.  A version whose environment
# cannot be provisioned counts as a failure, never as skipped.
#
# PG_CONFIG selects the PostgreSQL 15 installation to build, install and
# test against (default: the system's); a private copy made with
# tools/dev-pg.sh keeps the system's installation untouched, except for the
# package test, which is about the system's installation.
set -uo pipefail
cd "$(dirname "$0")/.."

# The versions tested by default: change this one line to test fewer.
SIMHASH_DEFAULT_PG_VERSIONS="15 17 18"

host_version=15			# Debian 12's PostgreSQL: the machine's own
env_root=${SIMHASH_PG_ENV_ROOT:-/var/cache/simhash/pg-env}
env_src=/srv/simhash-test	# the checkout's copy inside an environment
env_results=/srv/simhash-test.results

usage() {
	echo "usage: tools/test.sh [--pg \"15 17 18\"]" >&2
	exit 2
}

versions=${SIMHASH_PG_VERSIONS:-$SIMHASH_DEFAULT_PG_VERSIONS}
in_env=				# --in-env V: the suite of V inside its environment
while [ $# -gt 0 ]; do
	case $1 in
		--pg) [ $# -ge 2 ] || usage; versions=$2; shift 2 ;;
		--pg=*) versions=${1#--pg=}; shift ;;
		--in-env) [ $# -ge 2 ] || usage; in_env=$2; shift 2 ;;
		*) usage ;;
	esac
done
for v in $versions; do
	case $v in 15|17|18) ;; *) echo "test.sh: PostgreSQL $v is not tested (15, 17, 18)" >&2; exit 2 ;; esac
done

if [ "$(id -u)" != 0 ]; then
	echo "test.sh: run me as root (it installs packages and the extension)" >&2
	exit 1
fi

work=$(mktemp -d /tmp/simhash-test.XXXXXX)
chmod 755 "$work"
bg_pids=()
cleanup() {
	local p
	for p in "${bg_pids[@]}"; do kill "$p" 2>/dev/null; done
	rm -rf "$work"
}
trap cleanup EXIT

# fail_line NAME RESULTS: a failure of a step outside the suites, counted
fail_line() {
	echo "FAIL $1" | tee -a "$2"
}

# suite_here V RESULTS -- the suite of PostgreSQL V installed on this system
# (the machine's 15, or V inside its environment); appends its PASS/FAIL
# lines to RESULTS.
suite_here() {
	local v=$1 out=$2 pre=$work/pre-$1 run=$work/run-$1 tree=$work/tree-$1
	local build_log=$work/build-$1.log installcheck_dir= status
	export SIMHASH_TEST_PREFIX=pg$v/ SIMHASH_PG_MAJOR=$v
	if [ "$v" = "$host_version" ] && [ -z "$in_env" ]; then
		export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/$v/bin/pg_config}
	else
		export PG_CONFIG=/usr/lib/postgresql/$v/bin/pg_config
	fi
	: >"$pre"

	# The Debian package, built, installed into the system's PostgreSQL,
	# tested and purged -- before "make install" below, which may install
	# into the same system (the package test first removes files of an
	# earlier one).  One package test at a time on this machine.
	mkdir -p /run/lock
	(
		flock 9
		SIMHASH_RESULTS=$pre bash sql_tests/release/package.sh
	) 9>/run/lock/simhash-package-test.lock

	echo "== pg$v: building and installing"
	if ! { make -s clean && make -s all && make -s install; } >"$build_log" 2>&1; then
		tail -60 "$build_log"
		echo "FAIL ${SIMHASH_TEST_PREFIX}build" | tee -a "$pre"
		cat "$pre" >>"$out"
		return 1
	fi

	# The PGXN release zip, unpacked, built and installed (over the files
	# just installed, from the same sources): the suites below test that
	# build, and the pg_regress and isolation suites run in the unpacked
	# release, which is its installcheck.  Without it, they run in the
	# checkout.
	if SIMHASH_RESULTS=$pre bash sql_tests/release/pgxn.sh "$work/pgxn-$v"; then
		installcheck_dir=$(echo "$work"/pgxn-"$v"/simhash-*)
	else
		make -s install >"$build_log" 2>&1 || cat "$build_log"
	fi

	# PostgreSQL refuses to run as root: test from a copy the postgres user owns
	cp -a . "$tree"
	chown -R postgres: "$work"
	runuser -u postgres -- env PG_CONFIG="$PG_CONFIG" SIMHASH_PRE_RESULTS="$pre" \
		SIMHASH_INSTALLCHECK_DIR="$installcheck_dir" SIMHASH_TEST_PREFIX="$SIMHASH_TEST_PREFIX" \
		SIMHASH_RESULTS_OUT="$run" bash "$tree/sql_tests/run.sh"
	status=$?
	if [ -s "$run" ]; then
		cat "$run" >>"$out"
	else
		echo "FAIL ${SIMHASH_TEST_PREFIX}suites" | tee -a "$out"
	fi
	installcheck_dir=${installcheck_dir:-$tree}
	if [ $status -ne 0 ] && [ -d "$installcheck_dir/results" ]; then
		local keep=results regression_diffs=regression.diffs output_iso=output_iso
		if [ -n "$in_env" ] || [ "$v" != "$host_version" ]; then
			keep=results-pg$v regression_diffs=regression-pg$v.diffs output_iso=output_iso-pg$v
		fi
		rm -rf "$keep" "$output_iso"
		mkdir -p "$keep"
		cp -a "$installcheck_dir"/results/. "$keep"/ 2>/dev/null
		cp -a "$installcheck_dir"/regression.diffs "$regression_diffs" 2>/dev/null
		[ ! -d "$installcheck_dir/output_iso" ] || cp -a "$installcheck_dir/output_iso" "$output_iso"
		echo "(pg$v failure output copied to ./$keep, ./$regression_diffs and ./$output_iso)"
	fi
	return 0
}

# Inside an environment (tools/test.sh runs itself there): one version.
if [ -n "$in_env" ]; then
	: >"$work/results"
	suite_here "$in_env" "$work/results"
	cp "$work/results" "${SIMHASH_RESULTS_OUT:?}"
	exit 0
fi

tools/install-deps.sh || { echo "0 passed, 1 failed (dependencies)"; exit 1; }
started=$SECONDS

# The environments of the other versions, provisioned in the background
# while the machine's own version is tested (debootstrap and apt-get are
# mostly waiting for the network and the disk).
declare -A env_pid
for v in $versions; do
	[ "$v" != "$host_version" ] || continue
	{
		t=$(date +%s)
		bash tools/pg-release-env.sh setup "$v" "$env_root/$v"
		status=$?
		echo "(pg$v environment: $(($(date +%s) - t)) s)"
		echo $status >"$work/env-$v.status"
	} >"$work/env-$v.log" 2>&1 &
	env_pid[$v]=$!
	bg_pids+=($!)
done

# The machine's PostgreSQL 15 with simhash, for the old clusters of the
# pg_upgrade tests: a private copy (tools/dev-pg.sh), simhash installed
# into it from the checkout (built there by the 15 suite already, if it ran).
pg15_build() {
	local old=$work/pg15
	bash tools/dev-pg.sh "$old" >/dev/null &&
		make -s -j2 all PG_CONFIG="$old/usr/lib/postgresql/15/bin/pg_config" \
			>"$work/pg15-build.log" 2>&1 &&
		make -s install PG_CONFIG="$old/usr/lib/postgresql/15/bin/pg_config" \
			>>"$work/pg15-build.log" 2>&1 && touch "$work/pg15.ok"
}

# pg15_for_upgrade DIR -- that copy in the environment DIR under
# /opt/simhash-pg15, with the shared libraries it needs that DIR's release
# does not have (other sonames: libicu, LLVM, ...) in /opt/simhash-pg15/lib.
pg15_for_upgrade() {
	local dir=$1 old=$1/opt/simhash-pg15 f so path
	[ -f "$work/pg15.ok" ] || { cat "$work/pg15-build.log" 2>/dev/null; return 1; }
	rm -rf "$old"
	mkdir -p "$old/lib"
	cp -a "$work/pg15/usr" "$old/" || return 1
	for f in "$old"/usr/lib/postgresql/15/bin/* "$old"/usr/lib/postgresql/15/lib/*.so; do
		ldd "$f" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
	done | sort -u | while read -r so path; do
		[ -e "$dir/usr/lib/x86_64-linux-gnu/$so" ] || [ -e "$dir/lib/x86_64-linux-gnu/$so" ] ||
			cp -L "$path" "$old/lib/$so"
	done
	chmod -R a+rX "$old"
}

# suite_env V RESULTS -- the suite of V in its environment, then pg_upgrade
# 15 -> V; appends its PASS/FAIL lines to RESULTS.
suite_env() {
	local v=$1 out=$2 dir=$env_root/$1 status d lock
	echo "== pg$v: waiting for the $(bash tools/pg-release-env.sh release "$v") environment ($dir)"
	while [ ! -f "$work/env-$v.status" ]; do
		if ! kill -0 "${env_pid[$v]}" 2>/dev/null; then
			sleep 1
			[ -f "$work/env-$v.status" ] || echo 1 >"$work/env-$v.status"
			break
		fi
		sleep 2
	done
	status=$(cat "$work/env-$v.status")
	cat "$work/env-$v.log"
	if [ "$status" != 0 ]; then
		fail_line "pg$v/env" "$out"
		return
	fi
	echo "PASS pg$v/env" | tee -a "$out"
	# one suite at a time in an environment
	exec {lock}>"$dir.suite.lock"
	flock "$lock"
	rm -f "$dir$env_results"
	bash tools/pg-release-env.sh copy "$dir" "$env_src"
	bash tools/pg-release-env.sh run "$dir" -- env SIMHASH_RESULTS_OUT="$env_results" \
		bash "$env_src/tools/test.sh" --in-env "$v"
	if [ -s "$dir$env_results" ]; then
		cat "$dir$env_results" >>"$out"
	else
		fail_line "pg$v/suites" "$out"
	fi
	for d in results-pg$v regression-pg$v.diffs output_iso-pg$v; do
		rm -rf "./$d"
		[ ! -e "$dir$env_src/$d" ] || cp -a "$dir$env_src/$d" "./$d"
	done

	echo "== pg$v: pg_upgrade from the machine's PostgreSQL 15"
	if ! pg15_for_upgrade "$dir"; then
		fail_line "pg$v/upgrade/setup" "$out"
		return
	fi
	rm -f "$dir/tmp/simhash-upgrade.results"
	bash tools/pg-release-env.sh run "$dir" -u postgres -- env \
		SIMHASH_RESULTS=/tmp/simhash-upgrade.results SIMHASH_TEST_PREFIX="pg$v/" \
		LD_LIBRARY_PATH=/opt/simhash-pg15/lib \
		bash "$env_src/sql_tests/release/pg_upgrade.sh" \
		/opt/simhash-pg15/usr/lib/postgresql/15/bin /usr/lib/postgresql/"$v"/bin
	if [ -s "$dir/tmp/simhash-upgrade.results" ]; then
		cat "$dir/tmp/simhash-upgrade.results" >>"$out"
	else
		fail_line "pg$v/upgrade" "$out"
	fi
}

# 15 first, here; then 17 and 18 in their environments, side by side
# (SIMHASH_PG_SERIAL=1: one after the other): the first one's output as it
# comes, the others' when they are done.
declare -A took
env_versions=()
for v in $versions; do
	[ "$v" = "$host_version" ] || env_versions+=("$v")
done
if [[ " $versions " == *" $host_version "* ]]; then
	t0=$SECONDS
	suite_here "$host_version" "$work/results-$host_version"
	took[$host_version]=$((SECONDS - t0))
fi
if [ ${#env_versions[@]} -gt 0 ]; then
	echo "== PostgreSQL 15 with simhash, for pg_upgrade"
	t0=$SECONDS
	pg15_build || cat "$work/pg15-build.log"
	echo "(built in $((SECONDS - t0)) s)"
fi
declare -A suite_pid
foreground=("${env_versions[@]}")
if [ ${#env_versions[@]} -gt 1 ] && [ "${SIMHASH_PG_SERIAL:-0}" != 1 ]; then
	foreground=("${env_versions[0]}")
	for v in "${env_versions[@]:1}"; do
		: >"$work/results-$v"
		{
			t=$(date +%s)
			suite_env "$v" "$work/results-$v"
			echo $(($(date +%s) - t)) >"$work/took-$v"
		} >"$work/suite-$v.log" 2>&1 &
		suite_pid[$v]=$!
		bg_pids+=($!)
	done
fi
for v in "${foreground[@]}"; do
	: >"$work/results-$v"
	t0=$SECONDS
	suite_env "$v" "$work/results-$v"
	took[$v]=$((SECONDS - t0))
done
for v in "${!suite_pid[@]}"; do
	wait "${suite_pid[$v]}"
	echo "== pg$v (ran beside the others)"
	cat "$work/suite-$v.log"
	took[$v]=$(cat "$work/took-$v" 2>/dev/null || echo "?")
done

echo "== summary"
: >"$work/results"
for v in $versions; do
	[ -f "$work/results-$v" ] || echo "FAIL pg$v/suites" >"$work/results-$v"
	cat "$work/results-$v" >>"$work/results"
	p=$(grep -c "^PASS pg$v/" "$work/results-$v")
	f=$(grep -c "^FAIL pg$v/" "$work/results-$v")
	echo "pg$v: $p passed, $f failed (${took[$v]:-?} s)"
done
echo "(whole run: $((SECONDS - started)) s)"
passed=$(grep -c '^PASS' "$work/results")
failed=$(grep -c '^FAIL' "$work/results")
if [ "$passed" -eq 0 ] && [ "$failed" -eq 0 ]; then
	failed=1		# nothing ran: that is a failure too
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
