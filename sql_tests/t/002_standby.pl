
# Copyright (c) 2026, the simhash authors

# Replication of simhash indexes (generic WAL): a streaming standby replays
# the build, inserts that split leaves and grow the trees to three levels,
# deletes, updates and VACUUM.  While the primary works, clients on the
# standby keep checking (in one snapshot per query) that index searches
# return what sequential scans return; the standby is also killed and
# restarted in the middle of replay.  Afterwards the standby must answer
# every search exactly as the primary does, pass simhash_index_check, and,
# once promoted, keep working as a primary.

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

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf(
	'postgresql.conf', qq{
shared_buffers = 32MB
log_statement = none
# disabled plans (enable_seqscan = off) cost 1e10 and would trigger JIT
jit = off
autovacuum = off
});
$primary->start;

$primary->safe_psql('postgres', setup_sql());
# fp = fp_mk(src, mask): src 1..30 with a few bits flipped are clusters
# of near-copies; src = id are scattered rows; mask NULL is a NULL row
$primary->safe_psql(
	'postgres', docs_table_sql() . q{
CREATE FUNCTION load(lo int8, hi int8) RETURNS void LANGUAGE sql AS $$
	INSERT INTO docs (id, src, mask)
	SELECT i, CASE WHEN i % 3 = 0 THEN i % 30 + 1 ELSE i END,
		   CASE WHEN i % 3 = 0 THEN (1::int8 << (i % 64)::int) # (1::int8 << ((i / 64) % 64)::int)
				WHEN i % 211 = 0 THEN NULL ELSE 0 END
	FROM generate_series(lo, hi) i
$$;
SELECT load(1, 20000);
});

$primary->backup('backup');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'backup', has_streaming => 1);
$standby->append_conf(
	'postgresql.conf', qq{
shared_buffers = 32MB
log_statement = none
# disabled plans (enable_seqscan = off) cost 1e10 and would trigger JIT
jit = off
hot_standby_feedback = on
max_standby_streaming_delay = -1
});
$standby->start;

# the build is WAL-logged page by page (log_newpage_range)
$primary->safe_psql('postgres', 'CREATE INDEX docs_fp ON docs USING simhash (fp)');
$primary->wait_for_catchup($standby, 'replay');
check_index($standby, 'docs_fp', 'standby after CREATE INDEX');
compare_index_seq($standby, 'docs', 'standby after CREATE INDEX', radii => [ 0, 2, 5 ]);

# clients on the standby check every search against a sequential scan in
# the same snapshot (assert_same raises on a difference) while replay runs
my $check_script = $standby->basedir . '/check.sql';
append_to_file(
	$check_script, q{
\set c random(1, 30)
\set k random(0, 4)
\set r random(1, 500000)
SELECT assert_same(
	(SELECT count(*) || ':' || coalesce(sum(id), 0) FROM docs WHERE fp <@ simhash_ball(fp_mk(:c, 0), :k)),
	(SELECT count(*) || ':' || coalesce(sum(id), 0) FROM docs WHERE hamming(fp, fp_mk(:c, 0)) + 0 <= :k),
	'radius ' || :k || ' around cluster ' || :c);
SELECT assert_same(
	(SELECT string_agg(d::text, ',') FROM (SELECT hamming(fp, fp_of(:r)) AS d, id FROM docs ORDER BY fp <-> fp_of(:r) LIMIT 5) s),
	(SELECT string_agg(d::text, ',') FROM (SELECT hamming(fp, fp_of(:r)) + 0 AS d FROM docs WHERE fp IS NOT NULL ORDER BY 1 LIMIT 5) s),
	'nearest neighbours of ' || :r);
});
my ($ck_out, $ck_err) = ('', '');
my $checker;
{
	local $ENV{PGOPTIONS} = '-c enable_seqscan=off -c enable_bitmapscan=off';
	$checker = IPC::Run::start(
		[
			'pgbench', '-n', '-c', '2', '-j', '2', '-T', '12',
			'-h', $standby->host, '-p', $standby->port,
			'-f', $check_script, 'postgres'
		],
		'>', \$ck_out, '2>', \$ck_err);
}

# the primary's work: inserts that split leaves, level growth, deletes,
# updates into the clusters, VACUUM
$primary->safe_psql('postgres', 'SELECT load(20001, 120000)');
$primary->safe_psql('postgres', q{
DELETE FROM docs WHERE id % 5 = 0;
UPDATE docs SET mask = mask # 12 WHERE id % 7 = 0 AND mask IS NOT NULL;
VACUUM docs;
});
$primary->safe_psql('postgres', 'SELECT load(120001, 220000)');

