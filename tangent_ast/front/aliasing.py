"""In-place updates and the names that share an array, before normalization: allowed or refused.

NumPy updates arrays in place (``a[i] = v``, ``a += b``), and every other name for the
same array sees the change. The stages derive code where each value is computed once, so
an update is only sound while the array it changes has one name. Before normalization,
``check_updates`` finds the arrays updated in place (arguments included) and the lists
changed by item, and refuses an update of an array that another name or a container also
holds, or that a call made before the update may keep (a function of the user's, whose
derived rule saves what it reads, or a record); ``check_field_updates`` does the same for
the fields of dataclass instances assigned. After SSA and kind inference,
:func:`~tangent_ast.analysis.shared_updates.check_augmented` refuses the ``a += b`` on shared arrays
that :mod:`tangent_ast.analysis.shared_updates` could not write as the update it is.

>>> import numpy as np, tangent_ast as ta
>>> def f(x):
...     y = x * 2.0
...     pair = [y, x]
...     y[0] = 1.0
...     return np.sum(pair[0])
>>> ta.grad(f)(np.ones(2))
Traceback (most recent call last):
...
tangent_ast.errors.UnsupportedSyntaxError: <doctest ...>:3: 'y' held in a tuple, list or dict
(it is updated in place later) is not supported
  hint: use y itself, or y.copy()
"""

import builtins
import dataclasses
import inspect

import gast
import numpy as np

from .. import runtime
from ..vocabulary.syntax import written_targets
from .checks import unsupported
from .local_functions import local_functions
from .new_arrays import fresh_array, may_return_what_it_is_given


def check_updates(
    parsed, scope, array_params=None, list_params=frozenset(), dict_params=frozenset()
):
    """In-place updates ``a[i] = v`` only on arrays this function creates or on
    array arguments, never aliased. Returns the arrays updated in place, the
    lists updated by item or appended to (``xs[i] = v``, which normalize turns into
    a new list; for a list argument, one the function writes back at its end) and the
    dicts updated by key (``d[k] = v``: a new dict, an argument's written back).

    That is what makes them safe to differentiate: the forward sweep saves what an
    update overwrites and the reverse sweep restores it, so no other name may see
    the array change. An argument updated in place is left by the derived rule in
    the state the function leaves it in. ``array_params``: the parameters the
    signature says are arrays (None: no signature); ``x += y`` on one of them
    updates it in place."""
    node = parsed.node
    params = [a.id for a in node.args.args]
    updates = {}  # name -> the update statements, in source order
    appended = {}
    walk = FunctionWalk(node)
    for n in walk.nodes:
        for t in written_targets(n):
            if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name):
                updates.setdefault(t.value.id, []).append(n)
        if (
            isinstance(n, gast.AugAssign)
            and isinstance(n.target, gast.Name)
            and n.target.id in (array_params or ())
        ):
            updates.setdefault(n.target.id, []).append(n)
        if isinstance(n, (gast.Expr, gast.Assign)) and changed_list(n.value, scope) is not None:
            appended.setdefault(changed_list(n.value, scope), n)
        if _extends(n, list_params):  # xs += ys on a list argument extends the caller's list
            appended.setdefault(n.target.id, n)
        if isinstance(n, gast.Expr) and out_target(n.value) is not None:
            updates.setdefault(out_target(n.value), []).append(n)
    in_place, lists, dicts = set(), set(), set()
    for xs, at in appended.items():
        if xs in params and xs not in list_params:
            raise unsupported(
                parsed,
                at,
                f"changing the argument {xs!r} in place (append, extend, insert, pop), which is "
                "not a list",
                f"build a new value: {xs} = {xs} + [v]",
            )
        check_unaliased(
            parsed, node, xs, "it is appended to", f"use {xs} itself, or list({xs})", scope, walk
        )
        definitions = rebindings(node, xs, list_params, walk)
        _check_own_list(parsed, xs, at, definitions, scope, walk)
        if xs in params and not any(d.lineno < at.lineno for d in definitions):
            _check_not_rebound_after(parsed, at, xs, definitions, f"list({xs})")
            lists.add(xs)  # the caller's list: written back at the end
    for array, stmts in updates.items():
        first = min(stmts, key=lambda n: n.lineno)
        # (for an argument, x += y rebinds it too unless the signature says it is an array)
        rebinding = (gast.Assign, gast.AugAssign) if array in params else gast.Assign
        definitions = [
            n
            for n in rebindings(node, array, list_params, walk)
            if n not in stmts and isinstance(n, rebinding)
        ]
        if array in params and (
            not definitions or first.lineno < min(d.lineno for d in definitions)
        ):
            _check_not_rebound_after(
                parsed,
                first,
                array,
                definitions,
                f"list({array})"
                if array in list_params
                else f"dict({array})"
                if array in dict_params
                else f"{array}.copy()",
            )
            container = array in list_params or array in dict_params
            if container or array_params is None or array in array_params:
                if container:  # lowered like a local one, then written back
                    (lists if array in list_params else dicts).add(array)
                else:
                    in_place.add(array)
                why = "it is updated in place"
                check_unaliased(parsed, node, array, why, f"use {array} itself", scope, walk)
                continue
            raise unsupported(
                parsed,
                first,
                f"updating the argument {array!r}, which is not an array, a list or a dict, "
                "in place",
                f"build a new value: {array} = ...",
            )
        if array in params:
            _check_rebound_on_every_path(parsed, array, stmts, definitions)
        if any(isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name) for n in stmts):
            continue  # ``x += y`` on an argument rebound before: plain arithmetic on the new value
        if definitions and all(is_new_dict(d.value, scope) for d in definitions):
            check_unaliased(
                parsed,
                node,
                array,
                "it is updated by key",
                f"use {array} itself, or dict({array})",
                scope,
                walk,
            )
            dicts.add(array)
            continue
        if definitions and all(is_new_list(d.value, scope) for d in definitions):
            check_unaliased(
                parsed,
                node,
                array,
                "it is updated in place",
                f"use {array} itself, or list({array})",
                scope,
                walk,
            )
            lists.add(array)
            continue
        if any(is_new_list(d.value, scope) for d in definitions):
            raise unsupported(
                parsed,
                first,
                f"updating the list {array!r} in place, which is not always "
                "a list built in this function",
                f"build {array} once as a list: [...], a comprehension or list(...)",
            )
        _check_new_each_time(parsed, scope, array, first, definitions)
        check_unaliased(
            parsed,
            node,
            array,
            "it is updated in place",
            f"use {array} itself, or {array}.copy()",
            scope,
            walk,
        )
        in_place.add(array)
    return in_place, lists, dicts


