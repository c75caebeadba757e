"""
ndscenario.py -- random DML into a table carrying the near-duplicate trigger (and the
fingerprint trigger or a generated fingerprint), against ndmodel.Table.

See neardup.py for what a scenario checks.
"""
import io

from .ndmodel import NearDupConfig, Table
from .neardup import KNOWN_FAILURES, SESSIONS, WORDS, compare_outcome, expect_code
from .runner import CaseFailure
from .scalar import check, need
from .spell import dist, flip, hexfp, qlit

COLS = ["id", "fp", "body", "title", "tenant", "site", "dup_of", "dup_d"]
TYPES = {"id": "int", "fp": "simhash64", "body": "text", "title": "varchar", "tenant": "int", "site": "text",
         "dup_of": "int", "dup_d": "int"}
RETURNING = " RETURNING id, fp::text, dup_of, dup_d"


def part_of(i):
    return None if i is None else ("a" if i < 50 else "b" if i < 100 else "d")


def lit(col, v):
    if v is None:
        return "NULL"
    if col == "fp":
        return qlit(hexfp(v))
    if col in ("body", "title", "site"):
        return qlit(v)
    return str(v)


def copy_field(v, col):
    if v is None:
        return "\\N"
    if col == "fp":
        return hexfp(v)
    return str(v).replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


class Scenario:
    """The random choices of one scenario, and its row generator."""

    def __init__(self, rng, action, db, partitioned):
        self.rng = rng
        self.action, self.db, self.partitioned = action, db, partitioned
        self.src = rng.choice(["given", "given", "trigger", "trigger", "generated"])
        self.k = "auto" if rng.random() < 0.2 else rng.choice([0, 1, 2, 3, 3, 4, 5, 6, 8, 12, 20, 64])
        self.text = ["body"] if self.src == "generated" or rng.random() < 0.6 else ["body", "title"]
        self.verify = rng.choice(["0", "0.3", "0.5", ".7", "0.9", "1"]) if rng.random() < 0.3 else None
        self.scope = rng.choice([[], [], ["tenant"], ["tenant", "site"]])
        self.link = rng.choice(["positional", "named", "key", "dist", "positional_one"]) if action == "link" else None
        self.pk = not (self.link in (None, "dist") and rng.random() < 0.2)
        self.index = rng.choice(["all"] * 10 + ["none", "partial"] + (["some"] if partitioned else []))
        self.events = {"INSERT", "UPDATE"} if rng.random() < 0.85 else {"INSERT"}
        self.isolation = rng.choice(["", "", "", " ISOLATION LEVEL REPEATABLE READ", " ISOLATION LEVEL SERIALIZABLE"])
        words = WORDS[db]
        self.words = words
        self.bases = [[rng.choice(words) for _ in range(rng.randint(3, 25))] for _ in range(rng.randint(1, 3))]
        self.centres = [rng.getrandbits(64) for _ in range(rng.randint(1, 3))]
        self.next_id = rng.randint(1, 60)
        self.run_known = False
        self.avoided = []

    def trigger_args(self):
        args = ["fp", qlit(str(self.k)) if self.k == "auto" or self.rng.random() < 0.5 else str(self.k),
                qlit(self.action)]
        if self.scope:
            args.append(qlit("scope=" + ",".join(self.scope)))
        if self.k == "auto" or self.verify is not None:
            args.append(qlit("text=" + ",".join(self.text)))
        if self.verify is not None:
            args.append(qlit("verify=" + self.verify))
        key, dist_col = {"positional": ("dup_of", "dup_d"), "named": ("dup_of", "dup_d"), "key": ("dup_of", None),
                         "dist": (None, "dup_d"), "positional_one": ("dup_of", None), None: (None, None)}[self.link]
        if self.link in ("positional", "positional_one"):
            args += [c for c in (key, dist_col) if c]
        elif self.link == "named":
            args += [qlit("link_distance=dup_d"), qlit("link_key=dup_of")]
        elif self.link == "key":
            args.append(qlit("link_key=dup_of"))
        elif self.link == "dist":
            args.append(qlit("link_distance=dup_d"))
        cfg = NearDupConfig(self.k, self.action, self.scope,
                            self.text if self.k == "auto" or self.verify is not None else [], key, dist_col,
                            float(self.verify) if self.verify is not None else None)
        return args, cfg

    def text_value(self):
        rng = self.rng
        r = rng.random()
        if r < 0.06:
            return None
        if r < 0.1:
            return rng.choice(["", "!!!", " ... "])
        if r < 0.8:
            words = list(rng.choice(self.bases))
            for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
                op = rng.random()
                if op < 0.4 and words:
                    words[rng.randrange(len(words))] = rng.choice(self.words)
                elif op < 0.7:
                    words.insert(rng.randint(0, len(words)), rng.choice(self.words))
                elif words:
                    del words[rng.randrange(len(words))]
            return " ".join(words)
        return " ".join(rng.choice(self.words) for _ in range(rng.randint(1, 30)))

    def fp_value(self):
        rng = self.rng
        r = rng.random()
        if r < 0.05:
            return None
        if r < 0.85:
            kk = self.k if isinstance(self.k, int) else 10
            return flip(rng, rng.choice(self.centres), rng.randint(0, min(kk + 3, 64)))
        return rng.getrandbits(64)

    def fresh_id(self):
        self.next_id += self.rng.randint(1, 15)
        return self.next_id

    def row(self, table, dup_ok=True):
        rng = self.rng
        existing = [r["id"] for r in table.rows]
        if self.pk and dup_ok and existing and rng.random() < 0.1:
            i = rng.choice(existing)
        elif self.pk and dup_ok and rng.random() < 0.01:
            i = None
        else:
            i = self.fresh_id()
        return {"id": i, "fp": self.fp_value() if self.src != "generated" else None,
                "body": self.text_value(), "title": self.text_value() if rng.random() < 0.4 else None,
                "tenant": rng.choice([1, 1, 2, None]), "site": rng.choice(["a", "a", "b", None]),
                "dup_of": rng.choice([None, None, 7]), "dup_d": None}


