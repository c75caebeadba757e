#!/usr/bin/python3
"""
fuzz_check.py -- a randomized SQL fuzzer of the simhash extension.

As an unprivileged role (and a role that may only SELECT), it runs every
function, operator, cast and query spelling of the extension with random and
boundary values: radii -2..66 and the limits of int2/int4/int8 as constants,
parameters, int2/int4/int8 expressions, stable expressions, initplans, ball
literals and simhash_ball(q, k); NULLs, empty and multi-megabyte texts,
invalid encodings and odd Unicode (in UTF8, LATIN1 and SQL_ASCII databases);
in plain execution, EXPLAIN, EXPLAIN ANALYZE and prepared statements with
custom and generic plans; over plain, partitioned and row-level-security
tables, a security_barrier view, scratch tables it owns; with index scans,
bitmap scans, nearest-neighbour scans, nested loops over the index, the band
join (also in batches and under parallel query).  It asserts that

  - the server never restarts (pg_postmaster_start_time() does not move and
    no connection is lost);
  - every error has a SQLSTATE outside class XX and is the expected one;
  - index results equal sequential-scan results (and the Python model of
    the rows: sorted ids, nearest-neighbour distance sequences, join counts);
  - the documented identities hold (tools/simhash_reference.py, features).

The run: the superuser creates the roles, databases and tables; a sweep
runs every spelling at every radius and every radius form at the extremes;
then random cases, with a round of random DML every 25 cases.

Environment (the PG* variables name the server; the script must connect as a
superuser, through a method that lets the new roles log in, e.g. trust):
  SIMHASH_FUZZ_SEED        seed (default 20261123; "random" picks one)
  SIMHASH_FUZZ_ITERATIONS  random cases after the sweep (default 800)
  SIMHASH_FUZZ_MINUTES     run random cases for this long instead (long mode;
                           the seed is then random unless given)
  SIMHASH_FUZZ_SWEEP       0 to skip the sweep
  SIMHASH_FUZZ_CASE        replay one case, e.g. s123 or r45 (setup and the DML
                           rounds before it are replayed too)
  SIMHASH_FUZZ_SKIP        known failures to skip: comma-separated entries of
                           '+'-joined tag patterns (fnmatch), e.g.
                           'sp:ball*+k:2147483647,kind:inspect+arg:0'; a case that
                           has a tag matching every pattern of an entry is not run;
                           'check:joinmem' turns off the band join's memory check
  SIMHASH_FUZZ_KNOWN       1 runs the statements of known, unfixed defects too
                           (fuzz/neardup.py KNOWN_FAILURES; by default they are
                           avoided and counted)
  SIMHASH_FUZZ_MAX_FAILURES  stop after this many distinct failures (default 10)
  SIMHASH_FUZZ_KINDS       only these generators for random cases, e.g. join,knn
                           (the names after gen_ in fuzz/queries.py, fuzz/scalar.py)
  SIMHASH_FUZZ_VERBOSE     1 prints every statement
  SIMHASH_FUZZ_KEEP        1 keeps the databases and roles afterwards
Exits non-zero on any failure, printing the seed, the case and its statements.
"""
import fnmatch
import os
import random
import sys
import time
import traceback

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import psycopg2  # noqa: E402

from fuzz import clusters, data, neardup, queries, radius, scalar  # noqa: E402
from fuzz.runner import CaseFailure, Lost, Runner  # noqa: E402

DML_EVERY = 25
RANDOM_KINDS = [
    (30, queries.gen_restrict), (12, queries.gen_knn), (9, queries.gen_join),
    (6, queries.gen_column_join), (2, scalar.gen_casts), (4, scalar.gen_literals),
    (2, scalar.gen_bits), (4, scalar.gen_operators), (2, scalar.gen_sorting),
    (6, scalar.gen_text), (1, scalar.gen_huge), (4, scalar.gen_arrays),
    (3, scalar.gen_tsvector), (5, scalar.gen_encoding), (4, scalar.gen_inspect),
    (2, scalar.gen_copy), (2, scalar.gen_ddl), (3, queries.gen_cursor), (3, queries.gen_function),
    (2, radius.gen_radius_weight), (3, radius.gen_radius_text), (1, radius.gen_huge_radius),
    (3, radius.gen_jaccard),
    (3, radius.gen_blocks), (1, radius.gen_block_join),
    (8, neardup.gen_trigger_args), (12, neardup.gen_trigger_dml), (3, clusters.gen_clusters),
]
# plan shapes a full run must have produced, or the fuzzer has lost its reach
REQUIRED_PLANS = ["simhash Index Scan", "simhash Bitmap Index Scan", "simhash Index Scan (nearest)",
                  "simhash Index Scan (inner side of a nested loop)", "SimhashJoin",
                  "SimhashJoin in batches", "SimhashJoin under Gather", "Gather"]
HINT_KEYS = ("kind:", "sp:", "fn:", "form:", "variant:", "k:", "arg:", "db:")