def _check_own_list(parsed, xs, at, definitions, scope, walk):
    """Refuse ``xs.append(v)`` (``extend``, ``insert``, ``pop``) where ``xs`` may be bound to
    a list another name holds (``m = l``, ``m = d["k"]``, ``m = helper(l)``, ``for m in
    [l]``): the method changes that list, which the derived rules, building ``xs = xs +
    [v]``, would not."""
    copies = [d for d in definitions if isinstance(d, gast.Assign) and is_new_list(d.value, scope)]
    loops = [
        loop
        for loop, inside in walk.loops
        if isinstance(loop, gast.For)
        and xs in _target_names(loop.target)
        # for row in rows: row = list(row); row.append(v) changes a list of its own
        and not any(id(c) in inside and c.lineno <= at.lineno for c in copies)
    ]
    for d in definitions + loops:
        if isinstance(d, gast.For):
            raise unsupported(
                parsed,
                at,
                f"changing {xs!r} in place (append, extend, insert, pop), an item of what "
                f"the loop at line {parsed.line(d)} runs over",
                f"make it a list of its own: {xs} = list({xs}) first",
            )
        value = d.value if isinstance(d, gast.Assign) else None
        shared = isinstance(value, (gast.Name, gast.Subscript, gast.Attribute, gast.IfExp))
        if shared or may_return_what_it_is_given(value, scope):
            raise unsupported(
                parsed,
                at,
                f"changing {xs!r} in place (append, extend, insert, pop) where it may be a "
                f"list another name holds too (line {parsed.line(d)})",
                f"make it a list of its own: {xs} = list(...)",
            )


def _target_names(target):
    return {n.id for n in gast.walk(target) if isinstance(n, gast.Name)}


def _extends(stmt, list_params):
    return (
        isinstance(stmt, gast.AugAssign)
        and isinstance(stmt.op, gast.Add)
        and isinstance(stmt.target, gast.Name)
        and stmt.target.id in list_params
    )


