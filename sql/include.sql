--
-- INCLUDE (column): every entry of the index carries the included value,
-- and the nearest sort then has the index return each distance in that
-- column's order (src/README, "Included columns")
--
CREATE FUNCTION fp_of(i int8) RETURNS simhash64 LANGUAGE sql IMMUTABLE AS
$$ SELECT ((hashint8(i)::int8 << 32) | (hashint8(-i)::int8 & 4294967295))::simhash64 $$;
-- 0 to 4 bits of a pattern number (25 patterns)
CREATE FUNCTION ki_mask(j int) RETURNS int8 LANGUAGE sql IMMUTABLE AS
$$ SELECT (CASE WHEN j % 5 > 0 THEN 1::int8 << (j % 64) ELSE 0 END)
		| (CASE WHEN j % 5 > 1 THEN 1::int8 << ((j * 7 + 1) % 64) ELSE 0 END)
		| (CASE WHEN j % 5 > 2 THEN 1::int8 << ((j * 13 + 2) % 64) ELSE 0 END)
		| (CASE WHEN j % 5 > 3 THEN 1::int8 << ((j * 29 + 3) % 64) ELSE 0 END) $$;

-- what cannot be included: more than one column, or values that are not
-- fixed-length and passed by value
CREATE TABLE ki_bad (fp simhash64, a int, b int, t text, n numeric, u uuid);
CREATE INDEX ON ki_bad USING simhash (fp) INCLUDE (a, b);
CREATE INDEX ON ki_bad USING simhash (fp) INCLUDE (t);
CREATE INDEX ON ki_bad USING simhash (fp) INCLUDE (n);
CREATE INDEX ON ki_bad USING simhash (fp) INCLUDE (u);
CREATE INDEX ON ki_bad USING simhash (fp) INCLUDE ((a + 1));
-- an ALTER TYPE that makes the column unfit rebuilds the index, and fails
CREATE INDEX ki_bad_a ON ki_bad USING simhash (fp) INCLUDE (a);
ALTER TABLE ki_bad ALTER COLUMN a TYPE text;
ALTER TABLE ki_bad ALTER COLUMN a TYPE int8;
\d ki_bad
DROP TABLE ki_bad;

