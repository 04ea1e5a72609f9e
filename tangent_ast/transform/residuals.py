r"""Residuals: what the forward sweep hands the reverse sweep.

Takes a reverse rule's two sweeps after simplification; :func:`residuals_of` finds the
primal names the reverse sweep reads before it assigns them (its residuals, in the order
the forward sweep defines them), and :func:`pass_residuals` returns them from the forward
sweep with its result and unpacks them at the top of the reverse sweep (under the name
of the reverse sweep's copy of one, when it only copies it: ``h_2 = h_1`` before a reverse
loop that hands ``h_2`` down unpacks ``h_1`` as ``h_2``):

    def f_fwd(x):                    def f_fwd(x):
        y = np.sin(x)                    y = np.sin(x)
        return y              ->         return (y, (x,))
    def f_bwd(saved, ct_y):          def f_bwd(saved, ct_y):
        ct_x = ct_y * np.cos(x)          x, = saved
        return ct_x                      ct_x = ct_y * np.cos(x)
                                         return ct_x

>>> import gast
>>> fwd = gast.parse("def f_fwd(x):\n    y = x * x\n    return y").body[0]
>>> bwd = gast.parse("def f_bwd(saved, ct_y):\n    ct_x = 2 * ct_y * x\n    return ct_x")
>>> bwd = bwd.body[0]
>>> residuals_of(fwd, bwd, ["x"])
['x']
>>> pass_residuals(fwd, bwd, ["x"])
>>> from tangent_ast.vocabulary.syntax import unparse
>>> import ast
>>> print(unparse(ast.fix_missing_locations(gast.gast_to_ast(bwd))))
def f_bwd(saved, ct_y):
    x, = saved
    ct_x = 2 * ct_y * x
    return ct_x
"""

import gast

from ..vocabulary.syntax import name
from ..vocabulary.trees import walk
from .reverse import residuals_parameter


def residuals_of(fwd, bwd, params, copied=()):
    """Primal names the reverse sweep reads before it assigns them (a value restored
    from a tape inside a loop may also be read, as its final value, before the loop),
    in the order the forward sweep defines them."""
    ct_params = {a.id for a in bwd.args.args}
    read_first = set()
    _visit(bwd.body, set(), read_first)
    order = list(params)
    listed = set(order)  # what ``order`` holds, to look up
    for n in walk(fwd):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and n.id not in listed:
            order.append(n.id)
            listed.add(n.id)
    return [v for v in order if (v in read_first or v in copied) and v not in ct_params]


def _visit(stmts, assigned, read_first):
    assigned = set(assigned)  # this block's own: grown in place, statement by statement
    for s in stmts:
        own = [getattr(s, f) for f in ("value", "test", "iter") if getattr(s, f, None) is not None]
        targets = s.targets if isinstance(s, gast.Assign) else []
        if isinstance(s, gast.AugAssign):  # ``ct_x[m - i] += g``: reads its index too
            targets = [s.target]
        own += [t.slice for t in targets if isinstance(t, gast.Subscript)]
        own += [t.value for t in targets if isinstance(t, gast.Subscript)]
        for expr in own:
            read_first.update(
                n.id
                for n in walk(expr)
                if isinstance(n, gast.Name)
                and isinstance(n.ctx, gast.Load)
                and n.id not in assigned
            )
        if isinstance(s, gast.Assign):
            assigned |= {
                n.id
                for t in s.targets
                for n in walk(t)
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
            }
        for block in ("body", "orelse"):
            if isinstance(getattr(s, block, None), list):
                inner = assigned | (
                    {s.target.id} if isinstance(s, gast.For) and block == "body" else set()
                )
                _visit(getattr(s, block), inner, read_first)


def pass_residuals(fwd, bwd, residuals):
    """Return the residuals from the forward sweep and unpack them in the reverse sweep.

    A residual the reverse sweep reads only for its shape (``runtime.unbroadcast(g, r)``)
    is returned as ``runtime.only_shape(r)``: a large array is then not kept alive for the
    reverse sweep."""
    result = fwd.body[-1].value
    params = {a.id for a in fwd.args.args}
    unpacked = _unpacked_names(bwd, residuals)
    shapes = shape_only_reads(bwd)
    saved = gast.Tuple(
        elts=[
            _only_shape(r, shapes[unpacked[r]])
            if unpacked[r] in shapes and r not in params
            else name(r)
            for r in residuals
        ],
        ctx=gast.Load(),
    )
    ret = gast.Return(value=gast.Tuple(elts=[result, saved], ctx=gast.Load()))
    ret.lineno = getattr(fwd.body[-1], "lineno", None)
    fwd.body[-1] = ret
    _define_on_every_path(fwd.body, set(residuals), set(a.id for a in fwd.args.args))
    if residuals:
        unpack = gast.Assign(
            targets=[
                gast.Tuple(
                    elts=[name(unpacked[r], gast.Store()) for r in residuals], ctx=gast.Store()
                )
            ],
            value=name(residuals_parameter(bwd)),
            type_comment=None,
        )
        bwd.body.insert(0, unpack)


