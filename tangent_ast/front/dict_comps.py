"""A dict comprehension assigned to a name is the loop it stands for.

Takes the parsed function; guarantees that a statement ``d = {k: v for x in xs if c}``
(any number of ``for`` and ``if`` clauses) is ``d = {}`` followed by the loops that fill
it, ``for x in xs: if c: d[k] = v``, the comprehension's variables named apart from the
function's (a comprehension's variables are its own: the ``x`` after it is the function's).
Dicts filled by key are what the later stages follow (front/aliasing.py); a dict
comprehension anywhere else (inside an expression) is left for the checks to refuse.

>>> import numpy as np, tangent_ast as ta
>>> def f(x):
...     squares = {i: x[i] ** 2 for i in range(3) if i != 1}
...     return squares[0] + 2.0 * squares[2]
>>> ta.grad(f)(np.array([1.0, 2.0, 3.0]))
array([ 2.,  0., 12.])
"""

from dataclasses import replace

import gast

from ..vocabulary.syntax import located, name
from ..vocabulary.trees import copy_tree, walk

_BLOCKS = ("body", "orelse", "finalbody")


def write_out_dict_comprehensions(parsed):
    """``parsed`` with each ``d = {k: v for ...}`` written as its loops, or ``parsed``."""
    if not any(_written_out(s) for s in walk(parsed.node) if isinstance(s, gast.Assign)):
        return parsed
    node = copy_tree(parsed.node)
    taken = {n.id for n in walk(node) if isinstance(n, gast.Name)}
    _rewrite_blocks(node, taken)
    return replace(parsed, node=node)


def _written_out(s):
    return (
        len(s.targets) == 1
        and isinstance(s.targets[0], gast.Name)
        and isinstance(s.value, gast.DictComp)
        and not any(g.is_async for g in s.value.generators)
    )


def _rewrite_blocks(node, taken):
    for block in _BLOCKS:
        stmts = getattr(node, block, None)
        if not isinstance(stmts, list):
            continue
        out = []
        for s in stmts:
            _rewrite_blocks(s, taken)
            for handler in getattr(s, "handlers", ()):
                _rewrite_blocks(handler, taken)
            out += _loops(s, taken) if isinstance(s, gast.Assign) and _written_out(s) else [s]
        setattr(node, block, out)


def _loops(s, taken):
    """``d = {}`` and the loops filling it, for ``d = {k: v for ...}``."""
    target, comp = s.targets[0].id, s.value
    renames = {}
    for gen in comp.generators:
        for n in walk(gen.target):
            if isinstance(n, gast.Name):
                renames[n.id] = _fresh(n.id, taken)
    fill = gast.Assign(
        targets=[
            gast.Subscript(value=name(target), slice=_renamed(comp.key, renames), ctx=gast.Store())
        ],
        value=_renamed(comp.value, renames),
        type_comment=None,
    )
    body = [located(fill, s)]
    for position, gen in reversed(list(enumerate(comp.generators))):
        for cond in reversed(gen.ifs):
            body = [located(gast.If(test=_renamed(cond, renames), body=body, orelse=[]), s)]
        # the first iterable is evaluated in the function's scope, the others in the
        # comprehension's (they may read an earlier clause's variable)
        iterable = copy_tree(gen.iter) if position == 0 else _renamed(gen.iter, renames)
        loop = gast.For(
            target=_renamed(gen.target, renames, gast.Store()),
            iter=iterable,
            body=body,
            orelse=[],
            type_comment=None,
        )
        body = [located(loop, s)]
    empty = gast.Assign(
        targets=[name(target, gast.Store())],
        value=gast.Dict(keys=[], values=[]),
        type_comment=None,
    )
    return [located(empty, s), *body]


def _renamed(expr, renames, ctx=None):
    expr = copy_tree(expr)
    for n in walk(expr):
        if isinstance(n, gast.Name) and n.id in renames:
            n.id = renames[n.id]
            if ctx is not None:
                n.ctx = ctx
    return expr


def _fresh(base, taken):
    k = 1
    while f"{base}_{k}" in taken:
        k += 1
    taken.add(f"{base}_{k}")
    return f"{base}_{k}"
