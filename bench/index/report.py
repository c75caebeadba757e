#!/usr/bin/python3
"""bench/index/report.py -- tables (Markdown) and plot of the index benchmark.

Usage: report.py RESULTS_DIR [--plot FILE.png]

Reads every run-*.csv (and run-*.meta) that bench/index/run.sh wrote into
RESULTS_DIR.  For each (size, dataset) the latest run that measured it is
used.  Prints, per size and dataset: builds and sizes, radius searches at
k = 3 and k = 6 (server- and client-side latency, recall against the
sequential scan), nearest neighbours, single-row and bulk inserts, plans;
then the goals at 10M and 100M rows.  --plot draws the server-side p50
latency at k = 3 against the number of rows, per method (log-log).
"""
import csv
import glob
import os
import re
import sys
from collections import defaultdict

METHOD_NAMES = {
    'seq': 'seq scan',
    'seq_par2': 'seq scan, 2 workers',
    'btree4': 'btree4 (BitmapOr)',
    'btree4_mp': 'btree4, exact multi-probe',
    'btree4_par2': 'btree4, 2 build workers',
    'gin4': 'gin4 (&&)',
    'gin4_mp': 'gin4, exact multi-probe',
    'simhash': 'simhash `<@ simhash_ball`',
    'simhash_dist': 'simhash `<-> <= k`',
    'knn_simhash': 'simhash `ORDER BY <->`',
    'knn_seqsort': 'seq scan + top-10 sort',
    'knn_seqsort_par2': 'seq scan + top-10 sort, 2 workers',
    'knn_simhash_tie': 'simhash `ORDER BY <->, id` (nearest sort)',
    'knn_seqsort_tie': 'seq scan + top-10 sort `ORDER BY distance, id`',
    'plain': 'no index',
}
SIZE_ORDER = lambda s: int(s[1])


def load(directory):
    """rows[(size, dataset)] = {(method, k, metric): (value, info)} from the latest run."""
    latest = {}
    runs = {}
    for path in sorted(glob.glob(os.path.join(directory, 'run-*.csv'))):
        run = os.path.basename(path)[4:-4]
        data = defaultdict(dict)
        with open(path, newline='') as f:
            for r in csv.DictReader(f):
                key = (r['size'], int(r['n']), r['dataset'])
                k = int(r['k']) if r['k'] not in ('', None) else None
                v = float(r['value']) if r['value'] not in ('', None) else None
                data[key][(r['method'], k, r['metric'])] = (v, r['info'])
                data[key].setdefault(('_multi', k, r['method'] + '/' + r['metric']), ([], None))
                data[key][('_multi', k, r['method'] + '/' + r['metric'])][0].append(v)
        meta = {}
        mpath = path[:-4] + '.meta'
        if os.path.exists(mpath):
            with open(mpath) as f:
                for line in f:
                    if ':' in line:
                        a, b = line.split(':', 1)
                        meta[a.strip()] = b.strip()
        runs[run] = meta
        for key, d in data.items():
            if any(m == 'srv_p50_ms' for (_, _, m) in d):
                if key not in latest or latest[key][0] < run:
                    latest[key] = (run, d)
    return latest, runs


def val(d, method, k, metric):
    x = d.get((method, k, metric))
    return None if x is None else x[0]


def info(d, method, k, metric):
    x = d.get((method, k, metric))
    return None if x is None else x[1]


def allvals(d, method, k, metric):
    return [v for v in d.get(('_multi', k, '%s/%s' % (method, metric)), ([], None))[0] if v is not None]


def ms(x):
    if x is None:
        return '–'
    if x >= 1000:
        return '%.0f' % x
    if x >= 100:
        return '%.1f' % x
    if x >= 1:
        return '%.2f' % x
    return '%.3f' % x


def ratio(a, b):
    if a is None or b is None or b == 0:
        return '–'
    r = a / b
    return ('%.0fx' % r) if r >= 100 else ('%.1fx' % r) if r >= 10 else ('%.2fx' % r)