def create(sess, sc):
    """The table, its index and its triggers; the model."""
    sess.ok("DROP TABLE IF EXISTS fzown.nd CASCADE")
    gen = " GENERATED ALWAYS AS (simhash(body)) STORED" if sc.src == "generated" else ""
    sess.ok("CREATE TABLE fzown.nd (id int%s, fp simhash64%s, body text, title varchar(2000), tenant int, site text, "
            "dup_of int, dup_d int)%s" % (" PRIMARY KEY" if sc.pk else "", gen,
                                          " PARTITION BY RANGE (id)" if sc.partitioned else ""))
    if sc.partitioned:
        sess.ok("CREATE TABLE fzown.nd_a PARTITION OF fzown.nd FOR VALUES FROM (MINVALUE) TO (50); "
                "CREATE TABLE fzown.nd_b PARTITION OF fzown.nd FOR VALUES FROM (50) TO (100); "
                "CREATE TABLE fzown.nd_d PARTITION OF fzown.nd DEFAULT")
    if sc.index == "all":
        sess.ok("CREATE INDEX nd_fp ON fzown.nd USING simhash (fp)")
    elif sc.index == "partial":
        sess.ok("CREATE INDEX nd_fp ON fzown.nd USING simhash (fp) WHERE tenant IS NOT NULL")
    elif sc.index == "some":
        sess.ok("CREATE INDEX nd_fp ON ONLY fzown.nd USING simhash (fp); "
                "CREATE INDEX nd_a_fp ON fzown.nd_a USING simhash (fp)")
    if sc.src == "trigger":
        sess.ok("CREATE TRIGGER a_fp BEFORE INSERT OR UPDATE ON fzown.nd FOR EACH ROW "
                "EXECUTE FUNCTION simhash_fingerprint_trigger(fp, %s)" % ", ".join(sc.text))
    args, cfg = sc.trigger_args()
    sess.ok("CREATE TRIGGER b_nd BEFORE %s ON fzown.nd FOR EACH ROW EXECUTE FUNCTION "
            "simhash_near_duplicate_trigger(%s)" % (" OR ".join(sorted(sc.events)), ", ".join(args)))
    return Table(fpt=("fp", sc.text) if sc.src == "trigger" else None,
                 generated=["body"] if sc.src == "generated" else None, nd=cfg,
                 nd_error=None if sc.index == "all" else "42704", pk=sc.pk,
                 part_of=part_of if sc.partitioned else None, nd_events=sc.events)


