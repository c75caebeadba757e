#!/usr/bin/python3
"""
meta_check.py -- META.json follows the PGXN Meta Spec 1.0.0, and agrees with
simhash.control and the install script.

Checks what the spec (http://pgxn.org/meta/spec.txt) requires: the mandatory
keys and their types, semantic versions, a known license, the shape of
"provides", "prereqs" (phases runtime/build/test/configure/develop,
relations requires/recommends/suggests/conflicts, version ranges) and
"meta-spec"; then that the version is simhash.control's default_version
that the provided file exists, and that update scripts lead from it to
default_version.  Exits non-zero on any problem.
"""
import json
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)([a-zA-Z][0-9a-zA-Z-]*)?$")
LICENSES = {"agpl_3", "apache_1_1", "apache_2_0", "artistic_1", "artistic_2", "bsd",
            "freebsd", "gfdl_1_2", "gfdl_1_3", "gpl_1", "gpl_2", "gpl_3", "lgpl_2_1",
            "lgpl_3_0", "mit", "mozilla_1_0", "mozilla_1_1", "openssl", "perl_5",
            "postgresql", "qpl_1_0", "ssleay", "sun", "zlib", "open_source",
            "restricted", "unrestricted", "unknown"}
PHASES = {"configure", "build", "runtime", "test", "develop"}
RELATIONS = {"requires", "recommends", "suggests", "conflicts"}
RANGE = re.compile(r"^\s*(([<>]=?|==|!=)\s*)?(0|[1-9]\d*)(\.(0|[1-9]\d*)){0,2}([a-zA-Z][0-9a-zA-Z-]*)?\s*$")

problems = []


def check(cond, what):
    if not cond:
        problems.append(what)


def main():
    with open(os.path.join(ROOT, "META.json")) as f:
        meta = json.load(f)
    for key in ("name", "abstract", "maintainer", "license", "provides", "meta-spec", "version"):
        check(key in meta, "missing required key %r" % key)
    check(isinstance(meta.get("name"), str) and re.match(r"^[^\s/\\]{2,}$", meta.get("name", "")),
          "name must be a string of at least 2 characters without spaces or slashes")
    check(isinstance(meta.get("abstract"), str) and meta.get("abstract"), "abstract must be a string")
    check(SEMVER.match(str(meta.get("version", ""))), "version must be a semantic version")
    m = meta.get("maintainer")
    check(isinstance(m, str) or (isinstance(m, list) and m and all(isinstance(x, str) for x in m)),
          "maintainer must be a string or a list of strings")
    lic = meta.get("license")
    lics = [lic] if isinstance(lic, str) else (list(lic.keys()) if isinstance(lic, dict) else [])
    check(lics and (isinstance(lic, dict) or all(l in LICENSES for l in lics)), "unknown license %r" % lic)
    ms = meta.get("meta-spec", {})
    check(ms.get("version") == "1.0.0", "meta-spec version must be 1.0.0")
    provides = meta.get("provides", {})
    check(isinstance(provides, dict) and provides, "provides must be a non-empty object")
    for ext, p in provides.items():
        check("file" in p and "version" in p, "provides.%s needs file and version" % ext)
        check(SEMVER.match(str(p.get("version", ""))), "provides.%s.version must be semver" % ext)
        check(os.path.isfile(os.path.join(ROOT, p.get("file", ""))), "provides.%s.file does not exist" % ext)
        if "docfile" in p:
            check(os.path.isfile(os.path.join(ROOT, p["docfile"])), "provides.%s.docfile does not exist" % ext)
    for phase, rels in meta.get("prereqs", {}).items():
        check(phase in PHASES, "unknown prereqs phase %r" % phase)
        for rel, reqs in rels.items():
            check(rel in RELATIONS, "unknown prereqs relation %r" % rel)
            for name, rng in reqs.items():
                check(all(RANGE.match(part) for part in str(rng).split(",")),
                      "bad version range %r for %s" % (rng, name))
    if "release_status" in meta:
        check(meta["release_status"] in ("stable", "testing", "unstable"), "bad release_status")
    if "tags" in meta:
        check(all(isinstance(t, str) and 0 < len(t) < 256 for t in meta["tags"]), "bad tags")

    # agreement with the control file and the install script
    with open(os.path.join(ROOT, "simhash.control")) as f:
        control = f.read()
    dv = re.search(r"default_version\s*=\s*'([^']+)'", control)
    check(dv and dv.group(1) == meta.get("version"), "META version differs from default_version")
    # CREATE EXTENSION runs the base script named in META.json, then the
    # update scripts from its version up to default_version (as contrib does)
    base = re.match(r"^src/simhash--([0-9.]+)\.sql$", provides.get("simhash", {}).get("file", ""))
    check(base, "provides.simhash.file is not an install script src/simhash--VERSION.sql")
    if base and dv:
        version = base.group(1)
        while version != dv.group(1):
            ups = [f for f in os.listdir(os.path.join(ROOT, "src"))
                   if f.startswith("simhash--%s--" % version) and f.endswith(".sql")]
            check(len(ups) == 1, "no single update script from %s towards %s" % (version, dv.group(1)))
            if len(ups) != 1:
                break
            version = ups[0][len("simhash--%s--" % version):-len(".sql")]

    for p in problems:
        print("META.json: " + p)
    print("META.json check: %d problems" % len(problems))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
