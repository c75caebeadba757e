#!/usr/bin/python3
"""
property_check.py -- the simhash index returns exactly what a sequential scan
returns, on random and clustered data, through random interleavings of
INSERT, UPDATE, DELETE and VACUUM.

Each round changes the table at random, then compares for many queries
(existing fingerprints with 0..6 flipped bits, and random ones; random radius
0..12) the rows found by a plain index scan, a bitmap index scan and a
sequential scan, and the distances of the 20 nearest neighbours by index and
by sort; then simhash_index_check(heapallindexed => true) must pass.

Connects with psql using the PG* environment variables.  The seed is printed;
set SIMHASH_SEED to replay a run, SIMHASH_ROUNDS to change its length.
Exits non-zero on any difference.
"""
import os
import random
import subprocess
import sys

SEED = int(os.environ.get("SIMHASH_SEED", "20261122"))
ROUNDS = int(os.environ.get("SIMHASH_ROUNDS", "12"))
QUERIES = int(os.environ.get("SIMHASH_QUERIES", "40"))

CHECK_FUNCTION = r"""
CREATE OR REPLACE FUNCTION pc_compare(tab text, qs simhash64[], ks int[])
RETURNS TABLE (q simhash64, k int, kind text, got int8[], expected int8[])
LANGUAGE plpgsql AS $$
DECLARE
	idx int8[]; bmp int8[]; seq int8[];
	knn_i int[]; knn_s int[]; knnr_i int[]; knnr_s int[]; knno_i int[]; knno_s int[];
	q2 simhash64;
	plan text;
BEGIN
	FOR i IN 1 .. array_length(qs, 1) LOOP
		q := qs[i]; k := ks[i];
		q2 := (q::int8 # (hashint8(i) :: int8 << 20))::simhash64;
		PERFORM set_config('enable_seqscan', 'off', true);
		PERFORM set_config('enable_bitmapscan', 'off', true);
		PERFORM set_config('enable_indexscan', 'on', true);
		IF i = 1 THEN
			EXECUTE format('EXPLAIN SELECT id FROM %I WHERE fp <@ simhash_ball(%L, %s)', tab, q, k) INTO plan;
			IF plan NOT LIKE 'Index Scan using%' THEN
				kind := 'plan: ' || plan; got := NULL; expected := NULL; RETURN NEXT;
			END IF;
		END IF;
		EXECUTE format('SELECT array_agg(id ORDER BY id) FROM %I WHERE fp <@ simhash_ball(%L, %s)', tab, q, k) INTO idx;
		EXECUTE format('SELECT array_agg(d ORDER BY n) FROM (SELECT fp <-> %L AS d, row_number() OVER () AS n FROM (SELECT fp FROM %I ORDER BY fp <-> %L LIMIT 20) s) t', q, tab, q) INTO knn_i;
		EXECUTE format('SELECT array_agg(d ORDER BY n) FROM (SELECT fp <-> %L AS d, row_number() OVER () AS n FROM (SELECT fp FROM %I WHERE fp <@ simhash_ball(%L, %s) ORDER BY fp <-> %L LIMIT 10) s) t', q, tab, q, k, q) INTO knnr_i;
		EXECUTE format('SELECT array_agg(d ORDER BY n) FROM (SELECT fp <-> %L AS d, row_number() OVER () AS n FROM (SELECT fp FROM %I WHERE fp <@ simhash_ball(%L, %s) ORDER BY fp <-> %L LIMIT 10) s) t', q2, tab, q, k, q2) INTO knno_i;
		PERFORM set_config('enable_indexscan', 'off', true);
		PERFORM set_config('enable_bitmapscan', 'on', true);
		EXECUTE format('SELECT array_agg(id ORDER BY id) FROM %I WHERE fp <@ simhash_ball(%L, %s)', tab, q, k) INTO bmp;
		PERFORM set_config('enable_bitmapscan', 'off', true);
		PERFORM set_config('enable_seqscan', 'on', true);
		EXECUTE format('SELECT array_agg(id ORDER BY id) FROM %I WHERE hamming(fp, %L) <= %s', tab, q, k) INTO seq;
		EXECUTE format('SELECT array_agg(d ORDER BY d) FROM (SELECT hamming(fp, %L) AS d FROM %I ORDER BY 1 LIMIT 20) s', q, tab) INTO knn_s;
		EXECUTE format('SELECT array_agg(d ORDER BY d) FROM (SELECT hamming(fp, %L) AS d FROM %I WHERE hamming(fp, %L) <= %s ORDER BY 1 LIMIT 10) s', q, tab, q, k) INTO knnr_s;
		EXECUTE format('SELECT array_agg(d ORDER BY d) FROM (SELECT hamming(fp, %L) AS d FROM %I WHERE hamming(fp, %L) <= %s ORDER BY 1 LIMIT 10) s', q2, tab, q, k) INTO knno_s;
		IF idx IS DISTINCT FROM seq THEN
			kind := 'index scan'; got := idx; expected := seq; RETURN NEXT;
		END IF;
		IF bmp IS DISTINCT FROM seq THEN
			kind := 'bitmap scan'; got := bmp; expected := seq; RETURN NEXT;
		END IF;
		IF knn_i IS DISTINCT FROM knn_s THEN
			kind := 'nearest 20'; got := knn_i; expected := knn_s; RETURN NEXT;
		END IF;
		IF knnr_i IS DISTINCT FROM knnr_s THEN
			kind := 'nearest 10 within k'; got := knnr_i; expected := knnr_s; RETURN NEXT;
		END IF;
		IF knno_i IS DISTINCT FROM knno_s THEN
			kind := 'nearest 10 to another centre within k'; got := knno_i; expected := knno_s; RETURN NEXT;
		END IF;
	END LOOP;
END $$;
"""


