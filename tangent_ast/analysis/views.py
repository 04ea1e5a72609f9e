"""Views: which names may share an array's memory, by NumPy's rules, and what the stages do
about a view of an array that is updated in place.

``v = a[1:]``, ``v = a.T``, ``v = a.reshape(...)``, ``v = np.transpose(a)`` make ``v`` a view
of ``a``: an update of ``a`` changes ``v``. Whether an index gives a view, an element or a
copy follows :mod:`tangent_ast.analysis.indexing`. Runs on the SSA function, kinds known:

* ``check_views`` refuses reading a view after its base is updated in place (Python's
  view sees the new values, a derived rule's the values it had when it was taken);
* ``copy_views`` copies a view taken of an array that is updated later, so the derivative
  sees the values the primal saw when it read the view.

>>> import numpy as np, tangent_ast as ta
>>> def f(x):
...     a = x * 2.0
...     head = a[:2]
...     a[0] = 5.0
...     return np.sum(head)
>>> ta.grad(f)(np.ones(3))
Traceback (most recent call last):
...
tangent_ast.errors.UnsupportedSyntaxError: <doctest ...>:5: reading 'head', a view of 'a', after
'a' is updated in place (line 4) is not supported
  hint: take a copy (a[...].copy()) or read a again after the update
"""

import gast
import numpy as np

from ..front.checks import unsupported
from ..vocabulary.kinds import UNKNOWN, Tag
from ..vocabulary.syntax import assign, located, name
from .indexing import Indexing, indexing

VIEW_ATTRIBUTES = {"T", "mT", "real", "imag"}


_VIEW_METHODS = {"reshape", "ravel", "view", "transpose", "swapaxes", "squeeze", "diagonal"}


_VIEW_FUNCTIONS = (
    "flip",
    "fliplr",
    "flipud",
    "rot90",
    "rollaxis",
    "reshape",
    "ravel",
    "transpose",
    "squeeze",
    "expand_dims",
    "moveaxis",
    "swapaxes",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "broadcast_to",
    "diagonal",
    "asarray",
    "asanyarray",
    "real",
    "imag",
    "ascontiguousarray",
    "asfortranarray",
    "asarray_chkfinite",
    "require",
    "trim_zeros",
    "diag",
    "real_if_close",
    "matrix_transpose",
    "permute_dims",
)

# np.linalg's functions returning a view of their argument
_LINALG_VIEW_FUNCTIONS = ("diagonal", "matrix_transpose")


def _returns_view(obj, call):
    """Whether a call of the NumPy function ``obj`` may return a view of its first array
    argument: one of the functions above, ``np.einsum`` of one operand (``"ii->i"``, a
    transpose), or any call declining a copy (``np.array(x, copy=False)``, ``copy=None``,
    ``x.astype(t, copy=False)``: ``x`` itself when no copy is needed)."""
    if any(obj is getattr(np, f, None) for f in _VIEW_FUNCTIONS):
        return True
    if any(obj is getattr(np.linalg, f, None) for f in _LINALG_VIEW_FUNCTIONS):
        return True
    return obj is np.einsum or _declines_copy(call)


def _declines_copy(call):
    return any(
        k.arg == "copy" and not (isinstance(k.value, gast.Constant) and k.value.value is True)
        for k in call.keywords
    )


def view_base(value, updated, scope, kinds=None):
    """``a`` when ``value`` may be a view of ``a``, an array in ``updated`` (None: any):
    a slice, ``a.T``, ``a.reshape(...)``, ``np.transpose(a)``, ... With ``kinds``, an
    index that gives an element or a copy by NumPy's rules (:mod:`tangent_ast.analysis.indexing`)
    is no view; without, every index may give one."""
    base = None
    if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name):
        if kinds is None or _may_view(value, kinds):
            base = value.value.id
    elif isinstance(value, gast.Attribute) and isinstance(value.value, gast.Name):
        if value.attr in VIEW_ATTRIBUTES:
            base = value.value.id
    elif isinstance(value, gast.Call):
        func = value.func
        if (
            isinstance(func, gast.Attribute)
            and isinstance(func.value, gast.Name)
            and (func.attr in _VIEW_METHODS or _declines_copy(value))
            and scope.is_local(func.value.id)
        ):
            base = func.value.id
        elif value.args and _returns_view(scope.lookup(func), value):
            # np.einsum("ii->i", a): the operand after the subscripts (of several: no view)
            einsum = scope.lookup(func) is np.einsum
            arrays = value.args[1:] if einsum else value.args[:1]
            if len(arrays) == 1 and isinstance(arrays[0], gast.Name):
                base = arrays[0].id
    return base if updated is None or base in updated else None


def _may_view(subscript, kinds):
    """May ``a[index]`` share ``a``'s memory (a view, or not known)? ``a`` of a kind
    other than an array (a list, a tuple, ...) holds its items by reference: it may."""
    kind = kinds.get(subscript.value.id)
    if kind is None or kind.tag is not Tag.ARRAY:
        return True
    return indexing(subscript.slice, kind.ndim, kinds.get) in (Indexing.VIEW, Indexing.UNKNOWN)


def program_order(stmts, loops=()):
    """The statements of ``stmts``, nested ones included, in program order, each
    with the loops around it."""
    order = []
    for s in stmts:
        order.append((s, loops))
        if isinstance(s, (gast.For, gast.While)):
            order += program_order(s.body, loops + (id(s),))
        elif isinstance(s, gast.If):
            order += program_order(s.body, loops) + program_order(s.orelse, loops)
    return order


def may_precede(position, first, first_loops, then, then_loops):
    """May ``first`` run before ``then``: earlier in the text, or both in a loop
    (an iteration runs ``then`` after the previous one ran ``first``)."""
    return position[id(first)] < position[id(then)] or bool(set(first_loops) & set(then_loops))


