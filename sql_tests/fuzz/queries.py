"""
queries.py -- radius, nearest-neighbour and join cases: index == sequential scan.

A case builds one query in random spellings, runs it in one mode (plain,
EXPLAIN, EXPLAIN ANALYZE, prepared with a custom or a generic plan) under
several planner settings (index scan, bitmap scan, sequential scan; for
joins the band join, its batches, nested loops, parallel plans), and judges
every outcome against the rows the Python model says a sequential scan
returns: the same rows, or one of the SQLSTATEs the values must raise.
"""
from .runner import CaseFailure
from .spell import (B_FORMS, EXTREMES, K_FORMS, Q_FORMS, RADII, SMALL_RADII, SPECIAL_FPS,
                    SPELLINGS, Query, and3, combine, dist, emit_parts, eq_cond, extra_filter, flip,
                    fits, k_parts, q_parts, radius_cond)
from . import data

SESSION_SETTINGS = {
    "index": ["SET enable_seqscan = off", "SET enable_bitmapscan = off"],
    "bitmap": ["SET enable_seqscan = off", "SET enable_indexscan = off"],
    "seq": ["SET enable_indexscan = off", "SET enable_bitmapscan = off"],
    "default": [],
}
PARALLEL = ["SET parallel_setup_cost = 0", "SET parallel_tuple_cost = 0",
            "SET min_parallel_table_scan_size = 0", "SET min_parallel_index_scan_size = 0",
            "SET max_parallel_workers_per_gather = 2"]
JOIN_SETTINGS = {
    "default": [],
    "band": ["SET enable_nestloop = off"],
    "band_batches": ["SET enable_nestloop = off", "SET work_mem = '64kB'"],
    "nestloop": ["SET simhash.enable_join = off", "SET enable_hashjoin = off",
                 "SET enable_mergejoin = off"],
    "nestloop_index": ["SET simhash.enable_join = off", "SET enable_hashjoin = off",
                       "SET enable_mergejoin = off", "SET enable_seqscan = off"],
    "parallel": PARALLEL + ["SET enable_nestloop = off"],
    "parallel_batches": PARALLEL + ["SET enable_nestloop = off", "SET work_mem = '64kB'"],
    "parallel_nestloop": PARALLEL + ["SET simhash.enable_join = off"],
    # force_parallel_mode became debug_parallel_query in PostgreSQL 16
    "force_parallel": ["SELECT set_config(CASE WHEN current_setting('server_version_num')::int"
                       " >= 160000 THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END,"
                       " 'on', false)"],
    "oracle": ["SET simhash.enable_join = off", "SET enable_indexscan = off",
               "SET enable_bitmapscan = off"],
}
MODES = ["direct", "direct", "explain", "analyze", "custom", "generic"]
RESTRICT_TABLES = ["c", "c", "p", "p", "s", "s", "u", "d", "z", "e", "vsb", "ja"]
HASH_MEM_MULTIPLIER = 2.0


class CountOnly:
    """The row count EXPLAIN ANALYZE reports, to compare with the expected rows."""

    def __init__(self, n):
        self.n = n

    def __repr__(self):
        return "%d rows (EXPLAIN ANALYZE)" % self.n


