#!/usr/bin/python3
"""bench/ingest/report.py -- tables (Markdown) and plot of the ingest benchmark.

Usage: report.py RESULTS_DIR [--run RUN] [--plot FILE.png]

Reads run-RUN.csv (and run-RUN.meta) that bench/ingest/run.sh wrote into
RESULTS_DIR; without --run, the latest run of the largest size.  Prints the
rows' near-duplicate rates, the single-row INSERT and COPY tables (medians
over the rounds, with the spread), and the goals of issue 10 with verdicts.
--plot draws single-row throughput, server CPU per row and COPY time per
variant.
"""
import csv
import glob
import os
import statistics
import sys
from collections import defaultdict

NAMES = {
    'plain': 'no fingerprint, no index',
    'gen': 'generated fp, no index',
    'gen_w': 'generated fp, no index (wrapper)',
    'gen_ix': 'generated fp + simhash index',
    'gen_ix_w': 'generated fp + simhash index (wrapper)',
    'fpt_ix': 'fingerprint trigger + simhash index',
    'fpt_ix_w': 'fingerprint trigger + simhash index (wrapper)',
    'b4_ix': 'generated fp + btree4 indexes',
    'nd_reject_gen_w': 'near-dup trigger reject, generated fp (wrapper)',
    'nd_skip_gen': 'near-dup trigger skip, generated fp',
    'nd_link_gen': 'near-dup trigger link, generated fp',
    'nd_reject_fpt_w': 'near-dup trigger reject, fingerprint trigger (wrapper)',
    'nd_skip_fpt': 'near-dup trigger skip, fingerprint trigger',
    'nd_link_fpt': 'near-dup trigger link, fingerprint trigger',
    'b4_reject_w': 'PL/pgSQL btree4 trigger reject (wrapper)',
    'b4_skip': 'PL/pgSQL btree4 trigger skip',
    'b4_link': 'PL/pgSQL btree4 trigger link',
}
ORDER = list(NAMES)
SETTINGS = ['sync=on c=1', 'sync=on c=2', 'sync=off c=1']
MODES = ['reject', 'skip', 'link']


def load(directory, run=None):
    """(run, n, meta, data) with data[(variant, setting, metric)] = [values in order]."""
    runs = {}
    for path in sorted(glob.glob(os.path.join(directory, 'run-*.csv'))):
        with open(path, newline='') as f:
            rows = list(csv.DictReader(f))
        if rows:
            runs[os.path.basename(path)[4:-4]] = rows
    if not runs:
        sys.exit('no runs in %s' % directory)
    if run is None:
        run = max(runs, key=lambda r: (int(runs[r][0]['n']), r))
    data = defaultdict(list)
    info = defaultdict(list)
    for r in runs[run]:
        key = (r['variant'], r['setting'] or None, r['metric'])
        data[key].append(float(r['value']) if r['value'] not in ('', None) else None)
        info[key].append(r['info'])
    meta = {}
    mpath = os.path.join(directory, 'run-%s.meta' % run)
    if os.path.exists(mpath):
        with open(mpath) as f:
            for line in f:
                if ':' in line:
                    a, b = line.split(':', 1)
                    meta[a.strip()] = b.strip()
    return run, int(runs[run][0]['n']), meta, data, info


def med(data, v, s, m):
    xs = [x for x in data.get((v, s, m), []) if x is not None]
    return statistics.median(xs) if xs else None


def spread(data, v, s, m, fmt):
    xs = [x for x in data.get((v, s, m), []) if x is not None]
    if len(xs) < 2:
        return ''
    return ' (%s–%s)' % (fmt % min(xs), fmt % max(xs))


def f0(x):
    return '–' if x is None else '{:,.0f}'.format(x)


def f1(x):
    return '–' if x is None else '%.1f' % x


def f2(x):
    return '–' if x is None else '%.2f' % x


