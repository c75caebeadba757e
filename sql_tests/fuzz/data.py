"""
data.py -- the fuzz databases, roles and tables, and the Python model of their rows.

The superuser creates everything; the fuzz role (simhash_fuzz: LOGIN, not a
superuser) may write some tables and only read others, and owns the schema
fzown for its scratch tables; the read-only role (simhash_fuzz_ro) has SELECT
and nothing else, not even EXECUTE on the inspection functions.  Table s has
row-level security: each role sees only the rows it owns, and most rows
belong to nobody who logs in.

The model is what a sequential scan returns: after every DML round the
superuser reads the changed tables again with index scans disabled.
"""
import glob
import io
import os
import random

from .spell import MASK, SPECIAL_FPS, flip, hexfp, qlit

DB = "simhash_fuzz"
DB_LATIN1 = "simhash_fuzz_latin1"
DB_SQLASCII = "simhash_fuzz_sqlascii"
FUZZ = "simhash_fuzz"
RO = "simhash_fuzz_ro"
OTHER = "simhash_fuzz_nobody"       # owns hidden rows of s; cannot log in

# name: (rows, distribution, writable by the fuzz role)
TABLES = {
    "u": (2000, "uniform", True),
    "c": (3000, "clustered", True),
    "p": (3000, "clustered", True),     # partitioned by range of id
    "s": (3000, "clustered", True),     # row-level security
    "d": (0, "docs", False),            # real text, fp generated; SELECT only
    "z": (500, "identical", True),      # one fingerprint, and NULLs
    "e": (0, "empty", True),
    "ja": (400, "clustered", True),     # join sides
    "jb": (300, "clustered", True),
}
INSPECT_FUNCS = ["simhash_index_check(regclass, boolean)", "simhash_index_stats(regclass)",
                 "simhash_index_heavy_keys(regclass, int4)"]


class Model:
    """Rows per table: (id, fp or None, g, owner)."""

    def __init__(self):
        self.rows = {}
        self.centres = []
        self.texts = []         # (text, fp of simhash(text))
        self.balls = []         # (id, centre, radius)
        self.ks = []            # (id, qid, k2, k4, k8)
        self.qt = []            # (id, fp)

    def visible(self, table, user):
        """The rows a role sees, as (id, fp, g) triples."""
        if table == "vsb":
            return [r[:3] for r in self.rows["c"] if r[0] % 3 != 0]
        rows = self.rows[table]
        if table == "s" and user is not None:
            return [r[:3] for r in rows if r[3] == user]
        return [r[:3] for r in rows]

    def fps(self, table):
        return [r[1] for r in self.rows.get(table, []) if r[1] is not None]


def random_fp(rng, model, dist):
    """A fingerprint of the given distribution (None for NULL)."""
    r = rng.random()
    if r < 0.03:
        return None
    if dist == "identical":
        return model.centres[0] if r < 0.8 else (None if r < 0.9 else rng.choice(SPECIAL_FPS))
    if dist == "clustered" and r < 0.88:
        return flip(rng, rng.choice(model.centres), rng.choice([0, 0, 1, 1, 2, 3, 4, 5, 6, 8, 12]))
    if r < 0.95:
        return rng.getrandbits(64)
    return rng.choice(SPECIAL_FPS)


def copy_rows(rows):
    """COPY text data of (id, fp, g[, owner]) tuples."""
    out = io.StringIO()
    for row in rows:
        vals = []
        for i, v in enumerate(row):
            if v is None:
                vals.append("\\N")
            elif i == 1:
                vals.append(hexfp(v))
            else:
                vals.append(str(v))
        out.write("\t".join(vals) + "\n")
    out.seek(0)
    return out