class Context:
    """What a case needs: the runner, the model, the configuration."""

    def __init__(self, runner, model, config):
        self.r = runner
        self.model = model
        self.config = config
        self.index_names = set()
        self.work_mem_kb = 4096

    def checking(self, name):
        """False if SIMHASH_FUZZ_SKIP names check:<name> (a known failure of an oracle)."""
        return {"check:" + name} not in self.config.skip

    def session_of(self, role):
        """The session of a role ("fuzz" or "ro") and the role's name."""
        return self.r.s(role), (data.RO if role == "ro" else data.FUZZ)

    # --- plans
    def note_plan(self, out):
        if out.ok and out.rows and isinstance(out.rows[0][0], list):
            self.walk_plan(out.rows[0][0][0]["Plan"], None, False)

    def walk_plan(self, plan, parent, gathered):
        nt = plan.get("Node Type")
        name = plan.get("Index Name")
        if name is not None and name in self.index_names:
            feature = nt
            if plan.get("Order By"):
                feature += " (nearest)"
            if parent == "Nested Loop" and plan.get("Parent Relationship") == "Inner":
                feature += " (inner side of a nested loop)"
            self.r.saw("simhash " + feature)
        if nt == "Custom Scan" and plan.get("Custom Plan Provider") == "SimhashJoin":
            self.r.saw("SimhashJoin")
            if gathered:
                self.r.saw("SimhashJoin under Gather")
            if plan.get("Batches", 1) > 1:
                self.r.saw("SimhashJoin in batches")
            mem = plan.get("Memory Usage")
            bound = self.work_mem_kb * HASH_MEM_MULTIPLIER
            if mem is not None and mem > bound * 1.25 + 32 and self.checking("joinmem"):
                raise CaseFailure("band join over its memory bound",
                                  "Memory Usage: %s kB, work_mem x hash_mem_multiplier = %d kB"
                                  % (mem, bound))
        if nt in ("Gather", "Gather Merge"):
            gathered = True
            self.r.saw("Gather")
        for sub in plan.get("Plans", []):
            self.walk_plan(sub, nt, gathered)

    # --- running a query in a mode
    def execute(self, sess, q, mode, rng, label):
        """Run q in mode; a list of (label, Outcome, comparable value or None)."""
        for pre in q.pre:
            sess.run(pre)
        if mode == "direct":
            out = sess.run(q.inline())
            return [(label, out, out.rows)]
        if mode == "explain":
            out = sess.run("EXPLAIN (FORMAT JSON) " + q.inline())
            self.note_plan(out)
            return [(label + " EXPLAIN", out, None)]
        if mode == "analyze":
            out = sess.run("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) " + q.inline())
            self.note_plan(out)
            value = CountOnly(out.rows[0][0][0]["Plan"]["Actual Rows"]) if out.ok else None
            return [(label + " EXPLAIN ANALYZE", out, value)]
        sess.run("SET plan_cache_mode = force_%s_plan" % mode)
        text, types, args = q.prepared()
        out = sess.run("PREPARE fz%s AS %s" % ("(%s)" % ", ".join(types) if types else "", text))
        if not out.ok:
            return [(label + " PREPARE", out, None)]
        ex = "EXECUTE fz" + ("(%s)" % ", ".join(args) if args else "")
        results = []
        if rng.random() < 0.4:
            plan = sess.run("EXPLAIN (FORMAT JSON) " + ex)
            self.note_plan(plan)
            results.append((label + " EXPLAIN EXECUTE", plan, None))
        out = sess.run(ex)
        results.append((label + " EXECUTE (%s plan)" % mode, out, out.rows))
        sess.run("DEALLOCATE fz")
        return results

    def apply(self, sess, settings):
        """Planner settings (one round trip), from the defaults."""
        sess.run("; ".join(["RESET ALL"] + settings))
        self.work_mem_kb = 64 if any(st.startswith("SET work_mem") for st in settings) else 4096

    def judge(self, results, expected, errs, lazy, value_of=None):
        """Every outcome is the expected value, or one of the expected errors."""
        values = []
        for label, out, raw in results:
            if not out.ok:
                if out.code in errs:
                    continue
                raise CaseFailure("unexpected error %s" % out.code, "%s: %s" % (label, out.msg), out.code)
            # EXPLAIN without ANALYZE evaluates nothing at run time
            executed = not label.endswith(("PREPARE", " EXPLAIN", "EXPLAIN EXECUTE"))
            if errs and not lazy and executed:
                raise CaseFailure("accepted what it should reject",
                                  "%s succeeded; SQLSTATE %s expected" % (label, "/".join(sorted(errs))))
            if raw is None:
                continue
            value = raw if isinstance(raw, CountOnly) else (value_of(raw) if value_of else raw)
            values.append((label, value))
        for label, value in values:
            if isinstance(value, CountOnly):
                if expected is not None and value.n != len(expected):
                    raise CaseFailure("wrong result", "%s: %d rows, expected %d" % (label, value.n, len(expected)))
                continue
            want = expected if expected is not None else values[0][1]
            if value != want:
                raise CaseFailure("wrong result", "%s: %s" % (label, difference(value, want)))

    def compare_in_transaction(self, rng, table):
        """Inside an open transaction: the index sees what a sequential scan sees."""
        fz = self.r.s("fuzz")
        fps = self.model.fps(table) or [0]
        q = "%016x" % flip(rng, rng.choice(fps), rng.randint(0, 3))
        k = rng.randint(0, 6)
        sql = "SELECT id FROM %s WHERE fp <-> '%s' <= %d ORDER BY id" % (table, q, k)
        knn = "SELECT fp <-> '%s' FROM %s ORDER BY fp <-> '%s' LIMIT 15" % (q, table, q)
        res = []
        for setting in ("index", "seq"):
            fz.run("SET LOCAL enable_seqscan = %s; SET LOCAL enable_bitmapscan = off; "
                   "SET LOCAL enable_indexscan = %s" % (("off", "on") if setting == "index" else ("on", "off")))
            res.append((fz.run(sql), fz.run(knn)))
        if all(a.ok and b.ok for a, b in res):
            if res[0][0].rows != res[1][0].rows:
                raise CaseFailure("wrong result", "in a transaction, index scan: %s"
                                  % difference(res[0][0].rows, res[1][0].rows))
            if res[0][1].rows != res[1][1].rows:
                raise CaseFailure("wrong result", "in a transaction, nearest: %s"
                                  % difference(res[0][1].rows, res[1][1].rows))


