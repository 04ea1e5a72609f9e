"""Tangents of any value, and the helpers derived code calls for every kind of value.

A tangent has the structure of its value: a float for a float, an array of the same
shape for an array, a :class:`TangentTuple` for a tuple or list (``+`` adds element by
element), the same record class for a dataclass or namedtuple, a :class:`Tangent` for a
plain object. ``None`` is a zero tangent of anything.

>>> add_tangents(TangentTuple((1.0, None)), TangentTuple((2.0, 3.0)))
TangentTuple((3.0, 3.0))
>>> unbroadcast(np.ones((2, 3)), np.zeros(3))
array([2., 2., 2.])
"""

import dataclasses
import types

import numpy as np

from .errors import TangentAstError


def unbroadcast(g, x):
    """Sum the cotangent ``g`` down to the shape of ``x`` (undo broadcasting)."""
    if isinstance(x, (list, tuple)):
        raise TangentAstError(
            "a rule derived without example arguments met a list or tuple in + or *: "
            "for containers that means concatenation or repetition, not arithmetic",
            hint=(
                "derive with example arguments (derive(f, args=...), or grad/vjp) so kinds are "
                "known"
            ),
        )
    shape = np.shape(x)
    if np.shape(g) == shape:
        return g
    g = g if hasattr(g, "ndim") else np.asarray(g)  # an array, a NumPy scalar or a batch
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and g.shape[axis] != 1:
            g = g.sum(axis=axis, keepdims=True)
    if not isinstance(x, np.ndarray):
        return g[()] if g.ndim == 0 else g
    return g


def only_shape(x):
    """An array of ``x``'s shape and dtype that holds no elements (one zero, broadcast),
    for ``x`` a large array the reverse sweep reads only the shape of (``unbroadcast(g,
    x)``): the forward sweep keeps this instead of ``x``, which can then be freed. Anything
    else is returned as it is."""
    if type(x) is not np.ndarray or x.nbytes < ONLY_SHAPE_BYTES:
        return x
    return np.broadcast_to(np.zeros((), x.dtype), x.shape)


ONLY_SHAPE_BYTES = 1 << 16  # below this, making the view costs more time than it saves memory


def real_like(ct, x):
    """The cotangent ``ct`` of ``x``, real if ``x`` is: a real value's cotangent is the real
    part of what reaches it (``dL = Re(ct * dx)``). Generated code calls it where complex
    values meet one whose kind was not known when the rule was derived. For a list or tuple
    (``np.split``'s pieces), item by item."""
    if type(ct) is TangentTuple and isinstance(x, (list, tuple)) and len(ct) == len(x):
        return TangentTuple(c if c is None else real_like(c, e) for c, e in zip(ct, x))
    return ct if np.iscomplexobj(x) else np.real(ct)


def concat_tangent(t, x, y, first):
    """Tangent contribution of one operand of ``x + y`` for lists/tuples (concatenation)."""
    if first:
        return TangentTuple(list(t) + list(zero_tangent(y)))
    return TangentTuple(list(zero_tangent(x)) + list(t))


def sequence_repeat_vjp(ct, x, times):
    """Cotangent of ``x`` for ``x * times`` on a list/tuple (repetition): chunks added up."""
    n = len(x)
    total = TangentTuple(zero_tangent(x))
    for k in range(times):
        total = add_tangents(total, TangentTuple(ct[k * n : (k + 1) * n]))
    return total


def broadcast_like(t, x):
    """The tangent ``t`` broadcast to the shape of ``x`` (no copy when it fits)."""
    shape = np.shape(x)
    if np.shape(t) == shape:
        return t
    return np.broadcast_to(t, shape).copy()


class _Unset:
    """What a name holds in derived code before a loop sets it (where Python's name is
    unbound, and SSA's copies hand it on): no arithmetic takes it; its zero tangent is
    ``0.0``, so cotangents that pass through it add up."""

    __slots__ = ()

    def __repr__(self):
        return "UNSET"

    def __reduce__(self):
        return "UNSET"  # the one instance, by name (residuals are pickled)

    def copy(self):
        """Itself: a reverse loop copies an array it restores slot by slot as it reads it
        from the tape, where an iteration that did not make the array saved this."""
        return self


UNSET = _Unset()


def zeros_like(x):
    """A zero tangent for ``x``: ``0.0`` for a Python scalar, else zeros of its shape."""
    if isinstance(x, (float, int)) or x is UNSET:
        return 0.0
    if isinstance(x, complex):
        return 0j
    if isinstance(x, (np.ndarray, np.number)):
        return np.zeros_like(x, dtype=np.result_type(x, float))
    return zero_tangent(x)  # containers, records, dicts, objects: the same structure


class TangentTuple(tuple):
    """The tangents of a tuple's or list's elements.

    ``+`` adds element by element (never concatenates), so cotangents of a
    container accumulate like those of numbers. ``None`` is a zero tangent.
    """

    __slots__ = ()

    def __add__(self, other):
        return add_tangents(self, other)

    __radd__ = __add__

    def __repr__(self):
        return f"TangentTuple({tuple(self)!r})"


