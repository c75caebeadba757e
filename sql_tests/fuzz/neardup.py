"""
neardup.py -- simhash_near_duplicate_trigger and simhash_fingerprint_trigger.

As the fuzz role, on tables it owns (schema fzown) in the UTF8, LATIN1 and
SQL_ASCII databases:

gen_trigger_args   one trigger with random and boundary arguments (k -2..66, the
                   integer limits, 'auto', garbage; quoted, odd-case, missing and
                   system columns, columns of every wrong type, too few and too many
                   arguments) and misused kinds (AFTER, FOR EACH STATEMENT, DELETE,
                   TRUNCATE, INSTEAD OF, deferred constraint triggers, WHEN), then
                   INSERT, UPDATE, DELETE and TRUNCATE: each statement fails with the
                   SQLSTATE of the definition's first defect (ndmodel.validate_*),
                   or behaves as the model says;
gen_trigger_dml    a valid pair of triggers on a plain or partitioned table (with
                   the index, without it, or with it on some partitions only), then
                   random INSERT (VALUES, SELECT, COPY, ON CONFLICT), UPDATE (moving
                   rows between partitions too), DELETE, VACUUM, transactions and
                   savepoint rollbacks: every statement's outcome and RETURNING rows
                   equal the model's (ndmodel.Table), and afterwards the rows of a
                   sequential scan, the fingerprints (the documented concat_ws
                   expression), no pair within k in reject and skip mode, an index
                   scan, and simhash_index_check(index, true) of every index.
"""
from .ndmodel import Table, validate_fingerprint, validate_neardup
from .runner import CaseFailure
from .scalar import check, need
from .spell import INT2, INT4, INT8, flip, hexfp, qlit

# Defects of src/ the fuzzer found, not fixed yet: the statements that trigger them are
# not run (and are counted in the summary) unless SIMHASH_FUZZ_KNOWN=1.  Each has a
# minimal reproduction in sql_tests/fuzz/known_failures.sql.
KNOWN_FAILURES = {}
SESSIONS = {"utf8": "fuzz", "latin1": "latin1", "sqlascii": "sqlascii"}
WORDS = {
    "utf8": "the quick brown fox jumps over lazy dog near duplicate text kernel 数据 文本 中文 カタカナ "
            "licence paragraph sentence word edit copy".split(),
    "latin1": "the quick brown fox jumps over lazy dog café naïve straße über señor déjà text copy "
              "paragraph sentence word edit".split(),
    "sqlascii": "the quick brown fox jumps over lazy dog near duplicate text kernel licence paragraph "
                "sentence word edit copy".split(),
}
K_VALUES = list(range(-2, 67)) + [INT2[1], INT2[1] + 1, INT4[0], INT4[1], INT4[1] + 1, INT8[1], 2 ** 64, 10 ** 30]
K_GARBAGE = ["auto", "AUTO", "Auto", "", " 3", "3 ", "+3", "-0", "3.5", "0x3", "NULL", "003", "065",
             "0000000000000000000000000003", "\u0663", "1e1", "three", "auto ", "64", "65"]

# verify= values: valid (0 to 1, digits with an optional point) and not
VERIFY_VALUES = ["0", "1", "0.7", ".5", "1.", "00.70", "1.0000", "0.99999999999999999999", "1.0000000000000001",
                 "1.01", "2", "-0.1", "+0.5", "NaN", "nan", "inf", "Infinity", "1e-1", " 0.7", "0.7 ", "",
                 ".", "0..5", "0.5.", "0,5", "\u0660.5", "0x0.8", "1/2"]

# the args case: one table with columns of every kind (name -> kind for ndmodel)
ARG_COLS = {"id": "int4", "fp": "fp", "FP": "fp", "dfp": "dfp", "g": "genfp", "body": "text",
            "title": "varchar", "dt": "dtext", "ch": "bpchar", "nm": "name", "n": "int4", "big": "int8",
            "sm": "int2", "num": "numeric", "js": "json", "pt": "point", "dup_of": "int4", "dup_d": "int4",
            "tenant": "text", "Mixed Case": "text"}
ARG_TABLE = ('CREATE TABLE fzown.ta (id int %s, fp simhash64, "FP" simhash64, dfp fzown.dfp, '
             "g simhash64 GENERATED ALWAYS AS (simhash(body)) STORED, body text, title varchar(200), "
             "dt fzown.dtext, ch char(5), nm name, n int, big int8, sm int2, num numeric, js json, pt point, "
             'dup_of int, dup_d int, tenant text, "Mixed Case" text)')
