"""Stage simplify: make generated code read as if written by hand.

Takes a generated FunctionDef and the set of names it may rewrite freely
(temporaries, tangents, cotangents); guarantees the same function with

* constants folded and trivial arithmetic gone (``x ** 1``, ``1 * e``, ``2 - 1``,
  ``np.full_like(a, s) * b`` with ``b`` shaped like ``a``);
* copies propagated (``ct_z = ct_out`` disappears, its uses read ``ct_out``);
* temporaries used once inlined where they are used
  (``s = np.sin(x); out = z + s`` becomes ``out = z + np.sin(x)``);
* dead assignments removed, empty branches dropped.

It never changes the user's own statements beyond inlining temporaries into
them, and never moves a computation into or out of a branch.

>>> import numpy as np, tangent_ast as ta
>>> def f(x, y):
...     z = x * y
...     return z + np.sin(x)
>>> print(ta.show(f, mode="reverse", stage="simplify", wrt=("x", "y"), args=(1.5, 2.0)))
def f_fwd(x, y):
    z = x * y
    out = z + np.sin(x)
    return (out, (x, y))
<BLANKLINE>
def f_bwd(saved, ct_out):
    x, y = saved
    ct_x = ct_out * np.cos(x) + ct_out * y
    ct_y = ct_out * x
    return (ct_x, ct_y)
<BLANKLINE>
"""

import builtins
import keyword
import re

import gast

from ..vocabulary.trees import Transformer, dump, same, unshare, walk
from .block_index import SIMPLE, BlockIndex, Counts, Facts, KnownFacts, clone
from .folding import _Fold, is_pure
from .line_lengths import longer_than

MAX_LINE = 88


def _names_loaded(node):
    return _loads_among(walk(node))


def _loads_among(every):
    return [n for n in every if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)]


def _name_assignments(every):
    """The ``name = ...`` statements among the nodes ``every``, in their order."""
    return [s for s in every if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)]


# nodes that hold nothing a rewrite changes: one may be shared by several expressions
_SHAREABLE = (gast.expr_context, gast.operator, gast.unaryop, gast.cmpop, gast.boolop)

# what a spread scalar may be made of to be read again at each use (``-ct / a.size``)
_CHEAP = (
    gast.Name,
    gast.Constant,
    gast.Attribute,
    gast.BinOp,
    gast.UnaryOp,
    gast.expr_context,
    gast.operator,
    gast.unaryop,
)


