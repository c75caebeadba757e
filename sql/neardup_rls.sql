--
-- The near-duplicate trigger under row-level security.  A BEFORE ROW
-- trigger fires before the executor checks the new row against the
-- policies' WITH CHECK; a search at that point would tell a role whether a
-- guessed text exists among rows it cannot see (reject: 23P01, skip:
-- INSERT 0 0, where the policy says 42501).  The trigger checks the row
-- against the policies first and fails as the executor would, so every
-- statement below that claims another tenant's scope gets the policy's
-- error, whatever the table holds, while near-duplicates within a tenant's
-- own rows are still caught.  All of it as roles without superuser rights.
--
SET jit = off;
CREATE ROLE simhash_rls_owner;
CREATE ROLE simhash_rls_alice;
CREATE ROLE simhash_rls_bob;
CREATE SCHEMA rls AUTHORIZATION simhash_rls_owner;
GRANT USAGE, CREATE ON SCHEMA rls TO simhash_rls_alice, simhash_rls_bob;
-- the outcome of a statement: its SQLSTATE and message, or its row count
CREATE FUNCTION rls.try(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
BEGIN
	EXECUTE query;
	GET DIAGNOSTICS n = ROW_COUNT;
	RETURN 'ok, ' || n || ' row(s)';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
ALTER FUNCTION rls.try(text) OWNER TO simhash_rls_owner;

SET ROLE simhash_rls_owner;
-- one table per action, scoped by owner, with a tenant policy
CREATE FUNCTION rls.make_docs(name text, action text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('CREATE TABLE rls.%I (id bigserial PRIMARY KEY, owner name NOT NULL DEFAULT current_user,
		body text, fp simhash64, dup_of bigint, dup_d int)', name);
	EXECUTE format('CREATE INDEX ON rls.%I USING simhash (fp)', name);
	EXECUTE format('CREATE TRIGGER a_fp BEFORE INSERT OR UPDATE ON rls.%I FOR EACH ROW
		EXECUTE FUNCTION simhash_fingerprint_trigger(fp, body)', name);
	EXECUTE format('CREATE TRIGGER b_nd BEFORE INSERT OR UPDATE ON rls.%I FOR EACH ROW
		EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 4, %L, ''scope=owner'' %s)',
		name, action, CASE action WHEN 'link' THEN ', ''link_key=dup_of'', ''link_distance=dup_d''' ELSE '' END);
	EXECUTE format('ALTER TABLE rls.%I ENABLE ROW LEVEL SECURITY', name);
	EXECUTE format('CREATE POLICY tenant ON rls.%I USING (owner = current_user) WITH CHECK (owner = current_user)', name);
	EXECUTE format('GRANT SELECT, INSERT, UPDATE ON rls.%I TO simhash_rls_alice, simhash_rls_bob', name);
	EXECUTE format('GRANT USAGE ON SEQUENCE rls.%I TO simhash_rls_alice, simhash_rls_bob', name || '_id_seq');
END $$;
SELECT rls.make_docs('docs_reject', 'reject'), rls.make_docs('docs_skip', 'skip'),
	   rls.make_docs('docs_link', 'link');

-- alice's secret, and a row of bob's
SET ROLE simhash_rls_alice;
INSERT INTO rls.docs_reject (body) VALUES ('The secret merger of Acme and Globex is planned for March, said the CFO in a memo.');
INSERT INTO rls.docs_skip (body) VALUES ('The secret merger of Acme and Globex is planned for March, said the CFO in a memo.');
INSERT INTO rls.docs_link (body) VALUES ('The secret merger of Acme and Globex is planned for March, said the CFO in a memo.');
SET ROLE simhash_rls_bob;
INSERT INTO rls.docs_reject (id, body) VALUES (100, 'Bob keeps a list of garden plants: roses, tulips and ferns.');
INSERT INTO rls.docs_skip (id, body) VALUES (100, 'Bob keeps a list of garden plants: roses, tulips and ferns.');
INSERT INTO rls.docs_link (id, body) VALUES (100, 'Bob keeps a list of garden plants: roses, tulips and ferns.');

-- bob sees none of alice's rows, and a right guess and a wrong one in her
-- scope get the same error, in every mode and through every statement
SELECT count(*) FROM rls.docs_reject WHERE owner <> current_user;
SELECT t, guess, rls.try(format(q, t, guess)) AS outcome
FROM unnest(ARRAY['docs_reject', 'docs_skip', 'docs_link']) t,
	 unnest(ARRAY['The secret merger of Acme and Globex is planned for March, said the CFO in a memo.',
				  'Totally unrelated text about gardening and the weather in spring.']) guess,
	 unnest(ARRAY[
		'INSERT INTO rls.%I (owner, body) VALUES (''simhash_rls_alice'', %L)',
		'UPDATE rls.%I SET owner = ''simhash_rls_alice'', body = %L WHERE id = 100',
		'INSERT INTO rls.%I (owner, body) VALUES (''simhash_rls_alice'', %L) ON CONFLICT DO NOTHING',
		'INSERT INTO rls.%I (id, owner, body) VALUES (100, current_user, ''zzz'') ON CONFLICT (id) DO UPDATE SET owner = ''simhash_rls_alice'', body = %L',
		'INSERT INTO rls.%I (owner, body) SELECT ''simhash_rls_alice'', %L RETURNING id',
		'MERGE INTO rls.%I d USING (VALUES (%L)) s(b) ON false WHEN NOT MATCHED THEN INSERT (owner, body) VALUES (''simhash_rls_alice'', s.b)',
		'MERGE INTO rls.%I d USING (VALUES (%L)) s(b) ON d.id = 100 WHEN MATCHED THEN UPDATE SET owner = ''simhash_rls_alice'', body = s.b'
	 ]) WITH ORDINALITY AS s(q, n)
ORDER BY t, n, guess;
-- bob's row is as it was
SELECT id, owner, body, dup_of, dup_d FROM rls.docs_skip ORDER BY id;

-- within his own scope, bob may store anything that is not a near-copy of
-- his own rows: alice's secret is no near-duplicate there
SELECT rls.try(format('INSERT INTO rls.%I (body) VALUES (%L)', t,
	'The secret merger of Acme and Globex is planned for March, said the CFO in a memo.'))
FROM unnest(ARRAY['docs_reject', 'docs_skip', 'docs_link']) t;
-- and his own near-copies are caught, as before (RLS: no key in the detail
-- nor in the link column, only the distance)
SELECT rls.try(format('INSERT INTO rls.%I (body) VALUES (%L)', t,
	'Bob keeps a long list of garden plants: roses, tulips and ferns.'))
FROM unnest(ARRAY['docs_reject', 'docs_skip', 'docs_link']) t;
SELECT rls.try($$UPDATE rls.docs_reject SET body = 'Bob keeps a long list of garden plants: roses, tulips and ferns.'
	WHERE id <> 100$$);
SELECT owner, body, dup_of, dup_d FROM rls.docs_link ORDER BY id;

-- COPY FROM is refused by PostgreSQL itself on a table under RLS
COPY rls.docs_reject (owner, body) FROM STDIN;
simhash_rls_alice	The secret merger of Acme and Globex is planned for March, said the CFO in a memo.
\.

-- a restrictive policy, a USING-only policy, and a policy with a sub-select:
-- the trigger raises the error the executor raises, naming the same policy
RESET ROLE;
SET ROLE simhash_rls_owner;
CREATE TABLE rls.members (member name, tenant text);
INSERT INTO rls.members VALUES ('simhash_rls_alice', 'acme'), ('simhash_rls_bob', 'bobco');
GRANT SELECT ON rls.members TO simhash_rls_alice, simhash_rls_bob;
CREATE TABLE rls.tdocs (id serial PRIMARY KEY, tenant text, body text,
	fp simhash64 GENERATED ALWAYS AS (simhash(body)) STORED);
CREATE INDEX ON rls.tdocs USING simhash (fp);
CREATE TRIGGER nd BEFORE INSERT OR UPDATE ON rls.tdocs FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 4, 'reject', 'scope=tenant');
ALTER TABLE rls.tdocs ENABLE ROW LEVEL SECURITY;
CREATE POLICY member ON rls.tdocs
	USING (tenant IN (SELECT m.tenant FROM rls.members m WHERE m.member = current_user));
CREATE POLICY quiet ON rls.tdocs AS RESTRICTIVE FOR INSERT WITH CHECK (body <> upper(body));
CREATE POLICY short ON rls.tdocs AS RESTRICTIVE FOR UPDATE WITH CHECK (length(body) < 200);
GRANT SELECT, INSERT, UPDATE ON rls.tdocs TO simhash_rls_alice, simhash_rls_bob;
GRANT USAGE ON SEQUENCE rls.tdocs_id_seq TO simhash_rls_alice, simhash_rls_bob;
SET ROLE simhash_rls_alice;
INSERT INTO rls.tdocs (tenant, body) VALUES ('acme', 'The secret merger of Acme and Globex is planned for March, said the CFO in a memo.');
SET ROLE simhash_rls_bob;
INSERT INTO rls.tdocs (tenant, body) VALUES ('bobco', 'Bob keeps a list of garden plants: roses, tulips and ferns.');
SELECT guess, rls.try(format(q, guess)) AS outcome
FROM unnest(ARRAY['The secret merger of Acme and Globex is planned for March, said the CFO in a memo.',
				  'Totally unrelated text about gardening and the weather in spring.', 'ACME SHOUTS']) guess,
	 unnest(ARRAY['INSERT INTO rls.tdocs (tenant, body) VALUES (''acme'', %L)',
				  'UPDATE rls.tdocs SET tenant = ''acme'', body = %L']) WITH ORDINALITY AS s(q, n)
ORDER BY n, guess;
-- in bob's own tenant: the restrictive policies by name, as core names them
SELECT rls.try($$INSERT INTO rls.tdocs (tenant, body) VALUES ('bobco', 'BOB SHOUTS')$$);
SELECT rls.try($$UPDATE rls.tdocs SET body = repeat('Bob writes a very long text. ', 10)$$);
-- the same statements without the trigger: the executor's own errors
RESET ROLE;
ALTER TABLE rls.tdocs DISABLE TRIGGER nd;
SET ROLE simhash_rls_bob;
SELECT rls.try($$INSERT INTO rls.tdocs (tenant, body) VALUES ('acme', 'anything')$$);
SELECT rls.try($$INSERT INTO rls.tdocs (tenant, body) VALUES ('bobco', 'BOB SHOUTS')$$);
SELECT rls.try($$UPDATE rls.tdocs SET body = repeat('Bob writes a very long text. ', 10)$$);
RESET ROLE;
ALTER TABLE rls.tdocs ENABLE TRIGGER nd;
-- near-duplicates of one's own tenant are still found
SET ROLE simhash_rls_bob;
SELECT rls.try($$INSERT INTO rls.tdocs (tenant, body) VALUES ('bobco', 'Bob keeps a long list of garden plants: roses, tulips and ferns.')$$);
SET ROLE simhash_rls_alice;
SELECT rls.try($$INSERT INTO rls.tdocs (tenant, body) VALUES ('acme', 'The secret merger of Acme and Globex is planned for March, said the CFO in a short memo.')$$);

-- the table's owner is not subject to RLS, unless it is forced
SET ROLE simhash_rls_owner;
SELECT rls.try($$INSERT INTO rls.docs_reject (owner, body) VALUES ('simhash_rls_alice',
	'The secret merger of Acme and Globex is planned for March, said the CFO in a memo.')$$);
ALTER TABLE rls.docs_reject FORCE ROW LEVEL SECURITY;
SELECT rls.try($$INSERT INTO rls.docs_reject (owner, body) VALUES ('simhash_rls_alice',
	'The secret merger of Acme and Globex is planned for March, said the CFO in a memo.')$$);
SELECT rls.try($$INSERT INTO rls.docs_reject (owner, body) VALUES ('simhash_rls_owner',
	'The secret merger of Acme and Globex is planned for March, said the CFO in a memo.')$$);
-- COPY as the owner under FORCE: refused by PostgreSQL
COPY rls.docs_reject (owner, body) FROM STDIN;
simhash_rls_alice	The secret merger of Acme and Globex is planned for March, said the CFO in a memo.
\.
ALTER TABLE rls.docs_reject NO FORCE ROW LEVEL SECURITY;

-- the check is made as the current user: inside a SECURITY DEFINER
-- function of bob's, the table's owner is bob, and refused as bob is
SET ROLE simhash_rls_bob;
CREATE FUNCTION rls.bob_inserts(b text) RETURNS void LANGUAGE sql SECURITY DEFINER
	AS $$ INSERT INTO rls.docs_reject (owner, body) VALUES ('simhash_rls_alice', b) $$;
SET ROLE simhash_rls_owner;
SELECT rls.try($$SELECT rls.bob_inserts('The secret merger of Acme and Globex is planned for March, said the CFO in a memo.')$$);
-- and one of alice's acts with alice's rights (her own rows, her choice)
SET ROLE simhash_rls_alice;
CREATE FUNCTION rls.alice_inserts(b text) RETURNS void LANGUAGE sql SECURITY DEFINER
	AS $$ INSERT INTO rls.docs_reject (owner, body) VALUES ('simhash_rls_alice', b) $$;
SET ROLE simhash_rls_bob;
SELECT rls.try($$SELECT rls.alice_inserts('The secret merger of Acme and Globex is planned for March, said the CFO in a memo.')$$);

-- partitioned tables: the trigger fires on the partition, the policies of
-- the partitioned table apply through it, and are checked as well when a
-- row is put into a partition directly (which has no policy of its own)
SET ROLE simhash_rls_owner;
CREATE TABLE rls.pdocs (id int, owner name NOT NULL DEFAULT current_user, body text,
	fp simhash64 GENERATED ALWAYS AS (simhash(body)) STORED) PARTITION BY HASH (id);
CREATE TABLE rls.pdocs_0 PARTITION OF rls.pdocs FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE rls.pdocs_1 (body text, fp simhash64 GENERATED ALWAYS AS (simhash(body)) STORED,
	owner name NOT NULL DEFAULT current_user, id int);
ALTER TABLE rls.pdocs ATTACH PARTITION rls.pdocs_1 FOR VALUES WITH (MODULUS 2, REMAINDER 1);
CREATE INDEX ON rls.pdocs USING simhash (fp);
CREATE TRIGGER nd BEFORE INSERT OR UPDATE ON rls.pdocs FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 4, 'skip', 'scope=owner');
ALTER TABLE rls.pdocs ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant ON rls.pdocs USING (owner = current_user)
	WITH CHECK (owner = current_user AND pdocs IS NOT NULL);
