"""Fields of dataclass instances assigned: ``r.f = v`` followed as a new value, or refused.

Takes the parsed function, its scope and the signature's dataclass arguments; guarantees
that each ``r.f = v`` (and ``r.f += v``) left for the lowering, which writes it
``r = replace(r, f=v)``, is on an instance no other name or container holds: one the
function builds with its dataclass's constructor, or an argument (never rebound), whose
fields the derived rule writes back into the caller's object at the end. A frozen
dataclass, or one whose ``__post_init__`` ``replace`` would run again, is refused.

>>> import dataclasses, numpy as np, tangent_ast as ta
>>> @dataclasses.dataclass
... class Layer:
...     w: object
...     b: float
>>> def f(x, layer):
...     layer.w = layer.w * x
...     return np.sum(layer.w) + layer.b
>>> layer = Layer(np.ones(2), 0.5)
>>> ta.grad(f)(np.array([1.0, 2.0]), layer), layer.w
(array([1., 1.]), array([1., 2.]))
"""

import dataclasses

import gast

from ..vocabulary.kinds import Tag
from ..vocabulary.syntax import written_targets
from .aliasing import FunctionWalk, changed_list, check_unaliased, rebindings
from .checks import unsupported


def check_field_updates(parsed, scope, record_params):
    """``r.f = v`` and ``r.f += v`` on a dataclass instance: ``r`` is a value in derived code
    (lowered to ``r = replace(r, f=v)``), sound while no other name or container holds it.
    ``r`` is an argument the signature says is a dataclass instance (``record_params``:
    name -> kind, of every parameter), never rebound, written back into the caller's object
    at the end; or a local bound only by a dataclass's constructor. Returns the arguments
    written back, each with the fields of it holding an array that ``r.f += v`` updates in
    place (the caller's array itself is written at the end, as Python's update writes it)."""
    node = parsed.node
    params = [a.id for a in node.args.args]
    record_params = {p: k for p, k in record_params.items() if k.tag is Tag.RECORD}
    updates: dict = {}
    walk = FunctionWalk(node)
    for n in walk.statements:
        for t in written_targets(n):
            if field_of_local(t, scope):
                updates.setdefault(t.value.id, []).append(n)
    written: dict[str, frozenset] = {}
    for record, stmts in updates.items():
        first = min(stmts, key=lambda n: n.lineno)
        stores = [
            n
            for n in walk.nodes
            if isinstance(n, gast.Name) and n.id == record and isinstance(n.ctx, gast.Store)
        ]
        definitions = rebindings(node, record, (), walk)
        if record in params:
            kind = record_params.get(record)
            if kind is None or not assignable_fields(kind.cls):
                raise unsupported(
                    parsed,
                    first,
                    f"assigning a field of the argument {record!r}, which is not an instance of "
                    "a dataclass whose fields can be assigned (not frozen, no __post_init__)",
                    f"build a new value: {record} = dataclasses.replace({record}, ...)",
                )
            if stores:
                raise unsupported(
                    parsed,
                    stores[0],
                    f"rebinding the argument {record!r}, a field of which is assigned",
                    "use another name for the new value",
                )
            written[record] = _augmented_array_fields(parsed, kind, stmts)
        elif len(stores) != len(definitions) or not all(
            assignable_fields(_constructed(d.value, scope)) for d in definitions
        ):
            raise unsupported(
                parsed,
                first,
                f"assigning a field of {record!r}, which is not always built in this function "
                "by a dataclass's constructor (not frozen, no __post_init__)",
                f"build it here: {record} = YourDataclass(...)",
            )
        check_unaliased(
            parsed,
            node,
            record,
            "a field of it is assigned",
            f"use {record} itself, or build a new one",
            scope,
            walk,
        )
    return written


