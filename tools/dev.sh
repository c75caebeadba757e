#!/bin/bash
# tools/dev.sh [--pg 17] [--stop] [TEST...] -- the inner loop: build,
# install, and run some tests in a throw-away cluster that is kept running
# between runs.  "tools/dev.sh --help" says more.
set -uo pipefail

usage() {
	cat <<'EOF'
usage: tools/dev.sh [--pg VERSION] [TEST...]
       tools/dev.sh [--pg VERSION] --stop

Builds this checkout (make -j2, -Werror), installs it into the PostgreSQL
that PG_CONFIG names (default: pg_config on PATH, else the system's 15),
starts a throw-away cluster with the settings the suites need
(max_prepared_transactions=10) or reuses the one a previous run left
running (restarted when the installed simhash.so changed), and runs each
TEST:

  NAME           sql/NAME.sql, a pg_regress test (expected/NAME.out)
  NAME           sql_tests/isolation/specs/NAME.spec, an isolation spec
  NNN or NAME    sql_tests/t/NNN_*.pl or sql_tests/t/NNN_NAME.pl, a TAP test
                 (it starts clusters of its own)
  NAME           sql_tests/checks/NAME.py, a self-checking script
  regress/NAME, isolation/NAME, tap/NAME, check/NAME   say which one
  all            every pg_regress and isolation test of the Makefile

No TEST: build, install and start the cluster only (then psql with the
PGHOST and PGPORT it prints).  Prints "ok NAME" or "FAILED NAME" per test,
the differences of each failed one, and exits 1 if any failed (2: usage,
build or cluster error).

Run as root, it builds and installs as root and runs the server and the
tests as the postgres user, from a copy of the checkout it owns (in the
state directory below: the results and regression.diffs are there).

  --pg VERSION   run in the PostgreSQL VERSION environment of tools/test.sh
                 (15: this machine's, or PG_CONFIG; 17: Debian 13, 18: sid,
                 chroots made by tools/pg-release-env.sh; root
                 only; a full build each time, the cluster is not kept;
                 waits while tools/test.sh runs there)
  --stop         stop the cluster and remove its state directory

State: /tmp/simhash-dev-USER/KEY (KEY: this checkout and PG_CONFIG).
EOF
}

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2

# The part that runs as the server's user (postgres when we are root), in
# the checkout or its copy: cluster, then the tests.  Arguments: the state
# directory, then the tests, already resolved to KIND:NAME.
if [ "${1:-}" = --as-tester ]; then
	state=$2
	shift 2
	. tools/cluster.sh
	cl=$state/cluster
	stamp=$(md5sum "$("$PG_CONFIG" --pkglibdir)/simhash.so" | cut -d' ' -f1)
	if [ -f "$cl/port" ] && "$PG_BINDIR/pg_ctl" -D "$cl/data" status >/dev/null 2>&1; then
		export PGHOST=$cl PGPORT=$(cat "$cl/port") PGUSER=postgres PGDATABASE=postgres
		if [ "$(cat "$cl/stamp" 2>/dev/null)" != "$stamp" ]; then
			echo "== simhash.so changed: restarting the cluster in $cl"
			"$PG_BINDIR/pg_ctl" -D "$cl/data" -m fast -w restart >/dev/null ||
				{ tail -20 "$cl/server.log"; exit 2; }
		else
			echo "== reusing the cluster in $cl"
		fi
	else
		echo "== starting a cluster in $cl"
		[ ! -d "$cl/data" ] || "$PG_BINDIR/pg_ctl" -D "$cl/data" -m immediate -w stop >/dev/null 2>&1
		rm -rf "$cl"
		cluster_start "$cl" max_prepared_transactions=10 || exit 2
		echo "$PGPORT" >"$cl/port"
	fi
	echo "$stamp" >"$cl/stamp"
	"$PG_BINDIR/psql" -XAtqc 'SELECT 1' >/dev/null || { tail -20 "$cl/server.log"; exit 2; }
	echo "   PGHOST=$PGHOST PGPORT=$PGPORT ($("$PG_BINDIR/postgres" --version))"

	failed=0
	log=$state/log
	# the result of each test in a pg_regress log (as sql_tests/in-cluster.sh)
	# and its time: "name ok|FAILED|failed|not [N ms]"
	regress_results() {
		sed -nE -e 's/^(test |     )? *([A-Za-z0-9_-]+) +\.\.\. (ok|FAILED|failed)( +[0-9]+ ms)?.*/\2 \3\4/p' \
			-e 's/^(ok|not) (ok )?[0-9]+ +[-+] +([A-Za-z0-9_-]+)( +[0-9]+ ms)?.*/\3 \1\4/p' "$1"
	}
	report() {					# report NAME ok|... [TIME]
		if [ "$2" = ok ]; then
			echo "ok $1${3:+ ($3)}"
		else
			echo "FAILED $1"
			failed=$((failed + 1))
		fi
	}
	# pg_suite REGRESS|ISOLATION DIFFS NAME...: one make installcheck; a test
	# passes only if make succeeds and the log reports it "ok"
	pg_suite() {
		local var=$1 diffs=$2 status name result ms shown=
		local -A seen=() took=()
		shift 2
		[ $# -gt 0 ] || return 0
		rm -f "$diffs"
		if [ "$var" = REGRESS ]; then
			make -s --no-print-directory PG_CONFIG="$PG_CONFIG" installcheck \
				REGRESS="$*" ISOLATION= >"$log" 2>&1
		else
			make -s --no-print-directory PG_CONFIG="$PG_CONFIG" installcheck \
				REGRESS= ISOLATION="$*" >"$log" 2>&1
		fi
		status=$?
		while read -r name result ms; do
			seen[$name]=$result
			took[$name]=$ms
		done < <(regress_results "$log")
		for name in "$@"; do
			if [ "${seen[$name]:-}" = ok ] && [ $status = 0 ]; then
				report "$name" ok "${took[$name]}"
				continue
			fi
			report "$name" "${seen[$name]:-not reported}"
			if [ -z "$shown" ]; then
				shown=1
				if [ -f "$diffs" ]; then
					echo "== $PWD/$diffs:"
					cat "$diffs"
				else
					tail -20 "$log"
				fi
			fi
		done
	}
	regress=() isolation=()
	for t in "$@"; do
		case $t in
			regress:*) regress+=("${t#*:}") ;;
			isolation:*) isolation+=("${t#*:}") ;;
		esac
	done
	pg_suite REGRESS regression.diffs "${regress[@]}"
	pg_suite ISOLATION output_iso/regression.diffs "${isolation[@]}"
	for t in "$@"; do
		case $t in
			tap:*)
				echo "== TAP ${t#*:}"
				if make -s --no-print-directory PG_CONFIG="$PG_CONFIG" installcheck-tap \
					PROVE_TESTS="${t#*:}" PROVE_FLAGS="-I sql_tests/t" >"$log" 2>&1; then
					report "${t#*:}" ok
				else
					cat "$log"
					echo "(logs: $PWD/tmp_check/log)"
					report "${t#*:}" failed
				fi
				;;
			check:*)
				echo "== check ${t#*:}"
				if /usr/bin/python3 "${t#*:}"; then
					report "${t#*:}" ok
				else
					report "${t#*:}" failed
				fi
				;;
		esac
	done
	[ $# = 0 ] || echo "$(($# - failed)) passed, $failed failed"
	[ $failed = 0 ] || exit 1
	exit 0
fi

pg=
stop=
tests=()
while [ $# -gt 0 ]; do
	case $1 in
		-h|--help) usage; exit 0 ;;
		--pg) [ $# -ge 2 ] || { usage >&2; exit 2; }; pg=$2; shift 2 ;;
		--pg=*) pg=${1#--pg=}; shift ;;
		--stop) stop=1; shift ;;
		-*) usage >&2; exit 2 ;;
		*) tests+=("$1"); shift ;;
	esac
