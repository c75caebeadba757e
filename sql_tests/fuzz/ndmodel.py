"""
ndmodel.py -- the Python model of the two triggers (README "Near-duplicates at INSERT").

Validators read a trigger's arguments as the README's grammar says (and as
sql/trigger.sql shows) and give the SQLSTATE a firing must raise, or None
for a valid definition.  Table simulates a table carrying the triggers:
each INSERT, UPDATE, upsert and DELETE, row by row, with statement and
transaction atomicity, so that a case can compare every statement's outcome
and the rows a sequential scan finds at the end with the model.

Model of a firing (BEFORE INSERT OR UPDATE ... FOR EACH ROW):
  - fingerprint trigger: fp := simhash(concat_ws(E'\\n', text columns)), NULL if all are
    NULL; on UPDATE when a text column or fp is assigned or changed (here only an
    assignment changes them);
  - near-duplicate trigger: the nearest other row whose fingerprint is within k
    (k 'auto': simhash_radius of the row's text columns joined the same way; 0
    without features, and then nothing matches) and whose scope values equal the
    row's (a NULL scope value matches nothing), with verify=s only one whose text
    (joined the same way) has simhash_jaccard >= s with the row's (a NULL text on
    either side confirms nothing), the smallest key among equals;
    reject: 23P01; skip: the row is not stored (an UPDATE not applied); link: the
    key and the distance in the link columns, NULLs without a match.  An UPDATE
    that changes neither the fingerprint nor the scope (nor, with verify=, the
    text) is not checked.
  - an UPDATE that moves a row to another partition then fires the INSERT
    triggers of the destination (PostgreSQL: delete, then insert).
"""
import copy
import decimal

from .radius import radius_of_weight, text_weight
from .scalar import ref
from .spell import dist

SYSTEM_COLS = {"ctid", "xmin", "xmax", "cmin", "cmax", "tableoid"}
FP_KINDS = {"fp", "dfp", "genfp"}
TEXT_KINDS = {"text", "varchar", "dtext"}
INT_KINDS = {"int2", "int4", "int8"}
NO_EQUALITY = {"json", "point"}


def resolve(cols, name):
    """SQLSTATE for a column name that does not resolve: missing or a system column."""
    if name in SYSTEM_COLS:
        return "42P10"
    if name not in cols:
        return "42703"
    return None


def split_identifiers(s):
    """SplitIdentifierString(s, ','): the names, or None if it cannot read them."""
    names, i, n = [], 0, len(s)
    while i < n and s[i].isspace():
        i += 1
    if i == n:
        return []
    while True:
        if i < n and s[i] == '"':
            j, name = i + 1, ""
            while True:
                if j >= n:
                    return None
                if s[j] == '"':
                    if j + 1 < n and s[j + 1] == '"':
                        name += '"'
                        j += 2
                        continue
                    break
                name += s[j]
                j += 1
            if name == "":
                return None
            i = j + 1
        else:
            j = i
            while j < n and s[j] != "," and not s[j].isspace():
                j += 1
            if j == i:
                return None
            name = s[i:j].lower()
            i = j
        names.append(name[:63])
        while i < n and s[i].isspace():
            i += 1
        if i == n:
            return names
        if s[i] != ",":
            return None
        i += 1
        while i < n and s[i].isspace():
            i += 1


def parse_k(arg):
    """k: 'auto' (any case), or digits only with a value of 0..64; None if invalid."""
    if arg.lower() == "auto":
        return "auto"
    if arg == "" or any(c not in "0123456789" for c in arg):
        return None
    v = int(arg)
    return v if v <= 64 else None


def parse_verify(num):
    """verify=s: digits (ASCII) with at most one point, at least one digit, a value
    from 0 to 1; None if invalid (no sign, exponent, spaces, NaN or infinity)."""
    if num.count(".") > 1 or not any(c in "0123456789" for c in num):
        return None
    if any(c not in "0123456789." for c in num):
        return None
    # compared with 1 as written: "1.0000000000000001" is above 1, though
    # it rounds to the double 1.0
    if decimal.Decimal(num) > 1:
        return None
    return float(num)


