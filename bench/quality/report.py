#!/usr/bin/python3
"""
report.py -- print the bench/quality tables (Markdown) from eval.sql/junk.sql CSV.

    report.py RESULTS_DIR

Reads dist.csv (scheme, kind, d, n), gains.csv, check.csv and junk.csv
from RESULTS_DIR and prints:
  - recall at k = 3 and false-positive rates at k = 3, per scheme
  - recall (English, Chinese) and false-positive rates at k = 3..8
  - junk robustness per weighting
Recall = share of positive pairs at Hamming distance <= k; false-positive
rate = share of negative pairs at distance <= k.
"""
import csv
import os
import sys
from collections import defaultdict

# display order and a short description of each scheme
SCHEMES = [
    ("a_default", "simhash(text) as compiled"),
    ("b_cap_none", "default tokens, TF, no cap"),
    ("b_cap256", "default tokens, TF cap 256"),
    ("b_cap128", "default tokens, TF cap 128"),
    ("b_cap64", "default tokens, TF cap 64"),
    ("b_cap32", "default tokens, TF cap 32"),
    ("b_cap16", "default tokens, TF cap 16"),
    ("b_cap8", "default tokens, TF cap 8"),
    ("b_cap4", "default tokens, TF cap 4"),
    ("b_cap2", "default tokens, TF cap 2"),
    ("b_cap1", "default tokens, binary"),
    ("f_rel10", "default tokens, cap max(8, W8/10)"),
    ("f_rel16", "default tokens, cap max(8, W8/16) (the default)"),
    ("f_rel20", "default tokens, cap max(8, W8/20)"),
    ("f_rel50", "default tokens, cap max(8, W8/50)"),
    ("c_words_hanbi", "words + Han bigrams, TF cap 8"),
    ("d_char4", "char 4-grams of word chars, TF cap 8"),
    ("e_shingle3", "word 3-shingles, TF cap 8"),
]
KS = range(3, 9)
NEG_KINDS = [("neg_all", "FP all"), ("neg_en", "FP en"), ("neg_zh", "FP zh")]


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def fmt_rate(x):
    """A false-positive rate: 0, or two significant digits in e-notation."""
    return "0" if x == 0 else "%.1e" % x


def main():
    res = sys.argv[1]
    hist = defaultdict(lambda: defaultdict(int))     # (scheme, kind) -> d -> n
    for r in read_csv(os.path.join(res, "dist.csv")):
        hist[(r["scheme"], r["kind"])][int(r["d"])] += int(r["n"])

    def within(scheme, kind, k):
        h = hist[(scheme, kind)]
        total = sum(h.values())
        hit = sum(n for d, n in h.items() if d <= k)
        return hit, total

    def rate(scheme, kind, k):
        hit, total = within(scheme, kind, k)
        return hit / total if total else float("nan")

    schemes = [(s, desc) for s, desc in SCHEMES if (s, "pos_en") in hist]
    gains = {(r["scheme"], r["kind"]): (int(r["gained"]), int(r["lost"]))
             for r in read_csv(os.path.join(res, "gains.csv"))}

    n = {kind: within("a_default", kind, 64)[1]
         for kind in ("pos_en", "pos_zh", "neg_all", "neg_en", "neg_zh")}
    print("Pairs: %d English and %d Chinese positives; negatives: %d (all), "
          "%d (en), %d (zh)\n" % (n["pos_en"], n["pos_zh"], n["neg_all"],
                                  n["neg_en"], n["neg_zh"]))

    print("### At k = 3\n")
    print("| scheme | features and weights | EN recall | ZH recall | FP all | FP en | FP zh "
          "| EN +/- vs default | ZH +/- vs default |")
    print("|---|---|---|---|---|---|---|---|---|")
    for s, desc in schemes:
        ge, le = gains.get((s, "pos_en"), (0, 0))
        gz, lz = gains.get((s, "pos_zh"), (0, 0))
        print("| %s | %s | %.3f | %.3f | %s | %s | %s | +%d -%d | +%d -%d |" % (
            s, desc, rate(s, "pos_en", 3), rate(s, "pos_zh", 3),
            fmt_rate(rate(s, "neg_all", 3)), fmt_rate(rate(s, "neg_en", 3)),
            fmt_rate(rate(s, "neg_zh", 3)), ge, le, gz, lz))
    print()

    for kind, title in [("pos_en", "English recall"), ("pos_zh", "Chinese recall")]:
        print("### %s at k = 3..8\n" % title)
        print("| scheme | " + " | ".join("k=%d" % k for k in KS) + " |")
        print("|---|" + "---|" * len(KS))
        for s, _ in schemes:
            print("| %s | " % s + " | ".join("%.3f" % rate(s, kind, k) for k in KS) + " |")
        print()

    for kind, title in NEG_KINDS:
        print("### False-positive rate (%s pairs: %s) at k = 3..8\n"
              % (kind, "both Chinese" if kind == "neg_zh" else
                 "both English" if kind == "neg_en" else "any documents"))
        print("| scheme | " + " | ".join("k=%d" % k for k in KS) + " |")
        print("|---|" + "---|" * len(KS))
        for s, _ in schemes:
            print("| %s | " % s + " | ".join(fmt_rate(rate(s, kind, k)) for k in KS) + " |")
        print()

    junk = {(r["junk"], r["scheme"]): r for r in read_csv(os.path.join(res, "junk.csv"))}
    print("### Junk robustness (200 English documents, 10,000 junk tokens appended)\n")
    print("distance(doc, doc + junk): mean / median / max; within3 = share still "
          "within k = 3 of itself; collide = share of pairs of different junked "
          "documents within k = 3 of each other (clean documents: %s)\n"
          % junk[("none", "simhash(text)")]["collide"])
    print("| weighting | ' spam' mean | median | max | within3 | collide "
          "| ' =====' mean | max |")
    print("|---|---|---|---|---|---|---|---|")
    for s in ["simhash(text)"] + [s for s, _ in schemes]:
        sp, pu = junk.get(("spam", s)), junk.get(("=====", s))
        if not sp:
            continue
        print("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            s, sp["mean_d"], sp["median_d"], sp["max_d"], sp["within_3"],
            sp["collide"], pu["mean_d"], pu["max_d"]))
    print()

    print("### Consistency checks\n")
    for r in read_csv(os.path.join(res, "check.csv")):
        print("- %s: %s mismatches" % (r["check_name"], r["mismatches"]))
    print()


if __name__ == "__main__":
    main()