def _augmented_array_fields(parsed, kind, stmts):
    """The fields of a dataclass argument (of ``kind``) holding an array that ``stmts``
    update with ``r.f += v``; refused where such a field is also assigned (the caller's array
    would then hold one state and the field another)."""
    arrays = {
        f
        for f, k in zip(kind.fields or (), kind.elements or (), strict=False)
        if k.tag is Tag.ARRAY
    }
    augmented = {
        n.target.attr: n for n in stmts if isinstance(n, gast.AugAssign) and n.target.attr in arrays
    }
    for n in stmts:
        if not isinstance(n, gast.AugAssign) and any(
            isinstance(t, gast.Attribute) and t.attr in augmented for t in written_targets(n)
        ):
            field = next(t.attr for t in written_targets(n) if isinstance(t, gast.Attribute))
            raise unsupported(
                parsed,
                n,
                f"assigning the field {field!r} of an argument that is also updated in place "
                f"(line {parsed.line(augmented[field])})",
                "update it in place only (r.f += v, r.f *= v), or assign it only",
            )
    return frozenset(augmented)


def field_of_local(target, scope):
    """``r.f`` with ``r`` a local name: a field assignment this function can follow."""
    return (
        isinstance(target, gast.Attribute)
        and isinstance(target.value, gast.Name)
        and scope.is_local(target.value.id)
    )


def _constructed(value, scope):
    """The class ``value`` is a call of the constructor of, or None."""
    if isinstance(value, gast.Call):
        cls = scope.lookup(value.func)
        if isinstance(cls, type):
            return cls
    return None


def assignable_fields(cls):
    """A dataclass whose instances' fields can be assigned, as ``dataclasses.replace`` sets
    them: not frozen, every field set by ``__init__``, no ``__post_init__`` to run again."""
    return (
        isinstance(cls, type)
        and dataclasses.is_dataclass(cls)
        and not cls.__dataclass_params__.frozen
        and all(f.init for f in dataclasses.fields(cls))
        and not hasattr(cls, "__post_init__")
    )


def augmented_items(parsed, scope, param_kinds, containers):
    """The items of list and dict arguments (``containers``, the ones the function changes)
    holding an array that ``xs[0] += v`` updates in place, where those updates, at constant
    indices or keys, are every change the function makes to the argument: argument ->
    the indices or keys, as written. The lowering copies those arrays
    first and the write-back writes the caller's arrays at the end, as Python does."""
    found = {}
    for p in containers:
        kind = param_kinds.get(p)
        if kind is None or kind.tag not in (Tag.LIST, Tag.DICT) or kind.elements is None:
            continue
        slots = _array_slots(kind)
        keys = set()
        for n in gast.walk(parsed.node):
            changed = [t for t in written_targets(n) if _base(t) == p] + [
                t for t in _changes_by_call(n, scope) if t == p
            ]
            if not changed:
                continue
            key = _constant_key(n, p)
            if key is None or slots.get(_normal(key, kind)) is not True:
                keys = None
                break
            keys.add(key)  # as written: xs[-1] and xs[2] are each copied, and written back
        if keys:
            found[p] = frozenset(keys)
    return found


def _array_slots(kind):
    """Slot -> whether the argument's kind says an array is there."""
    keys = kind.fields if kind.tag is Tag.DICT else range(len(kind.elements))
    return {k: e.tag is Tag.ARRAY for k, e in zip(keys, kind.elements, strict=False)}


def _base(target):
    while isinstance(target, (gast.Subscript, gast.Attribute)):
        target = target.value
    return target.id if isinstance(target, gast.Name) else None


def _changes_by_call(n, scope):
    """The names a statement changes by a method (``xs.append(v)``) or gives ``+=`` to."""
    if isinstance(n, gast.Expr):
        changed = changed_list(n.value, scope)
        return [changed] if changed is not None else []
    if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
        return [n.target.id]
    return []


def _constant_key(n, p):
    """``k`` of ``p[k] <op>= v`` with a constant ``k``, else None."""
    if not (
        isinstance(n, gast.AugAssign)
        and isinstance(n.target, gast.Subscript)
        and isinstance(n.target.value, gast.Name)
        and n.target.value.id == p
    ):
        return None
    key, sign = n.target.slice, 1
    if isinstance(key, gast.UnaryOp) and isinstance(key.op, gast.USub):  # xs[-1]
        key, sign = key.operand, -1
    if isinstance(key, gast.Constant) and type(key.value) is int:
        return sign * key.value
    if isinstance(key, gast.Constant) and type(key.value) is str and sign == 1:
        return key.value
    return None


def _normal(key, kind):
    """A list's index counted from its start."""
    if kind.tag is Tag.LIST and isinstance(key, int) and key < 0:
        return key + len(kind.elements)
    return key
