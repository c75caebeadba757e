#!/usr/bin/python3
"""
srcmap_check.py -- src/README opens with a map of src/; this keeps it true.

- Every file under src/ (README files and build output aside) has exactly
  one line in the map's "Files" section, and every line there names a file
  that exists.  A line tagged "[pending: ...]" names a file another branch
  adds: it may be missing.
- Every identifier src/README names in backquotes, and every Simhash* and
  SIMHASH_* name anywhere in it, occurs in src/ (so a rename that leaves
  the README behind fails); every file name it mentions (foo.c, foo.h)
  exists in src/.
- No header in src/ is longer than 300 lines (unicode_table.h, generated,
  aside).
- PG_VERSION_NUM is tested only in the compat headers (COMPAT below): one
  place to read and update per PostgreSQL major version.

Needs no cluster; runs with the other checks.  "srcmap_check.py --self-test"
shows that each check can fail.
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SRC = os.path.normpath(os.path.join(ROOT, "src"))
README = os.path.join(SRC, "README")
MAX_HEADER_LINES = 300
GENERATED = {"fingerprint/unicode_table.h"}
# PostgreSQL's own files the design notes refer to
POSTGRES_FILES = {"createplan.c", "generic_xlog.h", "rowsecurity.c", "setrefs.c", "skey.h"}
COMPAT = {"core/simhash_compat.h", "core/simhash_compat_planner.h"}
BUILD_OUTPUT = (".o", ".bc", ".so", ".a", ".dylib", ".dll")

FILE_LINE = re.compile(r"^  (?:-- )?([A-Za-z0-9_./-]+\.(?:c|h|sql))(\s|$)")
BACKQUOTED = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`")
# a name followed by "*" is a pattern (SIMHASH_CLUSTERS_*_BYTES), not a name
PREFIXED = re.compile(r"\b(Simhash[A-Z][A-Za-z0-9_]*|SIMHASH_[A-Z0-9_]+)(?![A-Za-z0-9_*])")
FILE_NAME = re.compile(r"\b([A-Za-z0-9_]+\.[ch])\b")


def src_files():
    """The files under src/, relative to it, without READMEs and build output."""
    found = []
    for dirpath, dirnames, filenames in os.walk(SRC):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if name == "README" or name.startswith(".") or name.endswith(BUILD_OUTPUT):
                continue
            found.append(os.path.relpath(os.path.join(dirpath, name), SRC))
    return sorted(found)


def map_section(text):
    """The lines of the "Files" section of src/README."""
    lines = text.split("\n")
    try:
        start = lines.index("Files")
    except ValueError:
        return None
    out = []
    for i in range(start + 2, len(lines)):
        # the next section: a title underlined with dashes or equals signs
        if i + 1 < len(lines) and re.match(r"^[-=]{3,}$", lines[i + 1]):
            break
        out.append(lines[i])
    return out


def check_map(text, files):
    """Errors: files missing from the map, named twice, or not existing."""
    errors = []
    section = map_section(text)
    if section is None:
        return ["src/README has no \"Files\" section"]
    named = {}
    pending = set()
    for line in section:
        m = FILE_LINE.match(line)
        if not m:
            continue
        named[m.group(1)] = named.get(m.group(1), 0) + 1
        if "[pending:" in line:
            pending.add(m.group(1))
    for f in files:
        if f not in named:
            errors.append("src/%s has no line in src/README's map" % f)
    for f, n in sorted(named.items()):
        if n > 1:
            errors.append("src/%s has %d lines in src/README's map" % (f, n))
        if f not in files and f not in pending:
            errors.append("src/README's map names src/%s, which does not exist" % f)
    return errors


def check_names(text, corpus, basenames):
    """Errors: identifiers and file names in src/README that src/ lacks."""
    errors = []
    words = set(re.findall(r"[A-Za-z0-9_]+", corpus))
    names = set(BACKQUOTED.findall(text)) | set(PREFIXED.findall(text))
    for name in sorted(names):
        if name not in words:
            errors.append("src/README names %s, which is not in src/" % name)
    section = "\n".join(map_section(text) or [])
    for name in sorted(set(FILE_NAME.findall(text))):
        if name in basenames or name in POSTGRES_FILES:
            continue
        # a file another branch adds may be named in the map, tagged pending
        if re.search(r"%s\s.*\[pending:" % re.escape(name), section):
            continue
        errors.append("src/README names %s, which is not a file in src/" % name)
    return errors


def check_headers(files):
    """Errors: headers over MAX_HEADER_LINES lines."""
    errors = []
    for f in files:
        if f.endswith(".h") and f not in GENERATED:
            with open(os.path.join(SRC, f), encoding="utf-8") as fh:
                n = sum(1 for _ in fh)
            if n > MAX_HEADER_LINES:
                errors.append("src/%s has %d lines (at most %d)" % (f, n, MAX_HEADER_LINES))
    return errors


def check_versions(files):
    """Errors: PG_VERSION_NUM outside the compat headers."""
    errors = []
    for f in files:
        if f.endswith((".c", ".h")) and f not in COMPAT:
            with open(os.path.join(SRC, f), encoding="utf-8", errors="replace") as fh:
                for n, line in enumerate(fh, 1):
                    if "PG_VERSION_NUM" in line:
                        errors.append("src/%s:%d tests PG_VERSION_NUM (only %s may)"
                                      % (f, n, " and ".join(sorted(COMPAT))))
    return errors


def run(text, files):
    """All errors for README text "text" and src/ files "files"."""
    corpus = []
    for f in files:
        if os.path.exists(os.path.join(SRC, f)):
            with open(os.path.join(SRC, f), encoding="utf-8", errors="replace") as fh:
                corpus.append(fh.read())
    basenames = {os.path.basename(f) for f in files}
    return (check_map(text, files) + check_names(text, "\n".join(corpus), basenames)
            + check_headers([f for f in files if os.path.exists(os.path.join(SRC, f))])
            + check_versions([f for f in files if os.path.exists(os.path.join(SRC, f))]))


def self_test(text, files):
    """Each check fails on a README or a tree that breaks it."""
    cases = [
        ("a file without a map line", text, files + ["core/newfile.c"]),
        ("a map line without a file",
         text.replace("  core/ball.c ", "  core/gone.c   nothing\n  core/ball.c ", 1), files),
        ("a file named twice", text.replace("  core/type.c ", "  core/type.c  x\n  core/type.c ", 1), files),
        ("a renamed identifier", text + "\n`SimhashNoSuchFunction`\n", files),
        ("an old constant", text + "\nSIMHASH_NBANDS\n", files),
        ("an old file name", text + "\nshjoin.c\n", files),
    ]
    ok = True
    for label, t, f in cases:
        errors = run(t, f)
        print("self-test, %s: %s" % (label, "fails as it should" if errors else "NOT CAUGHT"))
        for e in errors:
            print("    " + e)
        ok = ok and bool(errors)
    return ok


def main():
    with open(README, encoding="utf-8") as fh:
        text = fh.read()
    files = src_files()
    if "--self-test" in sys.argv:
        sys.exit(0 if self_test(text, files) else 1)
    errors = run(text, files)
    for e in errors:
        print("srcmap_check: " + e)
    if errors:
        sys.exit(1)
    print("srcmap_check: %d files in the map, every name in src/README found" % len(files))


if __name__ == "__main__":
    main()
