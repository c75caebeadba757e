#!/usr/bin/python3
"""
short_schemes.py -- other features for short texts, against the default.

    short_schemes.py PAIRS.TSV      (written by short_schemes.sql)

Computes fingerprints with tools/simhash_reference.py's tokens and hashing
(XXH3, TF capped at 8) for: the default features (words); words plus the
character 3-grams or 4-grams of each longer word; words plus word bigrams;
words cut to 5 characters (a crude stemmer).  Prints recall (one-token
edits, real variants) and false-positive rates at k = 3, 6, 8, 10, 12 by
length bucket (Markdown).  Needs Debian's python3-xxhash (/usr/bin/python3).
"""
import collections
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../tools"))
import simhash_reference as R  # noqa: E402
import xxhash  # noqa: E402

KS = (3, 6, 8, 10, 12)
EDIT1 = ("word_sub", "word_ins", "word_del")


def fp_of(feats):
    """Fingerprint of a bag of features, TF capped at 8."""
    c = collections.Counter(feats)
    return R.fingerprint_of_weights((xxhash.xxh3_64_intdigest(f.encode()), min(n, 8))
                                    for f, n in c.items())


def words_and_grams(n):
    """Words plus the character n-grams of every word longer than n."""
    def scheme(toks):
        out = list(toks)
        for t in toks:
            if len(t) > n:
                out += ["#" + t[i:i + n] for i in range(len(t) - n + 1)]
        return fp_of(out)
    return scheme


SCHEMES = {
    "default": fp_of,
    "w+c3": words_and_grams(3),
    "w+c4": words_and_grams(4),
    "w+bigrams": lambda toks: fp_of(toks + [a + " " + b for a, b in zip(toks, toks[1:])]),
    "prefix5": lambda toks: fp_of([t[:5] for t in toks]),
}


def main():
    res = collections.defaultdict(lambda: collections.defaultdict(list))
    with open(sys.argv[1], encoding="utf-8") as f:
        for line in f:
            cat, lb, a, b = line.rstrip("\n").split("\t")
            ta, tb = R.tokens(R._unescape_copy(a)), R.tokens(R._unescape_copy(b))
            cat = "edit1" if cat in EDIT1 else cat
            for name, scheme in SCHEMES.items():
                res[(lb, cat)][name].append(bin(scheme(ta) ^ scheme(tb)).count("1"))
    print("| length | pairs | scheme | " + " | ".join("k=%d" % k for k in KS) + " |")
    print("|---|---|---|" + "---|" * len(KS))
    for lb, cat in sorted(res):
        if cat in ("punct", "case"):
            continue
        for name in SCHEMES:
            d = res[(lb, cat)][name]
            cells = []
            for k in KS:
                x = sum(1 for v in d if v <= k) / len(d)
                cells.append("%.3f" % x if cat in ("edit1", "real")
                             else "0" if x == 0 else "%.1e" % x)
            print("| %s | %s (%d) | %s | %s |" % (lb, cat, len(d), name, " | ".join(cells)))


if __name__ == "__main__":
    main()
