
# Copyright (c) 2026, the simhash authors

# The near-duplicate trigger in reject mode under concurrent load: four
# pgbench clients insert near-copies (one flipped bit) of a shared pool of
# documents for 60 seconds, two at READ COMMITTED and two at REPEATABLE
# READ (whose serialization failures pgbench retries).  The pool is a
# window of four documents that moves on every 50 ms, so that the clients
# keep fighting over the same few documents, and each holds its
# transaction open 5 ms after inserting.  A rejection (23P01) is recorded
# and is the only error allowed.  Afterwards no two committed rows may be
# within k = 3 of each other, whatever the interleaving: the self-join
# finds no pair.
# SIMHASH_RACE_SECONDS changes the duration.

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
my $duration = $ENV{SIMHASH_RACE_SECONDS} // 60;

my $node = PostgreSQL::Test::Cluster->new('neardup');
$node->init;
$node->append_conf(
	'postgresql.conf', qq{
max_connections = 20
log_statement = none
jit = off
deadlock_timeout = 100ms
log_lock_waits = on
});
$node->start;

$node->safe_psql('postgres', setup_sql());
$node->safe_psql(
	'postgres', q{
CREATE TABLE docs (id bigserial PRIMARY KEY, src int8 NOT NULL, fp simhash64);
CREATE INDEX docs_fp ON docs USING simhash (fp);
CREATE TRIGGER docs_near BEFORE INSERT OR UPDATE ON docs FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'reject');
CREATE TABLE outcomes (kind text NOT NULL);
-- insert a near-copy of document "slot" of the current window; a
-- rejection is recorded, any other error aborts the pgbench client (and
-- fails the test)
CREATE FUNCTION try_insert(slot int, flip int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	src int8 := floor(extract(epoch FROM clock_timestamp()) * 20)::int8 * 4 + slot;
BEGIN
	INSERT INTO docs (src, fp) VALUES (src, fp_mk(src, 1::int8 << flip));
	INSERT INTO outcomes VALUES ('inserted');
EXCEPTION WHEN exclusion_violation THEN
	INSERT INTO outcomes VALUES ('rejected');
END $$;
});

my %scripts = (
	'rc.sql' => q{
\set slot random(0, 3)
\set bit random(0, 63)
BEGIN ISOLATION LEVEL READ COMMITTED;
SELECT try_insert(:slot, :bit);
SELECT pg_sleep(0.005);
COMMIT;
},
	'rr.sql' => q{
\set slot random(0, 3)
\set bit random(0, 63)
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT try_insert(:slot, :bit);
SELECT pg_sleep(0.005);
COMMIT;
},);
my @conn = ('-h', $node->host, '-p', $node->port);
my (%run, %out);
for my $name (sort keys %scripts)
{
	my $path = $node->basedir . "/$name";
	append_to_file($path, $scripts{$name});
	$out{$name} = [ '', '' ];
	$run{$name} = IPC::Run::start(
		[
			'pgbench', '-n', '-c', 2, '-j', 2, '-T', $duration, '--max-tries', 1000,
			@conn, '-f', $path, 'postgres'
		],
		'>', \$out{$name}[0], '2>', \$out{$name}[1]);
}
for my $name (sort keys %run)
{
	my $ok = $run{$name}->finish;
	note("pgbench $name:\n$out{$name}[0]");
	ok($ok, "pgbench $name exit status 0") or diag("stderr:\n$out{$name}[1]");
	like($out{$name}[0], qr/number of failed transactions: 0 \(/, "pgbench $name: no failed transaction");
	unlike($out{$name}[1], qr/ERROR|FATAL/, "pgbench $name: no error but rejections")
	  or diag($out{$name}[1]);
}
like($out{'rr.sql'}[0], qr/number of transactions retried: [1-9]/,
	'REPEATABLE READ clients met serialization failures (and retried)');

my %n = map { split /\|/ } split /\n/,
  $node->safe_psql('postgres', 'SELECT kind, count(*) FROM outcomes GROUP BY kind');
cmp_ok($n{inserted} // 0, '>=', 100, 'rows were inserted (' . ($n{inserted} // 0) . ')');
cmp_ok($n{rejected} // 0, '>=', 100, 'near-copies were rejected (' . ($n{rejected} // 0) . ')');
is($node->safe_psql('postgres', 'SELECT count(*) FROM docs'), $n{inserted}, 'every recorded insert is there');
is( $node->safe_psql(
		'postgres', q{SELECT count(*) FROM docs a JOIN docs b ON a.fp <-> b.fp <= 3 AND a.id < b.id}),
	'0',
	'no two committed rows within k = 3 (self-join)');
is( $node->safe_psql(
		'postgres', q{SET simhash.enable_join = off; SET enable_seqscan = off;
		SELECT count(*) FROM docs a JOIN docs b ON a.fp <-> b.fp <= 3 AND a.id < b.id}),
	'0',
	'no pair either through the index');
my $log = slurp_file($node->logfile);
unlike($log, qr/deadlock detected|PANIC|TRAP:/, 'server log: no deadlock, PANIC or assertion');
check_index($node, 'docs_fp', 'after the race');

$node->stop;
note(sprintf('005_neardup_race took %.1f s', time - $start_time));
done_testing();
