"""
runner.py -- sessions, the statement log of a case, and what counts as a failure.

Every statement goes through Session.run, which logs it with its outcome.  A
failure is raised as CaseFailure (wrong result, unexpected error, an XX error,
a statement timeout) or Lost (the connection died: a crash, or a FATAL error).
Runner.recover waits for the server after a crash and tells a server restart
(every backend was terminated, or pg_postmaster_start_time() moved) from the
loss of one connection.
"""
import re
import time

import psycopg2
import psycopg2.extensions

# Outcomes are plain Python values; simhash64 and simhash_ball come back as text.
psycopg2.extensions.register_type(psycopg2.extensions.UNICODE)

SESSION_INIT = ("SET statement_timeout = '120s'; SET lock_timeout = '60s'; "
                "SET jit = off; SET client_min_messages = warning")


class Lost(Exception):
    """The connection of a session died."""


class CaseFailure(Exception):
    """A case found a failure: kind (short, stable), detail (free text)."""

    def __init__(self, kind, detail, code=None):
        super().__init__(kind)
        self.kind = kind
        self.detail = detail
        self.code = code


class Outcome:
    """Rows of a statement, or its SQLSTATE and message."""

    def __init__(self, rows=None, code=None, msg=""):
        self.rows = rows
        self.code = code
        self.msg = msg

    @property
    def ok(self):
        return self.code is None

    def __repr__(self):
        if self.ok:
            return "%d rows" % len(self.rows)
        return "ERROR %s: %s" % (self.code, self.msg.splitlines()[0] if self.msg else "")


def short(sql, limit=1500):
    """An SQL text cut for the log."""
    sql = sql.strip()
    return sql if len(sql) <= limit else sql[:limit] + " ... [%d characters]" % len(sql)


class Session:
    """One connection as one role to one database; reset lazily between cases."""

    def __init__(self, runner, name, user, dbname):
        self.runner = runner
        self.name = name
        self.user = user
        self.dbname = dbname
        self.conn = None
        self.dirty = False          # settings changed since the last reset
        self.fresh_case = True      # no statement yet in the current case

    def connect(self):
        self.conn = psycopg2.connect(dbname=self.dbname, user=self.user, connect_timeout=20,
                                     application_name="simhash_fuzz_" + self.name)
        self.conn.autocommit = True
        with self.conn.cursor() as cur:
            cur.execute(SESSION_INIT)
        self.dirty = False

    def close(self):
        if self.conn is not None:
            try:
                self.conn.close()
            except psycopg2.Error:
                pass
        self.conn = None

    def prepare_for_case(self):
        """A clean session state: no settings, prepared statements or transaction."""
        if self.conn is None or self.conn.closed:
            self.connect()
            self.runner.log.append([self.name, "-- new connection as %s to %s" % (self.user, self.dbname), ""])
        elif self.dirty and self.fresh_case:
            with self.conn.cursor() as cur:
                cur.execute("ROLLBACK; RESET ALL; DEALLOCATE ALL; " + SESSION_INIT)
        self.fresh_case = False

    def run(self, sql, copy_data=None):
        """Run one statement (COPY with copy_data, a file to read or write); an Outcome."""
        if self.conn is None or self.conn.closed or self.fresh_case:
            self.prepare_for_case()
        self.dirty = True
        entry = [self.name, sql, "?"]
        self.runner.log.append(entry)
        self.runner.statements += 1
        try:
            with self.conn.cursor() as cur:
                if copy_data is not None:
                    cur.copy_expert(sql, copy_data)
                    rows = []
                else:
                    cur.execute(sql)
                    rows = cur.fetchall() if cur.description is not None else []
        except psycopg2.Error as e:
            code = e.pgcode
            if code is None or self.conn.closed:
                entry[2] = "CONNECTION LOST: " + " ".join(str(e).split())
                raise Lost("%s: %s" % (self.name, " ".join(str(e).split())))
            msg = (e.pgerror or str(e)).strip()
            msg = re.sub(r"^ERROR:\s+", "", msg)
            entry[2] = "ERROR %s: %s" % (code, msg.splitlines()[0])
            self.runner.codes[code] = self.runner.codes.get(code, 0) + 1
            if self.runner.verbose:
                print("[%s] %s\n    -- %s" % (self.name, short(sql, 300), entry[2]), flush=True)
            if code.startswith("XX"):
                raise CaseFailure("internal error %s" % code, msg, code)
            if code == "57014":
                raise CaseFailure("statement timeout (a hang?)", msg, code)
            return Outcome(None, code, msg)
        except UnicodeDecodeError as e:
            entry[2] = "client could not decode the result: %s" % e
            return Outcome(None, "client", str(e))
        entry[2] = "%d rows" % len(rows)
        if self.runner.verbose:
            print("[%s] %s\n    -- %s" % (self.name, short(sql, 300), entry[2]), flush=True)
        return Outcome(rows)

    def ok(self, sql):
        """Run a statement that must succeed (setup and helpers)."""
        out = self.run(sql)
        if not out.ok:
            raise CaseFailure("unexpected error %s" % out.code, "%s\n  in: %s" % (out.msg, short(sql)), out.code)
        return out.rows