class Simplifier:
    def __init__(self, fn, rewritable, namespace, keep=(), origin=None, same_shape=None):
        self.fn = fn
        self.same_shape = same_shape
        self.rewritable = rewritable
        self.keep = set(keep)
        self.origin = origin or {}
        self.namespace = namespace
        self.dropped = False  # set by _drop when it changes the code
        # set by every rewrite: a round that leaves it unset changed nothing, so the next
        # round would change nothing either (printing the function before and after each
        # round to compare them cost as much as a pass)
        self.changed = False
        self.spreads = {}
        self.known = KnownFacts(enabled=False)
        self.folded_with = {}  # the spreads (printed) of the statements fold left alone

    def run(self):
        # A stage may put one expression node in two statements (the transpose route
        # does): renaming a read in one would rename it in the other. Each gets its own.
        unshare(self.fn, (gast.stmt, *_SHAREABLE))
        # facts kept across passes are those of statements that share no node with another
        # (a rewrite of one would change the other unseen): a statement held twice is kept
        every = [id(n) for n in walk(self.fn) if not isinstance(n, _SHAREABLE)]
        self.known = KnownFacts(enabled=len(set(every)) == len(every))
        for _ in range(50):
            self.changed = False
            self.spreads = self._spreads()
            spreads = {k: (a, dump(v)) for k, (a, v) in self.spreads.items()}
            if spreads != self.folded_with:  # fold reads them: what it left may fold now
                self.known.folded.clear()
                self.folded_with = spreads
            self.fn.body = self.fold(self.fn.body)
            self.coalesce_block(self.fn.body)
            self.propagate_copies()
            self.propagate_constants()
            self.propagate_local_block(self.fn.body)
            self.inline_block(self.fn.body)
            self.remove_dead()
            if not self.changed:
                break
        return self.fn

    def _spreads(self):
        """Names bound once to a scalar spread over an array (``ct = np.full_like(a, s)``,
        the cotangent of ``np.sum(a)``) whose ``a`` and ``s`` nothing rebinds: ``(a, s)``
        for each. A product of one with an array of ``a``'s shape reads ``s`` instead,
        so the spread array is never made when every use is such a product."""
        if self.same_shape is None:
            return {}
        stores, loads, assignments = self._whole()
        assigned = {s.targets[0].id for s in assignments}
        probe = _Fold(self.namespace)
        spreads = {}
        for s in assignments:
            if not (s.targets[0].id in self.rewritable and stores.get(s.targets[0].id) == 1):
                continue
            spread = probe.spread_of(s.value)
            if (
                spread is not None
                and stores.get(spread[0], 0) <= 1
                and all(stores.get(n.id, 0) <= 1 for n in _names_loaded(spread[1]))
                # a temporary the spread reads is inlined first: its factors then join
                # the product's (2 * a * b * r, not 2 * (a * b) * r)
                and not any(
                    n.id in self.rewritable and n.id in assigned and loads.get(n.id) == 1
                    for n in _names_loaded(spread[1])
                )
                and all(isinstance(n, _CHEAP) for n in gast.walk(spread[1]))
            ):
                spreads[s.targets[0].id] = spread
        return spreads

    def _same_variable(self, a, b):
        return b in self.rewritable or (self.origin.get(a, a) == self.origin.get(b, b))

    def _counts(self, facts):
        """The function's read and write counts: its parameters' and those of the ``facts``
        of its statements, so that a pass that indexes the body walks it once."""
        head = self._header_facts()
        counts = Counts(head.loads, head.stores)
        for f in facts:
            counts.add(f, 1)
        return counts

    def _header_facts(self):
        """Facts of the function without its body: its parameters, their defaults."""
        body, self.fn.body = self.fn.body, []
        try:
            return Facts(self.fn)
        finally:
            self.fn.body = body

    def _loaded(self):
        """Every name the function reads (as ``_names_loaded``), from the kept facts."""
        used = set(self._header_facts().loads)
        for s in self.fn.body:
            used.update(self.known.of(s).loads)
        return used

    def _whole(self):
        """``(stores, loads, assignments)`` of the whole function: how often each name is
        written (bound, or updated in place: ``a[i] = v`` writes ``a``, which keeps every
        rewrite here from moving a read of an array past an update of it) and read, and its
        ``name = ...`` statements; from the kept facts of its statements (only a loop or a
        branch is walked)."""
        head = self._header_facts()
        counts = Counts(dict(head.loads), dict(head.stores))
        assignments = []
        for s in self.fn.body:
            counts.add(self.known.of(s), 1)
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
                assignments.append(s)
            elif not isinstance(s, SIMPLE):  # statements inside: found by walking it
                assignments += _name_assignments(walk(s))
        return counts.stores, counts.loads, assignments

    def _loads_of(self, names):
        """The reads of ``names`` in the function (``Name`` nodes), among others: those of
        its parameters' defaults, of its loops and branches, of its simple statements
        whose kept facts read one of ``names``."""
        body, self.fn.body = self.fn.body, []
        try:
            found = _loads_among(walk(self.fn))
        finally:
            self.fn.body = body
        for s in body:
            if not isinstance(s, SIMPLE) or names.keys() & self.known.of(s).loads.keys():
                found += _loads_among(walk(s))
        return found

    def _body_facts(self, stmts, counts):
        """``(counts, facts of stmts)``: the function's counts, and the facts its body's
        index starts from, when ``stmts`` is the body (``counts`` None); else ``counts``."""
        if counts is not None:
            return counts, None
        facts = [self.known.of(s) for s in stmts]
        return self._counts(facts), facts

    def _nested(self, stmts, rewrite, counts, facts):
        """``rewrite`` each block nested in ``stmts``; ``facts`` of ``stmts`` if still true
        after that (nothing changed), else None."""
        changed, self.changed = self.changed, False
        for s in stmts:
            for block in _blocks(s):
                rewrite(block, counts)
        current = facts if not self.changed else None
        self.changed |= changed
        return current

    def coalesce_block(self, stmts, counts=None):
        """``b = e; ...; a = b`` with ``b`` used nowhere else -> ``a = e; ...``.

        This undoes SSA where it only added copies: loop headers and branch
        joins read as the user wrote them (``s = s + x``)."""
        counts, facts = self._body_facts(stmts, counts)
        facts = self._nested(stmts, self.coalesce_block, counts, facts)
        index = BlockIndex(stmts, counts, facts, self.known)
        p = 0
        while p < len(stmts):
            copy_stmt = stmts[p]
            if not (_is_copy(copy_stmt) and copy_stmt.targets[0].id != copy_stmt.value.id):
                p += 1
                continue
            a, b = copy_stmt.targets[0].id, copy_stmt.value.id
            if counts.stores.get(b) != 1 or not self._same_variable(a, b):
                p += 1
                continue
            k_p = index.keys[p]
            k_q = index.first_after(index.assigned, b, -1)  # the block's first ``b = ...``
            if (
                k_q is None
                or k_q >= k_p
                or index.between(index.named, a, k_q + 1, k_p)
                # b is read only between its definition and the copy (the copy included)
                or _reads(index, b, k_q + 1, k_p + 1) != counts.loads.get(b, 0)
            ):
                p += 1
                continue
            self.known.forget_names({b})
            for k in index.between(index.named, b, k_q, k_p):
                for n in walk(stmts[index.position(k)]):
                    if isinstance(n, gast.Name) and n.id == b:
                        n.id = a
                index.update(index.position(k))
            index.delete(p)
            self.changed = True
            # What decides whether a copy goes changed only for the copies that now read or
            # write ``a`` (``b`` is gone): if one comes before ``p``, go back to it, as
            # scanning the block again from its start would.
            first = index.first_after(index.copies, a, -1)
            if first is not None and first < k_p:
                p = index.position(first)

    def propagate_local_block(self, stmts, counts=None):
        """``a = b`` (``a`` assigned once) -> uses of ``a`` read ``b`` while ``b`` is unchanged."""
        counts, facts = self._body_facts(stmts, counts)
        facts = self._nested(stmts, self.propagate_local_block, counts, facts)
        # the counts before this block's rewrites decide which copies go
        stores, loads = dict(counts.stores), dict(counts.loads)
        index = BlockIndex(stmts, counts, facts, self.known)
        p = 0
        while p < len(stmts):
            s = stmts[p]
            if (
                _is_copy(s)
                and s.targets[0].id in self.rewritable
                and stores.get(s.targets[0].id) == 1
            ):
                a, b = s.targets[0].id, s.value.id
                replaced = 0
                key = index.keys[p]
                # of the statements after the copy, those that read a or write b act
                while replaced != loads.get(a, 0):
                    found = [
                        k
                        for k in (
                            index.first_after(index.loaded, a, key),
                            index.first_after(index.stored, b, key),
                        )
                        if k is not None
                    ]
                    if not found:
                        break
                    key = min(found)
                    q = index.position(key)
                    later = stmts[q]
                    here = [n for n in _names_loaded(later) if n.id == a]
                    stores_b = b in index.facts[key].stores
                    if here and (not stores_b or isinstance(later, gast.Assign)):
                        self.known.forget_names({a})
                        for n in here:
                            n.id = b
                        replaced += len(here)
                        index.update(q)
                        self.changed = True
                    elif here:
                        break
                    if stores_b:  # later statements read the new b
                        break
                if replaced == loads.get(a, 0):  # every read renamed: the copy goes
                    index.delete(p)
                    self.changed = True
                    continue
            p += 1

    def fold(self, stmts):
        out = []
        for s in stmts:
            if (
                isinstance(s, gast.Assign)
                and isinstance(s.targets[0], gast.Name)
                and s.targets[0].id in self.rewritable
            ):
                if self.known.is_folded(s):
                    out.append(s)
                    continue
                folding = _Fold(self.namespace, self.same_shape, self.spreads)
                s.value = folding.visit(s.value)
                if folding.changed:
                    self.changed = True
                    self.known.forget(s)
                else:
                    self.known.mark_folded(s)
            elif isinstance(s, gast.If):
                s.body = self.fold(s.body)
                s.orelse = self.fold(s.orelse)
            elif isinstance(s, (gast.For, gast.While)):
                s.body = self.fold(s.body)
            out.append(s)
        return out

    def propagate_copies(self):
        stores, _, assignments = self._whole()
        copies = {}
        for s in assignments:
            if isinstance(s.value, gast.Name):
                target, source = s.targets[0].id, s.value.id
                if (
                    target in self.rewritable
                    and stores.get(target) == 1
                    and stores.get(source, 0) <= 1
                ):
                    copies[target] = source
        if not copies:
            return

        def resolve(n):
            seen = set()
            while n in copies and n not in seen:
                seen.add(n)
                n = copies[n]
            return n

        renamed = set()
        for n in self._loads_of(copies):
            source = resolve(n.id)
            if source != n.id:
                renamed.add(n.id)
                n.id = source
        self.known.forget_names(renamed)
        self.changed |= bool(renamed)
        self._drop_assignments(copies)

    def propagate_constants(self):
        """``t = 2.0`` (``t`` a temporary assigned once) -> its reads are ``2.0``: a number
        is written where it is used, as a person writes it (and folding then merges it into
        the product it multiplies)."""
        stores, _, assignments = self._whole()
        constants = {
            s.targets[0].id: s.value
            for s in assignments
            if isinstance(s.targets[0], gast.Name)
            and isinstance(s.value, gast.Constant)
            and type(s.value.value) in (int, float)
            and s.targets[0].id in self.rewritable
            and s.targets[0].id not in self.keep
            and stores.get(s.targets[0].id) == 1
        }
        if not constants:
            return
        _Substitute(constants).visit(self.fn)
        self.known.forget_names(set(constants))
        self._drop_assignments(constants)
        self.changed = True

    def _drop_assignments(self, names):
        """Remove the assignments of ``names`` (their reads are rewritten)."""
        self.dropped = False
        self.fn.body = self._drop(
            self.fn.body,
            lambda s: (
                isinstance(s, gast.Assign)
                and isinstance(s.targets[0], gast.Name)
                and s.targets[0].id in names
            ),
        )
        self.changed |= self.dropped

    def _drop(self, stmts, predicate):
        """``stmts`` without those ``predicate`` marks (nor ``a = a``), branches emptied
        and loops idle. Sets ``self.dropped`` when that changes anything: then the code
        differs, which ``remove_dead`` and a round tell from that instead of printing it."""
        out = []
        for s in stmts:
            if predicate(s) or (_is_copy(s) and s.targets[0].id == s.value.id):
                self.dropped = True
                continue
            if isinstance(s, gast.If):
                s.body = self._drop(s.body, predicate)
                s.orelse = self._drop(s.orelse, predicate)
                if not s.body and not s.orelse:
                    self.dropped = True
                    continue
                if not s.body:
                    s.test = gast.UnaryOp(op=gast.Not(), operand=s.test)
                    s.body, s.orelse = s.orelse, []
                    self.dropped = True
                if s.orelse and same(s.body, s.orelse):
                    out.extend(s.body)  # both branches do the same
                    self.dropped = True
                    continue
            elif isinstance(s, (gast.For, gast.While)):
                body = self._drop(s.body, predicate)
                s.body = [b for b in body if not isinstance(b, gast.Pass)]
                if not s.body and self._idle_loop(s):
                    self.dropped = True
                    continue
                if not s.body:
                    s.body = [gast.Pass()]
                if len(s.body) != len(body):  # a pass went (not the one a body had alone)
                    self.dropped = True
            out.append(s)
        return out

    def _idle_loop(self, loop):
        """A ``for`` over a range with nothing left in its body, whose variable nothing reads:
        it does nothing (the reverse sweep of a loop that has no cotangent to carry)."""
        ranges = (
            isinstance(loop, gast.For)
            and isinstance(loop.target, gast.Name)
            and all(
                not isinstance(n, gast.Call)
                or (isinstance(n.func, gast.Name) and n.func.id in ("range", "reversed"))
                for n in gast.walk(loop.iter)
            )
        )
        return ranges and loop.target.id not in {n.id for n in _names_loaded(self.fn)}

    def inline_block(self, stmts, counts=None):
        counts, facts = self._body_facts(stmts, counts)
        index = BlockIndex(stmts, counts, facts, self.known)
        i = 0
        while i < len(stmts):
            s = stmts[i]
            if isinstance(s, gast.If):
                self.inline_block(s.body, counts)
                self.inline_block(s.orelse, counts)
            elif isinstance(s, (gast.For, gast.While)):
                self.inline_block(s.body, counts)
            elif self._inlinable(s, counts.loads, counts.stores):
                target = s.targets[0].id
                if self._inline_into(index, i, target, s.value):
                    index.delete(i)
                    self.changed = True
                    continue
            i += 1

    def _inlinable(self, s, uses, stores):
        if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)):
            return False
        target = s.targets[0].id
        return (
            target in self.rewritable
            and target not in self.keep
            and uses.get(target) == 1
            and stores.get(target) == 1
            and is_pure(s.value, self.namespace)
        )

    def _inline_into(self, index, i, target, value):
        """Put ``value`` in place of ``target`` in the first statement after the ``i``-th
        that reads it; False if none does, or one before it changes what ``value`` reads."""
        key = index.keys[i]
        use = index.first_after(index.loaded, target, key)
        if use is None:
            return False
        for d in {n.id for n in _names_loaded(value)}:
            # A reverse loop restores the values of the primal names it reads, iteration by
            # iteration (tapes are installed after this pass): an expression reading one of
            # them must be evaluated before the loop, not moved past it.
            for table in (index.stored, index.body_loaded):
                first = index.first_after(table, d, key)
                if first is not None and first < use:
                    return False
        j = index.position(use)
        later = index.stmts[j]
        loop = None
        if isinstance(later, gast.For) and target not in index.facts[use].body_loads:
            loop, later = later, later.iter  # evaluated once, before the loop
        elif isinstance(later, gast.AugAssign):
            # into what is added (``ct_x[i] += ct``) or the index, never the array updated
            base = later.target.value if isinstance(later.target, gast.Subscript) else None
            if base is not None and any(_is_read(n, target) for n in walk(base)):
                return False
        elif not isinstance(later, (gast.Assign, gast.Expr)):
            return False
        if _longer_replaced(later, target, value, MAX_LINE) and longer_than(value, 28):
            return False  # one operation per line reads better than a long one
        replaced = _Replace(target, value).visit(later)
        if loop is not None:
            loop.iter = replaced  # the iterable may be the name itself (for v in target)
        index.update(j)
        return True

    def remove_dead(self):
        """Drop what nothing reads, until nothing more goes."""
        while True:
            used = self._loaded()
            dead = lambda s, used=used: (
                isinstance(s, gast.Assign)
                and isinstance(s.targets[0], gast.Name)
                and s.targets[0].id not in used
                and is_pure(s.value, self.namespace)
            )
            self.dropped = False
            self.fn.body = self._drop(self.fn.body, dead)
            if not self.dropped:  # the function is as it was: nothing more is dead
                return
            self.changed = True