def rebindings(node, xs, list_params, walk=None):
    """The statements assigning ``xs`` (``xs += ys`` on a list argument extends it instead)."""
    return [
        n
        for n in (walk or FunctionWalk(node)).statements
        if isinstance(n, (gast.Assign, gast.AugAssign))
        and any(
            isinstance(t, gast.Name) and t.id == xs
            for t in getattr(n, "targets", [getattr(n, "target", None)])
        )
        and not _extends(n, list_params)
    ]


def _check_rebound_on_every_path(parsed, xs, updates, definitions):
    """Refuse an in-place update of the argument ``xs`` where it is rebound on some paths
    only (``if c: x = np.tanh(x)`` then ``x /= 2.0``): on the others the update changes the
    caller's array, which a derived rule would leave alone."""
    for update in updates:
        if not _rebound_before(parsed.node.body, update, {id(d) for d in definitions}):
            raise unsupported(
                parsed,
                update,
                f"updating {xs!r} in place where it is the argument on some paths and a new "
                "value on others (rebound in a branch or a loop before)",
                f"write {xs} = {xs} <op> ... for a new array, or copy it first on every path: "
                f"{xs} = {xs}.copy()",
            )


def _rebound_before(stmts, update, definitions):
    """Does every path through ``stmts`` to ``update`` run one of ``definitions`` (ids)?"""
    for s in stmts:
        if s is update:
            return False
        blocks = _blocks(s)
        holding = [b for b in blocks if any(n is update for t in b for n in gast.walk(t))]
        if holding:
            return _rebound_before(holding[0], update, definitions)
        if _surely_runs_one(s, definitions):
            return True
    return False


def _blocks(s):
    """The statement lists nested in ``s``: bodies, else branches, handlers, finally."""
    blocks = [getattr(s, f) for f in ("body", "orelse", "finalbody") if hasattr(s, f)]
    blocks += [h.body for h in getattr(s, "handlers", [])]
    return [b for b in blocks if isinstance(b, list)]


def _surely_runs_one(s, definitions):
    """Does running ``s`` surely run one of ``definitions``: one of them, a ``with`` whose body
    does, an ``if`` both of whose branches do?"""
    if id(s) in definitions:
        return True
    if isinstance(s, gast.If):
        return any(_surely_runs_one(t, definitions) for t in s.body) and any(
            _surely_runs_one(t, definitions) for t in s.orelse
        )
    if isinstance(s, gast.With):
        return any(_surely_runs_one(t, definitions) for t in s.body)
    return False


def _check_not_rebound_after(parsed, first, xs, definitions, copy):
    """Refuse ``xs = ...`` after the argument ``xs`` is changed in place (first at ``first``)."""
    if any(d.lineno > first.lineno for d in definitions):
        raise unsupported(
            parsed,
            first,
            f"updating the argument {xs!r} in place and rebinding it later",
            f"update it in place only, or copy it first: {xs} = {copy}",
        )


class FunctionWalk:
    """One walk of a function's tree, shared by the checks of every name it updates: a walk
    per name is quadratic in the size of a derived rule, which has an update per cotangent.
    Valid while the tree is not changed."""

    def __init__(self, node):
        self.nodes = list(gast.walk(node))
        self.statements = [
            n
            for n in self.nodes
            if isinstance(n, (gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Expr))
        ]
        # outer loops before the loops they hold, as gast.walk visits them
        self.loops = [
            (n, frozenset(id(m) for m in gast.walk(n)))
            for n in self.nodes
            if isinstance(n, (gast.For, gast.While))
        ]
        self._read_into_arrays = None
        self._enclosing = None

    def rebound_new_after(self, node, value, scope):
        """Whether ``value`` is bound to a new array (or list) after ``node`` (which holds or
        passes it) before any change of it, in the same block: from then on it is updated as
        the new value it is, and what ``node`` kept of the old one does not change."""
        if self._enclosing is None:
            self._enclosing = {}
            for n in self.nodes:  # outer statements first: an inner block's stands
                for block in (getattr(n, f, None) for f in ("body", "orelse", "finalbody")):
                    if isinstance(block, list) and block and isinstance(block[0], gast.stmt):
                        for i, s in enumerate(block):
                            self._enclosing.update((id(m), (block, i)) for m in gast.walk(s))
        block, i = self._enclosing.get(id(node), ((), 0))
        for s in block[i:] if scope is not None else ():
            if (
                isinstance(s, gast.Assign)
                and isinstance(s.targets[0], gast.Name)
                and s.targets[0].id == value
                and (fresh_array(s.value, scope) or is_new_list(s.value, scope))
            ):
                return True
            if any(_changes_or_augments(m, value) for m in gast.walk(s)):
                return False
        return False

    def read_into_arrays(self, scope):
        """The ids of the tuple and list displays passed straight to a NumPy function that
        places their arrays' entries in a new array (``np.stack([x, y])``): nothing holds
        them after the call. (The same for every ``scope``: the function's.)"""
        if self._read_into_arrays is None:
            self._read_into_arrays = {
                id(a)
                for n in self.nodes
                if isinstance(n, gast.Call) and scope is not None and _places_entries(n, scope)
                for a in _arguments(n)
                if isinstance(a, (gast.Tuple, gast.List))
            }
        return self._read_into_arrays