GRANT SELECT, INSERT, UPDATE ON rls.pdocs, rls.pdocs_0, rls.pdocs_1 TO simhash_rls_alice, simhash_rls_bob;
SET ROLE simhash_rls_alice;
INSERT INTO rls.pdocs (id, body) VALUES (1, 'The secret merger of Acme and Globex is planned for March, said the CFO in a memo.'),
	(6, 'Alice notes that the merger needs the approval of the board.');
SELECT tableoid::regclass, id, owner FROM rls.pdocs ORDER BY id;
SET ROLE simhash_rls_bob;
INSERT INTO rls.pdocs (id, body) VALUES (3, 'Bob keeps a list of garden plants: roses, tulips and ferns.');
SELECT q, guess, rls.try(format(q, guess)) AS outcome
FROM unnest(ARRAY['The secret merger of Acme and Globex is planned for March, said the CFO in a memo.',
				  'Totally unrelated text about gardening and the weather in spring.']) guess,
	 unnest(ARRAY['INSERT INTO rls.pdocs (id, owner, body) VALUES (2, ''simhash_rls_alice'', %L)',
				  'INSERT INTO rls.pdocs (id, owner, body) VALUES (5, ''simhash_rls_alice'', %L)',
				  'INSERT INTO rls.pdocs_0 (id, owner, body) VALUES (2, ''simhash_rls_alice'', %L)',
				  'INSERT INTO rls.pdocs_1 (id, owner, body) VALUES (5, ''simhash_rls_alice'', %L)',
				  'UPDATE rls.pdocs SET owner = ''simhash_rls_alice'', body = %L WHERE id = 3']) WITH ORDINALITY AS s(q, n)