def difference(got, want):
    """A readable difference of two results."""
    if isinstance(got, list) and isinstance(want, list) and len(got) == len(want) == 1:
        return "got %r, expected %r" % (got[0], want[0])
    if isinstance(got, list) and isinstance(want, list):
        gs, ws = set(map(repr, got)), set(map(repr, want))
        extra = [g for g in got if repr(g) not in ws][:10]
        missing = [w for w in want if repr(w) not in gs][:10]
        return ("%d rows, expected %d; extra %s; missing %s; first got %s, first expected %s"
                % (len(got), len(want), extra, missing, got[:12], want[:12]))
    return "got %r, expected %r" % (got, want)


def pick_role(rng, tags):
    role = "ro" if rng.random() < 0.25 else "fuzz"
    tags.append("role:" + role)
    return role


def pick_radius(rng):
    r = rng.random()
    if r < 0.6:
        return rng.choice(SMALL_RADII)
    if r < 0.85:
        return rng.choice(RADII)
    return rng.choice(EXTREMES)


def pick_centre(rng, model, table):
    base = {"vsb": "c"}.get(table, table)
    fps = model.fps(base)
    r = rng.random()
    if r < 0.65 and fps:
        return flip(rng, rng.choice(fps), rng.choice([0, 0, 1, 2, 3, 4, 6, 9]))
    if r < 0.8:
        return rng.choice(SPECIAL_FPS)
    return rng.getrandbits(64)


def random_cond(ctx, rng, table, col, tags, spelling=None, v=None, kform=None, qform=None, fp=None):
    """A radius condition in a random (or the given) spelling."""
    spelling = spelling or rng.choice(sorted(SPELLINGS))
    v = pick_radius(rng) if v is None else v
    if kform is None:
        kform = rng.choice(B_FORMS[:3] if spelling.startswith("ball_lit") else K_FORMS)
        if rng.random() < 0.03:
            kform = "ballnull" if spelling.startswith("ball_lit") else "null"
    qform = qform or rng.choice(Q_FORMS[:-1] if rng.random() < 0.97 else Q_FORMS)
    text = None
    if fp is None:
        fp = pick_centre(rng, ctx.model, table)
        if qform == "text":
            text, fp = rng.choice(ctx.model.texts)
    tags += ["sp:" + spelling, "k:%s" % v, "kf:" + kform, "qf:" + qform]
    return radius_cond(spelling, col, qform, fp, kform, v, text), fp


def gen_restrict(ctx, rng, spelling=None, v=None, kform=None, qform=None, mode=None,
                 table=None, settings=None, simple=False):
    """SELECT id FROM t WHERE <radius condition> ORDER BY id."""
    table = table or rng.choice(RESTRICT_TABLES)
    tags = ["kind:restrict", "t:" + table]
    col = "simhash(body)" if table == "d" and rng.random() < 0.5 else "fp"
    cond, fp = random_cond(ctx, rng, table, col, tags, spelling, v, kform, qform)
    if not simple:
        r = rng.random()
        if r < 0.15:
            other, _ = random_cond(ctx, rng, table, col, [], fp=fp if rng.random() < 0.5 else None)
            cond = combine(rng, cond, other)
            tags.append("combined")
        elif r < 0.22:
            cond = combine(rng, cond, eq_cond(col, "lit", fp))
            tags.append("combined")
        if rng.random() < 0.2:
            f = extra_filter(rng)
            cond = type(cond)(["("] + cond.parts + [" AND "] + f.parts + [")"],
                              lambda row, a=cond, b=f: and3(a.truth(row), b.truth(row)), cond.errs, cond.lazy)
            tags.append("filtered")
    mode = mode or rng.choice(MODES)
    settings = settings or (["index", "bitmap", "seq"] if rng.random() < 0.5 else
                            rng.sample(["index", "bitmap", "seq", "default"], 2))
    role = pick_role(rng, tags)
    tags += ["mode:" + mode]

    def run(ctx):
        sess, user = ctx.session_of(role)
        rows = ctx.model.visible(table, user)
        expected = sorted(row[0] for row in rows if cond.truth(row) is True)
        q = Query()
        q.add("SELECT id FROM %s WHERE " % table)
        cond.emit(q)
        q.add(" ORDER BY id")
        results = []
        for st in settings:
            ctx.apply(sess, SESSION_SETTINGS[st])
            results += ctx.execute(sess, q, mode, rng, st)
        ctx.judge(results, expected, cond.errs, cond.lazy, value_of=lambda rows: [r[0] for r in rows])
    return tags, run


