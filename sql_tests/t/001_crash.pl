
# Copyright (c) 2026, the simhash authors

# Crash recovery of simhash indexes: kill the server (immediate shutdown,
# i.e. SIGQUIT to every backend, no checkpoint) while several sessions
# insert, update and delete rows, while a bulk INSERT splits many pages,
# and right after CREATE INDEX; after WAL replay the index must pass
# simhash_index_check(idx, true), every search through it must return what
# a sequential scan returns, and every transaction whose COMMIT the client
# saw acknowledged must be there, exactly (and nothing else).
#
# Clients are psql processes reading generated scripts; after each
# transaction a script echoes "ack N", so the test knows the last
# transaction acknowledged before the crash.  A model of each client's rows
# (id -> (src, mask); fp = fp_mk(src, mask) is a generated column) tells
# what the table must hold after transaction N, or N+1 if the commit of the
# next one reached the WAL but not the client.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SimhashTAP;
use Test::More;
use Time::HiRes qw(sleep usleep time);

my $start_time = time;

my $node = PostgreSQL::Test::Cluster->new('crash');
# wal_level = replica, so that CREATE INDEX WAL-logs the new index
$node->init(allows_streaming => 1);
$node->append_conf(
	'postgresql.conf', qq{
shared_buffers = 4MB
max_connections = 20
checkpoint_timeout = 1h
max_wal_size = 1GB
autovacuum_naptime = 1s
log_statement = none
# disabled plans (enable_seqscan = off) cost 1e10 and would trigger JIT
jit = off
});
$node->start;

$node->safe_psql('postgres', setup_sql());
$node->safe_psql(
	'postgres', docs_table_sql() . q{
-- clusters of near-copies of fp_mk(1..30, 0), and scattered rows
INSERT INTO docs (id, src, mask)
	SELECT i, CASE WHEN i % 4 = 0 THEN i % 30 + 1 ELSE i END,
		   CASE WHEN i % 4 = 0 THEN (1::int8 << (i % 64)) # (1::int8 << ((i / 64) % 64))
				WHEN i % 97 = 0 THEN NULL ELSE 0 END
	FROM generate_series(1, 40000) i;
CREATE INDEX docs_fp ON docs USING simhash (fp);
-- the same with the tie-break column in every entry (leaves of the other layout)
CREATE INDEX docs_fp_id ON docs USING simhash (fp) INCLUDE (id);
});

# expected contents of finished workloads: id => "src|mask"
my %settled;
my $cycle = 0;

# --- the workload -------------------------------------------------------

