
# Copyright (c) 2026, the simhash authors

# Sharding with postgres_fdw (README, "Sharding with postgres_fdw"): a
# coordinator holds a hash-partitioned docs table whose partitions are
# foreign tables on two shard servers, each shard with the extension and a
# simhash index.  Checked against a single-server copy of the same rows on
# the coordinator:
# - radius searches are shipped to both shards (Remote SQL), run there
#   concurrently (Async Foreign Scan) through each shard's simhash index
#   (also when planned as postgres_fdw's cursors), in custom and generic
#   plans, and return the single server's rows;
# - nearest neighbours: the partitioned table's ORDER BY ... LIMIT (no
#   per-shard LIMIT in PostgreSQL 15) and the per-shard LIMIT form;
# - all near-duplicate pairs: documents copied to the shard of each of
#   their blocks, each shard pairing its copies with the band join, only the
#   pairs coming back, kept up to date by a trigger;
# - an insert-time near-duplicate check on the coordinator sees rows of
#   both shards, and serialises near-copies with block-key locks: without
#   them two concurrent near-copies routed to different shards both commit;
# - postgres_fdw's shard transactions are REPEATABLE READ from their first
#   query whatever the coordinator's level, so a transaction that read the
#   shards before it waited for the locks has an old view of them: the
#   check also looks through new connections (dblink) and raises 40001 if a
#   near-copy committed since, at READ COMMITTED, REPEATABLE READ and
#   SERIALIZABLE.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $start_time = time;
my $ndocs = 20000;

my $conf = qq{
shared_buffers = 32MB
log_statement = none
jit = off
autovacuum = off
};

my @shards;
for my $i (0, 1)
{
	my $shard = PostgreSQL::Test::Cluster->new("shard$i");
	$shard->init;
	$shard->append_conf('postgresql.conf', $conf);
	$shard->start;
	# the shard's partitions: the documents, and the copies it pairs (see below)
	$shard->safe_psql(
		'postgres', qq{
CREATE EXTENSION simhash;
CREATE TABLE docs_p$i (
	id int8 PRIMARY KEY,
	body text NOT NULL,
	fp simhash64 GENERATED ALWAYS AS (simhash(body)) STORED);
CREATE INDEX docs_p${i}_fp ON docs_p$i USING simhash (fp);
CREATE TABLE doc_copies_p$i (
	grp int4 NOT NULL,
	id int8 PRIMARY KEY,
	fp simhash64 NOT NULL);
CREATE VIEW doc_pairs_p$i AS
SELECT a.id AS id1, b.id AS id2, a.fp <-> b.fp AS distance
FROM doc_copies_p$i a JOIN doc_copies_p$i b ON a.fp <-> b.fp <= 3 AND a.id < b.id
WHERE simhash_shared_block(a.fp, b.fp) % 2 = $i;
});
	push @shards, $shard;
}

my $coord = PostgreSQL::Test::Cluster->new('coordinator');
$coord->init;
$coord->append_conf('postgresql.conf', $conf);
$coord->start;

my $servers = '';
for my $i (0, 1)
{
	my ($host, $port) = ($shards[$i]->host, $shards[$i]->port);
	$servers .= qq{
CREATE SERVER shard$i FOREIGN DATA WRAPPER postgres_fdw
	OPTIONS (host '$host', port '$port', dbname 'postgres',
			 extensions 'simhash', async_capable 'true', batch_size '1000',
			 fdw_tuple_cost '0.2');
CREATE USER MAPPING FOR CURRENT_USER SERVER shard$i;
CREATE FOREIGN TABLE docs_p$i PARTITION OF docs
	FOR VALUES WITH (MODULUS 2, REMAINDER $i) SERVER shard$i;
CREATE FOREIGN TABLE doc_copies_p$i PARTITION OF doc_copies
	FOR VALUES IN ($i) SERVER shard$i;
CREATE FOREIGN TABLE doc_pairs_p$i (id1 int8, id2 int8, distance int4) SERVER shard$i;
};
}