LIMITS = [0, 1, 2, 3, 5, 10, 20, 50, 100, 1000, None, None, "NULL", "ALL", 2 ** 63 - 1, -1, "param"]


def gen_knn(ctx, rng):
    """SELECT fp <-> q FROM t [WHERE radius] ORDER BY fp <-> q [LIMIT n] [OFFSET m]."""
    table = rng.choice(RESTRICT_TABLES)
    tags = ["kind:knn", "t:" + table]
    col = "simhash(body)" if table == "d" and rng.random() < 0.5 else "fp"
    qform = rng.choice(["lit", "untyped", "param", "int8", "bit", "guc"] + ["null"] * (rng.random() < 0.05))
    fp = pick_centre(rng, ctx.model, table)
    qp = q_parts(qform, fp)
    order = rng.choice(["C <-> Q"] * 6 + ["Q <-> C", "hamming(C, Q)"])
    desc = rng.random() < 0.08
    limit = rng.choice(LIMITS)
    offset = rng.choice([0] * 6 + [1, 5, 100, 2 ** 63 - 1, -1])
    cond = None
    if rng.random() < 0.5:
        same = rng.random() < 0.7
        cond, _ = random_cond(ctx, rng, table, col, tags, fp=fp if same else None,
                              qform=qform if same and qform != "null" else None)
        tags.append("radius:" + ("same" if same else "other"))
    mode = rng.choice(MODES)
    settings = ["index", "seq"] if rng.random() < 0.6 else ["index", "bitmap", "default"]
    tags += ["order:" + order.replace(" ", ""), "limit:%s" % limit, "offset:%s" % offset, "mode:" + mode]
    errs = set(cond.errs) if cond else set()
    lazy = cond.lazy if cond else False
    if limit == -1:
        errs.add("2201W")
    if offset == -1:
        errs.add("2201X")

    role = pick_role(rng, tags)

    def emit_order(q):
        for ch in order:
            if ch == "C":
                q.add(col)
            elif ch == "Q":
                emit_parts(q, qp)
            else:
                q.add(ch)

    def run(ctx):
        sess, user = ctx.session_of(role)
        rows = ctx.model.visible(table, user)
        centre = None if qform == "null" else fp
        ds = [dist(row[1], centre) for row in rows if cond is None or cond.truth(row) is True]
        known = [d for d in ds if d is not None]
        nulls = [None] * (len(ds) - len(known))
        # ASC puts NULLs last, DESC first
        expected = nulls + sorted(known, reverse=True) if desc else sorted(known) + nulls
        start = offset if offset != -1 else 0
        expected = expected[start:]
        if isinstance(limit, int) and limit >= 0:
            expected = expected[:limit]
        elif limit == "param":
            expected = expected[:7]
        q = Query()
        q.add("SELECT ")
        emit_order(q)
        q.add(" AS d FROM %s" % table)
        if cond is not None:
            q.add(" WHERE ")
            cond.emit(q)
        q.add(" ORDER BY ")
        emit_order(q)
        q.add(" DESC" if desc else "")
        if limit == "param":
            q.add(" LIMIT ").param("int8", "'7'")
        elif limit is not None:
            q.add(" LIMIT %s" % limit)
        if offset:
            q.add(" OFFSET %d" % offset)
        results = []
        for st in settings:
            ctx.apply(sess, SESSION_SETTINGS[st])
            results += ctx.execute(sess, q, mode, rng, st)
        ctx.judge(results, expected, errs, lazy, value_of=lambda rows: [r[0] for r in rows])
    return tags, run


