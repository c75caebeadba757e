#!/usr/bin/python3
"""
simhash_reference.py -- an implementation of simhash(text) outside PostgreSQL.

It follows the specification in README.md ("The fingerprint, to the bit")
and must agree with the extension on every input; the test suite checks
that on a few thousand real documents.  Needs Debian's python3 (Unicode
14.0.0, as PostgreSQL 15) and python3-xxhash.

    simhash_reference.py FILE...      print "<fingerprint>  <file>" lines
    simhash_reference.py --tsv        read "id<TAB>text" lines (text with
                                      backslash escapes as in COPY), print
                                      "id<TAB>fingerprint"
    simhash_reference.py --features FILE   print the features and weights

weighted_simhash() is simhash(text[], float8[]); jaccard() is
simhash_jaccard(text, text); utf8_repair() reads bytes
as the extension reads an SQL_ASCII database's.
"""
import math
import sys
import unicodedata

import xxhash

UNICODE_VERSION = "14.0.0"
CAP_MIN = 8            # a feature weighs min(occurrences, cap), where
CAP_SHARE = 16         # cap = max(CAP_MIN, sum(min(occ, CAP_MIN)) // CAP_SHARE)
MAX_SEGMENT = 32       # normalisation segments have at most 32 code points

SEP, WORD, HAN, KANA = range(4)
HAN_EXTRA = {0x3005, 0x3007, *range(0x3021, 0x302A), *range(0x3038, 0x303C)}


def char_class(c):
    """Separator, word, Han or kana (README: "Classes")."""
    cat = unicodedata.category(c)
    name = unicodedata.name(c, "")
    if ord(c) in HAN_EXTRA or name.startswith(("CJK UNIFIED IDEOGRAPH",
                                               "CJK COMPATIBILITY IDEOGRAPH")):
        return HAN
    if cat[0] in "LM" and ("HIRAGANA" in name or "KATAKANA" in name) \
            and not name.startswith("HALFWIDTH"):
        return KANA
    if cat[0] in "LMN":
        return WORD
    return SEP


def _composition_seconds():
    seconds = set(range(0x1161, 0x1176)) | set(range(0x11A8, 0x11C3))
    for cp in range(0x110000):
        d = unicodedata.decomposition(chr(cp))
        if d and not d.startswith("<"):
            parts = d.split()
            if len(parts) == 2:
                seconds.add(int(parts[1], 16))
    return seconds


_SECONDS = None
_BOUNDARY = {}


def is_boundary(c):
    """May a normalisation segment start at c? (README: "Segments")."""
    global _SECONDS
    b = _BOUNDARY.get(c)
    if b is None:
        if _SECONDS is None:
            _SECONDS = _composition_seconds()
        first = unicodedata.normalize("NFKD", c)[0]
        b = unicodedata.combining(first) == 0 and ord(first) not in _SECONDS
        _BOUNDARY[c] = b
    return b


def normalize(text):
    """NFKC per segment, then full case folding."""
    out, seg = [], ""
    for c in text:
        if seg and (len(seg) == MAX_SEGMENT or (ord(c) < 0x80 or is_boundary(c))):
            out.append(unicodedata.normalize("NFKC", seg))
            seg = ""
        seg += c
    if seg:
        out.append(unicodedata.normalize("NFKC", seg))
    return "".join(out).casefold()


def tokens(text):
    """The features of a text, in order, repeats included."""
    result, word, kana = [], "", ""
    for c in normalize(text):
        cls = char_class(c)
        if cls != WORD and word:
            result.append(word)
            word = ""
        if cls != KANA and kana:
            if len(kana) == 1:
                result.append(kana)
            kana = ""
        if cls == WORD:
            word += c
        elif cls == HAN:
            result.append(c)
        elif cls == KANA:
            if kana:
                result.append(kana[-1] + c)
            kana += c
    if word:
        result.append(word)
    if len(kana) == 1:
        result.append(kana)
    return result


