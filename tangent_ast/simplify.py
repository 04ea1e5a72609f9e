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
import re

import gast
import numpy as np

from . import runtime
from .block_index import BlockIndex, Counts, Facts, clone
from .emit import to_ast
from .rules.registry import is_pure_function
from .syntax import unparse
from .trees import copy_tree, walk

MAX_LINE = 88


def _names_loaded(node):
    return _loads_among(walk(node))


def _loads_among(every):
    return [n for n in every if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)]


def _stores(every):
    """How often each name is written among the nodes ``every`` (``walk(tree)``): bound, or
    updated in place (``a[i] = v`` writes ``a``).

    Counting updates as writes is what keeps every rewrite here from moving a read
    of an array past an in-place update of it."""
    counts = {}
    for n in every:
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Param)):
            counts[n.id] = counts.get(n.id, 0) + 1
        elif isinstance(n, (gast.Assign, gast.AugAssign)):
            for t in n.targets if isinstance(n, gast.Assign) else [n.target]:
                if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name):
                    counts[t.value.id] = counts.get(t.value.id, 0) + 1
    return counts


def _name_assignments(every):
    """The ``name = ...`` statements among the nodes ``every``, in their order."""
    return [s for s in every if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)]


def _is_const(e, value=None):
    return (
        isinstance(e, gast.Constant)
        and isinstance(e.value, (int, float))
        and not isinstance(e.value, bool)
        and (value is None or e.value == value)
    )


class _Fold(gast.NodeTransformer):
    def __init__(self, namespace=None, same_shape=None, spreads=None):
        self.namespace = namespace
        self.same_shape = same_shape
        # names bound once to a spread scalar, ``ct = np.full_like(a, s)``: ``(a, s)``
        self.spreads = spreads or {}
        self.changed = False  # a visit returned another node: the expression was rewritten

    def visit(self, node):
        # every rewrite below returns a new node (or a child) in place of the one visited,
        # and changes no node in place
        new = super().visit(node)
        if new is not node:
            self.changed = True
        return new

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, gast.Mult) and self.same_shape is not None:
            node = self.unspread(node)
        if isinstance(node.op, gast.Mult):
            node = _merge_constant_factors(node)
        elif isinstance(node.op, (gast.Add, gast.Sub)):
            node = self.subtract_negation(node)
        left, right, op = node.left, node.right, node.op
        if _is_const(left) and _is_const(right) and isinstance(op, (gast.Add, gast.Sub, gast.Mult)):
            value = {
                gast.Add: lambda a, b: a + b,
                gast.Sub: lambda a, b: a - b,
                gast.Mult: lambda a, b: a * b,
            }[type(op)](left.value, right.value)
            return gast.Constant(value, None)
        if isinstance(op, gast.Pow) and _is_const(right, 1):
            return left
        if isinstance(op, gast.Mult) and _is_const(right, 1) and isinstance(right.value, int):
            return left
        if isinstance(op, gast.Mult) and _is_const(left, 1) and isinstance(left.value, int):
            return right
        if isinstance(op, gast.Div) and _is_const(right, 1) and isinstance(right.value, int):
            return left
        return node

    def subtract_negation(self, node):
        """``a + -b`` -> ``a - b``, ``a - -b`` -> ``a + b``, ``-a + b`` -> ``b - a``: one
        pass over an array instead of two (IEEE addition is commutative, and ``-``
        rounds as ``+`` of the negation does, so the value is the same to the bit)."""
        right = _strip_negation(node.right)
        if right is not None:
            op = gast.Sub() if isinstance(node.op, gast.Add) else gast.Add()
            return gast.BinOp(left=node.left, op=op, right=right)
        left = _strip_negation(node.left)
        if (
            left is not None
            and isinstance(node.op, gast.Add)
            and self.namespace is not None
            and is_pure(node.left, self.namespace)
            and is_pure(node.right, self.namespace)
        ):
            return gast.BinOp(left=node.right, op=gast.Sub(), right=left)
        return node

    def unspread(self, product):
        """``np.full_like(a, s) * b`` -> ``s * b`` when ``b`` has ``a``'s shape: the product
        broadcasts ``s`` to that shape anyway (also ``runtime.sum_vjp(s, a)``, the
        cotangent of a whole-array sum)."""
        factors = _factors(product)
        names = [f.id for f in factors if isinstance(f, gast.Name)]
        for i, f in enumerate(factors):
            spread = self.spread_of(f)
            like = next(
                (b for b in names if spread is not None and self.same_shape(spread[0], b)), None
            )
            value = None if like is None else _shape_reads_moved(spread[1], spread[0], like)
            if value is not None:
                factors[i : i + 1] = _factors(value)
                out = factors[0]
                for g in factors[1:]:
                    out = gast.BinOp(left=out, op=gast.Mult(), right=g)
                return out
        return product

    def spread_of(self, call):
        """``(a, s)`` for ``np.full_like(a, s)`` or ``runtime.sum_vjp(s, a)`` (or a name
        bound once to one), else None."""
        if isinstance(call, gast.Name):
            return self.spreads.get(call.id)
        if not (
            isinstance(call, gast.Call)
            and isinstance(call.func, gast.Attribute)
            and len(call.args) == 2
            and not call.keywords
            and isinstance(call.func.value, gast.Name)
        ):
            return None
        module = getattr(self.namespace.objects.get(call.func.value.id), "__name__", None)
        if (
            module == "numpy"
            and call.func.attr == "full_like"
            and isinstance(call.args[0], gast.Name)
        ):
            return call.args[0].id, call.args[1]
        if (
            module == "tangent_ast.runtime"
            and call.func.attr == "sum_vjp"
            and isinstance(call.args[1], gast.Name)
        ):
            return call.args[1].id, call.args[0]
        return None

    def visit_Call(self, node):
        self.generic_visit(node)
        # getattr(dp, 'W') reads as dp.W
        if (
            isinstance(node.func, gast.Name)
            and node.func.id == "getattr"
            and len(node.args) == 2
            and isinstance(node.args[1], gast.Constant)
            and isinstance(node.args[1].value, str)
            and node.args[1].value.isidentifier()
        ):
            return gast.Attribute(value=node.args[0], attr=node.args[1].value, ctx=gast.Load())
        return node

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, gast.USub):
            inner = _strip_negation(node.operand)
            if inner is not None:
                return inner  # -(-e) and -(-a * b / c) read as e and a * b / c
        return node