# A script of $ntx transactions for client $client in crash cycle $cycle,
# and the change log of the model: $log->[t] = [ [id, "src|mask" or undef], ... ]
sub make_script
{
	my ($cycle, $client, $ntx) = @_;
	my $base = $cycle * 100_000_000 + ($client + 1) * 10_000_000;
	my (%live, @log);
	my @ids;    # live ids, for updates and deletes
	my $sql = "\\set ON_ERROR_STOP 1\n";
	srand($cycle * 1000 + $client);

	my $row = sub {
		my ($id) = @_;
		my ($src, $mask);
		my $r = rand();
		if ($r < 0.45)
		{
			# a near-copy of a cluster centre: everybody writes those keys
			$src = 1 + int(rand(30));
			$mask = 0;
			$mask |= (1 << int(rand(62))) for 1 .. int(rand(3));
		}
		elsif ($r < 0.5)
		{
			($src, $mask) = ($id, undef);    # NULL fingerprint
		}
		else
		{
			($src, $mask) = ($id, 0);
		}
		return ($src, $mask);
	};
	my $fmt = sub { my ($s, $m) = @_; return "$s|" . (defined $m ? $m : 'N') };
	my $lit = sub { my ($m) = @_; return defined $m ? $m : 'NULL' };

	for my $t (1 .. $ntx)
	{
		my @changes;
		my $kind = rand();
		my $first = $base + $t * 100;
		my $body;
		if ($kind < 0.35 || @ids < 10)
		{
			# single-row insert
			my ($s, $m) = $row->($first);
			$body = "INSERT INTO docs (id, src, mask) VALUES ($first, $s, " . $lit->($m) . ");\n";
			push @changes, [ $first, $fmt->($s, $m) ];
		}
		elsif ($kind < 0.60)
		{
			# multi-row insert
			my $n = 2 + int(rand(60));
			my @v;
			for my $i (0 .. $n - 1)
			{
				my ($s, $m) = $row->($first + $i);
				push @v, '(' . ($first + $i) . ", $s, " . $lit->($m) . ')';
				push @changes, [ $first + $i, $fmt->($s, $m) ];
			}
			$body = "INSERT INTO docs (id, src, mask) VALUES " . join(', ', @v) . ";\n";
		}
		elsif ($kind < 0.82)
		{
			# update (new fingerprints: a new index entry each) or delete a
			# few live rows
			my %pick;
			$pick{ $ids[ int(rand(@ids)) ] } = 1 for 1 .. 1 + int(rand(4));
			my @u = sort { $a <=> $b } grep { exists $live{$_} } keys %pick;
			if (!@u)
			{
				$sql .= "SELECT 1 \\g /dev/null\n\\echo ack $t\n";
				push @log, [];
				next;
			}
			if ($kind < 0.72)
			{
				my ($s, $m) = $row->($first);
				$body = "UPDATE docs SET src = $s, mask = " . $lit->($m) . " WHERE id IN (" . join(', ', @u) . ");\n";
				push @changes, [ $_, $fmt->($s, $m) ] for @u;
			}
			else
			{
				$body = "DELETE FROM docs WHERE id IN (" . join(', ', @u) . ");\n";
				push @changes, [ $_, undef ] for @u;
			}
		}
		elsif ($kind < 0.92)
		{
			# a subtransaction rolled back between two inserts, and a query
			# in the middle (which writes the buffered entries)
			my ($s1, $m1) = $row->($first);
			my ($s2, $m2) = $row->($first + 1);
			my ($s3, $m3) = $row->($first + 2);
			$body = "INSERT INTO docs (id, src, mask) VALUES ($first, $s1, " . $lit->($m1) . ");\n"
			  . "SAVEPOINT a;\n"
			  . "INSERT INTO docs (id, src, mask) VALUES (" . ($first + 1) . ", $s2, " . $lit->($m2) . ");\n"
			  . "SELECT count(*) >= 0 FROM docs WHERE fp <@ simhash_ball(fp_mk($s2, 0), 3) \\g /dev/null\n"
			  . "ROLLBACK TO SAVEPOINT a;\n"
			  . "INSERT INTO docs (id, src, mask) VALUES (" . ($first + 2) . ", $s3, " . $lit->($m3) . ");\n";
			push @changes, [ $first, $fmt->($s1, $m1) ], [ $first + 2, $fmt->($s3, $m3) ];
		}
		else
		{
			# a rolled-back transaction: no change
			my ($s, $m) = $row->($first);
			$sql .= "BEGIN;\nINSERT INTO docs (id, src, mask) VALUES ($first, $s, " . $lit->($m) . ");\n"
			  . "SELECT count(*) >= 0 FROM docs WHERE fp <@ simhash_ball(fp_mk($s, 0), 2) \\g /dev/null\n"
			  . "ROLLBACK;\n\\echo ack $t\n";
			push @log, [];
			next;
		}
		$sql .= "BEGIN;\n$body" . "COMMIT;\n\\echo ack $t\n";
		for my $c (@changes)
		{
			if (defined $c->[1])
			{
				push @ids, $c->[0] unless exists $live{ $c->[0] };
				$live{ $c->[0] } = $c->[1];
			}
			else
			{
				delete $live{ $c->[0] };
			}
		}
		push @log, \@changes;
	}
	return ($sql, \@log, $base);
}

# Start psql clients running scripts; returns handles.
sub start_clients
{
	my ($cycle, $nclients, $ntx) = @_;
	my @clients;
	for my $c (0 .. $nclients - 1)
	{
		my ($sql, $log, $base) = make_script($cycle, $c, $ntx);
		my $file = $node->basedir . "/cycle${cycle}_client$c.sql";
		PostgreSQL::Test::Utils::append_to_file($file, $sql);
		my ($out, $err) = ('', '');
		my $h = IPC::Run::start(
			[ 'psql', '-X', '-q', '-d', $node->connstr('postgres'), '-f', $file ],
			'>', \$out, '2>', \$err);
		push @clients, { h => $h, out => \$out, err => \$err, log => $log, base => $base, name => "client $c" };
	}
	return @clients;
}

# Start a psql client running a list of statements once each.
sub start_loop
{
	my ($name, $sql) = @_;
	my $file = $node->basedir . "/cycle${cycle}_$name.sql";
	PostgreSQL::Test::Utils::append_to_file($file, $sql);
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'), '-f', $file ],
		'>', \$out, '2>', \$err);
	return { h => $h, out => \$out, err => \$err, name => $name };
}