class Config:
    def __init__(self):
        env = os.environ.get
        self.minutes = float(env("SIMHASH_FUZZ_MINUTES", "0"))
        seed = env("SIMHASH_FUZZ_SEED", "random" if self.minutes else "20261123")
        self.seed = str(random.SystemRandom().randrange(10 ** 9)) if seed == "random" else seed
        self.iterations = int(env("SIMHASH_FUZZ_ITERATIONS", "800"))
        self.sweep = env("SIMHASH_FUZZ_SWEEP", "1") != "0"
        self.case = env("SIMHASH_FUZZ_CASE", "")
        self.skip = [set(e.split("+")) for e in env("SIMHASH_FUZZ_SKIP", "").split(",") if e.strip()]
        self.max_failures = int(env("SIMHASH_FUZZ_MAX_FAILURES", "10"))
        self.verbose = env("SIMHASH_FUZZ_VERBOSE", "") == "1"
        self.keep = env("SIMHASH_FUZZ_KEEP", "") == "1"
        self.known = env("SIMHASH_FUZZ_KNOWN", "") == "1"
        self.kinds = [k for k in env("SIMHASH_FUZZ_KINDS", "").split(",") if k]


class Case:
    def __init__(self, ident, tags, run):
        self.ident = ident
        self.tags = tags
        self.run = run
        self.family = " ".join(t for t in tags if t.startswith(("kind:", "sp:", "fn:", "form:")))

    def skip_hint(self):
        return "+".join(t for t in self.tags if t.startswith(HINT_KEYS))


def run_case(runner, ctx, case):
    """Run one case; False once the run must stop."""
    if any(all(any(fnmatch.fnmatchcase(t, pat) for t in case.tags) for pat in entry)
           for entry in ctx.config.skip):
        runner.skipped += 1
        return True
    runner.begin_case()
    failures_before = len(runner.failures)
    t0 = time.time()
    try:
        try:
            case.run(ctx)
            runner.check_server()
        except Lost as e:
            what = runner.recover()
            raise CaseFailure("connection lost: %s" % what, str(e))
    except CaseFailure as f:
        runner.record(case, f.kind, f.detail, f.code)
    except Exception:       # a bug of the fuzzer itself: fail, and go on
        runner.record(case, "fuzzer error", traceback.format_exc())
    if len(runner.failures) > failures_before:
        try:
            data.finish_prepared(runner.s("admin"))
        except (CaseFailure, Lost):
            pass
    runner.cases += 1
    kind = case.tags[0][5:]
    took = time.time() - t0
    runner.times[kind] = runner.times.get(kind, 0.0) + took
    runner.slowest = sorted(runner.slowest + [(took, case.ident, " ".join(case.tags))], reverse=True)[:12]
    return runner.distinct_failures() < ctx.config.max_failures and \
        len(runner.failures) < 5 * ctx.config.max_failures


def dml_case(ctx, j):
    rng = data.fresh_rng(ctx.config.seed, "dml", j)
    return Case("d%d" % j, ["kind:dml", "round:%d" % j], lambda ctx: data.dml_round(ctx, rng))


def random_case(ctx, i):
    rng = data.fresh_rng(ctx.config.seed, "r", i)
    kinds = [(w, g) for w, g in RANDOM_KINDS if not ctx.config.kinds or g.__name__[4:] in ctx.config.kinds]
    gen = rng.choices([g for _, g in kinds], weights=[w for w, _ in kinds])[0]
    tags, run = gen(ctx, rng)
    return Case("r%d" % i, tags, run)


def setup(runner, config):
    model = data.Model()
    pg = psycopg2.connect(dbname="postgres")
    pg.autocommit = True
    with pg.cursor() as cur:
        data.drop_all(cur)
        data.create_databases(cur)
    pg.close()
    admin = runner.add_session("admin", os.environ.get("PGUSER", "postgres"), data.DB)
    runner.add_session("fuzz", data.FUZZ, data.DB)
    runner.add_session("ro", data.RO, data.DB)
    runner.begin_case()
    rng = data.fresh_rng(config.seed, "data")
    data.setup_tables(admin, rng, model)
    scalar.setup_scratch(runner.s("fuzz"))
    queries.setup_functions(runner.s("fuzz"))
    for name, db in (("latin1", data.DB_LATIN1), ("sqlascii", data.DB_SQLASCII)):
        side = runner.add_session(name + "_admin", os.environ.get("PGUSER", "postgres"), db)
        data.setup_side_database(side)
        side.close()
        del runner.sessions[name + "_admin"]
        runner.add_session(name, data.FUZZ, db)
    neardup.setup(runner)
    runner.start_time = runner.postmaster_start()
    ctx = queries.Context(runner, model, config)
    ctx.index_names = {n for n, kind in data.simhash_indexes(admin) if kind == "i"}
    return ctx