def mb(x):
    return '–' if x is None else '%.1f' % (x / 1048576.0)


def table(header, rows):
    out = ['| ' + ' | '.join(header) + ' |', '|' + '|'.join(['---'] * len(header)) + '|']
    for r in rows:
        out.append('| ' + ' | '.join('–' if c is None else str(c) for c in r) + ' |')
    return '\n'.join(out)


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def section(size, n, dataset, run, d):
    out = ['### %s rows, %s (run %s)' % (size, dataset, run), '']
    rows_k3 = val(d, 'seq', 3, 'rows_per_query_p50')
    rows_k6 = val(d, 'seq', 6, 'rows_per_query_p50')
    table_bytes = val(d, 'table', None, 'size_bytes')
    lib, lib_end = info(d, 'simhash', None, 'library'), info(d, 'simhash', None, 'library_end')
    if lib:
        out.append('simhash.so md5 %s%s.' % (lib, '' if lib_end in (None, lib) else
                                             ' at the start, **%s at the end (reinstalled during the run)**' % lib_end))
        out.append('')
    out.append('Table: %s MB heap per copy; rows within k of a query (median over queries): '
               'k = 3: %s, k = 6: %s; distance of the 10th nearest neighbour (median): %s.'
               % (mb(table_bytes), ms(rows_k3), ms(rows_k6), ms(val(d, 'knn_seqsort', None, 'knn_d10_p50'))))
    out.append('')

    # builds and sizes
    bt_build = val(d, 'btree4', None, 'build_ms')
    bt_size = val(d, 'btree4', None, 'size_bytes')
    rows = []
    for m in ('simhash', 'btree4', 'btree4_par2', 'gin4'):
        b = val(d, m, None, 'build_ms')
        s = val(d, m, None, 'size_bytes')
        if b is None and s is None:
            continue
        rows.append([METHOD_NAMES[m], '%.2f' % (b / 1000) if b is not None else None, mb(s),
                     '%.1f' % (s / n) if s is not None else None,
                     ratio(b, bt_build) if m != 'btree4' else '1', ratio(s, bt_size) if s is not None else None])
    out.append('**Build and size** (maintenance_work_mem = 1GB; no parallel workers except the '
               '"2 build workers" row; btree4 = the four builds together)')
    out.append('')
    out.append(table(['method', 'build s', 'index MB', 'bytes/row', 'build vs btree4', 'size vs btree4'], rows))
    bpe = val(d, 'simhash', None, 'bytes_per_entry')
    chk = val(d, 'simhash', None, 'check_ms')
    if bpe is not None:
        out.append('')
        out.append('simhash: %.2f bytes per entry (4 entries per row), %d tree levels; '
                   'simhash_index_check(heapallindexed) %.1f s.'
                   % (bpe, val(d, 'simhash', None, 'tree_levels') or 0, (chk or 0) / 1000))
    out.append('')

    # radius searches
    for k in (3, 6):
        rows = []
        for m in ('seq', 'seq_par2', 'btree4', 'gin4', 'btree4_mp', 'gin4_mp', 'simhash', 'simhash_dist'):
            p50 = val(d, m, k, 'srv_p50_ms')
            if p50 is None:
                continue
            rec = val(d, m, k, 'recall')
            if m.startswith('seq'):
                recs = 'reference'
            elif rec is None:
                recs = None
            else:
                recs = '%.4f' % rec
                extra = val(d, m, k, 'extra_rows')
                miss = (val(d, m, k, 'truth_rows') or 0) - ((val(d, m, k, 'found_rows') or 0) - (extra or 0))
                recs += ' (%d missed, %d extra)' % (miss, extra or 0)
            rows.append([METHOD_NAMES[m], ms(p50), ms(val(d, m, k, 'srv_p95_ms')),
                         ms(val(d, m, k, 'srv_plan_p50_ms')),
                         '%d' % (val(d, m, k, 'srv_nq') or 0),
                         ms(val(d, m, k, 'cli_avg_ms')), ms(val(d, m, k, 'cli_p50_ms')),
                         ms(val(d, m, k, 'cli_p95_ms')),
                         '%d' % val(d, m, k, 'cli_ntx') if val(d, m, k, 'cli_ntx') is not None else None,
                         recs])
        out.append('**Radius search k = %d** (ms; server: EXPLAIN ANALYZE execution time over nq '
                   'queries after a warm pass; client: pgbench -M prepared -c 1, tx transactions)' % k)
        out.append('')
        out.append(table(['method', 'server p50', 'server p95', 'planning p50', 'nq', 'client avg', 'client p50',
                          'client p95', 'tx', 'recall vs seq scan'], rows))
        out.append('')

    # KNN
    rows = []
    for m in ('knn_simhash', 'knn_seqsort', 'knn_seqsort_par2', 'knn_simhash_tie', 'knn_seqsort_tie'):
        p50 = val(d, m, 0, 'srv_p50_ms')
        if p50 is None:
            continue
        ref = 'knn_seqsort_tie' if m.endswith('_tie') else 'knn_seqsort'
        rows.append([METHOD_NAMES[m], ms(p50), ms(val(d, m, 0, 'srv_p95_ms')), '%d' % (val(d, m, 0, 'srv_nq') or 0),
                     ms(val(d, m, 0, 'cli_avg_ms')), ms(val(d, m, 0, 'cli_p50_ms')), ms(val(d, m, 0, 'cli_p95_ms')),
                     ratio(val(d, ref, 0, 'srv_p50_ms'), p50)])
    out.append('**Nearest neighbours, LIMIT 10** (ms; the last two rows break ties by id, the speed-up is '
               'against the sort with the same tie-break)')
    out.append('')
    out.append(table(['method', 'server p50', 'server p95', 'nq', 'client avg', 'client p50', 'client p95',
                      'speed-up vs seq sort (p50)'], rows))
    same = info(d, 'knn_simhash', None, 'knn_same_distances')
    if same:
        out.append('')
        out.append('Top-10 distances of the simhash index equal the sort\'s for %s queries compared.' % same)
    same = info(d, 'knn_simhash_tie', None, 'knn_same_rows')
    if same:
        kt, kn = val(d, 'knn_simhash_tie', 0, 'srv_p50_ms'), val(d, 'knn_simhash', 0, 'srv_p50_ms')
        out.append('With the tie-break, the ten rows equal the sort\'s for %s queries compared; '
                   'server p50 %s of the plain nearest-neighbour scan\'s.' % (same, ratio(kt, kn)))
    out.append('')

    # inserts
    rows = []
    bt1 = mean(allvals(d, 'btree4', None, 'insert_tps_c1'))
    bt2 = mean(allvals(d, 'btree4', None, 'insert_tps_c2'))
    for m in ('plain', 'btree4', 'gin4', 'simhash'):
        c1 = allvals(d, m, None, 'insert_tps_c1')
        c2 = allvals(d, m, None, 'insert_tps_c2')
        if not c1 and not c2:
            continue
        w1 = allvals(d, m, None, 'insert_wal_bytes_c1')
        w2 = allvals(d, m, None, 'insert_wal_bytes_c2')
        rows.append([METHOD_NAMES.get(m, m).split(' `')[0].split(' (')[0],
                     '%.0f (%s)' % (mean(c1), ', '.join('%.0f' % x for x in c1)) if c1 else None,
                     ratio(mean(c1), bt1),
                     ', '.join('%.0f' % x for x in w1) if w1 else None,
                     '%.0f (%s)' % (mean(c2), ', '.join('%.0f' % x for x in c2)) if c2 else None,
                     ratio(mean(c2), bt2),
                     ', '.join('%.0f' % x for x in w2) if w2 else None])
    if rows:
        out.append('**Single-row INSERT** into the %s-row tables (pgbench -M prepared, a CHECKPOINT before '
                   'each run; tps: mean (per round, in run order); WAL: bytes per insert in each round, '
                   'whole cluster, so other activity on the server inflates it)' % size)
        out.append('')
        out.append(table(['index', '-c 1 tps', 'vs btree4', '-c 1 WAL/insert', '-c 2 tps', 'vs btree4',
                          '-c 2 WAL/insert'], rows))
        out.append('')
    rows = []
    btb = val(d, 'btree4', None, 'bulk_insert_ms')
    for m in ('plain', 'btree4', 'gin4', 'simhash'):
        b = val(d, m, None, 'bulk_insert_ms')
        if b is None:
            continue
        err = info(d, m, None, 'bulk_insert_error')
        rows.append([METHOD_NAMES.get(m, m).split(' `')[0].split(' (')[0], '%.2f' % (b / 1000), ratio(b, btb),
                     (info(d, m, None, 'bulk_insert_ms') or '') +
                     ('; with the defaults: ' + err if err else '')])
    if rows:
        out.append('**Bulk load** `INSERT INTO t2 SELECT * FROM t` into an empty table that already has '
                   'the index (one statement, commit included)')
        out.append('')
        out.append(table(['index', 'seconds', 'vs btree4', 'note'], rows))
        out.append('')

    # plans
    rows = []
    for (m, k, metric), (v, inf) in sorted(d.items(), key=lambda x: (str(x[0][0]), x[0][1] or 0)):
        if metric != 'plan':
            continue
        gen = info(d, m, k, 'generic_plan')
        rows.append([m, k, short_plan(inf), short_plan(gen)])
    out.append('**Plans** (server: every distinct shape over the measured queries, with counts; '
               'generic: the prepared statement\'s generic plan; BHS = Bitmap Heap Scan, '
               'BIS = Bitmap Index Scan, IS = Index Scan, index names without the table prefix)')
    out.append('')
    out.append(table(['method', 'k', 'server-side plans', 'generic plan'], rows))
    out.append('')
    return '\n'.join(out)


