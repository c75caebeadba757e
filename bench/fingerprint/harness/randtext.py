#!/usr/bin/python3
"""
randtext.py -- random texts for comparing two builds of fpharness.

    randtext.py SEED NDOCS > corpus.tsv

Writes NDOCS documents in bench/fingerprint's COPY format (path TAB body):
mixtures of ASCII words in every case, punctuation and space runs, Latin
letters with precomposed and combining accents, Greek, Cyrillic, Han,
hiragana and katakana (half-width too), Hangul syllables and jamo,
full-width forms, ligatures, characters with multi-character case
foldings (sharp s, ligature ff, Armenian), long runs of combining marks,
emoji, ill-formed UTF-8 bytes, a few very long words and a few texts of
more than 1 MB (the tokenizer's chunk).  The harness
reads bytes, so ill-formed sequences reach the tokenizer as they are.
fpharness -o of the old and the new build must give the same lines.
"""
import random
import sys

PIECES = [
    "word", "Word", "WORD", "wOrD", "x", "Q", "0", "42", "abc123", "straße", "STRASSE",
    " ", "  ", "\t", "\\n", ",", ". ", "=====", "-----", "!?", "(", ")", "_", "'", "\"",
    "café", "cafe\u0301", "CAFE\u0301", "e\u0301\u0301\u0301", "A\u030a", "\u212b",
    "\u03a3\u0399\u03a3\u03a5\u03a6\u039f\u03a2", "σίσυφος", "Москва", "МОСКВА",
    "中文文本，没有空格。", "漢字", "\u3005", "\u3007", "\uf900", "\u2f00",
    "ひらがな", "カタカナ", "ｶﾀｶﾅ", "ｶﾞ", "か\u3099", "ア", "ー",
    "한국어", "\u1100\u1161\u11a8", "\u1161", "ｆｕｌｌｗｉｄｔｈ", "ＡＢＣ", "\ufb00", "\ufb03",
    "\u0587", "\u1e9e", "\u0130", "\u0131", "\u2460", "x\u00b2", "\u00bd", "\u2126",
    "😀", "👍🏽", "\u200b", "\u00a0", "\u3000", "\u0300", "\u0338", "=\u0338", "<\u0338",
    "\u0915\u094d\u0937", "\u0627\u0644\u0639\u0631\u0628\u064a\u0629", "\ufdfa", "\u1f80",
]
BAD = [b"\xff", b"\xc0\xaf", b"\xe4\xb8", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80", b"\xe2\x82"]


def escape(b):
    return (b.replace(b"\\", b"\\\\").replace(b"\t", b"\\t").replace(b"\n", b"\\n")
            .replace(b"\r", b"\\r"))


def doc(rng):
    kind = rng.random()
    parts = []
    n = rng.choice([0, 1, 2, 5, 20, 200, 2000])
    for _ in range(n):
        r = rng.random()
        if r < 0.05:
            parts.append(rng.choice(BAD))
        elif r < 0.10:
            parts.append(("\u0301" * rng.randint(1, 70)).encode())
        elif r < 0.12:
            parts.append(rng.choice("aZ9é中か").encode() * rng.randint(1, 300))
        elif r < 0.5 and kind < 0.5:
            w = "".join(rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
                        for _ in range(rng.randint(1, 24)))
            parts.append(w.encode())
        else:
            parts.append(rng.choice(PIECES).encode())
        if rng.random() < 0.6:
            parts.append(rng.choice([b" ", b", ", b".\n", b"  ", b"", b"\t"]))
    body = b"".join(parts)
    if rng.random() < 0.01:
        body += b"y" * rng.randint(60000, 140000)	# past the 64 kB word buffer
    if body and rng.random() < 0.01:
        # past the tokenizer's 1 MB chunks, cut at some offset in a piece
        body = body * (1200000 // len(body) + 1)
        body = body[rng.randint(0, 40):]
    return body


def main():
    rng = random.Random(int(sys.argv[1]))
    out = sys.stdout.buffer
    for i in range(int(sys.argv[2])):
        out.write(b"r%d\t%s\n" % (i, escape(doc(rng))))


main()
