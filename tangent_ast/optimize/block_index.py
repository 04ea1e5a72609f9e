"""Which statements of a block read and write which names: an index for simplify.

simplify's rewrites ask, for one statement, questions about the statements after it
("where is ``t`` read next?", "is ``b`` written before then?"). Answering them by
walking the statements in between makes a pass quadratic in the length of the function
(a temporary of the reverse sweep is often read only at its end, where the cotangents
of the arguments are summed). ``BlockIndex`` answers them from sorted lists of
statement keys per name, kept current as statements are rewritten or removed, and
``Counts`` keeps the whole function's read and write counts current the same way, so
that no pass walks the whole function after each rewrite.

>>> import gast
>>> block = gast.parse("t = x * 2\\ny = x + 1\\nz = t + y").body
>>> index = BlockIndex(block)
>>> index.first_after(index.loaded, "t", index.keys[0]) == index.keys[2]
True
>>> index.first_after(index.stored, "x", index.keys[0]) is None
True
"""

from bisect import bisect_left, bisect_right, insort

import gast

from ..vocabulary.trees import walk

_AST = gast.AST


def clone(tree):
    """A copy of ``tree``, made faster than by ``copy.deepcopy``: every node is new (a
    node ``tree`` holds twice is copied twice), the values nodes hold (a constant's
    number or string, a name) are shared, as they are immutable."""
    if isinstance(tree, list):
        return [clone(v) for v in tree]
    if not isinstance(tree, _AST):
        return tree
    new = tree.__class__.__new__(tree.__class__)
    new.__dict__.update({k: clone(v) for k, v in tree.__dict__.items()})
    return new


class Facts:
    """What one statement (its nested blocks included) reads and writes. A loop's or a
    branch's are its header's and those of the statements of its blocks, from ``known``
    (the facts of a simple statement are kept there): renewing a loop does not walk every
    statement nested in it again."""

    __slots__ = ("assigned", "body_loads", "copy_names", "loads", "names", "stores")

    def __init__(self, stmt, known=None):
        self.loads: dict[str, int] = {}  # names read, how often
        # names written, how often: bound, or updated in place (``a[i] = v`` writes ``a``)
        self.stores: dict[str, int] = {}
        self.names: set[str] = set()  # every name, in any context
        self.body_loads: set[str] = set()  # a loop's body reads these
        if known is not None and type(stmt) in _COMPOUND:
            self._compound(stmt, known)
        else:
            self._walk(walk(stmt))
            if isinstance(stmt, (gast.For, gast.While)):
                self.body_loads = {
                    n.id
                    for b in stmt.body
                    for n in walk(b)
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
                }
        simple = isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)
        self.assigned = {stmt.targets[0].id} if simple else set()  # ``name = ...``
        # ``a = b``: both names, for the rewrites of copies
        self.copy_names = {stmt.targets[0].id, stmt.value.id} if _is_copy(stmt) else set()

    def _walk(self, nodes):
        for n in nodes:
            if isinstance(n, gast.Name):
                self.names.add(n.id)
                if isinstance(n.ctx, gast.Load):
                    self.loads[n.id] = self.loads.get(n.id, 0) + 1
                elif isinstance(n.ctx, (gast.Store, gast.Param)):
                    self.stores[n.id] = self.stores.get(n.id, 0) + 1
            elif isinstance(n, (gast.Assign, gast.AugAssign)):
                for t in n.targets if isinstance(n, gast.Assign) else [n.target]:
                    if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name):
                        self.stores[t.value.id] = self.stores.get(t.value.id, 0) + 1

    def _compound(self, stmt, known):
        """A loop's or a branch's facts: its header's, then its blocks' statements'."""
        for field in _COMPOUND[type(stmt)]:
            self._walk(walk(getattr(stmt, field)))
        for block in ("body", "orelse"):
            for inner in getattr(stmt, block):
                facts = known.of(inner)
                self._add(facts)
                if block == "body" and isinstance(stmt, (gast.For, gast.While)):
                    self.body_loads.update(facts.loads)

    def _add(self, facts):
        self.names |= facts.names
        for mine, theirs in ((self.loads, facts.loads), (self.stores, facts.stores)):
            for name, count in theirs.items():
                mine[name] = mine.get(name, 0) + count


# statements holding blocks, and their fields that are not blocks (the header)
_COMPOUND = {gast.If: ("test",), gast.For: ("target", "iter"), gast.While: ("test",)}


def _is_copy(stmt):
    return (
        isinstance(stmt, gast.Assign)
        and isinstance(stmt.targets[0], gast.Name)
        and isinstance(stmt.value, gast.Name)
    )


class Counts:
    """How often each name is read (``loads``) and written (``stores``) in a whole function,
    kept current by the ``BlockIndex`` of every block that changes."""

    def __init__(self, loads, stores):
        self.loads = loads
        self.stores = stores

    def add(self, facts, sign):
        for table, changes in ((self.loads, facts.loads), (self.stores, facts.stores)):
            for name, count in changes.items():
                total = table.get(name, 0) + sign * count
                if total:
                    table[name] = total
                else:
                    table.pop(name, None)


