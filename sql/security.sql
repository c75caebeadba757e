--
-- What a role may learn about rows it cannot see.  The planner counts
-- matches in a simhash index for its estimates; under row-level security,
-- behind a security barrier view, or without the right to read the column,
-- those counts would include hidden rows, and one EXPLAIN would tell
-- whether a hidden document exists.  There the estimates come from
-- pg_statistic, as core's do.  The inspection functions show blocks of
-- every row's fingerprint, so they need SELECT on the table and refuse
-- roles that row-level security applies to.
--
SET jit = off;
CREATE OR REPLACE FUNCTION sqlstate_of(query text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE query;
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
-- the plan of a query, with its literals (texts, fingerprints) written as q
CREATE FUNCTION plan_of(query text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN ' || query LOOP
		RETURN NEXT regexp_replace(line, '''[^'']*''', 'q', 'g');
	END LOOP;
END $$;
-- do two queries get the same plan and estimates?
CREATE FUNCTION same_plan(a text, b text) RETURNS boolean LANGUAGE sql AS $$
	SELECT (SELECT array_agg(p) FROM plan_of(a) p)
		   IS NOT DISTINCT FROM (SELECT array_agg(p) FROM plan_of(b) p)
$$;
CREATE ROLE simhash_alice;
CREATE ROLE simhash_bob;
GRANT EXECUTE ON FUNCTION plan_of(text), same_plan(text, text), sqlstate_of(text)
	TO simhash_alice, simhash_bob;

-- 37 copies of bob's memo, and 500 rows of alice's; no statistics
CREATE TABLE secret (id serial PRIMARY KEY, owner name, body text,
	fp simhash64 GENERATED ALWAYS AS (simhash(body)) STORED)
	WITH (autovacuum_enabled = off);
CREATE INDEX secret_fp ON secret USING simhash (fp);
INSERT INTO secret (owner, body) SELECT 'simhash_bob', 'the hidden merger memo' FROM generate_series(1, 37);
INSERT INTO secret (owner, body) SELECT 'simhash_alice', 'alice writes note ' || i FROM generate_series(1, 500) i;
ALTER TABLE secret ENABLE ROW LEVEL SECURITY;
CREATE POLICY own ON secret USING (owner = current_user);
GRANT SELECT ON secret TO simhash_alice, simhash_bob;

-- alice cannot tell bob's memo from any other text
SET ROLE simhash_alice;
SELECT count(*) FROM secret WHERE fp <-> simhash('the hidden merger memo') <= 3;
SELECT same_plan($$SELECT * FROM secret WHERE fp <-> simhash('the hidden merger memo') <= 0$$,
				 $$SELECT * FROM secret WHERE fp <-> simhash('any other text') <= 0$$) AS radius_0,
	   same_plan($$SELECT * FROM secret WHERE fp <-> simhash('the hidden merger memo') <= 3$$,
				 $$SELECT * FROM secret WHERE fp <-> simhash('any other text') <= 3$$) AS radius_3,
	   same_plan($$SELECT * FROM secret WHERE fp <@ simhash_ball(simhash('the hidden merger memo'), 2)$$,
				 $$SELECT * FROM secret WHERE fp <@ simhash_ball(simhash('any other text'), 2)$$) AS ball,
	   same_plan($$SELECT * FROM secret WHERE simhash_within(fp, simhash('the hidden merger memo'), 1)$$,
				 $$SELECT * FROM secret WHERE simhash_within(fp, simhash('any other text'), 1)$$) AS within;
SELECT * FROM plan_of($$SELECT * FROM secret WHERE fp <-> simhash('the hidden merger memo') <= 0$$);
RESET ROLE;
-- with row-level security enabled, not even the owner's estimates count
SELECT * FROM plan_of($$SELECT id FROM secret WHERE fp <-> simhash('the hidden merger memo') <= 0$$);
-- without it, the index counts the 37 rows exactly
ALTER TABLE secret DISABLE ROW LEVEL SECURITY;
SELECT * FROM plan_of($$SELECT id FROM secret WHERE fp <-> simhash('the hidden merger memo') <= 0$$);

-- a security barrier view hides bob's rows from alice the same way
CREATE VIEW my_secret WITH (security_barrier) AS
	SELECT * FROM secret WHERE owner = current_user;
GRANT SELECT ON my_secret TO simhash_alice;
REVOKE SELECT ON secret FROM simhash_alice;
SET ROLE simhash_alice;
SELECT count(*) FROM my_secret WHERE fp <-> simhash('the hidden merger memo') <= 3;
SELECT same_plan($$SELECT * FROM my_secret WHERE fp <-> simhash('the hidden merger memo') <= 0$$,
				 $$SELECT * FROM my_secret WHERE fp <-> simhash('any other text') <= 0$$) AS barrier_view;
RESET ROLE;

-- the right to read the fingerprint column is enough to count
GRANT SELECT (id, fp) ON secret TO simhash_alice;
SET ROLE simhash_alice;
SELECT * FROM plan_of($$SELECT id FROM secret WHERE fp <-> simhash('the hidden merger memo') <= 0$$);
RESET ROLE;

-- partitions of a table with row-level security
CREATE TABLE psecret (id int, owner name, fp simhash64) PARTITION BY RANGE (id);
CREATE TABLE psecret_1 PARTITION OF psecret FOR VALUES FROM (0) TO (1000)
	WITH (autovacuum_enabled = off);
CREATE TABLE psecret_2 PARTITION OF psecret FOR VALUES FROM (1000) TO (2000)
	WITH (autovacuum_enabled = off);
CREATE INDEX psecret_fp ON psecret USING simhash (fp);
INSERT INTO psecret SELECT i, 'simhash_bob', simhash('the hidden merger memo') FROM generate_series(1, 37) i;
INSERT INTO psecret SELECT 1000 + i, 'simhash_alice', simhash('alice writes note ' || i) FROM generate_series(1, 500) i;
ALTER TABLE psecret ENABLE ROW LEVEL SECURITY;
CREATE POLICY own ON psecret USING (owner = current_user);
GRANT SELECT ON psecret TO simhash_alice;
SET ROLE simhash_alice;
SELECT same_plan($$SELECT * FROM psecret WHERE fp <-> simhash('the hidden merger memo') <= 0$$,
				 $$SELECT * FROM psecret WHERE fp <-> simhash('any other text') <= 0$$) AS partitions;
RESET ROLE;

-- the join estimate of a self-join under row-level security
ALTER TABLE secret ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON secret TO simhash_alice;
SET ROLE simhash_alice;
SELECT same_plan($$SELECT * FROM secret a JOIN secret b ON a.fp <@ simhash_ball(b.fp, 1) WHERE b.body = 'the hidden merger memo'$$,
				 $$SELECT * FROM secret a JOIN secret b ON a.fp <@ simhash_ball(b.fp, 1) WHERE b.body = 'any other text'$$) AS join_estimate;
RESET ROLE;

-- inspection: EXECUTE is not enough
GRANT EXECUTE ON FUNCTION simhash_index_check(regclass, boolean), simhash_index_stats(regclass),
	simhash_index_heavy_keys(regclass, int4) TO simhash_alice, simhash_bob;
SET ROLE simhash_alice;
SELECT sqlstate_of($$SELECT simhash_index_check('secret_fp')$$) AS check_rls,
	   sqlstate_of($$SELECT * FROM simhash_index_stats('secret_fp')$$) AS stats_rls,
	   sqlstate_of($$SELECT * FROM simhash_index_heavy_keys('secret_fp', 3)$$) AS heavy_rls;
RESET ROLE;
ALTER TABLE secret DISABLE ROW LEVEL SECURITY;
REVOKE SELECT ON secret FROM simhash_bob;
SET ROLE simhash_bob;
SELECT sqlstate_of($$SELECT * FROM simhash_index_heavy_keys('secret_fp', 3)$$) AS heavy_no_select;
RESET ROLE;
SET ROLE simhash_alice;
-- (alice may read the whole table now)
SELECT sqlstate_of($$SELECT simhash_index_check('secret_fp', true)$$) AS check_ok;
SELECT band, entries FROM simhash_index_heavy_keys('secret_fp', 4) ORDER BY band;
RESET ROLE;
-- nonexistent and wrong relations
SELECT sqlstate_of($$SELECT simhash_index_check(0)$$) AS oid_0,
	   sqlstate_of($$SELECT * FROM simhash_index_stats(4294967295)$$) AS oid_max,
	   sqlstate_of($$SELECT * FROM simhash_index_heavy_keys('secret', 1)$$) AS a_table,
	   sqlstate_of($$SELECT * FROM simhash_index_stats('secret_pkey')$$) AS a_btree,
	   sqlstate_of($$SELECT * FROM simhash_index_heavy_keys('secret_fp', -1)$$) AS negative_n;

DROP TABLE secret, psecret CASCADE;
DROP FUNCTION plan_of(text), same_plan(text, text);
REVOKE ALL ON FUNCTION simhash_index_check(regclass, boolean), simhash_index_stats(regclass),
	simhash_index_heavy_keys(regclass, int4), sqlstate_of(text) FROM simhash_alice, simhash_bob;
DROP ROLE simhash_alice, simhash_bob;
