"""
spell.py -- the spellings of "within k of q" and the Python truth of each.

A Query is SQL text with placeholders for values that become $n parameters
when the case runs it as a prepared statement, and typed literals otherwise.
A Cond is one WHERE condition: its SQL, its truth for a row (three-valued:
True, False or None for NULL), and the SQLSTATEs it must raise instead,
always ("strict": a literal cast, a parameter, constant folding) or only if
it is evaluated at all ("lazy": a stable expression, an initplan).
"""

INT2 = (-2 ** 15, 2 ** 15 - 1)
INT4 = (-2 ** 31, 2 ** 31 - 1)
INT8 = (-2 ** 63, 2 ** 63 - 1)
RANGES = {"int2": INT2, "int4": INT4, "int8": INT8}

# radius values: every one of -2..66, then the extremes of every integer type
EXTREMES = [INT4[0], INT4[0] + 1, INT4[1] - 1, INT4[1], INT2[0], INT2[1], INT2[0] - 1,
            INT2[1] + 1, INT8[0], INT8[0] + 1, INT8[1] - 1, INT8[1], 2 ** 31, -2 ** 31 - 1,
            2 ** 32, 2 ** 32 + 3, 2 ** 53 + 1, 2 ** 63, -2 ** 63 - 1, 10 ** 20, 65535, 65536,
            127, 128, 255, 256, 1000, -100, -65]
RADII = list(range(-2, 67)) + sorted(set(EXTREMES) - set(range(-2, 67)))
# the values the random cases draw from most
SMALL_RADII = list(range(-1, 11)) + [16, 20, 31, 32, 33, 63, 64, 65]

MASK = 2 ** 64 - 1
SPECIAL_FPS = [0, MASK, 1 << 63, (1 << 63) - 1, 0x00000000ffffffff, 0xffff0000ffff0000,
               0x5555555555555555, 0xaaaaaaaaaaaaaaaa, 1]


def fits(v, typ):
    lo, hi = RANGES[typ]
    return lo <= v <= hi


def literal_type(v):
    """The type PostgreSQL gives a bare integer literal."""
    if fits(v, "int4"):
        return "int4"
    if fits(v, "int8"):
        return "int8"
    return "numeric"


def hexfp(fp):
    return "%016x" % fp


def signed(fp):
    """The bigint with the bits of fingerprint fp."""
    return fp - 2 ** 64 if fp >= 2 ** 63 else fp


def dist(a, b):
    if a is None or b is None:
        return None
    return (a ^ b).bit_count()


def and3(a, b):
    if a is False or b is False:
        return False
    if a is None or b is None:
        return None
    return True


def or3(a, b):
    if a is True or b is True:
        return True
    if a is None or b is None:
        return None
    return False


def not3(a):
    return None if a is None else not a


def flip(rng, fp, nbits):
    for b in rng.sample(range(64), nbits):
        fp ^= 1 << b
    return fp


class Query:
    """SQL with values that are parameters in prepared modes."""

    def __init__(self):
        self.parts = []         # str, or (type, literal) for a parameter
        self.pre = []           # statements before the query (SET of a placeholder GUC)
        self.nguc = 0

    def add(self, text):
        self.parts.append(text)
        return self

    def param(self, typ, literal):
        """A value: $n of type typ when prepared, else literal::typ."""
        self.parts.append((typ, literal))
        return self

    def guc(self, value):
        """A placeholder GUC holding value; returns its name."""
        name = "fuzz.v%d" % self.nguc
        self.nguc += 1
        self.pre.append("SET %s = '%s'" % (name, value))
        return name

    def has_params(self):
        return any(isinstance(p, tuple) for p in self.parts)

    def inline(self):
        out = []
        for p in self.parts:
            out.append(p if isinstance(p, str) else "%s::%s" % (p[1], p[0]))
        return "".join(out)

    def prepared(self):
        """(text with $n, parameter types, EXECUTE arguments)."""
        out, types, args = [], [], []
        for p in self.parts:
            if isinstance(p, str):
                out.append(p)
            else:
                types.append(p[0])
                args.append(p[1])
                out.append("$%d" % len(types))
        return "".join(out), types, args


