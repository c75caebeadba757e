"""
clusters.py -- simhash_clusters(query, k) against a Python model of the rows.

The model is README's definition ("Clusters"), written independently of
src/clusters/clusters.c and src/clusters/clusterjoin.c: the connected components of "within k
bits" among the rows the role sees with a fingerprint, each row with its
component's smallest id and size, ordered by cluster and id; k outside 0..64
is 22023, a NULL k or query 22004, an id over int4's range 22003.  Pairs are
found by comparing every pair on tables of a few hundred rows, and for the
larger ones (k <= 3 only) among the rows sharing a block (pigeonhole).
"""
from .scalar import check, expect_error, need
from .spell import EXTREMES, SMALL_RADII, dist, fits

from .data import TABLES

CLUSTER_TABLES = ["c", "p", "s", "u", "z", "e", "vsb", "ja", "jb"]
FORMS = ["lit", "lit", "param", "generic", "null_k", "null_query", "int8_expr"]
FILTERS = ["", "", " WHERE g % 2 = 0", " WHERE id % 5 <> 1 ORDER BY id DESC"]


def table_size(table):
    return TABLES["c" if table == "vsb" else table][0]


def near_pairs(rows, k):
    """(a, b) row numbers within k: all pairs, or rows sharing a block when k <= 3."""
    if len(rows) <= 600 or k > 3:
        return [(a, b) for a in range(len(rows)) for b in range(a + 1, len(rows))
                if dist(rows[a][1], rows[b][1]) <= k]
    pairs = set()
    for band in range(4):
        buckets = {}
        for n, (_, fp) in enumerate(rows):
            buckets.setdefault((fp >> (16 * band)) & 0xFFFF, []).append(n)
        for members in buckets.values():
            for i, a in enumerate(members):
                for b in members[i + 1:]:
                    if dist(rows[a][1], rows[b][1]) <= k:
                        pairs.add((a, b))
    return sorted(pairs)


def model_clusters(rows, k):
    """[(id, cluster, size)] ordered by cluster and id, rows being (id, fp) with fp not None."""
    rows = sorted(rows)
    label = list(range(len(rows)))

    def find(x):
        while label[x] != x:
            label[x] = label[label[x]]
            x = label[x]
        return x

    for a, b in near_pairs(rows, k) if k < 64 else [(0, n) for n in range(1, len(rows))]:
        ra, rb = find(a), find(b)
        label[max(ra, rb)] = min(ra, rb)
    size = {}
    for n in range(len(rows)):
        size[find(n)] = size.get(find(n), 0) + 1
    return sorted(((rows[n][0], rows[find(n)][0], size[find(n)]) for n in range(len(rows))),
                  key=lambda t: (t[1], t[0]))


def sql_mod(a, b):
    """a % b as SQL computes it (the sign of a)."""
    return abs(a) % b * (1 if a >= 0 else -1)


def gen_clusters(ctx, rng, k=None, form=None, table=None):
    """simhash_clusters over a fuzz table (plain, partitioned, row-level security, a
    security_barrier view, one fingerprint, empty) at every radius, as both roles."""
    table = table or rng.choice(CLUSTER_TABLES)
    form = form or rng.choice(FORMS)
    if k is None:
        k = rng.choice(SMALL_RADII if rng.random() < 0.8 else EXTREMES)
        if table_size(table) > 600 and 0 <= k <= 64:
            k = rng.choice([0, 1, 2, 3, 64])
    filt = rng.choice(FILTERS)
    role = "ro" if rng.random() < 0.3 else "fuzz"
    tags = ["kind:clusters", "fn:simhash_clusters", "form:" + form, "k:%d" % k, "t:" + table,
            "role:" + role]

    def run(ctx):
        sess, user = ctx.session_of(role)
        query = "SELECT id, fp FROM %s%s" % (table, filt)
        qlit = "'%s'" % query.replace("'", "''")
        call = "SELECT id, cluster, size FROM simhash_clusters(%s, %s)"
        if form == "param" or form == "generic":
            if form == "generic":
                sess.run("SET plan_cache_mode = force_generic_plan")
            sess.run("PREPARE fz_cl(text, int4) AS " + call % ("$1", "$2"))
            out = sess.run("EXECUTE fz_cl(%s, %d)" % (qlit, k) if fits(k, "int4") else
                           "EXECUTE fz_cl(%s, %d::int8)" % (qlit, k))
        elif form == "null_k":
            out = sess.run(call % (qlit, "NULL"))
        elif form == "null_query":
            out = sess.run(call % ("NULL", k if fits(k, "int4") else 0))
        elif form == "int8_expr":
            out = sess.run(call % (qlit, "(%d::int8 + 0)::int4" % k))
        else:
            out = sess.run(call % (qlit, ("%d" % k) if fits(k, "int4") else "%d::int8" % k))
        if form in ("null_k", "null_query"):
            return expect_error(out, ["22004"], "simhash_clusters with a NULL %s" % form[5:])
        if not fits(k, "int4"):
            return expect_error(out, ["22003", "42883"], "simhash_clusters(k = %d)" % k)
        if k < 0 or k > 64:
            return expect_error(out, ["22023"], "simhash_clusters(k = %d)" % k)
        rows = ctx.model.visible(table, user)
        if "g % 2" in filt:
            rows = [r for r in rows if r[2] is not None and sql_mod(r[2], 2) == 0]
        elif "id % 5" in filt:
            rows = [r for r in rows if sql_mod(r[0], 5) != 1]
        want = model_clusters([(r[0], r[1]) for r in rows if r[1] is not None], k)
        got = [tuple(int(v) for v in row) for row in need(out, "simhash_clusters")]
        check(got == want, "wrong result",
              "simhash_clusters(%r, %d): %d rows, model %d; first difference %r"
              % (query, k, len(got), len(want),
                 next(((a, b) for a, b in zip(got + [None] * len(want), want + [None] * len(got))
                       if a != b), None)))
    return tags, run


def sweep_specs():
    """Every radius of the sweep once, on the small tables and the one of identical rows."""
    from .spell import RADII
    return [dict(gen=gen_clusters, args=dict(k=k, form="lit", table=["ja", "z", "jb"][n % 3]))
            for n, k in enumerate(RADII)]