def check_unaliased(parsed, node, value, why, hint, scope=None, walk=None):
    """Refuse ``b = value`` made before its last change (or in a loop that changes it), and
    ``value`` held in a tuple, list or dict built before its last change: the other
    reference would see the changes made through the name. A second name made after every
    change, and not changed itself, is the same final value under another name. ``walk``:
    a :class:`FunctionWalk` of ``node``, when the caller has one."""
    walk = walk or FunctionWalk(node)
    changes = [n for n in walk.statements if _changes_or_augments(n, value)]
    last = max((n.lineno for n in changes), default=0)
    change_ids = {id(c) for c in changes}
    in_changing_loops: set[int] = set()  # ids of the nodes inside a loop that changes ``value``
    for loop, inside in walk.loops:
        if id(loop) not in in_changing_loops and inside & change_ids:
            in_changing_loops |= inside
    for n in walk.nodes:
        if isinstance(n, gast.Assign) and isinstance(n.value, gast.Name) and n.value.id == value:
            second = n.targets[0]
            late = (n.lineno > last and id(n) not in in_changing_loops) or walk.rebound_new_after(
                n, value, scope
            )
            if not (
                late
                and isinstance(second, gast.Name)
                and not any(_changes_or_augments(m, second.id) for m in walk.statements)
            ):
                raise unsupported(parsed, n, f"a second name for {value!r} ({why})", hint)
        if (
            scope is not None
            and isinstance(n, gast.Call)
            and _before_a_change(n, last, in_changing_loops)
            and any(isinstance(a, gast.Name) and a.id == value for a in _kept_arguments(n, scope))
            and _keeps_a_reference(n.func, scope, node)
            and not walk.rebound_new_after(n, value, scope)
        ):
            raise unsupported(
                parsed,
                n,
                f"passing {value!r} to {_called(n.func)} before {value!r} is updated in place "
                f"(line {parsed.line(max(changes, key=lambda c: c.lineno))}): what it keeps of "
                f"{value!r} would change with it",
                f"pass a copy: {value}.copy()",
            )
        if (
            isinstance(n, (gast.Tuple, gast.List, gast.Dict))
            and isinstance(getattr(n, "ctx", gast.Load()), gast.Load)
            and getattr(n, "lineno", last + 1) <= last
            and id(n) not in walk.read_into_arrays(scope)
            and any(
                isinstance(e, gast.Name) and e.id == value
                for e in (n.values if isinstance(n, gast.Dict) else n.elts)
            )
            and not walk.rebound_new_after(n, value, scope)
        ):
            raise unsupported(
                parsed, n, f"{value!r} held in a tuple, list or dict ({why} later)", hint
            )


def _before_a_change(node, last, in_changing_loops):
    return getattr(node, "lineno", last + 1) <= last or id(node) in in_changing_loops


def _arguments(call):
    return list(call.args) + [kw.value for kw in call.keywords]


def _kept_arguments(call, scope):
    """The arguments of ``call`` it may keep: all but those a runtime helper never keeps
    (``unbroadcast(g, x)``'s ``x``, whose shape only it reads: a shape an update in place
    keeps)."""
    not_kept = _NOT_KEPT.get(scope.lookup(call.func), ())
    return [a for i, a in enumerate(_arguments(call)) if i not in not_kept]


