#!/usr/bin/python3
"""
short_report.py -- print the short-text tables (Markdown) from short_eval.sql's CSV.

    short_report.py RESULTS_DIR

Reads dist.csv (lang, lbucket, wbucket, source, unit, kind, cat, d, n) and,
if it has rows, radius.csv (lang, lbucket, kind, cat, within, n).  Prints,
for English and Chinese, recall by length bucket and k = 3..12 for every
positive category, the false-positive rate of both negative categories,
the same by feature weight W, the smallest k that keeps 90 % / 95 % of
one-token edits, and the figures at k = simhash_radius(text).
Recall = share of positive pairs at distance <= k; false-positive rate =
share of negative pairs at distance <= k.
"""
import csv
import os
import sys
from collections import defaultdict

KS = range(3, 13)
LBUCKETS = ["<=50", "<=200", "<=1000", ">1000"]
WBUCKETS = ["<=4", "<=8", "<=16", "<=32", "<=64", "<=128", "<=256", "<=1024", ">1024"]
LANGS = [("en", "English"), ("zh", "Chinese")]
EDIT1 = {"en": ("word_sub", "word_ins", "word_del"), "zh": ("han_sub", "han_ins", "han_del")}
POS = {"en": ["real", "edit1", "word_sub", "word_ins", "word_del", "punct", "case"],
       "zh": ["real", "edit1", "han_sub", "han_ins", "han_del", "punct"]}
LABEL = {"real": "real variants", "edit1": "one token edited (sub+ins+del)",
         "word_sub": "one word replaced", "word_ins": "one word inserted",
         "word_del": "one word deleted", "han_sub": "one Han character replaced",
         "han_ins": "one Han character inserted", "han_del": "one Han character deleted",
         "punct": "punctuation", "case": "case of one word",
         "random": "random pairs", "same_source": "same file/catalogue"}


def fmt_rate(x):
    return "–" if x is None else "0" if x == 0 else "%.1e" % x


