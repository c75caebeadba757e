
# Copyright (c) 2026, the simhash authors

# SimhashTAP -- helpers shared by the simhash TAP tests (sql_tests/t/*.pl):
# the SQL functions the tests use, and the checks that an index returns
# exactly what a sequential scan returns.  Every query here is read-only,
# so the checks also run on a hot standby.

package SimhashTAP;

use strict;
use warnings;

use PostgreSQL::Test::Utils;
use Test::More;

use Exporter 'import';
our @EXPORT = qw(setup_sql docs_table_sql query_centers compare_index_seq
  check_index rows_found_by_index);

# The test schema helpers: deterministic fingerprints, near-copies and an
# assertion that raises (so pgbench and psql fail loudly on a mismatch).
sub setup_sql
{
	return <<'EOSQL';
CREATE EXTENSION IF NOT EXISTS simhash;
-- deterministic pseudo-random fingerprints
CREATE FUNCTION fp_of(i int8) RETURNS simhash64 LANGUAGE sql IMMUTABLE STRICT AS
$$ SELECT ((hashint8(i)::int8 << 32) | (hashint8(-i)::int8 & 4294967295))::simhash64 $$;
-- fingerprint number src with the bits of mask flipped (NULL mask: NULL)
CREATE FUNCTION fp_mk(src int8, mask int8) RETURNS simhash64 LANGUAGE sql IMMUTABLE STRICT AS
$$ SELECT (fp_of(src)::int8 # mask)::simhash64 $$;
-- raise unless two results agree
CREATE FUNCTION assert_same(a text, b text, what text) RETURNS boolean LANGUAGE plpgsql AS
$$ BEGIN
	IF a IS DISTINCT FROM b THEN
		RAISE EXCEPTION 'simhash mismatch in %: index gives %, sequential scan gives %', what, a, b;
	END IF;
	RETURN true;
END $$;
EOSQL
}

# The table of the crash and standby tests: fp = fp_mk(src, mask), so the
# expected fingerprint of every row is known from (src, mask).
sub docs_table_sql
{
	return <<'EOSQL';
CREATE TABLE docs (
	id int8 NOT NULL,
	src int8 NOT NULL,
	mask int8,
	fp simhash64 GENERATED ALWAYS AS (fp_mk(src, mask)) STORED);
EOSQL
}

# A deterministic set of query centres for a table: some of its own
# fingerprints (so that radius 0 matches), centres of the clusters of
# near-copies the tests make (fp_mk(c, 0) for c in 1..ncl), fingerprints
# that are not in the table, and 0.  Returned as simhash64 literals.
sub query_centers
{
	my ($node, $table, %opts) = @_;
	my $own = $opts{own} // 12;
	my $ncl = $opts{clusters} // 6;
	my $db = $opts{db} // 'postgres';
	my $sql = qq{
		(SELECT fp::text FROM $table WHERE fp IS NOT NULL
		 ORDER BY hashint8(id) LIMIT $own)
		UNION ALL SELECT fp_mk(c, 0)::text FROM generate_series(1, $ncl) c
		UNION ALL SELECT fp_of(-1000003 * i)::text FROM generate_series(1, 4) i
		UNION ALL SELECT '0000000000000000'};
	my @c = split /\n/, $node->safe_psql($db, $sql);
	return @c;
}

# Run the same radius, equality and nearest-neighbour searches as an index
# scan, an index-only scan, a bitmap scan and a sequential scan, and check
# that they agree.  Returns a digest of the results (so that the caller
# can compare two nodes).  %opts: db, radii (array ref), knn (rows per
# nearest-neighbour search), centers (array ref of literals).
sub compare_index_seq
{
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my ($node, $table, $label, %opts) = @_;
	my $db = $opts{db} // 'postgres';
	my @radii = @{ $opts{radii} // [ 0, 1, 2, 3, 4, 6, 9, 12 ] };
	my $knn = $opts{knn} // 12;
	my @centers = @{ $opts{centers} // [ query_centers($node, $table, db => $db) ] };
	my $maxk = (sort { $b <=> $a } @radii)[0];

	my $i = 0;
	my $q = 'VALUES ' . join(', ', map { $i++; "($i, '$_'::simhash64)" } @centers);
	my $k = 'VALUES ' . join(', ', map { "($_)" } @radii);
	my $radius_sub = qq{
		SELECT q.qid, k.k, (SELECT count(*) || ':' || coalesce(md5(string_agg(t.id::text, ',' ORDER BY t.id)), '-')
			 FROM $table t WHERE t.fp <@ simhash_ball(q.fp, k.k)) AS r
		FROM ($q) q(qid, fp), ($k) k(k) ORDER BY 1, 2};
	my $count_sub = qq{
		SELECT q.qid, k.k, (SELECT count(*) || ':' || coalesce(sum(hamming(t.fp, q.fp)), 0)
			 FROM $table t WHERE t.fp <@ simhash_ball(q.fp, k.k)) AS r
		FROM ($q) q(qid, fp), ($k) k(k) ORDER BY 1, 2};
	my $eq_sub = qq{
		SELECT q.qid, (SELECT count(*) || ':' || coalesce(md5(string_agg(t.id::text, ',' ORDER BY t.id)), '-')
			 FROM $table t WHERE t.fp = q.fp) AS r
		FROM ($q) q(qid, fp) ORDER BY 1};
	# nearest neighbours: the sequence of distances, computed from the heap
	# tuple (t.id forces heap access) or from the index (index-only)
	my $knn_sub = qq{
		SELECT q.qid, (SELECT string_agg(s.d::text || CASE WHEN s.id IS NULL THEN '?' ELSE '' END, ',')
			 FROM (SELECT t.id, hamming(t.fp, q.fp) AS d FROM $table t
				   ORDER BY t.fp <-> q.fp LIMIT $knn) s) AS r
		FROM ($q) q(qid, fp) ORDER BY 1};
	my $knn_ios_sub = qq{
		SELECT q.qid, (SELECT string_agg(s.d::text, ',')
			 FROM (SELECT t.fp <-> q.fp AS d FROM $table t
				   ORDER BY t.fp <-> q.fp LIMIT $knn) s) AS r
		FROM ($q) q(qid, fp) ORDER BY 1};

	my $idx_gucs = 'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;';
	my $ios_gucs = 'SET enable_seqscan = off; SET enable_bitmapscan = off;';
	my $bmp_gucs = 'SET enable_seqscan = off; SET enable_indexscan = off; SET enable_indexonlyscan = off;';

	my %r;
	$r{idx} = $node->safe_psql($db, "$idx_gucs $radius_sub");
	$r{bmp} = $node->safe_psql($db, "$bmp_gucs $radius_sub");
	$r{ios} = $node->safe_psql($db, "$ios_gucs $count_sub");
	$r{idx_eq} = $node->safe_psql($db, "$idx_gucs $eq_sub");
	$r{bmp_eq} = $node->safe_psql($db, "$bmp_gucs $eq_sub");
	$r{knn} = $node->safe_psql($db, "$idx_gucs $knn_sub");
	$r{knn_ios} = $node->safe_psql($db, "$ios_gucs $knn_ios_sub");

	# the plans really use the index
	my $plans = $node->safe_psql($db, "$idx_gucs EXPLAIN (COSTS OFF) $radius_sub")
	  . $node->safe_psql($db, "$bmp_gucs EXPLAIN (COSTS OFF) $radius_sub")
	  . $node->safe_psql($db, "$idx_gucs EXPLAIN (COSTS OFF) $knn_sub");
	like($plans, qr/Index Scan using .*Bitmap Index Scan on .*Index Scan using .*Order By/s,
		"$label: searches use the simhash index");

	# the sequential scan: all distances up to the largest radius at once
	my $seq = $node->safe_psql($db, qq{
		WITH q(qid, fp) AS ($q),
		d AS MATERIALIZED (SELECT q.qid, t.id, hamming(t.fp, q.fp) + 0 AS d
						   FROM q, $table t WHERE hamming(t.fp, q.fp) + 0 <= $maxk)
		SELECT q.qid, k.k, (SELECT count(*) || ':' || coalesce(md5(string_agg(d.id::text, ',' ORDER BY d.id)), '-')
							FROM d WHERE d.qid = q.qid AND d.d <= k.k) || '|' ||
						   (SELECT count(*) || ':' || coalesce(sum(d.d), 0)
							FROM d WHERE d.qid = q.qid AND d.d <= k.k)
		FROM q, ($k) k(k) ORDER BY 1, 2});
	my (@seq_ids, @seq_cnt);
	for my $line (split /\n/, $seq)
	{
		my ($qid, $kk, $ids, $cnt) = split /[|]/, $line;
		push @seq_ids, "$qid|$kk|$ids";
		push @seq_cnt, "$qid|$kk|$cnt";
	}
	my $seq_eq = $node->safe_psql($db, qq{
		SELECT q.qid, (SELECT count(*) || ':' || coalesce(md5(string_agg(t.id::text, ',' ORDER BY t.id)), '-')
			 FROM $table t WHERE t.fp::int8 = q.fp::int8) FROM ($q) q(qid, fp) ORDER BY 1});
	my $seq_knn = $node->safe_psql($db, qq{
		SELECT q.qid, (SELECT string_agg(s.d::text, ',')
			 FROM (SELECT hamming(t.fp, q.fp) + 0 AS d FROM $table t WHERE t.fp IS NOT NULL
				   ORDER BY 1 LIMIT $knn) s)
		FROM ($q) q(qid, fp) ORDER BY 1});

	my $seq_ids = join("\n", @seq_ids);
	my $seq_cnt = join("\n", @seq_cnt);
	my $n = scalar(@centers) * scalar(@radii);
	is($r{idx}, $seq_ids, "$label: index scan == sequential scan ($n radius searches)");
	is($r{bmp}, $seq_ids, "$label: bitmap scan == sequential scan");
	is($r{ios}, $seq_cnt, "$label: index-only scan == sequential scan (counts, distances)");
	is($r{idx_eq}, $seq_eq, "$label: fp = q through the index == sequential scan");
	is($r{bmp_eq}, $seq_eq, "$label: fp = q through a bitmap == sequential scan");
	is($r{knn}, $seq_knn, "$label: nearest neighbours (index scan) == sequential scan");
	is($r{knn_ios}, $seq_knn, "$label: nearest neighbours (index-only scan) == sequential scan");

	# not vacuous: the searches found rows
	my $found = 0;
	$found += (split /[|:]/, $_)[2] for @seq_ids;
	cmp_ok($found, '>', scalar(@centers), "$label: the searches match rows ($found in all)");

	return join("\n", $r{idx}, $r{ios}, $r{idx_eq}, $r{knn});
}

# simhash_index_check(index, heapallindexed); it must pass.
sub check_index
{
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my ($node, $index, $label, %opts) = @_;
	my $db = $opts{db} // 'postgres';
	my $heap = $opts{heapallindexed} // 1 ? 'true' : 'false';
	my ($ret, $out, $err) =
	  $node->psql($db, "SELECT simhash_index_check('$index', $heap)");
	is($ret . $err, '0', "$label: simhash_index_check($index, $heap)");
	return $ret == 0;
}

# Count the non-NULL rows that a parameterized index scan does not find
# (each row searches for its own fingerprint and id).  Must be 0.
# $opts{sample} = N: only rows with id % N = 0 (large tables).
sub rows_found_by_index
{
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my ($node, $table, $label, %opts) = @_;
	my $db = $opts{db} // 'postgres';
	my $where = $opts{sample} ? "d.id % $opts{sample} = 0 AND" : '';
	my $gucs = 'SET enable_seqscan = off; SET enable_bitmapscan = off; '
	  . 'SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_material = off;';
	my $sql = qq{SELECT count(*) FROM $table d WHERE $where d.fp IS NOT NULL AND NOT EXISTS
		(SELECT 1 FROM $table e WHERE e.fp = d.fp AND e.id = d.id)};
	my $plan = $node->safe_psql($db, "$gucs EXPLAIN (COSTS OFF) $sql");
	like($plan, qr/Nested Loop Anti Join.*Index (Only )?Scan using/s,
		"$label: every row looks itself up through the index");
	my $total = $node->safe_psql($db, "SELECT count(*) FROM $table d WHERE $where fp IS NOT NULL");
	is($node->safe_psql($db, "$gucs $sql"), '0',
		"$label: all $total committed rows" . ($where ? " with id % $opts{sample} = 0" : '')
		  . " are found through the index");
}

1;
