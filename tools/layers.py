#!/usr/bin/python3
"""
tools/layers.py [--quiet] [SRC] -- draw src/ by layer from its #includes and
calls, and fail if a call or include runs up a layer or files form a circle.

Every file under SRC (default: src/ next to this script) belongs to the
layer of its folder; src/module.c is the top.  The layers, lowest first:

    core < fingerprint < access < planner < executor < neardup, clusters < module

(neardup and clusters share a floor: either may use the other, but not in a
circle).  An arrow A -> B means A needs B:

- A has #include "B" (a header of src/; PostgreSQL's own headers are not
  drawn);
- A uses, inside a function body, an initializer or a macro, a function or
  global variable that B (a .c file) defines without "static" -- a call or a
  reference, not a prototype.  Parsed from the sources (comments and strings
  removed), so a tree needs no build; header inline functions count for the
  header that holds them.

Prints each layer with its files, then the folder-to-folder arrows with
their counts.  Exits 1 naming every offender: an arrow from a lower layer
into a higher one, an include of another folder's header that is not its
interface (INTERFACE below: one header per layer; any header of core/), or
a circle (a strongly connected set of files), across
folders or inside one (a header whose inline code calls into the .c file
that includes it, two files that call each other): the drawing must be a
stack, so each layer reads from the bottom up.  Exits 0 otherwise.  Python 3
standard library only; sql_tests/checks/layers_check.py runs it.
"""
import os
import re
import sys

LAYERS = [["core"], ["fingerprint"], ["access"], ["planner"], ["executor"],
          ["neardup", "clusters"], ["module"]]
RANK = {folder: i for i, floor in enumerate(LAYERS) for folder in floor}
# the one header through which other folders use a layer; core/ is the
# foundation, all of its headers are shared
INTERFACE = {"fingerprint": "fingerprint.h", "access": "simhash_am.h",
             "planner": "simhash_planner.h", "executor": "simhash_executor.h",
             "neardup": "neardup.h", "clusters": "clusters.h"}

COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
STRING = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'')
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"/]+)"', re.M)
IDENT = re.compile(r"[A-Za-z_]\w*")
# a function definition in PostgreSQL style: the name at the start of a line,
# its parameter list, then the body (possibly after the parameters' lines)
FUNC_DEF = re.compile(r"^([A-Za-z_]\w*)\s*\(([^;{]*?)\)\s*\{", re.M | re.S)
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "do", "else"}


def folder_of(rel):
    """The layer folder of a path relative to src/."""
    parts = rel.split(os.sep)
    if len(parts) == 1:
        return "module" if parts[0] == "module.c" else None
    return parts[0] if parts[0] in RANK else None


def strip(text):
    """Source text without comments and string or character literals."""
    text = COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    text = re.sub(r"\\\n", " ", text)
    return STRING.sub('""', text)


def split_depth(text):
    """(top-level text, text inside braces or #define lines) of a file."""
    top, inner = [], []
    depth = 0
    for line in text.split("\n"):
        if line.lstrip().startswith("#"):
            if re.match(r"\s*#\s*define\b", line):
                inner.append(line)
            continue
        for ch in re.split(r"([{}])", line):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth = max(depth - 1, 0)
            elif depth == 0:
                top.append(ch)
            else:
                inner.append(ch)
        top.append("\n")
        inner.append("\n")
    return "".join(top), "".join(inner)


def global_definitions(text):
    """Names of the non-static functions and variables a .c file defines."""
    names, statics = set(), set()
    for m in FUNC_DEF.finditer(text):
        name = m.group(1)
        if name in KEYWORDS:
            continue
        start = text.rfind("\n\n", 0, m.start())
        before = text[start if start >= 0 else 0:m.start()]
        (statics if re.search(r"\bstatic\b", before) else names).add(name)
    top, _ = split_depth(text)
    for stmt in top.split(";"):
        stmt = " ".join(stmt.split())
        if not stmt or stmt.startswith(("extern ", "typedef ")) or "(" in stmt.split("=")[0]:
            continue
        decl = stmt.split("=")[0].strip()
        m = re.search(r"([A-Za-z_]\w*)\s*(\[[^\]]*\])*\s*$", decl)
        if m and len(decl.split()) >= 2:
            (statics if re.search(r"\bstatic\b", decl) else names).add(m.group(1))
    return names - statics, statics