# kill the standby in the middle of replaying, and restart it
$standby->stop('immediate');
$primary->safe_psql('postgres', 'SELECT load(220001, 320000)');
$standby->start;
{
	# the checker's connections died with the standby: restart it
	$checker->finish;
	local $ENV{PGOPTIONS} = '-c enable_seqscan=off -c enable_bitmapscan=off';
	($ck_out, $ck_err) = ('', '');
	$checker = IPC::Run::start(
		[
			'pgbench', '-n', '-c', '2', '-j', '2', '-T', '8',
			'-h', $standby->host, '-p', $standby->port,
			'-f', $check_script, 'postgres'
		],
		'>', \$ck_out, '2>', \$ck_err);
}
$primary->safe_psql('postgres', 'SELECT load(320001, 420000)');
$primary->safe_psql('postgres', q{
DELETE FROM docs WHERE id % 11 = 0 OR (src <= 30 AND id % 4 = 1);
VACUUM docs;
});
$primary->safe_psql('postgres', 'SELECT load(420001, 520000)');
$primary->safe_psql('postgres', 'SELECT load(520001, 560000)');
$primary->wait_for_catchup($standby, 'replay');

ok($checker->finish, 'searches on the standby during replay agreed with sequential scans')
  or diag("pgbench stdout:\n$ck_out\nstderr:\n$ck_err");
like($ck_out, qr/number of transactions actually processed: [1-9]/,
	'the standby checker ran searches');
unlike($ck_err, qr/mismatch|ERROR/, 'no mismatch or error on the standby');

# the trees grew to three levels, and the standby has the same pages
my $stats_sql = q{SELECT tree, levels, leaf_pages, internal_pages, entries FROM simhash_index_stats('docs_fp') ORDER BY tree};
my $pstats = $primary->safe_psql('postgres', $stats_sql);
is($standby->safe_psql('postgres', $stats_sql), $pstats, 'standby index has the same trees as the primary');
cmp_ok($primary->safe_psql('postgres', q{SELECT min(levels) FROM simhash_index_stats('docs_fp') WHERE tree LIKE 'band%'}),
	'>=', 3, 'every band tree has grown to three levels');
note("index stats:\n$pstats");

is($standby->safe_psql('postgres', 'SELECT count(*) FROM docs'),
	$primary->safe_psql('postgres', 'SELECT count(*) FROM docs'), 'standby has the same rows');

check_index($standby, 'docs_fp', 'standby after replay, heapallindexed');
check_index($standby, 'docs_fp', 'standby after replay, structure only', heapallindexed => 0);
check_index($primary, 'docs_fp', 'primary');

my @centers = query_centers($primary, 'docs', own => 10);
my $on_primary = compare_index_seq($primary, 'docs', 'primary', centers => \@centers);
my $on_standby = compare_index_seq($standby, 'docs', 'standby', centers => \@centers);
is($on_standby, $on_primary, 'standby answers every search exactly as the primary');
rows_found_by_index($standby, 'docs', 'standby', sample => 20);

# promote the standby, keep working on it
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'standby was not promoted';
$standby->safe_psql('postgres', q{
SELECT load(560001, 600000);
DELETE FROM docs WHERE id % 13 = 0;
VACUUM (INDEX_CLEANUP ON) docs;
SELECT load(600001, 620000);
INSERT INTO docs (id, src, mask) SELECT 700000 + i, 1, 1::int8 << (i % 64) FROM generate_series(1, 5000) i;
});
check_index($standby, 'docs_fp', 'promoted standby');
compare_index_seq($standby, 'docs', 'promoted standby');
rows_found_by_index($standby, 'docs', 'promoted standby', sample => 20);
$standby->safe_psql('postgres', 'DELETE FROM docs WHERE id > 700000; VACUUM (INDEX_CLEANUP ON) docs');
is($standby->safe_psql('postgres',
	q{SELECT (SELECT sum(entries) FROM simhash_index_stats('docs_fp') WHERE tree IN ('band 0', 'nulls'))
		   - (SELECT count(*) FROM docs)}),
	'0', 'promoted standby: after VACUUM the index has one entry per row');

for my $node ($primary, $standby)
{
	unlike(slurp_file($node->logfile), qr/PANIC|TRAP:|too many LWLocks|could not read block|invalid page/,
		$node->name . ': server log has no PANIC, assertion or page error');
}

$standby->stop;
$primary->stop;
note(sprintf('002_standby took %.1f s', time - $start_time));
done_testing();