def qlit(s):
    return "'" + s.replace("'", "''") + "'"


class Cond:
    """One condition: SQL parts, truth(row), error codes (strict or lazy)."""

    def __init__(self, parts, truth, errs=(), lazy=False):
        self.parts = parts
        self.truth = truth
        self.errs = set(errs)
        self.lazy = lazy

    def emit(self, q):
        emit_parts(q, self.parts)


def emit_parts(q, parts):
    """Append SQL parts to a Query: text, (type, literal) values, or callables."""
    for p in parts:
        if isinstance(p, tuple):
            q.param(*p)
        elif callable(p):
            p(q)
        else:
            q.add(p)


# Radius spellings: forms of k and the type they reach SQL with.
K_FORMS = ["lit", "int2", "int4", "int8", "param2", "param4", "param8", "expr4", "expr8",
           "guc2", "guc4", "guc8", "subq4", "subq8", "null"]


def k_parts(form, v, need_int4):
    """SQL parts of k, and (errors, lazy).  need_int4: the spelling takes int4."""
    if form == "null" or v is None:
        typ = "int4" if need_int4 else "int8"
        return ["NULL::%s" % typ], set(), False
    if form == "lit":
        t = literal_type(v)
        text = str(v) if v >= 0 else "(%d)" % v
        if need_int4 and t != "int4":
            return [text], {"42883"}, False
        return [text], set(), False
    typ = {"2": "int2", "4": "int4", "8": "int8"}[form[-1]]
    errs = set()
    narrowing = fits(v, typ) and need_int4 and not fits(v, "int4")
    if not fits(v, typ) or narrowing:
        errs = {"22003"}
    # a stable expression, or a cast to int4 outside an initplan or of a
    # parameter (generic plan), is evaluated only if the executor needs it
    lazy = form.startswith("guc") or (narrowing and form[:-1] in ("param", "subq"))
    assert form[:-1] in ("param", "int", "expr", "subq", "guc"), form
    if form.startswith("param"):
        parts = [(typ, qlit(str(v)))]
    elif form.startswith("int"):
        parts = ["%s::%s" % (qlit(str(v)), typ)]
    elif form.startswith("expr"):
        parts = ["(%s::%s * 1)" % (qlit(str(v)), typ)]
    elif form.startswith("subq"):
        parts = ["(SELECT %s::%s)" % (qlit(str(v)), typ)]
    else:
        parts = [lambda q, v=v, typ=typ: q.add("current_setting('%s')::%s" % (q.guc(v), typ))]
    if need_int4 and typ == "int8":
        parts = ["("] + parts + ["::int4)"]
    return parts, errs, lazy


Q_FORMS = ["lit", "untyped", "param", "int8", "bit", "text", "guc", "null"]


def q_parts(form, fp, text=None):
    """SQL parts of the centre q (fp an int or None; text: simhash(text) = fp)."""
    if fp is None or form == "null":
        return ["NULL::simhash64"]
    if form == "untyped":
        return [qlit(hexfp(fp))]
    if form == "param":
        return [("simhash64", qlit(hexfp(fp)))]
    if form == "int8":
        return ["(%s::int8)::simhash64" % qlit(str(signed(fp)))]
    if form == "bit":
        return ["B'%s'::simhash64" % format(fp, "064b")]
    if form == "text" and text is not None:
        return ["simhash(%s)" % qlit(text)]
    if form == "guc":
        return [lambda q: q.add("current_setting('%s')::simhash64" % q.guc(hexfp(fp)))]
    return [qlit(hexfp(fp)) + "::simhash64"]


