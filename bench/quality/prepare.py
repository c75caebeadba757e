#!/usr/bin/python3
"""
prepare.py -- build the labelled near-duplicate set for bench/quality.

Reads two extracted kernel Documentation trees (an old and a new version)
and writes, into OUTDIR:

  docs.tsv    id, version, path, lang, body     (COPY text format)
  pairs.tsv   a, b, kind, jaccard               (COPY text format)
  stats.txt   counts, for the report

Documents: every regular file under Documentation/ that is prose text:
extension .rst or .txt or none (this leaves out the devicetree YAML
schemas, scripts, images and other binaries), no NUL byte, valid UTF-8,
not blank.  (With --all-text, every text file that is not an image.)
lang is 'zh' under Documentation/translations/zh_CN and zh_TW, 'other' in
the other translations, 'en' elsewhere.

Pairs (kind):
  pos_en   same path in both versions, lang 'en', content changed, Jaccard
           of word 3-shingles >= 0.9
  pos_zh   same path in both versions, lang 'zh', content changed, Jaccard
           of character 4-shingles (text with whitespace removed) >= 0.9
  neg_all  random pairs of documents with different paths, drawn from both
           versions together (so within and across versions)
  neg_en   the same, both documents 'en'
  neg_zh   every pair of 'zh' documents with different paths (there are
           few enough to take them all)
Negatives whose Jaccard is >= 0.5 are dropped: they are moved or copied
files (zh_CN/arm64/* -> zh_CN/arch/arm64/*), not negatives.  Jaccard of a
pair uses character shingles when both documents are 'zh', word shingles
otherwise.

    prepare.py OLD_ROOT NEW_ROOT OUTDIR [--negatives N] [--seed S]

OLD_ROOT/NEW_ROOT are directories containing Documentation/.
"""
import argparse
import os
import random
import re
import sys

# extensions of prose documents ("" = no extension: old-style docs)
PROSE_EXT = {".rst", ".txt", ""}

# extensions of images and other binaries (for --all-text)
BINARY_EXT = {".png", ".jpg", ".jpeg", ".gif", ".svg", ".ico", ".pdf",
              ".bmp", ".eps", ".xcf", ".dia", ".odg", ".gz", ".xz", ".tar"}

CHAR_SHINGLE = 4        # character shingle length for Chinese

POS_THRESHOLD = 0.9     # Jaccard for a positive
NEG_THRESHOLD = 0.5     # negatives at or above this are dropped

WORD_RE = re.compile(r"\w+")
SPACE_RE = re.compile(r"\s+")


def lang_of(path):
    """'zh', 'other' or 'en' from a path relative to the tree root."""
    if path.startswith(("Documentation/translations/zh_CN/",
                        "Documentation/translations/zh_TW/")):
        return "zh"
    if path.startswith("Documentation/translations/"):
        return "other"
    return "en"


def read_tree(root, all_text=False):
    """{relative path: text} for the text files under root/Documentation."""
    docs = {}
    base = os.path.join(root, "Documentation")
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames.sort()
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            if os.path.islink(full) or not os.path.isfile(full):
                continue
            ext = os.path.splitext(name)[1].lower()
            if (ext in BINARY_EXT) if all_text else (ext not in PROSE_EXT):
                continue
            with open(full, "rb") as f:
                data = f.read()
            if b"\0" in data:
                continue
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                continue
            if not text.strip():
                continue
            docs[os.path.relpath(full, root)] = text
    return docs


def word_shingles(text):
    """Set of word 3-shingles (lower-cased \\w+ runs); short texts: one shingle."""
    w = WORD_RE.findall(text.lower())
    if len(w) < 3:
        return frozenset([hash(tuple(w))]) if w else frozenset()
    return frozenset(hash((w[i], w[i + 1], w[i + 2])) for i in range(len(w) - 2))


def char_shingles(text, n=CHAR_SHINGLE):
    """Set of character n-shingles of the text with all whitespace removed."""
    s = SPACE_RE.sub("", text)
    if len(s) < n:
        return frozenset([s]) if s else frozenset()
    return frozenset(s[i:i + n] for i in range(len(s) - n + 1))