def features(text):
    """[(feature, occurrences, weight)] in order of first appearance."""
    counts, first = {}, {}
    for t in tokens(text):
        h = xxhash.xxh3_64_intdigest(t.encode("utf-8"))
        counts[h] = counts.get(h, 0) + 1
        first.setdefault(h, t)
    cap = max(CAP_MIN, sum(min(n, CAP_MIN) for n in counts.values()) // CAP_SHARE)
    return [(first[h], n, min(n, cap)) for h, n in counts.items()]


def fingerprint_of_weights(hashed_weights):
    """Bit i is 1 iff the sum of +w (hash bit i set) or -w (clear) is > 0."""
    acc = [0.0] * 64
    for h, w in hashed_weights:
        for i in range(64):
            acc[i] += w if (h >> i) & 1 else -w
    return sum(1 << i for i in range(64) if acc[i] > 0)


def weighted_simhash(features, weights):
    """simhash(text[], float8[]): features (str) with finite weights >= 0.

    Every weight is first multiplied by 2**-e, e being the binary exponent
    of the largest weight (math.frexp), so that the largest is in [0.5, 1):
    exact in floating point, so the sums cannot overflow and scaling all
    weights by a power of two gives the same fingerprint.  Summed in order.
    """
    weights = [float(w) for w in weights]
    scale = math.frexp(max(weights))[1] if weights and max(weights) > 0 else 0
    return fingerprint_of_weights(
        (xxhash.xxh3_64_intdigest(f.encode("utf-8")), math.ldexp(w, -scale))
        for f, w in zip(features, weights))


def utf8_repair(data):
    """Bytes read as UTF-8 the way the extension reads SQL_ASCII data: each
    byte that is not part of a well-formed sequence becomes U+FFFD (one per
    byte, unlike Python's "replace", which gives one per maximal part)."""
    out, i = [], 0
    while i < len(data):
        for n in (1, 2, 3, 4):
            try:
                out.append(data[i:i + n].decode("utf-8"))
                i += n
                break
            except UnicodeDecodeError:
                continue
        else:
            out.append("\ufffd")
            i += 1
    return "".join(out)


def simhash(text):
    """The 64-bit fingerprint of a text, as an int."""
    return fingerprint_of_weights(
        (xxhash.xxh3_64_intdigest(f.encode("utf-8")), w)
        for f, _, w in features(text))


def jaccard(a, b):
    """simhash_jaccard(a, b): the weighted Jaccard similarity of the features
    of simhash(a) and simhash(b), each feature weighing min(occurrences,
    cap) in its own text: sum of min weights / sum of max weights over the
    union of the features (identified by hash); 1.0 when neither text has
    a feature."""
    wa = {xxhash.xxh3_64_intdigest(f.encode("utf-8")): w for f, _, w in features(a)}
    wb = {xxhash.xxh3_64_intdigest(f.encode("utf-8")): w for f, _, w in features(b)}
    smin = sum(min(w, wb.get(h, 0)) for h, w in wa.items())
    smax = sum(wa.values()) + sum(wb.values()) - smin
    return 1.0 if smax == 0 else smin / smax


def _unescape_copy(s):
    """Undo COPY text-format escaping of one field."""
    out, i = [], 0
    escapes = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "b": "\b",
               "f": "\f", "v": "\v"}
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            out.append(escapes.get(s[i + 1], s[i + 1]))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def main(argv):
    if unicodedata.unidata_version != UNICODE_VERSION:
        sys.exit("need Unicode %s, this Python has %s"
                 % (UNICODE_VERSION, unicodedata.unidata_version))
    if len(argv) == 2 and argv[1] == "--tsv":
        for line in sys.stdin.buffer:
            ident, _, body = line.decode("utf-8", "replace").rstrip("\n").partition("\t")
            print("%s\t%016x" % (ident, simhash(_unescape_copy(body))))
    elif len(argv) == 3 and argv[1] == "--features":
        with open(argv[2], "rb") as f:
            for feat, n, w in features(f.read().decode("utf-8", "replace")):
                print("%s\t%d\t%d" % (feat, n, w))
    elif len(argv) >= 2 and not argv[1].startswith("--"):
        for path in argv[1:]:
            with open(path, "rb") as f:
                print("%016x  %s" % (simhash(f.read().decode("utf-8", "replace")), path))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