ORDER BY n, guess;
-- COPY into a partition without policies of its own
COPY rls.pdocs_1 (id, owner, body) FROM STDIN;
5	simhash_rls_alice	The secret merger of Acme and Globex is planned for March, said the CFO in a memo.
\.
COPY rls.pdocs_1 (id, owner, body) FROM STDIN;
5	simhash_rls_alice	Totally unrelated text about gardening and the weather in spring.
\.
-- bob's own near-copies are skipped, in either partition
INSERT INTO rls.pdocs (id, body) VALUES (2, 'Bob keeps a long list of garden plants: roses, tulips and ferns.'),
	(5, 'Bob keeps a long list of garden plants: roses, tulips and ferns.');
COPY rls.pdocs_0 (id, owner, body) FROM STDIN;
2	simhash_rls_bob	Bob keeps a list of garden plants: red roses, tulips and ferns.
\.
SELECT tableoid::regclass, id, owner, body FROM rls.pdocs ORDER BY id;
RESET ROLE;
SELECT count(*) FROM rls.pdocs;

-- a policy of the partitioned table with a sub-select, met by a row put
-- directly into a partition: the executor never expanded that policy, so
-- the trigger locks the sub-select's table itself, as the rewriter would
-- (without the lock, a concurrent DROP TABLE of it is not blocked)
SET ROLE simhash_rls_owner;
CREATE TABLE rls.qdocs (id int, tenant text, body text,
	fp simhash64 GENERATED ALWAYS AS (simhash(body)) STORED) PARTITION BY HASH (id);
