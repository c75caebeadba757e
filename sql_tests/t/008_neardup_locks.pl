
# Copyright (c) 2026, the simhash authors

# What the near-duplicate trigger's lock cells tell other roles, and that
# the documented mitigation works (README, "What other roles learn from the
# locks").  Two roles that are not superusers: "victim" inserts a row and
# holds its transaction open; "intruder" may INSERT into the tables but not
# SELECT from them.
#
#  1. By default, intruder builds a dictionary of cell tags from its own
#     rolled-back inserts and reads the whole fingerprint of victim's
#     in-flight row from pg_locks.
#  2. Scopes do not share cells: a dictionary built in one scope decodes
#     nothing of another scope's row, and a probe in one scope does not wait
#     for another scope's row, even when the two scope values' hashes agree
#     in their low 13 bits (which shared cells before); under row-level
#     security a role cannot take another tenant's cells at all.
#  3. A unique index, for comparison: pg_locks shows no value, and a
#     blocked insert tells that the same value is in flight.
#  4. After REVOKE EXECUTE ON FUNCTION pg_lock_status() (and SELECT ON
#     pg_locks) FROM PUBLIC, intruder gets 42501 from both; revoking the
#     view alone is not enough.  pg_stat_activity shows intruder nothing of
#     another role's waiting session; pg_blocking_pids tells who waits for
#     whom.  pg_locks shows every database's locks, so the REVOKEs are
#     needed in every database; pg_monitor can be granted them back.
#  5. What is left: an insert that shares one 16-bit block with an
#     in-flight row waits for it (the probe of README).

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SimhashTAP;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('locks');
$node->init;
$node->append_conf('postgresql.conf', "max_connections = 20\n");
$node->start;

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION simhash;
CREATE ROLE victim LOGIN;
CREATE ROLE intruder LOGIN;
CREATE TABLE docs (id bigserial PRIMARY KEY, fp simhash64);
CREATE INDEX ON docs USING simhash (fp);
CREATE TRIGGER nd BEFORE INSERT OR UPDATE ON docs FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'reject');
CREATE TABLE tdocs (id bigserial PRIMARY KEY, tenant text NOT NULL, fp simhash64);
CREATE INDEX ON tdocs USING simhash (fp);
CREATE TRIGGER nd BEFORE INSERT OR UPDATE ON tdocs FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'reject', 'scope=tenant');
CREATE TABLE uniq (v int8 UNIQUE);
-- tenants under row-level security: each role writes its own tenant only
CREATE TABLE rdocs (id bigserial PRIMARY KEY, tenant text NOT NULL DEFAULT current_user, fp simhash64);
CREATE INDEX ON rdocs USING simhash (fp);
CREATE TRIGGER nd BEFORE INSERT OR UPDATE ON rdocs FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 3, 'reject', 'scope=tenant');
ALTER TABLE rdocs ENABLE ROW LEVEL SECURITY;
CREATE POLICY own ON rdocs USING (tenant = current_user) WITH CHECK (tenant = current_user);
GRANT SELECT, INSERT ON docs, tdocs, uniq, rdocs TO victim;
GRANT INSERT ON docs, tdocs, uniq, rdocs TO intruder;
GRANT USAGE ON SEQUENCE docs_id_seq, tdocs_id_seq, rdocs_id_seq TO victim, intruder;
});

# psql as a role; returns (stdout, stderr), errors with their SQLSTATE
sub as_role
{
	my ($role, $sql, $db) = @_;
	my ($ret, $out, $err) = $node->psql($db // 'postgres', "\\set VERBOSITY verbose\n$sql",
		extra_params => [ '-U', $role ]);
	return ($out, $err);
}

my ($out, $err) = as_role('intruder', 'SELECT count(*) FROM docs');
like($err, qr/ERROR:  42501: permission denied for table docs/, 'intruder may not read docs');

# The secret fingerprint, and for each band 16 candidate blocks, the right
# one among them.  Blocks are 4 hex digits, band 0 first.
my $secret = '00a3001700c2005e';
my @sblock = map { hex(substr($secret, 4 * $_, 4)) } 0 .. 3;
my $base = 'f00ff00ff00ff00f';			# no candidate has its blocks
my @bblock = map { hex(substr($base, 4 * $_, 4)) } 0 .. 3;
my %cand;
for my $j (0 .. 3)
{
	$cand{$j} = [ map { ($sblock[$j] + 4099 * $_) & 0xffff } 0 .. 15 ];
	die 'candidate equals the base block' if grep { $_ == $bblock[$j] } @{ $cand{$j} };
}