def insert_statement(sess, sc, table, form):
    """An INSERT of a batch in some form; compared with the model."""
    rng = sc.rng
    rows = [sc.row(table, dup_ok=form != "copy" or sc.pk) for _ in range(rng.choice([1, 1, 2, 3, 5, 10, 30]))]
    cols = [c for c in COLS if not (c == "fp" and sc.src == "generated")]
    qcols = ", ".join(cols)
    vals = ["(%s)" % ", ".join(lit(c, r[c]) for c in cols) for r in rows]
    conflict = None
    if form == "copy":
        data = io.StringIO("".join("\t".join(copy_field(r[c], c) for c in cols) + "\n" for r in rows))
        out = sess.run("COPY fzown.nd (%s) FROM STDIN" % qcols, copy_data=data)
        code, _ = table.insert(rows)
        if code:
            return expect_code(out, code, "COPY")
        return need(out, "COPY")
    if form == "select":
        typed = ["(%d, %s)" % (n, ", ".join("%s::%s" % (lit(c, r[c]), TYPES[c]) for c in cols))
                 for n, r in enumerate(rows)]
        sql = "INSERT INTO fzown.nd (%s) SELECT %s FROM (VALUES %s) v(o, %s) ORDER BY o" % (
            qcols, qcols, ", ".join(typed), qcols)
    else:
        sql = "INSERT INTO fzown.nd (%s) VALUES %s" % (qcols, ", ".join(vals))
    if form == "nothing":
        sql += " ON CONFLICT (id) DO NOTHING"
        conflict = "nothing"
    elif form == "update":
        conflict = ["body", "tenant"] + (["fp"] if sc.src != "generated" else [])
        sql += " ON CONFLICT (id) DO UPDATE SET " + ", ".join("%s = EXCLUDED.%s" % (c, c) for c in conflict)
    sql += RETURNING
    out = sess.run(sql)
    code, stored = table.insert(rows, conflict)
    compare_outcome(out, code, stored, table, sql, ("id", "fp", "dup_of", "dup_d"))


def update_statement(sess, sc, table):
    rng = sc.rng
    if not table.rows:
        return
    old = rng.choice(table.rows)
    sets = {}
    for col in rng.sample(["fp", "body", "tenant", "site", "id", "title"], rng.randint(1, 2)):
        if col == "fp" and sc.src != "generated":
            others = [r["fp"] for r in table.rows if r["fp"] is not None]
            sets["fp"] = flip(rng, rng.choice(others), rng.randint(0, 4)) if others and rng.random() < 0.6 \
                else sc.fp_value()
        elif col in ("body", "title"):
            sets[col] = sc.text_value()
        elif col == "tenant":
            sets[col] = rng.choice([1, 2, None])
        elif col == "site":
            sets[col] = rng.choice(["a", "b", None])
        elif col == "id" and sc.partitioned and sc.pk:
            sets["id"] = rng.choice([rng.randint(0, 49), rng.randint(50, 99), rng.randint(100, 300)])
    if not sets:
        return
    if "site" in sc.scope and "site" in sets and sets["site"] is None and old["site"] is not None \
            and "UPDATE" in sc.events and sc.index == "all" and avoid_known(sc, "scope_null_update"):
        return
    sql = "UPDATE fzown.nd SET %s WHERE id = %d%s" % (", ".join("%s = %s" % (c, lit(c, v)) for c, v in sets.items()),
                                                      old["id"], RETURNING)
    out = sess.run(sql)
    code, stored = table.update(old["id"], sets)
    compare_outcome(out, code, stored, table, sql, ("id", "fp", "dup_of", "dup_d"))