-- Ties everywhere, as in knn_tiebreak: a third of the rows are 25
-- fingerprints within 4 bits of a centre, the others random; some NULL
-- fingerprints and some NULL ids.  Rows are stored shuffled, so that the
-- order of the TIDs is not that of id.
CREATE TABLE ki (id int, g int, fp simhash64);
INSERT INTO ki
SELECT CASE WHEN i % 17 = 0 THEN NULL ELSE i END,
	   (i * 7) % 5,
	   CASE WHEN i % 31 = 0 THEN NULL
			WHEN i % 3 = 0 THEN (fp_of(0)::int8 # ki_mask(i % 25))::simhash64
			ELSE fp_of(i) END
FROM generate_series(1, 6000) i ORDER BY hashint4(i);
CREATE INDEX ki_fp_id ON ki USING simhash (fp) INCLUDE (id);
ANALYZE ki;
SELECT simhash_index_check('ki_fp_id', true);
CREATE TABLE ki_q (qn int, q simhash64);
INSERT INTO ki_q VALUES (1, fp_of(0)), (2, (fp_of(0)::int8 # 4096)::simhash64),
	(3, fp_of(100)), (4, (fp_of(0)::int8 # -1)::simhash64);

-- the plans: with the included column as the one tie-break, every key is
-- presorted; with another key, or more keys, the node sorts groups
EXPLAIN (COSTS OFF)
SELECT id FROM ki ORDER BY fp <-> fp_of(0), id LIMIT 10;
EXPLAIN (COSTS OFF)
SELECT id FROM ki ORDER BY fp <-> fp_of(0), id DESC NULLS LAST LIMIT 10;
EXPLAIN (COSTS OFF)
SELECT id FROM ki ORDER BY fp <-> fp_of(0), g LIMIT 10;
EXPLAIN (COSTS OFF)
SELECT id FROM ki ORDER BY fp <-> fp_of(0), id, g LIMIT 10;
EXPLAIN (COSTS OFF)
SELECT id FROM ki ORDER BY fp <-> fp_of(0), -id LIMIT 10;
EXPLAIN (COSTS OFF)
SELECT id FROM ki WHERE fp <-> fp_of(0) <= 3 ORDER BY fp <-> fp_of(0), id LIMIT 10;

-- Compare a query with the simhash index and a nearest sort (its plan must
-- be LIKE plan_like) against a sequential scan and a sort: 'same', or what
-- differs.  "query" selects exactly its sort keys.
CREATE FUNCTION ki_compare(query text,
						   plan_like text DEFAULT '%Presorted Key: %, id%Index Scan using ki_fp_id%')
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	plan text := '';
	line text;
	got text[];
	want text[];
BEGIN
	PERFORM set_config('enable_seqscan', 'off', true);
	PERFORM set_config('enable_sort', 'off', true);
	PERFORM set_config('enable_bitmapscan', 'off', true);
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
		plan := plan || line || E'\n';
	END LOOP;
	IF plan NOT LIKE plan_like THEN
		RETURN 'not the expected plan: ' || plan;
	END IF;
	EXECUTE 'SELECT array_agg(s::text) FROM (' || query || ') s' INTO got;
	PERFORM set_config('enable_seqscan', 'on', true);
	PERFORM set_config('enable_sort', 'on', true);
	PERFORM set_config('enable_indexscan', 'off', true);
	PERFORM set_config('enable_incremental_sort', 'off', true);
	EXECUTE 'SELECT array_agg(s::text) FROM (' || query || ') s' INTO want;
	PERFORM set_config('enable_indexscan', 'on', true);
	PERFORM set_config('enable_incremental_sort', 'on', true);
	IF got IS NOT DISTINCT FROM want THEN
		RETURN 'same';
	END IF;
	RETURN format('%s rows, %s expected; first difference at row %s: %s, expected %s',
				  cardinality(got), cardinality(want),
				  (SELECT min(i) FROM generate_subscripts(want, 1) i
				   WHERE got[i] IS DISTINCT FROM want[i]),
				  (SELECT got[min(i)] FROM generate_subscripts(want, 1) i
				   WHERE got[i] IS DISTINCT FROM want[i]),
				  (SELECT want[min(i)] FROM generate_subscripts(want, 1) i
				   WHERE got[i] IS DISTINCT FROM want[i]));
END $$;

-- the directions of the included column
CREATE TABLE ki_forms (fn int, ord text);
INSERT INTO ki_forms VALUES
	(1, 'fp <-> $Q, id'),
	(2, 'fp <-> $Q, id DESC'),
	(3, 'fp <-> $Q, id NULLS FIRST'),
	(4, 'fp <-> $Q, id DESC NULLS LAST');
-- LIMITs at the edges of the groups of equal distance, small ones, up to
-- and across the NULL fingerprints, and none
CREATE FUNCTION ki_limits() RETURNS TABLE (qn int, n int8) LANGUAGE sql AS $$
SELECT DISTINCT qn, n
FROM (SELECT qn, d, upto, size, dense_rank() OVER (PARTITION BY qn ORDER BY d) AS nth,
			 dense_rank() OVER (PARTITION BY qn ORDER BY d DESC NULLS LAST) AS nth_last
	  FROM (SELECT qn, d, count(*) OVER (PARTITION BY qn ORDER BY d NULLS LAST) AS upto,
				   count(*) OVER (PARTITION BY qn, d) AS size
			FROM (SELECT qn, fp <-> q AS d FROM ki, ki_q) s) g) g,
	 LATERAL (VALUES (upto), (upto + 1), (upto - size / 2)) v(n)
WHERE n > 0 AND (nth <= 6 OR nth_last <= 2 OR d IS NULL)
UNION SELECT qn, n FROM ki_q, (VALUES (1), (2), (3), (10)) v(n)
UNION SELECT qn, NULL FROM ki_q $$;
CREATE FUNCTION ki_check_all() RETURNS TABLE (fn int, qn int, n int8, r text) LANGUAGE sql AS $$
SELECT f.fn, q.qn, l.n, r
FROM ki_forms f, ki_q q JOIN ki_limits() l USING (qn),
	 LATERAL ki_compare(format('SELECT fp <-> %1$s, id FROM ki ORDER BY %2$s LIMIT %3$s',
							   quote_literal(q.q) || '::simhash64',
							   replace(f.ord, '$Q', quote_literal(q.q) || '::simhash64'),
							   coalesce(l.n::text, 'ALL'))) r
WHERE r <> 'same' $$;
SELECT count(*) AS comparisons FROM ki_forms, ki_limits();
SELECT * FROM ki_check_all();

-- more keys after the included column, or another key first: the node
-- sorts each group, through the same index
SELECT f.ord, q.qn, l.n, r
FROM (VALUES ('fp <-> $Q, id, g'), ('fp <-> $Q, g DESC, id'), ('fp <-> $Q, id DESC, g')) f(ord),
	 ki_q q JOIN ki_limits() l USING (qn),
	 LATERAL ki_compare(format('SELECT fp <-> %1$s, id, g FROM ki ORDER BY %2$s LIMIT %3$s',
							   quote_literal(q.q) || '::simhash64',
							   replace(f.ord, '$Q', quote_literal(q.q) || '::simhash64'),
							   coalesce(l.n::text, 'ALL')),
						'%Sort Key: %Presorted Key: ((fp <-> %))' || chr(10) || '%Index Scan using ki_fp_id%') r
WHERE q.qn IN (1, 3) AND r <> 'same';

-- the comparisons can fail: the index's order without a tie-break is
-- neither id's nor that of the TIDs
SELECT (SELECT array_agg(id) FROM (SELECT id FROM ki ORDER BY fp <-> fp_of(0) LIMIT 200) s) =
	   (SELECT array_agg(id) FROM (SELECT id FROM ki ORDER BY fp <-> fp_of(0), id LIMIT 200) s)
	   AS plain_order_is_id_order,
	   (SELECT array_agg(id) FROM (SELECT id FROM ki ORDER BY fp <-> fp_of(0), ctid LIMIT 200) s) =
	   (SELECT array_agg(id) FROM (SELECT id FROM ki ORDER BY fp <-> fp_of(0), id LIMIT 200) s)
	   AS tid_order_is_id_order;

-- the scan reads only the rows returned: LIMIT 1005 ends inside a group of
-- hundreds of rows at equal distance, and the index scan returns 1005 rows
SELECT count(*) FILTER (WHERE fp <-> fp_of(0) < 4) AS nearer,
	   count(*) FILTER (WHERE fp <-> fp_of(0) = 4) AS at_4
FROM ki;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
SELECT id FROM ki ORDER BY fp <-> fp_of(0), id LIMIT 1005;
SET enable_seqscan = off;
-- without the included column it returns that whole group
CREATE INDEX ki_fp ON ki USING simhash (fp);
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
SELECT id FROM ki ORDER BY fp <-> fp_of(0), g LIMIT 1005;
-- with both indexes, the one that orders ties is chosen
EXPLAIN (COSTS OFF)
SELECT id FROM ki ORDER BY fp <-> fp_of(0), id LIMIT 10;
DROP INDEX ki_fp;
RESET enable_seqscan;

-- dead rows, in this transaction and after it: deleted, and updated (a
-- new id is a new entry; an update of another column is HOT, and keeps
-- the entry, whose value is still the row's)
BEGIN;
DELETE FROM ki WHERE id % 5 = 1;
SELECT * FROM ki_check_all() WHERE n IS NULL OR n < 1000;
ROLLBACK;
DELETE FROM ki WHERE id % 5 = 1;
UPDATE ki SET id = -id WHERE id % 5 = 2;
UPDATE ki SET g = g + 1 WHERE id % 5 = 3;
SELECT n_tup_hot_upd > 0 AS hot_updates FROM pg_stat_xact_user_tables WHERE relname = 'ki';
SELECT * FROM ki_check_all() WHERE n IS NULL OR n < 1000;
SELECT simhash_index_check('ki_fp_id', true);
VACUUM ki;
SELECT * FROM ki_check_all() WHERE n IS NULL OR n < 1000;
SELECT simhash_index_check('ki_fp_id', true);

-- inserts after the build: appended entries, then leaf rewrites and splits
INSERT INTO ki SELECT 6000 + i, i % 5, (fp_of(0)::int8 # ki_mask(i % 25))::simhash64
FROM generate_series(1, 5) i;
SELECT * FROM ki_check_all() WHERE n IS NULL OR n < 1000;
INSERT INTO ki SELECT CASE WHEN i % 19 = 0 THEN NULL ELSE 7000 - i END, i % 5,
	   CASE WHEN i % 2 = 0 THEN (fp_of(0)::int8 # ki_mask(i % 25))::simhash64 ELSE fp_of(i + 9000) END
FROM generate_series(1, 3000) i;
SELECT * FROM ki_check_all() WHERE n IS NULL OR n < 1000;
SELECT simhash_index_check('ki_fp_id', true);
SELECT count(*) FROM simhash_index_stats('ki_fp_id');

-- a count(*) through the index (an index-only scan) forms tuples of both columns
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ki;
SELECT count(*) = (SELECT count(*) FROM ki WHERE id IS NOT NULL OR id IS NULL) AS all_rows FROM ki;
RESET enable_seqscan;

-- generic plans; a NULL query puts every row in the NULL group, which the
-- node sorts itself
SET plan_cache_mode = force_generic_plan;
PREPARE ki_near(simhash64, int) AS
SELECT array_agg(s::text) FROM (SELECT fp <-> $1, id FROM ki ORDER BY fp <-> $1, id DESC LIMIT $2) s;
EXPLAIN (COSTS OFF) EXECUTE ki_near(fp_of(0), 10);
CREATE FUNCTION ki_generic(q simhash64, n int) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE got text[];
BEGIN
	EXECUTE format('EXECUTE ki_near(%L, %s)', q, coalesce(n::text, 'NULL')) INTO got;
	RETURN got IS NOT DISTINCT FROM (
		SELECT array_agg(s::text) FROM (SELECT hamming(fp, q) + 0, id FROM ki
										ORDER BY 1, id DESC LIMIT n) s);
END $$;
SELECT q.qn, n FROM ki_q q, (VALUES (1), (10), (2000), (NULL)) v(n) WHERE NOT ki_generic(q.q, n);
SELECT ki_generic(NULL, 5) AS null_query_5, ki_generic(NULL, NULL) AS null_query_all;
RESET plan_cache_mode;

-- rescans: a nearest-neighbour scan per outer row
EXPLAIN (COSTS OFF)
SELECT q.qn, n.id FROM ki_q q, LATERAL (SELECT id FROM ki ORDER BY fp <-> q.q, id LIMIT 3) n;
SELECT q.qn, array_agg(n.id ORDER BY n.ord) =
	   (SELECT array_agg(id) FROM (SELECT id FROM ki ORDER BY hamming(fp, q.q) + 0, id LIMIT 30) s) AS same
FROM ki_q q, LATERAL (SELECT id, row_number() OVER () AS ord
					  FROM (SELECT id FROM ki ORDER BY fp <-> q.q, id LIMIT 30) s) n
GROUP BY q.qn, q.q ORDER BY q.qn;

-- FETCH FIRST ... WITH TIES reads past the LIMIT while rows tie; a
-- scrollable cursor goes backward through a Material node
SELECT q.qn, l.n, r
FROM ki_q q JOIN ki_limits() l USING (qn),
	 LATERAL ki_compare(format('SELECT fp <-> %1$s, id FROM ki ORDER BY fp <-> %1$s, id FETCH FIRST %2$s ROWS WITH TIES',
							   quote_literal(q.q) || '::simhash64', l.n)) r
WHERE l.n IS NOT NULL AND r <> 'same';
BEGIN;
DECLARE ki_cur SCROLL CURSOR FOR SELECT id FROM ki ORDER BY fp <-> fp_of(0), id DESC;
FETCH 3 FROM ki_cur;
FETCH LAST FROM ki_cur;
FETCH BACKWARD 2 FROM ki_cur;
COMMIT;
SELECT (SELECT array_agg(id) FROM (SELECT id FROM ki ORDER BY hamming(fp, fp_of(0)) + 0, id DESC LIMIT 3) s) AS first_three,
	   (SELECT array_agg(id) FROM (SELECT id FROM ki ORDER BY hamming(fp, fp_of(0)) + 0 DESC NULLS FIRST, id LIMIT 3) s) AS last_three;

-- partitions: a Merge Append of nearest sorts, each over an index that
-- orders ties
CREATE TABLE ki_parted (id int, g int, fp simhash64) PARTITION BY RANGE (g);
CREATE TABLE ki_parted_1 PARTITION OF ki_parted FOR VALUES FROM (0) TO (2);
CREATE TABLE ki_parted_2 PARTITION OF ki_parted FOR VALUES FROM (2) TO (10);
CREATE INDEX ki_parted_fp ON ki_parted USING simhash (fp) INCLUDE (id);
INSERT INTO ki_parted SELECT * FROM ki;
ANALYZE ki_parted;
EXPLAIN (COSTS OFF)
SELECT id FROM ki_parted ORDER BY fp <-> fp_of(0), id LIMIT 10;
SELECT q.qn, l.n, r
FROM ki_q q JOIN ki_limits() l USING (qn),
	 LATERAL ki_compare(format('SELECT fp <-> %1$s, id FROM ki_parted ORDER BY fp <-> %1$s, id LIMIT %2$s',
							   quote_literal(q.q) || '::simhash64', l.n),
						'%Merge Append%Presorted Key: %.id%Index Scan using ki_parted_2_fp_id_idx%') r
WHERE l.n IS NOT NULL AND r <> 'same';

-- other types: a float8 with NaN, infinities, -0 and NULL, descending; a
-- timestamp; an unlogged table (its init fork's leaves carry the flag too)
CREATE UNLOGGED TABLE ki_types (f float8, ts timestamp, fp simhash64);
CREATE INDEX ki_types_f ON ki_types USING simhash (fp) INCLUDE (f);
CREATE INDEX ki_types_ts ON ki_types USING simhash (fp) INCLUDE (ts);
INSERT INTO ki_types
SELECT CASE i % 9 WHEN 0 THEN 'NaN' WHEN 1 THEN 'Infinity' WHEN 2 THEN '-Infinity'
				  WHEN 3 THEN '-0' WHEN 4 THEN NULL ELSE (i % 23) / 7.0 END,
	   CASE WHEN i % 11 = 0 THEN NULL ELSE '2026-01-01'::timestamp + (i % 37) * interval '1 hour' END,
	   (fp_of(0)::int8 # ki_mask(i % 25))::simhash64
FROM generate_series(1, 2000) i;
SELECT ki_compare('SELECT fp <-> fp_of(1), f FROM ki_types ORDER BY fp <-> fp_of(1), f DESC LIMIT 500',
				  '%Presorted Key: %, f DESC%Index Scan using ki_types_f%') AS float8_desc,
	   ki_compare('SELECT fp <-> fp_of(1), f FROM ki_types ORDER BY fp <-> fp_of(1), f NULLS FIRST LIMIT 700',
				  '%Presorted Key: %, f NULLS FIRST%Index Scan using ki_types_f%') AS float8_nulls_first,
	   ki_compare('SELECT fp <-> fp_of(1), ts FROM ki_types ORDER BY fp <-> fp_of(1), ts LIMIT 333',
				  '%Presorted Key: %, ts%Index Scan using ki_types_ts%') AS timestamp_asc;
SELECT simhash_index_check('ki_types_f', true), simhash_index_check('ki_types_ts', true);
-- a column of a domain type is sorted through a cast, which the planner
-- looks through
CREATE DOMAIN ki_d8 AS int8 CHECK (VALUE > -1000000);
ALTER TABLE ki_types ADD COLUMN dm ki_d8;
UPDATE ki_types SET dm = (hashint4(floor(extract(epoch FROM ts))::int) % 5000);
CREATE INDEX ki_types_dm ON ki_types USING simhash (fp) INCLUDE (dm);
DROP INDEX ki_types_f, ki_types_ts;
EXPLAIN (COSTS OFF)
SELECT dm FROM ki_types ORDER BY fp <-> fp_of(1), dm DESC LIMIT 10;
SELECT ki_compare('SELECT fp <-> fp_of(1), dm FROM ki_types ORDER BY fp <-> fp_of(1), dm DESC LIMIT 600',
				  '%Presorted Key: %, ((dm)::bigint) DESC%Index Scan using ki_types_dm%') AS domain_desc;

DROP TABLE ki, ki_q, ki_forms, ki_parted, ki_types;
DROP DOMAIN ki_d8;
DROP FUNCTION fp_of(int8), ki_mask(int), ki_compare(text, text), ki_limits(),
	ki_check_all(), ki_generic(simhash64, int);