JOIN_SPELLINGS = {
    "j_dist_le": ("A <-> B <= K", "le", False),
    "j_dist_lt": ("A <-> B < K", "lt", False),
    "j_ge": ("K >= B <-> A", "le", False),
    "j_gt": ("K > A <-> B", "lt", False),
    "j_hamming": ("hamming(A, B) <= K", "le", False),
    "j_within": ("simhash_within(A, B, K)", "le", True),
    "j_within_rev": ("simhash_within(B, A, K)", "le", True),
    "j_ball": ("A <@ simhash_ball(B, K)", "le", True),
    "j_ball_rev": ("simhash_ball(A, K) @> B", "le", True),
}
JOIN_PAIRS = [("ja", "jb")] * 8 + [("c", "u"), ("c", "p"), ("s", "c"), ("c", "c"), ("d", "d"),
                                   ("vsb", "jb"), ("jb", "ja"), ("z", "ja"), ("e", "ja"), ("p", "p")]
JOIN_SLICE = 500
SLICED = ("c", "u", "p", "s", "d", "vsb", "z")
BIG_PAIRS = [("c", "u"), ("u", "p")]


def join_expected(rows_a, rows_b, cmp, kv, extra):
    """count and checksum of the pairs, from the model."""
    n = 0
    total = 0
    if kv is None:
        return (0, "0")
    for ia, fa, _ in rows_a:
        if fa is None:
            continue
        for ib, fb, _ in rows_b:
            if fb is None or (extra and not ia < ib):
                continue
            d = (fa ^ fb).bit_count()
            if (d < kv) if cmp == "lt" else (d <= kv):
                n += 1
                total += ia * 100003 + ib
    return (n, str(total))


def gen_join(ctx, rng, spelling=None, v=None, kform=None, pair=None, settings=None, mode=None):
    """count and checksum of a JOIN b ON <radius between a.fp and b.fp>."""
    ta, tb = pair or rng.choice(JOIN_PAIRS if rng.random() < 0.93 else BIG_PAIRS)
    big = (ta, tb) in BIG_PAIRS
    spelling = spelling or rng.choice(sorted(JOIN_SPELLINGS))
    template, cmp, need_int4 = JOIN_SPELLINGS[spelling]
    if v is None:
        v = pick_radius(rng) if not big else rng.choice([-1, 0, 1, 2, 3, 4, 6, 8])
    kform = kform or rng.choice(K_FORMS if rng.random() < 0.97 else ["null"])
    kparts, errs, lazy = k_parts(kform, v, need_int4)
    extra = rng.random() < 0.5
    mode = mode or rng.choice(MODES)
    if settings is None:
        names = sorted(JOIN_SETTINGS) if not big else ["band", "band_batches", "parallel", "parallel_batches"]
        settings = rng.sample(names, 2)
    tags = ["kind:join", "t:%s*%s" % (ta, tb) + ("(all)" if big else ""), "sp:" + spelling, "k:%s" % v,
            "kf:" + kform, "mode:" + mode, "extra:%s" % extra] + ["set:" + s for s in settings]
    # a nested loop computes simhash(a.body) once per pair: only against a small side
    acol = "simhash(a.body)" if ta == "d" and tb in ("ja", "jb") and rng.random() < 0.5 else "a.fp"
    bcol = "b.fp"
    # slices of the big tables, so that the Python model can count the pairs; a
    # big pair keeps all rows of both, for batches of the band join (which
    # builds on the cheaper side: a 500-row slice fits in one batch)
    sliced = {"a": ta in SLICED and not big, "b": tb in SLICED and not big}
    role = pick_role(rng, tags)

    def run(ctx):
        sess, user = ctx.session_of(role)
        ra, rb = ctx.model.visible(ta, user), ctx.model.visible(tb, user)
        if sliced["a"]:
            ra = [r for r in ra if r[0] < JOIN_SLICE]
        if sliced["b"]:
            rb = [r for r in rb if r[0] < JOIN_SLICE]
        kv = None if kform == "null" else v
        expected = [join_expected(ra, rb, cmp, kv, extra)]
        q = Query()
        q.add("SELECT count(*), coalesce(sum(a.id::int8 * 100003 + b.id), 0)::text FROM %s a JOIN %s b ON "
              % (ta, tb))
        for ch in template:
            if ch == "A":
                q.add(acol)
            elif ch == "B":
                q.add(bcol)
            elif ch == "K":
                emit_parts(q, kparts)
            else:
                q.add(ch)
        if extra:
            q.add(" AND a.id < b.id")
        where = ["%s.id < %d" % (alias, JOIN_SLICE) for alias in ("a", "b") if sliced[alias]]
        if where:
            q.add(" WHERE " + " AND ".join(where))
        results = []
        for st in settings:
            ctx.apply(sess, JOIN_SETTINGS[st])
            results += ctx.execute(sess, q, mode, rng, st)
        ctx.judge([x for x in results if not isinstance(x[2], CountOnly)], expected, errs, lazy)
    return tags, run


