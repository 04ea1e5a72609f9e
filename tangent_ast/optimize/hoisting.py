"""After a reverse rule is finished: what a reverse loop computes the same in every
iteration is computed once, before it.

Takes a reverse sweep; guarantees that a statement ``v = e`` at the top level of a ``for``
loop's body runs before the loop instead, and so does a term of such a statement (a whole
operand of two operations or more, ``ct_x = ct_x + 6.0 * ct_total * x``) as a name of its
own (``ct_x_term``), when

* ``e`` (or the term) is arithmetic (``+``, ``-``, ``*``, a unary minus) of names and
  numbers: nothing that could raise where the loop, running no iteration, would not have
  (a division, a power, a call, an index);
* no name it reads is assigned in the loop, nor updated in place (the loop's variable
  included): every iteration computes the same value;
* ``v`` is assigned nowhere else in the function, and the loop reads it only after the
  statement: before the loop it holds what every iteration gave it.

A loop inside a loop is emptied first, so a statement may leave both. Only whole
statements and whole operands move: a sum is never regrouped (``ct_r + (a + b)`` is not
``ct_r + a + b`` to the last bit). A cotangent that flows through a loop unchanged
(``ct_total`` of ``total = total + ...``) makes most such statements, which a hand-written
gradient computes once:

    for i in reversed(range(n)):                 ct_x_times_r = ct_total * r
        ct_x_times_r = ct_total * r       ->     for i in reversed(range(n)):
        ct_x = ct_x + ct_x_times_r * r               ct_x = ct_x + ct_x_times_r * r

>>> import tangent_ast as ta
>>> def f(x, r, n):
...     total = 0.0
...     for i in range(n):
...         total = total + x * r * r
...     return total
>>> print(ta.show(f, "reverse", wrt=(0, 1), args=(0.3, 1.2, 5)).split("\\n\\n\\n")[-1])
def f_bwd(saved, ct_total):
    x, r, n = saved
    ct_r = 0.0  # line 3
    ct_x = 0.0
    x_times_r = x * r  # line 4
    ct_x_times_r = ct_total * r
    for i in reversed(range(n)):  # line 3
        ct_r = ct_r + ct_total * x_times_r + ct_x_times_r * x  # line 4
        ct_x = ct_x + ct_x_times_r * r
    return ct_x, ct_r
<BLANKLINE>
"""

import gast

from ..vocabulary.syntax import stored_names, updated_arrays
from ..vocabulary.trees import walk

_ARITHMETIC = (gast.Add, gast.Sub, gast.Mult)


def hoist_invariants(fn, namer):
    """Move the loop-invariant statements and terms of ``fn``'s loops before them (in
    place); ``namer`` names the terms."""
    assigned = _assignment_counts(fn)
    _hoist_in(fn.body, assigned, namer)


def _hoist_in(block, assigned, namer):
    for st in list(block):
        for field in ("body", "orelse"):
            inner = getattr(st, field, None)
            if isinstance(inner, list):
                _hoist_in(inner, assigned, namer)
        if isinstance(st, gast.For):
            before = _invariants(st, assigned) + _invariant_terms(st, assigned, namer)
            if before:
                at = next(i for i, s in enumerate(block) if s is st)
                block[at:at] = before


def _invariants(loop, assigned):
    """Take the invariant statements out of ``loop``'s body; return them in order."""
    changed = stored_names(loop.body) | updated_arrays(loop.body) | _target_names(loop)
    taken = []
    read_so_far = set()
    for st in list(loop.body):
        if (
            isinstance(st, gast.Assign)
            and len(st.targets) == 1
            and isinstance(st.targets[0], gast.Name)
            and assigned.get(st.targets[0].id) == 1
            and st.targets[0].id not in read_so_far
            and _arithmetic(st.value)
            and not (_names(st.value) & changed)
        ):
            loop.body.remove(st)
            taken.append(st)
            continue
        read_so_far |= _names(st)
    if not loop.body:  # every statement moved: the loop still runs (its variable stays set)
        loop.body.append(gast.Pass())
    return taken


def _invariant_terms(loop, assigned, namer):
    """Take the invariant arithmetic inside the statements of ``loop``'s body (a whole operand,
    ``ct_x = ct_x + 6.0 * ct_total * x``) into names of their own, assigned before the loop:
    the same operations on the same values, so the same bits."""
    changed = stored_names(loop.body) | updated_arrays(loop.body) | _target_names(loop)
    taken = []
    for st in loop.body:
        if not isinstance(st, (gast.Assign, gast.AugAssign)):
            continue
        target = st.targets[0] if isinstance(st, gast.Assign) else st.target
        stem = target.id if isinstance(target, gast.Name) else "term"
        for holder, field, term in _terms(st, "value", changed):
            term_name = namer.fresh(f"{stem}_term")
            assigned[term_name] = 1
            hoisted = gast.Assign(
                targets=[gast.Name(term_name, gast.Store(), None, None)],
                value=term,
                type_comment=None,
            )
            gast.copy_location(hoisted, st)
            taken.append(hoisted)
            value = gast.Name(term_name, gast.Load(), None, None)
            if isinstance(getattr(holder, field), list):
                index = next(i for i, e in enumerate(getattr(holder, field)) if e is term)
                getattr(holder, field)[index] = value
            else:
                setattr(holder, field, value)
    return taken


def _terms(holder, field, changed):
    """The largest invariant operations under ``holder.field``: ``(holder, field, node)``."""
    node = getattr(holder, field)
    nodes = node if isinstance(node, list) else [node]
    for child in nodes:
        if not isinstance(child, gast.expr) or isinstance(child, gast.Lambda):
            continue
        if (
            isinstance(child, gast.BinOp)
            and _operations(child) >= 2  # one multiplication saved is not worth a name
            and _arithmetic(child)
            and not (_names(child) & changed)
            and _names(child)
        ):
            yield holder, field, child
            continue
        for inner_field, _ in gast.iter_fields(child):
            if inner_field != "ctx":
                yield from _terms(child, inner_field, changed)


def _operations(expr):
    return sum(isinstance(n, (gast.BinOp, gast.UnaryOp)) for n in walk(expr))


def _arithmetic(expr):
    if isinstance(expr, (gast.Name, gast.Constant)):
        return not isinstance(expr, gast.Constant) or isinstance(expr.value, (int, float))
    if isinstance(expr, gast.BinOp):
        return (
            isinstance(expr.op, _ARITHMETIC) and _arithmetic(expr.left) and _arithmetic(expr.right)
        )
    if isinstance(expr, gast.UnaryOp):
        return isinstance(expr.op, gast.USub) and _arithmetic(expr.operand)
    return False


def _names(node):
    return {n.id for n in walk(node) if isinstance(n, gast.Name)}


def _target_names(loop):
    return {n.id for n in walk(loop.target) if isinstance(n, gast.Name)}


def _assignment_counts(fn):
    """How many statements of ``fn`` bind each name (parameters and loop variables too)."""
    counts = {a.id: 1 for a in fn.args.args}
    for node in walk(fn):
        targets = []
        if isinstance(node, gast.Assign):
            targets = node.targets
        elif isinstance(node, (gast.AugAssign, gast.AnnAssign, gast.For)):
            targets = [node.target]
        for target in targets:
            for n in walk(target):
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                    counts[n.id] = counts.get(n.id, 0) + 1
    return counts
