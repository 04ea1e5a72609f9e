"""Cotangents of slices of one array: added into one buffer, in place.

Takes a finished reverse sweep (simplified, its residuals passed) and the kinds of the
function's values. Where an array is read through several items or basic slices, the
reverse stage writes the cotangent of each read as ``runtime.getitem_vjp(ct, x, index)``,
a zero array of ``x``'s shape holding ``ct`` at ``index``, and adds them up: one new
array of ``x``'s shape per read, and one per sum. Written by hand, the first is the
buffer and the others are added into their part of it:

    ct_x = runtime.getitem_vjp(ct_tail, x, slice(1, None, None))
    ct_x_1 = ct_x + runtime.getitem_vjp(ct_head, x, slice(None, -1, None))
->
    ct_x_1 = runtime.getitem_vjp(ct_tail, x, slice(1, None, None))
    ct_x_1[:-1] += ct_head

and a later term of the same cotangent is added into the whole buffer (``ct_x += ...``).

The rewrite is made only where it computes the same numbers:

* ``x`` is a real float array (its cotangents are real: adding them into the buffer in
  place needs no wider dtype), and every term is a cotangent of a part of that same ``x``;
* each index added in place is basic (``slice(...)`` of ints or ``None``, an int, a tuple
  of those): a part of the buffer is a view, each element at most once (an array of
  indices may repeat one, which ``+=`` would add once: those keep ``getitem_vjp``, which
  adds them with ``np.add.at``);
* the buffer is read by nothing but the next sum, all in one block, and the sum's name is
  neither read nor assigned between the first term and the last (no other name sees the
  buffer change);
* the buffer has ``x``'s shape and a float dtype at least float64 (``getitem_vjp``'s), so a
  term of ``x``'s cotangent, of ``x``'s shape or broadcast to it, adds in place exactly as
  it adds into a new array.

A buffer of a batch of cotangents (``jacrev``) is a batch too: ``getitem_vjp`` makes its
zeros like the cotangent, and a batch is updated in place part by part.

>>> import numpy as np, tangent_ast as ta
>>> def f(x):
...     return np.sum(x[1:] * x[:-1])
>>> print(ta.show(f, mode="reverse", stage="module", args=(np.ones(4),)).split("def f_bwd")[1])
(saved, ct_out):
    x, = saved
    ct_x = runtime.getitem_vjp(ct_out * x[1:], x, slice(None, -1, None))  # line 2
    ct_x[1:] += ct_out * x[:-1]
    return ct_x
<BLANKLINE>
"""

import builtins

import gast
import numpy as np

from .. import runtime
from ..vocabulary.kinds import UNKNOWN, Tag
from ..vocabulary.trees import walk


def accumulate_slices(fn, kinds, namespace):
    """Rewrite, in ``fn``, each sum of cotangents of parts of one array into updates of
    one buffer (see the module's docstring); ``kinds`` are the primal values' kinds,
    ``namespace`` what the module's names are bound to."""
    reads, writes = _counts(fn)
    finder = _Terms(kinds, namespace, set(writes))
    for block in _blocks(fn):
        i = 0
        while i < len(block):
            chain = _chain(block, i, finder, reads, writes)
            if chain:
                _rewrite(block, i, chain)
            i += 1


def _chain(block, start, finder, reads, writes):
    """The sums that can be added into the buffer made at ``block[start]``:
    ``[(position, name, (ct, index)), ...]``, empty if none."""
    term = _assigned_term(block[start], finder)
    if term is None:
        return []
    current, (_, x, _) = term
    chain, position = [], start
    while True:
        found = _next_sum(block, position, current, x, finder)
        if found is None:
            break
        new = found[1]
        # a new name takes over the buffer only if nothing else reads the old one
        if new != current and not (
            reads.get(current) == 1 and writes.get(current) == 1 and writes.get(new) == 1
        ):
            break
        position, current = found[0], new
        chain.append(found)
    if not chain:
        return []
    at_chain = {start} | {p for p, _, _ in chain}
    between = [block[p] for p in range(start, position + 1) if p not in at_chain]
    if any(_mentions(s, current) for s in between):
        return []
    return chain