CREATE TABLE rls.qdocs_0 PARTITION OF rls.qdocs FOR VALUES WITH (MODULUS 1, REMAINDER 0);
CREATE INDEX ON rls.qdocs USING simhash (fp);
CREATE TRIGGER nd BEFORE INSERT OR UPDATE ON rls.qdocs FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 4, 'reject', 'scope=tenant');
ALTER TABLE rls.qdocs ENABLE ROW LEVEL SECURITY;
CREATE POLICY member ON rls.qdocs
	USING (tenant IN (SELECT m.tenant FROM rls.members m WHERE m.member = current_user));
GRANT INSERT ON rls.qdocs, rls.qdocs_0 TO simhash_rls_alice;
SET ROLE simhash_rls_alice;
BEGIN;
INSERT INTO rls.qdocs_0 (id, tenant, body) VALUES (1, 'acme', 'Alice writes of mountains and the sea, the sky above the hills.');
SELECT rls.try($$INSERT INTO rls.qdocs_0 (id, tenant, body) VALUES (2, 'bobco', 'Bob keeps a list of garden plants: roses, tulips and ferns.')$$);
SELECT mode FROM pg_locks
WHERE pid = pg_backend_pid() AND locktype = 'relation' AND relation = 'rls.members'::regclass;
ROLLBACK;