# Documents: base document d / 10 with, in 9 copies of 10, one of its 40
# words replaced, so clusters of near-copies at distances 0 to 10 or so.
$coord->safe_psql(
	'postgres', qq{
CREATE EXTENSION simhash;
CREATE EXTENSION postgres_fdw;
CREATE FUNCTION body_of(d int8) RETURNS text LANGUAGE sql IMMUTABLE AS \$\$
	SELECT string_agg('w' || (hashint8(CASE WHEN j = d % 10 * 4 AND d % 10 > 0
											THEN d * 100 + j ELSE d / 10 * 100 + j END) & 1023)::text,
					  ' ' ORDER BY j)
	FROM generate_series(0, 39) j
\$\$;
CREATE TABLE docs (
	id int8 NOT NULL,
	body text NOT NULL,
	fp simhash64 GENERATED ALWAYS AS (simhash(body)) STORED)
	PARTITION BY HASH (id);
CREATE TABLE doc_copies (
	grp int4 NOT NULL,
	id int8 NOT NULL,
	fp simhash64 NOT NULL)
	PARTITION BY LIST (grp);
$servers
CREATE VIEW doc_pairs AS SELECT * FROM doc_pairs_p0 UNION ALL SELECT * FROM doc_pairs_p1;
-- the single-server reference: the same rows in one table
CREATE TABLE docs_local (
	id int8 PRIMARY KEY,
	body text NOT NULL,
	fp simhash64 GENERATED ALWAYS AS (simhash(body)) STORED);
INSERT INTO docs_local (id, body) SELECT i, body_of(i) FROM generate_series(1, $ndocs) i;
CREATE INDEX docs_local_fp ON docs_local USING simhash (fp);
INSERT INTO docs (id, body) SELECT id, body FROM docs_local;
INSERT INTO doc_copies SELECT DISTINCT k % 2, id, fp FROM docs, unnest(simhash_blocks(fp)) k;
ANALYZE docs_local;
ANALYZE docs;
});
$_->safe_psql('postgres', 'ANALYZE') for @shards;
# one row each: a UNION ALL of the two foreign scans is an Async Append,
# which returns the shard that answers first first
is( $coord->safe_psql('postgres',
		'SELECT (SELECT count(*) FROM docs_p0), (SELECT count(*) FROM docs_p1)'),
	$coord->safe_psql('postgres',
		qq{SELECT count(*) FILTER (WHERE satisfies_hash_partition('docs'::regclass, 2, 0, id)),
				  count(*) FILTER (WHERE satisfies_hash_partition('docs'::regclass, 2, 1, id))
		   FROM docs_local}),
	'both shards hold their share of the rows');

# Statistics of the shards' tables; a shard backend reports them when
# postgres_fdw's connection ends.
sub shard_scans
{
	my ($what) = @_;
	$coord->safe_psql('postgres', 'SELECT postgres_fdw_disconnect_all()');
	my @r;
	for my $i (0, 1)
	{
		$shards[$i]->poll_query_until('postgres',
			"SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")
		  or die "shard $i: postgres_fdw's backend did not exit";
		push @r, $shards[$i]->safe_psql('postgres',
			"SELECT $what FROM pg_stat_user_tables t JOIN pg_stat_user_indexes i USING (relid) WHERE i.indexrelname = 'docs_p${i}_fp'");
	}
	return @r;
}

# How often a plan shows a string
sub count_of
{
	my ($plan, $what) = @_;
	my $n = () = $plan =~ /\Q$what\E/g;
	return $n;
}

# The remote SQL of each shard in a plan
sub remote_sql
{
	my ($plan) = @_;
	return ($plan =~ /Remote SQL: (.*)/g);
}

# A shard plans a remote query as postgres_fdw sends it: a cursor
# (cursor_tuple_fraction = 0.1).
sub shard_cursor_plan
{
	my ($i, $sql) = @_;
	return $shards[$i]->safe_psql('postgres', "EXPLAIN DECLARE c CURSOR FOR $sql");
}

# ------------------------------------------------------------------------
# Radius searches
# ------------------------------------------------------------------------

