#!/usr/bin/python3
"""
clusters_check.py -- simhash_clusters(query, k) returns exactly the connected
components of "within k bits" that a brute-force computation in Python finds
(every pair compared, components by union-find), on random data sets.

Each data set mixes what makes clustering hard: tight clusters with exact
duplicate fingerprints, chains whose links are 1-3 bits apart (components far
wider than k), rows that share a 16-bit block and nothing else (one huge
bucket of unrelated rows), fingerprints drawn from a few bits only (dense
graphs whose components merge at larger k), uniformly random rows and NULL
fingerprints; ids are unique, negative and positive, in random order.  Sizes
cover both ways of joining (four bands, and all rows as one set below a few
hundred rows).  For each k, every row's (id, cluster, size) and the order of
the result (by cluster, then id) must match.  The function runs as a role
without superuser rights, which only has SELECT on the table.

Connects with psql using the PG* environment variables.  The seed is printed;
set SIMHASH_SEED to replay a run.  Exits non-zero on any difference.
"""
import os
import random
import subprocess
import sys

SEED = int(os.environ.get("SIMHASH_SEED", "20261124"))
KS = [0, 1, 2, 3, 4, 5, 6, 8, 10, 13]
ROLE = "simhash_clusters_checker"


def psql(sql, stdin_data=None):
    r = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql],
                       input=stdin_data, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("psql failed: %s\n%s" % (r.stderr, sql[:2000]))
    return r.stdout


def flip(rng, fp, nbits):
    for b in rng.sample(range(64), nbits):
        fp ^= 1 << b
    return fp


def make_dataset(rng, n):
    """About n fingerprints (some None) in random order."""
    fps = []
    # tight clusters: copies 0-3 bits from a centre, some of them exact
    for _ in range(n // 40):
        centre = rng.getrandbits(64)
        for _ in range(rng.randint(1, 25)):
            fps.append(centre if rng.random() < 0.2 else flip(rng, centre, rng.randint(1, 3)))
    # chains: each link 1-3 bits from the previous one
    for _ in range(n // 200):
        fp = rng.getrandbits(64)
        for _ in range(rng.randint(3, 20)):
            fp = flip(rng, fp, rng.randint(1, 3))
            fps.append(fp)
    # one shared block, the rest random: one bucket of unrelated rows
    block = rng.getrandbits(16) << 48
    for _ in range(n // 10):
        fps.append(block | rng.getrandbits(48))
    # a few free bits only: dense graphs
    positions = rng.sample(range(64), 20)
    base = rng.getrandbits(64)
    for _ in range(n // 10):
        fp = base
        for p in positions:
            if rng.random() < 0.5:
                fp ^= 1 << p
        fps.append(fp)
    # the rest random, and NULLs
    while len(fps) < n:
        fps.append(rng.getrandbits(64))
    fps += [None] * (n // 20)
    rng.shuffle(fps)
    ids = rng.sample(range(-10**12, 10**12), len(fps))
    return list(zip(ids, fps))


def near_pairs(live, kmax):
    """(d, a, b) for the row numbers a < b whose fingerprints are within kmax."""
    pairs = []
    for a in range(len(live)):
        fa = live[a][1]
        for b in range(a + 1, len(live)):
            d = (fa ^ live[b][1]).bit_count()
            if d <= kmax:
                pairs.append((d, a, b))
    return pairs


def reference(live, pairs, k):
    """{id: (cluster, size)} for the rows (in id order) given every near pair."""
    parent = list(range(len(live)))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for d, a, b in pairs:
        if d <= k:
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
    # each root is its component's smallest row number, hence smallest id
    sizes = {}
    for x in range(len(live)):
        r = find(x)
        sizes[r] = sizes.get(r, 0) + 1
    return {live[x][0]: (live[find(x)][0], sizes[find(x)]) for x in range(len(live))}


def check(name, rows):
    copy = "".join("%d\t%s\n" % (i, "\\N" if fp is None else "%016x" % fp) for i, fp in rows)
    psql("DROP TABLE IF EXISTS %s; CREATE TABLE %s (id int8, fp simhash64);"
         "GRANT SELECT ON %s TO %s;" % (name, name, name, ROLE))
    psql("COPY %s FROM STDIN" % name, copy)
    out = psql("SET ROLE %s; SELECT k, ord, id, cluster, size FROM unnest('{%s}'::int[]) k, "
               "simhash_clusters('SELECT id, fp FROM %s', k) WITH ORDINALITY AS c(id, cluster, size, ord)"
               % (ROLE, ",".join(map(str, KS)), name))
    got = {k: [] for k in KS}
    for line in out.splitlines():
        k, ord_, i, cluster, size = map(int, line.split("|"))
        got[k].append((ord_, i, cluster, size))
    live = sorted((i, fp) for i, fp in rows if fp is not None)
    pairs = near_pairs(live, max(KS))
    errors = 0
    for k in KS:
        want = reference(live, pairs, k)
        result = {i: (c, s) for _, i, c, s in got[k]}
        order = [(c, i) for _, i, c, _ in sorted(got[k])]
        bad = [i for i in set(want) | set(result) if want.get(i) != result.get(i)]
        largest = max((s for _, s in want.values()), default=0)
        clusters = sum(1 for i, (c, s) in want.items() if i == c and s > 1)
        status = "ok"
        if bad or len(got[k]) != len(want) or order != sorted(order):
            status = "MISMATCH: %d rows differ, e.g. %s" % (
                len(bad), [(i, want.get(i), result.get(i)) for i in sorted(bad)[:3]])
            errors += 1
        print("%s k=%-2d rows %d, clusters of 2+ %d, largest %d: %s"
              % (name, k, len(want), clusters, largest, status))
    return errors


def main():
    print("clusters_check: seed %d" % SEED)
    rng = random.Random(SEED)
    psql("CREATE EXTENSION IF NOT EXISTS simhash; DROP ROLE IF EXISTS %s; CREATE ROLE %s;"
         % (ROLE, ROLE))
    errors = 0
    names = []
    try:
        for name, n in (("cc_small", 300), ("cc_medium", 1800), ("cc_large", 2600)):
            names.append(name)
            errors += check(name, make_dataset(rng, n))
    except RuntimeError as e:
        print(e)
        errors += 1
    finally:
        psql("".join("DROP TABLE IF EXISTS %s;" % t for t in names) + "DROP ROLE IF EXISTS %s" % ROLE)
    if errors:
        sys.exit("clusters_check: %d mismatches (seed %d)" % (errors, SEED))
    print("clusters_check: all results equal the reference")


if __name__ == "__main__":
    main()