def views_read_after(update, update_loops, same, assigns, order, position, scope, kinds):
    """A view of the array named ``same`` (``v = a[1:]``, ``v = a.T``) taken before
    ``update`` and read after it, or None: Python's view sees the update."""
    for d, d_loops in assigns:
        if d.targets[0].id in same or not may_precede(position, d, d_loops, update, update_loops):
            continue
        if view_base(d.value, same, scope, kinds) is None:
            continue
        aliases = _copies_in(d.targets[0].id, order)
        if any(
            use is not update
            and may_precede(position, update, update_loops, use, use_loops)
            and _reads(use, aliases)
            for use, use_loops in order
        ):
            return d.targets[0].id
    return None


def _copies_in(variable, order):
    """``variable`` and the names copied from it (``w = v``, loop headers), in program order."""
    aliases = {variable}
    for t, _ in order:
        if (
            isinstance(t, gast.Assign)
            and isinstance(t.value, gast.Name)
            and t.value.id in aliases
            and isinstance(t.targets[0], gast.Name)
        ):
            aliases.add(t.targets[0].id)
    return aliases


def _reads(s, names):
    """Does statement ``s`` itself (not the statements nested in it) read one of ``names``?"""
    own = [getattr(s, f, None) for f in ("value", "test", "iter")]
    own += [t.slice for t in getattr(s, "targets", []) if isinstance(t, gast.Subscript)]
    return any(
        isinstance(n, gast.Name) and n.id in names
        for e in own
        if e is not None
        for n in gast.walk(e)
    )


def copy_views(fn, updated, kinds, namer, scope):
    """``v = a[1:]`` of an array ``a`` that is updated in place -> ``v = a[1:].copy()``
    (also ``a.T``, ``a.reshape(...)`` and the other views).

    Without the copy, the saved value ``v`` would change behind its name when
    ``a`` is updated, and the reverse sweep would read it changed. Where the
    function itself reads a view after an update, that is refused (check_views).
    Scalar reads (``a[i]`` of a vector) are copies already. A second name the stages made
    (``t = a``, the parameter of a local function inlined at ``a[:] = g(a)``) is copied
    too, as is a version SSA made of an updated array (``v_1 = v`` at a loop's header, the loop
    updating ``v_1`` while a rule reads ``v``): the user's own second names of an updated array
    are refused before (check_updates)."""

    def block(stmts):
        out = []
        for s in stmts:
            for field in ("body", "orelse"):
                if isinstance(getattr(s, field, None), list) and not isinstance(
                    s, gast.FunctionDef
                ):
                    setattr(s, field, block(getattr(s, field)))
            value = getattr(s, "value", None)
            base = view_base(value, updated, scope, kinds) if isinstance(s, gast.Assign) else None
            if (
                base is not None
                and isinstance(s.targets[0], gast.Name)
                and kinds.get(s.targets[0].id) is not None
                and not kinds[s.targets[0].id].scalar
            ):
                view = namer.fresh(f"{base}_view")
                kinds[view] = kinds[s.targets[0].id]
                out.append(located(assign(view, value), s))
                s.value = gast.Call(
                    func=gast.Attribute(value=name(view), attr="copy", ctx=gast.Load()),
                    args=[],
                    keywords=[],
                )
            elif (
                isinstance(s, gast.Assign)
                and isinstance(s.targets[0], gast.Name)
                and isinstance(value, gast.Name)
                and value.id in updated
                and not kinds.get(s.targets[0].id, UNKNOWN).scalar  # (it is that array)
            ):
                s.value = gast.Call(
                    func=gast.Attribute(value=value, attr="copy", ctx=gast.Load()),
                    args=[],
                    keywords=[],
                )
            out.append(s)
        return out

    fn.body = block(fn.body)


def check_views(parsed, fn, updated, kinds, scope):
    """Refuse reading a view of an array after the array is updated in place.

    ``v = x[1:]; x[1] = 0.0; ... v ...``: Python's ``v`` sees the new value, but the
    derived rules treat ``v`` as the value it had when it was taken. Runs on the SSA
    function, before copy_views; name copies of a view (``w = v``, loop headers)
    count as the view."""
    order = program_order(fn.body)
    position = {id(s): i for i, (s, _) in enumerate(order)}

    for s, def_loops in order:
        value = getattr(s, "value", None)
        array = view_base(value, updated, scope, kinds) if isinstance(s, gast.Assign) else None
        if (
            array is None
            or not isinstance(s.targets[0], gast.Name)
            or kinds.get(s.targets[0].id, None) is None
            or kinds[s.targets[0].id].scalar
        ):
            continue
        aliases = _copies_in(s.targets[0].id, order)
        updates = [
            (u, loops)
            for u, loops in order
            if isinstance(u, gast.Assign)
            and isinstance(u.targets[0], gast.Subscript)
            and u.targets[0].value.id == array
        ]
        for use, use_loops in order:
            if (
                use is s
                or not _reads(use, aliases)
                or (isinstance(use, gast.Assign) and isinstance(use.value, gast.Name))
            ):
                continue
            for update, update_loops in updates:
                # between the view and its use, or in an earlier iteration of a loop the view was
                # taken outside
                between = position[id(s)] < position[id(update)] < position[id(use)]
                if between or set(use_loops) & set(update_loops) - set(def_loops):
                    raise unsupported(
                        parsed,
                        use,
                        f"reading {s.targets[0].id!r}, a view of {array!r}, "
                        f"after {array!r} is updated in place (line {parsed.line(update)})",
                        f"take a copy ({array}[...].copy()) or read {array} again after the update",
                    )