# Restriction spellings: name -> template; C is the column, Q the centre,
# K the radius (int4 for the ball and within forms), B a ball.
SPELLINGS = {
    "dist_le": ("C <-> Q <= K", "le"),
    "dist_lt": ("C <-> Q < K", "lt"),
    "dist_rev_le": ("Q <-> C <= K", "le"),
    "dist_ge": ("K >= C <-> Q", "le"),
    "dist_gt": ("K > (Q <-> C)", "lt"),
    "hamming_le": ("hamming(C, Q) <= K", "le"),
    "hamming_rev_lt": ("hamming(Q, C) < K", "lt"),
    "hamming_ge": ("K >= hamming(C, Q)", "le"),
    "ball_func": ("C <@ simhash_ball(Q, K)", "ball"),
    "ball_func_rev": ("simhash_ball(Q, K) @> C", "ball"),
    "ball_lit": ("C <@ B", "ball"),
    "ball_lit_rev": ("B @> C", "ball"),
    "within": ("simhash_within(C, Q, K)", "ball"),
    "within_rev": ("simhash_within(Q, C, K)", "ball"),
}
B_FORMS = ["ballit", "ballparam", "ballguc", "ballnull"]


def ball_parts(form, fp, v):
    """SQL parts of a simhash_ball literal 'hex/v', and (errors, lazy)."""
    if form == "ballnull" or fp is None or v is None:
        return ["NULL::simhash_ball"], set(), False
    text = "%s/%d" % (hexfp(fp), v)
    errs = set() if fits(v, "int4") else {"22P02"}
    if form == "ballparam":
        return [("simhash_ball", qlit(text))], errs, False
    if form == "ballguc":
        return [lambda q: q.add("('%s/' || current_setting('%s'))::simhash_ball"
                                % (hexfp(fp), q.guc(v)))], errs, True
    return [qlit(text) + "::simhash_ball"], errs, False


def radius_cond(spelling, col, qform, fp, kform, v, text=None):
    """The Cond for spelling with column col, centre fp (q form) and radius v (k form)."""
    template, cmp = SPELLINGS[spelling]
    if spelling.startswith("ball_lit"):
        kparts, errs, lazy = ball_parts(kform, fp, v)
        qparts = []
        fpq = None if kform == "ballnull" else fp
        kv = None if kform == "ballnull" else v
    else:
        kparts, errs, lazy = k_parts(kform, v, cmp == "ball")
        qparts = q_parts(qform, fp, text)
        fpq = None if qform == "null" else fp
        kv = None if kform == "null" else v
    parts = ["("]
    for ch in template:
        if ch == "C":
            parts.append(col)
        elif ch == "Q":
            parts.extend(qparts)
        elif ch in "KB":
            parts.extend(kparts)
        else:
            parts.append(ch)
    parts.append(")")

    def truth(row):
        d = dist(row[1], fpq)
        if d is None or kv is None:
            return None
        return d < kv if cmp == "lt" else d <= kv
    return Cond(parts, truth, errs, lazy)


def eq_cond(col, qform, fp):
    return Cond(["(", col, " = "] + q_parts(qform, fp) + [")"],
                lambda row: None if row[1] is None or fp is None else row[1] == fp)


def combine(rng, a, b):
    """a AND b, a OR b, or NOT a, with the three-valued truth."""
    r = rng.random()
    errs = a.errs | b.errs
    # the error may stay unraised only if no part raises it for sure
    lazy = (not a.errs or a.lazy) and (not b.errs or b.lazy)
    if r < 0.45:
        return Cond(["("] + a.parts + [" AND "] + b.parts + [")"],
                    lambda row: and3(a.truth(row), b.truth(row)), errs, lazy)
    if r < 0.9:
        return Cond(["("] + a.parts + [" OR "] + b.parts + [")"],
                    lambda row: or3(a.truth(row), b.truth(row)), errs, lazy)
    return Cond(["(NOT "] + a.parts + [")"], lambda row: not3(a.truth(row)), a.errs, a.lazy)


def extra_filter(rng):
    """A plain filter on id or NULLness."""
    r = rng.random()
    if r < 0.4:
        m = rng.choice([2, 3, 7])
        rem = rng.randrange(m)
        return Cond(["(id %% %d = %d)" % (m, rem)], lambda row: row[0] % m == rem)
    if r < 0.55:
        return Cond(["(fp IS NOT NULL)"], lambda row: row[1] is not None)
    if r < 0.7:
        return Cond(["(g < 5)"], lambda row: None if row[2] is None else row[2] < 5)
    lim = rng.randrange(0, 4000)
    return Cond(["(id < %d)" % lim], lambda row: row[0] < lim)