# query texts: members of clusters (near-copies on both shards), and texts
# that are in no cluster
my @texts = map { $coord->safe_psql('postgres', "SELECT body_of($_)") }
  (13, 5027, 10991, 17450, 19999);
push @texts, 'nothing like any document here', 'w1 w2 w3 w4 w5 w6 w7 w8';

my $search = 'SELECT id FROM docs WHERE fp <-> simhash($1) <= 3';
my $plan = $coord->safe_psql('postgres', qq{
PREPARE s(text) AS $search;
EXPLAIN (VERBOSE, COSTS OFF) EXECUTE s('$texts[0]')});
my @remote = remote_sql($plan);
is(scalar(@remote), 2, 'radius search: one remote query per shard');
like($_, qr/WHERE \(\(\(fp OPERATOR\(public\.<->\) '[0-9a-f]{16}'\) <= 3\)\)$/,
	"radius search: the distance clause is shipped ($_)") for @remote;
is(count_of($plan, 'Async Foreign Scan'), 2, 'radius search: the shards run concurrently');

for my $i (0, 1)
{
	like(shard_cursor_plan($i, $remote[$i]), qr/^Index Scan using docs_p${i}_fp/,
		"shard $i plans the shipped radius search as an index scan, as a cursor");
}

my ($before0, $before1) = shard_scans('i.idx_scan, t.seq_scan');
my $found = 0;
for my $t (@texts)
{
	(my $lit = $t) =~ s/'/''/g;
	my $sharded = $coord->safe_psql('postgres', qq{
PREPARE s(text) AS SELECT string_agg(id::text, ',' ORDER BY id) FROM ($search) s;
EXECUTE s('$lit')});
	my $single = $coord->safe_psql('postgres',
		"SELECT string_agg(id::text, ',' ORDER BY id) FROM docs_local WHERE fp <-> simhash('$lit') <= 3");
	is($sharded, $single, "radius 3 around '" . substr($t, 0, 20) . "...': sharded == single server");
	$found += scalar(split /,/, $single);
}
cmp_ok($found, '>', 2 * 5, "radius searches found rows ($found)");
my ($after0, $after1) = shard_scans('i.idx_scan, t.seq_scan');
my ($i0b, $s0b) = split /\|/, $before0;
my ($i0a, $s0a) = split /\|/, $after0;
my ($i1b, $s1b) = split /\|/, $before1;
my ($i1a, $s1a) = split /\|/, $after1;
is($i0a - $i0b, scalar(@texts), 'shard 0 answered every search with its simhash index');
is($i1a - $i1b, scalar(@texts), 'shard 1 answered every search with its simhash index');
is($s0a - $s0b + $s1a - $s1b, 0, 'no shard scanned its table sequentially');