done

# 15 is the machine's own (Debian 12), as in tools/test.sh
if [ "$pg" = 15 ]; then
	pg=
	PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
fi

# Another PostgreSQL version: this script again, inside its environment.
if [ -n "$pg" ]; then
	[ "$(id -u)" = 0 ] || { echo "dev.sh: --pg needs root (a chroot)" >&2; exit 2; }
	env_dir=${SIMHASH_PG_ENV_ROOT:-/var/cache/simhash/pg-env}/$pg
	bash tools/pg-release-env.sh setup "$pg" "$env_dir" >/dev/null || exit 2
	# one suite at a time in an environment (tools/test.sh takes the same
	# lock): both install into its PostgreSQL
	exec {lock}>"$env_dir.suite.lock"
	flock "$lock"
	bash tools/pg-release-env.sh copy "$env_dir" /srv/simhash-dev || exit 2
	bash tools/pg-release-env.sh run "$env_dir" -- env \
		PG_CONFIG=/usr/lib/postgresql/"$pg"/bin/pg_config \
		bash /srv/simhash-dev/tools/dev.sh ${stop:+--stop} "${tests[@]}"
	status=$?
	[ -n "$stop" ] || bash tools/pg-release-env.sh run "$env_dir" -- env \
		PG_CONFIG=/usr/lib/postgresql/"$pg"/bin/pg_config \
		bash /srv/simhash-dev/tools/dev.sh --stop >/dev/null
	exit $status