def jaccard(a, b):
    """Jaccard similarity of two sets (1.0 for two empty sets)."""
    if not a and not b:
        return 1.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def copy_escape(s):
    """Escape a field for COPY ... FROM (FORMAT text)."""
    return (s.replace("\\", "\\\\").replace("\t", "\\t")
             .replace("\n", "\\n").replace("\r", "\\r"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("old_root")
    ap.add_argument("new_root")
    ap.add_argument("outdir")
    ap.add_argument("--old-name", default="6.1")
    ap.add_argument("--new-name", default="6.12")
    ap.add_argument("--negatives", type=int, default=200000,
                    help="random pairs for neg_all and for neg_en (default 200000)")
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--all-text", action="store_true",
                    help="take every text file, not only .rst/.txt/no extension")
    args = ap.parse_args()

    rng = random.Random(args.seed)
    trees = [(args.old_name, read_tree(args.old_root, args.all_text)),
             (args.new_name, read_tree(args.new_root, args.all_text))]

    # documents: ids in a stable order (version, path)
    docs = []                   # (id, version, path, lang, text)
    for ver, tree in trees:
        for path in sorted(tree):
            docs.append((len(docs) + 1, ver, path, lang_of(path), tree[path]))
    by_key = {(ver, path): d for d in docs for ver, path in [(d[1], d[2])]}

    # shingle sets, computed lazily and cached (both kinds per document)
    cache_w, cache_c = {}, {}

    def shingles(d, kind):
        cache = cache_c if kind == "c" else cache_w
        s = cache.get(d[0])
        if s is None:
            s = char_shingles(d[4]) if kind == "c" else word_shingles(d[4])
            cache[d[0]] = s
        return s

    def pair_jaccard(x, y, bound=None):
        """Jaccard of two documents; with bound, 0.0 if it cannot reach bound."""
        kind = "c" if x[3] == "zh" and y[3] == "zh" else "w"
        a, b = shingles(x, kind), shingles(y, kind)
        if bound is not None and a and b:
            # J <= min/max of the set sizes: skip the intersection when that
            # already rules the pair out (most random pairs)
            if min(len(a), len(b)) < bound * max(len(a), len(b)):
                return 0.0
        return jaccard(a, b)

    pairs = []                  # (a, b, kind, jaccard)
    stats = []

    # positives: same path, changed, Jaccard >= 0.9
    old_name, new_name = args.old_name, args.new_name
    same = changed = 0
    for path in sorted(trees[0][1].keys() & trees[1][1].keys()):
        x, y = by_key[(old_name, path)], by_key[(new_name, path)]
        if x[3] == "other":
            continue
        same += 1
        if x[4] == y[4]:
            continue
        changed += 1
        j = pair_jaccard(x, y)
        if j >= POS_THRESHOLD:
            pairs.append((x[0], y[0], "pos_" + x[3], j))
    n_pos = {k: sum(1 for p in pairs if p[2] == k) for k in ("pos_en", "pos_zh")}
    stats.append("documents: %d (%s: %d, %s: %d)" % (
        len(docs), old_name, len(trees[0][1]), new_name, len(trees[1][1])))
    for lang in ("en", "zh", "other"):
        stats.append("  lang %-5s: %d" % (lang, sum(1 for d in docs if d[3] == lang)))
    stats.append("same path in both versions (en+zh): %d, of which changed: %d"
                 % (same, changed))
    stats.append("positives: pos_en %d, pos_zh %d (Jaccard >= %.2f)"
                 % (n_pos["pos_en"], n_pos["pos_zh"], POS_THRESHOLD))

    # negatives
    def sample_negatives(pool, n, kind):
        seen, dropped = set(), 0
        m = len(pool)
        while len(seen) < n:
            i, k = rng.randrange(m), rng.randrange(m)
            x, y = pool[i], pool[k]
            if x[2] == y[2]:
                continue        # same path (or same document)
            key = (min(x[0], y[0]), max(x[0], y[0]))
            if key in seen:
                continue
            seen.add(key)
            j = pair_jaccard(x, y, NEG_THRESHOLD)
            if j >= NEG_THRESHOLD:
                dropped += 1
                continue
            pairs.append((key[0], key[1], kind, j))
        return len(seen) - dropped, dropped

    kept, dropped = sample_negatives(docs, args.negatives, "neg_all")
    stats.append("neg_all: %d random pairs, %d dropped (Jaccard >= %.2f), %d kept"
                 % (kept + dropped, dropped, NEG_THRESHOLD, kept))
    en = [d for d in docs if d[3] == "en"]
    kept, dropped = sample_negatives(en, args.negatives, "neg_en")
    stats.append("neg_en : %d random pairs, %d dropped, %d kept"
                 % (kept + dropped, dropped, kept))
    zh = [d for d in docs if d[3] == "zh"]
    kept = dropped = 0
    for i in range(len(zh)):
        for k in range(i + 1, len(zh)):
            x, y = zh[i], zh[k]
            if x[2] == y[2]:
                continue
            j = pair_jaccard(x, y, NEG_THRESHOLD)
            if j >= NEG_THRESHOLD:
                dropped += 1
                continue
            kept += 1
            pairs.append((x[0], y[0], "neg_zh", j))
    stats.append("neg_zh : all %d pairs of zh documents with different paths, "
                 "%d dropped, %d kept" % (kept + dropped, dropped, kept))

    os.makedirs(args.outdir, exist_ok=True)
    with open(os.path.join(args.outdir, "docs.tsv"), "w", encoding="utf-8") as f:
        for d in docs:
            f.write("%d\t%s\t%s\t%s\t%s\n" % (d[0], d[1], copy_escape(d[2]), d[3],
                                             copy_escape(d[4])))
    with open(os.path.join(args.outdir, "pairs.tsv"), "w") as f:
        for a, b, kind, j in pairs:
            f.write("%d\t%d\t%s\t%.6f\n" % (a, b, kind, j))
    with open(os.path.join(args.outdir, "stats.txt"), "w") as f:
        f.write("\n".join(stats) + "\n")
    print("\n".join(stats))


if __name__ == "__main__":
    sys.exit(main())