def _shape_reads_moved(expr, a, b):
    """``expr`` with ``a.size``/``a.shape``/``a.ndim`` read from ``b`` (of the same shape),
    or None if ``expr`` reads ``a`` otherwise (``ct / r_sq.size`` -> ``ct / r.size``)."""
    expr = copy_tree(expr)
    for n in gast.walk(expr):
        if (
            isinstance(n, gast.Attribute)
            and isinstance(n.value, gast.Name)
            and n.value.id == a
            and n.attr in ("size", "shape", "ndim")
        ):
            n.value = gast.Name(b, gast.Load(), None, None)
    if any(isinstance(n, gast.Name) and n.id == a for n in gast.walk(expr)):
        return None
    return expr


def _merge_constant_factors(product):
    """``a * 100.0 * 2 * b`` -> ``a * 200.0 * b``, ``-a * 2 * b`` -> ``a * -2 * b``: the
    number factors of a product multiplied into one, where the first of them was, and a
    negated factor's sign moved into it, so an array is multiplied once, not once per
    number. Products of ints only are merged while the result stays small (an int8 array
    times 300 is an error that ``x * 20 * 15`` is not)."""
    factors = _factors(product)
    numbers = [i for i, f in enumerate(factors) if _is_const(f)]
    if not numbers:
        return product
    negated = [i for i, f in enumerate(factors) if _negation(f) is not None]
    if len(numbers) + len(negated) < 2:
        return product
    value = 1
    for i in numbers:
        value *= factors[i].value
    value *= (-1) ** len(negated)
    if isinstance(value, int) and abs(value) > 127:
        return product
    merged = []
    for i, f in enumerate(factors):
        if i == numbers[0]:
            merged.append(gast.Constant(value, None))
        elif i in negated:
            merged.extend(_factors(_negation(f)))  # -(a * b) * 2 -> a * b * -2
        elif i not in numbers:
            merged.append(f)
    if len(merged) == 1:
        return merged[0]
    out = merged[0]
    for g in merged[1:]:
        out = gast.BinOp(left=out, op=gast.Mult(), right=g)
    return out


def _negation(e):
    """``a`` for ``-a``, else None."""
    if isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.USub):
        return e.operand
    return None


def _factors(e):
    """The factors of a product ``a * b * c``, left to right."""
    if isinstance(e, gast.BinOp) and isinstance(e.op, gast.Mult):
        return _factors(e.left) + _factors(e.right)
    return [e]


def _strip_negation(e):
    """``e`` without its leading minus (``-a`` or ``-a * b / c``), or None if it has none."""
    if isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.USub):
        return e.operand
    if isinstance(e, gast.BinOp) and isinstance(e.op, (gast.Mult, gast.Div)):
        left = _strip_negation(e.left)
        if left is not None:
            return gast.BinOp(left=left, op=e.op, right=e.right)
    return None