def collect_documents(rng, n):
    """Real text any Debian machine has (see reference_check.py), and edited copies."""
    paths = sorted(glob.glob("/usr/share/doc/*/copyright"))
    paths += sorted(glob.glob("/usr/share/common-licenses/*"))
    docs = []
    for p in paths:
        if os.path.isfile(p):
            with open(p, "rb") as f:
                docs.append(f.read(40000).decode("utf-8", "replace"))
    for p in ("chinese", "song100", "tang300"):
        path = "/usr/share/games/fortunes/" + p
        if os.path.isfile(path):
            with open(path, "rb") as f:
                text = f.read().decode("utf-8", "replace")
            docs.extend(x.strip("\n") for x in text.split("\n%\n")[:200] if x.strip())
    docs = [d.replace("\x00", " ") for d in docs]
    rng.shuffle(docs)
    docs = docs[:n]
    edited = [edit_text(rng, d) for d in rng.sample(docs, min(len(docs), n // 2))]
    return docs + edited


def edit_text(rng, text):
    """A near-duplicate: a word replaced, a line dropped, or junk appended."""
    r = rng.random()
    words = text.split(" ")
    if r < 0.4 and len(words) > 3:
        words[rng.randrange(len(words))] = rng.choice(["kernel", "the", "数据", "licence", "foo"])
        return " ".join(words)
    lines = text.split("\n")
    if r < 0.7 and len(lines) > 2:
        del lines[rng.randrange(len(lines))]
        return "\n".join(lines)
    return text + rng.choice(["!!!", " appendix", " 附录", "\n-- \nsignature"])


def drop_all(admin_pg):
    """Remove what an earlier run may have left (admin_pg: a cursor on postgres)."""
    for db in (DB, DB_LATIN1, DB_SQLASCII):
        admin_pg.execute("DROP DATABASE IF EXISTS %s WITH (FORCE)" % db)
    for role in (FUZZ, RO, OTHER):
        admin_pg.execute("DROP ROLE IF EXISTS %s" % role)


def create_databases(admin_pg):
    admin_pg.execute("CREATE ROLE %s LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE" % FUZZ)
    admin_pg.execute("CREATE ROLE %s LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE" % RO)
    admin_pg.execute("CREATE ROLE %s NOLOGIN" % OTHER)
    for db, encoding in ((DB, "UTF8"), (DB_LATIN1, "LATIN1"), (DB_SQLASCII, "SQL_ASCII")):
        admin_pg.execute("CREATE DATABASE %s TEMPLATE template0 ENCODING '%s' LC_COLLATE 'C' LC_CTYPE 'C'"
                         % (db, encoding))
    for role in (FUZZ, RO):
        admin_pg.execute("ALTER ROLE %s SET search_path = fz, fzown, public" % role)


def setup_side_database(admin):
    """The LATIN1 and SQL_ASCII databases: the extension, a scratch schema."""
    admin.ok("CREATE EXTENSION simhash")
    admin.ok("CREATE SCHEMA fz; CREATE SCHEMA fzown AUTHORIZATION %s; GRANT USAGE ON SCHEMA fz TO %s, %s"
             % (FUZZ, FUZZ, RO))


def setup_tables(admin, rng, model):
    """Create, fill and index the tables of the UTF8 database."""
    admin.ok("CREATE EXTENSION simhash")
    admin.ok("CREATE SCHEMA fz; CREATE SCHEMA fzown AUTHORIZATION %s; "
             "GRANT USAGE ON SCHEMA fz TO %s, %s; ALTER DATABASE %s SET search_path = fz, public"
             % (FUZZ, FUZZ, RO, DB))
    admin.ok("SET search_path = fz, public")
    model.centres = [rng.getrandbits(64) for _ in range(40)]
    for name, (n, dist, _) in TABLES.items():
        if name == "p":
            admin.ok("CREATE TABLE p (id int PRIMARY KEY, fp simhash64, g int) PARTITION BY RANGE (id);"
                     "CREATE TABLE p1 PARTITION OF p FOR VALUES FROM (MINVALUE) TO (1000);"
                     "CREATE TABLE p2 PARTITION OF p FOR VALUES FROM (1000) TO (2000);"
                     "CREATE TABLE p3 PARTITION OF p FOR VALUES FROM (2000) TO (3001);"
                     "CREATE TABLE pd PARTITION OF p DEFAULT")
        elif name == "s":
            admin.ok("CREATE TABLE s (id int PRIMARY KEY, fp simhash64, g int, "
                     "owner name NOT NULL DEFAULT current_user)")
        elif name == "d":
            admin.ok("CREATE TABLE d (id int PRIMARY KEY, body text, g int, "
                     "fp simhash64 GENERATED ALWAYS AS (simhash(body)) STORED)")
        else:
            admin.ok("CREATE TABLE %s (id int PRIMARY KEY, fp simhash64, g int)" % name)
        rows = []
        for i in range(1, n + 1):
            row = (i, random_fp(rng, model, dist), rng.randrange(10))
            if name == "s":
                row += (rng.choice([FUZZ, FUZZ, RO, OTHER, OTHER, OTHER]),)
            rows.append(row)
        if rows:
            cols = "(id, fp, g, owner)" if name == "s" else "(id, fp, g)"
            admin.run("COPY %s %s FROM STDIN" % (name, cols), copy_data=copy_rows(rows))
    docs = collect_documents(rng, 500)
    data = io.StringIO("".join("%d\t%s\t%d\n" % (i + 1, d.replace("\\", "\\\\").replace("\t", "\\t")
                                                .replace("\n", "\\n").replace("\r", "\\r"), i % 10)
                               for i, d in enumerate(docs)))
    admin.run("COPY d (id, body, g) FROM STDIN", copy_data=data)

    # indexes: the fp columns, an expression index, options, a partitioned index
    admin.ok("CREATE INDEX u_fp ON u USING simhash (fp);"
             "CREATE INDEX c_fp ON c USING simhash (fp) WITH (fillfactor = 50);"
             "CREATE INDEX p_fp ON p USING simhash (fp);"
             "CREATE INDEX s_fp ON s USING simhash (fp);"
             "CREATE INDEX d_fp ON d USING simhash (fp) WITH (fillfactor = 100);"
             "CREATE INDEX d_body ON d USING simhash (simhash(body));"
             "CREATE INDEX z_fp ON z USING simhash (fp);"
             "CREATE INDEX e_fp ON e USING simhash (fp);"
             "CREATE INDEX ja_fp ON ja USING simhash (fp);"
             "CREATE INDEX jb_fp ON jb USING simhash (fp)")
    admin.ok("ALTER TABLE s ENABLE ROW LEVEL SECURITY;"
             "CREATE POLICY own ON s USING (owner = current_user)")
    admin.ok("CREATE VIEW vsb WITH (security_barrier) AS SELECT id, fp, g FROM c WHERE id % 3 <> 0")

    # the small sides of joins: centres, radii of every integer type, balls
    model.qt = [(i, flip(rng, rng.choice(model.centres), rng.randrange(4))) for i in range(1, 13)]
    model.qt.append((13, None))
    admin.ok("CREATE TABLE qt (id int PRIMARY KEY, fp simhash64)")
    admin.ok("INSERT INTO qt VALUES " + ",".join("(%d, %s)" % (i, "NULL" if fp is None else qlit(hexfp(fp)))
                                                 for i, fp in model.qt))
    radii = [-2147483648, -32768, -1, 0, 1, 2, 3, 4, 6, 9, 17, 32767, 2147483647, None]
    model.ks = []
    for i in range(1, 26):
        k = rng.choice(radii)
        k8 = rng.choice([k, -2 ** 63, 2 ** 63 - 1, 2 ** 31, k]) if k is not None else None
        k2 = k if k is not None and -32768 <= k <= 32767 else rng.choice([-32768, 32767, 5])
        model.ks.append((i, rng.randint(1, 13), k2, k, k8))
    admin.ok("CREATE TABLE ks (id int PRIMARY KEY, qid int, k2 int2, k4 int4, k8 int8)")
    admin.ok("INSERT INTO ks VALUES " + ",".join(
        "(%d, %d, %s)" % (i, q, ", ".join("NULL" if v is None else str(v) for v in (k2, k4, k8)))
        for i, q, k2, k4, k8 in model.ks))
    model.balls = []
    for i in range(1, 21):
        r = rng.choice(radii[:-1] + [64, 65, 100])
        model.balls.append((i, rng.choice(model.qt[:-1])[1], r))
    model.balls.append((21, None, None))
    admin.ok("CREATE TABLE balls (id int PRIMARY KEY, b simhash_ball)")
    admin.ok("INSERT INTO balls VALUES " + ",".join(
        "(%d, %s)" % (i, "NULL" if c is None else qlit("%s/%d" % (hexfp(c), r)))
        for i, c, r in model.balls))

    # privileges: write some tables, only read others; EXECUTE for the fuzz role only
    writable = [n for n, t in TABLES.items() if t[2]]
    admin.ok("GRANT SELECT ON ALL TABLES IN SCHEMA fz TO %s, %s" % (FUZZ, RO))
    admin.ok("GRANT INSERT, UPDATE, DELETE ON %s TO %s" % (", ".join(writable), FUZZ))
    for f in INSPECT_FUNCS:
        admin.ok("GRANT EXECUTE ON FUNCTION %s TO %s" % (f, FUZZ))
    for t in ["u", "c", "p1", "p2", "p3", "pd", "s", "d", "z", "e", "ja", "jb", "qt", "ks", "balls"]:
        admin.ok("ALTER TABLE %s SET (autovacuum_enabled = off)" % t)
    admin.ok("ANALYZE")

    # texts whose fingerprints centre some queries on d
    pool = [edit_text(rng, t) for t in rng.sample(docs, 30)]
    pool += ["", "the", "Hello, world!", "中文文本，没有空格。", "x" * 3000]
    fps = admin.ok("SELECT simhash(t)::bigint FROM unnest(ARRAY[%s]::text[]) WITH ORDINALITY u(t, n) ORDER BY n"
                   % ", ".join(qlit(t) for t in pool))
    model.texts = [(t, r[0] & MASK) for t, r in zip(pool, fps)]
    for name in TABLES:
        refresh(admin, model, name)


def refresh(admin, model, table):
    """Read a table's rows with a sequential scan into the model."""
    admin.ok("SET enable_indexscan = off; SET enable_bitmapscan = off")
    owner = "owner" if table == "s" else "NULL::name"
    rows = admin.ok("SELECT id, fp::bigint, g, %s FROM fz.%s" % (owner, table))
    admin.ok("RESET enable_indexscan; RESET enable_bitmapscan")
    model.rows[table] = sorted((r[0], None if r[1] is None else r[1] & MASK, r[2], r[3]) for r in rows)


def simhash_indexes(admin):
    """Names of the simhash indexes (with storage) of the UTF8 database."""
    rows = admin.ok("SELECT c.relname, c.relkind FROM pg_class c JOIN pg_am a ON a.oid = c.relam "
                    "WHERE a.amname = 'simhash' AND c.relnamespace = 'fz'::regnamespace")
    return [(r[0], r[1]) for r in rows]


def new_id(rng, model, table):
    ids = [r[0] for r in model.rows[table]]
    top = max(ids) if ids else 0
    return rng.choice([top + rng.randint(1, 50), rng.randint(1, max(top, 1) + 10)])


def dml_round(ctx, rng):
    """One DML round by the fuzz role, then VACUUM/ANALYZE and index checks by the superuser."""
    model = ctx.model
    fz = ctx.r.s("fuzz")
    admin = ctx.r.s("admin")
    writable = [n for n, t in TABLES.items() if t[2]]
    touched = rng.sample(writable, rng.randint(1, 3))
    for t in touched:
        txn = rng.random() < 0.6
        if txn:
            fz.run("BEGIN")
        for _ in range(rng.randint(1, 5)):
            dml_statement(ctx, rng, t)
        if txn and rng.random() < 0.4:
            fz.run("SAVEPOINT sp")
            dml_statement(ctx, rng, t)
            ctx.compare_in_transaction(rng, t)
            if rng.random() < 0.5:
                fz.run("RELEASE SAVEPOINT sp")
            else:
                # the rows of the aborted subtransaction are dead to everyone at once:
                # VACUUM may free their line pointers for the rows inserted next
                fz.run("ROLLBACK TO SAVEPOINT sp")
                if rng.random() < 0.5:
                    admin.ok("VACUUM fz.%s" % t)
                    dml_statement(ctx, rng, t, kind="insert")
        if txn:
            ctx.compare_in_transaction(rng, t)
            end = rng.random()
            if end < 0.1:
                # two-phase commit: the entries must be in the index before PREPARE returns
                fz.run("PREPARE TRANSACTION 'fz_dml'")
                admin.run("%s PREPARED 'fz_dml'" % rng.choice(["COMMIT", "ROLLBACK"]))
            else:
                fz.run("COMMIT" if end < 0.85 else "ROLLBACK")
    for t in touched:
        if rng.random() < 0.3:
            admin.ok("VACUUM %s fz.%s" % (rng.choice(["", "(INDEX_CLEANUP ON)", "(FREEZE)"]), t))
        if rng.random() < 0.3:
            admin.ok("ANALYZE fz.%s" % t)
    for name, kind in simhash_indexes(admin):
        if kind == "i" and (name.startswith(tuple(touched)) or rng.random() < 0.1):
            admin.ok("SELECT simhash_index_check('fz.%s', true)" % name)
    for t in touched:
        refresh(admin, model, t)


def finish_prepared(admin):
    """Roll back prepared transactions a failed case left in the fuzz database."""
    for (gid,) in admin.ok("SELECT gid FROM pg_prepared_xacts WHERE database = current_database()"):
        admin.run("ROLLBACK PREPARED '%s'" % gid)


def dml_statement(ctx, rng, t, kind=None):
    """One random INSERT, UPDATE, DELETE, upsert, COPY or DO block on table t."""
    model = ctx.model
    fz = ctx.r.s("fuzz")
    dist = TABLES[t][1]
    r = rng.random() if kind is None else 0.0
    owner = ""
    if t == "s":
        owner = rng.choice(["", "", "", ", owner = current_user", ", owner = '%s'" % OTHER])
    if r < 0.35:
        rows = [(new_id(rng, model, t), random_fp(rng, model, dist), rng.randrange(10))
                for _ in range(rng.randint(1, 40))]
        vals = ",".join("(%d, %s, %d)" % (i, "NULL" if fp is None else qlit(hexfp(fp)), g) for i, fp, g in rows)
        if t == "s" and rng.random() < 0.2:
            vals = ",".join("(%d, %s, %d, '%s')" % (i, "NULL" if fp is None else qlit(hexfp(fp)), g, OTHER)
                            for i, fp, g in rows)
            fz.run("INSERT INTO s (id, fp, g, owner) VALUES " + vals)   # 42501: the policy
        elif rng.random() < 0.3:
            fz.run("INSERT INTO %s (id, fp, g) VALUES %s ON CONFLICT (id) DO %s" %
                   (t, vals, rng.choice(["NOTHING", "UPDATE SET fp = EXCLUDED.fp", "UPDATE SET fp = NULL"])))
        else:
            fz.run("INSERT INTO %s (id, fp, g) VALUES %s" % (t, vals))
    elif r < 0.6:
        ids = [row[0] for row in model.rows[t]]
        if not ids:
            return
        pick = rng.sample(ids, min(len(ids), rng.randint(1, 20)))
        fp = random_fp(rng, model, dist)
        new = "NULL" if fp is None else qlit(hexfp(fp))
        if t == "p" and rng.random() < 0.3:
            fz.run("UPDATE p SET id = id + %d WHERE id IN (%s)" % (rng.choice([1000, -1000, 5000]),
                                                                   ",".join(map(str, pick))))
        else:
            fz.run("UPDATE %s SET fp = %s%s WHERE id IN (%s)" % (t, new, owner, ",".join(map(str, pick))))
    elif r < 0.8:
        ids = [row[0] for row in model.rows[t]]
        if not ids:
            return
        if rng.random() < 0.5:
            pick = rng.sample(ids, min(len(ids), rng.randint(1, 30)))
            fz.run("DELETE FROM %s WHERE id IN (%s)" % (t, ",".join(map(str, pick))))
        else:
            fps = model.fps(t) or [0]
            fz.run("DELETE FROM %s WHERE fp <-> %s <= %d" % (t, qlit(hexfp(rng.choice(fps))), rng.randint(0, 3)))
    elif r < 0.9:
        fps = model.fps(t) or [0]
        fz.run("UPDATE %s SET fp = (fp::int8 # %d)::simhash64 WHERE fp <@ simhash_ball(%s, %d)"
               % (t, 1 << rng.randrange(63), qlit(hexfp(rng.choice(fps))), rng.randint(0, 2)))
    elif r < 0.95:
        rows = [(new_id(rng, model, t), random_fp(rng, model, dist), rng.randrange(10))
                for _ in range(rng.randint(1, 200))]
        seen = set()
        rows = [x for x in rows if not (x[0] in seen or seen.add(x[0]))]
        fz.run("COPY %s (id, fp, g) FROM STDIN" % t, copy_data=copy_rows(rows))
    else:
        # a PL/pgSQL exception block is a subtransaction: its rows vanish with the error
        fps = [random_fp(rng, model, dist) for _ in range(rng.randint(1, 30))]
        top = max([row[0] for row in model.rows[t]], default=0) + rng.randint(100, 200)
        vals = ",".join("(%d, %s, 1)" % (top + i, "NULL" if fp is None else qlit(hexfp(fp)))
                        for i, fp in enumerate(fps))
        fail = rng.random() < 0.7
        fz.run("DO $$ BEGIN INSERT INTO %s (id, fp, g) VALUES %s; %s EXCEPTION WHEN raise_exception "
               "THEN NULL; END $$" % (t, vals, "RAISE EXCEPTION 'undo';" if fail else ""))


def fresh_rng(seed, *parts):
    return random.Random(":".join(str(p) for p in (seed,) + parts))
