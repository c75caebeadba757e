#!/bin/bash
# sql_tests/release/package.sh -- the Debian package postgresql-NN-simhash, end to
# end, in the system's PostgreSQL NN ($SIMHASH_PG_MAJOR, default 15: the
# machine's; tools/test.sh runs it for 17 and 18 in their Debian releases).
# Run as root (tools/test.sh does, before it installs the extension with
# make).
#
# Builds the package (tools/build-deb.sh, without the build-time suite,
# which the installed package passes below), installs it with apt-get,
# compares "dpkg -L" with the files the Makefile installs, creates the
# extension in a throw-away cluster and runs a smoke query, runs the
# package's autopkgtest (debian/tests/installcheck: the regression suite
# against the installed files), runs lintian, purges the package and
# checks that nothing is left.  Appends "PASS package/..." or
# "FAIL package/..." lines to $SIMHASH_RESULTS.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${SIMHASH_RESULTS:?}"

pgv=${SIMHASH_PG_MAJOR:-15}
pkg=postgresql-$pgv-simhash
pgbin=/usr/lib/postgresql/$pgv/bin
pglib=/usr/lib/postgresql/$pgv/lib
pgext=/usr/share/postgresql/$pgv/extension
doc=/usr/share/doc/$pkg
# lintian warnings accepted (README.md, "Packaging", says why)
lintian_accepted='initial-upload-closes-no-bugs'

. sql_tests/record.sh

apt_get() {
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 -y -q "$@"
}

# everything of simhash in the system's PostgreSQL, and the package's docs
simhash_files() {
	find "$pglib" "$pgext" -maxdepth 2 -name 'simhash*' 2>/dev/null | sort
	[ ! -e "$doc" ] || echo "$doc"
}

package_status() {		# installed, config-files, not-installed..., or nothing
	dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null
}