# fingerprint with block j of the base replaced by v
sub with_block
{
	my ($fp, $j, $v) = @_;
	my $s = $fp;
	substr($s, 4 * $j, 4) = sprintf('%04x', $v);
	return $s;
}

# The own-cell tags (ExclusiveLock) of a rolled-back insert of each
# fingerprint into table (with extra column values), as intruder.
sub own_tags
{
	my ($table, $cols, $vals, @fps) = @_;
	my $sql = '';
	for my $fp (@fps)
	{
		$sql .= "BEGIN; INSERT INTO $table ($cols fp) VALUES ($vals '$fp');\n"
		  . "SELECT '$fp', string_agg(objid::text, ' ' ORDER BY objid) FROM pg_locks "
		  . "WHERE pid = pg_backend_pid() AND locktype = 'advisory' AND objsubid = 21320 "
		  . "AND mode = 'ExclusiveLock';\nROLLBACK;\n";
	}
	my ($o, $e) = as_role('intruder', $sql);
	die "dictionary: $e" if $e ne '';
	my %tags = map { split /\|/ } split /\n/, $o;
	return \%tags;
}

# tag -> "j:v" from rolled-back inserts differing from the base in one block
sub dictionary
{
	my ($table, $cols, $vals) = @_;
	my @fps = ($base);
	for my $j (0 .. 3)
	{
		push @fps, map { with_block($base, $j, $_) } @{ $cand{$j} };
	}
	my $tags = own_tags($table, $cols, $vals, @fps);
	my %base_tag = map { $_ => 1 } split / /, $tags->{$base};
	my %dict;
	for my $j (0 .. 3)
	{
		for my $v (@{ $cand{$j} })
		{
			my @new = grep { !$base_tag{$_} } split / /, $tags->{ with_block($base, $j, $v) };
			die "candidate $j:$v: @new" unless @new == 1;
			$dict{ $new[0] } = "$j:$v";
		}
	}
	return \%dict;
}

# decode the own cells of other sessions' in-flight rows in table
sub read_fingerprint
{
	my ($table, $dict) = @_;
	my ($o, $e) = as_role('intruder', qq{
SELECT objid FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 21320
  AND mode = 'ExclusiveLock' AND classid = '$table'::regclass AND pid <> pg_backend_pid()});
	die "pg_locks: $e" if $e ne '';
	my @tags = split /\n/, $o;
	my @blocks = ('????') x 4;
	for my $t (@tags)
	{
		next unless $dict->{$t};
		my ($j, $v) = split /:/, $dict->{$t};
		$blocks[$j] = sprintf('%04x', $v);
	}
	return (scalar(@tags), join('', @blocks));
}

# --- 1. the leak by default ---------------------------------------------

my $dict = dictionary('docs', '', '');
is(scalar(keys %$dict), 64, 'intruder learned 64 distinct cell tags from its rolled-back inserts');
is($node->safe_psql('postgres', 'SELECT count(*) FROM docs'), '0', 'none of them stayed');

my $victim = $node->background_psql('postgres', extra_params => [ '-U', 'victim' ]);
$victim->query_safe("BEGIN; INSERT INTO docs (fp) VALUES ('$secret')");
my ($ntags, $read) = read_fingerprint('docs', $dict);
is($ntags, 4, "intruder sees the four own cells of victim's row in pg_locks");
is($read, $secret, "intruder reads victim's in-flight fingerprint from pg_locks by default");

# --- 3. a unique index, for comparison ----------------------------------

$victim->query_safe('INSERT INTO uniq VALUES (45880520000798814)');
($out, $err) = as_role('intruder', q{
SELECT count(*) FROM pg_locks WHERE pid <> pg_backend_pid()
  AND concat_ws(' ', database, relation, page, tuple, virtualxid, transactionid, classid, objid, objsubid)
	  LIKE '%45880520000798814%';
SELECT string_agg(DISTINCT locktype, ',' ORDER BY locktype) FROM pg_locks WHERE pid <> pg_backend_pid()});
is($out . $err, "0\nadvisory,relation,transactionid,virtualxid",
	"pg_locks shows no value of victim's unique key, only lock types");