def read_tree(src):
    """{rel path: (includes, used identifiers, defined globals, statics)}."""
    files = {}
    for dirpath, _, filenames in os.walk(src):
        for fn in sorted(filenames):
            if not fn.endswith((".c", ".h")):
                continue
            path = os.path.join(dirpath, fn)
            rel = os.path.relpath(path, src)
            if folder_of(rel) is None:
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                raw = f.read()
            includes = INCLUDE.findall(raw)
            text = strip(raw)
            _, inner = split_depth(text)
            used = set(IDENT.findall(inner))
            defined, statics = global_definitions(text) if fn.endswith(".c") else (set(), set())
            files[rel] = (includes, used, defined, statics)
    return files


def draw(files):
    """The arrows {(from, to): [reasons]} between files."""
    by_name = {}
    for rel in files:
        by_name.setdefault(os.path.basename(rel), []).append(rel)
    owner = {}
    for rel, (_, _, defined, _) in files.items():
        for name in defined:
            owner.setdefault(name, rel)
    arrows = {}
    for rel, (includes, used, defined, statics) in files.items():
        for inc in includes:
            for target in by_name.get(inc, []):
                if target != rel:
                    arrows.setdefault((rel, target), []).append("#include \"%s\"" % inc)
        for name in sorted(used - defined - statics):
            target = owner.get(name)
            if target and target != rel:
                arrows.setdefault((rel, target), []).append(name)
    return arrows


def circles(nodes, arrows):
    """The strongly connected sets of more than one file (Tarjan)."""
    succ = {n: [] for n in nodes}
    for a, b in arrows:
        succ[a].append(b)
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def enter(v, work):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        work.append((v, iter(succ[v])))

    def visit(v):
        work = []
        enter(v, work)
        while work:
            node, it = work[-1]
            pushed = False
            for w in it:
                if w not in index:
                    enter(w, work)
                    pushed = True
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            if pushed:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))

    for n in sorted(nodes):
        if n not in index:
            visit(n)
    return out


def main(argv):
    quiet = "--quiet" in argv
    args = [a for a in argv if not a.startswith("--")]
    src = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    files = read_tree(src)
    arrows = draw(files)
    offenders = []

    for (a, b), why in sorted(arrows.items()):
        fa, fb = folder_of(a), folder_of(b)
        if RANK[fa] < RANK[fb]:
            offenders.append("up a layer: %s (%s) -> %s (%s): %s"
                             % (a, fa, b, fb, ", ".join(why)))
        elif (fa != fb and b.endswith(".h") and fb in INTERFACE
              and os.path.basename(b) != INTERFACE[fb]):
            offenders.append("past the interface: %s -> %s (%s's interface is %s)"
                             % (a, b, fb, INTERFACE[fb]))
    for comp in circles(files, arrows):
        folders = sorted({folder_of(f) for f in comp})
        inner = [(a, b) for (a, b) in arrows if a in comp and b in comp]
        offenders.append("circle %s %s: %s (%d arrows: %s)"
                         % ("across" if len(folders) > 1 else "inside", "/".join(folders),
                            " ".join(comp), len(inner),
                            "; ".join("%s -> %s %s" % (a, b, ",".join(arrows[(a, b)]))
                                      for a, b in sorted(inner))))

    if not quiet:
        print("layers (lowest first), %d files, %d arrows:" % (len(files), len(arrows)))
        for i, floor in enumerate(LAYERS):
            for folder in floor:
                members = sorted(os.path.basename(f) for f in files if folder_of(f) == folder)
                print("  %d %-12s %s" % (i, folder, " ".join(members)))
        counts = {}
        for a, b in arrows:
            fa, fb = folder_of(a), folder_of(b)
            if fa != fb:
                counts[(fa, fb)] = counts.get((fa, fb), 0) + 1
        print("arrows between folders (file pairs):")
        for (fa, fb), n in sorted(counts.items(), key=lambda kv: (-RANK[kv[0][0]], kv[0])):
            mark = "  UP" if RANK[fa] < RANK[fb] else ""
            print("  %-12s -> %-12s %3d%s" % (fa, fb, n, mark))
    if offenders:
        print("layers.py: %d offender(s):" % len(offenders))
        for o in offenders:
            print("  " + o)
        return 1
    print("layers.py: no circle, no arrow up a layer")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