def short_plan(p):
    if not p:
        return p
    p = re.sub(r'\bixb_[uc]_[0-9a-z]+_', '', p)
    for a, b in (('Bitmap Heap Scan', 'BHS'), ('Bitmap Index Scan', 'BIS'), ('Index Only Scan', 'IOS'),
                 ('Index Scan', 'IS')):
        p = p.replace(a, b)
    return p.replace('|', '\\|')


def verdict(ok):
    return '**met**' if ok else '**missed**'


def goals(latest):
    out = []
    rows = []
    for (size, n, dataset), (run, d) in sorted(latest.items(), key=lambda x: (x[0][1], x[0][2])):
        if n < 5000000:
            continue
        tag = '%s %s' % (size, dataset)
        if val(d, 'btree4', 3, 'srv_p50_ms') is not None:
            s3 = val(d, 'simhash', 3, 'srv_p50_ms')
            b3 = val(d, 'btree4', 3, 'srv_p50_ms')
            rows.append([tag, 'k=3 server p50 >= 20x lower than btree4',
                         'btree4 %s ms / simhash %s ms = %s' % (ms(b3), ms(s3), ratio(b3, s3)),
                         verdict(b3 / s3 >= 20)])
            c3 = val(d, 'simhash', 3, 'cli_p50_ms')
            cb3 = val(d, 'btree4', 3, 'cli_p50_ms')
            if c3 and cb3:
                ca, cba = val(d, 'simhash', 3, 'cli_avg_ms'), val(d, 'btree4', 3, 'cli_avg_ms')
                rows.append([tag, 'k=3 client (prepared) >= 5x lower than btree4',
                             'p50: %s / %s ms = %s; avg: %s / %s ms = %s'
                             % (ms(cb3), ms(c3), ratio(cb3, c3), ms(cba), ms(ca), ratio(cba, ca)),
                             verdict(cb3 / c3 >= 5)])
        s6 = val(d, 'simhash', 6, 'srv_p50_ms')
        seqs = [x for x in (val(d, 'seq', 6, 'srv_p50_ms'), val(d, 'seq_par2', 6, 'srv_p50_ms')) if x]
        if s6 and seqs:
            rec = val(d, 'simhash', 6, 'recall')
            extra = val(d, 'simhash', 6, 'extra_rows')
            exact = rec == 1 and extra == 0
            best = min(seqs)
            txt = 'recall %.4f, %d extra; fastest seq scan %s ms / simhash %s ms = %s' % (
                rec, extra, ms(best), ms(s6), ratio(best, s6))
            mp = val(d, 'btree4_mp', 6, 'srv_p50_ms')
            if mp:
                txt += ' (exact btree4 multi-probe, not in the goal: %s ms, %s)' % (ms(mp), ratio(mp, s6))
            rows.append([tag, 'k=6 exact and >= 100x faster than the fastest other exact method (seq scan)',
                         txt, verdict(exact and best / s6 >= 100)])
        ss, bs = val(d, 'simhash', None, 'size_bytes'), val(d, 'btree4', None, 'size_bytes')
        if ss and bs:
            rows.append([tag, 'index size <= 1.5x the four btrees',
                         '%s MB / %s MB = %s' % (mb(ss), mb(bs), ratio(ss, bs)), verdict(ss / bs <= 1.5)])
        sb, bb, bp = (val(d, 'simhash', None, 'build_ms'), val(d, 'btree4', None, 'build_ms'),
                      val(d, 'btree4_par2', None, 'build_ms'))
        if sb and bb:
            rows.append([tag, 'build no slower than btree4 (sum of the four builds)',
                         'simhash %.1f s, btree4 %.1f s (%s); btree4 with 2 workers %.1f s'
                         % (sb / 1000, bb / 1000, ratio(sb, bb), (bp or 0) / 1000), verdict(sb <= bb)])
        sk, bk = val(d, 'simhash', None, 'bulk_insert_ms'), val(d, 'btree4', None, 'bulk_insert_ms')
        if sk and bk:
            rows.append([tag, 'bulk insert of 1M rows <= half of btree4',
                         'simhash %.2f s / btree4 %.2f s = %s' % (sk / 1000, bk / 1000, ratio(sk, bk)),
                         verdict(sk <= bk / 2)])
        for c in (1, 2):
            si = mean(allvals(d, 'simhash', None, 'insert_tps_c%d' % c))
            bi = mean(allvals(d, 'btree4', None, 'insert_tps_c%d' % c))
            if si and bi:
                rows.append([tag, 'single-row insert rate within 10%% of btree4 (-c %d)' % c,
                             'simhash %.0f tps / btree4 %.0f tps = %s' % (si, bi, ratio(si, bi)),
                             verdict(si >= 0.9 * bi)])
        kn = val(d, 'knn_simhash', 0, 'srv_p50_ms')
        ks = val(d, 'knn_seqsort', 0, 'srv_p50_ms')
        if kn is not None:
            if dataset == 'clustered':
                rows.append([tag, 'KNN LIMIT 10 on clustered data p50 <= 2 ms',
                             'server p50 %s ms (p95 %s), client p50 %s ms; seq sort %s ms'
                             % (ms(kn), ms(val(d, 'knn_simhash', 0, 'srv_p95_ms')),
                                ms(val(d, 'knn_simhash', 0, 'cli_p50_ms')), ms(ks)), verdict(kn <= 2)])
            elif ks:
                rows.append([tag, 'KNN LIMIT 10 on uniform data >= 20x faster than the seq top-10 sort',
                             'seq sort %s ms / simhash %s ms = %s (p95 %s ms)'
                             % (ms(ks), ms(kn), ratio(ks, kn), ms(val(d, 'knn_simhash', 0, 'srv_p95_ms'))),
                             verdict(ks / kn >= 20)])
        kt = val(d, 'knn_simhash_tie', 0, 'srv_p50_ms')
        pr = val(d, 'knn_simhash_tie', 0, 'paired_ratio_p50')
        if kn and kt:
            # the paired ratio (median over queries of tie / plain, the two
            # interleaved, each query cold for both: functions.sql, ixb_pair)
            # is the verdict when measured: noise hits both
            rows.append([tag, 'KNN LIMIT 10 with a tie-break (ORDER BY distance, id) within 1.5x of plain KNN',
                         'server p50 %s ms / %s ms = %s%s (client p50 %s / %s ms); same rows as the sort: %s'
                         % (ms(kt), ms(kn), ratio(kt, kn),
                            '; paired median ratio %.2fx' % pr if pr else '',
                            ms(val(d, 'knn_simhash_tie', 0, 'cli_p50_ms')),
                            ms(val(d, 'knn_simhash', 0, 'cli_p50_ms')),
                            info(d, 'knn_simhash_tie', None, 'knn_same_rows')),
                         verdict((pr if pr else kt / kn) <= 1.5)])
        if n >= 50000000:
            sb = val(d, 'simhash', None, 'build_ms')
            rows.append([tag, 'build within 10 minutes', '%.1f min' % (sb / 60000), verdict(sb <= 600000)])
            s3 = val(d, 'simhash', 3, 'srv_p50_ms')
            rows.append([tag, 'k=3 server p50 under 1 ms', '%s ms (p95 %s ms; seq scan %s ms)'
                         % (ms(s3), ms(val(d, 'simhash', 3, 'srv_p95_ms')), ms(val(d, 'seq', 3, 'srv_p50_ms'))),
                         verdict(s3 < 1)])
    out.append(table(['data', 'goal', 'measured', 'verdict'], rows))
    return '\n'.join(out)


