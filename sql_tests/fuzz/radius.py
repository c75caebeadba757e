"""
radius.py -- simhash_radius(text), simhash_radius(int8), simhash_jaccard(text,
text) and the block functions (simhash_block, simhash_blocks,
simhash_shared_block) against Python models.

The models are README's formulas, written independently of src/fingerprint/radius.c and
src/core/distance.c: simhash_radius(W) is ceil(36 / sqrt(W)) clamped to [3, 12],
0 for W = 0, 22023 for W < 0; W of a text is the sum of the weights of its
features (tools/simhash_reference.py); block i of a fingerprint is its bits
63-16i .. 48-16i; the shared block is the value of the first equal block.
"""
import math

from .scalar import POOLS, check, expect_error, fp_sql, need, pick_fp, random_text, ref
from .spell import INT4, INT8, RADII, dist, fits, flip, qlit

# README "Short texts: k by size": the table of simhash_radius by W
README_TABLE = [((1, 10), 12), ((11, 12), 11), ((13, 15), 10), ((16, 20), 9), ((21, 26), 8),
                ((27, 35), 7), ((36, 51), 6), ((52, 80), 5), ((81, 143), 4), ((144, 10 ** 6), 3)]


def radius_of_weight(w):
    """ceil(36 / sqrt(w)) in [3, 12], exactly (integers), 0 for 0; None for NULL."""
    if w is None:
        return None
    if w == 0:
        return 0
    k = max(1, math.isqrt(max(1296 // w, 1)))
    while k * k * w < 1296:
        k += 1
    while k > 1 and (k - 1) * (k - 1) * w >= 1296:
        k -= 1
    return min(max(k, 3), 12)


def text_weight(text):
    return sum(w for _, _, w in ref.features(text))


def block(fp, i):
    return (fp >> (48 - 16 * i)) & 0xFFFF


def shared_block(a, b):
    for i in range(4):
        if block(a, i) == block(b, i):
            return block(a, i)
    return None


# the model checks itself against README's table, and the pigeonhole argument
assert all(radius_of_weight(w) == r for (lo, hi), r in README_TABLE for w in (lo, min(hi, 2000)))
assert all(shared_block(0, (1 << a) | (1 << b) | (1 << c)) is not None
           for a in range(0, 64, 7) for b in range(1, 64, 5) for c in range(2, 64, 11))

WEIGHTS = sorted(set(list(range(-2, 160)) + [1295, 1296, 1297, 10 ** 6, INT4[1], INT4[1] + 1, INT8[1], INT8[1] - 1,
                                             INT8[0], INT8[0] + 1, INT4[0], -1000, 2 ** 62, 2 ** 63, 10 ** 20]))


def int_arg(v, form):
    """(SQL of an integer argument in a form, SQLSTATE it must raise or None, type it has)."""
    if form == "int2":
        return "(%d)::int2" % v, (None if fits(v, "int2") else "22003"), "int2"
    if form == "int4":
        return "(%d)::int4" % v, (None if fits(v, "int4") else "22003"), "int4"
    if form == "int8":
        return "(%d)::int8" % v, (None if fits(v, "int8") else "22003"), "int8"
    if form == "text_cast":      # '...'::int8: out of range is 22003 too
        return "%s::int8" % qlit(str(v)), (None if fits(v, "int8") else "22003"), "int8"
    typ = "int4" if fits(v, "int4") else "int8" if fits(v, "int8") else "numeric"
    return str(v), None, typ


def gen_radius_weight(ctx, rng, v=None, form=None):
    """simhash_radius(int8) at every weight near the steps, the extremes, in every integer form."""
    v = rng.choice(WEIGHTS) if v is None else v
    form = form or rng.choice(["lit", "int2", "int4", "int8", "text_cast", "param", "null"])
    tags = ["kind:radius", "fn:radius_weight", "form:" + form, "arg:%d" % v]

    def run(ctx):
        fz = ctx.r.s(rng.choice(["fuzz", "ro"]))
        if form == "null":
            out = fz.run("SELECT simhash_radius(NULL::int8), simhash_radius(NULL::text)")
            check(need(out, "radius of NULL") == [(None, None)], "wrong result", "simhash_radius(NULL): %r" % out.rows)
            return
        if form == "param":
            fz.run("PREPARE fz_rad(int8) AS SELECT simhash_radius($1)")
            out = fz.run("EXECUTE fz_rad(%d)" % v)
            err = None if fits(v, "int8") else "22003"
            typ = "int8"
        else:
            sql, err, typ = int_arg(v, form)
            out = fz.run("SELECT simhash_radius(%s)" % sql)
        if err:
            return expect_error(out, [err], "simhash_radius(%d) as %s" % (v, form))
        if typ == "numeric":
            return expect_error(out, ["42883"], "simhash_radius of a numeric")
        if v < 0:
            return expect_error(out, ["22023"], "simhash_radius(%d)" % v)
        check(need(out, "simhash_radius") == [(radius_of_weight(v),)], "wrong result",
              "simhash_radius(%d) = %r, model %d" % (v, out.rows, radius_of_weight(v)))
    return tags, run


def latin1_text(rng, n):
    pool = [c for p in POOLS[:3] for c in p if ord(c) < 256]
    return "".join(rng.choice(pool + [" "] * 10) for _ in range(n))


def radius_text(rng, model):
    """A text whose weight lands near a step of the radius, or an odd one."""
    r = rng.random()
    if r < 0.4:
        lo, hi = rng.choice(README_TABLE)[0]
        w = rng.choice([lo, hi if hi < 10 ** 6 else 144, lo - 1, 0, 1])
        words = ["w%dx" % i for i in range(max(w, 0))]
        sep = rng.choice([" ", "\n", ", ", " -- ", "\t"])
        return sep.join(words) + rng.choice(["", ".", " !!!"])
    if r < 0.55:        # repeats: weights are capped
        word = rng.choice(["the", "x", "datum"])
        return " ".join([word] * rng.choice([1, 7, 8, 9, 100, 5000]) + ["u%d" % i for i in range(rng.randint(0, 40))])
    if r < 0.7 and model.texts:
        return rng.choice(model.texts)[0]
    if r < 0.75:
        return rng.choice(["", " ", "!!!", "...", "\n\n", "中", "中文", "カタカナ", "a"])
    return random_text(rng, rng.choice([5, 50, 400]))


def gen_radius_text(ctx, rng):
    """simhash_radius(text) = the model of W in UTF8, LATIN1 and SQL_ASCII databases, and
    = simhash_radius(sum(weight) of simhash_features(text))."""
    db = rng.choice(["utf8", "utf8", "utf8", "latin1", "sqlascii"])
    text = radius_text(rng, ctx.model)
    if db == "latin1":
        text = text if all(ord(c) < 256 for c in text) else latin1_text(rng, rng.randint(0, 300))
    raw = text.encode("latin-1" if db == "latin1" else "utf-8")
    if db == "sqlascii" and rng.random() < 0.3:
        raw = raw[:5] + bytes([rng.choice([0x80, 0xc3, 0xff, 0xe4])]) + raw[5:]
    tags = ["kind:radius", "fn:radius_text", "db:" + db, "len:%d" % len(raw)]

    def run(ctx):
        sess = ctx.r.s({"utf8": "fuzz", "latin1": "latin1", "sqlascii": "sqlascii"}[db])
        if db == "utf8":
            t_sql, t = qlit(text), text
        else:
            enc = "LATIN1" if db == "latin1" else "SQL_ASCII"
            t_sql = "convert_from('\\x%s'::bytea, '%s')" % (raw.hex(), enc)
            t = text if db == "latin1" else ref.utf8_repair(raw)
        want = radius_of_weight(text_weight(t))
        out = sess.run("SELECT simhash_radius(t), simhash_radius(coalesce((SELECT sum(weight) "
                       "FROM simhash_features(t)), 0)::int8) FROM (SELECT %s AS t) s" % t_sql)
        check(need(out, "simhash_radius(text)") == [(want, want)], "wrong result",
              "%s: simhash_radius(%r) and radius of its features' weight = %r, model %d"
              % (db, t[:80], out.rows, want))
    return tags, run


def jaccard_pair(rng, model):
    """Two texts: related (one edited from the other), unrelated, or odd."""
    a = radius_text(rng, model)
    r = rng.random()
    if r < 0.5:
        words = a.split(" ")
        edits = rng.randint(0, 3)
        for _ in range(edits):
            if words:
                words[rng.randrange(len(words))] = rng.choice(["", "new", "中", a[:3], "THE"])
        return a, " ".join(words)
    if r < 0.6:
        return a, a.upper()
    return a, radius_text(rng, model)


def gen_jaccard(ctx, rng):
    """simhash_jaccard(a, b) = tools/simhash_reference.py's jaccard() exactly, in UTF8,
    LATIN1 and SQL_ASCII databases; NULL for a NULL argument; symmetric."""
    db = rng.choice(["utf8", "utf8", "utf8", "latin1", "sqlascii"])
    a, b = jaccard_pair(rng, ctx.model)
    if db == "latin1":
        a, b = [t if all(ord(c) < 256 for c in t) else latin1_text(rng, rng.randint(0, 200)) for t in (a, b)]
    enc = {"utf8": "utf-8", "latin1": "latin-1", "sqlascii": "utf-8"}[db]
    raw = [t.encode(enc) for t in (a, b)]
    if db == "sqlascii" and rng.random() < 0.3:
        raw[0] = raw[0][:5] + bytes([rng.choice([0x80, 0xc3, 0xff, 0xe4])]) + raw[0][5:]
    null = rng.choice([None] * 8 + ["a", "b"])
    tags = ["kind:jaccard", "fn:simhash_jaccard", "db:" + db] + (["arg:null"] if null else [])

    def run(ctx):
        sess = ctx.r.s({"utf8": "fuzz", "latin1": "latin1", "sqlascii": "sqlascii"}[db])
        if db == "utf8":
            sql_t, texts = [qlit(t) for t in (a, b)], [a, b]
        else:
            conv = "LATIN1" if db == "latin1" else "SQL_ASCII"
            sql_t = ["convert_from('\\x%s'::bytea, '%s')" % (r.hex(), conv) for r in raw]
            texts = [a, b] if db == "latin1" else [ref.utf8_repair(r) for r in raw]
        if null:
            sql_t[0 if null == "a" else 1] = "NULL::text"
        out = sess.run("SELECT simhash_jaccard(%s, %s), simhash_jaccard(%s, %s)"
                       % (sql_t[0], sql_t[1], sql_t[1], sql_t[0]))
        rows = need(out, "simhash_jaccard")
        if null:
            check(rows == [(None, None)], "wrong result", "simhash_jaccard with a NULL = %r" % rows)
            return
        want = ref.jaccard(texts[0], texts[1])
        check(len(rows) == 1 and rows[0][0] == rows[0][1] and float(rows[0][0]) == want, "wrong result",
              "%s: simhash_jaccard(%r, %r) = %r, reference %r" % (db, texts[0][:60], texts[1][:60], rows, want))
    return tags, run


def gen_huge_radius(ctx, rng):
    """simhash_radius of a text of a MB: the identity with its features' weight."""
    expr = rng.choice(["repeat('word ', 200000)", "repeat('中', 400000)",
                       "(SELECT string_agg(md5(i::text), ' ') FROM generate_series(1, 30000) i)"])
    tags = ["kind:radius", "fn:radius_huge"]

    def run(ctx):
        out = ctx.r.s("fuzz").run("SELECT simhash_radius(t) = simhash_radius((SELECT sum(weight) FROM "
                                  "simhash_features(t))::int8) FROM (SELECT %s AS t) s" % expr)
        if not out.ok and out.code == "54000":
            return
        check(need(out, "radius of a huge text") == [(True,)], "wrong result", "identity broken for %s" % expr)
    return tags, run


BLOCK_FORMS = ["lit", "int2", "int4", "int8", "param", "column"]


def gen_blocks(ctx, rng, i=None, form=None):
    """simhash_block at every block number -2..66 and the extremes, simhash_blocks and
    simhash_shared_block on random pairs, against the bits."""
    i = rng.choice(RADII + [0, 1, 2, 3] * 5) if i is None else i
    form = form or rng.choice(BLOCK_FORMS)
    a, b = pick_fp(rng, ctx.model), pick_fp(rng, ctx.model)
    if a is not None and rng.random() < 0.4:
        b = flip(rng, a, rng.randint(0, 5))
    tags = ["kind:blocks", "fn:simhash_block", "form:" + form, "arg:%d" % i]

    def run(ctx):
        fz = ctx.r.s(rng.choice(["fuzz", "ro"]))
        sa, sb = fp_sql(a), fp_sql(b)
        if form == "param":
            fz.run("PREPARE fz_blk(simhash64, int4) AS SELECT simhash_block($1, $2)")
            if rng.random() < 0.5:
                fz.run("SET plan_cache_mode = force_generic_plan")
            out = fz.run("EXECUTE fz_blk(%s, %d)" % (sa, i))
            err = None if fits(i, "int4") else "22003"
        elif form == "column":
            out = fz.run("SELECT simhash_block(%s, i) FROM (VALUES (%d::int8)) v(x), LATERAL "
                         "(SELECT x::int4 AS i) s" % (sa, i))
            err = None if fits(i, "int4") else "22003"
        else:
            sql, err, typ = int_arg(i, form)
            if form == "int8" or (typ in ("int8", "numeric") and not err):
                err = "42883"           # no simhash_block(simhash64, int8), found before the cast runs
            out = fz.run("SELECT simhash_block(%s, %s)" % (sa, sql))
        if err:
            return expect_error(out, [err], "simhash_block(%s, %d) as %s" % (sa, i, form))
        if a is None:
            want = None
        elif not 0 <= i <= 3:
            return expect_error(out, ["22023"], "block number %d" % i)
        else:
            want = block(a, i)
        check(need(out, "simhash_block") == [(want,)], "wrong result",
              "simhash_block(%s, %d) = %r, model %r" % (sa, i, out.rows, want))
        out = fz.run("SELECT simhash_blocks({a}), simhash_shared_block({a}, {b}), simhash_shared_block({b}, {a}), "
                     "(simhash_blocks({a}))[1:4] = ARRAY[simhash_block({a}, 0), simhash_block({a}, 1), "
                     "simhash_block({a}, 2), simhash_block({a}, 3)]".format(a=sa, b=sb))
        if a is None:
            want = [(None, None, None, None)]
        else:
            sb_ab = None if b is None else shared_block(a, b)
            want = [([block(a, j) for j in range(4)], sb_ab, sb_ab, True)]
        check(need(out, "simhash_blocks") == want, "wrong result",
              "blocks of %s, %s: %r, model %r" % (sa, sb, out.rows, want))
        if a is not None and b is not None and dist(a, b) <= 3:
            check(want[0][1] is not None, "wrong result", "pigeonhole: %s, %s within 3 share no block" % (sa, sb))
    return tags, run


def gen_block_join(ctx, rng):
    """Blocks as equi-join keys (README "Scaling out"): the pairs within 3 found by joining on
    equal blocks, band by band, are every pair within 3; the blocks of every row of a table."""
    pair = rng.choice([("ja", "jb"), ("qt", "c"), ("ja", "ja")])
    setting = rng.choice(["", "SET enable_hashjoin = off", "SET enable_mergejoin = off; SET enable_hashjoin = off",
                          "SET enable_nestloop = off"])
    k = rng.choice([0, 1, 2, 3])
    tags = ["kind:blocks", "fn:block_join", "t:%s*%s" % pair, "set:" + setting, "k:%d" % k]

    def run(ctx):
        fz = ctx.r.s(rng.choice(["fuzz", "ro"]))
        if setting:
            fz.run(setting)
        ta, tb = pair
        out = fz.run("SELECT count(*), count(DISTINCT (a.id, b.id)), sum(simhash_shared_block(a.fp, b.fp)) "
                     "FROM generate_series(0, 3) i(i) JOIN {a} a ON true JOIN {b} b "
                     "ON simhash_block(a.fp, i.i) = simhash_block(b.fp, i.i) "
                     "WHERE a.fp <-> b.fp <= {k} AND i.i = (SELECT min(j) FROM generate_series(0, 3) j "
                     "WHERE simhash_block(a.fp, j) = simhash_block(b.fp, j))".format(a=ta, b=tb, k=k))
        rows_a = [r for r in (ctx.model.qt if ta == "qt" else ctx.model.visible(ta, None)) if r[1] is not None]
        rows_b = [r for r in ctx.model.visible(tb, None) if r[1] is not None]
        pairs = [(x[1], y[1]) for x in rows_a for y in rows_b if dist(x[1], y[1]) <= k]
        total = sum(shared_block(p, q) for p, q in pairs)
        want = [(len(pairs), len(pairs), total if pairs else None)]
        got = [tuple(int(v) if v is not None else None for v in need(out, "block join")[0])]
        check(got == want, "wrong result", "%s x %s within %d by blocks: %r, model %r" % (ta, tb, k, got, want))
        out = fz.run("SELECT id, simhash_blocks(fp) FROM %s ORDER BY id" % tb)
        want = [(r[0], None if r[1] is None else [block(r[1], j) for j in range(4)])
                for r in sorted(ctx.model.visible(tb, None))]
        check(need(out, "simhash_blocks of a table") == want, "wrong result",
              "simhash_blocks over %s differs from the model" % tb)
    return tags, run


def sweep_specs():
    """Every weight and every block number, in rotating forms."""
    specs = []
    forms = ["lit", "int2", "int4", "int8", "text_cast", "param"]
    for n, v in enumerate(WEIGHTS):
        specs.append(dict(gen=gen_radius_weight, args=dict(v=v, form=forms[n % len(forms)])))
    for n, i in enumerate(RADII):
        specs.append(dict(gen=gen_blocks, args=dict(i=i, form=BLOCK_FORMS[n % len(BLOCK_FORMS)])))
    return specs

