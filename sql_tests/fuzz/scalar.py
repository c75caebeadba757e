"""
scalar.py -- functions, casts, literals, texts, encodings, inspection, COPY, DDL.

Each generator returns (tags, run).  The oracles are Python: the bits of
a fingerprint, tools/simhash_reference.py for simhash(text) and for the
weighted sums of simhash(text[], float8[]) and simhash(tsvector), and the
identities README documents (simhash_features rebuilds simhash(text);
scaling every weight by a power of two changes nothing; repeats add up).
"""
import io
import math
import os
import re
import struct
import sys

from .runner import CaseFailure
from .spell import (EXTREMES, INT4, INT8, MASK, RADII, SPECIAL_FPS, dist, fits, flip, hexfp, qlit,
                    signed)
from . import data

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import simhash_reference as ref  # noqa: E402
import xxhash  # noqa: E402


def need(out, what):
    """The rows of an outcome that must have succeeded."""
    if not out.ok:
        raise CaseFailure("unexpected error %s" % out.code, "%s: %s" % (what, out.msg), out.code)
    return out.rows


def expect_error(out, codes, what):
    """An outcome that must have failed with one of codes (None: any non-XX code)."""
    if out.ok:
        raise CaseFailure("accepted what it should reject",
                          "%s succeeded; SQLSTATE %s expected" % (what, "/".join(codes or ["any"])))
    if codes and out.code not in codes:
        raise CaseFailure("unexpected error %s" % out.code,
                          "%s: %s (expected %s)" % (what, out.msg, "/".join(codes)), out.code)


def check(cond, kind, detail):
    if not cond:
        raise CaseFailure(kind, detail)


def pick_fp(rng, model=None):
    r = rng.random()
    if r < 0.1:
        return None
    if r < 0.4:
        return rng.choice(SPECIAL_FPS)
    if r < 0.6 and model is not None and model.centres:
        return flip(rng, rng.choice(model.centres), rng.randint(0, 4))
    return rng.getrandbits(64)


def fp_sql(fp):
    return "NULL::simhash64" if fp is None else qlit(hexfp(fp)) + "::simhash64"


# --- casts and literals

INT8_VALUES = [INT8[0], INT8[0] + 1, -1, 0, 1, INT8[1], INT8[1] - 1, INT4[0], INT4[1], 2 ** 32]


def gen_casts(ctx, rng):
    """simhash64 from and to bigint, bit(64), bytea (send), text."""
    v = rng.choice(INT8_VALUES + [rng.randint(*INT8) for _ in range(3)] + [2 ** 63, -2 ** 63 - 1])
    tags = ["kind:scalar", "fn:casts", "v:%d" % v]

    def run(ctx):
        fz = ctx.r.s("fuzz")
        sql = ("SELECT x::text, x::int8, x::bit(64)::text, (x::bit(64))::simhash64::text, "
               "simhash64_send(x)::text, (x::text)::simhash64 = x, x::int8::simhash64 = x "
               "FROM (SELECT %s::int8::simhash64 AS x) s" % qlit(str(v)))
        out = fz.run(sql)
        if not fits(v, "int8"):
            return expect_error(out, ["22003"], "bigint cast of %d" % v)
        fp = v & MASK
        want = [(hexfp(fp), v, format(fp, "064b"), hexfp(fp), "\\x" + hexfp(fp), True, True)]
        check(need(out, "casts") == want, "wrong result", "casts of %d: %r, expected %r" % (v, out.rows, want))
    return tags, run


def mutate_hex(rng):
    """A simhash64 literal, valid or not."""
    h = "".join(rng.choice("0123456789abcdefABCDEF") for _ in range(16))
    r = rng.random()
    if r < 0.4:
        return h
    variants = [h[:15], h + "0", "", "0x" + h[2:], " " + h, h + " ", h[:8] + " " + h[9:],
                "+" + h[1:], "-" + h[1:], h[:15] + "g", h[:15] + "\u0660", "\uff10" * 16,
                h * 2, h[:15] + "\u00e9", "\t" + h[1:], h * 500, h[:15] + "\n", "ｆ" * 16]
    return rng.choice(variants)


def norm_radius(k):
    """A ball keeps its radius normalized: below 0 nothing matches (-1), above 64 everything (64)."""
    return -1 if k < 0 else min(k, 64)


