#!/usr/bin/python3
"""bench/index/hnsw_report.py -- the tables of pgvector's HNSW as a peer.

Usage: hnsw_report.py RUN.csv [RUN.csv ...]

Reads the CSVs that run.sh and pgvector.sh (with pgvector_ef.sql and
pgvector_pair.sql) wrote for one size and dataset each, and prints, per
(size, dataset) with an HNSW build: the table of RESULTS.md's section
"PostgreSQL 17, with pgvector's HNSW as a peer" (build, size, k = 3 and
the 10 nearest: server-side p50 / p95 and recall, one row per method and
ef_search), then the same-load pairs of pgvector_pair.sql (rounds of
simhash, HNSW, HNSW, simhash), each with HNSW's p50 over simhash's.
"""
import csv
import re
import sys
from collections import defaultdict

ROWS = [
    # (label, build method, k = 3 method, 10 nearest method)
    ('sequential scan', None, 'seq', 'knn_seqsort'),
    ('btree4 (BitmapOr)', 'btree4', 'btree4', None),
    ('gin4 (&&)', 'gin4', 'gin4', None),
    ('simhash', 'simhash', 'simhash', 'knn_simhash'),
    ('HNSW, `WHERE code <~> q <= 3`', 'hnsw', 'hnsw_filter', None),
    ('HNSW, built with 1 parallel worker', 'hnsw_par1', None, None),
    ('HNSW, nearest 40 + filter', None, 'hnsw_limit40', None),
    ('HNSW, iterative scan (strict)', None, 'hnsw_iter', None),
    ('HNSW `ORDER BY <~> LIMIT 10`, ef_search 40', None, None, 'knn_hnsw'),
]


def load(paths):
    """{(size, dataset): {(method, k, metric): [(value, info), ...]}}, run ids,
    and the p50 of every same-load pair round in the order it ran."""
    data = defaultdict(lambda: defaultdict(list))
    runs = defaultdict(set)
    paired = defaultdict(list)
    for path in paths:
        with open(path, newline='') as f:
            for r in csv.DictReader(f):
                key = (r['size'], r['dataset'])
                data[key][(r['method'], r['k'], r['metric'])].append((r['value'], r['info']))
                runs[key].add(r['run'])
                if r['method'].startswith('pair:') and r['metric'] == 'srv_p50_ms':
                    paired[key].append((r['method'][5:], r['k'], float(r['value'])))
    return data, runs, paired


def num(d, method, k, metric):
    """The last value of (method, k, metric) as a float, or None."""
    vals = d.get((method, k, metric))
    if not vals or vals[-1][0] == '':
        return None
    return float(vals[-1][0])


def fmt(v, digits=3):
    """A latency or size with about three significant digits."""
    if v is None:
        return '–'
    if v >= 100:
        return f'{v:,.0f}'
    if v >= 10:
        return f'{v:.1f}'
    if v >= 1:
        return f'{v:.2f}'
    return f'{v:.{digits}f}'


def latency(d, method, k):
    p50 = num(d, method, k, 'srv_p50_ms')
    p95 = num(d, method, k, 'srv_p95_ms')
    return '–' if p50 is None else f'{fmt(p50)} / {fmt(p95)}'


def recall(d, method, k, metric):
    v = num(d, method, k, metric)
    if v is None:
        return '–'
    info = d[(method, k, metric)][-1][1]
    return f'{v:.4f}' + (f' ({info})' if info else '')


def ef_rows(d):
    """The knn_hnsw_ef<N> methods measured, by ef_search."""
    efs = {int(m[len('knn_hnsw_ef'):]) for (m, _, _) in d
           if re.fullmatch(r'knn_hnsw_ef\d+', m)}
    return [(f'same, ef_search {ef}', None, None, f'knn_hnsw_ef{ef}') for ef in sorted(efs)]


def table(d):
    print('| method | build s | index MB | k = 3 server p50 / p95 ms | k = 3 recall '
          '| 10 nearest p50 / p95 ms | 10 nearest recall |')
    print('|---|---|---|---|---|---|---|')
    for label, build, k3, knn in ROWS + ef_rows(d):
        b = num(d, build, '', 'build_ms') if build else None
        s = num(d, build, '', 'size_bytes') if build else None
        cells = [label,
                 '–' if b is None else fmt(b / 1000),
                 '–' if s is None else f'{s / 1048576:.1f}',
                 latency(d, k3, '3') if k3 else '–',
                 recall(d, k3, '3', 'recall') if k3 else '–',
                 latency(d, knn, '0') if knn else '–',
                 recall(d, knn, '0', 'knn_recall') if knn else '–']
        if any(c != '–' for c in cells[1:]):  # a method this run measured
            print('| ' + ' | '.join(cells) + ' |')


def pairs(rounds):
    """Same-load pairs: per k, pgvector_pair.sql runs simhash, HNSW, HNSW,
    simhash (the k = 3 and the 10-nearest rounds nest in one another)."""
    for k, label in (('3', 'k = 3'), ('0', '10 nearest')):
        of_k = [r for r in rounds if r[1] == k]
        for i in range(0, len(of_k) - 3, 4):
            (m0, _, s0), (m1, _, h0), (m2, _, h1), (m3, _, s1) = of_k[i:i + 4]
            if m0 != m3 or m1 != m2 or 'hnsw' in m0:
                print(f'- {label}: rounds {i + 1}-{i + 4} are not simhash, HNSW, HNSW, simhash')
                continue
            # each HNSW round against the simhash round next to it
            ratios = [h0 / s0, h1 / s1] if s0 > 0 and s1 > 0 else [float('nan')]
            print(f'- {label}: {m0} {fmt(s0)} and {fmt(s1)} ms, {m1} {fmt(h0)} and {fmt(h1)} ms: '
                  f'HNSW / simhash {min(ratios):.1f}-{max(ratios):.1f}x')


def main():
    if len(sys.argv) < 2:
        sys.exit('usage: hnsw_report.py RUN.csv [RUN.csv ...]')
    data, runs, paired = load(sys.argv[1:])
    for (size, dataset), d in sorted(data.items()):
        if (('hnsw', '', 'build_ms')) not in d:
            continue
        print(f'### {size} rows, {dataset} (run {", ".join(sorted(runs[(size, dataset)]))})\n')
        table(d)
        print()
        pairs(paired[(size, dataset)])
        print()


if __name__ == '__main__':
    main()