# runtime helpers -> the positions of the arguments neither they nor their rules keep: read
# for their shape only, or read into a new array before the call returns (and a rule of the
# helper, linear in it, needs only its shape)
_NOT_KEPT = {
    runtime.unbroadcast: (1,),
    runtime.broadcast_like: (1,),
    runtime.getitem_vjp: (1,),
    runtime.zeros_like: (0,),
    runtime.zero_tangent: (0,),
    runtime.written_slots: (0,),
    runtime.sum_vjp: (0, 1),  # their rules read the cotangent only (rules/runtime_helpers.py)
    runtime.mean_vjp: (0, 1),
    # cotangent helpers that read their primal argument's shape only, as their rules do
    runtime.cumsum_vjp: (1,),
    runtime.diag_vjp: (1,),
    runtime.diagonal_vjp: (1,),
    runtime.trace_vjp: (1,),
    runtime.pad_vjp: (1,),
    runtime.repeat_vjp: (1,),
    runtime.tile_vjp: (1,),
}


def _called(func):
    return func.id if isinstance(func, gast.Name) else getattr(func, "attr", "this call")


# NumPy functions returning a list of views of their argument
_SPLITTING = (
    "split",
    "array_split",
    "hsplit",
    "vsplit",
    "dsplit",
    "unstack",
    "broadcast_arrays",
    "meshgrid",
)


def _keeps_a_reference(func, scope, node):
    """Whether a call of ``func`` may keep its argument past the call (in its result or in
    the residuals of its derived rule): a function of the user's (not inlined), a function
    value or one made by a call, a class (a record holding it), a container builtin, or a
    NumPy function returning views in a list."""
    if isinstance(func, gast.Name) and scope.is_local(func.id):
        return func.id not in local_functions(node)  # an inlined local def is the caller's code
    if isinstance(func, gast.Call):  # a function made by a call (``ta.grad(g)(a)``): its rule
        return True  # saves what it needs of ``a`` for the reverse sweep
    obj = scope.lookup(func)
    if obj is None:
        return False
    if obj in (builtins.list, builtins.tuple, builtins.dict, builtins.zip):
        return True
    if any(obj is getattr(np, f, None) for f in _SPLITTING):
        return True
    module = getattr(obj, "__module__", None) or ""
    library = module.partition(".")[0] in ("numpy", "builtins", "math", "functools", "operator")
    return not library and (inspect.isfunction(obj) or isinstance(obj, type))


# NumPy functions that read the arrays of a sequence into a new array, entry by entry, and
# whose cotangent rules read those arrays' shapes and dtypes only (``concatenate_vjp(ct,
# xs)``): a list display passed to one holds nothing an update in place changes. (Not so
# ``np.linalg.multi_dot([a, b])``, whose rule keeps the list to read the matrices.)
_PLACING = (
    "array",
    "asarray",
    "concatenate",
    "stack",
    "hstack",
    "vstack",
    "dstack",
    "column_stack",
    "row_stack",
    "block",
)


def _places_entries(call, scope):
    """Whether ``call`` is of a NumPy function of :data:`_PLACING`."""
    obj = scope.lookup(call.func)
    return obj is not None and any(obj is getattr(np, f, None) for f in _PLACING)


def _changes_or_augments(stmt, value):
    """``stmt`` changes ``value`` in place, or augments it (``value += x``: in place on an
    array or a list)."""
    if isinstance(stmt, gast.AugAssign):
        return (isinstance(stmt.target, gast.Name) and stmt.target.id == value) or _changes(
            stmt, value
        )
    return isinstance(stmt, (gast.Assign, gast.Expr)) and _changes(stmt, value)


def _changes(stmt, value):
    """Does ``stmt`` update ``value`` in place (``value[i] = v``, ``value.f = v``,
    ``value.append(v)``, ``out=value``)?"""
    targets = stmt.targets if isinstance(stmt, gast.Assign) else [getattr(stmt, "target", None)]
    if any(
        isinstance(t, (gast.Subscript, gast.Attribute))
        and isinstance(t.value, gast.Name)
        and t.value.id == value
        for t in targets
    ):
        return True
    call = getattr(stmt, "value", None) if isinstance(stmt, gast.Expr) else None
    return isinstance(call, gast.Call) and (
        out_target(call) == value
        or (
            isinstance(call.func, gast.Attribute)
            and isinstance(call.func.value, gast.Name)
            and call.func.value.id == value
        )
    )


def is_new_list(value, scope):
    """``[...]``, a list comprehension, ``[0.0] * n`` or ``list(...)``: a new list."""
    if isinstance(value, (gast.List, gast.ListComp)):
        return True
    if isinstance(value, gast.BinOp) and isinstance(value.op, (gast.Mult, gast.Add)):
        return is_new_list(value.left, scope) or is_new_list(value.right, scope)
    return isinstance(value, gast.Call) and scope.lookup(value.func) is list


