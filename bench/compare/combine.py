#!/usr/bin/python3
# bench/compare/combine.py -- medians of per-round B/A CPU ratios over the
# rounds of several runs of compare_builds.sh (CSV exports of cb_r, as in
# bench/compare/results/): python3 bench/compare/combine.py run1.csv run2.csv
import csv, statistics, sys, collections
# per metric: per-round ratio sum(B)/sum(A) over all given runs' rounds
ratios = collections.defaultdict(list); rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sys.argv[1:]:
    per = collections.defaultdict(lambda: {'A': 0.0, 'B': 0.0})
    for r in csv.DictReader(open(f)):
        if r['label'] not in ('A', 'B'): continue
        per[(r['metric'], r['round'])][r['label']] += float(r['cpu_ms'])
        rows[r['metric']][r['label']].append(float(r['cpu_ms']))
    for (m, rd), v in per.items():
        ratios[m].append(v['B'] / v['A'])
order = ['base: btree build 1M', 'index build uniform', 'index build clustered', 'base: btree lookup x8000', 'radius k=3 uniform', 'radius k=3 clustered', 'radius k=6 uniform', 'radius k=6 clustered', 'knn 10 uniform', 'knn 10 clustered', 'base: plan btree lookup x8000', 'plan fp <-> q <= 3 x8000', 'band self-join k=3 (1M clustered)', 'base: insert btree x10000', 'insert via trigger x10000', 'base: COPY btree', 'COPY via trigger']
for m in order:
    if m not in ratios: continue
    x = sorted(ratios[m])
    print(f"{m:36s} A {statistics.median(rows[m]['A']):8.1f} B {statistics.median(rows[m]['B']):8.1f}  ratio med {statistics.median(x):.3f}  n={len(x)}  q1-q3 {x[len(x)//4]:.2f}-{x[(3*len(x))//4]:.2f}")
