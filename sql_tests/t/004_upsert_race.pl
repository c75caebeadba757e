
# Copyright (c) 2026, the simhash authors

# INSERT ... ON CONFLICT races must never leave an index entry that points
# at a row other than the one it was made for.  When two sessions race on
# the same key, PostgreSQL kills the loser's speculative tuple at once
# (heap_abort_speculative): it is dead to everybody, VACUUM may free its
# TID, and another transaction's row may take that TID before the loser
# commits.  An entry made for the killed tuple and written at commit would
# then name the new row with the wrong fingerprint.
#
# Twelve pgbench clients upsert random fingerprints into 20 keys and hold
# their transactions open for 20 ms; one client deletes random keys, one
# runs VACUUM (INDEX_CLEANUP ON) in a loop, and one runs
# simhash_index_check(heapallindexed) every 100 ms.  Afterwards every row
# must be found through the index by its own fingerprint, and the index
# must return nothing a sequential scan does not.

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
my $duration = 12;

my $node = PostgreSQL::Test::Cluster->new('upsert');
$node->init;
$node->append_conf(
	'postgresql.conf', qq{
max_connections = 30
log_statement = none
jit = off
autovacuum = off
});
$node->start;

$node->safe_psql('postgres', setup_sql());
$node->safe_psql(
	'postgres', q{
CREATE TABLE up (k int PRIMARY KEY, fp simhash64 NOT NULL);
CREATE INDEX up_fp ON up USING simhash (fp);
});

my %scripts = (
	'upsert.sql' => q{
\set k random(1, 20)
\set r random(1, 1000000000)
BEGIN;
INSERT INTO up (k, fp) VALUES (:k, fp_of(:r)) ON CONFLICT (k) DO NOTHING;
SELECT pg_sleep(0.02);
COMMIT;
},
	'delete.sql' => q{
\set k random(1, 20)
DELETE FROM up WHERE k = :k;
\sleep 10 ms
},
	'vacuum.sql' => q{
VACUUM (INDEX_CLEANUP ON) up;
},
	'check.sql' => q{
SELECT simhash_index_check('up_fp', true);
\sleep 100 ms
},);
my %path;
for my $name (keys %scripts)
{
	$path{$name} = $node->basedir . "/$name";
	append_to_file($path{$name}, $scripts{$name});
}

my @conn = ('-h', $node->host, '-p', $node->port);
my %run;
my %out;
for my $job (
	[ 'upsert.sql', 12 ],
	[ 'delete.sql', 1 ],
	[ 'vacuum.sql', 1 ],
	[ 'check.sql', 1 ])
{
	my ($name, $clients) = @$job;
	$out{$name} = [ '', '' ];
	$run{$name} = IPC::Run::start(
		[
			'pgbench', '-n', '-c', $clients, '-j', 2, '-T', $duration, @conn,
			'-f', $path{$name}, 'postgres'
		],
		'>', \$out{$name}[0], '2>', \$out{$name}[1]);
}
for my $name (sort keys %run)
{
	my $ok = $run{$name}->finish;
	ok($ok, "pgbench $name exit status 0") or diag("stderr:\n$out{$name}[1]");
	like($out{$name}[0], qr/number of transactions actually processed: [1-9]/,
		"pgbench $name ran");
	unlike($out{$name}[1], qr/ERROR|FATAL|XX002|corrupt/i, "pgbench $name: no error")
	  or diag($out{$name}[1]);
}
my ($upserts) = $out{'upsert.sql'}[0] =~ /actually processed: (\d+)/;
note("upsert transactions: " . ($upserts // 0));

my $log = slurp_file($node->logfile);
unlike($log, qr/PANIC|TRAP:|is corrupted/, 'server log: no PANIC, assertion or corruption');

# every row is found by its own fingerprint, and only rows that have it
is( $node->safe_psql(
		'postgres', q{
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(*) FROM up u
WHERE NOT EXISTS (SELECT 1 FROM up v WHERE v.fp <@ simhash_ball(u.fp, 0) AND v.k = u.k)
   OR EXISTS (SELECT 1 FROM up v WHERE v.fp <@ simhash_ball(u.fp, 0) AND v.fp <> u.fp)}),
	'0',
	'every row is found through the index by its fingerprint, and no other');
check_index($node, 'up_fp', 'after the upsert race');
$node->safe_psql('postgres', 'VACUUM (INDEX_CLEANUP ON) up');
check_index($node, 'up_fp', 'after a final VACUUM');
is($node->safe_psql('postgres',
	q{SELECT (SELECT sum(entries) FROM simhash_index_stats('up_fp') WHERE tree = 'band 0')
		   - (SELECT count(*) FROM up)}),
	'0', 'after VACUUM the index has one entry per row');

$node->stop;
note(sprintf('004_upsert_race took %.1f s', time - $start_time));
done_testing();
