#!/usr/bin/python3
"""
fastpath_check.py -- simhash(text), simhash_features(text) and
simhash_jaccard(text, text) equal tools/simhash_reference.py on texts built
to cross every edge of the tokenizer's fast paths.

The ASCII path classifies 64 bytes at a time and must leave the byte before
a non-ASCII one to the general path (it may compose with it: "<" + U+0338
is U+226E, "e" + U+0301 is U+00E9); the Han path hashes 3-byte characters
in place while the next one is a boundary, and counts those of
U+4000-U+9FFF by code point (hancount.h).  So the texts put every kind of
non-ASCII piece (combining marks after letters and after separators, Han,
kana, Latin letters with accents, 2- and 4-byte sequences, ill-formed
bytes cannot go through COPY into a UTF8 database and are left to the
harness) at every offset 0..130 of a run of ASCII words, with words of
every length 1..70 (the in-place hash covers 1-16 bytes, the block 64),
upper and lower case, single and repeated separators.
Connects with psql using the usual PG* environment variables (a UTF8
database).  Exits non-zero on any difference.
"""
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import simhash_reference as ref  # noqa: E402

PIECES = ["\u0338", "<\u0338", "=\u0338", ">\u0338", "\u0301", "e\u0301", "A\u030a", "\u0323\u0307", "é", "中", "文字", "中。", "カ", "かな",
          "ß", "Ω", "\U0001F600", "\u00a0", "\u3000", "ｶﾞ", "ﬁ", "\u200b", "Å"]
SEPARATORS = [" ", "  ", ",", ". ", "<", "=", ">", "\n", "-", "'", "_", "\t"]


def words(rng, nbytes):
    """ASCII words and separators, about nbytes long."""
    out = []
    n = 0
    while n < nbytes:
        k = rng.choice([1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 24, 31, 32, 33, 63, 64, 65, 70])
        w = "".join(rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
                    for _ in range(k))
        s = rng.choice(SEPARATORS)
        out.append(w + s)
        n += len(w) + len(s)
    return "".join(out)


def texts():
    rng = random.Random(20261127)
    docs = []
    base = words(rng, 400)
    # a non-ASCII piece at every offset of an ASCII run, before and after
    # the first block boundary
    for piece in PIECES:
        for off in range(0, 131):
            docs.append(base[:off] + piece + base[off:])
    # every word length, alone and repeated, at every alignment
    for k in range(1, 71):
        w = ("Ab9" * 30)[:k]
        for pad in range(0, 9):
            docs.append(" " * pad + (w + " ") * 12 + w)
            docs.append(" " * pad + (w + ",\u0338") * 5 + w + "中" + w)
    # Chinese punctuation between Han characters (skipped by the Han path
    # when the character after it is a boundary), before marks and kana
    seps = ["，", "。", "、", "：", "「", "」", "・", "〜", "\u3000", "！", "ー", "々", "〇", "﹏",
            "㈱", "℡", "㎏", "⁉", "★", "Ⅻ"]
    after = ["中", "a", " ", "\u0301", "\u3099", "\u0338", "ｶ", "カ", "か", "é", "，", "\U00020000"]
    for sep in seps:
        for nxt in after:
            docs.append("中文" + sep + nxt + "字中" + sep + sep + nxt + "文")
    # Han characters counted by code point (U+4000-U+9FFF but U+4DC0-U+4DFF,
    # lead bytes E4-E9): every code point around and in that range, in runs
    # of 1,500 (once, and twice in another order), all of them in one text
    # (more distinct characters than the list holds between two moves into
    # the feature table), and counts past 65,535 (where a count moves)
    block = [chr(c) for c in range(0x3F00, 0xA100)]
    for k in range(0, len(block), 1500):
        run = block[k:k + 1500]
        docs.append("".join(run))
        docs.append("".join(run) + "x " + "".join(reversed(run)) + "中")
    docs.append("".join(block) + " " + "".join(block[::7]))
    docs.append("中" * 70000 + "文" * 65535 + "字" * 65534 + "".join(block[1000:6000]))
    docs.append("中" * 65537 + "文" * 65536 + "字" * 131072 + "本 a")
    docs.append(("中文" * 40000 + "a ") * 2 + "本")
    # long mixed texts: words, Han runs, marks and kana interleaved
    for _ in range(300):
        parts = []
        for _ in range(rng.randint(1, 40)):
            r = rng.random()
            if r < 0.5:
                parts.append(words(rng, rng.randint(1, 200)))
            elif r < 0.75:
                parts.append("".join(rng.choice("中文字符测试漢語，。的一是") for _ in range(rng.randint(1, 60))))
            else:
                parts.append(rng.choice(PIECES) * rng.randint(1, 3))
        docs.append("".join(parts))
    return docs


def copy_escape(s):
    return (s.replace("\\", "\\\\").replace("\t", "\\t")
             .replace("\n", "\\n").replace("\r", "\\r"))


def psql(sql, stdin=None):
    env = dict(os.environ, PGCLIENTENCODING="UTF8")
    r = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql],
                       input=stdin, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit("psql failed: " + r.stderr)
    return r.stdout


def main():
    enc = psql("SHOW server_encoding").strip()
    if enc != "UTF8":
        sys.exit("fastpath_check: needs a UTF8 database, not %s" % enc)
    docs = texts()
    data = "".join("%d\t%s\n" % (i, copy_escape(d)) for i, d in enumerate(docs))
    psql("CREATE EXTENSION IF NOT EXISTS simhash;"
         "DROP TABLE IF EXISTS fastpath_docs; CREATE TABLE fastpath_docs (id int, body text)")
    psql("COPY fastpath_docs FROM STDIN", stdin=data)
    out = psql("SELECT id, simhash(body), simhash_jaccard(body, body || ' x') "
               "FROM fastpath_docs ORDER BY id")
    got = {}
    for line in out.splitlines():
        ident, fp, jac = line.split("|")
        got[int(ident)] = (fp, jac)
    out = psql("SELECT id, feature, occurrences FROM fastpath_docs, simhash_features(body) "
               "WITH ORDINALITY f ORDER BY id, ordinality")
    feats = {}
    for line in out.splitlines():
        ident, rest = line.split("|", 1)
        feat, n = rest.rsplit("|", 1)
        feats.setdefault(int(ident), []).append((feat, int(n)))
    psql("DROP TABLE fastpath_docs")

    bad = 0
    for i, d in enumerate(docs):
        want_fp = "%016x" % ref.simhash(d)
        want_feats = [(f, n) for f, n, _ in ref.features(d)]
        want_jac = ref.jaccard(d, d + " x")
        fp, jac = got.get(i, (None, None))
        if fp != want_fp or feats.get(i, []) != want_feats or float(jac) != want_jac:
            bad += 1
            if bad <= 5:
                print("MISMATCH doc %d: sql %s/%s python %s/%r, text %r"
                      % (i, fp, jac, want_fp, want_jac, d[:100]))
    print("fast path check: %d documents, %d mismatches" % (len(docs), bad))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