class Tangent(types.SimpleNamespace):
    """The tangent of a plain object: its attributes' tangents."""

    def __add__(self, other):
        return add_tangents(self, other)

    __radd__ = __add__


def is_record(x):
    """A dataclass instance or a namedtuple: a value whose tangent is the same class."""
    return (dataclasses.is_dataclass(x) and not isinstance(x, type)) or (
        isinstance(x, tuple) and hasattr(type(x), "_fields")
    )


def record_fields(x):
    """The field names of a record, in order."""
    if dataclasses.is_dataclass(x):
        return [f.name for f in dataclasses.fields(x)]
    return list(type(x)._fields)


def rebuild(x, values):
    """An object of ``x``'s class holding ``values`` for its fields."""
    if isinstance(x, tuple) and hasattr(type(x), "_fields"):
        return type(x)(*values)
    if dataclasses.is_dataclass(x):
        import copy  # a millisecond to import: not on every program's start-up

        new = copy.copy(x)
        for name, value in zip(record_fields(x), values, strict=True):
            object.__setattr__(new, name, value)
        return new
    return Tangent(**dict(zip(vars(x), values, strict=True)))


# functions have no tangent (a rule's reverse sweep held in what a call of a function value saves)
_FUNCTIONS = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type)


def zero_tangent(x):
    """The zero tangent of ``x``: 0.0, zeros, ``None`` for what has no tangent, and
    for containers and records the same structure holding zero tangents."""
    if (
        isinstance(x, (bool, np.bool_, int, np.integer, str, range, slice, *_FUNCTIONS))
        or x is None
    ):
        return None
    if isinstance(x, (float, np.floating)) or x is UNSET:
        return 0.0
    if isinstance(x, (complex, np.complexfloating)):
        return 0j
    if isinstance(x, np.ndarray):
        return np.zeros_like(x, dtype=float) if x.dtype.kind not in "fc" else np.zeros_like(x)
    if is_record(x):
        return rebuild(x, [zero_tangent(getattr(x, n)) for n in record_fields(x)])
    if isinstance(x, (tuple, list)):
        return TangentTuple(zero_tangent(v) for v in x)
    if isinstance(x, dict):
        return {k: zero_tangent(v) for k, v in x.items()}
    return Tangent(**{k: zero_tangent(v) for k, v in vars(x).items()})


def item_tangent(t, index, item=0.0):
    """``t[index]``, the tangent of ``item = x[index]`` of a list or tuple ``x``, where a
    missing tangent (an integer's) is a zero the arithmetic after it can take (a number's
    when ``item`` is not given)."""
    got = None if t is None else t[index]
    if got is not None:
        return got
    zero = zero_tangent(item)
    return 0.0 if zero is None else zero


