#!/usr/bin/python3
"""
cputime.py -- CPU time of the backend for simhash(body), simhash_jaccard and
their md5 baselines, on the tables bench/fingerprint/run.sh loaded.

On a shared, busy machine the wall clock of measure.sql counts the time the
backend waits for a core; the backend's own CPU time (nanoseconds, from
/proc/PID/schedstat, first field) does not.  One session; for each table and
expression, one warm-up query, then ROUNDS rounds (interleaved) of
SELECT count(expr) FROM simhash_speed.TAB; the best round is reported in ms
of CPU and MB/s (MB = 10^6 bytes of the bodies, both texts for the pair
expressions).  Must run on the server's machine as a user that may read the
backend's /proc entry (root, or the server's user).  PG* variables as usual
(PGDATABASE defaults to simhash_bench, as run.sh).

    bench/fingerprint/cputime.py [ROUNDS]      (default 7)
"""
import os
import sys

import psycopg2

EXPRS = [
    ("md5(body)", 1),
    ("simhash(body)", 1),
    ("length(md5(body) || md5(body || ' '))", 2),
    ("simhash(body) <-> simhash(body || ' ')", 2),
    ("simhash_jaccard(body, body || ' ')", 2),
]
TABLES = [("en_plain", "English, uncompressed"), ("zh_plain", "Chinese, uncompressed")]


def cpu_ns(pid):
    with open("/proc/%d/schedstat" % pid) as f:
        return int(f.read().split()[0])


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    conn = psycopg2.connect(dbname=os.environ.get("PGDATABASE", "simhash_bench"))
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("SET max_parallel_workers_per_gather = 0; SET jit = off")
    cur.execute("SELECT pg_backend_pid()")
    pid = cur.fetchone()[0]
    best = {}
    size = {}
    for tab, _ in TABLES:
        cur.execute("SELECT sum(octet_length(body)) FROM simhash_speed.%s" % tab)
        size[tab] = int(cur.fetchone()[0])
    for r in range(rounds + 1):
        for tab, _ in TABLES:
            for expr, _ in EXPRS:
                t0 = cpu_ns(pid)
                cur.execute("SELECT count(%s) FROM simhash_speed.%s" % (expr, tab))
                cur.fetchall()
                ms = (cpu_ns(pid) - t0) / 1e6
                if r > 0:
                    key = (tab, expr)
                    best[key] = min(best.get(key, ms), ms)
    print("| corpus | expression | MB | best CPU ms | MB/s | CPU time / md5's |")
    print("|---|---|---|---|---|---|")
    for tab, name in TABLES:
        for expr, texts in EXPRS:
            ms = best[(tab, expr)]
            mb = size[tab] * texts / 1e6
            base = best[(tab, EXPRS[0][0] if texts == 1 else EXPRS[2][0])]
            print("| %s | `%s` | %.1f | %.1f | %.1f | %.2fx |"
                  % (name, expr, mb, ms, mb / (ms / 1e3), ms / base))


if __name__ == "__main__":
    main()