def _next_sum(block, after, current, x, finder):
    """The first statement after ``after`` that mentions ``current``, if it is
    ``new = current + runtime.getitem_vjp(ct, x, index)`` with a basic index."""
    for position in range(after + 1, len(block)):
        s = block[position]
        if not _mentions(s, current):
            continue
        if not (_single_target(s) and isinstance(s.value, gast.BinOp)):
            return None
        if not isinstance(s.value.op, gast.Add) or _mentions(s.value, current) != 1:
            return None
        left, right = s.value.left, s.value.right
        other = right if _is_name(left, current) else left if _is_name(right, current) else None
        if other is None:
            return None
        parts = finder.getitem_vjp(other)
        if parts is None:  # another term of x's cotangent: of x's shape, or broadcast to it
            return position, s.targets[0].id, (other, None)
        if not _is_name(parts[1], x.id) or not finder.basic(parts[2]):
            return None
        return position, s.targets[0].id, (parts[0], parts[2])
    return None


def _mentions(node, id_):
    """How many times ``node`` reads or assigns the name ``id_``."""
    return sum(isinstance(n, gast.Name) and n.id == id_ for n in walk(node))


def _rewrite(block, start, chain):
    """The buffer made at ``block[start]`` under the last sum's name, each sum an update."""
    last = chain[-1][1]
    block[start].targets[0].id = last
    for position, _, (ct, index) in chain:
        target = (
            gast.Name(id=last, ctx=gast.Store(), annotation=None, type_comment=None)
            if index is None
            else gast.Subscript(
                value=gast.Name(id=last, ctx=gast.Load(), annotation=None, type_comment=None),
                slice=_subscript(index),
                ctx=gast.Store(),
            )
        )
        update = gast.AugAssign(target=target, op=gast.Add(), value=ct)
        block[position] = gast.copy_location(update, block[position])


def _subscript(index):
    """``slice(1, None, None)`` -> ``1:``; a tuple part by part; anything else as it is."""
    if isinstance(index, gast.Tuple):
        return gast.Tuple(elts=[_subscript(e) for e in index.elts], ctx=gast.Load())
    if isinstance(index, gast.Call):
        bounds = [None if _is_none(a) else a for a in index.args] + [None] * 3
        return gast.Slice(lower=bounds[0], upper=bounds[1], step=bounds[2])
    return index


class _Terms:
    """Reads ``runtime.getitem_vjp(ct, x, index)`` calls and their indices."""

    def __init__(self, kinds, namespace, local_names):
        self.kinds = kinds
        self.namespace = namespace
        self.local_names = local_names

    def resolve(self, func):
        chain = []
        while isinstance(func, gast.Attribute):
            chain.append(func.attr)
            func = func.value
        if not isinstance(func, gast.Name) or func.id in self.local_names:
            return None
        obj = self.namespace.objects.get(func.id, getattr(builtins, func.id, None))
        for attr in reversed(chain):
            obj = getattr(obj, attr, None)
        return obj

    def getitem_vjp(self, expr):
        """``(ct, x, index)`` of a ``runtime.getitem_vjp`` call of a real float array."""
        if not isinstance(expr, gast.Call) or expr.keywords or len(expr.args) != 3:
            return None
        if self.resolve(expr.func) is not runtime.getitem_vjp:
            return None
        ct, x, index = expr.args
        kind = self.kinds.get(x.id, UNKNOWN) if isinstance(x, gast.Name) else UNKNOWN
        if kind.tag is not Tag.ARRAY or kind.dtype != "f":
            return None
        return ct, x, index

    def basic(self, index):
        """An index whose parts each pick every element at most once, as views."""
        if isinstance(index, gast.Tuple):
            return bool(index.elts) and all(self._basic_part(e) for e in index.elts)
        return self._basic_part(index)

    def _basic_part(self, part):
        if isinstance(part, gast.Call):
            return (
                self.resolve(part.func) is slice
                and not part.keywords
                and 1 <= len(part.args) <= 3
                and all(_is_none(a) or self._int(a) for a in part.args)
            )
        return self._int(part)

    def _int(self, expr):
        if isinstance(expr, gast.UnaryOp) and isinstance(expr.op, gast.USub):
            expr = expr.operand
        if isinstance(expr, gast.Constant):
            return type(expr.value) is int
        if isinstance(expr, gast.Name):
            return self.kinds.get(expr.id, UNKNOWN).tag is Tag.INT
        return False


