--
-- upgrades: a database made with simhash 0.1.0 keeps its data, its queries
-- and its indexes through ALTER EXTENSION simhash UPDATE, and ends up with
-- exactly the catalog objects of a fresh CREATE EXTENSION simhash.
--
-- Nothing below names an object of the extension's newer versions, and the
-- comparison prints only differences, so objects appended to the update
-- scripts need no change here; any difference between an updated and a
-- fresh installation fails.
--
-- A database of its own: CREATE EXTENSION ... VERSION '0.1.0' needs one
-- without simhash, and the other suites' objects stay where they are.
SELECT current_database() AS regress_db \gset
SET client_min_messages = warning;
DROP DATABASE IF EXISTS simhash_upgrade;  -- left by an interrupted run
RESET client_min_messages;
CREATE DATABASE simhash_upgrade TEMPLATE template0;
\c simhash_upgrade

CREATE EXTENSION simhash VERSION '0.1.0';
SELECT extversion FROM pg_extension WHERE extname = 'simhash';

-- Every catalog fact about the installed extension, one line each, without
-- OIDs: each object of the extension (and its parts: operator family
-- members, array types) with every column of its catalog row, a column
-- that references another catalog replaced by the description of the object
-- it names; every dependency of those objects; their comments and initial
-- privileges.  Equal lines, equal extension.
CREATE FUNCTION upgrade_catalog_lines() RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	obj record;
	col record;
	fk record;
	line text;
	rendered text;