# Wait for a client to exit after the crash; returns the last acknowledged
# transaction number.
sub finish_client
{
	my ($c) = @_;
	eval { $c->{h}->finish; };
	my @acks = ${ $c->{out} } =~ /^ack (\d+)$/mg;
	return @acks ? $acks[-1] : 0;
}

# The model's state of one client after its first $n transactions, as
# "id|src|mask" lines ordered by id.
sub model_state
{
	my ($c, $n) = @_;
	my %s;
	for my $t (0 .. $n - 1)
	{
		for my $ch (@{ $c->{log}[$t] })
		{
			if (defined $ch->[1]) { $s{ $ch->[0] } = $ch->[1] }
			else { delete $s{ $ch->[0] } }
		}
	}
	return \%s;
}

sub state_text
{
	my ($s) = @_;
	return join("\n", map { "$_|$s->{$_}" } sort { $a <=> $b } keys %$s);
}

sub table_state
{
	my ($lo, $hi) = @_;
	return $node->safe_psql('postgres',
		"SELECT id, src, coalesce(mask::text, 'N') FROM docs WHERE id >= $lo AND id < $hi ORDER BY id");
}

# After a crash: every client's rows are those of its last acknowledged
# transaction (or the one after, whose commit may have made it to the WAL).
sub check_clients
{
	my ($label, @clients) = @_;
	my $total = 0;
	for my $c (@clients)
	{
		my $acked = finish_client($c);
		$total += $acked;
		my $actual = table_state($c->{base}, $c->{base} + 10_000_000);
		my $s0 = model_state($c, $acked);
		my $s1 = model_state($c, $acked + 1);
		my $which = $actual eq state_text($s0) ? $acked
		  : ($acked < @{ $c->{log} } && $actual eq state_text($s1)) ? $acked + 1
		  : -1;
		ok($which >= 0,
			"$label: $c->{name}: exactly the acknowledged transactions survived ($acked acknowledged)")
		  or diag("table:\n" . substr($actual, 0, 2000) . "\nexpected:\n" . substr(state_text($s0), 0, 2000)
			  . "\nclient stderr: ${ $c->{err} }");
		my $final = $which == $acked + 1 ? $s1 : $s0;
		$settled{$_} = $final->{$_} for keys %$final;
	}
	cmp_ok($total, '>', 30, "$label: the clients committed transactions before the crash ($total)");
}

# Rows of earlier cycles are unchanged, and the generated fingerprints are
# consistent.
sub check_settled
{
	my ($label) = @_;
	my $expected = state_text(\%settled);
	my $actual = $node->safe_psql('postgres',
		"SELECT id, src, coalesce(mask::text, 'N') FROM docs WHERE id >= 100000000 ORDER BY id");
	ok($actual eq $expected, "$label: all " . scalar(keys %settled) . " rows of acknowledged transactions are present, nothing else")
	  or diag("got " . scalar(split /\n/, $actual) . " rows, expected " . scalar(keys %settled));
	is($node->safe_psql('postgres',
		'SELECT count(*) FROM docs WHERE fp IS DISTINCT FROM fp_mk(src, mask)'),
		'0', "$label: stored fingerprints are consistent");
}

# Nearest neighbours with a tie-break through the index with an included
# column (the index orders each distance by id) against a sort.
sub compare_tiebreak
{
	my ($table, $label) = @_;
	my $query = qq{
		SELECT string_agg(q.n || ':' || s.ids, ' ' ORDER BY q.n)
		FROM (SELECT row_number() OVER (ORDER BY id) AS n, fp FROM $table
			  WHERE fp IS NOT NULL AND id % 997 = 5 LIMIT 8) q,
			 LATERAL (SELECT string_agg(id::text, ',' ORDER BY ord) AS ids
					  FROM (SELECT id, row_number() OVER () AS ord
							FROM (SELECT id FROM $table t ORDER BY t.fp <-> q.fp, id LIMIT 300) x) y) s};
	my $plan = $node->safe_psql('postgres',
		"SET enable_seqscan = off; SET enable_bitmapscan = off; EXPLAIN (COSTS OFF) $query");
	like($plan, qr/Presorted Key: .*id.*Index Scan using ${table}_fp_id/s,
		"$label: the tie-break goes through the index with the included column");
	my $got = $node->safe_psql('postgres',
		"SET enable_seqscan = off; SET enable_bitmapscan = off; $query");
	my $want = $node->safe_psql('postgres',
		"SET enable_indexscan = off; SET enable_bitmapscan = off; $query");
	is($got, $want, "$label: nearest neighbours with a tie-break == sort");
}

