#!/usr/bin/python3
"""
reference_check.py -- simhash(text) and simhash_jaccard(text, text) in
PostgreSQL equal tools/simhash_reference.py.

Collects real documents any Debian machine has offline (package copyright
files, the common licenses, Chinese fortunes and Tang/Song poems from
fortunes-zh) plus hand-made edge cases, loads them into a table with COPY,
and compares the fingerprints and the feature lists of both implementations.
Then compares simhash_jaccard on pairs of them (each document with the next
and with an edited copy of itself), exactly, in a UTF8, a LATIN1 and an
SQL_ASCII database (LATIN1: the documents it can hold).
Connects with psql using the usual PG* environment variables.
Exits non-zero on any difference.
"""
import glob
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import simhash_reference as ref  # noqa: E402

EDGE_CASES = [
    "",
    " ",
    "!!!...,,,;;;=====-----",
    "=" * 5000,
    "a",
    "A",
    "Hello, World!",
    "hello world",
    "HELLO WORLD",
    "Straße STRASSE strasse",
    "ﬁne ﬀ ﬃ Ｆｕｌｌｗｉｄｔｈ １２３",
    "café cafe\u0301 CAFÉ",
    "x\u0323\u0307 x\u0307\u0323 \u1e0b\u0323",
    "<\u0338 =\u0338 >\u0338",
    "\u0301\u0301\u0301 leading marks",
    "a" + "\u0301" * 100 + "b",
    "e" + "\u0316\u0301" * 40,
    "中文文本，没有空格。English mixed 中英混合 text",
    "繁體中文：行為、硬體、資訊",
    "カタカナ ひらがな 漢字 かな交じり文 ｶﾀｶﾅ ガ ｶﾞ",
    "한국어 텍스트 띄어쓰기 한글",
    "ᄀ\u1161 ㄱㅏ",
    "emoji 😀😃 👍🏽 family 👨‍👩‍👧 flags 🇯🇵",
    "Ελληνικά ΣΊΣΥΦΟΣ σίσυφος ς",
    "Русский ТЕКСТ ёЁ",
    "עברית العربية हिन्दी ภาษาไทย",
    "İstanbul ı I i̇",
    "ǅ ǆ Ǆ ﬅ ẞ",
    "½ ² ³ ¼ ⅛ ⑩ ⒜ ㈱ ㍻",
    "\u00a0nbsp\u2003em\u3000ideographic",
    "tab\tnew\nline\r\nreturn",
    "snake_case camelCase kebab-case dot.case",
    "123 4.56 7,890 1e10 0x1F",
    "spam " * 3000 + "a short text about something else entirely",
    "\ufeffbom \ufffd replacement \u200b zero width",
    "\U00020000\U0002A6D6 \U00030000 \u3005\u3007",
    "ﾃｽﾄ ｶﾞｷﾞ",
    "\u2F00\u2F08 kangxi \uF900\uFA0E compat",
]


def collect_documents():
    docs = list(EDGE_CASES)
    paths = sorted(glob.glob("/usr/share/doc/*/copyright"))
    paths += sorted(glob.glob("/usr/share/common-licenses/*"))
    for p in paths:
        if os.path.isfile(p):
            with open(p, "rb") as f:
                docs.append(f.read().decode("utf-8", "replace"))
    for p in ("chinese", "song100", "tang300"):
        path = "/usr/share/games/fortunes/" + p
        if os.path.isfile(path):
            with open(path, "rb") as f:
                text = f.read().decode("utf-8", "replace")
            docs.extend(x.strip("\n") for x in text.split("\n%\n") if x.strip())
    return docs


def copy_escape(s):
    return (s.replace("\\", "\\\\").replace("\t", "\\t")
             .replace("\n", "\\n").replace("\r", "\\r"))


def psql(sql, stdin=None, db=None, encoding="UTF8"):
    env = dict(os.environ, PGCLIENTENCODING=encoding)
    if db:
        env["PGDATABASE"] = db
    r = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql],
                       input=stdin, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit("psql failed: " + r.stderr)
    return r.stdout


