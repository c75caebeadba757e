
# Copyright (c) 2026, the simhash authors

# Verification finds corruption, and reading a corrupt index never crashes
# the server.  The index file is damaged on disk while the server is down,
# in ways a torn write, a bad disk or a bug could: a page that is not a
# simhash page, a leaf copied over a leaf of another tree, a leaf whose
# sorted-area count is wrong, a metapage of an unknown version; and, without
# touching files, rows the index lacks (pg_index.indisready switched off
# while rows are updated).  Each time simhash_index_check must raise XX002
# (index_corrupted) or, for the metapage, refuse to read the index, and
# searches through the index must fail cleanly or answer: the server keeps
# running.  After REINDEX the checks pass again.  An index with an included
# column has leaves of another layout (a flag, a value per entry): its flag
# cleared or set where it does not belong, its values mis-encoded or
# changed, are found the same way.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SimhashTAP;
use Test::More;

my $BLCKSZ = 8192;
# SimhashPageOpaqueData at the end of every page (shpage.h): high (8),
# rightlink (4), then uint16 flags, level, band, nsorted, sorted_end, page_id
my $OPAQUE = $BLCKSZ - 24;
my %field = (flags => 12, level => 14, band => 16, nsorted => 18, page_id => 22);
my $LEAF = 2;

my $node = PostgreSQL::Test::Cluster->new('corruption');
# initdb enables data checksums by default since PostgreSQL 18: the damage
# written below would fail the page checksum (XX001) before the index's own
# checks, which this test is about, see it
$node->init($node->pg_version >= 18 ? (extra => ['--no-data-checksums']) : ());
$node->append_conf('postgresql.conf', "autovacuum = off\njit = off\n");
$node->start;
$node->safe_psql('postgres', setup_sql());
$node->safe_psql(
	'postgres', q{
CREATE TABLE t (id int8 PRIMARY KEY, fp simhash64);
INSERT INTO t SELECT i, fp_of(i) FROM generate_series(1, 30000) i;
CREATE INDEX t_fp ON t USING simhash (fp);
CHECKPOINT;
});
my $file = $node->data_dir . '/'
  . $node->safe_psql('postgres', q{SELECT pg_relation_filepath('t_fp')});
my $pristine = slurp_file($file);
my $npages = length($pristine) / $BLCKSZ;
cmp_ok($npages, '>', 20, "the index has $npages pages");

# a uint16 field of the special space of page $blk
sub field
{
	my ($image, $blk, $name) = @_;
	return unpack('v', substr($image, $blk * $BLCKSZ + $OPAQUE + $field{$name}, 2));
}

sub set_field
{
	my ($image, $blk, $name, $value) = @_;
	substr($$image, $blk * $BLCKSZ + $OPAQUE + $field{$name}, 2) = pack('v', $value);
}

# the leaves of each tree, and the internal pages
my %leaves;
my @internal;
for my $blk (1 .. $npages - 1)
{
	if (field($pristine, $blk, 'flags') & $LEAF)
	{
		push @{ $leaves{ field($pristine, $blk, 'band') } }, $blk;
	}
	else
	{
		push @internal, $blk;
	}
}
ok(@internal >= 4, 'internal pages exist');

# a uint16 of the page header (pd_lower at 12, pd_upper at 14)
sub set_header
{
	my ($image, $blk, $offset, $value) = @_;
	substr($$image, $blk * $BLCKSZ + $offset, 2) = pack('v', $value);
}
ok(@{ $leaves{0} } >= 2 && @{ $leaves{2} } >= 2, 'several leaves in each band tree');

# write $image as the index file, with the server stopped
sub install_image
{
	my ($image) = @_;
	$node->stop;
	open(my $fh, '>', $file) or die "open $file: $!";
	binmode $fh;
	print $fh $image;
	close $fh;
	$node->start;
}

# run $sql; return its SQLSTATE, or 'ok'
sub sqlstate_of
{
	my ($sql) = @_;
	my ($ret, $stdout, $stderr) = $node->psql('postgres',
		"\\set VERBOSITY verbose\n$sql", on_error_stop => 1);
	return 'ok' if $ret == 0;
	return $stderr =~ /ERROR:\s+([0-9A-Z]{5}):/ ? $1 : "failed: $stderr";
}