def _blocks(stmt):
    if isinstance(stmt, gast.If):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, (gast.For, gast.While)):
        return [stmt.body]
    return []


def _is_copy(stmt):
    return (
        isinstance(stmt, gast.Assign)
        and isinstance(stmt.targets[0], gast.Name)
        and isinstance(stmt.value, gast.Name)
    )


def restore_names(fn, forbidden, kept=frozenset()):
    """``y_2`` -> ``y`` when it is the only version of ``y`` left in ``fn``
    (never for ``kept`` names: parameters like ``args_0`` and their (co)tangents).

    Run last, on a finished function: it must not see names shared with another
    function (residuals are passed positionally, so each function is on its own)."""

    every = [n for n in walk(fn) if isinstance(n, gast.Name)]
    names = {n.id for n in every}
    stems = {}
    for n in names:
        stem = re.sub(r"_\d+$", "", n)
        stems.setdefault(stem, set()).add(n)
    renames = {}
    for stem, versions in stems.items():
        if (
            len(versions) == 1
            and stem not in names
            and stem not in forbidden
            and not versions <= kept
            and not hasattr(builtins, stem)
            and not keyword.iskeyword(stem)  # (del_1, the tangent of el_1, stays)
            and stem != fn.name
        ):
            renames[versions.pop()] = stem
    for n in every:
        if n.id in renames:
            n.id = renames[n.id]