class Runner:
    """Sessions, the current case's log, failures and plan coverage."""

    def __init__(self, config):
        self.config = config
        self.verbose = config.verbose
        self.sessions = {}
        self.log = []
        self.failures = []
        self.signatures = {}
        self.seen = {}
        self.statements = 0
        self.codes = {}
        self.times = {}
        self.slowest = []
        self.cases = 0
        self.skipped = 0
        self.start_time = None
        self.crashes = 0
        self.simhash_indexes = set()

    def add_session(self, name, user, dbname):
        self.sessions[name] = Session(self, name, user, dbname)
        return self.sessions[name]

    def s(self, name):
        return self.sessions[name]

    def begin_case(self):
        """A new statement log; sessions reset themselves on first use."""
        self.log = []
        for sess in self.sessions.values():
            sess.fresh_case = True

    def postmaster_start(self):
        return self.s("admin").ok("SELECT pg_postmaster_start_time()::text")[0][0]

    def check_server(self):
        """Raise Lost if the server restarted since the run began."""
        admin = self.s("admin")
        try:
            with admin.conn.cursor() as cur:
                cur.execute("SELECT pg_postmaster_start_time()::text")
                now = cur.fetchone()[0]
        except psycopg2.Error as e:
            raise Lost("admin: " + " ".join(str(e).split()))
        if now != self.start_time:
            raise Lost("pg_postmaster_start_time() moved from %s to %s" % (self.start_time, now))

    def recover(self):
        """After a lost connection: wait for the server; describe what happened."""
        admin = self.s("admin")
        restarted = False
        # the postmaster ends the other backends a moment after a crash
        deadline = time.time() + 3
        while time.time() < deadline and not restarted:
            try:
                with admin.conn.cursor() as cur:
                    cur.execute("SELECT 1")
                time.sleep(0.2)
            except (psycopg2.Error, AttributeError):
                restarted = True
        for sess in self.sessions.values():
            sess.close()
        deadline = time.time() + 300
        while True:
            try:
                admin.connect()
                break
            except psycopg2.OperationalError:
                if time.time() > deadline:
                    raise SystemExit("fuzz: the server did not come back within 5 minutes")
                time.sleep(0.5)
        now = self.postmaster_start()
        if now != self.start_time:
            restarted = True
            self.start_time = now
        if restarted:
            self.crashes += 1
            return "the server restarted (every backend was terminated: a crash)"
        return "only this connection was lost (a FATAL error?)"

    def record(self, case, kind, detail, code=None):
        """Note a failure; print its log the first time its signature is seen."""
        first_line = re.sub(r"^\w+: ", "", detail.splitlines()[0] if detail else "")
        sig = "%s | %s | %s" % (kind, case.family, re.sub(r"\d+", "N", first_line))
        first = sig not in self.signatures
        self.signatures.setdefault(sig, []).append(case.ident)
        self.failures.append((case, kind, detail))
        print("\nFAILURE in case %s: %s" % (case.ident, kind), flush=True)
        if not first:
            print("  (same signature as case %s; log not repeated)" % self.signatures[sig][0], flush=True)
            return
        print("  tags: %s" % " ".join(case.tags))
        print("  detail: %s" % detail.replace("\n", "\n    "))
        print("  replay: SIMHASH_FUZZ_SEED=%s SIMHASH_FUZZ_CASE=%s" % (self.config.seed, case.ident))
        print("  skip:   SIMHASH_FUZZ_SKIP='%s'" % case.skip_hint())
        print("  statements of the case (session: statement -- outcome):")
        for name, sql, outcome in self.log:
            print("    [%s] %s\n        -- %s" % (name, short(sql).replace("\n", "\n       "), outcome))
        print(flush=True)

    def distinct_failures(self):
        return len(self.signatures)

    def saw(self, feature):
        self.seen[feature] = self.seen.get(feature, 0) + 1