def psql(sql):
    r = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1"],
                       input=sql, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("psql failed: %s\n%s" % (r.stderr, sql[:2000]))
    return r.stdout


def flip(rng, fp, nbits):
    for b in rng.sample(range(64), nbits):
        fp ^= 1 << b
    return fp


class Table:
    """One table under test and the fingerprints it holds, by id."""

    def __init__(self, rng, name, clustered):
        self.rng = rng
        self.name = name
        self.clustered = clustered
        self.rows = {}
        self.next_id = 1
        self.centres = [rng.getrandbits(64) for _ in range(60)]

    def new_fp(self):
        r = self.rng.random()
        if r < 0.02:
            return None
        if self.clustered and r < 0.92:
            return flip(self.rng, self.rng.choice(self.centres), self.rng.randint(0, 6))
        return self.rng.getrandbits(64)

    def insert_sql(self, n):
        vals = []
        for _ in range(n):
            fp = self.new_fp()
            self.rows[self.next_id] = fp
            vals.append("(%d,%s)" % (self.next_id, "NULL" if fp is None else "'%016x'" % fp))
            self.next_id += 1
        return "INSERT INTO %s VALUES %s;\n" % (self.name, ",".join(vals))

    def update_sql(self, n):
        out = []
        for ident in self.rng.sample(sorted(self.rows), min(n, len(self.rows))):
            fp = self.new_fp()
            self.rows[ident] = fp
            out.append("UPDATE %s SET fp = %s WHERE id = %d;" %
                       (self.name, "NULL" if fp is None else "'%016x'" % fp, ident))
        return "\n".join(out) + "\n"

    def delete_sql(self, n):
        ids = self.rng.sample(sorted(self.rows), min(n, len(self.rows)))
        for ident in ids:
            del self.rows[ident]
        return "DELETE FROM %s WHERE id IN (%s);\n" % (self.name, ",".join(map(str, ids)) or "0")

    def queries(self, n):
        qs, ks = [], []
        fps = [fp for fp in self.rows.values() if fp is not None]
        for _ in range(n):
            if fps and self.rng.random() < 0.8:
                q = flip(self.rng, self.rng.choice(fps), self.rng.randint(0, 6))
            else:
                q = self.rng.getrandbits(64)
            qs.append("'%016x'" % q)
            ks.append(str(self.rng.randint(0, 12)))
        return "ARRAY[%s]::simhash64[]" % ",".join(qs), "ARRAY[%s]" % ",".join(ks)


def main():
    rng = random.Random(SEED)
    print("property check: seed %d, %d rounds, %d queries per table per round"
          % (SEED, ROUNDS, QUERIES))
    tables = [Table(rng, "pc_random", False), Table(rng, "pc_clustered", True)]
    setup = "CREATE EXTENSION IF NOT EXISTS simhash;\n" + CHECK_FUNCTION
    for t in tables:
        setup += "DROP TABLE IF EXISTS %s;\n" % t.name
        setup += "CREATE TABLE %s (id int8 PRIMARY KEY, fp simhash64) WITH (autovacuum_enabled = off);\n" % t.name
        setup += t.insert_sql(3000)
        setup += "CREATE INDEX %s_fp ON %s USING simhash (fp);\n" % (t.name, t.name)
    psql(setup)

    failures = 0
    for rnd in range(ROUNDS):
        script = ""
        for t in tables:
            # grow the table well past its size at CREATE INDEX
            for _ in range(rng.randint(1, 4)):
                op = rng.random()
                if op < 0.45:
                    script += t.insert_sql(rng.randint(1, 4000))
                elif op < 0.65:
                    script += t.update_sql(rng.randint(1, 300))
                elif op < 0.85:
                    script += t.delete_sql(rng.randint(1, 800))
                else:
                    script += "VACUUM %s;\n" % t.name
            if rng.random() < 0.3:
                # a transaction that sees its own inserts through the index
                script += "BEGIN;\n" + t.insert_sql(50) + \
                    "SELECT pc_compare('%s', %s, %s);\nCOMMIT;\n" % ((t.name,) + t.queries(3))
        bad = [line for line in psql(script).splitlines() if line.strip()]
        if bad:
            failures += len(bad)
            for line in bad[:5]:
                print("MISMATCH round %d (own inserts): %s" % (rnd, line[:400]))
        for t in tables:
            qs, ks = t.queries(QUERIES)
            out = psql("ANALYZE %s;\nSELECT * FROM pc_compare('%s', %s, %s);\n"
                       "SELECT simhash_index_check('%s_fp', true);\n"
                       % (t.name, t.name, qs, ks, t.name))
            bad = [line for line in out.splitlines() if line.strip()]
            if bad:
                failures += len(bad)
                for line in bad[:5]:
                    print("MISMATCH round %d table %s: %s" % (rnd, t.name, line[:400]))
        sizes = psql("SELECT string_agg(count::text, '/') FROM (%s) s" % " UNION ALL ".join(
            "SELECT count(*) FROM %s" % t.name for t in tables))
        print("round %d: rows %s, %d failures so far" % (rnd, sizes.strip(), failures))

    psql("".join("DROP TABLE %s;\n" % t.name for t in tables) +
         "DROP FUNCTION pc_compare(text, simhash64[], int[]);")
    print("property check: %d differences" % failures)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