($out, $err) = as_role('intruder', "SET lock_timeout = '200ms'; BEGIN; INSERT INTO uniq VALUES (45880520000798815); ROLLBACK;");
is($err, '', 'unique index: another value does not wait');
($out, $err) = as_role('intruder', "SET lock_timeout = '200ms'; INSERT INTO uniq VALUES (45880520000798814)");
like($err, qr/ERROR:  55P03: canceling statement due to lock timeout/,
	'unique index: the same value in flight makes the insert wait');

# --- 2. scopes do not share cells ---------------------------------------

# a tenant whose scope hash agrees with victim's tenant 'a' in its low 13
# bits (the hash of one text scope value is hashtext + a constant)
my $twin = $node->safe_psql('postgres', q{
SELECT 't' || i FROM generate_series(1, 1000000) i
WHERE hashtext('t' || i) & 8191 = hashtext('a') & 8191 AND hashtext('t' || i) <> hashtext('a')
ORDER BY i LIMIT 1});
like($twin, qr/^t\d+$/, "a tenant name whose hash agrees with 'a' in 13 bits: $twin");
my $tdict = dictionary('tdocs', 'tenant,', "'$twin',");
is(scalar(keys %$tdict), 64, "intruder learned 64 cell tags of tenant $twin");
$victim->query_safe("INSERT INTO tdocs (tenant, fp) VALUES ('a', '$secret')");
($ntags, $read) = read_fingerprint('tdocs', $tdict);
is($ntags, 4, "victim's row in tenant 'a' holds four own cells of tdocs");
is($read, '????????????????', "a dictionary of tenant $twin decodes nothing of tenant 'a'");
($out, $err) = as_role('intruder',
	"SET lock_timeout = '2s'; BEGIN; INSERT INTO tdocs (tenant, fp) VALUES ('$twin', '$secret'); ROLLBACK;");
is($err, '', "the same fingerprint in tenant $twin does not wait for tenant 'a'");
($out, $err) = as_role('intruder',
	"SET lock_timeout = '200ms'; INSERT INTO tdocs (tenant, fp) VALUES ('a', '$secret')");
like($err, qr/ERROR:  55P03: canceling statement due to lock timeout/,
	"in tenant 'a' it waits (the cells are live)");

# under row-level security that lets each role write its own tenant only,
# a role cannot take cells of another tenant: the policy refuses the row
# before the trigger locks anything
$victim->query_safe("INSERT INTO rdocs (fp) VALUES ('$secret')");
($out, $err) = as_role('intruder',
	"SET lock_timeout = '2s'; INSERT INTO rdocs (tenant, fp) VALUES ('victim', '$secret')");
like($err, qr/ERROR:  42501: new row violates row-level security policy/,
	"under RLS, a probe in victim's tenant is refused (42501) without waiting");
($out, $err) = as_role('intruder',
	"SET lock_timeout = '2s'; BEGIN; INSERT INTO rdocs (fp) VALUES ('$secret'); ROLLBACK;");
is($err, '', 'and one in its own tenant does not wait');

# --- 4. the mitigation ----------------------------------------------------

$node->safe_psql('postgres', 'REVOKE SELECT ON pg_catalog.pg_locks FROM PUBLIC');
($out, $err) = as_role('intruder', 'SELECT count(*) FROM pg_locks');
like($err, qr/ERROR:  42501: permission denied for view pg_locks/, 'REVOKE SELECT: pg_locks refused');
($out, $err) = as_role('intruder',
	"SELECT count(*) FROM pg_lock_status() l WHERE l.objsubid = 21320 AND l.mode = 'ExclusiveLock'");
is($out . $err, '12', 'but pg_lock_status() still shows the cells: revoking the view alone is not enough');

$node->safe_psql('postgres', 'REVOKE EXECUTE ON FUNCTION pg_catalog.pg_lock_status() FROM PUBLIC');
($out, $err) = as_role('intruder', 'SELECT count(*) FROM pg_locks');
like($err, qr/ERROR:  42501: permission denied for view pg_locks/, 'after both REVOKEs: pg_locks refused (42501)');
($out, $err) = as_role('intruder', 'SELECT count(*) FROM pg_lock_status()');
like($err, qr/ERROR:  42501: permission denied for function pg_lock_status/,
	'after both REVOKEs: pg_lock_status() refused (42501)');
$node->safe_psql('postgres', 'GRANT SELECT ON pg_catalog.pg_locks TO PUBLIC');
($out, $err) = as_role('intruder', 'SELECT count(*) FROM pg_locks');
like($err, qr/ERROR:  42501: permission denied for function pg_lock_status/,
	'revoking pg_lock_status() alone refuses pg_locks too (the view calls it as the caller)');