# trigger kinds: SQL, FOR EACH, the events it fires on, SQLSTATE of CREATE TRIGGER, fires well
KINDS = {
    "before_iu": ("BEFORE INSERT OR UPDATE", "ROW", {"INSERT", "UPDATE"}, None, True),
    "before_i": ("BEFORE INSERT", "ROW", {"INSERT"}, None, True),
    "before_u": ("BEFORE UPDATE", "ROW", {"UPDATE"}, None, True),
    "before_id": ("BEFORE INSERT OR DELETE", "ROW", {"INSERT", "DELETE"}, None, True),
    "after_iu": ("AFTER INSERT OR UPDATE", "ROW", {"INSERT", "UPDATE"}, None, False),
    "stmt": ("BEFORE INSERT OR UPDATE", "STATEMENT", {"INSERT", "UPDATE"}, None, False),
    "after_stmt_tt": ("AFTER INSERT", "STATEMENT", {"INSERT"}, None, False),     # REFERENCING NEW TABLE
    "delete": ("BEFORE DELETE", "ROW", {"DELETE"}, None, False),
    "truncate": ("BEFORE TRUNCATE", "STATEMENT", {"TRUNCATE"}, None, False),
    "truncate_row": ("BEFORE TRUNCATE", "ROW", set(), "0A000", False),
    "instead": ("INSTEAD OF INSERT", "ROW", set(), "42809", False),
    "deferred": ("AFTER INSERT", "ROW", {"INSERT"}, None, False),   # CONSTRAINT ... INITIALLY DEFERRED
}


def sql_val(v, kind):
    if v is None:
        return "NULL"
    if kind == "fp":
        return qlit(hexfp(v))
    if kind == "text":
        return qlit(v)
    return str(v)


def db_session(ctx, db):
    return ctx.r.s(SESSIONS[db])


def setup(runner):
    """Domains of the fuzz role in every database, and EXECUTE on the index check in the side ones."""
    for name in ("fuzz", "latin1", "sqlascii"):
        runner.s(name).ok("CREATE DOMAIN fzown.dtext AS text; CREATE DOMAIN fzown.dfp AS simhash64")


# --- trigger arguments -------------------------------------------------------

def render_ident(rng, name):
    """A column name as a trigger argument: (SQL, the string the trigger gets)."""
    r = rng.random()
    if name == "":
        return "''", ""
    if name == name.lower() and name.isidentifier() and r < 0.4:
        return name, name
    if name == name.lower() and name.isidentifier() and r < 0.55:
        return name.upper(), name                         # bare: folded to lower case
    if r < 0.7:
        return '"%s"' % name.replace('"', '""'), name     # quoted: kept
    if r < 0.8 and name != name.upper():
        return qlit(name.upper()), name.upper()           # a string: kept, so no such column
    return qlit(name), name


def random_column(rng):
    pool = list(ARG_COLS) + ["nosuch", "ctid", "xmin", "", "fp ", "Fp"]
    return rng.choice(pool)


def render_k(rng, k=None):
    """k as a trigger argument."""
    if k is None:
        r = rng.random()
        k = rng.choice(K_GARBAGE) if r < 0.25 else rng.choice(K_VALUES if r < 0.6 else list(range(0, 13)))
    if isinstance(k, str):
        return qlit(k), k
    if k >= 0 and rng.random() < 0.5:
        return str(k), str(k)               # an integer constant (a big one is read as a number string)
    return qlit(str(k)), str(k)


def column_list(rng, n=None):
    """A column list for scope= and text=, sometimes malformed."""
    names = [rng.choice(list(ARG_COLS) + ["nosuch"]) for _ in range(n or rng.randint(1, 2))]
    parts = []
    for name in names:
        if name.isidentifier() and name == name.lower():
            parts.append(rng.choice([name, name, name.upper(), '"%s"' % name]))
        else:
            parts.append('"%s"' % name.replace('"', '""'))
    s = rng.choice([",", ", ", " , "]).join(parts)
    r = rng.random()
    if r < 0.05:
        s = ""
    elif r < 0.1:
        s = s + ",,"
    elif r < 0.13:
        s = '"' + s
    elif r < 0.16:
        s = "Mixed Case"
    return s