BEGIN
	CREATE TEMP TABLE upgrade_objects ON COMMIT DROP AS
	WITH ext AS (
		SELECT 'pg_extension'::regclass::oid AS classid, oid AS objid
		FROM pg_extension WHERE extname = 'simhash'
	), members AS (
		SELECT d.classid, d.objid FROM pg_depend d, ext
		WHERE d.refclassid = ext.classid AND d.refobjid = ext.objid AND d.deptype = 'e'
	)
	SELECT classid, objid FROM ext
	UNION SELECT classid, objid FROM members
	UNION SELECT d.classid, d.objid FROM pg_depend d JOIN members m
		ON d.refclassid = m.classid AND d.refobjid = m.objid
		WHERE d.deptype IN ('a', 'i') AND d.objsubid = 0;
	-- catalog columns holding the OID of a row of another catalog
	CREATE TEMP TABLE upgrade_oid_columns ON COMMIT DROP AS
	SELECT fktable, fkcols[1] AS fkcol, pktable FROM pg_get_catalog_foreign_keys()
	WHERE cardinality(fkcols) = 1 AND pkcols = ARRAY['oid'];

	FOR obj IN SELECT classid, objid, pg_describe_object(classid, objid, 0) AS name
		FROM upgrade_objects ORDER BY 3
	LOOP
		RETURN NEXT 'object ' || obj.name;
		FOR col IN EXECUTE format(
			'SELECT j.key, j.value, a.atttypid = ''pg_node_tree''::regtype AS is_tree
			 FROM %s c, jsonb_each_text(to_jsonb(c)) j, pg_attribute a
			 WHERE c.oid = $1 AND a.attrelid = $2 AND a.attname = j.key',
			obj.classid::regclass) USING obj.objid, obj.classid
		LOOP
			CONTINUE WHEN col.key = 'oid';
			-- the storage of a relation is no part of its definition
			CONTINUE WHEN obj.classid = 'pg_class'::regclass AND col.key IN
				('relfilenode', 'relpages', 'reltuples', 'relallvisible',
				 'relfrozenxid', 'relminmxid');
			rendered := col.value;
			SELECT pktable INTO fk FROM upgrade_oid_columns
				WHERE fktable = obj.classid::regclass AND fkcol = col.key;
			IF col.is_tree AND col.value IS NOT NULL THEN
				-- expressions hold OIDs and offsets into the script: they
				-- are compared in their deparsed form below
				rendered := 'an expression';
			ELSIF FOUND AND col.value IS NOT NULL THEN
				-- an OID, an oidvector or oid[] (["1", "2"] in JSON), or
				-- a regproc already printed as a name
				SELECT string_agg(CASE
						WHEN t !~ '^[0-9]+$' THEN t
						WHEN t = '0' THEN '-'
						ELSE coalesce(pg_describe_object(fk.pktable, t::oid, 0), t)
					END, ', ' ORDER BY n)
				INTO rendered
				FROM regexp_split_to_table(col.value, '[][ ,"]+') WITH ORDINALITY AS s(t, n)
				WHERE t <> '';
			END IF;
			RETURN NEXT format('  %s.%s = %s', obj.name, col.key, coalesce(rendered, 'NULL'));
		END LOOP;
		IF obj.classid = 'pg_proc'::regclass THEN
			RETURN NEXT format('  %s arguments: %s', obj.name, pg_get_function_arguments(obj.objid));
			IF (SELECT prosqlbody IS NOT NULL FROM pg_proc WHERE oid = obj.objid) THEN
				RETURN NEXT format('  %s definition: %s', obj.name, pg_get_functiondef(obj.objid));
			END IF;
		ELSIF obj.classid = 'pg_constraint'::regclass THEN
			RETURN NEXT format('  %s definition: %s', obj.name, pg_get_constraintdef(obj.objid));
		ELSIF obj.classid = 'pg_class'::regclass THEN
			-- a table, view, sequence or index of the extension: its columns
			-- and its definition
			RETURN QUERY SELECT format('  %s column %s %s%s%s', obj.name, a.attname,
					format_type(a.atttypid, a.atttypmod),
					CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END,
					' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid))
				FROM pg_attribute a LEFT JOIN pg_attrdef d
					ON d.adrelid = a.attrelid AND d.adnum = a.attnum
				WHERE a.attrelid = obj.objid AND a.attnum > 0 AND NOT a.attisdropped;
			RETURN NEXT format('  %s definition: %s', obj.name,
				(SELECT CASE WHEN relkind = 'i' THEN pg_get_indexdef(oid)
					WHEN relkind IN ('v', 'm') THEN pg_get_viewdef(oid) END
				 FROM pg_class WHERE oid = obj.objid));
		END IF;
	END LOOP;

	FOR line IN
		SELECT format('depends %s -> %s (%s)',
			pg_describe_object(d.classid, d.objid, d.objsubid),
			pg_describe_object(d.refclassid, d.refobjid, d.refobjsubid), d.deptype)
		FROM pg_depend d JOIN upgrade_objects o ON d.classid = o.classid AND d.objid = o.objid
		UNION ALL
		SELECT format('comment %s: %s', pg_describe_object(c.classoid, c.objoid, c.objsubid),
			c.description)
		FROM pg_description c JOIN upgrade_objects o ON c.classoid = o.classid AND c.objoid = o.objid
		UNION ALL
		SELECT format('initial privileges %s (%s): %s',
			pg_describe_object(p.classoid, p.objoid, p.objsubid), p.privtype, p.initprivs)
		FROM pg_init_privs p JOIN upgrade_objects o ON p.classoid = o.classid AND p.objoid = o.objid
	LOOP
		RETURN NEXT line;
	END LOOP;
	DROP TABLE upgrade_objects, upgrade_oid_columns;
END $$;

-- Is the query's plan a scan of the index?
CREATE FUNCTION upgrade_uses_index(query text, index_name text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
	plan text := '';
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
		plan := plan || line || E'\n';
	END LOOP;
	RETURN plan ~ ('(Index|Bitmap Index) Scan (Backward )?(using|on) ' || index_name || '\M');
END $$;

-- Radius and nearest-neighbour queries through the index return what a
-- sequential scan returns, for a few centres and radii.  (EXECUTE: every
-- call plans afresh under the scan settings of the moment.)
CREATE FUNCTION upgrade_index_differences() RETURNS TABLE (radius_cases int8, radius_rows int8,
	radius_differences int8, nearest_differences int8) LANGUAGE plpgsql AS $$
DECLARE
	by_index CONSTANT text := $q$
		SELECT k, q, (SELECT array_agg(id ORDER BY id) FROM docs WHERE fp <-> q <= k) AS ids,
			(SELECT array_agg(d ORDER BY d) FROM (SELECT fp <-> q AS d FROM docs
				ORDER BY fp <-> q LIMIT 15) n) AS nearest
		FROM generate_series(0, 12) k,
			(SELECT fp AS q FROM docs WHERE id IN (1, 778, 1500, 1999)
			 UNION ALL SELECT '0123456789abcdef'::simhash64) qs $q$;
BEGIN
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_bitmapscan = off;
	EXECUTE 'CREATE TEMP TABLE upgrade_by_index ON COMMIT DROP AS ' || by_index;
	SET LOCAL enable_seqscan = on;
	SET LOCAL enable_indexscan = off;
	RETURN QUERY EXECUTE $q$
	SELECT count(*), sum(coalesce(array_length(i.ids, 1), 0)),
		count(*) FILTER (WHERE i.ids IS DISTINCT FROM
			(SELECT array_agg(id ORDER BY id) FROM docs WHERE hamming(fp, i.q) <= i.k)),
		count(*) FILTER (WHERE i.nearest IS DISTINCT FROM
			(SELECT array_agg(d ORDER BY d) FROM (SELECT hamming(fp, i.q) AS d FROM docs
				ORDER BY 1 LIMIT 15) n))
	FROM upgrade_by_index i $q$;
	DROP TABLE upgrade_by_index;
END $$;

-- Documents and their near-copies, fingerprinted by simhash(text) as a
-- stored generated column, under a simhash index, made with 0.1.0.
CREATE TABLE docs (
	id int4 PRIMARY KEY,
	body text NOT NULL,
	fp simhash64 GENERATED ALWAYS AS (simhash(body)) STORED
);
INSERT INTO docs (id, body)
SELECT i, (SELECT string_agg(md5((i * 31 + w)::text), ' ') FROM generate_series(1, 25) w)
FROM generate_series(1, 1000) i;
-- near-copies: one word of each changed
INSERT INTO docs (id, body)
SELECT 1000 + id, regexp_replace(body, '^[0-9a-f]+', 'changed') FROM docs;
INSERT INTO docs (id, body) VALUES (0, '');
CREATE INDEX docs_fp ON docs USING simhash (fp);
ANALYZE docs;
SELECT upgrade_uses_index('SELECT id FROM docs WHERE fp <@ simhash_ball(''0123456789abcdef'', 3)',
	'docs_fp') AS radius_uses_index;
SELECT radius_cases, radius_rows > radius_cases AS finds_rows, radius_differences,
	nearest_differences FROM upgrade_index_differences();
SELECT simhash_index_check('docs_fp', heapallindexed => true);
CREATE TABLE before_update AS SELECT id, fp FROM docs;

ALTER EXTENSION simhash UPDATE;
SELECT extversion = default_version AS updated_to_default FROM pg_extension, pg_available_extensions
WHERE extname = 'simhash' AND name = 'simhash';

-- the stored fingerprints did not change, and simhash(text) still computes them
SELECT count(*) AS rows_changed FROM docs d JOIN before_update b USING (id)
WHERE d.fp IS DISTINCT FROM b.fp OR d.fp IS DISTINCT FROM simhash(d.body);
-- the index made by 0.1.0 answers queries, takes inserts and vacuums
SELECT simhash_index_check('docs_fp', heapallindexed => true);
SET enable_seqscan = off;
SELECT upgrade_uses_index('SELECT id FROM docs WHERE fp <-> ''0123456789abcdef'' <= 3',
	'docs_fp') AS distance_uses_index;
RESET enable_seqscan;
SELECT radius_cases, radius_rows > radius_cases AS finds_rows, radius_differences,
	nearest_differences FROM upgrade_index_differences();
INSERT INTO docs (id, body)
SELECT 3000 + id, regexp_replace(body, '[0-9a-f]+$', 'updated') FROM docs WHERE id <= 1000;
DELETE FROM docs WHERE id % 7 = 0;
VACUUM docs;
SELECT simhash_index_check('docs_fp', heapallindexed => true);
SELECT radius_cases, radius_rows > radius_cases AS finds_rows, radius_differences,
	nearest_differences FROM upgrade_index_differences();
-- REINDEX after the update gives the same answers
REINDEX INDEX docs_fp;
SELECT simhash_index_check('docs_fp', heapallindexed => true);
SELECT radius_cases, radius_rows > radius_cases AS finds_rows, radius_differences,
	nearest_differences FROM upgrade_index_differences();

-- The updated extension has exactly the objects of a fresh installation.
-- (a toast table is named after the OID of its table)
CREATE TABLE updated_catalog AS
SELECT regexp_replace(upgrade_catalog_lines(), 'pg_toast_[0-9]+', 'pg_toast_N', 'g') AS line;
SET client_min_messages = warning;
DROP EXTENSION simhash CASCADE;
RESET client_min_messages;
CREATE EXTENSION simhash;
CREATE TABLE fresh_catalog AS
SELECT regexp_replace(upgrade_catalog_lines(), 'pg_toast_[0-9]+', 'pg_toast_N', 'g') AS line;
SELECT count(*) > 500 AS catalog_described FROM fresh_catalog;
-- lines of one and not the other (none)
(SELECT 'only after update' AS installation, line FROM updated_catalog
 EXCEPT ALL SELECT 'only after update', line FROM fresh_catalog)
UNION ALL
(SELECT 'only in fresh install', line FROM fresh_catalog
 EXCEPT ALL SELECT 'only in fresh install', line FROM updated_catalog)
ORDER BY 1, 2;

\c :regress_db
DROP DATABASE simhash_upgrade;