# searches through the index: each may answer (wrongly: the index is
# damaged) or fail with XX002 or a statement timeout, but with nothing else,
# and none may take the server down
sub search_survives
{
	my ($label) = @_;
	for my $sql (
		q{SET enable_seqscan = off; SET enable_bitmapscan = off;
		  SELECT count(*) FROM t WHERE fp <-> fp_of(77) <= 6;},
		q{SET enable_seqscan = off;
		  SELECT count(*) FROM t WHERE fp <@ simhash_ball(fp_of(5), 12);},
		q{SET enable_seqscan = off; SELECT id FROM t ORDER BY fp <-> fp_of(9) LIMIT 20;},
		q{INSERT INTO t SELECT 100000 + i, fp_of(100000 + i) FROM generate_series(1, 300) i;
		  DELETE FROM t WHERE id > 100000;})
	{
		my $state = sqlstate_of("SET statement_timeout = '5s'; $sql");
		like($state, qr/^(ok|XX002|57014)$/, "$label: a search ends with $state");
	}
	is($node->safe_psql('postgres', 'SELECT 1'), '1', "$label: the server answers after searches");
	ok(slurp_file($node->logfile) !~ /terminated by signal|server process .* was terminated/,
		"$label: no backend crashed");
}

# damage the index, check, search, restore
sub corruption_case
{
	my ($label, $damage, $expect_check) = @_;
	my $image = $pristine;
	$damage->(\$image);
	install_image($image);
	is(sqlstate_of(q{SELECT simhash_index_check('t_fp', true)}),
		$expect_check, "$label: simhash_index_check raises $expect_check");
	search_survives($label);
	install_image($pristine);
}

corruption_case('page id', sub { set_field($_[0], $leaves{1}[1], 'page_id', 0) }, 'XX002');
corruption_case(
	'leaf of another tree',
	sub {
		my ($img) = @_;
		my ($from, $to) = ($leaves{0}[1], $leaves{2}[1]);
		substr($$img, $to * $BLCKSZ, $BLCKSZ) = substr($$img, $from * $BLCKSZ, $BLCKSZ);
	},
	'XX002');
corruption_case(
	'sorted-area count',
	sub {
		my ($img) = @_;
		my $blk = $leaves{3}[0];
		set_field($img, $blk, 'nsorted', field($$img, $blk, 'nsorted') + 1);
	},
	'XX002');
corruption_case('huge entry count',
	sub { set_field($_[0], $leaves{0}[2], 'nsorted', 65535) }, 'XX002');
corruption_case('leaf areas overlap',
	sub { set_header($_[0], $leaves{1}[2], 12, 8000) }, 'XX002');
corruption_case('restart out of the page',
	sub { set_header($_[0], $leaves{2}[0], 14, 8100) }, 'XX002');
corruption_case('internal page without pivots',
	sub { set_header($_[0], $_, 12, 0) for @internal }, 'XX002');
corruption_case(
	'right-link loop',
	sub {
		my ($img) = @_;
		for my $blk (@{ $leaves{1} }[0 .. 2])
		{
			substr($$img, $blk * $BLCKSZ + $OPAQUE + 8, 4) = pack('V', $blk);
		}
	},
	'XX002');
# links to blocks past the end of the file: within the file's last
# segment (a short read, XX001, before the fix) and far beyond it (no such
# segment, 58P01): the index's own XX002 either way
corruption_case(
	'right-link past the end',
	sub {
		my ($img) = @_;
		my @l = @{ $leaves{1} };
		substr($$img, $l[0] * $BLCKSZ + $OPAQUE + 8, 4) = pack('V', $npages + 2);
		substr($$img, $l[1] * $BLCKSZ + $OPAQUE + 8, 4) = pack('V', 0x7FFFFFF0);
	},
	'XX002');