fi

if [ -z "${PG_CONFIG:-}" ]; then
	PG_CONFIG=$(command -v pg_config || echo /usr/lib/postgresql/15/bin/pg_config)
fi
export PG_CONFIG
[ -x "$PG_CONFIG" ] || { echo "dev.sh: no pg_config at $PG_CONFIG" >&2; exit 2; }
PG_BINDIR=$("$PG_CONFIG" --bindir)

user=$(id -un)
tester=$user
[ "$user" != root ] || tester=postgres
state=/tmp/simhash-dev-$user/$(echo "$root $PG_CONFIG" | md5sum | cut -c1-12)

# as_tester CMD...: run CMD as the server's user
as_tester() {
	if [ "$tester" = "$user" ]; then
		"$@"
	else
		runuser -u "$tester" -- "$@"
	fi
}

if [ -n "$stop" ]; then
	if [ -d "$state/cluster/data" ]; then
		as_tester "$PG_BINDIR/pg_ctl" -D "$state/cluster/data" -m fast -w stop >/dev/null 2>&1
	fi
	rm -rf "$state"
	echo "dev.sh: stopped and removed $state"
	exit 0
fi

# Which kind each test is: KIND:NAME (TAP tests and checks: their path)
resolved=()
resolve() {
	local t=$1 kind= name f
	local -a found=()
	case $t in
		regress/*|isolation/*|tap/*|check/*) kind=${t%%/*}; t=${t#*/} ;;
	esac
	if [ "$t" = all ] && [ -z "$kind" ]; then
		for name in $(printf 'print-%%:\n\t@echo $($*)\n' |
			make -s --no-print-directory PG_CONFIG="$PG_CONFIG" -f Makefile -f - print-REGRESS); do
			resolved+=("regress:$name")
		done
		for name in $(printf 'print-%%:\n\t@echo $($*)\n' |
			make -s --no-print-directory PG_CONFIG="$PG_CONFIG" -f Makefile -f - print-ISOLATION); do
			resolved+=("isolation:$name")
		done
		return 0
	fi
	if [ -z "$kind" ] || [ "$kind" = regress ]; then
		[ ! -f "sql/$t.sql" ] || found+=("regress:$t")
	fi
	if [ -z "$kind" ] || [ "$kind" = isolation ]; then
		[ ! -f "sql_tests/isolation/specs/$t.spec" ] || found+=("isolation:$t")
	fi
	if [ -z "$kind" ] || [ "$kind" = tap ]; then
		for f in sql_tests/t/"$t".pl sql_tests/t/"$t"_*.pl sql_tests/t/[0-9][0-9][0-9]_"$t".pl; do
			[ ! -f "$f" ] || found+=("tap:$f")
		done
	fi
	if [ -z "$kind" ] || [ "$kind" = check ]; then
		[ ! -f "sql_tests/checks/$t.py" ] || found+=("check:sql_tests/checks/$t.py")
	fi
	found=($(printf '%s\n' "${found[@]}" | sort -u))
	if [ ${#found[@]} = 0 ]; then
		echo "dev.sh: no test $1 (tools/dev.sh --help)" >&2
		return 1
	elif [ ${#found[@]} -gt 1 ]; then
		echo "dev.sh: $1 is ambiguous: ${found[*]} (say regress/, isolation/, tap/ or check/)" >&2
		return 1
	fi
	resolved+=("${found[0]}")
}
for t in "${tests[@]}"; do
	resolve "$t" || exit 2
done

started=$SECONDS
echo "== building and installing into $("$PG_CONFIG" --pkglibdir)"
if ! make -s -j2 PG_CONFIG="$PG_CONFIG" >"/tmp/simhash-dev-build.$$.log" 2>&1 ||
	! make -s PG_CONFIG="$PG_CONFIG" install >>"/tmp/simhash-dev-build.$$.log" 2>&1; then
	cat "/tmp/simhash-dev-build.$$.log"
	rm -f "/tmp/simhash-dev-build.$$.log"
	echo "dev.sh: the build failed" >&2
	exit 2
fi
rm -f "/tmp/simhash-dev-build.$$.log"

mkdir -p "$state"
tree=$root
if [ "$tester" != "$user" ]; then
	# the server's user cannot write here: test from a copy it owns
	tree=$state/tree
	rm -rf "$tree"
	bash tools/copy-tree.sh "$tree" || exit 2
	chmod 755 "$(dirname "$state")" "$state"
	chown -R "$tester": "$state"
fi
as_tester env PG_CONFIG="$PG_CONFIG" bash "$tree/tools/dev.sh" --as-tester "$state" "${resolved[@]}"
status=$?
echo "(dev.sh: $((SECONDS - started)) s)"
exit $status