# The whole battery after a restart.
sub verify
{
	my ($label, %opts) = @_;
	check_settled($label);
	# before VACUUM: entries of transactions the crash interrupted are
	# still there
	check_index($node, 'docs_fp', "$label, before VACUUM");
	check_index($node, 'docs_fp_id', "$label, before VACUUM");
	compare_index_seq($node, 'docs', "$label, before VACUUM");
	compare_tiebreak('docs', "$label, before VACUUM");
	rows_found_by_index($node, 'docs', "$label, before VACUUM");
	# INDEX_CLEANUP ON: VACUUM may skip the indexes when few rows are dead
	$node->safe_psql('postgres', 'VACUUM (INDEX_CLEANUP ON) docs');
	check_index($node, 'docs_fp', "$label, after VACUUM");
	check_index($node, 'docs_fp_id', "$label, after VACUUM");
	compare_tiebreak('docs', "$label, after VACUUM");
	is($node->safe_psql('postgres',
		q{SELECT (SELECT sum(entries) FROM simhash_index_stats('docs_fp') WHERE tree IN ('band 0', 'nulls'))
			   - (SELECT count(*) FROM docs)}),
		'0', "$label: after VACUUM the index has one entry per row");
}

sub crash_and_restart
{
	my ($label) = @_;
	$node->stop('immediate');
	$node->start;
	ok(1, "$label: restarted after an immediate shutdown");
}

# --- cycle 1: concurrent single-row and multi-row transactions ----------

$cycle = 1;
{
	my @clients = start_clients($cycle, 4, 3000);
	my $vac = start_loop('vacuum', "SELECT pg_sleep(0.5);\nVACUUM docs;\n" x 20);
	sleep 2.5;
	crash_and_restart('cycle 1');
	eval { $vac->{h}->finish; };
	check_clients('cycle 1', @clients);
	verify('cycle 1');
}

# --- cycle 2: three clients, and a bulk INSERT flushing large batches ----

$cycle = 2;
{
	my $before = $node->safe_psql('postgres', "SELECT pg_relation_size('docs_fp')");
	# 1 MB of buffered rows per flush: 65,536 rows, some hundred leaves
	# rewritten and split per batch; never committed before the crash
	my $bulk = start_loop('bulk', qq{
BEGIN;
SET LOCAL work_mem = '1MB';
INSERT INTO docs (id, src, mask)
	SELECT 900000000 + i, CASE WHEN i % 3 = 0 THEN i % 30 + 1 ELSE 900000000 + i END,
		   CASE WHEN i % 3 = 0 THEN (1::int8 << (i % 61)) # (1::int8 << (i % 59)) ELSE 0 END
	FROM generate_series(1, 3000000) i;
COMMIT;
\\echo bulk committed
});
	my @clients = start_clients($cycle, 3, 3000);
	# crash once the bulk insert has written several batches into the index
	my $deadline = time + 30;
	my $size = $before;
	while (time < $deadline)
	{
		usleep(200_000);
		$size = $node->safe_psql('postgres', "SELECT pg_relation_size('docs_fp')");
		last if $size > $before + 4 * 1024 * 1024;
	}
	cmp_ok($size, '>', $before + 4 * 1024 * 1024,
		"cycle 2: the bulk insert grew the index by 4 MB before the crash");
	crash_and_restart('cycle 2');
	eval { $bulk->{h}->finish; };
	unlike(${ $bulk->{out} }, qr/bulk committed/, 'cycle 2: the bulk insert was interrupted');
	is($node->safe_psql('postgres', 'SELECT count(*) FROM docs WHERE id BETWEEN 900000000 AND 999999999'),
		'0', 'cycle 2: no row of the interrupted bulk insert is visible');
	check_clients('cycle 2', @clients);
	verify('cycle 2');
}

# --- cycle 3: crash right after CREATE INDEX, before any checkpoint ------