work=$(mktemp -d /tmp/simhash-package.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"

# The package's upstream version is META.json's and the default_version of
# the control file.
meta_version=$(python3 -c 'import json; print(json.load(open("META.json"))["version"])')
deb_version=$(dpkg-parsechangelog -S Version)
control_version=$(sed -nE "s/^default_version *= *'([^']+)'.*/\1/p" simhash.control)
if [ "${deb_version%-*}" = "$meta_version" ] && [ "$control_version" = "$meta_version" ]; then
	record package/versions ok
else
	echo "debian/changelog $deb_version, META.json $meta_version, simhash.control $control_version"
	record package/versions fail
fi

# Start clean: no package left by an interrupted run, and no files of an
# earlier "make install" into the system (dpkg would silently take them
# over, and the purge would then remove what make had installed).
status=$(package_status)
if [ -n "$status" ] && [ "$status" != not-installed ]; then
	apt_get purge "$pkg" >/dev/null
fi
for f in $(simhash_files); do
	if ! dpkg -S "$f" >/dev/null 2>&1; then
		echo "package.sh: removing $f (not from a package: an earlier make install)"
		rm -rf "$f"
	fi
done

echo "== Debian package: build, install, smoke test"
if DEB_BUILD_OPTIONS=nocheck bash tools/build-deb.sh "$work" >"$work/build.log" 2>&1 &&
	deb=$(ls "$work"/"$pkg"_*.deb) && [ -f "$deb" ]; then
	record package/build ok
else
	tail -40 "$work/build.log"
	record package/build fail
	exit 0
fi

if apt_get install --no-install-recommends "$deb" >"$work/install.log" 2>&1 &&
	[ "$(package_status)" = installed ]; then
	record package/install ok
else
	cat "$work/install.log"
	record package/install fail
	exit 0
fi

# The files are those "make install" installs, and the documentation.
mk_var() {						# the value of a variable of the Makefile
	make -s --no-print-directory -f Makefile -f - PG_CONFIG="$pgbin/pg_config" \
		print-var VAR="$1" <<<'print-var: ; @echo $($(VAR))'
}
{
	echo "$pglib/simhash.so"
	if [ "$(mk_var with_llvm)" = yes ]; then		# the JIT's bitcode
		echo "$pglib/bitcode/simhash.index.bc"
		for o in $(mk_var OBJS); do echo "$pglib/bitcode/simhash/${o%.o}.bc"; done
	fi
	echo "$pgext/simhash.control"
	for d in $(mk_var DATA); do echo "$pgext/$(basename "$d")"; done
	echo "$doc/README.md.gz"
	echo "$doc/changelog.Debian.gz"
	echo "$doc/copyright"
} | sort >"$work/expected-files"
dpkg -L "$pkg" | while read -r f; do [ -d "$f" ] || echo "$f"; done | sort >"$work/files"
# and every install or update script of the source tree is among them
missing=$(for s in src/simhash--*.sql; do
	grep -qx "$pgext/$(basename "$s")" "$work/files" || echo "$s"; done)
if diff -u "$work/expected-files" "$work/files" && [ -z "$missing" ]; then
	record package/files ok
else
	echo "scripts not in the package: ${missing:-none}"
	record package/files fail
fi

# CREATE EXTENSION in a throw-away cluster of the system's server, and a
# smoke query: the two near-duplicates (4 bits apart), found through the
# index.
cp tools/cluster.sh "$work/"
cat >"$work/smoke.sql" <<'EOF'
CREATE EXTENSION simhash;
SELECT extversion FROM pg_extension WHERE extname = 'simhash';
CREATE TABLE docs (id int PRIMARY KEY, body text,
	fp simhash64 GENERATED ALWAYS AS (simhash(body)) STORED);
INSERT INTO docs (id, body) VALUES
	(1, 'The quick brown fox jumps over the lazy dog, said the typographer.'),
	(2, 'The quick brown fox jumped over the lazy dog, said the typographer.'),
	(3, '中文文本的近似重复检测，不需要分词。');
CREATE INDEX docs_fp ON docs USING simhash (fp);
SET enable_seqscan = off;
SELECT string_agg(id::text, ',' ORDER BY id) FROM docs
WHERE fp <-> simhash('the quick brown fox jumps over the lazy dog said the typographer') <= 5;
SELECT 'index checked' FROM (SELECT simhash_index_check('docs_fp', true)) c;
EOF
chmod 644 "$work/cluster.sh" "$work/smoke.sql"
install -d -o postgres -g postgres "$work/pg"
smoke=$(runuser -u postgres -- env PG_CONFIG="$pgbin/pg_config" bash -c '
	. "$1/cluster.sh"
	cluster_start "$1/pg/cluster" >/dev/null || exit 1
	psql -XAtq -v ON_ERROR_STOP=1 -f "$1/smoke.sql"
	status=$?
	cluster_stop "$1/pg/cluster"
	exit $status' _ "$work" 2>&1)
if [ "$smoke" = "$(printf '%s\n' "$meta_version" 1,2 'index checked')" ]; then
	record package/smoke ok
else
	echo "$smoke"
	record package/smoke fail
fi

# The package's autopkgtest, debian/tests/installcheck, run as autopkgtest
# runs it: from a copy of the source tree, against the installed package.
echo "== Debian package: autopkgtest (the regression suite against the installed package)"
bash tools/copy-tree.sh "$work/source"
# pg_virtualenv's cluster listens on localhost, 5432 unless PGPORT says
# otherwise; tools/test.sh runs 17's and 18's suites side by side in
# chroots that share the host's network, so each version takes a port of
# its own (two clusters on 5432 made one autopkgtest fail to start).
if (cd "$work/source" && PGPORT=$((54300 + pgv)) debian/tests/installcheck) \
	>"$work/autopkgtest.log" 2>&1; then
	record package/autopkgtest ok
else
	tail -80 "$work/autopkgtest.log"
	record package/autopkgtest fail
fi

# lintian: no errors, no warnings but the accepted ones.  (It advises
# against running as root: the postgres user runs it.)
chmod 644 "$deb"
runuser -u postgres -- lintian "$deb" >"$work/lintian.log" 2>&1
lintian_status=$?				# 0, or 1 with errors; more: lintian failed
if [ $lintian_status -gt 1 ] || grep -E '^[EW]: ' "$work/lintian.log" |
	grep -vE "^W: [^ ]+ ($lintian_accepted)( |$)" | grep -q .; then
	cat "$work/lintian.log"
	record package/lintian fail
else
	record package/lintian ok
fi

# Purge: the package is gone, with every file it had, and nothing of
# simhash is left in the system's PostgreSQL.
apt_get purge "$pkg" >"$work/purge.log" 2>&1
left=$(simhash_files; while read -r f; do [ ! -e "$f" ] || echo "$f"; done <"$work/files")
status=$(package_status)
if [ -z "$left" ] && { [ -z "$status" ] || [ "$status" = not-installed ]; }; then
	record package/purge ok
else
	cat "$work/purge.log"
	echo "package status: ${status:-none}; left behind: ${left:-nothing}"
	record package/purge fail
fi
exit 0