def _longer_replaced(node, target, value, limit):
    """``longer_than(_Replace(target, value).visit(clone(node)), limit)`` without the copy:
    each read of ``target`` in ``node`` is swapped for ``value`` while ``node`` is weighed,
    then put back."""
    if _is_read(node, target):
        return longer_than(value, limit)
    slots = []  # (list or node, index or field) of each read
    for parent in walk(node):
        for field in parent._fields:
            held = getattr(parent, field, None)
            if isinstance(held, list):
                slots += [(held, k) for k, item in enumerate(held) if _is_read(item, target)]
            elif _is_read(held, target):
                slots.append((parent, field))
    reads = [_slot(place, key) for place, key in slots]
    try:
        for place, key in slots:
            _put(place, key, value)
        return longer_than(node, limit)
    finally:
        for (place, key), read in zip(slots, reads, strict=True):
            _put(place, key, read)


def _is_read(node, name):
    return isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and node.id == name


def _slot(place, key):
    return place[key] if isinstance(place, list) else getattr(place, key)


def _put(place, key, node):
    if isinstance(place, list):
        place[key] = node
    else:
        setattr(place, key, node)


class _Replace(Transformer):
    def __init__(self, target, value):
        self.target = target
        self.value = value

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and node.id == self.target:
            return clone(self.value)
        return node


class _Substitute(Transformer):
    """Reads of the names of ``values`` replaced by (copies of) their values."""

    def __init__(self, values):
        self.values = values

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and node.id in self.values:
            return clone(self.values[node.id])
        return node


def simplify(fn, rewritable, namespace, keep=(), origin=None, same_shape=None):
    """Simplify ``fn`` in place. Names in ``rewritable`` may be propagated, inlined
    or removed; names in ``keep`` (tangents of the user's variables) are never
    inlined, so the derivative code mirrors the user's statements.
    ``same_shape(a, b)``: are the values named ``a`` and ``b`` (float) arrays of one shape."""
    return Simplifier(fn, rewritable, namespace, keep, origin, same_shape).run()


def _reads(index, name, low, high):
    """How often the statements of ``index`` with keys in ``[low, high)`` read ``name``."""
    return sum(index.facts[k].loads[name] for k in index.between(index.loaded, name, low, high))