def random_options(rng, action):
    opts = []
    for _ in range(rng.choice([0, 0, 1, 1, 2, 3, 4])):
        r = rng.random()
        if r < 0.25:
            opts.append(("'scope=%s'" % column_list(rng).replace("'", "''"), None))
        elif r < 0.4:
            opts.append(("'text=%s'" % column_list(rng).replace("'", "''"), None))
        elif r < 0.5:
            opts.append((qlit("verify=" + rng.choice(VERIFY_VALUES)), None))
        elif r < 0.55 or (action == "link" and r < 0.75):
            col = rng.choice(["dup_of", "dup_d", "n", "sm", "big", "id", "tenant", "fp", "g", "nosuch", "Dup_Of"])
            form = rng.choice(["link_key=", "link_distance=", "", ""])
            if form:
                # one identifier: folded, quoted, padded, or not one
                spelled = rng.choice([col, col, col.upper(), '"%s"' % col, " %s " % col, col + ",dup_d", ""])
                opts.append((qlit(form + spelled), None))
            else:
                opts.append(render_ident(rng, col))
        else:
            g = rng.choice(["bogus=1", "=", "SCOPE=tenant", "scope", "link", "reject", "k=3", "x" * 70,
                            "scope=tenant", "text=body", "link_key=", "text=", "scope=n", "VERIFY=0.5",
                            "verify", "verify=0.5"])
            opts.append((qlit(g), None))
    return [(sql, val if val is not None else sql[1:-1].replace("''", "'")) for sql, val in opts]


def random_neardup_args(rng, k=None, action=None):
    fp = rng.choice(["fp"] * 6 + ["FP", "dfp", "g", "body", "n", "nosuch", "ctid", "Fp"])
    args = [render_ident(rng, fp)]
    args.append(render_k(rng, k))
    action = action or rng.choice(["reject", "skip", "link"] * 4 + ["REJECT", "Skip", "ignore", "", "link "])
    args.append((action, action) if action.isidentifier() and action == action.lower() and rng.random() < 0.3
                else (qlit(action), action))
    args += random_options(rng, action.lower())
    if rng.random() < 0.08:
        args = args[:rng.randint(0, 2)]
    return args


def random_fingerprint_args(rng):
    n = rng.choice([0, 1, 2, 2, 2, 3, 4])
    cols = [rng.choice(["fp"] * 5 + ["FP", "dfp", "g", "body", "nosuch", "ctid"])]
    cols += [rng.choice(["body", "body", "title", "dt", "ch", "nm", "n", "fp", "js", "nosuch", "Mixed Case", "xmin"])
             for _ in range(n)]
    return [render_ident(rng, c) for c in cols[:max(n, 1)]]


