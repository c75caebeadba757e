#!/usr/bin/python3
"""
short_prepare.py -- build the labelled short-text set for bench/quality.

Texts come from Debian packages (see short.sh, which fetches and unpacks
them):
  kernel   the Linux Documentation trees of two versions (old, new): whole
           files, paragraphs (blank-line separated) and sentences; English
           outside translations/, Chinese under translations/zh_CN, zh_TW
  fortune  the "fortunes" package (English; ascii-art left out) and
           "fortunes-zh" (chinese, tang300, song100; colour escapes removed)
  gcc      the zh_CN message catalogues of gcc-11-locales and
           gcc-12-locales (gcc and cpplib): the English msgids and the
           Chinese msgstrs
The pool of a (language, length bucket) is every such text of the new
version (kernel, gcc-12) and every fortune, de-duplicated.  (The gcc 12
catalogue is gcc 11's minus 78 messages and plus 4 cpplib ones: it gives
no real variants, only texts.)

Pairs (kind, category) written to OUTDIR/pairs.tsv, texts to texts.tsv:
  pos real        real variants: the same paragraph, sentence or file in the
                  two kernel versions, the same gcc message in gcc 11 and 12
                  (msgid changed; or msgid unchanged and its Chinese
                  translation revised).  A changed text of the old version is
                  paired with its most similar changed text of the new one
                  (same file or catalogue) when the ratio of
                  difflib.SequenceMatcher over their tokens is >= 0.8 and the
                  tokens differ (texts that differ only in punctuation, case
                  or spacing have the same fingerprint by construction).
  pos word_sub, word_ins, word_del     (English) one word replaced by another
                  word of the pool, one inserted, one deleted
  pos han_sub, han_ins, han_del        (Chinese) the same with one Han character
  pos punct       one punctuation mark replaced or inserted
  pos case        (English) one word's case changed
  neg random      two texts of the same language and length bucket
  neg same_source two texts of the same kernel file, fortune file or gcc
                  catalogue, same language and length bucket
Negatives whose token Jaccard (of the sets or of the multisets, whichever
is larger) is >= 0.5, or where one text contains the other (a sentence and
its paragraph), are dropped (they are variants, not negatives; counted in
stats.txt).  Tokens approximate the extension's
features: case-folded runs of letters and digits, single Han characters.

Length buckets (characters of the first text of the pair): <= 50, <= 200,
<= 1000, > 1000.

    short_prepare.py OLD_KERNEL NEW_KERNEL FORTUNES_ROOT GCC_OLD GCC_NEW OUTDIR

OLD_KERNEL/NEW_KERNEL contain Documentation/; FORTUNES_ROOT contains
usr/share/games/fortunes (both packages unpacked there); GCC_OLD/GCC_NEW contain usr/share/locale.
"""
import argparse
import difflib
import gettext
import os
import random
import re
import sys
from collections import Counter

from prepare import copy_escape     # bench/quality/prepare.py, beside this file

BUCKETS = [(50, "<=50"), (200, "<=200"), (1000, "<=1000"), (None, ">1000")]
REAL_RATIO = 0.8            # SequenceMatcher ratio for a real variant
NEG_JACCARD = 0.5           # negatives at or above this are dropped
MAX_FILE = 30000            # longer kernel files are not paired by difflib

HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
TOKEN_RE = re.compile("[%s]|[^\\W_%s]+" % (HAN, HAN))
HAN_RE = re.compile("[%s]" % HAN)
WORD_RE = re.compile("[^\\W_%s]+" % HAN)
PUNCT_EN = ".,;:!?"
PUNCT_ZH = "，。、；：！？"
ESC_RE = re.compile(r"\x1b\[[0-9;]*m")
SENT_EN_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'])")
SENT_ZH_RE = re.compile(r"(?<=[。！？])")
SPACE_RE = re.compile(r"\s+")
ZH_FORTUNES = ("chinese", "tang300", "song100")


def tokens(s):
    """The feature-like tokens of a text, in order."""
    return TOKEN_RE.findall(s.casefold())


def bucket_of(n):
    for limit, name in BUCKETS:
        if limit is None or n <= limit:
            return name
    raise AssertionError


def lang_of_path(path):
    if "/translations/zh_CN/" in path or "/translations/zh_TW/" in path:
        return "zh"
    if "/translations/" in path:
        return None
    return "en"


def is_prose(text, lang):
    """Heuristic: a paragraph of prose, not code, a table or markup."""
    s = text.strip()
    if not s or s.startswith(("..", "::", "|", "+-", "==", "--", "~~", "^^", "#")):
        return False
    nonspace = len(SPACE_RE.sub("", s))
    if lang == "zh":
        return len(HAN_RE.findall(s)) >= 0.3 * nonspace
    letters = sum(len(w) for w in WORD_RE.findall(s))
    return letters >= 0.75 * nonspace and len(WORD_RE.findall(s)) >= 3