def gen_literals(ctx, rng):
    """simhash64 and simhash_ball text input: strict, and what comes out again."""
    if rng.random() < 0.5:
        text = mutate_hex(rng)
        tags = ["kind:scalar", "fn:simhash64_in"]

        def run(ctx):
            out = ctx.r.s("fuzz").run("SELECT %s::simhash64::text" % qlit(text))
            if re.fullmatch(r"[0-9a-fA-F]{16}", text):
                check(need(out, "simhash64 input") == [(text.lower(),)], "wrong result",
                      "%r read as %r" % (text, out.rows))
            else:
                expect_error(out, ["22P02"], "simhash64 input %r" % text[:60])
        return tags, run
    h = hexfp(rng.getrandbits(64))
    r = str(rng.choice(RADII))
    variants = {"plain": r, "plus": "+" + r.lstrip("-"), "space": " " + r, "trailing": r + " ",
                "zeros": "00" + r.lstrip("-"), "empty": "", "letter": "x", "exponent": "1e3",
                "huge": "99999999999999999999", "minus_zero": "-0", "double_minus": "--1",
                "slash": r + "/1", "decimal": "3.0", "arabic_digit": "\u0663"}
    variant = rng.choice(["plain"] * 8 + sorted(variants))
    radius = variants[variant]
    centre = rng.choice([h, h, h, h.upper(), h[:15], h + "0", " " + h[1:], ""])
    sep = rng.choice(["/", "/", "/", "//", " /", ""])
    text = centre + sep + radius
    tags = ["kind:scalar", "fn:simhash_ball_in", "variant:" + variant, "radius:%r" % radius]

    def run(ctx):
        out = ctx.r.s("fuzz").run(
            "SELECT b::text, simhash_ball_center(b)::text, simhash_ball_radius(b), simhash_ball_send(b)::text "
            "FROM (SELECT %s::simhash_ball AS b) s" % qlit(text))
        m = re.fullmatch(r"([0-9a-fA-F]{16})/(-?[0-9]+)", text)
        if m and fits(int(m.group(2)), "int4"):
            c, k = m.group(1).lower(), norm_radius(int(m.group(2)))
            want = [("%s/%d" % (c, k), c, k, "\\x%s%08x" % (c, k & 0xffffffff))]
            check(need(out, "simhash_ball input") == want, "wrong result",
                  "%r read as %r, expected %r" % (text, out.rows, want))
        else:
            expect_error(out, ["22P02"], "simhash_ball input %r" % text[:60])
    return tags, run


