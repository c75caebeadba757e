
# Copyright (c) 2026, the simhash authors

# Concurrency: pgbench clients insert random rows and near-duplicates into
# the same key lists (single-row and multi-row, checking their own
# uncommitted rows through the index), update and delete rows found through
# the index, and run radius and nearest-neighbour searches through index
# and bitmap scans, each compared in the same snapshot with a sequential
# scan (assert_same raises on any difference); meanwhile another client
# runs VACUUM in a loop.  pgbench must finish without a single error (no
# mismatch, no deadlock, no lock or buffer error), and afterwards the index
# must pass simhash_index_check(idx, true) and agree with sequential scans.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SimhashTAP;
use Test::More;
use Time::HiRes qw(time);

my $start_time = time;
my $duration = 15;

my $node = PostgreSQL::Test::Cluster->new('bench');
$node->init;
$node->append_conf(
	'postgresql.conf', qq{
shared_buffers = 16MB
max_connections = 20
log_statement = none
# disabled plans (enable_seqscan = off) cost 1e10 and would trigger JIT
jit = off
deadlock_timeout = 100ms
log_lock_waits = on
autovacuum_naptime = 1s
});
$node->start;

$node->safe_psql('postgres', setup_sql());
# clusters: fp_mk(1..40, 0) with one or two bits flipped
$node->safe_psql(
	'postgres', q{
CREATE TABLE docs (
	id int8 GENERATED ALWAYS AS IDENTITY,
	src int8 NOT NULL,
	mask int8,
	fp simhash64 GENERATED ALWAYS AS (fp_mk(src, mask)) STORED);
INSERT INTO docs (src, mask)
	SELECT CASE WHEN i % 2 = 0 THEN i % 40 + 1 ELSE 1000 + i END,
		   CASE WHEN i % 2 = 0 THEN (1::int8 << (i % 64)) # (1::int8 << ((i / 64) % 64))
				WHEN i % 101 = 0 THEN NULL ELSE 0 END
	FROM generate_series(1, 30000) i;
CREATE INDEX docs_fp ON docs USING simhash (fp);
ANALYZE docs;
});

my %scripts = (
	# a random row and 1-40 near-copies of a cluster centre, then the
	# transaction's own view through the index equals a sequential scan
	'insert.sql@5' => q{
\set src random(1000000, 100000000)
\set c random(1, 40)
\set b1 random(0, 63)
\set b2 random(0, 63)
\set n random(1, 40)
BEGIN;
INSERT INTO docs (src, mask) VALUES (:src, 0);
INSERT INTO docs (src, mask)
	SELECT :c, (1::int8 << ((:b1 + i) % 64)) # (1::int8 << :b2) FROM generate_series(1, :n) i;
SELECT assert_same(
	(SELECT count(*) || ':' || sum(id) FROM docs WHERE fp <@ simhash_ball(fp_mk(:c, 1::int8 << :b2), 2)),
	(SELECT count(*) || ':' || sum(id) FROM docs WHERE hamming(fp, fp_mk(:c, 1::int8 << :b2)) + 0 <= 2),
	'own rows near cluster ' || :c);
COMMIT;
},
	# a radius search through an index scan
	'radius.sql@3' => q{
\set c random(1, 40)
\set b random(0, 63)
\set k random(0, 6)
SELECT assert_same(
	(SELECT count(*) || ':' || coalesce(sum(id), 0) FROM docs WHERE fp <@ simhash_ball(fp_mk(:c, 1::int8 << :b), :k)),
	(SELECT count(*) || ':' || coalesce(sum(id), 0) FROM docs WHERE hamming(fp, fp_mk(:c, 1::int8 << :b)) + 0 <= :k),
	'radius ' || :k || ' around cluster ' || :c);
},
	# the same through a bitmap scan
	'bitmap.sql@1' => q{
\set c random(1, 40)
\set k random(0, 4)
BEGIN;
SET LOCAL enable_indexscan = off;
SET LOCAL enable_bitmapscan = on;
SELECT assert_same(
	(SELECT count(*) || ':' || coalesce(sum(id), 0) FROM docs WHERE fp <@ simhash_ball(fp_mk(:c, 0), :k)),
	(SELECT count(*) || ':' || coalesce(sum(id), 0) FROM docs WHERE hamming(fp, fp_mk(:c, 0)) + 0 <= :k),
	'bitmap radius ' || :k || ' around cluster ' || :c);
COMMIT;
},
	# nearest neighbours of a random point or of a cluster centre
	'knn.sql@2' => q{
\set r random(1, 100000000)
\set c random(1, 40)
SELECT assert_same(
	(SELECT string_agg(d::text, ',') FROM (SELECT hamming(fp, fp_of(:r)) AS d, id FROM docs ORDER BY fp <-> fp_of(:r) LIMIT 10) s),
	(SELECT string_agg(d::text, ',') FROM (SELECT hamming(fp, fp_of(:r)) + 0 AS d FROM docs WHERE fp IS NOT NULL ORDER BY 1 LIMIT 10) s),
	'nearest neighbours of ' || :r);
SELECT assert_same(
	(SELECT string_agg(d::text, ',') FROM (SELECT fp <-> fp_mk(:c, 0) AS d FROM docs ORDER BY fp <-> fp_mk(:c, 0) LIMIT 30) s),
	(SELECT string_agg(d::text, ',') FROM (SELECT hamming(fp, fp_mk(:c, 0)) + 0 AS d FROM docs WHERE fp IS NOT NULL ORDER BY 1 LIMIT 30) s),
	'nearest neighbours of cluster ' || :c);
},
	# move a near-copy to another key, delete another (one row each: no
	# application-level deadlocks), both found through the index
	'churn.sql@2' => q{
\set c random(1, 40)
\set b1 random(0, 63)
\set b2 random(0, 63)
\set c2 random(1, 40)
BEGIN;
UPDATE docs SET src = :c2 WHERE ctid = (SELECT ctid FROM docs WHERE fp <@ simhash_ball(fp_mk(:c, 1::int8 << :b1), 1) LIMIT 1);
DELETE FROM docs WHERE ctid = (SELECT ctid FROM docs WHERE fp <@ simhash_ball(fp_mk(:c2, 1::int8 << :b2), 1) LIMIT 1);
COMMIT;
},
);