def gen_column_join(ctx, rng):
    """Radii and balls that come from another table's columns, LATERAL nearest neighbours."""
    table = rng.choice(["c", "p", "s", "u", "z", "e"])
    form = rng.choice(["ball", "ball_rev", "ks", "ks_within", "ks_ball", "lateral_knn",
                       "lateral_radius", "exists", "delete"])
    kcol = rng.choice(["k2", "k4", "k8"])
    mode = rng.choice(MODES)
    settings = rng.sample(["default", "band", "nestloop", "nestloop_index", "oracle", "parallel_nestloop"], 2)
    tags = ["kind:colj", "t:" + table, "form:" + form, "kcol:" + kcol, "mode:" + mode] + \
        ["set:" + s for s in settings]
    m = ctx.model
    k = rng.choice(SMALL_RADII[:12])
    n = rng.choice([1, 3, 10])
    role = pick_role(rng, tags) if form != "delete" else "fuzz"

    def run(ctx):
        sess, user = ctx.session_of(role)
        rows = m.visible(table, user)
        qt = dict(m.qt)
        errs = set()
        if form in ("ball", "ball_rev"):
            op = "a.fp <@ bl.b" if form == "ball" else "bl.b @> a.fp"
            sql = "SELECT bl.id, a.id FROM balls bl JOIN %s a ON %s ORDER BY 1, 2" % (table, op)
            expected = sorted((bi, i) for bi, c, r in m.balls if c is not None
                              for i, f, _ in rows if f is not None and dist(f, c) <= r)
        elif form.startswith("ks"):
            col = kcol if form == "ks" else "k4"
            cond = {"ks": "a.fp <-> q.fp <= k.%s" % col, "ks_within": "simhash_within(a.fp, q.fp, k.k4)",
                    "ks_ball": "a.fp <@ simhash_ball(q.fp, k.k4)"}[form]
            sql = ("SELECT count(*), coalesce(sum(k.id::int8 * 100003 + a.id), 0)::text FROM ks k "
                   "JOIN qt q ON q.id = k.qid JOIN %s a ON %s" % (table, cond))
            idx = {"k2": 2, "k4": 3, "k8": 4}[col]
            pairs = [(kr[0], i) for kr in m.ks for i, f, _ in rows
                     if kr[idx] is not None and qt.get(kr[1]) is not None and f is not None
                     and dist(f, qt[kr[1]]) <= kr[idx]]
            expected = [(len(pairs), str(sum(a * 100003 + b for a, b in pairs)))]
        elif form == "lateral_knn":
            sql = ("SELECT q.id, (SELECT array_agg(d) FROM (SELECT a.fp <-> q.fp AS d FROM %s a "
                   "WHERE a.fp <-> q.fp <= %d ORDER BY a.fp <-> q.fp LIMIT %d) x) FROM qt q ORDER BY q.id"
                   % (table, k, n))
            expected = []
            for qi, qf in m.qt:
                ds = sorted(d for d in (dist(f, qf) for i, f, _ in rows) if d is not None and d <= k)[:n]
                expected.append((qi, ds or None))
        elif form == "lateral_radius":
            sql = ("SELECT q.id, x.id FROM qt q CROSS JOIN LATERAL (SELECT id FROM %s a "
                   "WHERE a.fp <-> q.fp < %d) x ORDER BY 1, 2" % (table, k))
            expected = sorted((qi, i) for qi, qf in m.qt for i, f, _ in rows
                              if dist(f, qf) is not None and dist(f, qf) < k)
        elif form == "exists":
            sql = ("SELECT id FROM %s a WHERE EXISTS (SELECT FROM qt q WHERE hamming(q.fp, a.fp) <= %d) "
                   "ORDER BY id" % (table, k))
            expected = [(i,) for i, f, _ in rows
                        if any(dist(f, qf) is not None and dist(f, qf) <= k for _, qf in m.qt)]
        else:
            sql = None
            expected = sorted((i,) for i, f, _ in rows
                              if any(dist(f, qf) is not None and dist(f, qf) <= k for _, qf in m.qt))
        results = []
        for st in settings:
            ctx.apply(sess, JOIN_SETTINGS[st])
            if sql is None:
                sess.run("BEGIN")
                out = sess.run("DELETE FROM %s a USING qt q WHERE a.fp <-> q.fp <= %d RETURNING a.id" % (table, k))
                sess.run("ROLLBACK")
                if out.ok:
                    out.rows = sorted(set(out.rows))
                results.append((st + " DELETE", out, out.rows))
                continue
            q = Query().add(sql)
            results += ctx.execute(sess, q, mode if st != "oracle" else "direct", rng, st)
        ctx.judge(results, [tuple(e) if isinstance(e, (tuple, list)) else e for e in expected], errs, False,
                  value_of=lambda rows: [tuple(r) for r in rows])
    return tags, run