def is_new_dict(value, scope):
    """``{...}``, a dict comprehension or ``dict(...)``: a new dict."""
    if isinstance(value, (gast.Dict, gast.DictComp)):
        return True
    return isinstance(value, gast.Call) and scope.lookup(value.func) is dict


def out_target(value):
    """``a`` for a call ``f(..., out=a)`` kept for its effect."""
    if isinstance(value, gast.Call):
        outs = [k.value for k in value.keywords if k.arg == "out"]
        if len(outs) == 1 and isinstance(outs[0], gast.Name):
            return outs[0].id
    return None


def changed_list(value, scope):
    """The local list (or dict) ``value`` changes in place by a method: ``xs.append(v)``,
    ``xs.extend(ys)``, ``xs.insert(i, v)``, ``xs.pop(i)``; None for any other value."""
    if (
        isinstance(value, gast.Call)
        and isinstance(value.func, gast.Attribute)
        and isinstance(value.func.value, gast.Name)
        and scope.is_local(value.func.value.id)
        and not value.keywords
        and (
            (value.func.attr in ("append", "extend") and len(value.args) == 1)
            or (value.func.attr == "insert" and len(value.args) == 2)
            or (value.func.attr == "pop" and len(value.args) <= 1)
        )
    ):
        return value.func.value.id
    return None


def append_call(value, scope):
    """``(xs, [v])`` for ``xs.append(v)`` (and ``(xs, ys)`` for ``xs.extend(ys)``) on a local
    list."""
    if (
        isinstance(value, gast.Call)
        and isinstance(value.func, gast.Attribute)
        and isinstance(value.func.value, gast.Name)
        and scope.is_local(value.func.value.id)
        and len(value.args) == 1
        and not value.keywords
    ):
        if value.func.attr == "append":
            return value.func.value.id, gast.List(elts=[value.args[0]], ctx=gast.Load())
        if value.func.attr == "extend":
            return value.func.value.id, value.args[0]
    return None


def _check_new_each_time(parsed, scope, array, first, definitions):
    """An array of the function's own updated in place (first by ``first``) is a new array
    at each of its ``definitions``."""
    # each binding a new array (``ct = np.zeros_like(x); ct[...] = 0.0; ct = ct + t``, as
    # reverse rules write): SSA names each, and each is updated as the one it is; in a loop,
    # the version carried to the next iteration is a loop header, whose tape holds the
    # object as the iteration left it and whose slots the reverse loop restores
    if not definitions and not scope.is_local(array):
        raise unsupported(
            parsed,
            first,
            f"updating {array!r}, a value of the module, in place from a function being "
            "differentiated",
            "keep state such as counters outside the function, or pass the value in and "
            "return the new one",
        )
    if definitions and all(isinstance(d.value, gast.Dict) for d in definitions):
        raise unsupported(
            parsed,
            first,
            f"updating the dict {array!r} by key ({array}[key] = value)",
            f"build {array} with all its entries at once ({array} = {{'a': ..., 'b': ...}}), or "
            "keep the values in names",
        )
    if not definitions or not all(fresh_array(d.value, scope) for d in definitions):
        raise unsupported(
            parsed,
            first,
            f"an in-place update of {array!r}, which is not always a new array "
            "created in this function",
            f"create it with np.zeros/np.empty/np.array/.copy() each time {array} is bound",
        )


def first_copy(fn, scope, arg):
    """The name bound to ``list(arg)`` (``dict(arg)``, ``replace(arg)``) in ``fn``'s body,
    else ``arg``. A list, dict or dataclass argument the function changes is copied first
    thing (lowering/calls.py, ``write_back``) and written back at the end, so by the reverse
    sweep the argument holds its final state; the copy (never changed: containers and
    records are values in derived code) keeps its structure as given, which the argument's
    zero cotangent is made from."""
    for s in fn.body:
        value = s.value if isinstance(s, gast.Assign) else None
        if (
            isinstance(value, gast.Call)
            and isinstance(s.targets[0], gast.Name)
            and scope.lookup(value.func) in (builtins.list, builtins.dict, dataclasses.replace)
            and len(value.args) == 1
            and not value.keywords
            and isinstance(value.args[0], gast.Name)
            and value.args[0].id == arg
        ):
            return s.targets[0].id
    return arg