class NearDupConfig:
    """A valid near-duplicate trigger definition, as the model needs it (verify:
    the least similarity of verify=, or None)."""

    def __init__(self, k, action, scope=(), text=(), key_col=None, dist_col=None, verify=None):
        self.k, self.action, self.scope, self.text = k, action, list(scope), list(text)
        self.key_col, self.dist_col, self.verify = key_col, dist_col, verify


def validate_neardup(args, cols, pk, index_ok):
    """(SQLSTATE of the first defect, or None, and a NearDupConfig when valid).
    cols: name -> kind; pk: the primary key's columns; index_ok: whether every
    competing table has a valid, non-partial simhash index on the fp column."""
    if len(args) < 3:
        return "22023", None
    fp = args[0]
    err = resolve(cols, fp)
    if err:
        return err, None
    if cols[fp] not in FP_KINDS:
        return "42804", None
    k = parse_k(args[1])
    if k is None:
        return "22023", None
    action = args[2].lower()
    if action not in ("reject", "skip", "link"):
        return "22023", None
    scope, text, key_col, dist_col, npos, verify = None, [], None, None, 0, None
    for arg in args[3:]:
        if arg.startswith("scope="):
            if scope is not None:
                return "22023", None                  # an option given twice
            names = split_identifiers(arg[6:])
            if not names:
                return "22023", None
            scope = names
        elif arg.startswith("text="):
            if text:
                return "22023", None
            names = split_identifiers(arg[5:])
            if not names:
                return "22023", None
            for name in names:
                err = resolve(cols, name)
                if err:
                    return err, None
                if cols[name] not in TEXT_KINDS:
                    return "42804", None
            text = names
        elif arg.startswith("verify="):
            if verify is not None:
                return "22023", None                  # an option given twice
            verify = parse_verify(arg[7:])
            if verify is None:
                return "22023", None
        elif arg.startswith("link_key=") or arg.startswith("link_distance="):
            # one identifier, read as scope= and text= read theirs
            is_key = arg.startswith("link_key=")
            if (key_col if is_key else dist_col) is not None:
                return "22023", None
            names = split_identifiers(arg.split("=", 1)[1])
            if not names or len(names) != 1:
                return "22023", None
            if is_key:
                key_col = names[0]
            else:
                dist_col = names[0]
        elif "=" not in arg and action == "link" and npos < 2:
            # a positional link column: already an identifier, taken as it is
            if npos == 0:
                if key_col is not None:
                    return "22023", None
                key_col = arg
            else:
                if dist_col is not None:
                    return "22023", None
                dist_col = arg
            npos += 1
        else:
            return "22023", None
    if action != "link" and (key_col is not None or dist_col is not None):
        return "22023", None
    if k == "auto" and not text:
        return "22023", None
    if verify is not None and not text:
        return "22023", None                          # verify= compares the text= columns
    if text and k != "auto" and verify is None:
        return "22023", None                          # text= is for k 'auto' or verify=

    if action == "link":
        if key_col is None and dist_col is None:
            return "22023", None
        if key_col is not None:
            if len(pk) != 1:
                return "55000", None
            err = resolve(cols, key_col)
            if err:
                return err, None
            if cols[key_col] != cols[pk[0]]:
                return "42804", None
        if dist_col is not None:
            err = resolve(cols, dist_col)
            if err:
                return err, None
            if cols[dist_col] not in INT_KINDS:
                return "42804", None
    for name in scope or []:
        err = resolve(cols, name)
        if err:
            return err, None
        if cols[name] in NO_EQUALITY:
            return "42883", None
    # link columns must not overwrite the key, the fingerprint, a scope or
    # text column, or each other
    guarded = set(pk) | {fp} | set(scope or []) | set(text)
    if action == "link":
        if key_col is not None and key_col in guarded:
            return "22023", None
        if dist_col is not None and (dist_col in guarded or dist_col == key_col):
            return "22023", None
    if not index_ok:
        return "42704", None
    return None, NearDupConfig(k, action, scope or [], text, key_col, dist_col, verify)