my $opts = '-c enable_seqscan=off -c enable_bitmapscan=off';
my @files;
for my $f (sort keys %scripts)
{
	my ($name, $weight) = split /@/, $f;
	my $path = $node->basedir . "/$name";
	append_to_file($path, $scripts{$f});
	push @files, '-f', "$path\@$weight";
}
my $vacuum_script = $node->basedir . '/vacuum.sql';
append_to_file($vacuum_script, "VACUUM docs;\n\\sleep 100 ms\nVACUUM (INDEX_CLEANUP ON) docs;\n\\sleep 100 ms\n");

my @conn = ('-h', $node->host, '-p', $node->port);
my ($vout, $verr) = ('', '');
my $vacuum = IPC::Run::start(
	[ 'pgbench', '-n', '-c', '1', '-T', $duration, @conn, '-f', $vacuum_script, 'postgres' ],
	'>', \$vout, '2>', \$verr);

my ($out, $err) = ('', '');
my $ok;
{
	local $ENV{PGOPTIONS} = $opts;
	$ok = IPC::Run::run(
		[ 'pgbench', '-n', '-c', '4', '-j', '2', '-T', $duration, @conn, @files, 'postgres' ],
		'>', \$out, '2>', \$err);
}
my $vok = $vacuum->finish;
note("pgbench:\n$out");

ok($ok, 'pgbench exit status 0') or diag("stderr:\n$err");
like($out, qr/number of failed transactions: 0 \(/, 'pgbench: no failed transactions');
unlike($err, qr/ERROR|FATAL|mismatch|deadlock|aborted/i, 'pgbench: no error, mismatch or deadlock')
  or diag($err);
for my $s (qw(insert radius bitmap knn churn))
{
	my ($n) = $out =~ m{/$s\.sql\n(?:.*\n)*?\s*- (\d+) transactions}m;
	cmp_ok($n // 0, '>', 5, "pgbench ran the $s script (" . ($n // 0) . ' transactions)');
}
ok($vok, 'the VACUUM loop exit status 0') or diag("stderr:\n$verr");
like($vout, qr/number of transactions actually processed: [1-9]/, 'the VACUUM loop ran');

my $log = slurp_file($node->logfile);
unlike($log, qr/deadlock detected/, 'server log: no deadlock');
unlike($log, qr/PANIC|TRAP:|too many LWLocks|no unpinned buffers|could not read block|invalid page/,
	'server log: no PANIC, assertion, lock or page error');

my $rows = $node->safe_psql('postgres', 'SELECT count(*) FROM docs');
cmp_ok($rows, '>', 31000, "the table grew ($rows rows)");
note($node->safe_psql('postgres', q{SELECT * FROM simhash_index_stats('docs_fp')}));

check_index($node, 'docs_fp', 'after pgbench');
compare_index_seq($node, 'docs', 'after pgbench', centers => [
	query_centers($node, 'docs', own => 10, clusters => 10) ]);
rows_found_by_index($node, 'docs', 'after pgbench');

$node->safe_psql('postgres', 'VACUUM (INDEX_CLEANUP ON) docs');
check_index($node, 'docs_fp', 'after a final VACUUM');
is($node->safe_psql('postgres',
	q{SELECT (SELECT sum(entries) FROM simhash_index_stats('docs_fp') WHERE tree IN ('band 0', 'nulls'))
		   - (SELECT count(*) FROM docs)}),
	'0', 'after VACUUM the index has one entry per row');

$node->stop;
note(sprintf('003_pgbench took %.1f s', time - $start_time));
done_testing();