def gen_bits(ctx, rng):
    """bit strings of every length to simhash64: only 64 bits convert (22026)."""
    n = rng.choice([0, 1, 8, 32, 63, 64, 64, 64, 65, 128, 1000])
    bits = "".join(rng.choice("01") for _ in range(n))
    form = rng.choice(["bit", "hex"])
    tags = ["kind:scalar", "fn:bit_cast", "len:%d" % n, "form:" + form]

    def run(ctx):
        if form == "hex" and n % 4 == 0:
            lit = "X'%s'" % ("%0*x" % (n // 4, int(bits, 2)) if n else "")
        else:
            lit = "B'%s'" % bits
        out = ctx.r.s("fuzz").run("SELECT (%s)::simhash64::text" % lit)
        if n == 64:
            check(need(out, "bit cast") == [(hexfp(int(bits, 2)),)], "wrong result", "bits %s: %r" % (bits, out.rows))
        else:
            expect_error(out, ["22026"], "a bit string of length %d" % n)
    return tags, run


def gen_operators(ctx, rng):
    """Distance, comparison, ball and hash functions on random pairs, against Python."""
    a, b = pick_fp(rng, ctx.model), pick_fp(rng, ctx.model)
    if rng.random() < 0.2 and a is not None:
        b = flip(rng, a, rng.randint(0, 3))
    k = rng.choice([v for v in RADII if fits(v, "int4")])
    tags = ["kind:scalar", "fn:operators", "k:%d" % k]

    def run(ctx):
        sa, sb = fp_sql(a), fp_sql(b)
        ball = "NULL::simhash_ball" if b is None else qlit("%s/%d" % (hexfp(b), k)) + "::simhash_ball"
        sql = ("SELECT {a} <-> {b}, hamming({a}, {b}), simhash_similarity({a}, {b}), {a} = {b}, {a} <> {b}, "
               "{a} < {b}, {a} <= {b}, {a} > {b}, {a} >= {b}, simhash64_cmp({a}, {b}), "
               "simhash_within({a}, {b}, {k}), {a} <@ simhash_ball({b}, {k}), simhash_ball({b}, {k}) @> {a}, "
               "{a} <@ {ball}, {ball} @> {a}, simhash64_hash({a}) = simhash64_hash({b}), "
               "simhash64_hash_extended({a}, {seed}) IS NULL"
               ).format(a=sa, b=sb, k=k, ball=ball, seed=rng.choice(INT8_VALUES))
        out = ctx.r.s("fuzz").run(sql)
        d = dist(a, b)
        if a is None or b is None:
            want = [(None,) * 16 + (a is None,)]     # strict functions: NULL in, NULL out
        else:
            within = d <= k
            want = [(d, d, 1 - d / 64, a == b, a != b, a < b, a <= b, a > b, a >= b,
                     (a > b) - (a < b), within, within, within, within, within, None, False)]
        rows = need(out, "operators")
        got = list(rows[0])
        if got[9] is not None:
            got[9] = (got[9] > 0) - (got[9] < 0)
        got[15] = None
        check([tuple(got)] == want, "wrong result", "operators on %s, %s, k=%d: %r, expected %r"
              % (sa, sb, k, got, want))
    return tags, run


def gen_sorting(ctx, rng):
    """ORDER BY, DISTINCT, GROUP BY, hash and merge joins on simhash64: unsigned order."""
    vals = [pick_fp(rng, ctx.model) for _ in range(rng.randint(0, 60))]
    vals += vals[:rng.randint(0, len(vals))]
    setting = rng.choice(["SET enable_hashagg = off", "SET enable_sort = off", "SET work_mem = '64kB'",
                          "SET enable_hashjoin = off", "SET enable_mergejoin = off"])
    tags = ["kind:scalar", "fn:sorting", "set:" + setting]

    def run(ctx):
        fz = ctx.r.s("fuzz")
        arr = "ARRAY[%s]::simhash64[]" % ", ".join(fp_sql(v) for v in vals)
        fz.run(setting)
        out = fz.run("SELECT x::text FROM unnest(%s) x ORDER BY x" % arr)
        want = [(hexfp(v),) for v in sorted(v for v in vals if v is not None)] + [(None,)] * vals.count(None)
        check(need(out, "ORDER BY") == want, "wrong result", "ORDER BY: %r, expected %r" % (out.rows[:10], want[:10]))
        out = fz.run("SELECT count(DISTINCT x), count(*) FROM (SELECT x FROM unnest(%s) x GROUP BY x) s" % arr)
        distinct = set(vals)
        check(need(out, "GROUP BY") == [(len(distinct - {None}), len(distinct))], "wrong result",
              "GROUP BY: %r" % out.rows)
        out = fz.run("SELECT count(*) FROM unnest(%s) x JOIN unnest(%s) y ON x = y" % (arr, arr))
        nn = [v for v in vals if v is not None]
        check(need(out, "join") == [(sum(nn.count(v) for v in nn),)], "wrong result", "equijoin: %r" % out.rows)
    return tags, run


# --- fingerprints of texts

def cp_range(lo, hi):
    return [chr(c) for c in range(lo, hi + 1)]


POOLS = [
    list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"),
    list(" \t\n\r.,;:!?-_'\"()[]{}<>/\\|@#$%^&*+=~`"),
    list("àéîõüçñßÆØÅÐÞþæøåðµ¨´¸¯ªº¹²³¼½¾ÿ"),
    cp_range(0x300, 0x36F) + cp_range(0x1AB0, 0x1ABE) + cp_range(0x20D0, 0x20F0),
    cp_range(0xAC00, 0xAC40) + cp_range(0x1100, 0x1112) + cp_range(0x1161, 0x1175) + cp_range(0x11A8, 0x11C2)
    + cp_range(0x3131, 0x318E),
    cp_range(0x4E00, 0x4E80) + ["\U00020000", "\U0002A6D6", "\U00030000", "\u3005", "\u3007", "\u3021", "\u303B"]
    + cp_range(0xF900, 0xF910) + cp_range(0x2F00, 0x2F10),
    cp_range(0x3041, 0x3096) + cp_range(0x30A1, 0x30FA) + cp_range(0xFF66, 0xFF9D) + ["\u309B", "\u309C", "\u30FC"],
    ["\U0001F600", "\u200D", "\uFE0F", "\U0001F3FB", "\U0001F1EF", "\U0001F1F5", "\U0001F468", "\u2764"],
    ["\uFDFA", "\uFDFB", "\u3300", "\u33FF", "\uFB00", "\uFB03", "\uFB06", "\uFB1D", "\U0001D15E", "\u0F73",
     "\u0F75", "\u0F81", "\u0344", "\u0345", "\u0390", "\u1E9E", "\u0130", "\u0131", "\u01C4", "\u01C5",
     "\u01C6", "\u2126", "\u212A", "\u212B", "\uFFFD", "\uFEFF", "\u200B", "\u00A0", "\u2028", "\uE000",
     "\U000F0000", "\uFDD0", "\uFFFE", "\uFFFF", "\U0001FFFE", "\U0010FFFF", "\u0378", "\u200F", "\u200E",
     "\u03A3", "\u03C2", "\u1FBC", "\u1F80", "\uFB2C", "\u0958", "\u2ADC", "\U0001D160", "\u1D2C", "\u0149"],
    cp_range(0x600, 0x64A) + cp_range(0x900, 0x939) + cp_range(0xE01, 0xE30) + cp_range(0x660, 0x669),
    cp_range(0xFF10, 0xFF5A) + cp_range(0x2070, 0x2079) + cp_range(0x2460, 0x2473) + cp_range(0x2160, 0x2188),
]


def random_text(rng, maxlen=200):
    out = []
    n = rng.randint(0, maxlen)
    while len(out) < n:
        pool = rng.choice(POOLS)
        run_len = rng.choice([1, 1, 2, 3, 5, 8, 40]) if pool is POOLS[3] else rng.randint(1, 12)
        out.extend(rng.choice(pool) for _ in range(run_len))
    return "".join(out)


def gen_text(ctx, rng):
    """simhash(text) and simhash_features(text) equal tools/simhash_reference.py."""
    text = random_text(rng, rng.choice([5, 50, 200, 1000]))
    tags = ["kind:scalar", "fn:simhash_text"]

    def run(ctx):
        fz = ctx.r.s("fuzz")
        out = fz.run("SELECT simhash(%s)::text" % qlit(text))
        want = hexfp(ref.simhash(text))
        check(need(out, "simhash(text)") == [(want,)], "wrong result",
              "simhash(%r) = %r, reference %s" % (text[:200], out.rows, want))
        out = fz.run("SELECT feature, occurrences, weight FROM simhash_features(%s) WITH ORDINALITY o "
                     "ORDER BY ordinality" % qlit(text))
        want_f = [(f, n, float(w)) for f, n, w in ref.features(text)]
        check(need(out, "simhash_features") == want_f, "wrong result",
              "simhash_features(%r): %r, reference %r" % (text[:200], out.rows[:10], want_f[:10]))
        features_identity(fz, qlit(text))
    return tags, run


def features_identity(sess, text_sql):
    """README: simhash(features, weights) over simhash_features(t) equals simhash(t), in a
    database whose encoding can hold every feature (features it cannot hold are shown with
    \\uXXXX escapes, and then the identity is not promised)."""
    out = sess.run("SELECT coalesce((SELECT simhash(array_agg(feature ORDER BY n), array_agg(weight ORDER BY n)) "
                   "FROM simhash_features(t) WITH ORDINALITY f(feature, occurrences, weight, n)), "
                   "'0000000000000000') = simhash(t) OR EXISTS (SELECT FROM simhash_features(t) "
                   "WHERE feature ~ '\\\\[uU][0-9a-f]{4}') FROM (SELECT %s AS t) s" % text_sql)
    check(need(out, "simhash_features identity") == [(True,)], "wrong result",
          "simhash(array_agg(feature), array_agg(weight)) over simhash_features(t) <> simhash(t)")


HUGE = [
    "repeat('word ', 1000000)",
    "(SELECT string_agg(md5(i::text), ' ') FROM generate_series(1, 100000) i)",
    "repeat('中', 2000000)",
    "(SELECT string_agg(chr(19968 + ((i::int8 * 7919) % 20000)::int), '') FROM generate_series(1, 600000) i)",
    "repeat('カタ', 1000000)",
    "'a' || repeat(U&'\\0301', 2000000)",
    "repeat(U&'\\FDFA', 300000)",
    "repeat('ß', 2000000)",
    "repeat(' ', 5000000)",
    "repeat(U&'\\D55C', 1000000)",
    "repeat('x', 4000000)",
    "(SELECT string_agg(chr(65 + i % 26) || chr(97 + (i / 26) % 26) || (i % 1000)::text, ' ') "
    "FROM generate_series(1, 400000) i)",
    "repeat(U&'\\0345\\0391', 800000)",
    "repeat(U&'\\1100\\1161\\11A8', 600000)",
]


def gen_huge(ctx, rng):
    """Texts and feature arrays of a few MB, made in the server."""
    i = rng.randrange(len(HUGE))
    expr = HUGE[i]
    what = rng.choice(["simhash", "simhash", "features", "identity", "tsvector", "array", "weighted"])
    tags = ["kind:huge", "fn:" + what, "text:%d" % i]

    def run(ctx):
        fz = ctx.r.s("fuzz")
        if what == "simhash":
            need(fz.run("SELECT simhash(%s)::text" % expr), "simhash of a huge text")
        elif what == "features":
            need(fz.run("SELECT count(*), sum(occurrences), max(length(feature)) FROM simhash_features(%s)" % expr),
                 "simhash_features of a huge text")
        elif what == "identity":
            features_identity(fz, expr)
        elif what == "tsvector":
            out = fz.run("SELECT simhash(to_tsvector('simple', %s))::text" % expr)
            if not out.ok and out.code not in ("54000",):
                need(out, "simhash(tsvector) of a huge text")
        elif what == "array":
            need(fz.run("SELECT simhash(regexp_split_to_array(%s, ' '))::text" % expr), "simhash(text[]) huge")
        else:
            need(fz.run("SELECT simhash(a, array_fill(1.5::float8, ARRAY[cardinality(a)]))::text "
                        "FROM (SELECT regexp_split_to_array(%s, ' ') a) s" % expr), "simhash(text[], float8[]) huge")
    return tags, run


def array_sql(items, typ):
    def one(x):
        if x is None:
            return "NULL"
        if typ == "float8":
            return "'%r'::float8" % x if isinstance(x, float) else str(x)
        return qlit(x)
    return "ARRAY[%s]::%s[]" % (", ".join(one(x) for x in items), typ)


WEIRD_WEIGHTS = [0.0, -0.0, 1e-310, 5e-324, 1.7e308, 1e308, float("inf"), float("-inf"), float("nan"),
                 -1.0, 2.5, 1e-300, 0.1, 3.0, 1e20]


def weighted_reference(features, weights):
    return ref.fingerprint_of_weights((xxhash.xxh3_64_intdigest(f.encode("utf-8")), w)
                                      for f, w in zip(features, weights))


def gen_arrays(ctx, rng):
    """simhash(text[]) and simhash(text[], float8[]): errors, reference sums, identities."""
    n = rng.choice([0, 1, 2, 3, 5, 10, 50, 300])
    words = ["a", "b", "", "中", "spam", "x" * 1000, "é", "e\u0301", "\U0001F600"] + \
        [random_text(rng, 6) for _ in range(5)]
    feats = [rng.choice(words) for _ in range(n)]
    form = rng.choice(["plain", "weighted", "weighted", "scaled", "bad", "shape"])
    weights = [rng.choice([1.0, 2.0, 0.5, 3.0, 0.0, 7.25, 1e-3]) for _ in feats]
    if rng.random() < 0.4:
        weights = [rng.choice([1.0, 3.0, 0.1])] * n
    tags = ["kind:scalar", "fn:arrays", "form:" + form, "n:%d" % n]

    def run(ctx):
        fz = ctx.r.s("fuzz")
        if form == "plain":
            out = fz.run("SELECT simhash(%s)::text, simhash(%s, array_fill(1::float8, ARRAY[%d]))::text"
                         % (array_sql(feats, "text"), array_sql(feats, "text"), n))
            want = hexfp(weighted_reference(feats, [1.0] * n))
            check(need(out, "simhash(text[])") == [(want, want)], "wrong result",
                  "simhash(%r) = %r, reference %s" % (feats[:5], out.rows, want))
            if n:
                first = {}
                for f in feats:
                    first[f] = first.get(f, 0) + 1
                out = fz.run("SELECT simhash(%s) = simhash(%s, %s)" % (
                    array_sql(feats, "text"), array_sql(list(first), "text"),
                    array_sql([float(c) for c in first.values()], "float8")))
                check(need(out, "repeats") == [(True,)], "wrong result", "repeated features do not add up")
        elif form == "weighted":
            out = fz.run("SELECT simhash(%s, %s)::text" % (array_sql(feats, "text"), array_sql(weights, "float8")))
            want = hexfp(weighted_reference(feats, weights))
            check(need(out, "simhash(text[], float8[])") == [(want,)], "wrong result",
                  "simhash(%r, %r) = %r, reference %s" % (feats[:5], weights[:5], out.rows, want))
        elif form == "scaled":
            top = max([w for w in weights if w > 0], default=0)
            e = rng.choice([1, 10, 100, -10, -100, -1000] + ["top"] * 6)
            if e == "top" and top:     # the largest weight just below the largest double
                e = 1023 - math.ceil(math.log2(top)) - rng.choice([0, 0, 0, 1, 2])
            if top == 0 or e == "top":
                return
            try:
                scaled = [math.ldexp(w, e) for w in weights]
            except OverflowError:
                return
            if min(w for w in scaled if w > 0) < 2.3e-308:
                return      # subnormal weights lose bits: no identity to expect
            out = fz.run("SELECT simhash(%s, %s) = simhash(%s, %s)" % (
                array_sql(feats, "text"), array_sql(weights, "float8"), array_sql(feats, "text"),
                array_sql(scaled, "float8")))
            check(need(out, "scaled weights") == [(True,)], "wrong result",
                  "scaling every weight by 2^%d changes the fingerprint (largest weight %r)" % (e, max(scaled)))
        elif form == "bad":
            w = list(weights) or [1.0]
            f = list(feats) or ["a"]
            which = rng.choice(["weight", "null_weight", "null_feature", "length"])
            if which == "weight":
                w[rng.randrange(len(w))] = rng.choice([float("inf"), float("-inf"), float("nan"), -1.0, -1e-300])
                codes = ["22023"]
            elif which == "null_weight":
                w[rng.randrange(len(w))] = None
                codes = ["22004"]
            elif which == "null_feature":
                f[rng.randrange(len(f))] = None
                codes = ["22004"]
            else:
                w = w + [1.0]
                codes = ["2202E"]
            out = fz.run("SELECT simhash(%s, %s)::text" % (array_sql(f, "text"), array_sql(w, "float8")))
            expect_error(out, codes, "simhash(text[], float8[]) with a bad %s" % which)
            if which == "null_feature":
                expect_error(fz.run("SELECT simhash(%s)::text" % array_sql(f, "text")), ["22004"],
                             "simhash(text[]) with a NULL element")
        else:
            shape = rng.choice(["'{{a,b},{c,d}}'::text[]", "'[5:6]={a,b}'::text[]",
                                "'[-2147483648:-2147483647]={a,b}'::text[]",
                                "'{}'::text[]", "array_fill('x'::text, ARRAY[0])",
                                "array_fill('x'::text, ARRAY[2, 2, 2])"])
            wshape = rng.choice(["'{1,1}'::float8[]", "'[3:4]={1,1}'::float8[]", "'{{1,1},{1,1}}'::float8[]",
                                 "'{}'::float8[]"])
            for sql in ("SELECT simhash(%s)::text" % shape, "SELECT simhash(%s, %s)::text" % (shape, wshape)):
                out = fz.run(sql)
                if not out.ok and out.code not in ("2202E", "22023", "22004"):
                    raise CaseFailure("unexpected error %s" % out.code, "%s: %s" % (sql, out.msg), out.code)
    return tags, run


def gen_tsvector(ctx, rng):
    """simhash(tsvector) against the README's position-class weights."""
    text = random_text(rng, 300) if rng.random() < 0.5 else rng.choice(ctx.model.texts)[0][:3000]
    form = rng.choice(["to_tsvector('simple', t)", "to_tsvector('english', t)",
                       "setweight(to_tsvector('simple', t), '%s')" % rng.choice("ABCD"),
                       "strip(to_tsvector('simple', t))", "''::tsvector",
                       "'a:1A,2B,3C,4D b:16383 c' || to_tsvector('simple', t)",
                       "(SELECT string_agg('w' || i || ':' || (i % 16383 + 1) || 'A', ' ') "
                       "FROM generate_series(1, 3000) i)::tsvector",
                       "(SELECT string_agg('x:' || i, ' ') FROM generate_series(1, 300) i)::tsvector"])
    tags = ["kind:scalar", "fn:tsvector", "form:" + form[:20]]

    def run(ctx):
        fz = ctx.r.s("fuzz")
        tv = "(SELECT %s FROM (SELECT %s::text AS t) s)" % (form, qlit(text))
        out = fz.run("SELECT simhash(%s)::text, (SELECT array_agg(ARRAY[lexeme, "
                     "coalesce(array_to_string(positions, ','), ''), coalesce(array_to_string(weights, ','), '')]) "
                     "FROM unnest(%s))" % (tv, tv))
        rows = need(out, "simhash(tsvector)")
        lexemes = rows[0][1] or []
        classw = {"D": 1.0, "C": 2.0, "B": 4.0, "A": 10.0}
        ws = []
        for lex, pos, wts in lexemes:
            ws.append(sum(classw[c] for c in wts.split(",")) if pos else 1.0)
        cap = max(8, int(sum(min(w, 8.0) for w in ws)) // 16)
        want = hexfp(weighted_reference([x[0] for x in lexemes], [min(w, cap) for w in ws]))
        check(rows[0][0] == want, "wrong result", "simhash(%s) = %s, README's weights give %s"
              % (form, rows[0][0], want))
        out = fz.run("SELECT simhash(strip(%s)) = coalesce(simhash(tsvector_to_array(%s)), '0000000000000000')"
                     % (tv, tv))
        check(need(out, "strip identity") == [(True,)], "wrong result",
              "simhash(strip(tsv)) <> simhash(tsvector_to_array(tsv))")
    return tags, run


# --- encodings

def gen_encoding(ctx, rng):
    """Invalid byte sequences and odd code points, in UTF8, LATIN1 and SQL_ASCII databases."""
    db = rng.choice(["utf8", "utf8", "latin1", "sqlascii"])
    raw = bytes(rng.choice([rng.randrange(1, 256), rng.randrange(0x80, 0x100), ord("a"), 0x20, 0xc3, 0xe4])
                for _ in range(rng.randint(0, 60)))
    if rng.random() < 0.3:
        raw = random_text(rng, 30).encode("utf-8") + raw[:3] + random_text(rng, 10).encode("utf-8")
    raw = raw.replace(b"\x00", b" ")
    tags = ["kind:encoding", "db:" + db]

    def run(ctx):
        hexbytes = "'\\x%s'::bytea" % raw.hex()
        if db == "utf8":
            fz = ctx.r.s("fuzz")
            out = fz.run("SELECT simhash(convert_from(%s, 'UTF8'))::text" % hexbytes)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                return expect_error(out, ["22021"], "invalid UTF-8")
            check(need(out, "valid UTF-8") == [(hexfp(ref.simhash(text)),)], "wrong result",
                  "simhash of %r differs from the reference" % text[:100])
            out = fz.run("SELECT simhash(convert_from(%s, 'LATIN1'))::text" % hexbytes)
            check(need(out, "LATIN1 to UTF8") == [(hexfp(ref.simhash(raw.decode("latin-1"))),)], "wrong result",
                  "LATIN1 bytes %r" % raw[:60])
            c = rng.choice([0, 1, 0xD800, 0xDFFF, 0x10FFFF, 0x110000, -1, 2 ** 31 - 1, 0xFFFE])
            out = fz.run("SELECT simhash(chr(%d))::text" % c)
            if not out.ok and out.code not in ("54000", "22023"):
                need(out, "chr(%d)" % c)
            return None
        if db == "latin1":
            sess = ctx.r.s("latin1")
            text = raw.decode("latin-1")
            out = sess.run("SELECT simhash(convert_from(%s, 'LATIN1'))::text" % hexbytes)
            check(need(out, "simhash in a LATIN1 database") == [(hexfp(ref.simhash(text)),)], "wrong result",
                  "LATIN1 database: simhash of %r differs from the reference (same characters)" % text[:100])
            features_identity(sess, "convert_from(%s, 'LATIN1')" % hexbytes)
            return None
        sess = ctx.r.s("sqlascii")
        out = sess.run("SELECT simhash(convert_from(%s, 'SQL_ASCII'))::text" % hexbytes)
        text = raw.decode("utf-8", "replace")
        check(need(out, "simhash in an SQL_ASCII database") == [(hexfp(ref.simhash(text)),)], "wrong result",
              "SQL_ASCII database: simhash of bytes %r differs from the reference of their UTF-8 reading" % raw[:60])
        for sql in ("SELECT simhash(ARRAY[convert_from(%s, 'SQL_ASCII')])::text" % hexbytes,
                    "SELECT count(*) FROM simhash_features(convert_from(%s, 'SQL_ASCII'))" % hexbytes):
            sess.run(sql)       # any SQLSTATE but XX will do
    return tags, run


# --- inspection functions

def gen_inspect(ctx, rng):
    """The inspection functions: EXECUTE only where granted, coded errors on odd arguments."""
    role = rng.choice(["fuzz", "fuzz", "fuzz", "ro"])
    names = sorted(ctx.index_names) + ["p_fp", "c_pkey", "c", "d_body", "vsb"]
    target = rng.choice(["'fz.%s'" % n for n in names] + ["0", "1", "12345", "4294967295", "NULL", "'pg_class'",
                                                          "'pg_class_oid_index'"])
    fn = rng.choice(["check", "check_all", "stats", "heavy"])
    n = rng.choice([v for v in EXTREMES if fits(v, "int4")] + [0, 1, 10, -1, None])
    tags = ["kind:inspect", "fn:" + fn, "role:" + role, "arg:%s" % target, "n:%s" % n]

    def run(ctx):
        sess = ctx.r.s(role)
        if target.isdigit() or target == "NULL":
            arg = "%s::oid::regclass" % target if target != "NULL" else "NULL::regclass"
        else:
            arg = "%s::regclass" % target
        sql = {"check": "SELECT simhash_index_check(%s)" % arg,
               "check_all": "SELECT simhash_index_check(%s, %s)" % (arg, rng.choice(["true", "false", "NULL"])),
               "stats": "SELECT count(*) FROM simhash_index_stats(%s)" % arg,
               "heavy": "SELECT count(*) FROM simhash_index_heavy_keys(%s, %s)" % (arg, "NULL" if n is None else n)}[fn]
        out = sess.run(sql)
        if role == "ro" and "NULL" not in sql:
            # no EXECUTE: the permission check comes first (a strict call with a
            # NULL constant is folded away by the planner, and never checked)
            if out.ok or out.code not in ("42501", "42P01"):
                raise CaseFailure("inspection without EXECUTE", "%s as %s: %r %s" % (sql, data.RO, out, out.msg))
        elif out.ok and target.strip("'").replace("fz.", "") not in ctx.index_names and "NULL" not in sql:
            raise CaseFailure("accepted what it should reject", "%s succeeded on %s" % (sql, target))
    return tags, run


# --- binary COPY and the send/recv functions

def gen_copy(ctx, rng):
    """Hand-made binary COPY of simhash64 and simhash_ball; what comes out again."""
    rows = []
    for _ in range(rng.randint(1, 20)):
        fp = rng.choice([rng.getrandbits(64), 0, MASK, None])
        c = rng.getrandbits(64)
        r = rng.choice([v for v in RADII if fits(v, "int4")] + [INT4[0], INT4[1]])
        rows.append((fp, 8, (None if rng.random() < 0.05 else (c, r)), 12))
    if rng.random() < 0.3:      # one field of a wrong length
        i = rng.randrange(len(rows))
        fp, flen, ball, blen = rows[i]
        if rng.random() < 0.5:
            rows[i] = (fp if fp is not None else 0, rng.choice([0, 1, 7, 9, 16]), ball, blen)
        else:
            rows[i] = (fp, flen, ball or (0, 0), rng.choice([0, 8, 11, 13, 16]))
    tags = ["kind:copy"]

    def run(ctx):
        fz = ctx.r.s("fuzz")
        buf = io.BytesIO()
        buf.write(b"PGCOPY\n\xff\r\n\x00" + struct.pack("!ii", 0, 0))
        valid = True
        for fp, flen, ball, blen in rows:
            buf.write(struct.pack("!h", 2))
            if fp is None:
                buf.write(struct.pack("!i", -1))
            else:
                body = struct.pack("!Q", fp)
                body = (body * 3)[:flen]
                valid = valid and flen == 8
                buf.write(struct.pack("!i", flen) + body)
            if ball is None:
                buf.write(struct.pack("!i", -1))
            else:
                body = (struct.pack("!Qi", ball[0], ball[1]) * 2)[:blen]
                valid = valid and blen == 12
                buf.write(struct.pack("!i", blen) + body)
        buf.write(struct.pack("!h", -1))
        buf.seek(0)
        fz.run("TRUNCATE fzown.bin")
        out = fz.run("COPY fzown.bin FROM STDIN (FORMAT binary)", copy_data=buf)
        if not valid:
            if out.ok:
                raise CaseFailure("accepted what it should reject", "binary COPY with wrong field lengths")
            return None
        need(out, "binary COPY")
        got = need(fz.run("SELECT fp::text, b::text FROM fzown.bin"), "read back")
        want = [(None if fp is None else hexfp(fp), None if b is None else "%s/%d" % (hexfp(b[0]), norm_radius(b[1])))
                for fp, _, b, _ in rows]
        check(sorted(got, key=repr) == sorted(want, key=repr), "wrong result", "binary COPY read back %r, expected %r"
              % (got[:5], want[:5]))
        # the radii reach index scans as runtime values
        out = fz.run("SET enable_seqscan = off")
        out = fz.run("SELECT count(*) FROM fzown.bin x JOIN c ON c.fp <@ x.b")
        crow = ctx.model.visible("c", None)
        n = sum(1 for _, _, b, _ in rows if b is not None
                for _, f, _ in crow if f is not None and dist(f, b[0]) <= b[1])
        check(need(out, "join on the balls") == [(n,)], "wrong result", "join on copied balls: %r, expected %d"
              % (out.rows, n))
        # and out again: 8 bytes in network order, 12 for a ball
        dump = io.BytesIO()
        need(fz.run("COPY (SELECT fp, b FROM fzown.bin) TO STDOUT (FORMAT binary)", copy_data=dump), "COPY TO")
        raw = dump.getvalue()[19:]
        got, pos = [], 0
        while True:
            (nf,) = struct.unpack_from("!h", raw, pos)
            pos += 2
            if nf == -1:
                break
            fields = []
            for _ in range(nf):
                (ln,) = struct.unpack_from("!i", raw, pos)
                pos += 4
                fields.append(None if ln == -1 else raw[pos:pos + ln])
                pos += max(ln, 0)
            got.append(tuple(fields))
        want = [(None if fp is None else struct.pack("!Q", fp),
                 None if b is None else struct.pack("!Qi", b[0], norm_radius(b[1])))
                for fp, _, b, _ in rows]
        check(sorted(got, key=repr) == sorted(want, key=repr), "wrong result", "binary COPY TO: %r, expected %r"
              % (got[:3], want[:3]))
    return tags, run


# --- scratch tables of the fuzz role: builds, options, maintenance

def gen_ddl(ctx, rng):
    """A table the fuzz role owns: index options, build paths, maintenance, then queries."""
    n = rng.choice([0, 1, 2, 50, 1000, 3000, 20000])
    shape = rng.choice(["uniform", "clustered", "identical", "nulls"])
    kind = rng.choice(["", "", "TEMP ", "UNLOGGED "])
    fill = rng.choice([None, 50, 75, 95, 100, 0, 49, 101, -1, INT4[1]])
    when = rng.choice(["before", "after"])
    expr = rng.random() < 0.2
    partial = rng.random() < 0.15
    conc = rng.random() < 0.2
    maint = rng.sample(["REINDEX", "REINDEX CONCURRENTLY", "VACUUM", "TRUNCATE", "ALTER", "EXCLUDE",
                        "CLUSTER", "DELETE"], rng.randint(0, 3))
    mwm = rng.choice([None, "1MB", "64MB"])
    tags = ["kind:ddl", "n:%d" % n, "shape:" + shape, "fill:%s" % fill, "when:" + when, "expr:%s" % expr,
            "partial:%s" % partial, "conc:%s" % conc] + ["maint:" + m for m in maint]
    centre = rng.getrandbits(64)

    def make_rows():
        out = []
        for i in range(1, n + 1):
            if shape == "nulls" and rng.random() < 0.9:
                out.append((i, None))
            elif shape == "identical":
                out.append((i, centre))
            elif shape == "clustered":
                out.append((i, flip(rng, centre, rng.randint(0, 10))))
            else:
                out.append((i, rng.getrandbits(64)))
        return out

    def run(ctx):
        fz = ctx.r.s("fuzz")
        rows = make_rows()
        if mwm:
            fz.run("SET maintenance_work_mem = '%s'" % mwm)
        fz.ok("DROP TABLE IF EXISTS pg_temp.t; DROP TABLE IF EXISTS fzown.t")
        fz.ok("CREATE %sTABLE %st (id int, fp simhash64, x int8)" % (kind, "" if kind == "TEMP " else "fzown."))
        tab = "t" if kind == "TEMP " else "fzown.t"
        col = "(x::simhash64)" if expr else "fp"
        opts = "" if fill is None else " WITH (fillfactor = %d)" % fill
        where = " WHERE id % 2 = 0" if partial else ""
        create = "CREATE INDEX %st_idx ON %s USING simhash (%s)%s%s" % (
            "CONCURRENTLY " if conc else "", tab, col, opts, where)
        bad_fill = fill is not None and not 50 <= fill <= 100

        def build():
            out = fz.run(create)
            if bad_fill:
                expect_error(out, ["22023"], "fillfactor %d" % fill)
                return False
            need(out, "CREATE INDEX")
            return True

        indexed = build() if when == "before" else False
        data_rows = io.StringIO("".join("%d\t%s\t%s\n" % (i, "\\N" if f is None else hexfp(f),
                                                            "\\N" if f is None else signed(f)) for i, f in rows))
        need(fz.run("COPY %s (id, fp, x) FROM STDIN" % tab, copy_data=data_rows), "COPY")
        if when == "after":
            indexed = build()
        if not indexed:
            return None
        idx = "t_idx" if kind == "TEMP " else "fzown.t_idx"
        for m in maint:
            if m == "EXCLUDE":
                out = fz.run("ALTER TABLE %s ADD EXCLUDE USING simhash (fp WITH =)" % tab)
                expect_error(out, ["0A000", "42809"], "an exclusion constraint")
            elif m == "ALTER":
                f = rng.choice([60, 100, 10, 200])
                out = fz.run("ALTER INDEX %s SET (fillfactor = %d)" % (idx, f))
                if 50 <= f <= 100:
                    need(out, "ALTER INDEX SET")
                else:
                    expect_error(out, ["22023"], "fillfactor %d" % f)
            elif m == "TRUNCATE":
                need(fz.run("TRUNCATE %s" % tab), "TRUNCATE")
                rows[:] = rows[: len(rows) // 2]
                data_rows = io.StringIO("".join("%d\t%s\t%s\n" % (i, "\\N" if f is None else hexfp(f),
                                                                    "\\N" if f is None else signed(f))
                                                for i, f in rows))
                need(fz.run("COPY %s (id, fp, x) FROM STDIN" % tab, copy_data=data_rows), "COPY")
            elif m == "DELETE":
                need(fz.run("DELETE FROM %s WHERE id %% 3 = 0" % tab), "DELETE")
                rows[:] = [r for r in rows if r[0] % 3 != 0]
            elif m == "CLUSTER":
                out = fz.run("CLUSTER %s USING t_idx" % tab)
                if out.ok:
                    raise CaseFailure("accepted what it should reject", "CLUSTER on a simhash index")
            elif m.startswith("REINDEX"):
                conc_ok = m.endswith("CONCURRENTLY") and kind != "TEMP "
                need(fz.run("REINDEX INDEX %s%s" % ("CONCURRENTLY " if conc_ok else "", idx)), m)
            else:
                need(fz.run("%s %s" % (m, tab)), m)
        live = [(i, f) for i, f in rows if not partial or i % 2 == 0]
        fz.run("SET enable_seqscan = off; SET enable_bitmapscan = off")
        for _ in range(4):
            q = flip(rng, centre, rng.randint(0, 8)) if rng.random() < 0.7 else rng.getrandbits(64)
            k = rng.choice([0, 1, 3, 5, 8, 12, 40, 64])
            extra = " AND id % 2 = 0" if partial else ""
            out = fz.run("SELECT id FROM %s WHERE %s <-> %s <= %d%s ORDER BY id" % (tab, col, qlit(hexfp(q)), k, extra))
            want = [(i,) for i, f in live if f is not None and dist(f, q) <= k]
            check(need(out, "radius query") == want, "wrong result",
                  "scratch table radius: %d rows, expected %d" % (len(out.rows), len(want)))
            out = fz.run("SELECT %s <-> %s FROM %s WHERE true%s ORDER BY %s <-> %s LIMIT 10"
                         % (col, qlit(hexfp(q)), tab, extra, col, qlit(hexfp(q))))
            ds = sorted(dist(f, q) for i, f in live if f is not None)
            want = ([(d,) for d in ds] + [(None,)] * sum(1 for _, f in live if f is None))[:10]
            check(need(out, "nearest") == want, "wrong result", "scratch table nearest: %r, expected %r"
                  % (out.rows, want))
        need(fz.run("SELECT simhash_index_check('%s', true)" % idx), "simhash_index_check")
        fz.run("DROP TABLE %s" % tab)
    return tags, run


def setup_scratch(fz):
    """Tables the fuzz role owns (called once, as the fuzz role)."""
    fz.ok("CREATE TABLE fzown.bin (fp simhash64, b simhash_ball)")