def gen_trigger_args(ctx, rng, k=None, action=None, kind=None, which=None):
    """A trigger of random arguments and kind on a table of columns of every type, fired by
    INSERT, UPDATE, DELETE and TRUNCATE: the SQLSTATE of its first defect, or the model."""
    which = which or rng.choice(["neardup"] * 3 + ["fingerprint"])
    kind = kind or rng.choice(["before_iu"] * 8 + ["before_i", "before_u", "before_id"] + sorted(KINDS))
    args = random_neardup_args(rng, k, action) if which == "neardup" else random_fingerprint_args(rng)
    db = rng.choice(["utf8", "utf8", "latin1", "sqlascii"])
    if any(ord(c) > 127 for a in args for c in a[0]):
        db = "utf8"
    pk = rng.choice([["id"], ["id"], ["id"], [], ["id", "n"]])
    index = rng.choice(["fp", "fp", "fp", "none", "partial", "FP", "dfp", "g"])
    when = rng.random() < 0.1
    d = rng.choice([0, 1, 2, 3, 5, 8, 12, 64])
    fp1 = rng.getrandbits(64)
    tags = ["kind:trigger_args", "fn:" + which, "trig:" + kind, "db:" + db, "index:" + index, "pk:%s" % "+".join(pk),
            "when:%s" % when, "arg:" + ",".join(a[0] for a in args)]
    if which == "neardup" and len(args) > 1:
        tags.append("k:" + args[1][1])

    def run(ctx):
        sess = db_session(ctx, db)
        sess.ok("DROP TABLE IF EXISTS fzown.ta")
        pk_sql = "" if not pk else ("PRIMARY KEY" if pk == ["id"] else "")
        sess.ok(ARG_TABLE % pk_sql + ("" if pk != ["id", "n"] else "; ALTER TABLE fzown.ta ADD PRIMARY KEY (id, n)"))
        if index != "none":
            sess.ok("CREATE INDEX ON fzown.ta USING simhash (%s)%s" % (
                '"FP"' if index == "FP" else "fp" if index == "partial" else index,
                " WHERE n > 0" if index == "partial" else ""))
        timing, level, events, create_err, good = KINDS[kind]
        fn = "simhash_near_duplicate_trigger" if which == "neardup" else "simhash_fingerprint_trigger"
        create = "CREATE %sTRIGGER x %s ON fzown.ta %s%sFOR EACH %s %sEXECUTE FUNCTION %s(%s)" % (
            "CONSTRAINT " if kind == "deferred" else "", timing,
            "REFERENCING NEW TABLE AS nt " if kind == "after_stmt_tt" else "",
            "DEFERRABLE INITIALLY DEFERRED " if kind == "deferred" else "", level,
            "WHEN (NEW.n > 0) " if when and level == "ROW" and kind not in ("delete", "truncate_row", "before_id") else "",
            fn, ", ".join(a[0] for a in args))
        uses_when = "WHEN (" in create
        out = sess.run(create)
        if create_err:
            if out.ok:
                raise CaseFailure("accepted what it should reject", create)
            return None
        need(out, "CREATE TRIGGER")
        vals = [a[1] for a in args]
        if which == "neardup":
            err, cfg = validate_neardup(vals, ARG_COLS, pk, bool(vals) and index == vals[0])
            if not err and any(c == "g" for c in cfg.scope):
                err = "unmodeled"    # a generated scope column is NULL in BEFORE triggers
        else:
            err, cfg = validate_fingerprint(vals, ARG_COLS)
        if not good:
            err = "39P01"
        table = Table(pk=bool(pk))
        table.fp_col = vals[0] if vals else "fp"
        table.nd_events, table.fpt_events = set(), set()
        if err:
            table.nd_error = err
        elif which == "neardup":
            table.nd, table.nd_events = cfg, events
        else:
            table.fpt, table.fpt_events = cfg, events
        if table.fp_col == "g":
            table.generated = ["body"]
        statements(ctx, sess, rng, table, kind, level, events, err, fp1, d, uses_when, pk)
    return tags, run


def args_row(rng, i, fp, n):
    return {"id": i, "fp": fp, "FP": fp, "dfp": fp, "body": rng.choice(["a b c", "the quick brown fox", None, ""]),
            "title": rng.choice([None, "T"]), "dt": rng.choice([None, "d"]), "n": n, "sm": 1, "big": 2,
            "tenant": rng.choice(["a", "a", None]), "Mixed Case": rng.choice(["m", None]), "dup_of": None,
            "dup_d": None}