def paragraphs(text, lang):
    """Prose paragraphs of a document, lines joined by single spaces."""
    out = []
    for p in re.split(r"\n\s*\n", text):
        lines = p.split("\n")
        if any(line.startswith(("\t", "    ")) for line in lines):
            continue            # literal blocks and block quotes
        if is_prose(p, lang):
            out.append(SPACE_RE.sub(" ", p.strip()))
    return out


def sentences(para, lang):
    parts = SENT_ZH_RE.split(para) if lang == "zh" else SENT_EN_RE.split(para)
    return [s.strip() for s in parts if is_prose(s, lang)]


def read_kernel(root):
    """{path: (lang, text)} for the prose files of root/Documentation."""
    docs = {}
    base = os.path.join(root, "Documentation")
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames.sort()
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            if os.path.islink(full) or os.path.splitext(name)[1] not in (".rst", ".txt", ""):
                continue
            rel = os.path.relpath(full, root)
            lang = lang_of_path(rel)
            if lang is None:
                continue
            try:
                with open(full, encoding="utf-8") as f:
                    text = f.read()
            except (UnicodeDecodeError, OSError):
                continue
            if text.strip() and "\0" not in text:
                docs[rel] = (lang, text)
    return docs


def read_fortunes(root):
    """[(lang, file, text)] of every fortune."""
    out = []
    base = os.path.join(root, "usr/share/games/fortunes")
    for name in sorted(os.listdir(base)):
        full = os.path.join(base, name)
        if "." in name or os.path.islink(full) or name == "ascii-art":
            continue
        lang = "zh" if name in ZH_FORTUNES else "en"
        with open(full, encoding="utf-8", errors="replace") as f:
            data = ESC_RE.sub("", f.read())
        for fortune in data.split("\n%\n"):
            fortune = fortune.strip("\n%")
            if fortune.strip() and len(tokens(fortune)) >= 3:
                out.append((lang, name, fortune))
    return out


def read_catalogues(root, version):
    """{domain: {msgid: msgstr}} of the zh_CN gcc catalogues."""
    cats = {}
    base = os.path.join(root, "usr/share/locale/zh_CN/LC_MESSAGES")
    for domain in ("gcc", "cpplib"):
        with open(os.path.join(base, "%s-%s.mo" % (domain, version)), "rb") as f:
            cat = gettext.GNUTranslations(f)._catalog
        cats[domain] = {k: v for k, v in cat.items()
                        if isinstance(k, str) and k and v and "\0" not in k}
    return cats


def best_matches(old_items, new_items):
    """Pairs (o, n) of changed texts, each o with its most similar n."""
    new_only = [n for n in new_items if n not in set(old_items)]
    old_only = [o for o in old_items if o not in set(new_items)]
    if not new_only:
        return []
    new_tok = [(n, tokens(n)) for n in dict.fromkeys(new_only)]
    out = []
    for o in dict.fromkeys(old_only):
        ot = tokens(o)
        sm = difflib.SequenceMatcher(autojunk=False)
        sm.set_seq2(ot)
        best, best_r = None, REAL_RATIO
        for n, nt in new_tok:
            if abs(len(nt) - len(ot)) > (1 - REAL_RATIO) * (len(nt) + len(ot)):
                continue
            sm.set_seq1(nt)
            if sm.real_quick_ratio() < best_r or sm.quick_ratio() < best_r:
                continue
            r = sm.ratio()
            if r >= best_r:
                best, best_r = n, r
        if best is not None and tokens(best) != ot:
            out.append((o, best))
    return out


class Builder:
    """Collects texts (with ids) and pairs."""

    def __init__(self, rng):
        self.rng = rng
        self.texts = {}         # (lang, source, grp, body) -> id
        self.rows = []          # (id, lang, source, grp, unit, body)
        self.pairs = []         # (a, b, kind, cat)

    def text(self, lang, source, grp, unit, body):
        key = (lang, source, grp, body)
        tid = self.texts.get(key)
        if tid is None:
            tid = len(self.rows) + 1
            self.texts[key] = tid
            self.rows.append((tid, lang, source, grp, unit, body))
        return tid

    def pair(self, a, b, kind, cat):
        self.pairs.append((a, b, kind, cat))