def validate_fingerprint(args, cols):
    """(SQLSTATE of the first defect or None, (fp column, text columns) when valid)."""
    if len(args) < 2:
        return "22023", None
    err = resolve(cols, args[0])
    if err:
        return err, None
    if cols[args[0]] not in FP_KINDS - {"genfp"}:
        return ("428C9" if cols[args[0]] == "genfp" else "42804"), None
    for name in args[1:]:
        err = resolve(cols, name)
        if err:
            return err, None
        if cols[name] not in TEXT_KINDS:
            return "42804", None
    return None, (args[0], list(args[1:]))


def joined(row, cols):
    parts = [row.get(c) for c in cols if row.get(c) is not None]
    return "\n".join(parts) if parts else None


def fingerprint_of(row, cols):
    t = joined(row, cols)
    return None if t is None else ref.simhash(t)


class StatementError(Exception):
    def __init__(self, code):
        super().__init__(code)
        self.code = code


class Table:
    """A table with the triggers: rows (dicts), and what each statement does to them.

    fpt: (fp column, text columns) of the fingerprint trigger, or None;
    generated: text columns of a generated fingerprint (simhash(body)), or None;
    nd: NearDupConfig or None, nd_error: the SQLSTATE its firings raise instead;
    nd_events: the events the near-duplicate trigger fires on;
    part_of: id -> partition (None if not partitioned)."""

    def __init__(self, fpt=None, generated=None, nd=None, nd_error=None, pk=True, part_of=None,
                 nd_events=("INSERT", "UPDATE"), fp_col="fp"):
        self.fpt, self.generated, self.nd, self.nd_error = fpt, generated, nd, nd_error
        self.pk, self.part_of, self.nd_events, self.fp_col = pk, part_of, set(nd_events), fp_col
        self.fpt_events = {"INSERT", "UPDATE"}
        self.rows = []
        self.seq = 0
        self.saved_txn = None
        self.savepoint = None
        self.aborted = False

    # --- a row through the triggers
    def fingerprint(self, row, assigned=None):
        event = "INSERT" if assigned is None else "UPDATE"
        if self.fpt is not None and event in self.fpt_events:
            fcol, tcols = self.fpt
            if assigned is None or assigned & set(tcols + [fcol]):
                row[fcol] = fingerprint_of(row, tcols)
        if self.generated is not None:
            row[self.fp_col] = fingerprint_of(row, self.generated)

    def radius(self, row):
        nd = self.nd
        if nd.k != "auto":
            return nd.k
        t = joined(row, nd.text)
        return 0 if t is None else radius_of_weight(text_weight(t))

    def nearest(self, row, exclude):
        """(distance, key) of the nearest other row within k in scope, or None."""
        nd = self.nd
        fp = row.get(self.fp_col)
        scope = [row.get(c) for c in nd.scope]
        if fp is None or any(v is None for v in scope):
            return None
        k = self.radius(row)
        if nd.k == "auto" and k == 0:
            return None
        text = joined(row, nd.text) if nd.verify is not None else None
        best = None
        for r in self.rows:
            if r is exclude or r.get(self.fp_col) is None:
                continue
            if any(r.get(c) != v for c, v in zip(nd.scope, scope)):
                continue
            d = dist(fp, r[self.fp_col])
            if d > k or (best is not None and (d, r["id"]) >= best):
                continue
            if nd.verify is not None:
                # confirmed by the text: a NULL one on either side confirms nothing
                other = joined(r, nd.text)
                if text is None or other is None or ref.jaccard(text, other) < nd.verify:
                    continue
            best = (d, r["id"])
        return best

    def check(self, row, exclude, event):
        """The near-duplicate trigger on a row: True to store it, False to skip it."""
        if self.nd_error is not None:
            raise StatementError(self.nd_error)
        if self.nd is None:
            return True
        m = self.nearest(row, exclude)
        if self.nd.action == "reject":
            if m:
                raise StatementError("23P01")
            return True
        if self.nd.action == "skip":
            return m is None
        if self.nd.key_col:
            row[self.nd.key_col] = m[1] if m else None
        if self.nd.dist_col:
            row[self.nd.dist_col] = m[0] if m else None
        return True

    def key_ok(self, row, exclude):
        if not self.pk:
            return
        if row.get("id") is None:
            raise StatementError("23502")
        if any(r["id"] == row["id"] for r in self.rows if r is not exclude):
            raise StatementError("23505")

    def insert_one(self, row, conflict=None, touched=None):
        """One row of an INSERT (conflict: None, 'nothing' or a dict of SET columns from EXCLUDED)."""
        row = dict(row)
        self.fingerprint(row)
        if "INSERT" in self.nd_events and not self.check(row, None, "INSERT"):
            return None
        old = next((r for r in self.rows if r["id"] == row["id"]), None) if self.pk else None
        if conflict is not None and old is not None:
            if conflict == "nothing":
                return None
            if old["_seq"] in touched:
                raise StatementError("21000")
            new = self.update_one(old, {c: row.get(c) for c in conflict})
            # a BEFORE UPDATE trigger that skips the update (skip mode) leaves
            # the row unmodified, so a later row of the statement may still
            # update it: PostgreSQL raises 21000 only for a row it changed
            if new is not None:
                touched.add(old["_seq"])
            return new
        self.key_ok(row, None)
        self.seq += 1
        row["_seq"] = self.seq
        if touched is not None:
            touched.add(self.seq)
        self.rows.append(row)
        return row

    def update_one(self, old, sets):
        new = dict(old)
        new.update(sets)
        self.fingerprint(new, set(sets))
        fires = "UPDATE" in self.nd_events
        if fires and self.nd_error is not None:
            raise StatementError(self.nd_error)
        if fires and self.nd is not None:
            keeps = new.get(self.fp_col) == old.get(self.fp_col) and all(
                old.get(c) is not None and old.get(c) == new.get(c) for c in self.nd.scope)
            if self.nd.verify is not None:
                # with verify=, the text must be the same too
                keeps = keeps and joined(old, self.nd.text) == joined(new, self.nd.text)
            if not keeps and not self.check(new, old, "UPDATE"):
                return None
        i = self.rows.index(old)
        if self.part_of and self.part_of(new["id"]) != self.part_of(old["id"]):
            # the row moves: deleted here, inserted there (the INSERT triggers fire)
            del self.rows[i]
            self.fingerprint(new)
            if "INSERT" in self.nd_events and not self.check(new, None, "INSERT"):
                return None
            self.key_ok(new, None)
            self.rows.insert(i, new)
            return new
        self.key_ok(new, old)
        self.rows[i] = new
        return new

    # --- statements: atomic
    def statement(self, fn):
        """Run fn() as one statement: (SQLSTATE or None, its result)."""
        if self.aborted:
            return "25P02", None
        before = copy.deepcopy(self.rows), self.seq
        try:
            return None, fn()
        except StatementError as e:
            self.rows, self.seq = before
            if self.saved_txn is not None:
                self.aborted = True
            return e.code, None

    def insert(self, rows, conflict=None):
        def fn():
            touched = set()
            out = [self.insert_one(r, conflict, touched) for r in rows]
            return [r for r in out if r is not None]
        return self.statement(fn)

    def update(self, key, sets):
        def fn():
            old = next((r for r in self.rows if r["id"] == key), None)
            if old is None:
                return []
            new = self.update_one(old, sets)
            return [new] if new is not None else []
        return self.statement(fn)

    def delete(self, keys):
        def fn():
            gone = [r for r in self.rows if r["id"] in keys]
            self.rows = [r for r in self.rows if r["id"] not in keys]
            return gone
        return self.statement(fn)

    # --- transactions
    def begin(self):
        self.saved_txn = copy.deepcopy(self.rows), self.seq
        self.savepoint = None

    def set_savepoint(self):
        if not self.aborted:
            self.savepoint = copy.deepcopy(self.rows), self.seq

    def rollback_to(self):
        if self.savepoint is None:
            return "3B001"
        self.rows, self.seq = copy.deepcopy(self.savepoint)
        self.aborted = False
        return None

    def end(self, commit):
        if not commit or self.aborted:
            self.rows, self.seq = self.saved_txn
        self.saved_txn, self.savepoint, self.aborted = None, None, False