def sweep_cases(ctx):
    """Every spelling at every radius, and every radius form at the extremes."""
    cases = []
    spellings = sorted(SPELLINGS)
    forms = {s: (B_FORMS[:3] if s.startswith("ball_lit") else K_FORMS) for s in spellings}
    tables = ["c", "p", "s", "d", "z", "u", "vsb", "e"]
    i = 0
    for v in RADII:
        for s in spellings:
            cases.append(dict(spelling=s, v=v, kform=forms[s][i % len(forms[s])],
                              qform=Q_FORMS[i % 7], mode=MODES[i % len(MODES)],
                              table=tables[i % len(tables)], settings=[["index"], ["bitmap"]][i % 2]))
            i += 1
    focus = [-2 ** 31, 2 ** 31 - 1, 2 ** 31 - 2, -2 ** 63, 2 ** 63 - 1, 2 ** 31, 65]
    for v in focus:
        for s in spellings:
            for kf in forms[s]:
                cases.append(dict(spelling=s, v=v, kform=kf, qform=Q_FORMS[i % 7],
                                  mode=["direct", "explain", "generic", "custom"][i % 4],
                                  table=tables[i % 4], settings=["index"]))
                i += 1
    for v in [0, 3, 6]:
        cases.append(dict(join=True, spelling="j_dist_le", v=v, kform="lit", pair=("c", "u"),
                          settings=["band_batches", "parallel_batches"], mode="analyze"))
    for v in RADII:
        spelling = sorted(JOIN_SPELLINGS)[i % len(JOIN_SPELLINGS)]
        cases.append(dict(join=True, spelling=spelling, v=v, kform=K_FORMS[i % len(K_FORMS)],
                          settings=[["band", "nestloop_index"], ["band_batches", "default"],
                                    ["oracle", "band"], ["nestloop", "band_batches"],
                                    ["parallel", "force_parallel"]][i % 5],
                          mode=["direct", "explain", "analyze", "generic"][i % 4]))
        i += 1
    return cases


def sweep_case(ctx, rng, spec):
    if spec.get("gen"):         # a sweep of another module (radius.py, neardup.py)
        return spec["gen"](ctx, rng, **spec["args"])
    if spec.get("join"):
        return gen_join(ctx, rng, spelling=spec["spelling"], v=spec["v"], kform=spec["kform"],
                        pair=spec.get("pair", ("ja", "jb")), settings=spec["settings"], mode=spec["mode"])
    return gen_restrict(ctx, rng, spelling=spec["spelling"], v=spec["v"], kform=spec["kform"],
                        qform=spec["qform"], mode=spec["mode"], table=spec["table"],
                        settings=spec["settings"], simple=True)