def edit_en(body, kind, vocab, rng):
    """A controlled edit of an English text, or None if it does not apply."""
    spans = [m.span() for m in WORD_RE.finditer(body)]
    if not spans:
        return None
    s, e = rng.choice(spans)
    if kind == "word_sub":
        old = body[s:e].casefold()
        w = rng.choice(vocab)
        while w == old:
            w = rng.choice(vocab)
        return body[:s] + w + body[e:]
    if kind == "word_ins":
        return body[:e] + " " + rng.choice(vocab) + body[e:]
    if kind == "word_del":
        if len(spans) < 2:
            return None
        if e < len(body) and body[e] == " ":
            e += 1
        elif s > 0 and body[s - 1] == " ":
            s -= 1
        return body[:s] + body[e:]
    if kind == "punct":
        marks = [i for i, c in enumerate(body) if c in PUNCT_EN]
        if marks and rng.random() < 0.5:
            i = rng.choice(marks)
            return body[:i] + rng.choice(PUNCT_EN.replace(body[i], "")) + body[i + 1:]
        return body[:e] + rng.choice(",;:") + body[e:]
    if kind == "case":
        w = body[s:e]
        nw = w.upper() if w != w.upper() else w.lower()
        return body[:s] + nw + body[e:]
    raise AssertionError(kind)


def edit_zh(body, kind, vocab, rng):
    """A controlled edit of a Chinese text, or None if it does not apply."""
    pos = [m.start() for m in HAN_RE.finditer(body)]
    if len(pos) < 2:
        return None
    i = rng.choice(pos)
    if kind == "han_sub":
        c = rng.choice(vocab)
        while c == body[i]:
            c = rng.choice(vocab)
        return body[:i] + c + body[i + 1:]
    if kind == "han_ins":
        return body[:i] + rng.choice(vocab) + body[i:]
    if kind == "han_del":
        return body[:i] + body[i + 1:]
    if kind == "punct":
        marks = [j for j, c in enumerate(body) if c in PUNCT_ZH]
        if marks and rng.random() < 0.5:
            j = rng.choice(marks)
            return body[:j] + rng.choice(PUNCT_ZH.replace(body[j], "")) + body[j + 1:]
        return body[:i] + "，" + body[i:]
    raise AssertionError(kind)