def table(header, rows):
    out = ['| ' + ' | '.join(header) + ' |', '|' + '---|' * len(header)]
    out += ['| ' + ' | '.join(str(c) for c in r) + ' |' for r in rows]
    return '\n'.join(out)


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def data_section(n, data):
    d = lambda m: med(data, 'data', None, m)
    out = ['### The rows\n']
    out.append('%s paragraphs; base rows %s bytes on average, arriving rows %s bytes.  Base rows with '
               'another base row within 3 bits: %s (%.2f %%).\n'
               % (f0(d('paragraphs')), f0(d('base_bytes_avg')), f0(d('arrival_bytes_avg')),
                  f0(d('base_rows_with_near')), 100 * (d('base_rows_with_near') or 0) / n))
    rows = []
    for kind in ('fresh', 'exact', 'number', 'word', 'both'):
        a, b = d('arrivals_' + kind), d('arrivals_near_base_' + kind)
        if a is None:
            continue
        rows.append([kind, f0(a), f0(b), '%.1f %%' % (100 * b / a) if a else '–',
                     f0(d('edit_distance_p50_' + kind)) if kind != 'fresh' else '–'])
    a, b, s = n, d('arrivals_near_base'), d('arrivals_near_stream')
    rows.append(['**all**', f0(a), f0(b), '**%.1f %%**' % (100 * b / a), '–'])
    out.append(table(['arriving rows', 'count', 'within 3 bits of a base row', 'share',
                      'median distance to its source'], rows))
    out.append('\nWithin 3 bits of a base row or of an earlier arriving row (what a COPY in id '
               'order links): %s (%.1f %%).\n' % (f0(s), 100 * s / n))
    return '\n'.join(out)


def single_section(data):
    out = ['### Single-row INSERT (one transaction per row)\n',
           'Transactions per second (median over the rounds, range in brackets); server CPU per '
           'transaction in microseconds (median; the backends\' on-CPU time from '
           '/proc/PID/schedstat); caught: rows rejected, skipped or linked, in % of '
           'transactions.\n']
    rows = []
    for v in ORDER:
        if (v, SETTINGS[0], 'tps') not in data:
            continue
        r = ['`%s` %s' % (v, NAMES[v])]
        for s in SETTINGS:
            r.append(f0(med(data, v, s, 'tps')) + spread(data, v, s, 'tps', '%.0f'))
        for s in SETTINGS:
            r.append(f0(med(data, v, s, 'cpu_us_per_tx')))
        c = sum(x for x in data.get((v, SETTINGS[2], 'caught'), []) if x)
        t = sum(x for x in data.get((v, SETTINGS[2], 'ntx'), []) if x)
        r.append('%.1f %%' % (100 * c / t) if t and (v.startswith('nd') or v.startswith('b4_') and v != 'b4_ix') else '–')
        rows.append(r)
    out.append(table(['variant'] + ['tps ' + s for s in SETTINGS] + ['CPU µs/tx ' + s for s in SETTINGS]
                     + ['caught (sync=off)'], rows))
    return '\n'.join(out)


def copy_section(n, data):
    out = ['### COPY of %s arriving rows into a table holding %s rows\n' % (f0(n), f0(n)),
           'Wall time (median over the rounds, range in brackets) and the backend\'s CPU time, '
           'commit included.\n']
    rows = []
    for v in ORDER:
        ms = med(data, v, 'copy', 'copy_ms')
        if ms is None:
            continue
        base = 'fpt_ix' if v.endswith('_fpt') else 'gen_ix'
        rb = ratio(ms, med(data, base, 'copy', 'copy_ms'))
        rows.append(['`%s` %s' % (v, NAMES[v]), '%.1f' % (ms / 1000) + spread(data, v, 'copy', 'copy_ms', '%.0f').replace('(', '(ms: '),
                     f1((med(data, v, 'copy', 'copy_cpu_ms') or 0) / 1000),
                     f0(med(data, v, 'copy', 'rows_stored') and med(data, v, 'copy', 'rows_stored')),
                     f0(med(data, v, 'copy', 'rows_linked')),
                     ('%.2fx `%s`' % (rb, base)) if rb and v not in ('plain', 'gen', base) else '–'])
    out.append(table(['variant', 'wall s', 'CPU s', 'rows stored', 'rows linked', 'wall vs'], rows))
    mism = data.get(('nd_link_gen', 'copy', 'link_mismatch'))
    out.append('\nLinks of `nd_link_gen` against rate.sql\'s count: %s.\n'
               % ('MISMATCH %s' % mism if mism else 'equal in every round'))
    return '\n'.join(out)


def verdict(ok):
    return '**met**' if ok else '**missed**'