def is_pure(expr, namespace):
    """True if evaluating ``expr`` later, again, or not at all cannot change what it
    computes or does: every call in it is one the rule table marks pure
    (``registry.is_pure_function``). A call of anything else (``np.random.random()``,
    ``rng.normal()``, a user function, ``print``) keeps its place and runs once."""
    return all(_pure_call(n, namespace) for n in gast.walk(expr) if isinstance(n, gast.Call))


def _pure_call(call, namespace):
    chain, root = [], call.func
    while isinstance(root, gast.Attribute):
        chain.append(root.attr)
        root = root.value
    if not isinstance(root, gast.Name):
        return False
    obj = namespace.objects.get(root.id, _LOCAL)
    if obj is _LOCAL:
        # A method of a local value (x.sum(), x.reshape(...)): pure if it is an array
        # method the table marks pure; a generator's rng.normal() is not one.
        return len(chain) == 1 and is_pure_function(getattr(np.ndarray, chain[0], None))
    for attr in reversed(chain):
        obj = getattr(obj, attr, None)
    if getattr(obj, "__module__", "").startswith(runtime.__name__ + "."):
        return obj not in runtime.EFFECTFUL  # the rules' own helpers
    return is_pure_function(obj)


_LOCAL = object()

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

    def run(self):
        for _ in range(50):
            self.changed = False
            self.spreads = self._spreads()
            self.fn.body = self.fold(self.fn.body)
            self.coalesce_block(self.fn.body)
            self.propagate_copies()
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
        every = walk(self.fn)  # walked once, read four times
        stores = _stores(every)
        loads = _load_counts(every)
        assignments = _name_assignments(every)
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
        body, self.fn.body = self.fn.body, []
        head = Facts(self.fn)
        self.fn.body = body
        counts = Counts(head.loads, head.stores)
        for f in facts:
            counts.add(f, 1)
        return counts

    def _body_facts(self, stmts, counts):
        """``(counts, facts of stmts)``: the function's counts, and the facts its body's
        index starts from, when ``stmts`` is the body (``counts`` None); else ``counts``."""
        if counts is not None:
            return counts, None
        facts = [Facts(s) for s in stmts]
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
        index = BlockIndex(stmts, counts, facts)
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
        index = BlockIndex(stmts, counts, facts)
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
                folding = _Fold(self.namespace, self.same_shape, self.spreads)
                s.value = folding.visit(s.value)
                self.changed |= folding.changed
            elif isinstance(s, gast.If):
                s.body = self.fold(s.body)
                s.orelse = self.fold(s.orelse)
            elif isinstance(s, (gast.For, gast.While)):
                s.body = self.fold(s.body)
            out.append(s)
        return out

    def propagate_copies(self):
        every = walk(self.fn)
        stores = _stores(every)
        copies = {}
        for s in _name_assignments(every):
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

        for n in _loads_among(every):
            source = resolve(n.id)
            if source != n.id:
                n.id = source
                self.changed = True
        self.dropped = False
        self.fn.body = self._drop(
            self.fn.body,
            lambda s: (
                isinstance(s, gast.Assign)
                and isinstance(s.targets[0], gast.Name)
                and s.targets[0].id in copies
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
                if s.orelse and [gast.dump(x) for x in s.body] == [gast.dump(x) for x in s.orelse]:
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
        index = BlockIndex(stmts, counts, facts)
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
        if isinstance(later, gast.For) and target not in index.facts[use].body_loads:
            later = later.iter  # evaluated once, before the loop
        elif not isinstance(later, (gast.Assign, gast.Expr)):
            return False
        candidate = _Replace(target, value).visit(clone(later))
        if line_length(candidate) > MAX_LINE and line_length(value) > 28:
            return False  # one operation per line reads better than a long one
        _Replace(target, value).visit(later)
        index.update(j)
        return True

    def remove_dead(self):
        """Drop what nothing reads, until nothing more goes."""
        while True:
            used = {n.id for n in _names_loaded(self.fn)}
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


def _load_counts(every):
    counts = {}
    for n in _loads_among(every):
        counts[n.id] = counts.get(n.id, 0) + 1
    return counts


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
            and stem != fn.name
        ):
            renames[versions.pop()] = stem
    for n in every:
        if n.id in renames:
            n.id = renames[n.id]


def line_length(node):
    """Length of ``node`` printed as one line of a function body."""
    return len(unparse(to_ast(node))) + 4  # to_ast makes a copy: node is left as it is


class _Replace(gast.NodeTransformer):
    def __init__(self, target, value):
        self.target = target
        self.value = value

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and node.id == self.target:
            return clone(self.value)
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