def statements(ctx, sess, rng, table, kind, level, events, err, fp1, d, uses_when, pk):
    """Fire the trigger of the args case: each outcome as the model says."""
    cols = ["id", "fp", "FP", "dfp", "body", "title", "dt", "n", "sm", "big", "tenant", "Mixed Case",
            "dup_of", "dup_d"]
    kinds = {"fp": "fp", "FP": "fp", "dfp": "fp", "body": "text", "title": "text", "dt": "text",
             "tenant": "text", "Mixed Case": "text"}
    qcols = ", ".join('"%s"' % c for c in cols)
    ret = table.fp_col if table.fp_col in ("fp", "FP", "dfp", "g") else "fp"
    unmodeled = err == "unmodeled"
    n1 = rng.choice([1, 1, 0]) if uses_when else 1
    rows = [args_row(rng, 1, fp1, n1), args_row(rng, 2, flip(rng, fp1, d), 1)]
    if uses_when and n1 <= 0:
        rows[0]["n"] = 0
    for r in rows:
        row = r
        sql = "INSERT INTO fzown.ta (%s) VALUES (%s) RETURNING id, %s::text, dup_of, dup_d" % (
            qcols, ", ".join(sql_val(row[c], kinds.get(c, "int")) for c in cols), '"%s"' % ret)
        out = sess.run(sql)
        fires = "INSERT" in events and not (uses_when and row["n"] <= 0)
        if fires and err and not unmodeled:
            expect_code(out, err, sql)
            continue
        if unmodeled:
            continue
        code, stored = fire(table, fires, lambda: table.insert([row]))
        compare_outcome(out, code, stored, table, sql, ("id", ret, "dup_of", "dup_d"))
    if unmodeled:
        return
    # UPDATE (statement triggers fire even on no row), DELETE, TRUNCATE
    fp_new = rng.choice([fp1, flip(rng, fp1, rng.randint(0, 6)), None])
    key = rng.choice([1, 2, 99])
    sql = "UPDATE fzown.ta SET fp = %s, body = 'x y' WHERE id = %d" % (sql_val(fp_new, "fp"), key)
    out = sess.run(sql)
    hit = [r for r in table.rows if r["id"] == key and (not uses_when or (r.get("n") or 0) > 0)]
    fires = "UPDATE" in events and (level == "STATEMENT" or bool(hit))
    if fires and err:
        expect_code(out, err, sql)
    else:
        code = fire(table, fires, lambda: table.update(key, {"fp": fp_new, "body": "x y"}))[0]
        if code:
            expect_code(out, code, sql)
        else:
            need(out, sql)
    sql = "DELETE FROM fzown.ta WHERE id = 2"
    out = sess.run(sql)
    if "DELETE" in events and any(r["id"] == 2 for r in table.rows):
        expect_code(out, "39P01", sql)
    elif not uses_when:
        need(out, sql)
    out = sess.run("TRUNCATE fzown.ta")
    if "TRUNCATE" in events:
        expect_code(out, "39P01", "TRUNCATE")
    else:
        need(out, "TRUNCATE")


def fire(table, fires, fn):
    """fn() on the model, with the triggers off if they do not fire."""
    saved = table.nd_events, table.fpt_events
    if not fires:
        table.nd_events, table.fpt_events = set(), set()
    try:
        return fn()
    finally:
        table.nd_events, table.fpt_events = saved


def expect_code(out, code, what):
    if out.ok:
        raise CaseFailure("accepted what it should reject", "%s succeeded; SQLSTATE %s expected" % (what[:300], code))
    if out.code != code:
        raise CaseFailure("unexpected error %s" % out.code, "%s: %s (expected %s)" % (what[:300], out.msg, code),
                          out.code)


def compare_outcome(out, code, stored, table, sql, cols):
    """A statement's outcome against the model's: the SQLSTATE, or the RETURNING rows."""
    if code is not None:
        return expect_code(out, code, sql)
    rows = need(out, sql[:300])
    want = sorted((r.get("id"), None if r.get(cols[1]) is None else hexfp(r[cols[1]]), r.get("dup_of"),
                   r.get("dup_d")) for r in stored)
    got = sorted(tuple(r) for r in rows)
    check(got == want, "wrong result", "%s\n  returned %r\n  model    %r" % (sql[:600], got[:20], want[:20]))


# --- scenarios ---------------------------------------------------------------

def sweep_specs():
    """Every k of -2..66, the limits and the garbage, with each action; every trigger kind."""
    specs = []
    actions = ["reject", "skip", "link"]
    for n, k in enumerate(K_VALUES + K_GARBAGE):
        specs.append(dict(gen=gen_trigger_args, args=dict(k=k, action=actions[n % 3], kind="before_iu",
                                                          which="neardup")))
    for n, kind in enumerate(sorted(KINDS)):
        specs.append(dict(gen=gen_trigger_args, args=dict(k=3, action=actions[n % 3], kind=kind,
                                                          which="neardup")))
        specs.append(dict(gen=gen_trigger_args, args=dict(kind=kind, which="fingerprint")))
    for n in range(12):
        specs.append(dict(gen=gen_trigger_dml_spec, args=dict(n=n)))
    return specs


def gen_trigger_dml_spec(ctx, rng, n):
    """The sweep's scenarios: each action in each database, plain and partitioned."""
    from .ndscenario import gen_trigger_dml
    return gen_trigger_dml(ctx, rng, action=["reject", "skip", "link"][n % 3],
                           db=["utf8", "latin1", "sqlascii"][(n // 3) % 3], partitioned=n % 2 == 1)


def gen_trigger_dml(ctx, rng):
    from .ndscenario import gen_trigger_dml as gen
    return gen(ctx, rng)

