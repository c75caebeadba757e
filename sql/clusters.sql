--
-- simhash_clusters(query, k): the connected components of "within k bits"
-- among the rows of a query, compared with a brute-force computation (every
-- pair by a nested loop over hamming(), components by label propagation)
-- on real documents and on generated fingerprints, at every radius that
-- matters; then extreme radii, NULLs, bad queries, a non-superuser, cancel,
-- progress and the memory bound.
--
SET jit = off;
CREATE OR REPLACE FUNCTION sqlstate_of(query text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE query;
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
-- the same with the error's detail
CREATE FUNCTION error_of(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	detail text;
BEGIN
	EXECUTE query;
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
	RETURN SQLSTATE || ': ' || SQLERRM || ' / ' || detail;
END $$;

-- real documents: the paragraphs of the licenses every Debian system ships,
-- those whose text is the same in Debian 12, 13 and unstable (MPL-1.1 and
-- MPL-2.0, GPL-3 and LGPL-3 share some, exactly or nearly), each with two
-- edited copies (a word deleted; a word replaced), and rows without a text
CREATE TABLE cdocs (id int8, body text, fp simhash64 GENERATED ALWAYS AS (simhash(body)) STORED);
CREATE TEMP TABLE paragraphs AS
SELECT row_number() OVER (ORDER BY f, n) AS g, p AS body,
	   (SELECT count(*) FROM regexp_matches(p, '\m\w+\M', 'g')) AS words
FROM unnest(ARRAY['Apache-2.0', 'CC0-1.0', 'GFDL-1.3', 'GPL-3', 'LGPL-3', 'MPL-1.1',
				  'MPL-2.0']) f,
	 regexp_split_to_table(pg_read_file('/usr/share/common-licenses/' || f), '\n\s*\n')
		WITH ORDINALITY AS s(p, n);
INSERT INTO cdocs (id, body)
SELECT g * 10, body FROM paragraphs
UNION ALL
SELECT g * 10 + 1, regexp_replace(body, '\m\w+\M', '', 1, 1 + abs(hashint8(g)) % words::int)
FROM paragraphs WHERE words > 0
UNION ALL
SELECT g * 10 + 2, regexp_replace(body, '\m\w+\M', 'replaced', 1, 1 + abs(hashint8(-g)) % words::int)
FROM paragraphs WHERE words > 0;
INSERT INTO cdocs (id, body) SELECT 100000 + i, NULL FROM generate_series(1, 20) i;
SELECT count(*) AS rows, count(fp) AS fingerprints, count(DISTINCT fp) AS distinct_fingerprints FROM cdocs;

-- generated fingerprints: 60 centres with 25 copies each 0-4 bits away
-- (copies up to 8 bits apart), 40 chains in which each link is 2 bits from
-- the previous one (a component far wider than k), random fingerprints and
-- NULLs; ids negative and beyond 32 bits, stored out of id order
CREATE FUNCTION cfp(i int8) RETURNS simhash64 LANGUAGE sql IMMUTABLE AS
$$ SELECT ((hashint8(i)::int8 << 32) | (hashint8(-i)::int8 & 4294967295))::simhash64 $$;
CREATE TABLE cfps (id int8, fp simhash64);
INSERT INTO cfps
SELECT (c * 100 + j)::int8 * 40000000 - 200000000000,
	   (cfp(c)::int8 # (CASE WHEN j % 5 > 0 THEN 1::int8 << (j % 61) ELSE 0 END)
					 # (CASE WHEN j % 5 > 1 THEN 1::int8 << ((j * 7) % 63) ELSE 0 END)
					 # (CASE WHEN j % 5 > 2 THEN 1::int8 << ((j * 13) % 59) ELSE 0 END)
					 # (CASE WHEN j % 5 > 3 THEN 1::int8 << ((j * 5) % 64) ELSE 0 END))::simhash64
FROM generate_series(1, 60) c, generate_series(0, 24) j;
INSERT INTO cfps
SELECT 7000000000 + c * 100 + j,
	   (cfp(1000 + c)::int8 # (SELECT coalesce(bit_or((1::int8 << ((c * 11 + i * 17) % 64)) # (1::int8 << ((c * 11 + i * 17 + 31) % 64))), 0)
							   FROM generate_series(1, j) i))::simhash64
FROM generate_series(1, 40) c, generate_series(0, 14) j;
INSERT INTO cfps SELECT 9000000000 + i, cfp(5000 + i) FROM generate_series(1, 400) i;
INSERT INTO cfps SELECT 9100000000 + i, NULL FROM generate_series(1, 10) i;
CREATE TABLE cfps_shuffled AS SELECT * FROM cfps ORDER BY hashint8(id);
SELECT count(*) AS rows, count(fp) AS fingerprints, min(id), max(id) FROM cfps_shuffled;
-- a small table, where all rows form one bucket instead of four bands
CREATE TABLE csmall AS SELECT * FROM cfps WHERE id < 0 AND id % 3 = 0 OR id BETWEEN 7000000000 AND 7000000600;
-- ... with rows that make the groups of a bucket merge: in id order A, B 6
-- bits from A, C 3 bits from both (it joins A's group, then merges B's),
-- D 3 bits from B but 9 from A (found only if the merged group knows that
-- B lies 6 bits from its reference A)
INSERT INTO csmall
SELECT 8000000000 + t * 10 + r, (cfp(9000 + t)::int8 # m)::simhash64
FROM generate_series(1, 5) t,
	 (VALUES (0, 0::int8), (1, x'7e'::int8), (2, x'0e'::int8), (3, x'3fe'::int8)) v(r, m);
SELECT count(*) AS rows FROM csmall;

-- the reference: every pair within 10 bits, by a nested loop over hamming()
-- (none of these tables has an index; no band join either)
SET simhash.enable_join = off;
CREATE TABLE cpairs AS
SELECT 'cdocs' AS tab, a.id AS a, b.id AS b, hamming(a.fp, b.fp) AS d
FROM cdocs a, cdocs b WHERE a.id <> b.id AND hamming(a.fp, b.fp) <= 10
UNION ALL
SELECT 'cfps_shuffled', a.id, b.id, hamming(a.fp, b.fp)
FROM cfps a, cfps b WHERE a.id <> b.id AND hamming(a.fp, b.fp) <= 10
UNION ALL
SELECT 'csmall', a.id, b.id, hamming(a.fp, b.fp)
FROM csmall a, csmall b WHERE a.id <> b.id AND hamming(a.fp, b.fp) <= 10;
RESET simhash.enable_join;
SELECT tab, count(*) FILTER (WHERE d <= 3) AS pairs_3, count(*) AS pairs_10 FROM cpairs GROUP BY tab ORDER BY tab;
-- ... and its components: every row takes the smallest label among its own
-- and its neighbours' until nothing changes; a label is then the smallest
-- id of the component
CREATE FUNCTION ref_clusters(tab text, k int) RETURNS TABLE (id int8, cluster int8, size int8)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
	EXECUTE format('CREATE TEMP TABLE ref_label AS SELECT id, id AS label FROM %I WHERE fp IS NOT NULL', tab);
	LOOP
		UPDATE ref_label l SET label = m.label
		FROM (SELECT p.a, min(r.label) AS label
			  FROM cpairs p JOIN ref_label r ON r.id = p.b
			  WHERE p.tab = ref_clusters.tab AND p.d <= ref_clusters.k GROUP BY p.a) m
		WHERE l.id = m.a AND m.label < l.label;
		EXIT WHEN NOT FOUND;
	END LOOP;
	RETURN QUERY SELECT l.id, l.label, count(*) OVER (PARTITION BY l.label) FROM ref_label l;
	DROP TABLE ref_label;
END $$;
-- simhash_clusters against the reference: rows, clusters of several rows,
-- the largest, and rows whose (id, cluster, size) differ
CREATE FUNCTION compare_clusters(tab text, k int, OUT rows int8, OUT clusters int8,
								 OUT largest int8, OUT mismatches int8)
LANGUAGE plpgsql AS $$
BEGIN
	CREATE TEMP TABLE got AS SELECT * FROM simhash_clusters(format('SELECT id, fp FROM %I', tab), k);
	CREATE TEMP TABLE want AS SELECT * FROM ref_clusters(tab, k);
	SELECT count(*), count(*) FILTER (WHERE g.id = g.cluster AND g.size > 1), max(g.size)
	INTO rows, clusters, largest FROM got g;
	SELECT count(*) INTO mismatches
	FROM ((TABLE got EXCEPT TABLE want) UNION ALL (TABLE want EXCEPT TABLE got)) x;
	DROP TABLE got, want;
END $$;
SELECT k, (compare_clusters('cdocs', k)).* FROM unnest(ARRAY[0, 1, 3, 4, 6, 10]) k;
SELECT k, (compare_clusters('cfps_shuffled', k)).* FROM unnest(ARRAY[0, 1, 2, 3, 4, 6, 10]) k;
SELECT k, (compare_clusters('csmall', k)).* FROM unnest(ARRAY[0, 3, 10]) k;

-- the band table (rows sorted by a band's block) at its edges: rows that
-- all share band 0's block (one bucket of 2,000 rows there; groups of 4
-- within 2 bits, 30 identical rows, NULL fingerprints), and rows whose
-- blocks all differ in every band (a bucket per row; pairs 4 bits apart,
-- one bit per block, far apart in id order)
CREATE TABLE cblock (id int8, fp simhash64);
INSERT INTO cblock
SELECT i, ((x'5a5a000000000000'::int8 | (cfp(i / 4)::int8 & x'0000ffffffffffff'::int8))
		   # (CASE WHEN i % 4 > 0 THEN 1::int8 << (i % 48) ELSE 0 END)
		   # (CASE WHEN i % 4 > 1 THEN 1::int8 << ((i * 7) % 48) ELSE 0 END))::simhash64
FROM generate_series(1, 2000) i;
INSERT INTO cblock SELECT 3000 + i, cfp(7) FROM generate_series(1, 30) i;
INSERT INTO cblock SELECT 4000 + i, NULL FROM generate_series(1, 20) i;
CREATE TABLE cdistinct (id int8, fp simhash64);
INSERT INTO cdistinct
SELECT (2 * m + p) * 7919 % 10007, ((((m * 2 * 40503 + p) & 65535)::int8 << 48) | (((m * 2 * 52429 + p) & 65535)::int8 << 32) |
				   (((m * 2 * 30011 + p) & 65535)::int8 << 16) | ((m * 2 * 12347 + p) & 65535)::int8)::simhash64
FROM generate_series(0, 999) m, generate_series(0, 1) p;
SET simhash.enable_join = off;
INSERT INTO cpairs
SELECT 'cblock', a.id, b.id, hamming(a.fp, b.fp)
FROM cblock a, cblock b WHERE a.id <> b.id AND hamming(a.fp, b.fp) <= 10
UNION ALL
SELECT 'cdistinct', a.id, b.id, hamming(a.fp, b.fp)
FROM cdistinct a, cdistinct b WHERE a.id <> b.id AND hamming(a.fp, b.fp) <= 10;
RESET simhash.enable_join;
SELECT k, (compare_clusters('cblock', k)).* FROM unnest(ARRAY[0, 3, 4, 8]) k;
SELECT k, (compare_clusters('cdistinct', k)).* FROM unnest(ARRAY[0, 3, 4, 8]) k;

-- the order: by cluster, then id, whatever the order of the query
SELECT bool_and(ord = rn) AS ordered, count(*)
FROM (SELECT ord, row_number() OVER (ORDER BY cluster, id) AS rn
	  FROM simhash_clusters('SELECT id, fp FROM cfps_shuffled', 3)
		   WITH ORDINALITY AS c(id, cluster, size, ord)) x;
-- the input order does not matter
SELECT count(*) AS differences FROM (
	(SELECT * FROM simhash_clusters('SELECT id, fp FROM cfps ORDER BY id DESC', 4)
	 EXCEPT SELECT * FROM simhash_clusters('SELECT id, fp FROM cfps_shuffled', 4))
	UNION ALL
	(SELECT * FROM simhash_clusters('SELECT id, fp FROM cfps_shuffled', 4)
	 EXCEPT SELECT * FROM simhash_clusters('SELECT id, fp FROM cfps ORDER BY id DESC', 4))) x;
-- any integer id: smallint, integer, a domain over integer
CREATE DOMAIN cl_id AS int4 CHECK (VALUE > 0);
SELECT (SELECT array_agg(row(id, cluster, size)) FROM simhash_clusters(
			'SELECT id::int2, fp FROM cdocs WHERE id < 3000', 4)) =
	   (SELECT array_agg(row(id, cluster, size)) FROM simhash_clusters(
			'SELECT id, fp FROM cdocs WHERE id < 3000', 4)) AS int2_ok,
	   (SELECT array_agg(row(id, cluster, size)) FROM simhash_clusters(
			'SELECT id::cl_id, fp FROM cdocs', 4)) =
	   (SELECT array_agg(row(id, cluster, size)) FROM simhash_clusters(
			'SELECT id, fp FROM cdocs', 4)) AS domain_ok;
-- called in the select list, too
SELECT count(*) FROM (SELECT simhash_clusters('SELECT id, fp FROM csmall', 3)) x;

-- the extreme radii: from 64 all rows are one cluster represented by the
-- smallest id, at 0 only equal fingerprints are together
SELECT k, count(*) AS rows, count(DISTINCT cluster) AS clusters,
	   bool_and(cluster = (SELECT min(id) FROM cfps WHERE fp IS NOT NULL) AND
			 size = (SELECT count(fp) FROM cfps)) AS all_together
FROM unnest(ARRAY[0, 63, 64]) k,
	 simhash_clusters('SELECT id, fp FROM cfps_shuffled', k)
GROUP BY k ORDER BY k;
-- k outside 0 .. 64, a NULL k or query: errors, not an empty or a trivial
-- result
SELECT k, error_of(format('SELECT * FROM simhash_clusters(%L, %s)', 'SELECT id, fp FROM cfps', k)) AS result
FROM unnest(ARRAY['-2147483648', '-1', '65', '2147483647', 'NULL']) k;
SELECT error_of($$SELECT * FROM simhash_clusters(NULL, 3)$$) AS null_query;
-- rows with a NULL fingerprint are left out, even with a duplicate id
SELECT count(*) AS null_rows_returned
FROM simhash_clusters('SELECT id, fp FROM cdocs', 3) c JOIN cdocs d USING (id) WHERE d.fp IS NULL;
SELECT count(*) FROM simhash_clusters($$SELECT id, fp FROM csmall UNION ALL SELECT id, NULL FROM csmall$$, 3);
-- empty input, and a single row
SELECT count(*) FROM simhash_clusters('SELECT id, fp FROM cfps WHERE false', 3);
SELECT * FROM simhash_clusters($$SELECT 42, '0123456789abcdef'::simhash64$$, 3);
-- identical fingerprints: one cluster however many
SELECT count(*), min(cluster), max(size)
FROM simhash_clusters($$SELECT i, '0123456789abcdef'::simhash64 FROM generate_series(1, 5000) i$$, 0);

-- bad queries: each a coded error
SELECT error_of($$SELECT * FROM simhash_clusters('SELECT id, fp FROM csmall UNION ALL SELECT id, fp FROM csmall', 3)$$) AS duplicate_ids;
SELECT error_of($$SELECT * FROM simhash_clusters('SELECT NULL::int8, fp FROM csmall', 3)$$) AS null_id;
SELECT error_of($$SELECT * FROM simhash_clusters('SELECT id::text, fp FROM csmall', 3)$$) AS text_id;
SELECT error_of($$SELECT * FROM simhash_clusters('SELECT id::numeric, fp FROM csmall', 3)$$) AS numeric_id;
SELECT error_of($$SELECT * FROM simhash_clusters('SELECT id, fp::int8 FROM csmall', 3)$$) AS bigint_fp;
SELECT error_of($$SELECT * FROM simhash_clusters('SELECT id FROM csmall', 3)$$) AS one_column;
SELECT error_of($$SELECT * FROM simhash_clusters('SELECT id, fp, fp FROM csmall', 3)$$) AS three_columns;
SELECT error_of($$SELECT * FROM simhash_clusters('INSERT INTO csmall VALUES (1, NULL) RETURNING id, fp', 3)$$) AS insert;
SELECT error_of($$SELECT * FROM simhash_clusters('WITH n AS (DELETE FROM csmall RETURNING id, fp) SELECT * FROM n', 3)$$) AS modifying_cte;
SELECT error_of($$SELECT * FROM simhash_clusters('SELECT id, fp FROM csmall FOR UPDATE', 3)$$) AS for_update;
SELECT error_of($$SELECT * FROM simhash_clusters('TRUNCATE csmall', 3)$$) AS utility;
SELECT sqlstate_of($$SELECT * FROM simhash_clusters('SELECT id, fp FROM', 3)$$) AS syntax;
SELECT sqlstate_of($$SELECT * FROM simhash_clusters('SELECT id, fp FROM no_such_table', 3)$$) AS no_table;
SELECT sqlstate_of($$SELECT * FROM simhash_clusters('SELECT id, fp FROM csmall WHERE id = $1', 3)$$) AS parameter;
SELECT sqlstate_of($$SELECT * FROM simhash_clusters('SELECT 1::int8, NULL::simhash64; SELECT 2', 3)$$) AS two_statements;
SELECT count(*) AS csmall_untouched FROM csmall;

-- a role runs the query with its own rights: nothing without SELECT, and
-- only the rows row-level security shows it
CREATE ROLE simhash_cl_reader;
SET ROLE simhash_cl_reader;
SELECT sqlstate_of($$SELECT * FROM simhash_clusters('SELECT id, fp FROM cfps', 3)$$) AS no_grant;
RESET ROLE;
CREATE TABLE cvisible AS SELECT * FROM simhash_clusters('SELECT id, fp FROM cfps WHERE id % 3 = 0', 4);
GRANT SELECT ON cfps, cvisible TO simhash_cl_reader;
ALTER TABLE cfps ENABLE ROW LEVEL SECURITY;
CREATE POLICY thirds ON cfps USING (id % 3 = 0);
SET ROLE simhash_cl_reader;
SELECT count(*) AS rows, count(*) FILTER (WHERE id % 3 <> 0) AS hidden_rows,
	   (SELECT count(*) FROM ((TABLE cvisible EXCEPT SELECT * FROM simhash_clusters('SELECT id, fp FROM cfps', 4))
							  UNION ALL
							  (SELECT * FROM simhash_clusters('SELECT id, fp FROM cfps', 4) EXCEPT TABLE cvisible)) x) AS differences
FROM simhash_clusters('SELECT id, fp FROM cfps', 4);
RESET ROLE;
ALTER TABLE cfps DISABLE ROW LEVEL SECURITY;
DROP POLICY thirds ON cfps;
REVOKE SELECT ON cfps, cvisible FROM simhash_cl_reader;
DROP ROLE simhash_cl_reader;

-- cancel: 1,000,000 rows that share their first block and nothing else
-- make one bucket of half a trillion comparisons (many minutes); a
-- statement_timeout inside a savepoint stops it at once, and the
-- transaction goes on.  (Without interrupt checks in the loops it would go
-- on until its first progress NOTICE, after 10 s, which would then show
-- here.)
SET maintenance_work_mem = '256MB';
BEGIN;
SAVEPOINT before_clusters;
SET LOCAL statement_timeout = '3s';
SELECT clock_timestamp() AS cancel_start \gset
SELECT count(*) FROM simhash_clusters(
	$$SELECT i, ((4660::int8 << 48) | (hashint8(i)::int8 & 281474976710655))::simhash64 FROM generate_series(1, 1000000) i$$, 3);
ROLLBACK TO SAVEPOINT before_clusters;
SELECT clock_timestamp() - :'cancel_start' < interval '30 seconds' AS cancelled_in_time;
SELECT count(*) FROM simhash_clusters('SELECT id, fp FROM csmall', 3);
COMMIT;

-- progress: a NOTICE every 10 seconds of a run, the first after 10 seconds.
-- This query sleeps 10.5 s before its first row, so that the 65,536th row
-- read (rows are counted by 65,536) is reported; the rest takes far less
-- than 10 seconds and reports nothing.
SELECT count(*), max(size) FROM simhash_clusters(
	'SELECT i, cfp(i % 1000) FROM (SELECT pg_sleep(10.5) OFFSET 0) s, generate_series(1, 70000) i', 3);

-- memory: 36 bytes per row and 20 per row of the largest bucket must fit
-- in maintenance_work_mem.  Too many rows are refused while they are read
-- (a query of a billion rows fails at once: the timeout would stop a
-- function that read them all first) ...
SET maintenance_work_mem = '1MB';
SET statement_timeout = '60s';
SELECT error_of($$SELECT count(*) FROM simhash_clusters(
	'SELECT i, i::simhash64 FROM (SELECT generate_series(1, 1000000000::int8) AS i) s', 3)$$) AS billion_rows;
-- ... and a bucket too large for its groups after reading: 18,000 equal
-- fingerprints are refused where 18,000 different ones fit
SELECT error_of($$SELECT count(*) FROM simhash_clusters(
	'SELECT i, 42::int8::simhash64 FROM generate_series(1, 18000) i', 3)$$) AS one_bucket;
SELECT error_of($$SELECT count(*) FROM simhash_clusters(
	'SELECT i, cfp(i) FROM generate_series(1, 18000) i', 3)$$) AS spread;
RESET statement_timeout;
RESET maintenance_work_mem;

-- the function's properties
SELECT provolatile, proparallel, proisstrict, proretset,
	   obj_description(oid, 'pg_proc') IS NOT NULL AS commented
FROM pg_proc WHERE proname = 'simhash_clusters';