$node->safe_psql('postgres', 'REVOKE SELECT ON pg_catalog.pg_locks FROM PUBLIC');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_locks WHERE objsubid = 21320 AND mode = 'ExclusiveLock'"),
	'12', 'a superuser still sees the cells');
$node->safe_psql('postgres', q{
CREATE ROLE monitor LOGIN IN ROLE pg_monitor;
GRANT EXECUTE ON FUNCTION pg_catalog.pg_lock_status() TO pg_monitor;
GRANT SELECT ON pg_catalog.pg_locks TO pg_monitor});
($out, $err) = as_role('monitor',
	"SELECT count(*) FROM pg_locks WHERE objsubid = 21320 AND mode = 'ExclusiveLock'");
is($out . $err, '12', 'a member of pg_monitor, granted both back, sees the cells');

# pg_lock_status() shows the locks of every database, and its privileges
# are those of the database one is connected to
$node->safe_psql('postgres', 'CREATE DATABASE other');
my $cells_of_postgres = q{SELECT count(*) FROM pg_locks WHERE objsubid = 21320 AND mode = 'ExclusiveLock'
  AND database = (SELECT oid FROM pg_database WHERE datname = 'postgres')};
($out, $err) = as_role('intruder', $cells_of_postgres, 'other');
is($out . $err, '12', 'from another database without the REVOKEs, intruder still reads the cells');
$node->safe_psql('other', 'REVOKE SELECT ON pg_catalog.pg_locks FROM PUBLIC; '
	  . 'REVOKE EXECUTE ON FUNCTION pg_catalog.pg_lock_status() FROM PUBLIC');
($out, $err) = as_role('intruder', $cells_of_postgres, 'other');
like($err, qr/ERROR:  42501: permission denied for view pg_locks/, 'after the REVOKEs there too: 42501');

# a second victim session waits for the first on a near-copy
my $waiter = $node->background_psql('postgres', extra_params => [ '-U', 'victim' ], on_error_stop => 0);
my $near = with_block($secret, 3, $sblock[3] ^ 1);
my $vpid = $victim->query_safe('SELECT pg_backend_pid()');
my $wpid = $waiter->query_safe('SELECT pg_backend_pid()');
$waiter->query_safe('BEGIN');
$waiter->query_until(qr/started/, "\\echo started\nINSERT INTO docs (fp) VALUES ('$near');\n\\echo done\n");
$node->poll_query_until('postgres',
	"SELECT wait_event = 'advisory' FROM pg_stat_activity WHERE pid = $wpid")
  or die 'the near-copy does not wait';
($out, $err) = as_role('intruder', qq{
SELECT coalesce(wait_event_type, '-'), coalesce(wait_event, '-'), coalesce(state, '-'), query
FROM pg_stat_activity WHERE pid = $wpid});
is($out, '-|-|-|<insufficient privilege>',
	"pg_stat_activity shows intruder nothing of another role's waiting insert");
($out, $err) = as_role('intruder', "SELECT pg_blocking_pids($wpid)");
is($out, "{$vpid}", 'pg_blocking_pids tells intruder who waits for whom (no value)');
$victim->query_safe('ROLLBACK');
$waiter->query_until(qr/done/, '');
$waiter->query_safe('ROLLBACK');
$waiter->quit;

# --- 5. what is left: the probe ------------------------------------------

$victim->query_safe("BEGIN; INSERT INTO docs (fp) VALUES ('$secret')");
# shares block 2 only, 3 * 16 bits away elsewhere: not a near-duplicate
my $probe = with_block('ffffffffffffffff', 2, $sblock[2]);
($out, $err) = as_role('intruder', "SET lock_timeout = '200ms'; INSERT INTO docs (fp) VALUES ('$probe')");
like($err, qr/ERROR:  55P03: canceling statement due to lock timeout/,
	'an insert sharing one 16-bit block with an in-flight row waits for it');
$probe = with_block('ffffffffffffffff', 2, $sblock[2] ^ 1);
($out, $err) = as_role('intruder',
	"SET lock_timeout = '2s'; BEGIN; INSERT INTO docs (fp) VALUES ('$probe'); ROLLBACK;");
is($err, '', 'one sharing no block does not wait');
$victim->query_safe('ROLLBACK');
$victim->quit;

$node->stop;
done_testing();