def _unpacked_names(bwd, residuals):
    """The name each residual is unpacked under: its own, or ``v`` where the reverse
    sweep copies it, at its top level, to a name ``v`` it has not used before
    (``h_2 = h_1``, the last value of a loop's carried state before the reverse loop
    hands it down) and reads it no more after the copy. The copy goes; reads before it
    are renamed."""
    unpacked = {r: r for r in residuals}
    while _unpack_a_copy(bwd, residuals, unpacked):
        pass
    return unpacked


def _unpack_a_copy(bwd, residuals, unpacked):
    """Rename one residual copied at the top level of ``bwd`` (see :func:`_unpacked_names`)."""
    for at, st in enumerate(bwd.body):
        if not (
            isinstance(st, gast.Assign)
            and isinstance(st.targets[0], gast.Name)
            and isinstance(st.value, gast.Name)
            and st.value.id in unpacked
            and unpacked[st.value.id] == st.value.id
        ):
            continue
        r, v = st.value.id, st.targets[0].id
        before, after = bwd.body[:at], bwd.body[at + 1 :]
        used_before = {n.id for s in before for n in gast.walk(s) if isinstance(n, gast.Name)}
        stored_before = {
            n.id
            for s in before
            for n in gast.walk(s)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
        }
        if v in used_before or v in residuals or r in stored_before or r in _read_first(after):
            continue
        for s in before:
            for n in gast.walk(s):
                if isinstance(n, gast.Name) and n.id == r:
                    n.id = v
        del bwd.body[at]
        unpacked[r] = v
        return True
    return False


def _read_first(stmts):
    """Names ``stmts`` may read before they assign them."""
    read_first = set()
    _visit(stmts, set(), read_first)
    return read_first


def _define_on_every_path(stmts, residuals, defined):
    """A residual defined in one branch only is set to None in the other (it is unused there),
    and one defined in a loop's body is set to None before the loop (which may not run)."""
    for s in list(stmts):
        if isinstance(s, (gast.For, gast.While)):
            inside = _define_on_every_path(s.body, residuals, set(defined))
            for r in sorted((inside - defined) & residuals):
                stmts.insert(
                    stmts.index(s),
                    gast.Assign(
                        targets=[name(r, gast.Store())],
                        value=gast.Constant(None, None),
                        type_comment=None,
                    ),
                )
            defined |= inside & residuals
        elif isinstance(s, gast.Assign):
            defined |= {n.id for n in gast.walk(s.targets[0]) if isinstance(n, gast.Name)}
        elif isinstance(s, gast.If):
            in_body = _define_on_every_path(s.body, residuals, set(defined))
            in_else = _define_on_every_path(s.orelse, residuals, set(defined))
            for missing, block in ((in_else - in_body, s.body), (in_body - in_else, s.orelse)):
                for r in sorted(missing & residuals):
                    block.append(
                        gast.Assign(
                            targets=[name(r, gast.Store())],
                            value=gast.Constant(None, None),
                            type_comment=None,
                        )
                    )
            defined |= in_body | in_else
    return defined


# helpers of the runtime that read only the shape (and dtype) of their argument at that
# position: ``unbroadcast(g, x)``, ``getitem_vjp(ct, x, index)``, ``sum_vjp(ct, x, ...)``
# runtime helper -> the position of the argument it reads only the shape of (a product's
# factor whose cotangent it gives: ``matmul_vjp_right(ct, x, w)`` is ``x.T @ ct`` shaped as w)
_SHAPE_READERS = {
    "unbroadcast": 1,
    "getitem_vjp": 1,
    "sum_vjp": 1,
    "matmul_vjp_left": 1,
    "matmul_vjp_right": 2,
    "dot_vjp_left": 1,
    "dot_vjp_right": 2,
}


_NUMPY_SHAPE_READERS = ("full_like", "zeros_like", "ones_like")  # their first argument


def shape_only_reads(bwd):
    """The names every read of which in ``bwd`` is for a shape: a runtime helper's shape
    argument, ``np.full_like(r, v)``, ``r.size``; each with the name the runtime module
    has in ``bwd`` (``runtime``). None if no call there names it."""
    shape_reads, reads, modules = {}, {}, set()
    for n in walk(bwd):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            reads[n.id] = reads.get(n.id, 0) + 1
        arg = None
        if isinstance(n, gast.Attribute) and n.attr in ("size", "shape", "ndim", "dtype"):
            arg = n.value
        elif (
            isinstance(n, gast.Call)
            and isinstance(n.func, gast.Attribute)
            and isinstance(n.func.value, gast.Name)
        ):
            if n.func.attr in _SHAPE_READERS and len(n.args) > _SHAPE_READERS[n.func.attr]:
                arg = n.args[_SHAPE_READERS[n.func.attr]]
                modules.add(n.func.value.id)
            elif n.func.value.id == "np" and n.func.attr in _NUMPY_SHAPE_READERS and n.args:
                arg = n.args[0]
        if isinstance(arg, gast.Name):
            shape_reads[arg.id] = shape_reads.get(arg.id, 0) + 1
    if len(modules) != 1:
        return {}
    module = modules.pop()
    return {r: module for r, count in shape_reads.items() if count == reads.get(r)}


def _only_shape(residual, module):
    return gast.Call(
        func=gast.Attribute(value=name(module), attr="only_shape", ctx=gast.Load()),
        args=[name(residual)],
        keywords=[],
    )
