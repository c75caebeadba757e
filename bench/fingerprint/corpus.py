#!/usr/bin/python3
"""
corpus.py -- write the bench/fingerprint corpus as COPY text files.

    corpus.py ROOT OUTDIR

ROOT contains Documentation/ (one kernel version).  The documents are the
same as bench/quality's (prose text: .rst, .txt or no extension; valid
UTF-8; not blank; see quality/prepare.py):
  OUTDIR/en.tsv   path, body   everything outside Documentation/translations
  OUTDIR/zh.tsv   path, body   Documentation/translations/zh_CN and zh_TW
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "quality"))
from prepare import copy_escape, lang_of, read_tree   # noqa: E402


def main():
    root, outdir = sys.argv[1], sys.argv[2]
    tree = read_tree(root)
    os.makedirs(outdir, exist_ok=True)
    for lang in ("en", "zh"):
        n = size = 0
        with open(os.path.join(outdir, lang + ".tsv"), "w", encoding="utf-8") as f:
            for path in sorted(tree):
                if lang_of(path) == lang:
                    f.write("%s\t%s\n" % (copy_escape(path), copy_escape(tree[path])))
                    n += 1
                    size += len(tree[path].encode("utf-8"))
        print("%s: %d documents, %d bytes" % (lang, n, size))


if __name__ == "__main__":
    main()