$cycle = 3;
{
	$node->safe_psql('postgres', q{
CREATE TABLE docs2 (id int8, fp simhash64);
INSERT INTO docs2 SELECT i, CASE WHEN i % 5 = 0 THEN fp_mk(i % 50 + 1, 1::int8 << (i % 64))
								 WHEN i % 101 = 0 THEN NULL ELSE fp_of(i) END
	FROM generate_series(1, 80000) i;
CHECKPOINT;
});
	my $redo = $node->safe_psql('postgres', 'SELECT redo_lsn FROM pg_control_checkpoint()');
	$node->safe_psql('postgres', 'CREATE INDEX docs2_fp ON docs2 USING simhash (fp)');
	# a REINDEX'ed twin too, with the included column, and rows inserted
	# after the build
	$node->safe_psql('postgres', q{
CREATE INDEX docs2_fp_b ON docs2 USING simhash (fp) INCLUDE (id);
REINDEX INDEX docs2_fp_b;
INSERT INTO docs2 SELECT i, fp_mk(i % 50 + 1, 3::int8 << (i % 60)) FROM generate_series(80001, 90000) i;
});
	is($node->safe_psql('postgres', 'SELECT redo_lsn FROM pg_control_checkpoint()'),
		$redo, 'cycle 3: no checkpoint since before CREATE INDEX');
	my $levels = $node->safe_psql('postgres',
		q{SELECT max(levels) FROM simhash_index_stats('docs2_fp')});
	cmp_ok($levels, '>=', 2, 'cycle 3: the built trees have internal levels');

	crash_and_restart('cycle 3');
	for my $idx ('docs2_fp', 'docs2_fp_b')
	{
		check_index($node, $idx, "cycle 3, $idx after recovery");
	}
	is($node->safe_psql('postgres',
		q{SELECT (SELECT sum(entries) FROM simhash_index_stats('docs2_fp') WHERE tree IN ('band 0', 'nulls'))
			   - (SELECT count(*) FROM docs2)}),
		'0', 'cycle 3: the built index has one entry per row');
	my $digest = compare_index_seq($node, 'docs2', 'cycle 3, docs2_fp after recovery');
	rows_found_by_index($node, 'docs2', 'cycle 3, docs2');
	# the twin gives the same answers
	$node->safe_psql('postgres', 'DROP INDEX docs2_fp');
	is(compare_index_seq($node, 'docs2', 'cycle 3, docs2_fp_b after recovery'),
		$digest, 'cycle 3: the REINDEXed index answers like the built one');
}

# --- cycle 4: work on the recovered index, crash again -------------------

$cycle = 4;
{
	my @clients = start_clients($cycle, 4, 3000);
	my $vac = start_loop('vacuum', "SELECT pg_sleep(0.3);\nVACUUM docs;\n" x 20);
	sleep 2.5;
	crash_and_restart('cycle 4');
	eval { $vac->{h}->finish; };
	check_clients('cycle 4', @clients);
	verify('cycle 4');
}

# --- cycle 5: wal_level = minimal: new relations are synced at commit ----

$cycle = 5;
{
	$node->append_conf('postgresql.conf', "wal_level = minimal\nmax_wal_senders = 0\n");
	$node->restart;
	$node->safe_psql('postgres', q{
BEGIN;
CREATE TABLE docs3 (id int8, fp simhash64);
INSERT INTO docs3 SELECT i, fp_of(i) FROM generate_series(1, 30000) i;
CREATE INDEX docs3_fp ON docs3 USING simhash (fp);
INSERT INTO docs3 SELECT i, fp_mk(i % 7 + 1, 1::int8 << (i % 64)) FROM generate_series(30001, 60000) i;
COMMIT;
BEGIN;
TRUNCATE docs3;
INSERT INTO docs3 SELECT i, fp_of(i) FROM generate_series(1, 20000) i;
COMMIT;
INSERT INTO docs3 SELECT i, fp_mk(i % 7 + 1, 3::int8 << (i % 62)) FROM generate_series(20001, 40000) i;
});
	crash_and_restart('cycle 5');
	is($node->safe_psql('postgres', 'SELECT count(*) FROM docs3'), '40000',
		'cycle 5: all rows of docs3 survived');
	check_index($node, 'docs3_fp', 'cycle 5, docs3_fp after recovery');
	compare_index_seq($node, 'docs3', 'cycle 5, docs3');
	rows_found_by_index($node, 'docs3', 'cycle 5, docs3');
	check_settled('cycle 5');
}

# nothing unexpected in the server log
my $log = slurp_file($node->logfile);
unlike($log, qr/PANIC|TRAP:|too many LWLocks|could not read block|invalid page|corrupted/,
	'server log has no PANIC, assertion or corruption message');

$node->stop;
note(sprintf('001_crash took %.1f s', time - $start_time));
done_testing();