EDITS = {"en": ["word_sub", "word_ins", "word_del", "punct", "case"],
         "zh": ["han_sub", "han_ins", "han_del", "punct"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    for a in ("old_kernel", "new_kernel", "fortunes", "gcc_old", "gcc_new", "outdir"):
        ap.add_argument(a)
    ap.add_argument("--old-version", default="11")
    ap.add_argument("--new-version", default="12")
    ap.add_argument("--edits", type=int, default=400,
                    help="originals per (language, bucket, source) for the edits")
    ap.add_argument("--negatives", type=int, default=50000,
                    help="pairs per (language, bucket) for each negative category")
    ap.add_argument("--seed", type=int, default=20261123)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    b = Builder(rng)
    stats = []

    # ---- real variants and the pools ---------------------------------------
    pool = {}                   # (lang, bucket) -> [(source, grp, unit, body)]

    def add_pool(lang, source, grp, unit, body):
        pool.setdefault((lang, bucket_of(len(body))), []).append((source, grp, unit, body))

    def add_real(lang, source, grp, unit, o, n):
        b.pair(b.text(lang, source, grp, unit, o), b.text(lang, source, grp, unit, n),
               "pos", "real")

    old_k, new_k = read_kernel(args.old_kernel), read_kernel(args.new_kernel)
    seen = set()
    for path in sorted(new_k):
        lang, text = new_k[path]
        units = [("file", text)] if text.strip() else []
        paras = paragraphs(text, lang)
        units += [("para", p) for p in paras]
        units += [("sent", s) for p in paras for s in sentences(p, lang)]
        for unit, body in units:
            if (lang, body) not in seen:
                seen.add((lang, body))
                add_pool(lang, "kernel", path, unit, body)
        if path not in old_k or old_k[path][1] == text:
            continue
        otext = old_k[path][1]
        if len(otext) <= MAX_FILE and len(text) <= MAX_FILE:
            for o, n in best_matches([otext], [text]):
                add_real(lang, "kernel", path, "file", o, n)
        for o, n in best_matches(paragraphs(otext, lang), paras):
            add_real(lang, "kernel", path, "para", o, n)
            for so, sn in best_matches(sentences(o, lang), sentences(n, lang)):
                add_real(lang, "kernel", path, "sent", so, sn)

    for lang, name, text in read_fortunes(args.fortunes):
        if (lang, text) not in seen:
            seen.add((lang, text))
            add_pool(lang, "fortune", name, "fortune", text)

    old_c = read_catalogues(args.gcc_old, args.old_version)
    new_c = read_catalogues(args.gcc_new, args.new_version)
    for domain in sorted(new_c):
        oc, nc = old_c[domain], new_c[domain]
        for msgid, msgstr in nc.items():
            for lang, body in (("en", msgid), ("zh", msgstr)):
                if len(tokens(body)) >= 2 and (lang, body) not in seen:
                    seen.add((lang, body))
                    add_pool(lang, "gcc", domain, "message", body)
        # msgid kept, translation revised
        for msgid in sorted(oc.keys() & nc.keys()):
            for o, n in best_matches([oc[msgid]], [nc[msgid]]):
                add_real("zh", "gcc", domain, "message", o, n)
        # msgid changed: the English pair, and their translations
        for o, n in best_matches(sorted(oc), sorted(nc)):
            add_real("en", "gcc", domain, "message", o, n)
            for to, tn in best_matches([oc[o]], [nc[n]]):
                add_real("zh", "gcc", domain, "message", to, tn)

    # ---- controlled edits --------------------------------------------------
    vocab = {"en": set(), "zh": set()}
    for (lang, _), items in pool.items():
        for _, _, _, body in items[:: max(1, len(items) // 20000)]:
            if lang == "zh":
                vocab["zh"].update(HAN_RE.findall(body))
            else:
                vocab["en"].update(w for w in tokens(body) if len(w) >= 3 and w.isalpha())
    vocab = {k: sorted(v) for k, v in vocab.items()}
    for key in sorted(pool):
        lang, bkt = key
        by_source = {}
        for item in pool[key]:
            by_source.setdefault(item[0], []).append(item)
        counts = []
        for source in sorted(by_source):
            items = by_source[source]
            sample = rng.sample(items, min(args.edits, len(items)))
            counts.append("%s %d of %d" % (source, len(sample), len(items)))
            for src, grp, unit, body in sample:
                a = None
                for kind in EDITS[lang]:
                    fn = edit_zh if lang == "zh" else edit_en
                    edited = fn(body, kind, vocab[lang], rng)
                    if edited is None or edited == body:
                        continue
                    a = a or b.text(lang, src, grp, unit, body)
                    b.pair(a, b.text(lang, src, grp, unit + "+" + kind, edited), "pos", kind)
        stats.append("pool %s %-6s: %s" % (lang, bkt, ", ".join(counts)))

    # ---- negatives ---------------------------------------------------------
    tokbag = {}

    def jac(x, y):
        """max(set Jaccard, multiset Jaccard) of the tokens; 1 on containment."""
        if x in y or y in x:
            return 1.0
        for t in (x, y):
            if t not in tokbag:
                tokbag[t] = Counter(tokens(t))
        a, c = tokbag[x], tokbag[y]
        union = a | c
        if not union:
            return 1.0
        sa, sc = a.keys(), c.keys()
        return max(len(sa & sc) / len(sa | sc),
                   sum((a & c).values()) / sum(union.values()))

    for key in sorted(pool):
        lang, bkt = key
        items = pool[key]
        groups = {}
        for item in items:
            groups.setdefault((item[0], item[1]), []).append(item)
        multi = [g for g in groups.values() if len(g) >= 2]
        for cat in ("random", "same_source"):
            kept = dropped = tries = 0
            done = set()
            while kept < args.negatives and tries < 20 * args.negatives:
                tries += 1
                if cat == "random":
                    x, y = rng.choice(items), rng.choice(items)
                else:
                    if not multi:
                        break
                    g = rng.choice(multi)
                    x, y = rng.choice(g), rng.choice(g)
                if x[3] == y[3] or (x[3], y[3]) in done:
                    continue
                done.add((x[3], y[3]))
                if jac(x[3], y[3]) >= NEG_JACCARD:
                    dropped += 1
                    continue
                kept += 1
                b.pair(b.text(lang, *x), b.text(lang, *y), "neg", cat)
            stats.append("neg %s %-6s %-11s: %d kept, %d dropped (Jaccard >= %.1f or contained)"
                         % (lang, bkt, cat, kept, dropped, NEG_JACCARD))

    npos = {}
    for a, _, kind, cat in b.pairs:
        if kind == "pos" and cat == "real":
            r = b.rows[a - 1]
            npos[(r[1], r[2], r[4])] = npos.get((r[1], r[2], r[4]), 0) + 1
    for k in sorted(npos):
        stats.append("real variants %s %s %s: %d" % (k + (npos[k],)))
    stats.append("texts: %d, pairs: %d" % (len(b.rows), len(b.pairs)))

    os.makedirs(args.outdir, exist_ok=True)
    with open(os.path.join(args.outdir, "texts.tsv"), "w", encoding="utf-8") as f:
        for tid, lang, source, grp, unit, body in b.rows:
            f.write("%d\t%s\t%s\t%s\t%s\t%s\n" % (tid, lang, source, copy_escape(grp),
                                                  unit, copy_escape(body)))
    with open(os.path.join(args.outdir, "pairs.tsv"), "w") as f:
        for a, c, kind, cat in b.pairs:
            f.write("%d\t%d\t%s\t%s\n" % (a, c, kind, cat))
    with open(os.path.join(args.outdir, "stats.txt"), "w") as f:
        f.write("\n".join(stats) + "\n")
    print("\n".join(stats))


if __name__ == "__main__":
    sys.exit(main())