def delete_statement(sess, sc, table):
    ids = sorted({r["id"] for r in sc.rng.sample(table.rows, min(len(table.rows), sc.rng.randint(1, 4)))})
    if not ids:
        return
    sql = "DELETE FROM fzown.nd WHERE id IN (%s) RETURNING id" % ", ".join(map(str, ids))
    out = sess.run(sql)
    code, gone = table.delete(set(ids))
    if code:
        return expect_code(out, code, sql)
    check(sorted(need(out, sql)) == sorted((r["id"],) for r in gone), "wrong result", "%s: %r" % (sql, out.rows))


def avoid_known(sc, name):
    """True (and counted) if a known failure is not to be run (neardup.KNOWN_FAILURES)."""
    if sc.run_known or name not in KNOWN_FAILURES:
        return False
    sc.avoided.append(name)
    return True


def dml_statement(sess, sc, table):
    r = sc.rng.random()
    if r < 0.55:
        forms = ["values", "values", "select", "copy"] + (["nothing", "update"] if sc.pk else [])
        insert_statement(sess, sc, table, sc.rng.choice(forms))
    elif r < 0.85:
        update_statement(sess, sc, table)
    else:
        delete_statement(sess, sc, table)


def transaction(sess, sc, table):
    """BEGIN, statements, a savepoint rolled back or released, COMMIT or ROLLBACK."""
    rng = sc.rng
    need(sess.run("BEGIN" + sc.isolation), "BEGIN")
    table.begin()
    for _ in range(rng.randint(1, 3)):
        dml_statement(sess, sc, table)
    if rng.random() < 0.7:
        out = sess.run("SAVEPOINT s")
        if table.aborted:
            expect_code(out, "25P02", "SAVEPOINT")
        else:
            need(out, "SAVEPOINT")
            table.set_savepoint()
        for _ in range(rng.randint(1, 3)):
            dml_statement(sess, sc, table)
        if rng.random() < 0.6:
            out = sess.run("ROLLBACK TO SAVEPOINT s")
            code = table.rollback_to()
            if code:
                expect_code(out, code, "ROLLBACK TO SAVEPOINT")
            else:
                need(out, "ROLLBACK TO SAVEPOINT")
        else:
            out = sess.run("RELEASE SAVEPOINT s")
            if table.aborted:
                expect_code(out, "25P02", "RELEASE")
            else:
                need(out, "RELEASE")
                table.savepoint = None
        for _ in range(rng.randint(0, 2)):
            dml_statement(sess, sc, table)
    commit = rng.random() < 0.75
    need(sess.run("COMMIT" if commit else "ROLLBACK"), "end of transaction")
    table.end(commit)


