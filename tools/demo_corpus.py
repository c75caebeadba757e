#!/usr/bin/python3
"""
demo_corpus.py -- write the kernel documentation of two Linux versions as
COPY text rows "version<TAB>path<TAB>title<TAB>body" on standard output.

    demo_corpus.py DATA_DIR 6.1 6.12

DATA_DIR holds linux-source-VERSION/Documentation/ (bench/kernel_docs.sh
makes it).  Only prose files are taken (.rst, .txt, or no extension),
valid UTF-8 and not blank; the title is the first line with a letter in it.
"""
import os
import sys


def title_of(text):
    """The first reStructuredText section title, else the first real line."""
    lines = [l.rstrip() for l in text.splitlines()]
    for i, line in enumerate(lines[:-1]):
        under = lines[i + 1].strip()
        if (len(under) >= 3 and len(set(under)) == 1 and under[0] in "=-~*#^"
                and any(c.isalpha() for c in line) and not line.startswith("..")):
            return line.strip()[:100]
    for line in lines:
        s = line.strip()
        if s and not s.startswith(("..", "SPDX", ":")) and any(c.isalpha() for c in s):
            return s[:100]
    return ""


def escape(s):
    return (s.replace("\\", "\\\\").replace("\t", "\\t")
             .replace("\n", "\\n").replace("\r", "\\r"))


def main():
    data, versions = sys.argv[1], sys.argv[2:]
    out = sys.stdout
    for v in versions:
        root = os.path.join(data, "linux-source-%s" % v)
        for dirpath, _, files in os.walk(os.path.join(root, "Documentation")):
            for name in sorted(files):
                if os.path.splitext(name)[1] not in (".rst", ".txt", ""):
                    continue
                path = os.path.join(dirpath, name)
                try:
                    with open(path, encoding="utf-8") as f:
                        body = f.read()
                except (UnicodeDecodeError, OSError):
                    continue
                if not body.strip() or "\x00" in body:
                    continue
                rel = os.path.relpath(path, root)
                out.write("%s\t%s\t%s\t%s\n" % (v, escape(rel), escape(title_of(body)), escape(body)))


if __name__ == "__main__":
    main()