def main():
    res = sys.argv[1]
    # (lang, axis, bucket, cat) -> d -> n, axis 'l' (length) or 'w' (weight)
    hist = defaultdict(lambda: defaultdict(int))
    with open(os.path.join(res, "dist.csv"), newline="") as f:
        for r in csv.DictReader(f):
            d, n, lang = int(r["d"]), int(r["n"]), r["lang"]
            cats = [r["cat"]]
            if r["cat"] in EDIT1[lang]:
                cats.append("edit1")
            for cat in cats:
                for axis, bkt in (("l", r["lbucket"]), ("w", r["wbucket"])):
                    hist[(lang, axis, bkt, cat)][d] += n
                    hist[(lang, axis, "all", cat)][d] += n if axis == "l" else 0

    def rate(lang, axis, bkt, cat, k):
        h = hist.get((lang, axis, bkt, cat))
        if not h:
            return None, 0
        total = sum(h.values())
        return sum(n for d, n in h.items() if d <= k) / total, total

    def row(lang, axis, bkt, cat, as_rate):
        cells = []
        n = 0
        for k in KS:
            x, n = rate(lang, axis, bkt, cat, k)
            cells.append(fmt_rate(x) if as_rate else "–" if x is None else "%.3f" % x)
        return n, cells

    head = "| " + " | ".join("k=%d" % k for k in KS) + " |"
    sep = "|---" * len(KS) + "|"
    for lang, name in LANGS:
        print("### %s: recall by length and k\n" % name)
        print("| length (chars) | positives | pairs " + head)
        print("|---|---|---" + sep)
        for bkt in LBUCKETS:
            for cat in POS[lang]:
                n, cells = row(lang, "l", bkt, cat, False)
                if n:
                    print("| %s | %s | %d | %s |" % (bkt, LABEL[cat], n, " | ".join(cells)))
        print()
        print("### %s: false-positive rate by length and k\n" % name)
        print("| length (chars) | negatives | pairs " + head)
        print("|---|---|---" + sep)
        for bkt in LBUCKETS:
            for cat in ("random", "same_source"):
                n, cells = row(lang, "l", bkt, cat, True)
                if n:
                    print("| %s | %s | %d | %s |" % (bkt, LABEL[cat], n, " | ".join(cells)))
        print()

    print("### By feature weight W (sum of simhash_features' weights), both languages\n")
    print("Recall of one-token edits and false-positive rate of same-source "
          "negatives; EN / ZH in each cell.\n")
    print("| W | edits EN/ZH " + head)
    print("|---|---" + sep)
    for bkt in WBUCKETS:
        cells, ns = [], []
        for k in KS:
            parts = []
            for lang, _ in LANGS:
                x, n = rate(lang, "w", bkt, "edit1", k)
                parts.append("–" if x is None else "%.2f" % x)
            cells.append(" / ".join(parts))
        for lang, _ in LANGS:
            ns.append(str(rate(lang, "w", bkt, "edit1", 3)[1]))
        print("| %s | %s | %s |" % (bkt, " / ".join(ns), " | ".join(cells)))
    print()
    print("| W | same-source negatives EN/ZH " + head)
    print("|---|---" + sep)
    for bkt in WBUCKETS:
        cells, ns = [], []
        for k in KS:
            cells.append(" / ".join(fmt_rate(rate(lang, "w", bkt, "same_source", k)[0])
                                    for lang, _ in LANGS))
        for lang, _ in LANGS:
            ns.append(str(rate(lang, "w", bkt, "same_source", 3)[1]))
        print("| %s | %s | %s |" % (bkt, " / ".join(ns), " | ".join(cells)))
    print()

    print("### Smallest k that keeps 90 % and 95 % of one-token edits\n")
    print("With the real-variant recall and the false-positive rates at that k.\n")
    print("| language | length | k (90 %) | edits | real | FP random | FP same source "
          "| k (95 %) | edits | real | FP random | FP same source |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for lang, name in LANGS:
        for bkt in LBUCKETS + ["all"]:
            cells = []
            for goal in (0.90, 0.95):
                k = next((k for k in range(0, 65)
                          if (rate(lang, "l", bkt, "edit1", k)[0] or 0) >= goal), None)
                if k is None:
                    cells += ["–"] * 5
                    continue
                real = rate(lang, "l", bkt, "real", k)[0]
                cells += [str(k), "%.3f" % rate(lang, "l", bkt, "edit1", k)[0],
                          "–" if real is None else "%.3f" % real,
                          fmt_rate(rate(lang, "l", bkt, "random", k)[0]),
                          fmt_rate(rate(lang, "l", bkt, "same_source", k)[0])]
            print("| %s | %s | %s |" % (name, bkt, " | ".join(cells)))
    print()

    path = os.path.join(res, "radius.csv")
    rows = []
    if os.path.exists(path):
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    if rows:
        tab = defaultdict(lambda: [0, 0])       # (lang, bkt, cat) -> [within, total]
        for r in rows:
            cats = [r["cat"]] + (["edit1"] if r["cat"] in EDIT1[r["lang"]] else [])
            for cat in cats:
                for bkt in (r["lbucket"], "all"):
                    t = tab[(r["lang"], bkt, cat)]
                    t[1] += int(r["n"])
                    if r["within"] == "t":
                        t[0] += int(r["n"])
        print("### At k = simhash_radius(text)\n")
        print("| language | length | edits | real | punct | FP random | FP same source |")
        print("|---|---|---|---|---|---|---|")
        for lang, name in LANGS:
            for bkt in LBUCKETS + ["all"]:
                def r_(cat, is_rate=False):
                    w, t = tab.get((lang, bkt, cat), (0, 0))
                    if not t:
                        return "–"
                    return fmt_rate(w / t) if is_rate else "%.3f" % (w / t)
                print("| %s | %s | %s | %s | %s | %s | %s |" % (
                    name, bkt, r_("edit1"), r_("real"), r_("punct"),
                    r_("random", True), r_("same_source", True)))
        print()

    path = os.path.join(res, "ktime.csv")
    if os.path.exists(path):
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        ms = {(r["method"], int(r["k"])): float(r["ms_per_query"]) for r in rows}
        nrows = {(r["method"], int(r["k"])): r["rows_per_query"] for r in rows}
        seq = [v for (m, _), v in ms.items() if m == "seqscan"]
        base = sum(seq) / len(seq) if seq else None
        print("### Query time by radius (1M random fingerprints, one process)\n")
        print("Index scans, planning included, relative to k = 3 and to a sequential "
              "scan of the same run (mean of %d seq scan timings: %.0f ms).\n"
              % (len(seq), base or 0))
        print("| k | ms per query | x k = 3 | seq scan / index | rows per query |")
        print("|---|---|---|---|---|")
        for k in sorted(k for m, k in ms if m == "index"):
            t = ms[("index", k)]
            print("| %d | %.2f | %.1f | %s | %s |" % (
                k, t, t / ms[("index", 3)], "%.0f" % (base / t) if base else "–",
                nrows[("index", k)]))
        print()


if __name__ == "__main__":
    main()