def verify(sess, sc, table):
    """The rows of a sequential scan, the invariants, an index scan, simhash_index_check."""
    sess.ok("SET enable_indexscan = off; SET enable_bitmapscan = off")
    rows = need(sess.run("SELECT id, fp::text, body, title, tenant, site, dup_of, dup_d FROM fzown.nd"), "final rows")
    sess.ok("RESET enable_indexscan; RESET enable_bitmapscan")
    got = sorted(tuple(r) for r in rows)
    want = sorted((r["id"], None if r["fp"] is None else hexfp(r["fp"]), r["body"], r["title"], r["tenant"],
                   r["site"], r["dup_of"], r["dup_d"]) for r in table.rows)
    if got != want:
        diff_g = [r for r in got if r not in want][:5]
        diff_w = [r for r in want if r not in got][:5]
        raise CaseFailure("wrong result", "rows after the scenario differ from the model:\n  only in the table %r\n"
                          "  only in the model %r" % (diff_g, diff_w))
    if sc.src == "trigger":
        out = sess.run("SELECT count(*) FROM fzown.nd WHERE fp IS DISTINCT FROM CASE WHEN num_nonnulls(%s) > 0 "
                       "THEN simhash(concat_ws(E'\\n', %s)) END" % (", ".join(sc.text), ", ".join(sc.text)))
        check(need(out, "fingerprints") == [(0,)], "wrong result", "fingerprint trigger: %r rows differ from "
              "the documented concat_ws expression" % out.rows)
    if sc.action in ("reject", "skip") and sc.k != "auto" and sc.index == "all" and "UPDATE" in sc.events:
        scope = "".join(" AND a.%s = b.%s" % (c, c) for c in sc.scope)
        if sc.verify is not None:
            # with verify=, only pairs whose texts (both non-NULL) are that similar
            def text_of(t):
                return "concat_ws(E'\\n', %s)" % ", ".join("%s.%s" % (t, c) for c in sc.text)
            scope += " AND num_nonnulls(%s) > 0 AND num_nonnulls(%s) > 0 AND simhash_jaccard(%s, %s) >= %s" % (
                ", ".join("a." + c for c in sc.text), ", ".join("b." + c for c in sc.text),
                text_of("a"), text_of("b"), sc.verify)
        out = sess.run("SELECT count(*) FROM fzown.nd a JOIN fzown.nd b ON a.id < b.id AND a.fp <-> b.fp <= %d%s"
                       % (sc.k, scope))
        check(need(out, "pairs within k") == [(0,)], "wrong result", "%s mode: %r pairs within %d" %
              (sc.action, out.rows, sc.k))
    if sc.index == "all" and table.rows:
        q = sc.rng.choice([r["fp"] for r in table.rows if r["fp"] is not None] or [0])
        sess.ok("SET enable_seqscan = off")
        out = sess.run("SELECT id FROM fzown.nd WHERE fp <-> %s <= 3 ORDER BY id" % qlit(hexfp(q)))
        sess.ok("RESET enable_seqscan")
        want = sorted((r["id"],) for r in table.rows if r["fp"] is not None and dist(r["fp"], q) <= 3)
        check(need(out, "index scan") == want, "wrong result", "index scan after the scenario: %r, model %r"
              % (out.rows[:10], want[:10]))
    idx = need(sess.run("SELECT c.oid::regclass::text FROM pg_class c JOIN pg_am a ON a.oid = c.relam "
                        "WHERE a.amname = 'simhash' AND c.relkind = 'i' AND c.relnamespace = 'fzown'::regnamespace "
                        "AND c.relname LIKE 'nd%'"), "indexes")
    for (name,) in idx:
        need(sess.run("SELECT simhash_index_check('%s', true)" % name), "simhash_index_check(%s)" % name)


def gen_trigger_dml(ctx, rng, action=None, db=None, partitioned=None):
    """Random DML into a table carrying the triggers, against the model."""
    action = action or rng.choice(["reject", "skip", "link"])
    db = db or rng.choice(["utf8", "utf8", "utf8", "latin1", "sqlascii"])
    partitioned = rng.random() < 0.4 if partitioned is None else partitioned
    sc = Scenario(rng, action, db, partitioned)
    tags = ["kind:trigger_dml", "fn:" + action, "db:" + db, "part:%s" % partitioned, "src:" + sc.src,
            "k:%s" % sc.k, "verify:%s" % sc.verify, "scope:" + ",".join(sc.scope), "index:" + sc.index,
            "link:%s" % sc.link, "pk:%s" % sc.pk, "events:" + ",".join(sorted(sc.events))]

    def run(ctx):
        sc.run_known = ctx.config.known
        sess = ctx.r.s(SESSIONS[db])
        table = create(sess, sc)
        for _ in range(rng.randint(3, 9)):
            r = rng.random()
            if r < 0.25:
                transaction(sess, sc, table)
            elif r < 0.3:
                need(sess.run("VACUUM fzown.nd"), "VACUUM")
            else:
                dml_statement(sess, sc, table)
        verify(sess, sc, table)
        for name in sc.avoided:
            ctx.r.known[name] = ctx.r.known.get(name, 0) + 1
    return tags, run
