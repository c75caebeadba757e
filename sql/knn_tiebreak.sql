--
-- "ORDER BY fp <-> q, other keys": the simhash index returns rows by
-- distance, a SimhashNearestSort node orders each group of equal distance
-- by the other keys (nearestsort.c), an Incremental Sort when that is off
--
CREATE FUNCTION fp_of(i int8) RETURNS simhash64 LANGUAGE sql IMMUTABLE AS
$$ SELECT ((hashint8(i)::int8 << 32) | (hashint8(-i)::int8 & 4294967295))::simhash64 $$;
-- 0 to 4 bits of a pattern number (25 patterns)
CREATE FUNCTION kt_mask(j int) RETURNS int8 LANGUAGE sql IMMUTABLE AS
$$ SELECT (CASE WHEN j % 5 > 0 THEN 1::int8 << (j % 64) ELSE 0 END)
		| (CASE WHEN j % 5 > 1 THEN 1::int8 << ((j * 7 + 1) % 64) ELSE 0 END)
		| (CASE WHEN j % 5 > 2 THEN 1::int8 << ((j * 13 + 2) % 64) ELSE 0 END)
		| (CASE WHEN j % 5 > 3 THEN 1::int8 << ((j * 29 + 3) % 64) ELSE 0 END) $$;

-- Ties everywhere: a third of the rows are 25 fingerprints within 4 bits of
-- a centre (about 80 rows each), the others random (whose distances, 20 to
-- 44 from any query, tie by the hundred); some NULL fingerprints; NULLs in
-- the tie-break columns too.  The rows are stored in a shuffled order, so
-- that the index's order within a group is not that of id.
CREATE TABLE kt (id int, g int, t text COLLATE "C", fp simhash64);
INSERT INTO kt
SELECT i,
	   CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 7) % 5 END,
	   CASE WHEN i % 13 = 0 THEN NULL ELSE chr(97 + (i * 3) % 4) END,
	   CASE WHEN i % 31 = 0 THEN NULL
			WHEN i % 3 = 0 THEN (fp_of(0)::int8 # kt_mask(i % 25))::simhash64
			ELSE fp_of(i) END
FROM generate_series(1, 6000) i ORDER BY hashint4(i);
CREATE INDEX kt_fp ON kt USING simhash (fp);
ANALYZE kt;
-- the queries: the centre, one bit off it, a random row's, the centre's complement
CREATE TABLE kt_q (qn int, q simhash64);
INSERT INTO kt_q VALUES (1, fp_of(0)), (2, (fp_of(0)::int8 # 4096)::simhash64),
	(3, fp_of(100)), (4, (fp_of(0)::int8 # -1)::simhash64);
-- how the rows tie: groups of equal distance to the centre
SELECT count(DISTINCT d) AS distances, max(n) AS largest_group, min(n) AS smallest_group,
	   sum(n) FILTER (WHERE d IS NULL) AS null_fingerprints
FROM (SELECT fp <-> fp_of(0) AS d, count(*) AS n FROM kt GROUP BY 1) s;

-- the plan: the nearest-neighbour scan and a nearest sort on top
EXPLAIN (COSTS OFF)
SELECT id FROM kt ORDER BY fp <-> fp_of(0), id LIMIT 10;
EXPLAIN (COSTS OFF)
SELECT id FROM kt ORDER BY fp <-> fp_of(0), g DESC NULLS LAST, t, id DESC LIMIT 10;
EXPLAIN (COSTS OFF)
SELECT id FROM kt WHERE fp <-> fp_of(0) <= 3 ORDER BY fp <-> fp_of(0), id LIMIT 10;
EXPLAIN (COSTS OFF)
SELECT id FROM kt WHERE fp <@ simhash_ball(fp_of(0), 3) ORDER BY fp <-> fp_of(0), id LIMIT 10;
EXPLAIN (COSTS OFF)
SELECT id FROM kt WHERE fp_of(0) <-> fp <= 3 ORDER BY fp_of(0) <-> fp, g, id LIMIT 10;
-- the index cannot give the distance descending or with NULLs first
EXPLAIN (COSTS OFF)
SELECT id FROM kt ORDER BY fp <-> fp_of(0) DESC, id LIMIT 10;
EXPLAIN (COSTS OFF)
SELECT id FROM kt ORDER BY fp <-> fp_of(0) NULLS FIRST, id LIMIT 10;

-- what a sort gives (the reference below): NULL distances last, ties by id
SELECT fp <-> fp_of(0) AS d, id FROM kt ORDER BY fp <-> fp_of(0), id LIMIT 10;
SELECT fp <-> fp_of(0) AS d, id FROM kt ORDER BY fp <-> fp_of(0), id OFFSET 5990;
SELECT fp <-> fp_of(0) AS d, g, t, id FROM kt
ORDER BY fp <-> fp_of(0), g DESC, t NULLS FIRST, id DESC LIMIT 12;

-- Compare a query under a plan with the simhash index and a nearest sort
-- (forced, whatever LIMIT makes cheapest; the plan must be LIKE
-- plan_like) against a sequential scan and a sort: 'same', or what
-- differs.  "query" selects exactly its sort keys, so that rows tied on
-- every key compare equal whichever comes first.
CREATE FUNCTION kt_compare(query text, plan_like text DEFAULT '%SimhashNearestSort%Index Scan using kt_fp%')
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

-- sort keys after the distance (select lists name exactly the keys)
CREATE TABLE kt_forms (fn int, sel text, ord text);
INSERT INTO kt_forms VALUES
	(1, 'fp <-> $Q, id', 'fp <-> $Q, id'),
	(2, 'fp <-> $Q, id', 'fp <-> $Q, id DESC'),
	(3, 'fp <-> $Q, g, id', 'fp <-> $Q, g, id'),
	(4, 'fp <-> $Q, g, t, id', 'fp <-> $Q, g DESC, t NULLS FIRST, id DESC'),
	(5, 'fp <-> $Q, g, t, id', 'fp <-> $Q, g NULLS FIRST, t DESC NULLS LAST, id'),
	(6, 'fp <-> $Q, g', 'fp <-> $Q, g'),
	(7, 'fp <-> $Q, t', 'fp <-> $Q ASC NULLS LAST, t DESC'),
	(8, 'fp <-> $Q, id % 7, fp', 'fp <-> $Q, id % 7, fp DESC'),
	(9, 'fp <-> $Q, fp <-> fp_of(5), id', 'fp <-> $Q, fp <-> fp_of(5), id'),
	(10, '$Q <-> fp, g', '$Q <-> fp, g');
-- LIMITs at the edges of the groups of equal distance: the last row of a
-- group, the first of the next, one in the middle; small ones; up to and
-- across the NULL fingerprints; none
CREATE TABLE kt_limits AS
SELECT DISTINCT qn, n
FROM (SELECT qn, d, upto, size, dense_rank() OVER (PARTITION BY qn ORDER BY d) AS nth,
			 dense_rank() OVER (PARTITION BY qn ORDER BY d DESC NULLS LAST) AS nth_last
	  FROM (SELECT qn, d, count(*) OVER (PARTITION BY qn ORDER BY d NULLS LAST) AS upto,
				   count(*) OVER (PARTITION BY qn, d) AS size
			FROM (SELECT qn, fp <-> q AS d FROM kt, kt_q) s) g) g,
	 LATERAL (VALUES (upto), (upto + 1), (upto - size / 2)) v(n)
WHERE n > 0 AND n < 6000 AND (nth <= 6 OR nth_last <= 2 OR d IS NULL)
UNION SELECT qn, n FROM kt_q, (VALUES (1), (2), (3), (10), (6000)) v(n)
UNION SELECT qn, NULL FROM kt_q;
SELECT count(*) AS limits FROM kt_limits;

-- every form, query and LIMIT (some with an OFFSET) gives the sort's rows
SELECT f.fn, q.qn, l.n, r
FROM kt_forms f, kt_q q JOIN kt_limits l USING (qn),
	 LATERAL kt_compare(format('SELECT %s FROM kt ORDER BY %s LIMIT %s OFFSET %s',
							   replace(f.sel, '$Q', quote_literal(q.q) || '::simhash64'),
							   replace(f.ord, '$Q', quote_literal(q.q) || '::simhash64'),
							   coalesce(l.n::text, 'ALL'), CASE WHEN l.n % 3 = 0 THEN 7 ELSE 0 END + 0)) r
WHERE r <> 'same';
SELECT count(*) AS comparisons FROM kt_forms, kt_limits;

-- with a radius: "<-> <= k", "<@ simhash_ball" around the same centre (the
-- scan stops at k) and around another one (collected, then by distance);
-- the query is one bit off the centre of the 25 fingerprints
SELECT count(*) FILTER (WHERE fp <-> q <= 2) AS within_2, count(*) FILTER (WHERE fp <-> q <= 5) AS within_5
FROM kt, kt_q WHERE qn = 2;
SELECT k, w, r
FROM kt_q, generate_series(0, 6) k,
	 (VALUES ('fp <-> $Q <= $K'), ('fp <@ simhash_ball($Q, $K)'), ('simhash_within(fp, $Q, $K)'),
			 ('$K >= $Q <-> fp'), ('fp <@ simhash_ball(fp_of(0), $K)')) w(w),
	 (VALUES ('fp <-> $Q, g DESC, id', '5'), ('fp <-> $Q, t, id DESC', 'ALL'),
			 ('fp <-> $Q, id', '80')) o(ord, lim),
	 LATERAL kt_compare(format('SELECT %s FROM kt WHERE %s ORDER BY %s LIMIT %s',
							   replace(replace(o.ord, ' DESC', ''), '$Q', quote_literal(q) || '::simhash64'),
							   replace(replace(w.w, '$K', k::text), '$Q', quote_literal(q) || '::simhash64'),
							   replace(o.ord, '$Q', quote_literal(q) || '::simhash64'), o.lim),
						'%SimhashNearestSort%Index Scan using kt_fp%Index Cond%') r
WHERE qn = 2 AND r <> 'same';

-- the comparisons can fail: the index's own order within a group is not
-- that of any tie-break column
SELECT (SELECT array_agg(id) FROM (SELECT id FROM kt ORDER BY fp <-> fp_of(0) LIMIT 200) s) =
	   (SELECT array_agg(id) FROM (SELECT id FROM kt ORDER BY fp <-> fp_of(0), id LIMIT 200) s)
	   AS index_order_is_id_order,
	   (SELECT array_agg(id) FROM (SELECT id FROM kt ORDER BY fp <-> fp_of(0) LIMIT 200) s) =
	   (SELECT array_agg(id) FROM (SELECT id FROM kt ORDER BY fp <-> fp_of(0), id DESC LIMIT 200) s)
	   AS index_order_is_id_desc_order;

-- two distances: the scan orders by the first, the executor by the second
EXPLAIN (COSTS OFF)
SELECT id FROM kt ORDER BY fp <-> fp_of(0), fp <-> fp_of(5) LIMIT 10;
SELECT r FROM kt_q, (VALUES ('10'), ('300'), ('ALL')) l(n),
	 LATERAL kt_compare(format('SELECT fp <-> %L::simhash64, fp <-> fp_of(5), fp <-> fp_of(6) FROM kt
								ORDER BY fp <-> %L::simhash64, fp <-> fp_of(5), fp <-> fp_of(6) LIMIT %s',
							   q, q, n), '%Index Scan using kt_fp%Order By%') r
WHERE r <> 'same';

-- prepared statements with generic plans; a NULL query orders by the other keys
SET plan_cache_mode = force_generic_plan;
PREPARE kt_near(simhash64) AS
SELECT id FROM kt ORDER BY fp <-> $1, g DESC, id LIMIT 10;
EXPLAIN (COSTS OFF) EXECUTE kt_near(fp_of(0));
EXECUTE kt_near(fp_of(0));
PREPARE kt_rows(simhash64, int, int) AS
SELECT array_agg(s::text) FROM (SELECT fp <-> $1, g, t, id FROM kt
								WHERE fp <-> $1 <= $3
								ORDER BY fp <-> $1, g DESC, t, id LIMIT $2) s;
PREPARE kt_rows_nolimit(simhash64, int) AS
SELECT array_agg(s::text) FROM (SELECT fp <-> $1, t, id FROM kt
								ORDER BY fp <-> $1, t NULLS FIRST, id DESC LIMIT $2) s;
SET enable_seqscan = off; SET enable_sort = off;
EXPLAIN (COSTS OFF) EXECUTE kt_rows(fp_of(0), 10, 5);
EXPLAIN (COSTS OFF) EXECUTE kt_rows_nolimit(fp_of(0), 10);
CREATE FUNCTION kt_generic(q simhash64, n int, k int) RETURNS TABLE (with_radius bool, without bool)
LANGUAGE plpgsql AS $$
DECLARE got text[];
BEGIN
	EXECUTE format('EXECUTE kt_rows(%L, %s, %s)', q, coalesce(n::text, 'NULL'), k) INTO got;
	with_radius := got IS NOT DISTINCT FROM (
		SELECT array_agg(s::text) FROM (SELECT hamming(fp, q) + 0, g, t, id FROM kt
										WHERE hamming(fp, q) + 0 <= k
										ORDER BY 1, g DESC, t, id LIMIT n) s);
	EXECUTE format('EXECUTE kt_rows_nolimit(%L, %s)', q, coalesce(n::text, 'NULL')) INTO got;
	without := got IS NOT DISTINCT FROM (
		SELECT array_agg(s::text) FROM (SELECT hamming(fp, q) + 0, t, id FROM kt
										ORDER BY 1, t NULLS FIRST, id DESC LIMIT n) s);
	RETURN NEXT;
END $$;
SELECT q.qn, l.n, k, g.*
FROM kt_q q JOIN kt_limits l USING (qn), (VALUES (3), (40)) k(k), LATERAL kt_generic(q.q, l.n::int, k) g
WHERE NOT (g.with_radius AND g.without);
SELECT * FROM kt_generic(NULL, 10, 3);
SELECT * FROM kt_generic(NULL, NULL, 3);
EXECUTE kt_rows_nolimit(NULL, 5);
RESET enable_seqscan; RESET enable_sort;
RESET plan_cache_mode;

-- partitions: a Merge Append of nearest-neighbour scans under the sort
CREATE TABLE kt_parted (id int, g int, t text COLLATE "C", fp simhash64) PARTITION BY RANGE (id);
CREATE TABLE kt_parted_1 PARTITION OF kt_parted FOR VALUES FROM (0) TO (2000);
CREATE TABLE kt_parted_2 PARTITION OF kt_parted FOR VALUES FROM (2000) TO (7000);
CREATE INDEX kt_parted_fp ON kt_parted USING simhash (fp);
INSERT INTO kt_parted SELECT * FROM kt;
ANALYZE kt_parted;
EXPLAIN (COSTS OFF)
SELECT id FROM kt_parted ORDER BY fp <-> fp_of(0), g, id LIMIT 10;
SELECT n, (SELECT array_agg(s::text) FROM (SELECT fp <-> fp_of(0), g, id FROM kt_parted
										   ORDER BY fp <-> fp_of(0), g, id LIMIT n) s) =
		  (SELECT array_agg(s::text) FROM (SELECT fp <-> fp_of(0), g, id FROM kt
										   ORDER BY hamming(fp, fp_of(0)) + 0, g, id LIMIT n) s) AS same
FROM (VALUES (1), (10), (100), (1000), (6000)) v(n);

-- A constant LIMIT tells the nearest sort when a group is likely the last
-- one the query needs; the index then settles that group's distance by
-- reading one ring for it alone.  Scans that go on past such a group must
-- still be exact: a Merge Append reads one row more from each partition than
-- it returns, and FETCH FIRST ... WITH TIES reads past the LIMIT while the
-- rows tie.
SELECT q.qn, l.n, r
FROM kt_q q JOIN kt_limits l USING (qn),
	 LATERAL kt_compare(format('SELECT fp <-> %1$s, g, id FROM kt_parted ORDER BY fp <-> %1$s, g, id LIMIT %2$s',
							   quote_literal(q.q) || '::simhash64', l.n),
						'%Merge Append%SimhashNearestSort%Index Scan using kt_parted_2_fp_idx%') r
WHERE l.n IS NOT NULL AND r <> 'same';
SELECT f.fn, q.qn, l.n, r
FROM kt_forms f, kt_q q JOIN kt_limits l USING (qn),
	 LATERAL kt_compare(format('SELECT %s FROM kt ORDER BY %s FETCH FIRST %s ROWS WITH TIES',
							   replace(f.sel, '$Q', quote_literal(q.q) || '::simhash64'),
							   replace(f.ord, '$Q', quote_literal(q.q) || '::simhash64'), l.n)) r
WHERE f.fn IN (3, 6, 7) AND l.n IS NOT NULL AND r <> 'same';

-- LATERAL: a nearest-neighbour scan with a tie-break per outer row
EXPLAIN (COSTS OFF)
SELECT q.qn, n.id FROM kt_q q, LATERAL (SELECT id FROM kt ORDER BY fp <-> q.q, id LIMIT 3) n;
SELECT q.qn, array_agg(n.id) AS nearest,
	   (SELECT array_agg(id) FROM (SELECT id FROM kt ORDER BY hamming(fp, q.q) + 0, id LIMIT 3) s) AS expected
FROM kt_q q, LATERAL (SELECT id FROM kt ORDER BY fp <-> q.q, id LIMIT 3) n
GROUP BY q.qn, q.q ORDER BY q.qn;

-- The nearest sort reads no row beyond the group that completes the LIMIT:
-- it asks the index whether a distance is done.  With LIMIT 1936 the last
-- row is the last of the 1936 within 4 bits of the centre, and the index
-- scan returns exactly those; the next row is 17 bits away.  An Incremental
-- Sort must read that next row too, and the scan must search that far to
-- find it.
SELECT count(*) FILTER (WHERE fp <-> fp_of(0) <= 4) AS within_4,
	   min(fp <-> fp_of(0)) FILTER (WHERE fp <-> fp_of(0) > 4) AS next_distance
FROM kt;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
SELECT id FROM kt ORDER BY fp <-> fp_of(0), id LIMIT 1936;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
SELECT id FROM kt ORDER BY fp <-> fp_of(0), id LIMIT 5;
-- the same through the Result that a pseudo-constant qual puts in between
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
SELECT id FROM kt WHERE (SELECT true) ORDER BY fp <-> fp_of(0), id LIMIT 1936;
SET simhash.enable_nearest_sort = off;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
SELECT id FROM kt ORDER BY fp <-> fp_of(0), id LIMIT 1936;

-- with the nearest sort off, the Incremental Sort gives the same rows
SELECT f.fn, q.qn, l.n, r
FROM kt_forms f, kt_q q JOIN kt_limits l USING (qn),
	 LATERAL kt_compare(format('SELECT %s FROM kt ORDER BY %s LIMIT %s',
							   replace(f.sel, '$Q', quote_literal(q.q) || '::simhash64'),
							   replace(f.ord, '$Q', quote_literal(q.q) || '::simhash64'),
							   coalesce(l.n::text, 'ALL')),
						'%Incremental Sort%Index Scan using kt_fp%') r
WHERE f.fn IN (1, 4, 7) AND r <> 'same';
RESET simhash.enable_nearest_sort;

-- A function in the ORDER BY that returns other values during the query
-- (a STABLE current_setting() that set_config() in the select list
-- changes): the index reads the query value once, and the groups follow its
-- distances, so the rows come in the order of the first value.
SELECT set_config('kt.q', fp_of(0)::text, false) IS NOT NULL AS set;
SELECT array_agg(id ORDER BY n) =
	   (SELECT array_agg(id) FROM (SELECT id FROM kt ORDER BY hamming(fp, fp_of(0)) + 0, id LIMIT 3000) s)
	   AS in_first_value_order
FROM (SELECT row_number() OVER () AS n, id
	  FROM (SELECT id, set_config('kt.q', fp_of(id)::text, false) AS changed FROM kt
			ORDER BY fp <-> current_setting('kt.q')::simhash64, id LIMIT 3000) s) s;

-- groups larger than work_mem are sorted on disk; a scrollable cursor
-- gets a Material node to go backward
SET work_mem = '64kB';
SELECT r FROM kt_compare('SELECT fp <-> fp_of(100), t, g, id, fp FROM kt
						 ORDER BY fp <-> fp_of(100), t DESC, g, id') r;
RESET work_mem;
BEGIN;
DECLARE kt_cur SCROLL CURSOR FOR SELECT id FROM kt ORDER BY fp <-> fp_of(0), id DESC;
FETCH 3 FROM kt_cur;
FETCH LAST FROM kt_cur;
FETCH BACKWARD 2 FROM kt_cur;
FETCH ABSOLUTE 2 FROM kt_cur;
COMMIT;
SELECT (SELECT array_agg(id) FROM (SELECT id FROM kt ORDER BY hamming(fp, fp_of(0)) + 0, id DESC LIMIT 3) s) AS first_three,
	   (SELECT array_agg(id) FROM (SELECT id FROM kt ORDER BY hamming(fp, fp_of(0)) + 0 DESC NULLS FIRST, id LIMIT 3) s) AS last_three;

DROP TABLE kt, kt_q, kt_forms, kt_limits, kt_parted;
DROP FUNCTION fp_of(int8), kt_mask(int), kt_compare(text, text), kt_generic(simhash64, int, int);
