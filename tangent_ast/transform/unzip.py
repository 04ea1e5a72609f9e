"""Stage unzip (the transpose route, as a view): primal statements first, linear after.

Takes the linearized function (the forward transform ``f_jvp``, before simplification) and
the names of its tangents; guarantees two functions: ``f_primal`` with every statement
that computes primal values, and ``f_linear`` with every statement that computes tangents,
each in the control flow it was in (a branch or loop holding both kinds is written in
both). A tangent statement's factors free of tangents (``1 - h ** 2``) are primal work:
they move to ``f_primal`` under a name of their own, so that ``f_linear`` only adds,
scales and applies linear operations to tangents. Transposing ``f_linear`` statement by
statement, last first, is the reverse sweep of the transpose route; the reverse stage
does that walk for both routes (its forward sweep is ``f_primal``, with what the walk
reads saved), so this stage is what a reader looks at, not a step the rule is built by.

>>> import numpy as np, tangent_ast as ta
>>> def f(x):
...     h = np.tanh(x)
...     return np.sum(h * x)
>>> print(ta.show(f, "reverse", stage="unzip", args=(np.ones(3),)))
def f_primal(x):
    h = np.tanh(x)
    dh_factor = 1 - h ** 2
    h_times_x = h * x
    out = np.sum(h_times_x)
    return out
<BLANKLINE>
def f_linear(dx):
    dh = dx * dh_factor
    dh_times_x = dh * x + h * dx
    dout = np.sum(dh_times_x)
    return dout
<BLANKLINE>
"""

import copy

import gast

from ..emit.emit import to_ast
from ..vocabulary.calling import positional
from ..vocabulary.syntax import name, unparse


def unzipped(jvp, tangents, namer):
    """The text of ``f_primal`` and ``f_linear`` of the linearized function ``jvp``."""
    tangents = set(tangents)
    primal_params = [a for a in jvp.args.args if a.id not in tangents]
    tangent_params = [a for a in jvp.args.args if a.id in tangents]
    primal, linear = _split(jvp.body, tangents, namer)
    outputs = _returned(jvp)
    primal_fn = _function(jvp, "primal", primal_params, primal, outputs[: len(outputs) // 2])
    linear_fn = _function(jvp, "linear", tangent_params, linear, outputs[len(outputs) // 2 :])
    return "\n".join(unparse(to_ast(f)) + "\n" for f in (primal_fn, linear_fn))


def _split(stmts, tangents, namer):
    primal, linear = [], []
    for s in stmts:
        if isinstance(s, gast.Return):
            continue
        if isinstance(s, (gast.If, gast.For, gast.While)):
            parts = [_split(block, tangents, namer) for block in _blocks(s)]
            for out, index in ((primal, 0), (linear, 1)):
                if any(p[index] for p in parts):
                    out.append(_with_blocks(s, [p[index] or [gast.Pass()] for p in parts]))
        elif _writes(s, tangents):
            factors = []
            linear.append(_hoist_factors(copy.deepcopy(s), tangents, namer, factors))
            primal.extend(factors)
        else:
            primal.append(s)
    return primal, linear


def _blocks(s):
    return [s.body, s.orelse]


def _with_blocks(s, blocks):
    new = copy.copy(s)
    new.body, new.orelse = blocks
    if len(new.orelse) == 1 and isinstance(new.orelse[0], gast.Pass):
        new.orelse = []
    return new


def _writes(s, tangents):
    return any(
        isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and n.id in tangents
        for n in gast.walk(s)
    )


def _reads(e, tangents):
    return any(isinstance(n, gast.Name) and n.id in tangents for n in gast.walk(e))


def _hoist_factors(stmt, tangents, namer, factors):
    """A tangent statement's sub-expressions free of tangents are computed by the primal
    part: each becomes ``<target>_factor = ...`` there and a name here."""
    target = stmt.targets[0] if isinstance(stmt, gast.Assign) else None
    base = target.id if isinstance(target, gast.Name) else "tangent"

    def visit(node):
        for field, value in gast.iter_fields(node):
            if field in ("func", "keywords", "ctx", "slice"):
                continue  # the callee, axis=0, an index stay where they are
            items = value if isinstance(value, list) else [value]
            new = [replaced(v) if isinstance(v, gast.expr) else v for v in items]
            setattr(node, field, new if isinstance(value, list) else new[0])

    def replaced(e):
        if _reads(e, tangents):
            visit(e)
            return e
        if isinstance(e, (gast.BinOp, gast.Call, gast.Subscript)) or (
            isinstance(e, gast.UnaryOp) and not isinstance(e.operand, gast.Constant)
        ):
            fresh = namer.fresh(f"{base}_factor")
            factors.append(
                gast.Assign(targets=[name(fresh, gast.Store())], value=e, type_comment=None)
            )
            return name(fresh)
        return e

    if isinstance(stmt, gast.Assign) and _reads(stmt.value, tangents):
        visit(stmt.value)
    return stmt


def _returned(fn):
    last = fn.body[-1]
    value = last.value if isinstance(last, gast.Return) else None
    if isinstance(value, gast.Tuple):
        return list(value.elts)
    return [value] if value is not None else []


def _function(jvp, suffix, params, body, outputs):
    base = jvp.name.rsplit("_", 1)[0]
    value = outputs[0] if len(outputs) == 1 else gast.Tuple(elts=outputs, ctx=gast.Load())
    return gast.FunctionDef(
        name=f"{base}_{suffix}",
        args=positional(copy.deepcopy(p) for p in params),
        body=(body or [gast.Pass()]) + [gast.Return(value=copy.deepcopy(value))],
        decorator_list=[],
        returns=None,
        type_comment=None,
        type_params=[],
    )