def goals(data):
    out = ['### Goals\n']
    rows = []
    # 1. single-row cost ratio against the plain indexed insert
    worst = {}
    for fk, base in (('gen', 'gen_ix'), ('fpt', 'fpt_ix')):
        for mode in MODES:
            v = 'nd_%s_%s' % (mode, fk) + ('_w' if mode == 'reject' else '')
            b = base + ('_w' if mode == 'reject' else '')
            parts = []
            for s in SETTINGS:
                r = ratio(med(data, b, s, 'tps'), med(data, v, s, 'tps'))
                if r is not None:
                    parts.append('%s %.2fx' % (s, r))
                    if s != 'sync=off c=1':
                        worst[(v, s)] = r
            rc = ratio(med(data, v, SETTINGS[2], 'cpu_us_per_tx'), med(data, b, SETTINGS[2], 'cpu_us_per_tx'))
            if parts:
                rows.append(['single-row cost <= 1.5x the plain indexed insert (`%s` vs `%s`)' % (v, b),
                             'time per row (1/tps): ' + ', '.join(parts)
                             + ('; server CPU per row (sync=off): %.2fx' % rc if rc else ''),
                             verdict(all(worst.get((v, s), 0) <= 1.5 for s in SETTINGS[:2]))])
    # 2. against the PL/pgSQL btree4 trigger
    for mode in MODES:
        w = '_w' if mode == 'reject' else ''
        v, b4 = 'nd_%s_gen%s' % (mode, w), 'b4_%s%s' % (mode, w)
        if (v, SETTINGS[0], 'tps') not in data or (b4, SETTINGS[0], 'tps') not in data:
            continue
        raw = ['%s %.2fx' % (s, ratio(med(data, v, s, 'tps'), med(data, b4, s, 'tps'))) for s in SETTINGS
               if ratio(med(data, v, s, 'tps'), med(data, b4, s, 'tps'))]
        c = lambda x: med(data, x, SETTINGS[2], 'cpu_us_per_tx')
        base_nd, base_b4 = 'gen_ix' + w, ('b4_ix' if not w else None)
        trig_nd = c(v) - c(base_nd) if c(v) is not None and c(base_nd) is not None else None
        sol_nd = c(v) - c('gen' + w) if c(v) is not None and c('gen' + w) is not None else None
        sol_b4 = c(b4) - c('gen' + w) if c(b4) is not None and c('gen' + w) is not None else None
        trig_b4 = c(b4) - c(base_b4) if base_b4 and c(b4) is not None and c(base_b4) is not None else None
        txt = 'throughput nd/b4: ' + ', '.join(raw)
        txt += '; server CPU per row above `gen%s` (index + check): nd %s µs, b4 %s µs = %s' % (
            w, f1(sol_nd), f1(sol_b4), ('%.1fx' % (sol_b4 / sol_nd)) if sol_nd and sol_b4 and sol_nd > 0 else '–')
        if trig_b4 is not None:
            txt += '; trigger alone (above `gen_ix` / `b4_ix`): nd %s µs, b4 %s µs = %s' % (
                f1(trig_nd), f1(trig_b4), ('%.1fx' % (trig_b4 / trig_nd)) if trig_nd and trig_nd > 0 else '–')
        basis = sol_b4 / sol_nd if sol_nd and sol_b4 and sol_nd > 0 else None
        rows.append(['>= 10x faster than the PL/pgSQL btree4 trigger (%s; basis: server CPU per row above `gen%s`)' % (mode, w),
                     txt, verdict(basis is not None and basis >= 10)])
    # 3. COPY
    for v, base in (('nd_skip_gen', 'gen_ix'), ('nd_link_gen', 'gen_ix'),
                    ('nd_skip_fpt', 'fpt_ix'), ('nd_link_fpt', 'fpt_ix'),
                    ('nd_skip_fpt', 'gen_ix'), ('nd_link_fpt', 'gen_ix')):
        r = ratio(med(data, v, 'copy', 'copy_ms'), med(data, base, 'copy', 'copy_ms'))
        if r is None:
            continue
        rc = ratio(med(data, v, 'copy', 'copy_cpu_ms'), med(data, base, 'copy', 'copy_cpu_ms'))
        rows.append(['COPY through the trigger <= 3x COPY without it (`%s` vs `%s`)' % (v, base),
                     '%.1f s / %.1f s = %.2fx (CPU %.2fx)' % (med(data, v, 'copy', 'copy_ms') / 1000,
                                                            med(data, base, 'copy', 'copy_ms') / 1000, r, rc or 0),
                     verdict(r <= 3)])
    out.append(table(['goal', 'measured', 'verdict'], rows))
    return '\n'.join(out)