corruption_case(
	'pivot child past the end',
	sub {
		my ($img) = @_;
		for my $i (0 .. $#internal)
		{
			# the first pivot's child (pivots follow the 24-byte page header)
			substr($$img, $internal[$i] * $BLCKSZ + 24 + 8, 4) =
			  pack('V', $i % 2 ? 0x7FFFFFF0 : $npages + 1);
		}
	},
	'XX002');
corruption_case(
	'garbage in the sorted areas',
	sub {
		my ($img) = @_;
		srand(7);
		for my $tree (0 .. 3)
		{
			my @l = @{ $leaves{$tree} };
			for (my $i = 0; $i < @l; $i += 3)
			{
				# past the first restarts: the entries still decode, to nonsense
				substr($$img, $l[$i] * $BLCKSZ + 124, 1000) =
				  pack('C*', map { int(rand(256)) } 1 .. 1000);
			}
		}
	},
	'XX002');
corruption_case(
	'metapage version',
	sub { substr(${ $_[0] }, 28, 4) = pack('V', 0xDEAD) },
	'XX002');

is(sqlstate_of(q{SELECT simhash_index_check('t_fp', true)}), 'ok',
	'the restored index passes');

# rows the index lacks: updates while the index is not ready
$node->safe_psql(
	'postgres', q{
UPDATE pg_index SET indisready = false WHERE indexrelid = 't_fp'::regclass;
UPDATE t SET fp = fp_of(-id) WHERE id <= 10;
UPDATE pg_index SET indisready = true WHERE indexrelid = 't_fp'::regclass;
});
is(sqlstate_of(q{SELECT simhash_index_check('t_fp', false)}), 'ok',
	'missing entries leave every page valid');
is(sqlstate_of(q{SELECT simhash_index_check('t_fp', true)}), 'XX002',
	'heapallindexed finds the rows the index lacks');
$node->safe_psql('postgres', 'REINDEX INDEX t_fp');
is(sqlstate_of(q{SELECT simhash_index_check('t_fp', true)}), 'ok',
	'after REINDEX the index passes');
is( $node->safe_psql(
		'postgres', q{
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(*) FROM t WHERE fp <-> fp_of(-3) <= 0}), '1',
	'and finds an updated row by its new fingerprint');

# --- an index with an included column: leaves of the other layout -------

$node->safe_psql(
	'postgres', q{
CREATE TABLE ti (id int8, fp simhash64);
INSERT INTO ti SELECT CASE WHEN i % 50 = 0 THEN NULL ELSE i END, fp_of(i % 7000)
	FROM generate_series(1, 30000) i;
CREATE INDEX ti_fp ON ti USING simhash (fp) INCLUDE (id);
CHECKPOINT;
});
my $tfile = $node->data_dir . '/'
  . $node->safe_psql('postgres', q{SELECT pg_relation_filepath('ti_fp')});
my $tpristine = slurp_file($tfile);
# t_fp again: REINDEX gave it a new file
my $pfile = $node->data_dir . '/'
  . $node->safe_psql('postgres', q{SELECT pg_relation_filepath('t_fp')});
my $ppristine = slurp_file($pfile);
my @pleaves = grep { field($ppristine, $_, 'flags') & $LEAF } 1 .. length($ppristine) / $BLCKSZ - 1;
my $PAYLOAD = 8;
my @tleaves = grep { field($tpristine, $_, 'flags') & $LEAF } 1 .. length($tpristine) / $BLCKSZ - 1;
ok(@tleaves >= 8 && !grep({ !(field($tpristine, $_, 'flags') & $PAYLOAD) } @tleaves),
	'every leaf of the index with an included column has the payload flag');
ok(@pleaves >= 8 && !grep({ field($ppristine, $_, 'flags') & $PAYLOAD } @pleaves),
	'no leaf of the index without one has it');

# damage ti_fp (or, with $plain, t_fp), check, search, restore
sub payload_case
{
	my ($label, $damage, $check_sql, $expect_check, $plain) = @_;
	my ($f, $pristine_image) = $plain ? ($pfile, $ppristine) : ($tfile, $tpristine);
	my $image = $pristine_image;
	$damage->(\$image);
	$node->stop;
	open(my $fh, '>', $f) or die "open $f: $!";
	binmode $fh;
	print $fh $image;
	close $fh;
	$node->start;
	is(sqlstate_of($check_sql), $expect_check, "$label: simhash_index_check raises $expect_check");
	for my $sql (
		q{SET enable_seqscan = off; SET enable_bitmapscan = off;
		  SELECT count(*) FROM ti WHERE fp <-> fp_of(77) <= 6;},
		q{SET enable_seqscan = off; SET enable_bitmapscan = off;
		  SELECT id FROM ti ORDER BY fp <-> fp_of(9), id LIMIT 200;},
		q{SET enable_seqscan = off; SET enable_bitmapscan = off;
		  SELECT id FROM ti ORDER BY fp <-> fp_of(9), id DESC LIMIT 5000;},
		q{INSERT INTO ti SELECT 100000 + i, fp_of(i) FROM generate_series(1, 300) i;
		  DELETE FROM ti WHERE id > 100000; VACUUM ti;})
	{
		(my $query = $sql) =~ s/\bti\b/t/g if $plain;
		my $state = sqlstate_of("SET statement_timeout = '5s'; " . ($plain ? $query : $sql));
		like($state, qr/^(ok|XX002|57014)$/, "$label: a search ends with $state");
	}
	is($node->safe_psql('postgres', 'SELECT 1'), '1', "$label: the server answers after searches");
	ok(slurp_file($node->logfile) !~ /terminated by signal|server process .* was terminated/,
		"$label: no backend crashed");
	$node->stop;
	open($fh, '>', $f) or die "open $f: $!";
	binmode $fh;
	print $fh $pristine_image;
	close $fh;
	$node->start;
}

# the offset of the first sorted entry's payload on leaf $blk: after the
# varint of its sort key and the 6 bytes of its rest
sub first_payload_offset
{
	my ($image, $blk) = @_;
	my $pos = $blk * $BLCKSZ + 24;
	$pos++ while unpack('C', substr($image, $pos, 1)) & 0x80;
	return $pos + 1 + 6;
}

my $check_pages = q{SELECT simhash_index_check('ti_fp', false)};
my $check_rows = q{SELECT simhash_index_check('ti_fp', true)};
payload_case('payload flag cleared',
	sub { set_field($_[0], $tleaves[3], 'flags', field(${ $_[0] }, $tleaves[3], 'flags') & ~$PAYLOAD) },
	$check_pages, 'XX002');
payload_case('payload flag set on a leaf without values',
	sub { set_field($_[0], $pleaves[5], 'flags', field(${ $_[0] }, $pleaves[5], 'flags') | $PAYLOAD) },
	q{SELECT simhash_index_check('t_fp', false)}, 'XX002', 1);
payload_case('payload varint too long',
	sub { substr(${ $_[0] }, first_payload_offset(${ $_[0] }, $tleaves[2]), 10) = "\xff" x 10 },
	$check_pages, 'XX002');
payload_case('payload NULL encoded otherwise',
	sub { substr(${ $_[0] }, first_payload_offset(${ $_[0] }, $tleaves[4]), 3) = "\x80\x80\x00" },
	$check_pages, 'XX002');
# a value changed into another valid one: only the rows can tell
payload_case('payload of another row',
	sub {
		my ($img) = @_;
		my $off = first_payload_offset($$img, $tleaves[5]);
		my $b = unpack('C', substr($$img, $off, 1));
		substr($$img, $off, 1) = pack('C', $b ^ 0x02);
	},
	$check_rows, 'XX002');
payload_case(
	'garbage in the sorted areas with values',
	sub {
		my ($img) = @_;
		srand(11);
		for (my $i = 0; $i < @tleaves; $i += 3)
		{
			substr($$img, $tleaves[$i] * $BLCKSZ + 124, 1000) =
			  pack('C*', map { int(rand(256)) } 1 .. 1000);
		}
	},
	$check_pages, 'XX002');
is(sqlstate_of($check_rows), 'ok', 'the restored index with an included column passes');

# --- a temporary table's index: its pages are in local buffers ----------
# The report names the index from the buffer holding the page; PostgreSQL's
# map from storage to relation leaves temporary relations out, so this
# once said "simhash index with relfilenode N".  One session: temp_buffers
# small enough that the leaves are read back from the damaged file.
my $damager = PostgreSQL::Test::Utils::tempdir() . '/damage.pl';
open(my $dfh, '>', $damager) or die "open $damager: $!";
print $dfh <<"EOF";
my (\$f) = \@ARGV;
open(my \$fh, '+<', \$f) or die "open \$f: \$!";
binmode \$fh;
local \$/;
my \$img = <\$fh>;
for my \$blk (1 .. length(\$img) / $BLCKSZ - 1)
{
	my \$sp = \$blk * $BLCKSZ + $OPAQUE;
	substr(\$img, \$sp + $field{nsorted}, 2) = pack('v', 400)
	  if unpack('v', substr(\$img, \$sp + $field{flags}, 2)) & $LEAF;
}
seek(\$fh, 0, 0);
print \$fh \$img;
close \$fh;
EOF
close $dfh;
my $datadir = $node->data_dir;
my ($tret, $tout, $terr) = $node->psql(
	'postgres', qq{
SET temp_buffers = 100;
CREATE TEMP TABLE tt (id int8, fp simhash64, pad text);
INSERT INTO tt SELECT i, fp_of(i), repeat('x', 200) FROM generate_series(1, 60000) i;
CREATE INDEX tt_fp ON tt USING simhash (fp);
SELECT count(*) FROM tt WHERE pad <> 'y';
SELECT '$datadir/' || pg_relation_filepath('tt_fp') AS f \\gset
\\setenv F :f
\\! "$^X" "$damager" "\$F"
SET enable_seqscan = off;
SELECT count(*) FROM tt WHERE fp <\@ simhash_ball(fp_of(5), 12);
});
like($terr, qr/ERROR:  index "tt_fp" contains a corrupted leaf page at block \d+/,
	'a damaged leaf of a temporary index is reported with the index name');
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'the server answers after it');

$node->stop;
done_testing();