def edited(docs, i):
    """Document i with every fifth word dropped and part of another appended."""
    words = docs[i].split(" ")
    other = docs[(i + 3) % len(docs)]
    return " ".join(w for j, w in enumerate(words) if j % 5 != 1) + " " + other[:len(other) // 4]


_weights = {}


def weights(text):
    """{feature hash: weight} of a text, as simhash(text) weighs it (memoized)."""
    if text not in _weights:
        import xxhash
        _weights[text] = {xxhash.xxh3_64_intdigest(f.encode("utf-8")): w for f, _, w in ref.features(text)}
    return _weights[text]


def jaccard(a, b):
    """ref.jaccard(a, b), from memoized weights."""
    wa, wb = weights(a), weights(b)
    smin = sum(min(w, wb.get(h, 0)) for h, w in wa.items())
    smax = sum(wa.values()) + sum(wb.values()) - smin
    return 1.0 if smax == 0 else smin / smax


def check_jaccard(docs, encoding):
    """simhash_jaccard in a database of this encoding: pairs that differ."""
    if encoding == "LATIN1":
        # the documents' Latin-1 characters only: the corpus of Debian 13 and
        # sid has too few documents that are Latin-1 whole for 1,000 pairs
        docs = ["".join(c for c in d if ord(c) < 256) for d in docs]
        docs = [d for d in docs if len(d.split()) >= 20]
    db = "simhash_ref_" + encoding.lower()
    psql("DROP DATABASE IF EXISTS %s" % db)
    psql("CREATE DATABASE %s ENCODING '%s' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0"
         % (db, encoding))
    pairs = []
    for i, d in enumerate(docs):
        pairs.append((d, docs[(i + 1) % len(docs)]))
        pairs.append((d, edited(docs, i)))
    data = "".join("%d\t%s\t%s\n" % (i, copy_escape(a), copy_escape(b))
                   for i, (a, b) in enumerate(pairs))
    client = "SQL_ASCII" if encoding == "SQL_ASCII" else "UTF8"
    psql("CREATE EXTENSION simhash; CREATE TABLE refpairs (id int, a text, b text)", db=db)
    psql("COPY refpairs FROM STDIN", stdin=data, db=db, encoding=client)
    out = psql("SELECT id, simhash_jaccard(a, b) FROM refpairs ORDER BY id", db=db)
    got = dict(line.split("|") for line in out.splitlines())
    bad = 0
    for i, (a, b) in enumerate(pairs):
        want = jaccard(a, b)
        if float(got.get(str(i), "nan")) != want:
            bad += 1
            if bad <= 5:
                print("MISMATCH %s pair %d: sql %s python %r, texts %r / %r"
                      % (encoding, i, got.get(str(i)), want, a[:60], b[:60]))
    psql("DROP DATABASE %s" % db)
    middling = sum(1 for a, b in pairs if 0.05 < jaccard(a, b) < 0.95)
    print("jaccard check (%s): %d pairs (%d with a similarity in (0.05, 0.95)), %d mismatches"
          % (encoding, len(pairs), middling, bad))
    return bad + (len(pairs) < 1000)


def main():
    docs = collect_documents()
    # NUL cannot be stored in text; the tokenizer treats it as a separator
    docs = [d.replace("\x00", " ") for d in docs]
    data = "".join("%d\t%s\n" % (i, copy_escape(d)) for i, d in enumerate(docs))
    psql("CREATE EXTENSION IF NOT EXISTS simhash;"
         "DROP TABLE IF EXISTS refdocs; CREATE TABLE refdocs (id int, body text)")
    psql("COPY refdocs FROM STDIN", stdin=data)
    out = psql("SELECT id, simhash(body) FROM refdocs ORDER BY id")
    sql_fp = dict(line.split("|") for line in out.splitlines())
    out = psql("SELECT id, feature, occurrences FROM refdocs, simhash_features(body) "
               "WITH ORDINALITY f ORDER BY id, ordinality")
    sql_feats = {}
    for line in out.splitlines():
        ident, rest = line.split("|", 1)
        feat, n = rest.rsplit("|", 1)
        sql_feats.setdefault(ident, []).append((feat, int(n)))

    bad = 0
    chinese = sum(1 for d in docs if any(ref.char_class(c) == ref.HAN for c in d[:200]))
    for i, d in enumerate(docs):
        mine = "%016x" % ref.simhash(d)
        feats = [(f, n) for f, n, _ in ref.features(d)]
        if sql_fp.get(str(i)) != mine or sql_feats.get(str(i), []) != feats:
            bad += 1
            if bad <= 5:
                print("MISMATCH doc %d: sql %s python %s, text %r" %
                      (i, sql_fp.get(str(i)), mine, d[:80]))
    psql("DROP TABLE refdocs")
    print("reference check: %d documents (%d Chinese), %d mismatches"
          % (len(docs), chinese, bad))
    for encoding in ("UTF8", "LATIN1", "SQL_ASCII"):
        bad += check_jaccard(docs, encoding)
    sys.exit(1 if bad or len(docs) < 1000 else 0)


if __name__ == "__main__":
    main()