def add_tangents(a, b):
    """``a + b`` for tangents of any structure (``None`` is zero)."""
    if a is None:
        return b
    if b is None:
        return a
    if is_record(a) and isinstance(b, tuple) and not is_record(b):  # a record's fields by position
        return rebuild(a, [add_tangents(x, y) for x, y in zip(a, b, strict=True)])
    if is_record(a):
        return rebuild(a, [add_tangents(getattr(a, n), getattr(b, n)) for n in record_fields(a)])
    if isinstance(a, (tuple, list)):
        return TangentTuple(add_tangents(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        keys = list(a) + [k for k in b if k not in a]  # keep the primal's order
        return {k: add_tangents(a.get(k), b.get(k)) for k in keys}
    if isinstance(a, types.SimpleNamespace):
        return Tangent(**{k: add_tangents(getattr(a, k), getattr(b, k, None)) for k in vars(a)})
    return a + b


def list_with(xs, i, v):
    """A new list: ``xs`` with item ``i`` replaced by ``v`` (``xs[i] = v`` on a local list).

    Tangents of lists (TangentTuple) stay tangents, so they keep adding element by element."""
    new = list(xs)
    new[i] = v
    return TangentTuple(new) if isinstance(xs, TangentTuple) else new


def list_inserted(xs, i, v):
    """A new list: ``xs`` with ``v`` inserted before position ``i`` (``xs.insert(i, v)`` on a
    local list)."""
    new = list(xs)
    new.insert(i, v)
    return TangentTuple(new) if isinstance(xs, TangentTuple) else new


def without(xs, key=-1):
    """A new list (or dict): ``xs`` without item ``key``, as ``xs.pop(key)`` leaves it."""
    if isinstance(xs, dict):
        return {k: v for k, v in xs.items() if k != key}
    new = list(xs)
    del new[key]
    return TangentTuple(new) if isinstance(xs, TangentTuple) else new


def inserted_at(xs, i):
    """Where ``xs.insert(i, v)`` puts ``v``: ``i`` counted from the end if negative, clipped."""
    n = len(xs)
    return min(max(i + n if i < 0 else i, 0), n)


def dict_with(d, key, v):
    """A new dict: ``d`` with ``d[key] = v`` (``d[key] = v`` on a dict of the function, which
    is a value in derived code, as a list is)."""
    new = dict(d)
    new[key] = v
    return new


def dict_with_vjp(ct, d, key):
    """Cotangent of ``d`` for ``dict_with(d, key, v)``: ``ct`` with a zero (of the replaced
    value's shape) at ``key``, or without ``key`` where ``d`` had none."""
    if key in d:
        return dict_with(ct, key, zero_tangent(d[key]))
    return without(ct, key)


def without_vjp(ct, xs, key=-1):
    """Cotangent of ``xs`` for ``without(xs, key)``: ``ct`` with a zero back at ``key``."""
    if isinstance(xs, dict):
        return {**ct, key: zero_tangent(xs[key])}
    position = key + len(xs) if key < 0 else key
    return list_inserted(TangentTuple(ct), position, zero_tangent(xs[key]))


def list_vjp(ct, x):
    """Cotangent of ``x`` for ``list(x)``: the items' cotangents, as an array if ``x`` is one,
    as a record of ``x``'s class if ``x`` is a namedtuple (``tuple(np.linalg.eigh(a))``): a
    record's tangent is a record, which code reads by field."""
    if isinstance(x, np.ndarray):
        return np.asarray(ct)
    if is_record(x) and ct is not None and type(ct) is not type(x):
        return rebuild(x, list(ct))
    return ct


def items_vjp(c, x):
    """The transpose of ``list_vjp(ct, x)`` (linear in ``ct``): from ``c``, a cotangent of
    the cotangent of ``x``, the items' (the rows of an array, the fields of a record)."""
    if isinstance(x, np.ndarray):
        return TangentTuple(list(np.asarray(c)))
    if is_record(x) and c is not None:
        return TangentTuple(getattr(c, n) for n in record_fields(x))
    return c


def write_list(given, new, in_place=()):
    """``given[:] = new``: a list argument left as the function leaves it (and its tangent
    alongside it, in forward mode); for a dataclass argument a field of which is assigned
    (``write_fields``, the same helper), each field of ``given`` set to ``new``'s, or, for
    the fields ``in_place`` (``r.f += v`` updated the array they hold), that array given
    ``new``'s values; for a dict argument updated by key (``write_items``), its items made
    ``new``'s. The arrays a list's or dict's items ``in_place`` hold (``xs[0] += v``) are
    kept, given the new values."""
    if is_record(given) and type(new) is type(given):
        for field in record_fields(given):
            held = getattr(given, field)
            if field in in_place and isinstance(held, np.ndarray):
                held[...] = getattr(new, field)
            else:
                setattr(given, field, getattr(new, field))
        return
    # the arrays the items in_place hold, which the new values are written into
    held = {
        k: given[k]
        for k in in_place
        if isinstance(given, (list, dict)) and isinstance(given[k], np.ndarray)
    }
    if isinstance(given, dict) and isinstance(new, dict):
        given.clear()
        given.update(new)
        _written_into(given, new, held)
        return
    if not isinstance(given, list):
        raise TangentAstError(
            f"a {type(new).__name__} argument is updated in place, so its tangent must be "
            f"one too, not {type(given).__name__}",
            hint="pass the tangent as a value of the argument's type (a list, a dict, an "
            "instance of its dataclass)",
        )
    given[:] = new
    _written_into(given, new, held)


def _written_into(given, new, held):
    """The arrays ``held`` (item -> the caller's array) given ``new``'s values, in place."""
    for k, array in held.items():
        array[...] = new[k]
        given[k] = array


# the names generated code writes a dataclass argument, and a dict argument, back with
write_fields = write_items = write_list


def enter_context(manager):
    """``with manager as v:`` written out: ``v = enter_context(manager)``, the block's body,
    then ``exit_context(manager)``."""
    return manager.__enter__()


def exit_context(manager):
    """The end of a ``with`` block whose body ran to its end (no exception to pass on)."""
    manager.__exit__(None, None, None)


# Helpers with effects (they change an argument, enter or leave a context): derivative code
# keeps each call, in order, exactly once (simplify.is_pure).
EFFECTFUL = frozenset({write_list, enter_context, exit_context})


def replace_vjp(ct, changed):
    """Cotangent of ``p`` for ``dataclasses.replace(p, **changed)``: the changed fields' zeroed."""
    zero = zero_tangent(ct)
    return rebuild(
        ct, [getattr(zero, n) if n in changed else getattr(ct, n) for n in record_fields(ct)]
    )


def getattr_vjp(ct, x, name):
    """Cotangent of ``x`` for ``x.name``: zero tangents, with ``ct`` for that field."""
    zero = zero_tangent(x)
    values = [
        ct if n == name else getattr(zero, n)
        for n in (record_fields(x) if is_record(x) else list(vars(x)))
    ]
    return rebuild(x, values)