# A prepared statement in a generic plan ships a fingerprint parameter
# (simhash($1) of a text parameter is not shippable in PostgreSQL 15: its
# collation is not derived from a column), and through an InitPlan.
for my $form ('fp <-> $1::simhash64 <= 3', 'fp <-> (SELECT simhash($1::text)) <= 3')
{
	my $q = $form =~ /simhash\(/ ? $texts[1] : $coord->safe_psql('postgres', "SELECT simhash('$texts[1]')");
	my $out = $coord->safe_psql('postgres', qq{
SET plan_cache_mode = force_generic_plan;
PREPARE g AS SELECT string_agg(id::text, ',' ORDER BY id) FROM docs WHERE $form;
EXPLAIN (VERBOSE, COSTS OFF) EXECUTE g('$q');
SELECT '--';
EXECUTE g('$q');
SELECT '--';
SELECT string_agg(id::text, ',' ORDER BY id) FROM docs_local WHERE fp <-> simhash('$texts[1]') <= 3});
	my ($gplan, $got, $want) = split /\n--\n/, $out;
	like($gplan, qr/Remote SQL: .*WHERE \(\(\(fp OPERATOR\(public\.<->\) \$1::public\.simhash64\) <= 3\)\)/,
		"generic plan, $form: shipped with a parameter");
	unlike($gplan, qr/Filter:/, "generic plan, $form: nothing filtered on the coordinator");
	is($got, $want, "generic plan, $form: sharded == single server");
}

# ------------------------------------------------------------------------
# Nearest neighbours
# ------------------------------------------------------------------------

my $q = $coord->safe_psql('postgres', "SELECT simhash('$texts[2]')");
my $knn_single = $coord->safe_psql('postgres',
	"SELECT string_agg(d::text, ',') FROM (SELECT fp <-> '$q' AS d FROM docs_local ORDER BY fp <-> '$q' LIMIT 10) s");

# the partitioned table: ORDER BY is shipped, LIMIT is not (each shard's
# cursor is read until the Merge Append has its 10 rows)
my $knn_part = "SELECT id, fp <-> '$q' AS d FROM docs ORDER BY fp <-> '$q' LIMIT 10";
$plan = $coord->safe_psql('postgres', "EXPLAIN (VERBOSE, COSTS OFF) $knn_part");
@remote = remote_sql($plan);
like($plan, qr/Merge Append/, 'nearest neighbours, partitioned table: a Merge Append of the shards');
like($_, qr/ORDER BY \(fp OPERATOR\(public\.<->\) '[0-9a-f]{16}'\) ASC NULLS LAST$/,
	'nearest neighbours, partitioned table: ORDER BY shipped, no LIMIT') for @remote;
like(shard_cursor_plan($_, $remote[$_]), qr/^Index Scan using docs_p${_}_fp.*\n.*Order By/,
	"nearest neighbours, partitioned table: shard $_ plans its cursor as an ordered index scan") for (0, 1);
is($coord->safe_psql('postgres', "SELECT string_agg(d::text, ',') FROM ($knn_part) s"),
	$knn_single, 'nearest neighbours, partitioned table: the distances of the single server');

# the per-shard LIMIT form (README): one ORDER BY ... LIMIT per shard, run
# concurrently (the MATERIALIZED CTE keeps the coordinator from merging the
# shards' ordered outputs with a Merge Append, which is not asynchronous)
my $knn_fast = qq{
WITH nearest AS MATERIALIZED (
	(SELECT id, fp <-> '$q' AS d FROM docs_p0 ORDER BY fp <-> '$q' LIMIT 10)
	UNION ALL
	(SELECT id, fp <-> '$q' AS d FROM docs_p1 ORDER BY fp <-> '$q' LIMIT 10))
SELECT id, d FROM nearest ORDER BY d, id LIMIT 10};
$plan = $coord->safe_psql('postgres', "EXPLAIN (VERBOSE, COSTS OFF) $knn_fast");
@remote = remote_sql($plan);
like($_, qr/ORDER BY \(fp OPERATOR\(public\.<->\) '[0-9a-f]{16}'\) ASC NULLS LAST LIMIT 10::bigint$/,
	'nearest neighbours, per-shard form: ORDER BY and LIMIT shipped') for @remote;
is(count_of($plan, 'Async Foreign Scan'), 2, 'nearest neighbours, per-shard form: the shards run concurrently');
like(shard_cursor_plan($_, $remote[$_]), qr/Index Scan using docs_p${_}_fp.*\n.*Order By/,
	"nearest neighbours, per-shard form: shard $_ uses its index") for (0, 1);
my $knn_got = $coord->safe_psql('postgres', "SELECT string_agg(d::text, ',') FROM ($knn_fast) s");
is($knn_got, $knn_single, 'nearest neighbours, per-shard form: the distances of the single server');
is( $coord->safe_psql('postgres',
		"SELECT count(*) FROM ($knn_fast) s JOIN docs_local l USING (id) WHERE l.fp <-> '$q' = s.d"),
	'10', 'nearest neighbours, per-shard form: every row has the distance reported');

# ------------------------------------------------------------------------
# All near-duplicate pairs: copies grouped by block
# ------------------------------------------------------------------------

# Two fingerprints within 3 share a block.  Each document is copied to the
# shard of each of its blocks (block % 2), so a pair is on the shard of
# every block it shares; each shard's view doc_pairs_p<i> pairs its copies
# with the band join and keeps the pairs whose first shared block is its
# own, so that every pair is reported once, and only pairs travel.
my $pairs_single = q{
SELECT a.id AS id1, b.id AS id2, a.fp <-> b.fp AS distance
FROM docs_local a JOIN docs_local b ON a.fp <-> b.fp <= 3 AND a.id < b.id};
my $digest = q{SELECT count(*) || ' ' || md5(string_agg(id1 || '-' || id2 || ':' || distance, ',' ORDER BY id1, id2)) FROM };

$plan = $coord->safe_psql('postgres', 'EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM doc_pairs');
@remote = remote_sql($plan);
is_deeply(\@remote, [ map { "SELECT id1, id2, distance FROM public.doc_pairs_p$_" } (0, 1) ],
	'pairs: each shard is asked for its pairs');
is(count_of($plan, 'Async Foreign Scan'), 2, 'pairs: the shards run concurrently');
(my $nodes = $plan) =~ s/^\s*(Remote SQL|Relations|Output):.*$//mg;
unlike($nodes, qr/Join|Hash|Nested Loop|Merge/i, 'pairs: no join on the coordinator');
like(shard_cursor_plan($_, $remote[$_]), qr/Custom Scan \(SimhashJoin\)/,
	"pairs: shard $_ pairs its copies with the band join, as a cursor") for (0, 1);

my $want = $coord->safe_psql('postgres', "$digest ($pairs_single) s");
like($want, qr/^[1-9]\d{3,} /, "pairs: the single server has thousands ($want)");
is($coord->safe_psql('postgres', "$digest doc_pairs"),
	$want, 'pairs: the shards report exactly the single server\'s pairs, each once');

# kept up to date by a trigger on the coordinator's docs
$coord->safe_psql(
	'postgres', q{
CREATE FUNCTION doc_copies_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP <> 'INSERT' THEN
		DELETE FROM doc_copies WHERE id = OLD.id;
	END IF;
	IF TG_OP <> 'DELETE' THEN
		INSERT INTO doc_copies SELECT DISTINCT k % 2, NEW.id, NEW.fp FROM unnest(simhash_blocks(NEW.fp)) k;
	END IF;
	RETURN NULL;
END $$;
CREATE TRIGGER doc_copies_sync AFTER INSERT OR DELETE OR UPDATE OF body ON docs
	FOR EACH ROW EXECUTE FUNCTION doc_copies_sync();
});
my $changes = q{
INSERT INTO %1$s (id, body) SELECT 100000 + i, body_of(i * 37) FROM generate_series(1, 30) i;
UPDATE %1$s SET body = body_of(id + 10) WHERE id %% 1000 = 7;
DELETE FROM %1$s WHERE id %% 1000 = 3;
};
$coord->safe_psql('postgres', sprintf($changes, 'docs_local'));
$coord->safe_psql('postgres', sprintf($changes, 'docs'));
$want = $coord->safe_psql('postgres', "$digest ($pairs_single) s");
is($coord->safe_psql('postgres', "$digest doc_pairs"),
	$want, 'pairs: after inserts, updates and deletes through the coordinator, still the single server\'s pairs');
is( $coord->safe_psql('postgres', 'SELECT count(*) || \' \' || count(DISTINCT id) FROM doc_copies'),
	$coord->safe_psql('postgres',
		'SELECT sum(n) || \' \' || count(*) FROM docs, LATERAL (SELECT count(DISTINCT k % 2) n FROM unnest(simhash_blocks(fp)) k) c'),
	'pairs: every document has a copy on the shard of each of its blocks, and no other');

# near-duplicate clusters of the sharded table, run on the coordinator:
# the rows come through the shards, the clusters are the single server's
my $clusters = q{SELECT md5(string_agg(id || ':' || cluster || ':' || size, ',' ORDER BY id))
	FROM simhash_clusters('SELECT id, fp FROM %s', 3)};
my $clusters_single = $coord->safe_psql('postgres', sprintf($clusters, 'docs_local'));
is($coord->safe_psql('postgres', sprintf($clusters, 'docs')),
	$clusters_single, 'clusters of the sharded table: the single server\'s');
like($coord->safe_psql('postgres',
		q{SELECT count(*) FROM simhash_clusters('SELECT id, fp FROM docs', 3) WHERE size > 1}),
	qr/^[1-9]\d*$/, 'clusters of the sharded table: some rows have near-duplicates');

# ------------------------------------------------------------------------
# Insert-time near-duplicate check on the coordinator
# ------------------------------------------------------------------------

# A BEFORE trigger on the coordinator's docs sees the rows of both shards.
# Near-copies within 3 share a block: locking the four (block number,
# block) keys of the new row before looking serialises near-copies.  The
# look through docs sees this transaction's own rows, but postgres_fdw's
# shard snapshots were taken by the transaction's first query to each
# shard, maybe before the lock was granted; so the check looks again
# through new connections (dblink, one per shard), which see everything
# committed, and a near-copy that only they find committed after this
# transaction's snapshot: serialization failure, as on one server.
$coord->safe_psql(
	'postgres', q{
CREATE EXTENSION dblink;
CREATE TABLE guard (locks boolean);
INSERT INTO guard VALUES (true);
CREATE FUNCTION docs_reject_near() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	new_fp simhash64 := simhash(NEW.body);	-- generated columns come after BEFORE triggers
	other int8;
	shard record;
BEGIN
	IF (SELECT locks FROM guard) THEN
		PERFORM pg_advisory_xact_lock(4242, b << 16 | simhash_block(new_fp, b))
		FROM generate_series(0, 3) b ORDER BY b;
	END IF;
	SELECT id INTO other FROM docs WHERE fp <-> new_fp <= 3 LIMIT 1;
	IF FOUND THEN
		RAISE EXCEPTION 'near-duplicate of document %', other USING ERRCODE = '23P01';
	END IF;
	FOR shard IN
		SELECT s.srvname, c.relname FROM pg_inherits i
		JOIN pg_foreign_table f ON f.ftrelid = i.inhrelid
		JOIN pg_foreign_server s ON s.oid = f.ftserver
		JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = 'docs'::regclass
	LOOP
		SELECT r.id INTO other FROM dblink(shard.srvname,
			format('SELECT id FROM %I WHERE fp <-> %L <= 3 LIMIT 1', shard.relname, new_fp)) r(id int8);
		IF FOUND THEN
			RAISE EXCEPTION 'could not serialize access due to a concurrent near-duplicate insert'
				USING ERRCODE = '40001',
				DETAIL = format('Document %s, within 3 bits, was committed after this transaction first read shard %s.',
								other, shard.srvname),
				HINT = 'Retry the transaction.';
		END IF;
	END LOOP;
	RETURN NEW;
END $$;
CREATE TRIGGER docs_reject_near BEFORE INSERT ON docs
	FOR EACH ROW EXECUTE FUNCTION docs_reject_near();
});

# ids that land on shard 0 and on shard 1
my ($id0, $id1) = split /\n/, $coord->safe_psql('postgres', qq{
SELECT min(i) FROM generate_series(200000, 200100) i WHERE satisfies_hash_partition('docs'::regclass, 2, 0, i::int8)
UNION ALL
SELECT min(i) FROM generate_series(200000, 200100) i WHERE satisfies_hash_partition('docs'::regclass, 2, 1, i::int8)});

# a new document and a near-copy of it (1 to 3 bits apart), far from the
# table's documents
my ($b, $c) = split /\|/, $coord->safe_psql('postgres', q{
SELECT c * 10, c * 10 + j FROM generate_series(90000, 90100) c, generate_series(1, 9) j
WHERE simhash(body_of(c * 10)) <-> simhash(body_of(c * 10 + j)) BETWEEN 1 AND 3
  AND NOT EXISTS (SELECT FROM docs_local WHERE fp <-> simhash(body_of(c * 10)) <= 6)
ORDER BY 1, 2 LIMIT 1});
my ($base, $copy) = ("body_of($b)", "body_of($c)");

# sequentially: a near-copy routed to the other shard is caught
$coord->safe_psql('postgres', "INSERT INTO docs (id, body) VALUES ($id0, $base)");
my ($ret, $out, $err) = $coord->psql('postgres', "INSERT INTO docs (id, body) VALUES ($id1, $copy)");
like($err, qr/near-duplicate of document $id0/, 'a near-copy routed to the other shard is rejected');

# concurrently, with and without the block-key locks
for my $locks ('true', 'false')
{
	$coord->safe_psql('postgres', "DELETE FROM docs WHERE id IN ($id0, $id1); UPDATE guard SET locks = $locks");
	my $s1 = $coord->background_psql('postgres');
	my $s2 = $coord->background_psql('postgres', on_error_stop => 0);
	$s1->query_safe("BEGIN; INSERT INTO docs (id, body) VALUES ($id0, $base)");
	$s2->query_until(qr/started/, "\\echo started\nINSERT INTO docs (id, body) VALUES ($id1, $copy);\n\\echo done\n");
	if ($locks eq 'true')
	{
		$coord->poll_query_until('postgres',
			"SELECT count(*) = 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
		  or die 'the second insert does not wait';
	}
	else
	{
		# nothing to wait for: the second insert commits on its own
		$coord->poll_query_until('postgres', "SELECT count(*) = 1 FROM docs WHERE id = $id1")
		  or die 'the second insert did not commit';
	}
	$s1->query_safe('COMMIT');
	$s2->query_until(qr/done/, '');
	$s1->quit;
	$s2->quit;
	is($coord->safe_psql('postgres', "SELECT count(*) FROM docs WHERE id IN ($id0, $id1)"),
		$locks eq 'true' ? '1' : '2',
		$locks eq 'true'
		? 'concurrent near-copies on two shards, block-key locks: one commits'
		: 'concurrent near-copies on two shards, no locks: both commit (the race the locks close)');
}

# A transaction that read the shards before it inserts a near-copy, at each
# isolation level: its shard snapshots predate the other session's commit,
# so only the new connections see the near-copy; never both committed.
for my $level ('READ COMMITTED', 'REPEATABLE READ', 'SERIALIZABLE')
{
	$coord->safe_psql('postgres', "DELETE FROM docs WHERE id IN ($id0, $id1); UPDATE guard SET locks = true");
	my $s1 = $coord->background_psql('postgres');
	my $s2 = $coord->background_psql('postgres', on_error_stop => 0);
	$s1->query_safe("BEGIN; INSERT INTO docs (id, body) VALUES ($id0, $base)");
	$s2->query_safe("\\set VERBOSITY verbose\nBEGIN ISOLATION LEVEL $level");
	is($s2->query_safe("SELECT count(*) FROM docs WHERE id IN ($id0, $id1)"), '0',
		"$level: the second transaction first reads both shards");
	$s2->query_until(qr/started/, "\\echo started\nINSERT INTO docs (id, body) VALUES ($id1, $copy);\n\\echo done\n");
	$coord->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
	  or die "$level: the second insert does not wait";
	$s1->query_safe('COMMIT');
	$s2->query_until(qr/done/, '');
	like($s2->{stderr}, qr/ERROR:  40001: could not serialize access due to a concurrent near-duplicate insert/,
		"$level: the second insert, whose shard snapshots predate the first's commit, fails with 40001");
	$s2->query('COMMIT');
	$s1->quit;
	$s2->quit;
	is($coord->safe_psql('postgres', "SELECT string_agg(id::text, ',') FROM docs WHERE id IN ($id0, $id1)"),
		$id0, "$level: only the first near-copy committed");
}

for my $node ($coord, @shards)
{
	unlike(slurp_file($node->logfile), qr/PANIC|TRAP:|server process .* was terminated/,
		$node->name . ': server log has no PANIC or crash');
}
$_->stop for ($coord, @shards);
note(sprintf('006_fdw_shards took %.1f s', time - $start_time));
done_testing();