def plot(n, data, path):
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        print('matplotlib missing: no plot', file=sys.stderr)
        return
    vs = [v for v in ORDER if (v, SETTINGS[0], 'tps') in data]
    fig, axes = plt.subplots(1, 3, figsize=(15, 6.5), gridspec_kw={'width_ratios': [1.2, 1, 1]})
    colors = {'sync=on c=1': 'tab:blue', 'sync=on c=2': 'tab:cyan', 'sync=off c=1': 'tab:orange'}
    ax = axes[0]
    h = 0.27
    for i, s in enumerate(SETTINGS):
        ys = [j + (i - 1) * h for j in range(len(vs))]
        ax.barh(ys, [med(data, v, s, 'tps') or 0 for v in vs], height=h, color=colors[s], label=s)
    ax.set_yticks(range(len(vs)))
    ax.set_yticklabels(vs, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel('single-row INSERT, transactions/s (median)')
    ax.legend(fontsize=8)
    ax.grid(True, axis='x', alpha=0.3)
    ax = axes[1]
    ax.barh(range(len(vs)), [med(data, v, SETTINGS[2], 'cpu_us_per_tx') or 0 for v in vs],
            color=['tab:red' if v.startswith('nd') else 'tab:gray' if v.startswith('b4') else 'tab:green'
                   for v in vs])
    ax.set_yticks(range(len(vs)))
    ax.set_yticklabels([])
    ax.invert_yaxis()
    ax.set_xlabel('server CPU per row, µs (sync=off, 1 client)')
    ax.grid(True, axis='x', alpha=0.3)
    cv = [v for v in ORDER if med(data, v, 'copy', 'copy_ms') is not None]
    ax = axes[2]
    ax.barh([j - 0.2 for j in range(len(cv))], [med(data, v, 'copy', 'copy_ms') / 1000 for v in cv],
            height=0.4, color='tab:purple', label='wall')
    ax.barh([j + 0.2 for j in range(len(cv))], [(med(data, v, 'copy', 'copy_cpu_ms') or 0) / 1000 for v in cv],
            height=0.4, color='tab:pink', label='backend CPU')
    ax.set_yticks(range(len(cv)))
    ax.set_yticklabels(cv, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel('COPY of %s rows, seconds (median)' % f0(n))
    ax.legend(fontsize=8)
    ax.grid(True, axis='x', alpha=0.3)
    fig.suptitle('Rows arriving in a table of %s rows: near-duplicate trigger vs stock PostgreSQL 15' % f0(n))
    fig.tight_layout()
    fig.savefig(path, dpi=80)


def main():
    args = sys.argv[1:]
    opts = {}
    for o in ('--plot', '--run'):
        if o in args:
            i = args.index(o)
            opts[o] = args[i + 1]
            del args[i:i + 2]
    run, n, meta, data, info = load(args[0] if args else os.path.join(os.path.dirname(__file__), 'results'),
                                    opts.get('--run'))
    print('## Run %s\n' % run)
    for k in ('command', 'date', 'host', 'cpu', 'server', 'settings', 'env', 'load average at start',
              'load average at end', 'git', 'simhash.so'):
        if k in meta:
            print('- %s: %s' % (k, meta[k]))
    loads = [float(i.split('load ')[1].split()[0]) for k, v in info.items() if k[2] in ('tps', 'copy_ms')
             for i in v if 'load ' in i]
    if loads:
        print('- 1-minute load average at the start of each measurement: median %.1f, min %.1f, max %.1f'
              % (statistics.median(loads), min(loads), max(loads)))
    print()
    print(goals(data))
    print()
    print(data_section(n, data))
    print()
    print(single_section(data))
    print()
    print(copy_section(n, data))
    if '--plot' in opts:
        plot(n, data, opts['--plot'])


if __name__ == '__main__':
    main()