def gen_cursor(ctx, rng):
    """A cursor over an index scan while the same transaction inserts near its centre."""
    table = rng.choice(["c", "p", "s", "u", "ja", "z"])
    scroll = rng.random() < 0.4
    knn = rng.random() < 0.5
    fp = pick_centre(rng, ctx.model, table)
    k = rng.choice(SMALL_RADII[:10])
    n_ins = rng.choice([0, 10, 300, 3000])
    first = rng.choice([0, 1, 3, 20])
    tags = ["kind:cursor", "t:" + table, "scroll:%s" % scroll, "knn:%s" % knn, "k:%d" % k,
            "inserts:%d" % n_ins]

    def run(ctx):
        fz = ctx.r.s("fuzz")
        rows = ctx.model.visible(table, data.FUZZ)
        q = "'%016x'" % fp
        if knn:
            sql = "SELECT fp <-> %s FROM %s ORDER BY fp <-> %s" % (q, table, q)
            known = sorted(dist(f, fp) for _, f, _ in rows if f is not None)
            expected = [(d,) for d in known] + [(None,)] * (len(rows) - len(known))
        else:
            sql = "SELECT id FROM %s WHERE fp <-> %s <= %d" % (table, q, k)
            expected = sorted((i,) for i, f, _ in rows if dist(f, fp) is not None and dist(f, fp) <= k)
        fz.run("SET enable_seqscan = off; SET enable_bitmapscan = off")
        fz.run("BEGIN")
        fz.run("DECLARE fzc %sCURSOR FOR %s" % ("SCROLL " if scroll else "", sql))
        got = need_rows(fz.run("FETCH %d FROM fzc" % first), "FETCH")
        top = max([r[0] for r in rows], default=0) + 100000
        new = [(top + i, flip(rng, fp, rng.randint(0, 3))) for i in range(n_ins)]
        if new:
            vals = ",".join("(%d, '%016x', 1)" % (i, f) for i, f in new)
            need_rows(fz.run("INSERT INTO %s (id, fp, g) VALUES %s" % (table, vals)), "INSERT")
        # a second scan of the index flushes the inserted entries while the cursor is open
        mid = need_rows(fz.run("SELECT id FROM %s WHERE fp <-> %s <= %d ORDER BY id" % (table, q, k)), "SELECT")
        want_mid = sorted((i,) for i, f, _ in rows + [(i, f, 1) for i, f in new]
                          if f is not None and dist(f, fp) <= k)
        got += need_rows(fz.run("FETCH ALL FROM fzc"), "FETCH ALL")
        back = need_rows(fz.run("FETCH BACKWARD ALL FROM fzc"), "FETCH BACKWARD") if scroll else None
        fz.run("ROLLBACK")
        if mid != want_mid:
            raise CaseFailure("wrong result", "in the transaction, after the inserts: %s" % difference(mid, want_mid))
        if (got if knn else sorted(got)) != expected:
            raise CaseFailure("wrong result", "cursor: %s" % difference(got if knn else sorted(got), expected))
        if scroll and back != list(reversed(got)):
            raise CaseFailure("wrong result", "FETCH BACKWARD ALL: %s" % difference(back, list(reversed(got))))
    return tags, run


def need_rows(out, what):
    if not out.ok:
        raise CaseFailure("unexpected error %s" % out.code, "%s: %s" % (what, out.msg), out.code)
    return out.rows


PLPGSQL_FUNCS = {
    # name: (type of k, radius spelling, language, truth of (distance, k))
    "radius_plpgsql": ("int8", "fp <-> q <= k", "plpgsql", lambda d, k: d <= k),
    "ball_plpgsql": ("int4", "fp <@ simhash_ball(q, k)", "plpgsql", lambda d, k: d <= k),
    "within_sql": ("int4", "simhash_within(fp, q, k)", "sql", lambda d, k: d <= k),
    "hamming_sql": ("int2", "hamming(q, fp) < k", "sql", lambda d, k: d < k),
}


def setup_functions(fz):
    """Functions of the fuzz role around radius queries (their plans are cached, generic after 5 calls)."""
    for name, (ktype, cond, lang, _) in PLPGSQL_FUNCS.items():
        body = "SELECT id FROM fz.c WHERE %s ORDER BY id" % cond
        if lang == "plpgsql":
            body = "BEGIN RETURN QUERY %s; END" % body
        fz.ok("CREATE FUNCTION fzown.%s(q simhash64, k %s) RETURNS SETOF int LANGUAGE %s STABLE AS $f$ %s $f$"
              % (name, ktype, lang, body))


def gen_function(ctx, rng):
    """Radius queries inside PL/pgSQL and SQL functions, called often enough for generic plans."""
    name = rng.choice(sorted(PLPGSQL_FUNCS))
    ktype, _, _, truth = PLPGSQL_FUNCS[name]
    calls = [(pick_centre(rng, ctx.model, "c"), pick_radius(rng)) for _ in range(8)]
    generic = rng.random() < 0.3
    tags = ["kind:function", "sp:" + name, "generic:%s" % generic] + sorted({"k:%d" % k for _, k in calls})

    def run(ctx):
        fz = ctx.r.s("fuzz")
        if generic:
            fz.run("SET plan_cache_mode = force_generic_plan")
        rows = ctx.model.visible("c", data.FUZZ)
        for fp, k in calls:
            out = fz.run("SELECT array_agg(x) FROM fzown.%s('%016x', '%d'::%s) x" % (name, fp, k, ktype))
            if not fits(k, ktype):
                if out.ok or out.code != "22003":
                    raise CaseFailure("accepted what it should reject" if out.ok else "unexpected error %s" % out.code,
                                      "%s(k => %d::%s): %r" % (name, k, ktype, out))
                continue
            want = sorted(i for i, f, _ in rows if f is not None and truth((f ^ fp).bit_count(), k)) or None
            got = need_rows(out, name)[0][0]
            if got != want:
                raise CaseFailure("wrong result", "%s('%016x', %d): %s"
                                  % (name, fp, k, difference(got or [], want or [])))
    return tags, run