-- policies that let a role write rows it may not read: PostgreSQL adds the
-- SELECT policies' USING to the check of the new row when the statement
-- needs SELECT rights on its target (RETURNING, an UPDATE's WHERE, ON
-- CONFLICT DO UPDATE, a MERGE's UPDATE action), and so does the trigger:
-- a right guess and a wrong one get the same 42501 as without the trigger.
-- Each statement is undone, so that none sees another's rows.
RESET ROLE;
SET ROLE simhash_rls_owner;
CREATE FUNCTION rls.try_undo(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
BEGIN
	EXECUTE query;
	GET DIAGNOSTICS n = ROW_COUNT;
	RAISE EXCEPTION USING ERRCODE = 'SHUND', MESSAGE = n::text;
EXCEPTION
	WHEN SQLSTATE 'SHUND' THEN RETURN 'ok, ' || SQLERRM || ' row(s)';
	WHEN OTHERS THEN RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
CREATE TABLE rls.wdocs (id int PRIMARY KEY, owner name, body text,
	fp simhash64 GENERATED ALWAYS AS (simhash(body)) STORED);
CREATE INDEX ON rls.wdocs USING simhash (fp);
CREATE TRIGGER nd BEFORE INSERT OR UPDATE ON rls.wdocs FOR EACH ROW
	EXECUTE FUNCTION simhash_near_duplicate_trigger(fp, 4, 'reject', 'scope=owner');
ALTER TABLE rls.wdocs ENABLE ROW LEVEL SECURITY;
CREATE POLICY sel ON rls.wdocs FOR SELECT USING (owner = current_user);
CREATE POLICY ins ON rls.wdocs FOR INSERT WITH CHECK (true);
CREATE POLICY upd ON rls.wdocs FOR UPDATE USING (owner = current_user) WITH CHECK (true);
GRANT SELECT, INSERT, UPDATE ON rls.wdocs TO simhash_rls_alice, simhash_rls_bob;
-- a trigger that writes with RETURNING inside a plain INSERT, and a
-- function that writes with or without it inside another INSERT
CREATE TABLE rls.wlog (guess text);
CREATE FUNCTION rls.wlog_put() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	r int;
BEGIN
	INSERT INTO rls.wdocs VALUES (7, 'simhash_rls_bob', NEW.guess) RETURNING id INTO r;
	RETURN NEW;
END $$;
CREATE TRIGGER put BEFORE INSERT ON rls.wlog FOR EACH ROW EXECUTE FUNCTION rls.wlog_put();
CREATE FUNCTION rls.wput(o name, b text, ret bool) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
	r int;
BEGIN
	IF ret THEN
		INSERT INTO rls.wdocs VALUES (8, o, b) RETURNING id INTO r;
	ELSE
		INSERT INTO rls.wdocs VALUES (8, o, b);
	END IF;
	RETURN 8;
END $$;
GRANT INSERT ON rls.wlog TO simhash_rls_alice;
CREATE TABLE rls.wstmts (n int, q text);
INSERT INTO rls.wstmts VALUES
	(1, 'UPDATE rls.wdocs SET owner = ''simhash_rls_bob'', body = %L WHERE id = 2'),
	(2, 'INSERT INTO rls.wdocs VALUES (2, ''simhash_rls_alice'', ''x'') ON CONFLICT (id) DO UPDATE SET owner = ''simhash_rls_bob'', body = %L'),
	(3, 'INSERT INTO rls.wdocs VALUES (7, ''simhash_rls_bob'', %L) RETURNING id'),
	(4, 'INSERT INTO rls.wdocs VALUES (7, ''simhash_rls_bob'', %L) ON CONFLICT (id) DO UPDATE SET body = ''y'''),
	(5, 'WITH w AS (INSERT INTO rls.wdocs VALUES (7, ''simhash_rls_bob'', %L) RETURNING id) SELECT count(*) FROM w'),
	(6, 'MERGE INTO rls.wdocs d USING (VALUES (%L)) s(b) ON d.id = 2 WHEN MATCHED THEN UPDATE SET owner = ''simhash_rls_bob'', body = s.b'),
	(7, 'INSERT INTO rls.wlog VALUES (%L)'),
	(8, 'INSERT INTO rls.wdocs SELECT 9, ''simhash_rls_alice'', ''Alice: '' || rls.wput(''simhash_rls_bob'', %L, true)'),
	-- no SELECT rights needed: the trigger tells what a unique index would
	(9, 'INSERT INTO rls.wdocs VALUES (7, ''simhash_rls_bob'', %L)'),
	(10, 'INSERT INTO rls.wdocs SELECT 9, ''simhash_rls_alice'', ''Alice: '' || rls.wput(''simhash_rls_bob'', %L, false) RETURNING id'),
	(11, 'MERGE INTO rls.wdocs d USING (VALUES (%L)) s(b) ON false WHEN NOT MATCHED THEN INSERT VALUES (7, ''simhash_rls_bob'', s.b)');
GRANT SELECT ON rls.wstmts TO simhash_rls_alice;
SET ROLE simhash_rls_bob;
INSERT INTO rls.wdocs VALUES (1, current_user, 'The secret merger of Acme and Globex is planned for March, said the CFO in a memo.');
SET ROLE simhash_rls_alice;
INSERT INTO rls.wdocs VALUES (2, current_user, 'Alice writes of mountains and the sea, the sky above the hills.');
SELECT id FROM rls.wdocs;
SELECT n, guess, rls.try_undo(format(q, guess)) AS outcome
FROM rls.wstmts,
	 unnest(ARRAY['The secret merger of Acme and Globex is planned for March, said the CFO in a memo.',
				  'Totally unrelated text about gardening and the weather in spring.']) guess
ORDER BY n, guess;
-- the same without the trigger
RESET ROLE;
ALTER TABLE rls.wdocs DISABLE TRIGGER nd;
SET ROLE simhash_rls_alice;
SELECT n, guess, rls.try_undo(format(q, guess)) AS outcome
FROM rls.wstmts,
	 unnest(ARRAY['The secret merger of Acme and Globex is planned for March, said the CFO in a memo.',
				  'Totally unrelated text about gardening and the weather in spring.']) guess
ORDER BY n, guess;
RESET ROLE;
ALTER TABLE rls.wdocs ENABLE TRIGGER nd;
-- in alice's own scope, RETURNING and ON CONFLICT DO UPDATE still find near-copies
SET ROLE simhash_rls_alice;
SELECT rls.try($$INSERT INTO rls.wdocs VALUES (3, current_user, 'A note of Alice on something else entirely, written today.') RETURNING id$$);
SELECT rls.try($$INSERT INTO rls.wdocs VALUES (4, current_user, 'Alice writes of mountains and the sea, the sky above the hills.') RETURNING id$$);
SELECT rls.try($$INSERT INTO rls.wdocs VALUES (3, current_user, 'x') ON CONFLICT (id) DO UPDATE SET body = 'Alice writes of mountains and the sea, the sky above the hills.' RETURNING id$$);

-- the first statement of a session loads the library inside the executor
-- (when it opens the simhash index), and is still seen as needing SELECT
-- rights or not.  On 16 and later the index is opened only once the first
-- row arrives, after the statement started running, so the statement that
-- loads the library is not known and gets the SELECT policies anyway: the
-- last case is refused with 42501 there (neardup_rls_1.out), never less.
\c -
SET ROLE simhash_rls_alice;
INSERT INTO rls.wdocs VALUES (7, 'simhash_rls_bob', 'The secret merger of Acme and Globex is planned for March, said the CFO in a memo.') RETURNING id;
\c -
SET ROLE simhash_rls_alice;
INSERT INTO rls.wdocs VALUES (7, 'simhash_rls_bob', 'Totally unrelated text about gardening and the weather in spring.') RETURNING id;
\c -
SET ROLE simhash_rls_alice;
INSERT INTO rls.wdocs VALUES (7, 'simhash_rls_bob', 'The secret merger of Acme and Globex is planned for March, said the CFO in a memo.');
\c -
SET jit = off;
RESET ROLE;
DROP SCHEMA rls CASCADE;
DROP ROLE simhash_rls_owner, simhash_rls_alice, simhash_rls_bob;