def _assigned_term(s, finder):
    """``(buffer name, (ct, x, index))`` of ``buffer = runtime.getitem_vjp(ct, x, index)``."""
    if not _single_target(s):
        return None
    parts = finder.getitem_vjp(s.value)
    return (s.targets[0].id, parts) if parts is not None else None


def _single_target(s):
    return (
        isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
    )


def _is_name(expr, id_):
    return isinstance(expr, gast.Name) and expr.id == id_


def _is_none(expr):
    return isinstance(expr, gast.Constant) and expr.value is None


def _counts(fn):
    reads, writes = {}, {}
    for n in walk(fn):
        if isinstance(n, gast.Name):
            counts = writes if isinstance(n.ctx, gast.Store) else reads
            counts[n.id] = counts.get(n.id, 0) + 1
    return reads, writes


def _blocks(fn):
    """Every statement list of ``fn``, its body first."""
    stack = [fn.body]
    while stack:
        block = stack.pop()
        yield block
        for s in block:
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(s, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                    stack.append(inner)


def fold_zero_starts(fn, kinds, namespace):
    """``ct_x = np.zeros_like(x)``, then a loop adding into a buffer made as
    ``ct_x_buffer = np.zeros_like(x)``, then ``ct_x = ct_x + ct_x_buffer``: the loop adds
    into ``ct_x`` itself, as zeros plus the buffer is the buffer."""
    reads, writes = _counts(fn)
    finder = _Terms(kinds, namespace, set(writes))
    for block in _blocks(fn):
        at = 0
        while at < len(block):
            if not _fold_zero_start(fn, block, at, finder, reads, writes):
                at += 1


def _fold_zero_start(fn, block, start, finder, reads, writes):
    """Fold the zeros assigned at ``block[start]`` (see :func:`fold_zero_starts`)."""
    zeros = _assigned_zeros(block[start], finder)
    if zeros is None:
        return False
    total, x = zeros
    # the first statement after the zeros that mentions them: total + buffer, of the two once
    sum_at = next((p for p in range(start + 1, len(block)) if _mentions(block[p], total)), None)
    if sum_at is None or not _single_target(block[sum_at]):
        return False
    new, value = block[sum_at].targets[0].id, block[sum_at].value
    if not (isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add)):
        return False
    buffer = _other_operand(value, total)
    if buffer is None or _mentions(value, total) != 1 or _mentions(value, buffer) != 1:
        return False
    buffer_at = next(
        (p for p in range(start + 1, sum_at) if _assigned_zeros(block[p], finder) == (buffer, x)),
        None,
    )
    # every mention of the buffer is between its zeros and the sum: it becomes ``new``
    region = block[buffer_at:sum_at] if buffer_at is not None else []
    if buffer_at is None or sum(_mentions(s, buffer) for s in region) + 1 != _mentions(fn, buffer):
        return False
    if new != total and (
        reads.get(total) != 1
        or writes.get(total) != 1
        or writes.get(new) != 1
        or any(_mentions(block[p], new) for p in range(start, sum_at))
    ):
        return False
    for s in region:
        for n in walk(s):
            if isinstance(n, gast.Name) and n.id == buffer:
                n.id = new
    if getattr(block[start], "lineno", None) is not None:
        block[buffer_at].lineno = block[start].lineno
    del block[sum_at]
    del block[start]
    return True


def _assigned_zeros(s, finder):
    """``(name, x)`` of ``name = np.zeros_like(x)``."""
    if not (_single_target(s) and isinstance(s.value, gast.Call)):
        return None
    call = s.value
    if call.keywords or len(call.args) != 1 or not isinstance(call.args[0], gast.Name):
        return None
    if finder.resolve(call.func) is not np.zeros_like:
        return None
    return s.targets[0].id, call.args[0].id


def _other_operand(value, id_):
    """The name added to ``id_`` in ``value``, a sum of two names."""
    left, right = value.left, value.right
    other = right if _is_name(left, id_) else left if _is_name(right, id_) else None
    return other.id if isinstance(other, gast.Name) else None