# statements that hold no block of statements: their facts are theirs alone
SIMPLE = (gast.Assign, gast.AugAssign, gast.Expr, gast.Return, gast.Pass)


class KnownFacts:
    """The facts of simple statements (not a loop or branch), kept from one pass of simplify
    to the next while the statements are unchanged, so that a pass that indexes a block
    computes only those of the statements rewritten since.

    Whoever rewrites a statement says so: ``renew`` (its facts as it is now), ``forget`` (a
    statement), ``forget_names`` (every statement holding one of the names: a renaming, in
    whatever statements it reached). A statement is kept with its facts, so that its id is
    not taken by another while it is known. ``enabled=False``: nothing is kept."""

    def __init__(self, enabled=True):
        self.enabled = enabled
        self.by_id: dict[int, tuple] = {}  # id of a statement -> (it, its facts)
        # name -> ids of statements that held it when their facts were kept (some since
        # forgotten or renewed: forgetting one of those again only costs a recomputation)
        self.by_name: dict[str, set] = {}
        # ids of known statements simplify's fold left as they were: folding one again
        # changes nothing while it is unchanged and so are the spreads fold reads
        self.folded: set[int] = set()

    def of(self, stmt):
        known = self.by_id.get(id(stmt))
        if known is not None and known[0] is stmt:
            return known[1]
        return self.renew(stmt)

    def renew(self, stmt):
        self.folded.discard(id(stmt))
        facts = Facts(stmt, self if self.enabled else None)
        if self.enabled and isinstance(stmt, SIMPLE):
            self.by_id[id(stmt)] = (stmt, facts)
            for name in facts.names:
                self.by_name.setdefault(name, set()).add(id(stmt))
        return facts

    def forget(self, stmt):
        self.by_id.pop(id(stmt), None)
        self.folded.discard(id(stmt))

    def forget_names(self, names):
        for name in names:
            for key in self.by_name.pop(name, ()):
                self.by_id.pop(key, None)
                self.folded.discard(key)

    def mark_folded(self, stmt):
        """``stmt`` folded to itself (a simple statement is then known)."""
        self.of(stmt)
        if id(stmt) in self.by_id:
            self.folded.add(id(stmt))

    def is_folded(self, stmt):
        return id(stmt) in self.folded and self.by_id[id(stmt)][0] is stmt


# the per-name tables of a BlockIndex, and the Facts field each one is built from
_TABLES = (
    ("loaded", "loads"),
    ("stored", "stores"),
    ("named", "names"),
    ("assigned", "assigned"),
    ("copies", "copy_names"),
    ("body_loaded", "body_loads"),
)


class BlockIndex:
    """Facts of the statements of one block, and for each name the sorted keys of the
    statements that read it, write it, ...

    A statement's key is its position when the index was built: statements are only
    removed (``delete``) or rewritten in place (``update``), never inserted, so keys keep
    the order of the statements."""

    def __init__(self, stmts, counts=None, facts=None, known=None):
        self.stmts = stmts
        self.counts = counts
        self.known = known if known is not None else KnownFacts(enabled=False)
        self.keys = list(range(len(stmts)))
        # by key; ``facts``: those of ``stmts`` as they are, known already
        self.facts = [self.known.of(s) for s in stmts] if facts is None else facts
        for table, field in _TABLES:
            keys_of = {}
            setattr(self, table, keys_of)
            for key, facts in enumerate(self.facts):  # keys ascending: each list stays sorted
                for name in getattr(facts, field):
                    keys_of.setdefault(name, []).append(key)

    def _enter(self, key, facts):
        for table, field in _TABLES:
            keys_of = getattr(self, table)
            for name in getattr(facts, field):
                insort(keys_of.setdefault(name, []), key)

    def _leave(self, key, facts):
        for table, field in _TABLES:
            keys_of = getattr(self, table)
            for name in getattr(facts, field):
                keys = keys_of[name]
                del keys[bisect_left(keys, key)]

    def position(self, key):
        return bisect_left(self.keys, key)

    def facts_at(self, position):
        return self.facts[self.keys[position]]

    def update(self, position):
        """The statement at ``position`` was rewritten: record what it reads and writes now."""
        key = self.keys[position]
        old, new = self.facts[key], self.known.renew(self.stmts[position])
        self._leave(key, old)
        self._enter(key, new)
        self.facts[key] = new
        if self.counts is not None:
            self.counts.add(old, -1)
            self.counts.add(new, 1)

    def delete(self, position):
        key = self.keys[position]
        self._leave(key, self.facts[key])
        if self.counts is not None:
            self.counts.add(self.facts[key], -1)
        del self.stmts[position]
        del self.keys[position]

    @staticmethod
    def first_after(table, name, key):
        """The first key after ``key`` in ``table`` (``index.loaded``, ...) for ``name``."""
        keys = table.get(name, ())
        i = bisect_right(keys, key)
        return keys[i] if i < len(keys) else None

    @staticmethod
    def between(table, name, low, high):
        """The keys ``k`` of ``table`` for ``name`` with ``low <= k < high``."""
        keys = table.get(name, ())
        return keys[bisect_left(keys, low) : bisect_left(keys, high)]
