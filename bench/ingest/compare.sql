-- bench/ingest/compare.sql -- the timing procedure of compare.sh: single-row
-- INSERTs, each committed, in one backend; its CPU time per row.

-- time this backend has spent on a core, ns (Linux; superuser)
CREATE OR REPLACE FUNCTION ing_cmp_cpu_ns() RETURNS int8 LANGUAGE sql AS
$$ SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::int8 $$;

CREATE TABLE IF NOT EXISTS ing_cmp (build text, round int, call int, tab text, nrows int,
									cpu_us float8, wall_us float8, stored int8, linked int8);

-- Insert nrows arriving rows (ids drawn from 1..n with a seed of round and
-- call) into table t, one transaction per row; record CPU and wall time per
-- row and how many rows were stored and linked.
CREATE OR REPLACE PROCEDURE ing_cmp_insert(t text, n int8, nrows int, rnd int, call int, build text)
LANGUAGE plpgsql AS $p$
DECLARE
	c0 int8;
	t0 timestamptz;
	s0 int8;
	l0 int8;
	s1 int8;
	l1 int8;
	counts text := format('SELECT count(*), %s FROM %I',
						  CASE WHEN t LIKE '%link%' THEN 'count(dup_of)' ELSE '0' END, t);
	ins text := format('INSERT INTO %I (body) SELECT body FROM ing_arrivals WHERE id = $1', t);
BEGIN
	EXECUTE counts INTO s0, l0;
	PERFORM setseed((rnd * 2 + call) / 1000.0);	-- distinct for rnd <= 400
	COMMIT;
	c0 := ing_cmp_cpu_ns();
	t0 := clock_timestamp();
	FOR i IN 1 .. nrows LOOP
		EXECUTE ins USING 1 + floor(random() * n)::int8;
		COMMIT;
	END LOOP;
	EXECUTE counts INTO s1, l1;
	INSERT INTO ing_cmp VALUES (build, rnd, call, t, nrows, (ing_cmp_cpu_ns() - c0) / 1e3 / nrows,
								extract(epoch FROM clock_timestamp() - t0) * 1e6 / nrows,
								s1 - s0, l1 - l0);
	COMMIT;
END $p$;
