#!/usr/bin/python3
"""
twostage_report.py -- print the two-stage tables (Markdown) from twostage.sql's CSV.

    twostage_report.py RESULTS_DIR DOCS_TSV

Reads kernel.csv (kind, k, s, n), short.csv (lang, lb, kind, cat, k, s, n)
and all612.csv (a, b, d, j: pairs of 6.12 English documents within 10 bits
with their simhash_jaccard).  For the last, computes each pair's word
3-shingle Jaccard as prepare.py does (lower-cased \\w+ runs) from DOCS_TSV,
and counts as *unrelated* the pairs whose shingle Jaccard is below
UNRELATED.
"""
import csv
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from prepare import jaccard, word_shingles  # noqa: E402

UNRELATED = 0.1         # word 3-shingle Jaccard below this: unrelated
PARTLY = 0.5            # below this (and >= UNRELATED): partly related
KS = list(range(3, 11))
SS = [0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]


def unescape(s):
    out, i = [], 0
    esc = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\"}
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s):
            out.append(esc.get(s[i + 1], s[i + 1]))
            i += 2
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def fmt(x):
    return "%.3f" % x


def fmt_rate(n, total):
    if n == 0:
        return "0"
    return "%d (%.1e)" % (n, n / total)


def main():
    results, docs_tsv = sys.argv[1], sys.argv[2]
    kern = {}
    with open(os.path.join(results, "kernel.csv")) as f:
        for r in csv.DictReader(f):
            kern[(r["kind"], int(r["k"]), round(float(r["s"]), 2))] = int(r["n"])

    def krate(kind, k, s):
        return kern[(kind, k, s)] / kern[(kind, -1, 0.0)]

    head = "| s \\ k | " + " | ".join(str(k) for k in KS) + " |"
    sep = "|---|" + "---|" * len(KS)
    for kind, title in (("pos_en", "English recall (%d pairs)"), ("pos_zh", "Chinese recall (%d pairs)")):
        print("### Kernel documents: %s\n" % (title % kern[(kind, -1, 0.0)]))
        print(head)
        print(sep)
        for s in SS:
            label = "fingerprint only" if s == 0 else "s = %.1f" % s
            print("| %s | %s |" % (label, " | ".join(fmt(krate(kind, k, s)) for k in KS)))
        print()
    for kind, title in (("neg_en", "English negatives"), ("neg_zh", "Chinese negatives"),
                        ("neg_all", "negatives of any language")):
        total = kern[(kind, -1, 0.0)]
        print("### Kernel documents: false positives, %s (%d pairs)\n" % (title, total))
        print(head)
        print(sep)
        for s in SS:
            label = "fingerprint only" if s == 0 else "s = %.1f" % s
            print("| %s | %s |" % (label, " | ".join(fmt_rate(kern[(kind, k, s)], total) for k in KS)))
        print()

    # all pairs of the 6.12 English documents
    pairs = []
    with open(os.path.join(results, "all612.csv")) as f:
        for r in csv.DictReader(f):
            pairs.append((int(r["a"]), int(r["b"]), int(r["d"]), float(r["j"])))
    need = {x for p in pairs for x in p[:2]}
    shingles = {}
    ndocs = 0
    with open(docs_tsv, encoding="utf-8") as f:
        for line in f:
            ident, ver, _path, lang, body = line.rstrip("\n").split("\t", 4)
            if ver == "6.12" and lang == "en":
                ndocs += 1
            if int(ident) in need:
                shingles[int(ident)] = word_shingles(unescape(body))
    sj = {(a, b): jaccard(shingles[a], shingles[b]) for a, b, _, _ in pairs}
    print("### All pairs of the %d English 6.12 documents (%d pairs)\n" % (ndocs, ndocs * (ndocs - 1) // 2))
    print("Pairs found, as *unrelated* (word 3-shingle Jaccard < %.1f) / *partly related* "
          "(%.1f to %.1f) / *related* (>= %.1f):\n" % (UNRELATED, UNRELATED, PARTLY, PARTLY))
    print(head)
    print(sep)
    for s in SS:
        cells = []
        for k in KS:
            c = defaultdict(int)
            for a, b, d, j in pairs:
                if d <= k and j >= s:
                    x = sj[(a, b)]
                    c["u" if x < UNRELATED else "p" if x < PARTLY else "r"] += 1
            cells.append("%d / %d / %d" % (c["u"], c["p"], c["r"]))
        label = "fingerprint only" if s == 0 else "s = %.1f" % s
        print("| %s | %s |" % (label, " | ".join(cells)))
    print()
    worst = sorted(((j, sj[(a, b)], d, a, b) for a, b, d, j in pairs if sj[(a, b)] < UNRELATED),
                   reverse=True)[:5]
    print("Highest similarity of an unrelated pair within 10 bits: %s\n" %
          ", ".join("%.3f (shingles %.3f, %d bits, ids %d/%d)" % w for w in worst))

    # short texts
    if not os.path.exists(os.path.join(results, "short.csv")):
        return
    short = defaultdict(int)
    with open(os.path.join(results, "short.csv")) as f:
        for r in csv.DictReader(f):
            cat = r["cat"]
            group = "real" if cat == "real" else ("edit" if r["kind"] == "pos" else cat)
            short[(r["lang"], r["lb"], group, int(r["k"]), round(float(r["s"]), 2))] += int(r["n"])
    kss = KS + [11, 12, 99]
    shead = "| length | pairs | s | " + " | ".join("radius" if k == 99 else str(k) for k in kss) + " |"
    ssep = "|---|---|---|" + "---|" * len(kss)
    for lang, name in (("en", "English"), ("zh", "Chinese")):
        for group, title, rate in (("real", "real revisions found", False),
                                   ("edit", "one-token edits found", False),
                                   ("random", "false positives, random pairs", True),
                                   ("same_source", "false positives, same file/catalogue", True)):
            print("### Short texts, %s: %s\n" % (name, title))
            print(shead)
            print(ssep)
            for lb in ("<=50", "<=200", "<=1000", ">1000"):
                total = short.get((lang, lb, group, -1, 0.0), 0)
                if total == 0:
                    continue
                for s in (0.0, 0.2, 0.3, 0.4, 0.5):
                    cells = []
                    for k in kss:
                        n = short[(lang, lb, group, k, s)]
                        cells.append(("%.0e" % (n / total) if n else "0") if rate else fmt(n / total))
                    print("| %s | %d | %s | %s |" % (lb, total, "-" if s == 0 else "%.1f" % s, " | ".join(cells)))
            print()


if __name__ == "__main__":
    main()