def plot(latest, path):
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        print('matplotlib missing: no plot', file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(7.5, 5))
    colors = {'seq': 'tab:gray', 'seq_par2': 'tab:brown', 'btree4': 'tab:blue', 'gin4': 'tab:green',
              'simhash': 'tab:red'}
    for m in ('seq', 'seq_par2', 'btree4', 'gin4', 'simhash'):
        for dataset, style in (('uniform', '-'), ('clustered', '--')):
            pts = sorted((n, val(d, m, 3, 'srv_p50_ms')) for (size, n, ds), (run, d) in latest.items()
                         if ds == dataset and val(d, m, 3, 'srv_p50_ms') is not None)
            if not pts:
                continue
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker='o', color=colors[m],
                    label='%s, %s' % (METHOD_NAMES[m].replace('`', ''), dataset))
    ax.set_xscale('log')
    ax.set_yscale('log')
    ax.set_xlabel('rows')
    ax.set_ylabel('server-side p50 latency, k = 3 (ms)')
    ax.set_title('Radius search k = 3: simhash index vs stock PostgreSQL 15')
    ax.grid(True, which='both', alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def main():
    args = sys.argv[1:]
    plot_path = None
    if '--plot' in args:
        i = args.index('--plot')
        plot_path = args[i + 1]
        del args[i:i + 2]
    latest, runs = load(args[0] if args else os.path.join(os.path.dirname(__file__), 'results'))
    used = sorted({run for run, _ in latest.values()})
    print('## Runs used\n')
    for run in used:
        m = runs.get(run, {})
        print('- %s: `%s`, %s; %s; %s; %s; %s' % (run, m.get('command', '?'), m.get('date', '?'),
                                                m.get('host', '?'), m.get('cpu', '?'),
                                                m.get('server', '?').split(' on ')[0], m.get('settings', '?')))
    print()
    print('## Goals\n')
    print(goals(latest))
    print()
    print('## Full tables\n')
    for (size, n, dataset), (run, d) in sorted(latest.items(), key=lambda x: (x[0][1], x[0][2] != 'uniform')):
        print(section(size, n, dataset, run, d))
    if plot_path:
        plot(latest, plot_path)


if __name__ == '__main__':
    main()