def teardown(runner, config):
    try:
        data.finish_prepared(runner.s("admin"))
    except (CaseFailure, Lost):
        pass
    for sess in runner.sessions.values():
        sess.close()
    if config.keep:
        print("kept databases %s, %s, %s and roles %s, %s" % (data.DB, data.DB_LATIN1, data.DB_SQLASCII,
                                                             data.FUZZ, data.RO))
        return
    pg = psycopg2.connect(dbname="postgres")
    pg.autocommit = True
    with pg.cursor() as cur:
        data.drop_all(cur)
    pg.close()


def main():
    config = Config()
    runner = Runner(config)
    began = time.time()
    mode = ("%g minutes" % config.minutes) if config.minutes else ("%d random cases" % config.iterations)
    print("fuzz: seed %s, %s%s%s" % (config.seed, mode, ", sweep" if config.sweep else "",
                                     ", replaying case " + config.case if config.case else ""), flush=True)
    if config.skip:
        print("fuzz: skipping cases tagged %s" % ", ".join("+".join(sorted(e)) for e in config.skip))
    try:
        ctx = setup(runner, config)
    except (CaseFailure, Lost) as e:
        print("fuzz: setup failed: %s %s" % (e, getattr(e, "detail", "")))
        for name, sql, outcome in runner.log[-5:]:
            print("  [%s] %s -- %s" % (name, sql[:300], outcome))
        return 1
    print("fuzz: setup done in %.0f s" % (time.time() - began), flush=True)
    go = True
    sweep = (queries.sweep_cases(ctx) + radius.sweep_specs() + neardup.sweep_specs() + clusters.sweep_specs()
             if config.sweep or config.case.startswith("s") else [])
    if config.case.startswith("s"):
        i = int(config.case[1:])
        rng = data.fresh_rng(config.seed, "s", i)
        run_case(runner, ctx, Case("s%d" % i, *queries.sweep_case(ctx, rng, sweep[i])))
    elif config.case.startswith("r"):
        i = int(config.case[1:])
        for j in range(i // DML_EVERY + 1):
            run_case(runner, ctx, dml_case(ctx, j))
        run_case(runner, ctx, random_case(ctx, i))
    else:
        for i, spec in enumerate(sweep):
            rng = data.fresh_rng(config.seed, "s", i)
            go = run_case(runner, ctx, Case("s%d" % i, *queries.sweep_case(ctx, rng, spec)))
            if not go:
                break
        print("fuzz: sweep of %d cases done at %.0f s" % (len(sweep), time.time() - began), flush=True)
        i = 0
        deadline = began + config.minutes * 60
        while go and (i < config.iterations if not config.minutes else time.time() < deadline):
            if i % DML_EVERY == 0:
                go = run_case(runner, ctx, dml_case(ctx, i // DML_EVERY))
            go = go and run_case(runner, ctx, random_case(ctx, i))
            i += 1
            if i % 500 == 0:
                print("fuzz: %d random cases, %d statements, %d failures, %.0f s"
                      % (i, runner.statements, len(runner.failures), time.time() - began), flush=True)
        if not go:
            print("fuzz: stopped after %d distinct failures" % runner.distinct_failures())
    teardown(runner, config)

    elapsed = time.time() - began
    print("\nfuzz: seed %s: %d cases (%d skipped), %d statements, %d server crashes, %.0f s"
          % (config.seed, runner.cases, runner.skipped, runner.statements, runner.crashes, elapsed))
    print("fuzz: plans seen: " + ", ".join("%s %d" % kv for kv in sorted(runner.seen.items())))
    print("fuzz: seconds by kind of case: " + ", ".join("%s %.1f" % kv for kv in sorted(runner.times.items())))
    if True:
        print("fuzz: slowest cases:\n  " + "\n  ".join("%.2f s %s %s" % x for x in runner.slowest))
    for name, n in sorted(runner.known.items()):
        print("fuzz: KNOWN FAILURE avoided %d times (SIMHASH_FUZZ_KNOWN=1 runs it): %s: %s"
              % (n, name, neardup.KNOWN_FAILURES[name]))
    print("fuzz: expected errors seen: " + ", ".join("%s %d" % kv for kv in sorted(runner.codes.items())))
    missing = [p for p in REQUIRED_PLANS if p not in runner.seen]
    if missing and go and config.sweep and not config.case and not runner.failures:
        print("fuzz: FAIL: these plans never appeared, the fuzzer lost its reach: %s" % ", ".join(missing))
        return 1
    if runner.failures:
        print("fuzz: FAIL: %d failures of %d kinds:" % (len(runner.failures), runner.distinct_failures()))
        for sig, idents in runner.signatures.items():
            print("  %s  (cases %s)" % (sig, ", ".join(idents[:8]) + (" ..." if len(idents) > 8 else "")))
        print("replay one with SIMHASH_FUZZ_SEED=%s SIMHASH_FUZZ_CASE=<case>; "
              "skip known ones with SIMHASH_FUZZ_SKIP (see the 'skip:' line of each)" % config.seed)
        return 1
    print("fuzz: PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
