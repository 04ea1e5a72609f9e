"""The small, stable helpers generated modules may import.

Generated code calls these only where kinds cannot rule the case out: for
example ``unbroadcast`` appears only where broadcasting can really happen.
"""

import copy
import dataclasses
import inspect
import types
import weakref

import numpy as np


def unbroadcast(g, x):
    """Sum the cotangent ``g`` down to the shape of ``x`` (undo broadcasting)."""
    if isinstance(x, (list, tuple)):
        from .errors import TangentAstError

        raise TangentAstError(
            "a rule derived without example arguments met a list or tuple in + or *: "
            "for containers that means concatenation or repetition, not arithmetic",
            hint="derive with example arguments (derive(f, args=...), or grad/vjp) so kinds are known",
        )
    shape = np.shape(x)
    if np.shape(g) == shape:
        return g
    g = np.asarray(g)
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and g.shape[axis] != 1:
            g = g.sum(axis=axis, keepdims=True)
    if not isinstance(x, np.ndarray):
        return g[()] if g.ndim == 0 else g
    return g


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


def zeros_like(x):
    """A zero tangent for ``x``: ``0.0`` for a Python scalar, else zeros of its shape."""
    if isinstance(x, (float, int)):
        return 0.0
    if isinstance(x, complex):
        return 0j
    if isinstance(x, (tuple, list)) or is_record(x):
        return zero_tangent(x)
    return np.zeros_like(x, dtype=np.result_type(x, float))


# -- Tangents of containers (DESIGN §4): the same container holding tangents ------


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


def _rebuild(x, values):
    """An object of ``x``'s class holding ``values`` for its fields."""
    if isinstance(x, tuple) and hasattr(type(x), "_fields"):
        return type(x)(*values)
    if dataclasses.is_dataclass(x):
        new = copy.copy(x)
        for name, value in zip(record_fields(x), values, strict=True):
            object.__setattr__(new, name, value)
        return new
    return Tangent(**dict(zip(vars(x), values, strict=True)))


def zero_tangent(x):
    """The zero tangent of ``x``: 0.0, zeros, ``None`` for what has no tangent, and
    for containers and records the same structure holding zero tangents."""
    if isinstance(x, (bool, np.bool_, int, np.integer, str)) or x is None:
        return None
    if isinstance(x, (float, np.floating)):
        return 0.0
    if isinstance(x, np.ndarray):
        return np.zeros_like(x, dtype=float) if x.dtype.kind not in "fc" else np.zeros_like(x)
    if is_record(x):
        return _rebuild(x, [zero_tangent(getattr(x, n)) for n in record_fields(x)])
    if isinstance(x, (tuple, list)):
        return TangentTuple(zero_tangent(v) for v in x)
    if isinstance(x, dict):
        return {k: zero_tangent(v) for k, v in x.items()}
    return Tangent(**{k: zero_tangent(v) for k, v in vars(x).items()})


def add_tangents(a, b):
    """``a + b`` for tangents of any structure (``None`` is zero)."""
    if a is None:
        return b
    if b is None:
        return a
    if is_record(a) and isinstance(b, tuple) and not is_record(b):  # a record's fields by position
        return _rebuild(a, [add_tangents(x, y) for x, y in zip(a, b, strict=True)])
    if is_record(a):
        return _rebuild(a, [add_tangents(getattr(a, n), getattr(b, n)) for n in record_fields(a)])
    if isinstance(a, (tuple, list)):
        return TangentTuple(add_tangents(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        keys = list(a) + [k for k in b if k not in a]  # keep the primal's order
        return {k: add_tangents(a.get(k), b.get(k)) for k in keys}
    if isinstance(a, types.SimpleNamespace):
        return Tangent(**{k: add_tangents(getattr(a, k), getattr(b, k, None)) for k in vars(a)})
    return a + b


_FUNCTION_VALUE_RULES = (
    weakref.WeakKeyDictionary()
)  # function -> {(mode, wrt, arguments' key): rule}


def _rule_of_function_value(f, mode, wrt, args, kwargs):
    """The derived rule of ``f``, a function value called in a derived rule (a function
    passed in, or a closure), and the arguments to call it with (calling.py); closures
    of one function each keep their captured values."""
    from . import api
    from .calling import flat_arguments
    from .kinds import signature_key

    rules = _FUNCTION_VALUE_RULES.setdefault(f, {}) if inspect.isfunction(f) else None
    if rules is None:
        from .errors import TangentAstError

        raise TangentAstError(
            f"a derived rule called {getattr(f, '__qualname__', f)!r} passed as a function value, "
            "and only Python functions (def, closures) can be called that way",
            hint="wrap it in a def: def g(x): return np.sin(x), and pass g",
        )
    form, flat = flat_arguments(f, args, kwargs)  # the positional arguments come first
    key = (mode, wrt, form, signature_key(flat))
    if key not in rules or not rules[key].dependencies.current():  # redefined callees: derive again
        rules[key] = api.derive(f, mode, wrt, args=args, kwargs=kwargs)
    return rules[key], flat


def call_jvp(f, wrt, *args_and_tangents, **kwargs):
    """``(f(*args, **kwargs), its tangent)`` for a function value ``f``; the tangents of
    the positional arguments at positions ``wrt`` follow the arguments."""
    args = args_and_tangents[: len(args_and_tangents) - len(wrt)]
    tangents = args_and_tangents[len(args) :]
    rule, flat = _rule_of_function_value(f, "forward", wrt, args, kwargs)
    return rule.jvp(*flat, *tangents)


def call_fwd(f, wrt, *args, **kwargs):
    """``(f(*args, **kwargs), saved)`` for a function value ``f``; ``call_bwd(saved, ct)``
    gives the cotangents of the positional arguments at positions ``wrt``."""
    rule, flat = _rule_of_function_value(f, "reverse", wrt, args, kwargs)
    out, saved = rule.fwd(*flat)
    return out, (rule, saved)


def call_bwd(saved, ct):
    rule, inner = saved
    return rule.bwd(inner, ct)


def list_with(xs, i, v):
    """A new list: ``xs`` with item ``i`` replaced by ``v`` (``xs[i] = v`` on a local list).

    Tangents of lists (TangentTuple) stay tangents, so they keep adding element by element."""
    new = list(xs)
    new[i] = v
    return TangentTuple(new) if isinstance(xs, TangentTuple) else new


def list_vjp(ct, x):
    """Cotangent of ``x`` for ``list(x)``: the items' cotangents, as an array if ``x`` is one."""
    return np.asarray(ct) if isinstance(x, np.ndarray) else ct


def write_list(given, new):
    """``given[:] = new``: a list argument left as the function leaves it (and its tangent
    alongside it, in forward mode)."""
    if not isinstance(given, list):
        from .errors import TangentAstError

        raise TangentAstError(
            f"a list argument is updated in place, so its tangent must be a list "
            f"too, not {type(given).__name__}",
            hint="pass the tangent as a list",
        )
    given[:] = new


# Helpers with effects (they change an argument or run the user's code): derivative
# code keeps each call, in order, exactly once (simplify.is_pure).
EFFECTFUL = frozenset({write_list, call_jvp, call_fwd, call_bwd})


def replace_vjp(ct, changed):
    """Cotangent of ``p`` for ``dataclasses.replace(p, **changed)``: the changed fields' zeroed."""
    zero = zero_tangent(ct)
    return _rebuild(
        ct, [getattr(zero, n) if n in changed else getattr(ct, n) for n in record_fields(ct)]
    )


def getattr_vjp(ct, x, name):
    """Cotangent of ``x`` for ``x.name``: zero tangents, with ``ct`` for that field."""
    zero = zero_tangent(x)
    values = [
        ct if n == name else getattr(zero, n)
        for n in (record_fields(x) if is_record(x) else list(vars(x)))
    ]
    return _rebuild(x, values)


def sum_vjp(ct, x, axis=None, keepdims=False):
    """Cotangent of ``x`` for ``np.sum(x, axis, keepdims)``: ``ct`` spread back."""
    shape = np.shape(x)
    if not shape:  # a number (NumPy accepts axis=0 or -1 for it): its cotangent is ct itself
        return _like(np.reshape(ct, ()), x)
    if axis is not None and not keepdims:
        ct = np.expand_dims(ct, axis)
    return np.broadcast_to(ct, shape).copy()


def mean_vjp(ct, x, axis=None, keepdims=False):
    """Cotangent of ``x`` for ``np.mean``: the sum's, divided by the count."""
    count = np.size(x) / np.size(np.mean(x, axis=axis, keepdims=keepdims))
    return sum_vjp(ct, x, axis, keepdims) / count


def matmul_vjp_left(ct, x, y):
    """Cotangent of ``x`` in ``x @ y`` for any ranks (vectors, matrices, stacks)."""
    if np.ndim(y) == 1:
        return unbroadcast(np.multiply.outer(ct, y) if np.ndim(x) > 1 else ct * y, x)
    if np.ndim(x) == 1:
        return (
            unbroadcast(y @ ct, x)
            if np.ndim(y) == 2
            else unbroadcast(np.swapaxes(y, -1, -2) @ ct[..., None], x)
        )
    return unbroadcast(ct @ np.swapaxes(y, -1, -2), x)


def matmul_vjp_right(ct, x, y):
    """Cotangent of ``y`` in ``x @ y`` for any ranks."""
    if np.ndim(x) == 1:
        return unbroadcast(np.multiply.outer(x, ct) if np.ndim(y) > 1 else ct * x, y)
    if np.ndim(y) == 1:
        return (
            unbroadcast(np.swapaxes(x, -1, -2) @ ct, y)
            if np.ndim(x) == 2
            else unbroadcast((np.swapaxes(x, -1, -2) @ ct[..., None])[..., 0], y)
        )
    return unbroadcast(np.swapaxes(x, -1, -2) @ ct, y)


def _dot_axes(x, y):
    """np.dot as a tensordot: the last axis of x against the second-to-last of y (its only one for a vector)."""
    return [np.ndim(x) - 1], [max(np.ndim(y) - 2, 0)]


def dot_vjp_left(ct, x, y):
    """Cotangent of ``x`` in ``np.dot(x, y)`` for any ranks (a scalar factor included)."""
    if np.ndim(x) == 0 or np.ndim(y) == 0:
        return unbroadcast(ct * y, x)
    if np.ndim(x) <= 2 and np.ndim(y) <= 2:
        return matmul_vjp_left(ct, x, y)
    return tensordot_vjp_left(ct, x, y, _dot_axes(x, y))


def dot_vjp_right(ct, x, y):
    """Cotangent of ``y`` in ``np.dot(x, y)`` for any ranks (a scalar factor included)."""
    if np.ndim(x) == 0 or np.ndim(y) == 0:
        return unbroadcast(ct * x, y)
    if np.ndim(x) <= 2 and np.ndim(y) <= 2:
        return matmul_vjp_right(ct, x, y)
    return tensordot_vjp_right(ct, x, y, _dot_axes(x, y))


def full_like_jvp(dv, ans):
    """Tangent of ``np.full_like(a, v)``: ``dv`` everywhere, or 0 if ``a`` is not a float
    array (its dtype truncates v, so the result does not change with v)."""
    if np.result_type(ans).kind not in "fc":
        return np.zeros(np.shape(ans))
    return np.full(np.shape(ans), dv, dtype=np.result_type(ans, dv))


def full_like_vjp(ct, ans, fill_value):
    """Cotangent of ``v`` in ``np.full_like(a, v)``: ``ct`` summed to ``v``'s shape."""
    if np.result_type(ans).kind not in "fc":
        return zero_tangent(fill_value)
    return unbroadcast(ct, fill_value)


def transpose_vjp(ct, axes=None):
    """Cotangent for ``np.transpose(x, axes)``: transpose back."""
    if axes is None:
        return np.transpose(ct)
    return np.transpose(ct, np.argsort(axes))


def _basic(index):
    """Basic indexing (ints, slices, None, ...) never selects an element twice."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(p is None or p is Ellipsis or isinstance(p, (int, np.integer, slice)) for p in parts)


def _numpy_result(x):
    """A tuple result of a NumPy function (``EighResult``, ``SVDResult``, ...): its
    cotangent is a plain ``TangentTuple``, which adds elementwise even where the
    transformer cannot tell the value is a container and sums cotangents with ``+``."""
    return isinstance(x, tuple) and (getattr(type(x), "__module__", "") or "").startswith("numpy")


def getitem_vjp(ct, x, index):
    """Cotangent of ``x`` for ``x[index]``: ``ct`` placed into zeros, summed where indices repeat."""
    if isinstance(x, (tuple, list)):
        parts = list(zero_tangent(x))
        parts[index] = ct
        return _rebuild(x, parts) if is_record(x) and not _numpy_result(x) else TangentTuple(parts)
    if isinstance(x, dict):
        result = zero_tangent(x)
        result[index] = ct
        return result
    result = np.zeros(np.shape(x), dtype=np.result_type(ct, float))
    if _basic(index):
        result[index] = ct
    else:
        np.add.at(result, index, ct)
    return result


# ---------------------------------------------------------------------------
# Helpers for the NumPy and linear-algebra rule tables (tangent_ast/rules/numpy.py,
# tangent_ast/rules/linalg.py). Each mirrors the parameter order of the NumPy
# function it serves, after the leading (co)tangent and result.


def _axes(axis, ndim):
    """``axis`` (None, int or tuple) as a sorted tuple of non-negative ints."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(sorted(a % ndim for a in axis))
    return (axis % ndim,)


def _keep(g, x, axis, keepdims):
    """A reduction's result (or cotangent) ``g`` with the reduced axes kept as size 1."""
    ndim = np.ndim(x)
    if keepdims or ndim == 0:
        return g
    return np.reshape(g, [1 if i in _axes(axis, ndim) else n for i, n in enumerate(np.shape(x))])


def _like(g, x):
    """``g`` as a value of the kind of ``x``: a Python float for a Python scalar."""
    if not isinstance(x, np.ndarray) and np.ndim(g) == 0:
        return float(np.real(g)) if not np.iscomplexobj(g) else complex(g)
    return g


def reduce_count(x, axis=None):
    """How many elements a reduction over ``axis`` combines."""
    shape = np.shape(x)
    return int(np.prod([shape[a] for a in _axes(axis, len(shape))]))


def extremum_mask(ans, x, axis=None, keepdims=False):
    """Where ``x`` attains a max/min ``ans`` along ``axis``, as weights summing to 1 (ties share)."""
    mask = (np.asarray(x) == _keep(ans, x, axis, keepdims)).astype(float)
    return mask / np.sum(mask, axis=_axes(axis, np.ndim(x)), keepdims=True)


def extremum_jvp(dx, ans, x, axis=None, out=None, keepdims=False, **kwargs):
    """Tangent of ``np.max``/``np.min``: the tangent at the extremum (averaged over ties)."""
    w = extremum_mask(ans, x, axis, keepdims)
    t = np.sum(w * dx, axis=_axes(axis, np.ndim(x)), keepdims=keepdims)
    return _like(t, ans)


def extremum_vjp(ct, ans, x, axis=None, out=None, keepdims=False, **kwargs):
    """Cotangent of ``x`` for ``np.max``/``np.min``: ``ct`` at the extremum (shared over ties)."""
    w = extremum_mask(ans, x, axis, keepdims)
    return _like(w * _keep(ct, x, axis, keepdims), x)


def ptp_jvp(dx, ans, x, axis=None, out=None, keepdims=False):
    hi, lo = np.max(x, axis=axis, keepdims=keepdims), np.min(x, axis=axis, keepdims=keepdims)
    return extremum_jvp(dx, hi, x, axis, keepdims=keepdims) - extremum_jvp(
        dx, lo, x, axis, keepdims=keepdims
    )


def ptp_vjp(ct, ans, x, axis=None, out=None, keepdims=False):
    hi, lo = np.max(x, axis=axis, keepdims=keepdims), np.min(x, axis=axis, keepdims=keepdims)
    return extremum_vjp(ct, hi, x, axis, keepdims=keepdims) - extremum_vjp(
        ct, lo, x, axis, keepdims=keepdims
    )


def _prod_others(x, axis):
    """Per element, the product of the *other* elements along the reduced axes (no division)."""
    x = np.asarray(x, dtype=np.result_type(x, float))
    axes = _axes(axis, x.ndim)
    if x.ndim == 0:
        return np.ones_like(x)
    rest = [a for a in range(x.ndim) if a not in axes]
    moved = np.transpose(x, rest + list(axes))
    flat = moved.reshape(moved.shape[: len(rest)] + (-1,))
    ones = np.ones(flat.shape[:-1] + (1,), dtype=flat.dtype)
    left = np.cumprod(np.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
    right = np.flip(
        np.cumprod(np.flip(np.concatenate([flat[..., 1:], ones], axis=-1), -1), axis=-1), -1
    )
    others = (left * right).reshape(moved.shape)
    return np.transpose(others, np.argsort(rest + list(axes)))


def prod_jvp(dx, ans, x, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    """Tangent of ``np.prod``: correct also where elements are zero."""
    t = np.sum(_prod_others(x, axis) * dx, axis=_axes(axis, np.ndim(x)), keepdims=keepdims)
    return _like(t, ans)


def prod_vjp(ct, ans, x, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    """Cotangent of ``x`` for ``np.prod``."""
    return _like(_prod_others(x, axis) * _keep(ct, x, axis, keepdims), x)


def var_jvp(dx, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    """Tangent of ``np.var``: ``2 <x - mean, dx> / (N - ddof)``."""
    centered = x - np.mean(x, axis=axis, keepdims=True)
    t = (
        2
        * np.sum(centered * dx, axis=_axes(axis, np.ndim(x)), keepdims=keepdims)
        / (reduce_count(x, axis) - ddof)
    )
    return _like(t, ans)


def var_vjp(ct, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    """Cotangent of ``x`` for ``np.var``."""
    centered = x - np.mean(x, axis=axis, keepdims=True)
    return _like(2 * centered * _keep(ct, x, axis, keepdims) / (reduce_count(x, axis) - ddof), x)


def _half_over(ans):
    """``1 / (2 * std)``, and 0 where the std is 0: a single element's std is 0 whatever its
    value (derivative 0), and at equal elements the std has no derivative, only a kink."""
    ans = np.asarray(ans, dtype=float)
    zero = ans == 0
    return np.where(zero, 0.0, 0.5 / np.where(zero, 1.0, ans))


def std_jvp(dx, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    """Tangent of ``np.std``: the variance's over ``2 * std``."""
    return _like(var_jvp(dx, ans, x, axis, ddof=ddof, keepdims=keepdims) * _half_over(ans), ans)


def std_vjp(ct, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    """Cotangent of ``x`` for ``np.std``."""
    return var_vjp(ct * _half_over(ans), ans, x, axis, ddof=ddof, keepdims=keepdims)


def cumsum_vjp(ct, x, axis=None, dtype=None, out=None):
    """Cotangent of ``x`` for ``np.cumsum``: a reversed cumulative sum."""
    if axis is None:
        return np.reshape(np.flip(np.cumsum(np.flip(np.ravel(ct)))), np.shape(x))
    return np.flip(np.cumsum(np.flip(ct, axis), axis), axis)


def cumprod_jvp(dx, ans, x, axis=None, dtype=None, out=None):
    """Tangent of ``np.cumprod`` (for non-zero elements): ``ans * cumsum(dx / x)``."""
    if axis is None:
        return ans * np.cumsum(np.ravel(dx) / np.ravel(x))
    return ans * np.cumsum(dx / x, axis)


def cumprod_vjp(ct, ans, x, axis=None, dtype=None, out=None):
    """Cotangent of ``x`` for ``np.cumprod`` (for non-zero elements)."""
    return cumsum_vjp(ct * ans, x, axis) / x


def diff_vjp(ct, x, n=1, axis=-1, prepend=None, append=None):
    """Cotangent of ``x`` for ``np.diff``: the adjoint of a difference, ``n`` times."""
    if prepend is not None or append is not None:
        raise NotImplementedError("the reverse rule of np.diff supports no prepend/append")
    for _ in range(n):
        pad = [(0, 0)] * np.ndim(ct)
        pad[axis] = (1, 1)
        ct = -np.diff(np.pad(ct, pad), axis=axis)
    return ct


def mean_jvp(dx, ans, x, axis=None, weights=None, returned=False, keepdims=False):
    """Tangent of ``np.average`` without weights: a mean."""
    if weights is not None or returned:
        raise NotImplementedError("np.average rules support no weights and no returned=True")
    return _like(np.mean(dx, axis=axis, keepdims=keepdims), ans)


def average_vjp(ct, ans, x, axis=None, weights=None, returned=False, keepdims=False):
    """Cotangent of ``x`` for ``np.average`` without weights."""
    if weights is not None or returned:
        raise NotImplementedError("np.average rules support no weights and no returned=True")
    return _like(mean_vjp(ct, x, axis, keepdims), x)


def moveaxis_vjp(ct, source, destination):
    return np.moveaxis(ct, destination, source)


def roll_vjp(ct, shift, axis=None):
    """Cotangent for ``np.roll``: roll back."""
    back = tuple(-s for s in shift) if isinstance(shift, (tuple, list)) else -shift
    return np.roll(ct, back, axis)


def tile_vjp(ct, x, reps):
    """Cotangent of ``x`` for ``np.tile``: sum the copies."""
    shape = np.shape(x)
    reps = (reps,) if np.ndim(reps) == 0 else tuple(reps)
    ndim = max(len(shape), len(reps))
    full = (1,) * (ndim - len(shape)) + tuple(shape)
    reps = (1,) * (ndim - len(reps)) + reps
    split = [n for pair in zip(reps, full, strict=True) for n in pair]
    g = np.reshape(ct, split).sum(axis=tuple(range(0, 2 * ndim, 2)))
    return np.reshape(g, shape)


def repeat_vjp(ct, x, repeats, axis=None):
    """Cotangent of ``x`` for ``np.repeat``: sum each element's repeats."""
    shape = np.shape(x)
    if axis is None:
        ct, flat_len = np.ravel(ct), int(np.size(x))
        axis_len, axis = flat_len, 0
    else:
        axis_len = shape[axis]
    starts = np.concatenate([[0], np.cumsum(np.broadcast_to(repeats, (axis_len,)))[:-1]]).astype(
        int
    )
    g = np.add.reduceat(ct, starts, axis=axis) if axis_len else ct
    counts = np.broadcast_to(repeats, (axis_len,))
    if np.any(counts == 0):  # reduceat cannot express empty groups
        idx = [slice(None)] * np.ndim(g)
        idx[axis] = counts == 0
        g = np.array(g)
        g[tuple(idx)] = 0
    return np.reshape(g, shape)


def diag_vjp(ct, x, k=0):
    """Cotangent of ``x`` for ``np.diag``: the diagonal back, or a vector placed on it."""
    if np.ndim(x) == 1:
        return np.diagonal(ct, k).copy()
    return _diag_into(ct, x, k)


def _diag_into(ct, x, k):
    g = np.zeros(np.shape(x), dtype=np.result_type(ct, float))
    n = len(ct)
    rows = np.arange(n) + max(-k, 0)
    cols = np.arange(n) + max(k, 0)
    g[rows, cols] = ct
    return g


def diagonal_vjp(ct, x, offset=0, axis1=0, axis2=1):
    """Cotangent of ``x`` for ``np.diagonal``/``np.trace``: ``ct`` on the diagonal."""
    x_shape = np.shape(x)
    eye = np.eye(x_shape[axis1], x_shape[axis2], k=offset)
    n = int(eye.sum())
    eye = eye.reshape(eye.shape + (1,) * (len(x_shape) - 2))
    # eye[i, j] * ct[..., d(i, j)] in moved-axes layout, then move the axes back
    ct = np.asarray(ct)
    rows = np.arange(n) + max(-offset, 0)
    cols = np.arange(n) + max(offset, 0)
    rest = [
        s for i, s in enumerate(x_shape) if i not in (axis1 % len(x_shape), axis2 % len(x_shape))
    ]
    g = np.zeros([x_shape[axis1], x_shape[axis2]] + rest, dtype=np.result_type(ct, float))
    g[rows, cols] = np.moveaxis(ct, -1, 0) if ct.ndim else ct
    return np.moveaxis(g, [0, 1], [axis1 % len(x_shape), axis2 % len(x_shape)])


def trace_vjp(ct, x, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Cotangent of ``x`` for ``np.trace``."""
    n = len(np.diagonal(x, offset, axis1, axis2).T) if np.ndim(x) else 0
    ct = np.broadcast_to(np.asarray(ct)[..., None], np.shape(ct) + (n,))
    return diagonal_vjp(ct, x, offset, axis1, axis2)


def sort_jvp(dx, x, axis=-1, kind=None, order=None):
    """Tangent of ``np.sort``: the tangent permuted like ``x``."""
    if axis is None:
        return np.ravel(dx)[np.argsort(np.ravel(x), kind=kind)]
    return np.take_along_axis(dx, np.argsort(x, axis=axis, kind=kind), axis=axis)


def sort_vjp(ct, x, axis=-1, kind=None, order=None):
    """Cotangent of ``x`` for ``np.sort``: ``ct`` permuted back."""
    if axis is None:
        g = np.empty(np.size(x), dtype=np.result_type(ct, float))
        g[np.argsort(np.ravel(x), kind=kind)] = ct
        return np.reshape(g, np.shape(x))
    g = np.empty(np.shape(x), dtype=np.result_type(ct, float))
    np.put_along_axis(g, np.argsort(x, axis=axis, kind=kind), ct, axis=axis)
    return g


def clip_mask(x, a_min, a_max):
    """Where ``np.clip(x, a_min, a_max)`` passes ``x`` through."""
    inside = np.ones(np.shape(x), dtype=bool)
    if a_min is not None:
        inside = inside & (x >= a_min)
    if a_max is not None:
        inside = inside & (x <= a_max)
    return inside


def xlogy(a, b):
    """``a * log(b)``, and 0 where ``a`` is 0: the derivative ``b ** y * log(b)`` of a power
    in its exponent, which tends to 0 as the base ``b`` tends to 0 (``0.0 ** y`` for ``y > 0``)."""
    if np.ndim(a) == 0 and np.ndim(b) == 0:
        return 0.0 if a == 0 else a * np.log(b)
    zero = np.asarray(a) == 0
    return np.where(zero, 0.0, a * np.log(np.where(zero, 1.0, b)))


def sinc_derivative(x):
    """``d sinc(x) / dx`` with its limit 0 at ``x = 0``."""
    x = np.asarray(x, dtype=float)
    safe = np.where(x == 0, 1.0, x)
    d = np.where(x == 0, 0.0, (np.cos(np.pi * safe) - np.sinc(safe)) / safe)
    return d if d.ndim else float(d)


def astype_vjp(ct, x):
    """Cotangent of ``x`` for ``x.astype(...)``: ``ct`` in ``x``'s dtype."""
    return np.asarray(ct).astype(np.result_type(x, float)) if isinstance(x, np.ndarray) else ct


# --- linear algebra -------------------------------------------------------------------


def _T(a):
    return np.swapaxes(a, -1, -2)


def inner_vjp_left(ct, x, y):
    """Cotangent of ``x`` for ``np.inner(x, y)``."""
    nx, ny = np.ndim(x), np.ndim(y)
    if nx == 0:
        return _like(np.sum(ct * y), x)
    if ny == 0:
        return ct * y
    g = np.tensordot(ct, y, axes=(list(range(nx - 1, np.ndim(ct))), list(range(ny - 1))))
    return np.reshape(g, np.shape(x))


def inner_vjp_right(ct, x, y):
    """Cotangent of ``y`` for ``np.inner(x, y)``."""
    nx, ny = np.ndim(x), np.ndim(y)
    if ny == 0:
        return _like(np.sum(ct * x), y)
    if nx == 0:
        return ct * x
    g = np.tensordot(ct, x, axes=(list(range(nx - 1)), list(range(nx - 1))))
    return np.reshape(g, np.shape(y))


def _tensordot_axes(x, y, axes):
    if np.ndim(axes) == 0:
        n = int(axes)
        return list(range(np.ndim(x) - n, np.ndim(x))), list(range(n))
    a, b = axes
    a = [a] if np.ndim(a) == 0 else list(a)
    b = [b] if np.ndim(b) == 0 else list(b)
    return [i % np.ndim(x) for i in a], [i % np.ndim(y) for i in b]


def tensordot_vjp_left(ct, x, y, axes=2):
    """Cotangent of ``x`` for ``np.tensordot(x, y, axes)``."""
    ax, ay = _tensordot_axes(x, y, axes)
    free_x = [i for i in range(np.ndim(x)) if i not in ax]
    free_y = [i for i in range(np.ndim(y)) if i not in ay]
    g = np.tensordot(ct, y, axes=(list(range(len(free_x), np.ndim(ct))), free_y))
    order = free_x + [ax[k] for k in np.argsort(ay)]
    return np.transpose(g, np.argsort(order))


def tensordot_vjp_right(ct, x, y, axes=2):
    """Cotangent of ``y`` for ``np.tensordot(x, y, axes)``."""
    ax, ay = _tensordot_axes(x, y, axes)
    free_x = [i for i in range(np.ndim(x)) if i not in ax]
    free_y = [i for i in range(np.ndim(y)) if i not in ay]
    g = np.tensordot(x, ct, axes=(free_x, list(range(len(free_x)))))
    order = [ay[k] for k in np.argsort(ax)] + free_y
    return np.transpose(g, np.argsort(order))


def _kron_cotangent(ct, x, y, of_left):
    """Cotangent of one factor of ``np.kron(x, y)``: contract ``ct`` with the other."""
    nd = max(np.ndim(x), np.ndim(y))
    xs = (1,) * (nd - np.ndim(x)) + np.shape(x)
    ys = (1,) * (nd - np.ndim(y)) + np.shape(y)
    r = np.reshape(ct, [n for pair in zip(xs, ys, strict=True) for n in pair])
    other, other_shape, start = (y, ys, 1) if of_left else (x, xs, 0)
    g = np.tensordot(
        r, np.reshape(other, other_shape), axes=(list(range(start, 2 * nd, 2)), list(range(nd)))
    )
    mine = x if of_left else y
    return _like(np.reshape(g, np.shape(mine)), mine)


def kron_vjp_left(ct, x, y):
    """Cotangent of ``x`` for ``np.kron(x, y)``."""
    return _kron_cotangent(ct, x, y, of_left=True)


def kron_vjp_right(ct, x, y):
    """Cotangent of ``y`` for ``np.kron(x, y)``."""
    return _kron_cotangent(ct, x, y, of_left=False)


def det_jvp(dx, ans, x):
    """Tangent of ``det(x)``: ``det(x) tr(x^-1 dx)``."""
    return _like(ans * np.einsum("...ij,...ji->...", np.linalg.inv(x), dx), ans)


def det_vjp(ct, ans, x):
    """Cotangent of ``x`` for ``det(x)``: ``ct det(x) x^-T``."""
    return (np.asarray(ct) * ans)[..., None, None] * _T(np.linalg.inv(x))


def solve_jvp_a(da, ans, a, b):
    """Tangent of ``solve(a, b)`` along ``a``: ``-a^-1 da ans``."""
    if np.ndim(b) == 1:
        return -np.linalg.solve(a, (da @ ans[..., None]))[..., 0]
    return -np.linalg.solve(a, da @ ans)


def solve_vjp_a(ct, ans, a, b):
    """Cotangent of ``a`` for ``solve(a, b)``: ``-(a^-T ct) ans^T``."""
    if np.ndim(b) == 1:
        gb = np.linalg.solve(_T(a), ct[..., None])
        return unbroadcast(-gb @ ans[..., None, :], a)
    return unbroadcast(-np.linalg.solve(_T(a), ct) @ _T(ans), a)


def solve_vjp_b(ct, ans, a, b):
    """Cotangent of ``b`` for ``solve(a, b)``: ``a^-T ct``."""
    if np.ndim(b) == 1:
        return unbroadcast(np.linalg.solve(_T(a), ct[..., None])[..., 0], b)
    return unbroadcast(np.linalg.solve(_T(a), ct), b)


def _phi(x):
    """The lower triangle of ``x`` with its diagonal halved."""
    return np.tril(x) - 0.5 * np.eye(x.shape[-1]) * x


def _symmetric_from_lower(x):
    """The symmetric matrix whose lower triangle is that of ``x`` (what cholesky reads)."""
    return np.tril(x) + _T(np.tril(x, -1))


def cholesky_jvp(dx, ans, x):
    """Tangent of ``L = cholesky(x)``: ``L phi(L^-1 dx L^-T)`` (the lower triangle of ``dx``)."""
    inv_l = np.linalg.inv(ans)
    return ans @ _phi(inv_l @ _symmetric_from_lower(dx) @ _T(inv_l))


def cholesky_vjp(ct, ans, x):
    """Cotangent of ``x`` for ``cholesky(x)``, on the lower triangle it reads."""
    inv_l = np.linalg.inv(ans)
    s = _T(inv_l) @ _phi(_T(ans) @ ct) @ inv_l
    g = 0.5 * (s + _T(s))
    return np.tril(g + _T(g)) - np.eye(g.shape[-1]) * g


def _norm_kind(x, ord, axis):
    ndim = np.ndim(x)
    if axis is None:
        return ("vector" if ndim <= 1 or ord is None else "matrix"), (
            None if ndim <= 1 or ord is None else (0, 1)
        )
    if isinstance(axis, (tuple, list)) and len(axis) == 2:
        return "matrix", tuple(axis)
    return "vector", axis


def norm_grad(ans, x, ord=None, axis=None, keepdims=False):
    """``d norm(x) / dx`` for the supported orders, with the result's axes kept."""
    kind, ax = _norm_kind(x, ord, axis)
    x = np.asarray(x, dtype=np.result_type(x, float))
    n = _keep(ans, x, ax, keepdims) if np.ndim(x) else ans
    if kind == "vector" or ord == "fro":
        if ord in (None, 2, "fro"):
            return x / np.where(n == 0, 1.0, n)
        if ord == 1:
            return np.sign(x)
        if ord in (np.inf, -np.inf):
            return np.sign(x) * extremum_mask(n, np.abs(x), ax, keepdims=True)
        if np.ndim(ord) == 0 and ord not in (0,):
            return np.sign(x) * (np.abs(x) / n) ** (ord - 1)
    if kind == "matrix" and ord in (2, "nuc") and ax in ((0, 1), (-2, -1)) and np.ndim(x) == 2:
        u, s, vt = np.linalg.svd(x, full_matrices=False)
        return np.outer(u[:, 0], vt[0]) if ord == 2 else u @ vt
    raise NotImplementedError(f"no derivative of np.linalg.norm for ord={ord!r}, axis={axis!r}")


def norm_jvp(dx, ans, x, ord=None, axis=None, keepdims=False):
    """Tangent of ``np.linalg.norm``."""
    kind, ax = _norm_kind(x, ord, axis)
    g = norm_grad(ans, x, ord, axis, keepdims)
    return _like(np.sum(g * dx, axis=ax, keepdims=keepdims), ans)


def norm_vjp(ct, ans, x, ord=None, axis=None, keepdims=False):
    """Cotangent of ``x`` for ``np.linalg.norm``."""
    kind, ax = _norm_kind(x, ord, axis)
    g = norm_grad(ans, x, ord, axis, keepdims)
    return _like(g * (_keep(ct, x, ax, keepdims) if np.ndim(x) else ct), x)


def matrix_power_jvp(dx, ans, x, n):
    """Tangent of ``matrix_power(x, n)``."""
    if n < 0:
        inv = np.linalg.inv(x)
        return matrix_power_jvp(-inv @ dx @ inv, ans, inv, -n)
    powers = [np.broadcast_to(np.eye(np.shape(x)[-1]), np.shape(x))]
    for _ in range(n - 1):
        powers.append(powers[-1] @ x)
    return sum((powers[k] @ dx @ powers[n - 1 - k] for k in range(n)), np.zeros(np.shape(x)))


def matrix_power_vjp(ct, ans, x, n):
    """Cotangent of ``x`` for ``matrix_power(x, n)``."""
    if n < 0:
        inv = np.linalg.inv(x)
        g = matrix_power_vjp(ct, ans, inv, -n)
        return -_T(inv) @ g @ _T(inv)
    xt = _T(np.asarray(x))
    powers = [np.broadcast_to(np.eye(np.shape(x)[-1]), np.shape(x))]
    for _ in range(n - 1):
        powers.append(powers[-1] @ xt)
    return sum((powers[k] @ ct @ powers[n - 1 - k] for k in range(n)), np.zeros(np.shape(x)))


def pinv_jvp(dx, ans, x, *args, **kwargs):
    """Tangent of ``pinv(x)`` (constant rank): Golub and Pereyra's formula."""
    p, dxt = ans, _T(dx)
    eye_m, eye_n = np.eye(np.shape(x)[-2]), np.eye(np.shape(x)[-1])
    return -p @ dx @ p + p @ _T(p) @ dxt @ (eye_m - x @ p) + (eye_n - p @ x) @ dxt @ _T(p) @ p


def pinv_vjp(ct, ans, x, *args, **kwargs):
    """Cotangent of ``x`` for ``pinv(x)`` (constant rank)."""
    p, gt = ans, _T(ct)
    eye_m, eye_n = np.eye(np.shape(x)[-2]), np.eye(np.shape(x)[-1])
    return -_T(p) @ ct @ _T(p) + (eye_m - x @ p) @ gt @ p @ _T(p) + _T(p) @ p @ gt @ (eye_n - p @ x)


def slogdet_jvp(dx, ans, x):
    """Tangent of ``slogdet(x)``: ``(0, tr(x^-1 dx))`` (the sign is locally constant)."""
    return (
        np.zeros_like(ans[0], dtype=float) if np.ndim(ans[0]) else 0.0,
        _like(np.einsum("...ij,...ji->...", np.linalg.inv(x), dx), ans[1]),
    )


def slogdet_vjp(ct, ans, x):
    """Cotangent of ``x`` for ``slogdet(x)``: ``ct[1] x^-T`` (``ct`` indexed like the result;
    the sign has no cotangent, and a missing one for ``logabsdet`` is zero)."""
    ct_log = None if ct is None else ct[1]
    if ct_log is None:
        return np.zeros(np.shape(x), dtype=np.result_type(x, float))
    return np.asarray(ct_log)[..., None, None] * _T(np.linalg.inv(x))


def eigvalsh_jvp(dx, ans, x, UPLO="L"):
    """Tangent of ``eigvalsh(x)`` (distinct eigenvalues): ``diag(V^T dx V)`` on the triangle read."""
    _, v = np.linalg.eigh(x, UPLO)
    d = _symmetric_from_lower(dx) if UPLO == "L" else _T(_symmetric_from_lower(_T(dx)))
    return np.einsum("...ji,...jk,...ki->...i", v, d, v)


def eigvalsh_vjp(ct, ans, x, UPLO="L"):
    """Cotangent of ``x`` for ``eigvalsh(x)``: ``V diag(ct) V^T`` on the triangle read."""
    _, v = np.linalg.eigh(x, UPLO)
    g = (v * np.asarray(ct)[..., None, :]) @ _T(v)
    lower = np.tril(g + _T(g)) - np.eye(g.shape[-1]) * g
    return lower if UPLO == "L" else _T(lower)


def take_vjp(ct, x, indices, axis=None, out=None, mode="raise"):
    """Cotangent of ``x`` for ``np.take``: ``ct`` added back at the indices taken."""
    g = np.zeros(
        np.shape(x) if axis is not None else (np.size(x),), dtype=np.result_type(ct, float)
    )
    if axis is None:
        np.add.at(g, np.asarray(indices), ct)
        return np.reshape(g, np.shape(x))
    axis = axis % np.ndim(x)
    moved = np.moveaxis(g, axis, 0)  # a view: writes reach g
    ct = np.asarray(ct)
    idx_nd = np.ndim(indices)
    np.add.at(
        moved,
        np.asarray(indices),
        np.moveaxis(ct, list(range(axis, axis + idx_nd)), list(range(idx_nd))),
    )
    return g


def pad_vjp(ct, x, pad_width, mode="constant", **kwargs):
    """Cotangent of ``x`` for ``np.pad`` in ``constant`` mode: the middle of ``ct``."""
    if mode != "constant":
        raise NotImplementedError(
            f"the reverse rule of np.pad supports mode='constant' only, not {mode!r}"
        )
    widths = np.broadcast_to(np.asarray(pad_width, dtype=int), (np.ndim(x), 2))
    return ct[tuple(slice(lo, lo + n) for (lo, _), n in zip(widths, np.shape(x), strict=True))]


def _einsum_parts(subscripts, n):
    if "->" not in subscripts or "." in subscripts:
        raise NotImplementedError(
            "einsum rules need explicit '->' output subscripts and no ellipsis"
        )
    inputs, output = subscripts.replace(" ", "").split("->")
    inputs = inputs.split(",")
    if len(inputs) != n:
        raise ValueError("einsum: the number of operands does not match the subscripts")
    return inputs, output


def einsum_jvp(dx, argnum, subscripts, *operands):
    """Tangent of ``np.einsum`` along operand ``argnum``: the same contraction with ``dx`` there."""
    ops = list(operands)
    ops[argnum] = dx
    return np.einsum(subscripts, *ops)


def einsum_vjp(ct, argnum, subscripts, *operands):
    """Cotangent of operand ``argnum`` of ``np.einsum`` (explicit output, no ellipsis)."""
    inputs, output = _einsum_parts(subscripts, len(operands))
    target = inputs[argnum]
    if len(set(target)) != len(target):
        raise NotImplementedError("einsum rules support no repeated index within one operand")
    others = [
        (s, op) for i, (s, op) in enumerate(zip(inputs, operands, strict=True)) if i != argnum
    ]
    present = set(output).union(*(set(s) for s, _ in others))
    kept = "".join(c for c in target if c in present)
    g = np.einsum(
        ",".join([output] + [s for s, _ in others]) + "->" + kept, ct, *[op for _, op in others]
    )
    if (
        kept != target
    ):  # an index only this operand has: the contraction sums it, so spread ct over it
        shape = np.shape(operands[argnum])
        g = np.reshape(g, [shape[i] if c in kept else 1 for i, c in enumerate(target)])
        g = np.broadcast_to(g, shape).copy()
    return g


# ---------------------------------------------------------------------------
# Issue 5, second batch: NaN-aware reductions, quantiles, array-API functions,
# interpolation and signal functions, selections.


def _not_nan(x):
    return ~np.isnan(x)


def nansum_vjp(ct, x, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    """Cotangent of ``x`` for ``np.nansum``: the sum's, zero where ``x`` is NaN."""
    return _like(np.where(np.isnan(x), 0.0, sum_vjp(ct, x, axis, keepdims)), x)


def nanmean_vjp(ct, x, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    """Cotangent of ``x`` for ``np.nanmean``: ``ct`` over the count of non-NaN elements."""
    count = np.sum(_not_nan(x), axis=_axes(axis, np.ndim(x)), keepdims=True)
    return _like(np.where(np.isnan(x), 0.0, _keep(ct, x, axis, keepdims) / count), x)


def nanprod_jvp(dx, ans, x, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    """Tangent of ``np.nanprod``: the product's, with NaNs as ones."""
    return prod_jvp(
        np.where(np.isnan(x), 0.0, dx), ans, np.where(np.isnan(x), 1.0, x), axis, keepdims=keepdims
    )


def nanprod_vjp(ct, ans, x, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    """Cotangent of ``x`` for ``np.nanprod``."""
    g = prod_vjp(ct, ans, np.where(np.isnan(x), 1.0, x), axis, keepdims=keepdims)
    return _like(np.where(np.isnan(x), 0.0, g), x)


def _quantile_weights(x, q, axis):
    """Weights ``w`` with ``quantile(x, q, axis) == sum(w * x_moved, -1)`` (linear method).

    ``x_moved`` is ``x`` with ``axis`` last (flattened for ``axis=None``); ``w`` has
    shape ``q.shape + x_moved.shape``.
    """
    if isinstance(axis, (tuple, list)):
        raise NotImplementedError("quantile derivatives over a tuple of axes are not supported")
    xm = np.ravel(x) if axis is None else np.moveaxis(np.asarray(x), axis, -1)
    n = xm.shape[-1]
    order = np.argsort(xm, axis=-1)
    qs = np.asarray(q, dtype=float)
    weights = []
    for qv in np.ravel(qs):
        pos = qv * (n - 1)
        lo = min(int(np.floor(pos)), n - 1)
        hi = min(lo + 1, n - 1)
        on_sorted = np.zeros(n)
        on_sorted[lo] += 1 - (pos - lo)
        on_sorted[hi] += pos - lo
        w = np.zeros(xm.shape)
        np.put_along_axis(w, order, np.broadcast_to(on_sorted, xm.shape), axis=-1)
        weights.append(w)
    return xm, np.reshape(np.array(weights), qs.shape + xm.shape)


def _check_linear(method):
    if method != "linear":
        raise NotImplementedError(
            f"quantile derivatives support method='linear' only, not {method!r}"
        )


def quantile_jvp(
    dx,
    ans,
    x,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    **kwargs,
):
    """Tangent of ``np.quantile`` (linear interpolation between order statistics)."""
    _check_linear(method)
    xm, w = _quantile_weights(x, q, axis)
    dxm = np.ravel(dx) if axis is None else np.moveaxis(np.asarray(dx), axis, -1)
    return _like(np.reshape(np.sum(w * dxm, axis=-1), np.shape(ans)), ans)


def quantile_vjp(
    ct,
    ans,
    x,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    **kwargs,
):
    """Cotangent of ``x`` for ``np.quantile``: ``ct`` spread onto the interpolated elements."""
    _check_linear(method)
    xm, w = _quantile_weights(x, q, axis)
    qdims = np.ndim(q)
    c = np.reshape(ct, np.shape(q) + xm.shape[:-1])
    g = np.sum(w * c[..., None], axis=tuple(range(qdims)))
    g = np.reshape(g, np.shape(x)) if axis is None else np.moveaxis(g, -1, axis)
    return _like(g, x)


def percentile_jvp(dx, ans, x, q, *args, **kwargs):
    return quantile_jvp(dx, ans, x, np.asarray(q) / 100, *args, **kwargs)


def percentile_vjp(ct, ans, x, q, *args, **kwargs):
    return quantile_vjp(ct, ans, x, np.asarray(q) / 100, *args, **kwargs)


def median_jvp(dx, ans, x, axis=None, out=None, overwrite_input=False, keepdims=False):
    return quantile_jvp(dx, ans, x, 0.5, axis, keepdims=keepdims)


def median_vjp(ct, ans, x, axis=None, out=None, overwrite_input=False, keepdims=False):
    return quantile_vjp(ct, ans, x, 0.5, axis, keepdims=keepdims)


def cumulative_sum_vjp(ct, x, axis=None, dtype=None, include_initial=False):
    """Cotangent of ``x`` for ``np.cumulative_sum``: a reversed cumulative sum."""
    axis = 0 if axis is None else axis
    g = np.flip(np.cumsum(np.flip(ct, axis), axis), axis)
    if include_initial:
        g = np.take(g, np.arange(1, np.shape(g)[axis]), axis=axis)
    return g


def cumulative_prod_jvp(dx, ans, x, axis=None, dtype=None, include_initial=False):
    """Tangent of ``np.cumulative_prod`` (for non-zero elements)."""
    axis = 0 if axis is None else axis
    t = np.asarray(ans) * np.cumulative_sum(
        np.asarray(dx) / x, axis=axis, include_initial=include_initial
    )
    return t


def cumulative_prod_vjp(ct, ans, x, axis=None, dtype=None, include_initial=False):
    """Cotangent of ``x`` for ``np.cumulative_prod`` (for non-zero elements)."""
    return cumulative_sum_vjp(ct * ans, x, axis, include_initial=include_initial) / x


def trapezoid_vjp_y(ct, y, x=None, dx=1.0, axis=-1):
    """Cotangent of ``y`` for ``np.trapezoid``: the trapezoid weights times ``ct``."""
    ym = np.moveaxis(np.asarray(y, dtype=float), axis, -1)
    if x is None:
        d = dx * np.ones(ym.shape[-1] - 1)
    else:
        d = np.diff(x if np.ndim(x) == 1 else np.moveaxis(np.asarray(x), axis, -1), axis=-1)
    w = np.zeros(np.broadcast_shapes(np.shape(d)[:-1] + (ym.shape[-1],), ym.shape))
    w[..., :-1] += d / 2
    w[..., 1:] += d / 2
    g = np.moveaxis(np.asarray(ct)[..., None] * w, -1, axis)
    return _like(unbroadcast(g, y), y)


def trapezoid_vjp_x(ct, y, x, dx=1.0, axis=-1):
    """Cotangent of the sample points ``x`` for ``np.trapezoid(y, x)``."""
    ym = np.moveaxis(np.asarray(y, dtype=float), axis, -1)
    pair = (ym[..., :-1] + ym[..., 1:]) / 2  # d trapezoid / d (x[i+1] - x[i])
    g = np.zeros(ym.shape)
    g[..., 1:] += pair
    g[..., :-1] -= pair
    g = np.asarray(ct)[..., None] * g
    if np.ndim(x) == 1:
        return np.reshape(np.sum(g, axis=tuple(range(g.ndim - 1))), np.shape(x))
    return unbroadcast(np.moveaxis(g, -1, axis), x)


def _vector_norm_grad(ans, x, axis=None, keepdims=False, ord=2):
    x = np.asarray(x, dtype=np.result_type(x, float))
    if axis is None:
        n = np.reshape(ans, (1,) * x.ndim) if x.ndim else ans
    else:
        n = _keep(ans, x, axis, keepdims)
    if ord in (2, None):
        return x / np.where(n == 0, 1.0, n)
    if ord == 1:
        return np.sign(x)
    if ord in (np.inf, -np.inf):
        return np.sign(x) * extremum_mask(n, np.abs(x), axis, keepdims=True)
    if np.ndim(ord) == 0 and ord != 0:
        return np.sign(x) * (np.abs(x) / n) ** (ord - 1)
    raise NotImplementedError(f"no derivative of np.linalg.vector_norm for ord={ord!r}")


def vector_norm_jvp(dx, ans, x, axis=None, keepdims=False, ord=2):
    """Tangent of ``np.linalg.vector_norm``."""
    g = _vector_norm_grad(ans, x, axis, keepdims, ord)
    return _like(np.sum(g * dx, axis=_axes(axis, np.ndim(x)), keepdims=keepdims), ans)


def vector_norm_vjp(ct, ans, x, axis=None, keepdims=False, ord=2):
    """Cotangent of ``x`` for ``np.linalg.vector_norm``."""
    g = _vector_norm_grad(ans, x, axis, keepdims, ord)
    c = (
        np.reshape(ct, (1,) * np.ndim(x))
        if axis is None and np.ndim(x)
        else _keep(ct, x, axis, keepdims)
    )
    return _like(g * c, x)


def _matrix_norm_grad(ans, x, keepdims=False, ord="fro"):
    x = np.asarray(x, dtype=np.result_type(x, float))
    n = np.asarray(ans) if keepdims else np.asarray(ans)[..., None, None]
    if ord == "fro":
        return x / np.where(n == 0, 1.0, n)
    if ord in ("nuc", 2):
        u, s, vt = np.linalg.svd(x, full_matrices=False)
        if ord == "nuc":
            return u @ vt
        return u[..., :, :1] @ vt[..., :1, :]
    raise NotImplementedError(f"no derivative of np.linalg.matrix_norm for ord={ord!r}")


def matrix_norm_jvp(dx, ans, x, keepdims=False, ord="fro"):
    """Tangent of ``np.linalg.matrix_norm`` (``fro``, ``nuc``, 2: the last two axes)."""
    g = _matrix_norm_grad(ans, x, keepdims, ord)
    return _like(np.sum(g * dx, axis=(-2, -1), keepdims=keepdims), ans)


def matrix_norm_vjp(ct, ans, x, keepdims=False, ord="fro"):
    """Cotangent of ``x`` for ``np.linalg.matrix_norm``."""
    c = np.asarray(ct) if keepdims else np.asarray(ct)[..., None, None]
    return _matrix_norm_grad(ans, x, keepdims, ord) * c


def svdvals_jvp(dx, ans, x):
    """Tangent of ``np.linalg.svdvals`` (distinct singular values): ``u_i^T dx v_i``."""
    u, s, vt = np.linalg.svd(x, full_matrices=False)
    return np.einsum("...ji,...jk,...ik->...i", u, dx, vt)


def svdvals_vjp(ct, ans, x):
    """Cotangent of ``x`` for ``np.linalg.svdvals``: ``u diag(ct) v^T``."""
    u, s, vt = np.linalg.svd(x, full_matrices=False)
    return (u * np.asarray(ct)[..., None, :]) @ vt


def vecdot_vjp(ct, other, x, axis=-1):
    """Cotangent of ``x`` for a (real) ``vecdot(x, other)`` over ``axis``."""
    return unbroadcast(np.expand_dims(ct, axis) * other, x)


def linspace_vjp(ct, start, stop, num=50, endpoint=True, axis=0, of_stop=False):
    """Cotangent of ``start`` (or ``stop``) for ``np.linspace``: ``ct`` weighted by ``1 - t`` (``t``)."""
    shape = np.broadcast_shapes(np.shape(start), np.shape(stop))
    t = np.linspace(np.zeros(shape), np.ones(shape), num, endpoint, axis=axis)
    w = t if of_stop else 1 - t
    g = np.sum(np.asarray(ct) * w, axis=axis)
    mine = stop if of_stop else start
    return _like(unbroadcast(g, mine), mine)


def _interp_cell(x, xp):
    """The interval of ``xp`` holding each ``x`` and the position in it (0..1)."""
    xp = np.asarray(xp, dtype=float)
    i = np.clip(np.searchsorted(xp, x, side="right") - 1, 0, len(xp) - 2)
    w = (np.asarray(x, dtype=float) - xp[i]) / (xp[i + 1] - xp[i])
    return i, w


def _check_period(period):
    if period is not None:
        raise NotImplementedError("derivatives of np.interp with a period are not supported")


def interp_slope(x, xp, fp, left=None, right=None, period=None):
    """``d interp(x, xp, fp) / dx``: the slope of the segment holding ``x`` (0 outside)."""
    _check_period(period)
    xp, fp = np.asarray(xp, dtype=float), np.asarray(fp, dtype=float)
    i, _ = _interp_cell(x, xp)
    slope = (fp[i + 1] - fp[i]) / (xp[i + 1] - xp[i])
    inside = (np.asarray(x) >= xp[0]) & (np.asarray(x) <= xp[-1])
    return _like(np.where(inside, slope, 0.0), x)


def _interp_weights(x, xp, left, right):
    """Weights ``W`` (``shape(x) + (len(xp),)``) with ``interp(x, xp, fp) == W @ fp``."""
    x = np.asarray(x, dtype=float)
    xp = np.asarray(xp, dtype=float)
    i, w = _interp_cell(x, xp)
    n = len(xp)
    W = np.zeros(x.shape + (n,))
    np.put_along_axis(W, i[..., None], (1 - w)[..., None], axis=-1)
    hi = np.zeros(x.shape + (n,))
    np.put_along_axis(hi, (i + 1)[..., None], w[..., None], axis=-1)
    W = W + hi
    below, above = (x < xp[0])[..., None], (x > xp[-1])[..., None]
    first, last = np.eye(n)[0], np.eye(n)[-1]
    W = np.where(below, first if left is None else 0.0, W)
    W = np.where(above, last if right is None else 0.0, W)
    return W


def interp_jvp_fp(dfp, x, xp, fp, left=None, right=None, period=None):
    """Tangent of ``np.interp`` in the values ``fp`` (it is linear in them)."""
    _check_period(period)
    return _like(_interp_weights(x, xp, left, right) @ np.asarray(dfp, dtype=float), x)


def interp_vjp_fp(ct, x, xp, fp, left=None, right=None, period=None):
    """Cotangent of ``fp`` for ``np.interp``: ``ct`` split between the segment's ends."""
    _check_period(period)
    W = _interp_weights(x, xp, left, right)
    return np.tensordot(np.asarray(ct, dtype=float), W, axes=np.ndim(ct))


def _convolve_offset(n, m, mode):
    """Where the ``mode`` result of ``np.convolve`` of lengths ``n``, ``m`` starts in the full one."""
    if mode == "full":
        return 0
    if mode == "valid":
        return min(n, m) - 1
    if mode == "same":
        return (min(n, m) - 1) // 2
    raise ValueError(f"unknown convolution mode {mode!r}")


def _full_cotangent(ct, n, m, mode):
    full = np.zeros(n + m - 1)
    start = _convolve_offset(n, m, mode)
    full[start : start + len(ct)] = ct
    return full


def convolve_vjp(ct, a, v, mode="full", of_v=False):
    """Cotangent of ``a`` (or ``v``) for ``np.convolve(a, v, mode)``."""
    full = _full_cotangent(ct, len(a), len(v), mode)
    return np.correlate(full, np.asarray(a if of_v else v, dtype=float), "valid")


def correlate_vjp(ct, a, v, mode="valid", of_v=False):
    """Cotangent of ``a`` (or ``v``) for real ``np.correlate(a, v, mode) == convolve(a, v[::-1], mode)``."""
    v_rev = np.asarray(v)[::-1]
    if of_v:
        return convolve_vjp(ct, a, v_rev, mode, of_v=True)[::-1]
    return convolve_vjp(ct, a, v_rev, mode)


def polyval_vjp_p(ct, p, x):
    """Cotangent of the coefficients ``p`` for ``np.polyval(p, x)``: ``ct`` times the powers of ``x``."""
    n = len(p)
    powers = np.asarray(x, dtype=float)[..., None] ** np.arange(n - 1, -1, -1)
    return np.tensordot(np.asarray(ct, dtype=float), powers, axes=np.ndim(ct))


def polyval_slope(p, x):
    """``d polyval(p, x) / dx``."""
    return np.polyval(np.polyder(p), x) if len(p) > 1 else np.zeros_like(x, dtype=float)


def _ediff1d_ends(to_end, to_begin):
    return (0 if to_begin is None else np.size(to_begin)), (
        0 if to_end is None else np.size(to_end)
    )


def ediff1d_jvp(dx, ary, to_end=None, to_begin=None):
    """Tangent of ``np.ediff1d``: the differences of ``dx`` (the added ends are constants)."""
    nb, ne = _ediff1d_ends(to_end, to_begin)
    return np.concatenate([np.zeros(nb), np.diff(np.ravel(dx)), np.zeros(ne)])


def ediff1d_vjp(ct, ary, to_end=None, to_begin=None):
    """Cotangent of ``ary`` for ``np.ediff1d``: the adjoint of a difference."""
    nb, ne = _ediff1d_ends(to_end, to_begin)
    core = np.asarray(ct)[nb : len(ct) - ne]
    g = np.zeros(np.size(ary))
    g[1:] += core
    g[:-1] -= core
    return np.reshape(g, np.shape(ary))


def append_vjp(ct, arr, values, axis=None, of_values=False):
    """Cotangent of ``arr`` (or ``values``) for ``np.append``: its part of ``ct``."""
    if axis is None:
        flat = np.ravel(ct)
        k = np.size(arr)
        part, mine = (flat[k:], values) if of_values else (flat[:k], arr)
        return np.reshape(part, np.shape(mine))
    k = np.shape(arr)[axis]
    idx = np.arange(k, np.shape(ct)[axis]) if of_values else np.arange(k)
    return np.take(ct, idx, axis=axis)


def gather_vjp(ct, x, select, *args, **kwargs):
    """Cotangent of ``x`` for a function that only picks (or repeats) elements of ``x``.

    ``select(x, *args, **kwargs)`` is applied to the flat indices of ``x`` to find
    where each result element came from; ``ct`` is summed back onto those.
    """
    index = select(np.arange(np.size(x)).reshape(np.shape(x)), *args, **kwargs)
    g = np.bincount(np.ravel(index), weights=np.ravel(ct), minlength=np.size(x))
    return _like(np.reshape(g, np.shape(x)), x)


def compress_vjp(ct, condition, a, axis=None):
    """Cotangent of ``a`` for ``np.compress(condition, a, axis)``."""
    return gather_vjp(ct, a, lambda i: np.compress(condition, i, axis))


def extract_vjp(ct, condition, arr):
    """Cotangent of ``arr`` for ``np.extract(condition, arr)``."""
    return gather_vjp(ct, arr, lambda i: np.extract(condition, i))


def nanvar_jvp(dx, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    """Tangent of ``np.nanvar``: the variance's, over the non-NaN elements."""
    ok = _not_nan(x)
    centered = np.where(ok, x - np.nanmean(x, axis=axis, keepdims=True), 0.0)
    count = np.sum(ok, axis=_axes(axis, np.ndim(x)), keepdims=keepdims)
    t = 2 * np.sum(
        centered * np.where(ok, dx, 0.0), axis=_axes(axis, np.ndim(x)), keepdims=keepdims
    )
    return _like(t / (count - ddof), ans)


def nanvar_vjp(ct, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    """Cotangent of ``x`` for ``np.nanvar`` (zero where ``x`` is NaN)."""
    ok = _not_nan(x)
    centered = np.where(ok, x - np.nanmean(x, axis=axis, keepdims=True), 0.0)
    count = np.sum(ok, axis=_axes(axis, np.ndim(x)), keepdims=True)
    return _like(2 * centered * _keep(ct, x, axis, keepdims) / (count - ddof), x)


def nanstd_jvp(dx, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    """Tangent of ``np.nanstd``: the variance's over ``2 * std``."""
    return _like(nanvar_jvp(dx, ans, x, axis, ddof=ddof, keepdims=keepdims) * _half_over(ans), ans)


def nanstd_vjp(ct, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    """Cotangent of ``x`` for ``np.nanstd``."""
    return nanvar_vjp(ct * _half_over(ans), ans, x, axis, ddof=ddof, keepdims=keepdims)


# ---------------------------------------------------------------------------
# Issue 7: functions taking a container of arrays, and functions returning a
# tuple. A cotangent of a list argument is a ``TangentTuple`` of the elements'
# cotangents; a cotangent arriving at a tuple result holds one cotangent per
# entry, ``None`` for an entry that carries none (a zero).


def _leaf_like(g, x):
    """Cotangent ``g`` shaped like the element ``x`` (a float for a Python scalar; None for an int)."""
    if isinstance(x, (bool, np.bool_, int, np.integer, str)) or x is None:
        return None
    if isinstance(x, np.ndarray) and x.dtype.kind not in "fc":
        return np.reshape(g, np.shape(x))
    return _like(np.reshape(g, np.shape(x)), x)


def _index_leaves(xs, start=0):
    """``xs`` (nested lists/tuples of arrays and scalars) with each element replaced by its
    flat positions in one numbering of all elements; also the next free position."""
    if isinstance(xs, (list, tuple)) and not isinstance(xs, np.ndarray):
        parts = []
        for x in xs:
            part, start = _index_leaves(x, start)
            parts.append(part)
        return (parts if isinstance(xs, list) else tuple(parts)), start
    n = int(np.size(xs))
    return np.arange(start, start + n).reshape(np.shape(xs)), start + n


def _split_leaves(flat, xs, start=0):
    """The pieces of the flat cotangent ``flat`` belonging to the elements of ``xs``, nested
    like ``xs`` as ``TangentTuple``s; also the next position."""
    if isinstance(xs, (list, tuple)) and not isinstance(xs, np.ndarray):
        parts = []
        for x in xs:
            part, start = _split_leaves(flat, x, start)
            parts.append(part)
        return TangentTuple(parts), start
    n = int(np.size(xs))
    return _leaf_like(flat[start : start + n], xs), start + n


def gather_list_vjp(ct, xs, fn, *args, **kwargs):
    """Cotangents of the elements of ``xs`` for ``fn(xs, *args, **kwargs)``, a function that
    only places (or repeats) the elements' entries (``block``, ``stack``, ``hstack``, ...).

    ``fn`` is applied to the elements' flat positions to find where each result entry
    came from; ``ct`` is summed back onto those. The result is a ``TangentTuple`` nested
    like ``xs``.
    """
    index, total = _index_leaves(xs)
    where = np.asarray(fn(index, *args, **kwargs))
    flat = np.bincount(
        np.ravel(where), weights=np.ravel(np.asarray(ct, dtype=float)), minlength=total
    )
    return _split_leaves(flat, xs)[0]


def concatenate_vjp(ct, xs, axis=0, out=None, dtype=None, casting="same_kind"):
    """Cotangents of the arrays ``xs`` for ``np.concatenate(xs, axis)``: ``ct`` split back."""
    if axis is None:
        flat = np.ravel(ct)
        bounds = np.cumsum([np.size(x) for x in xs])[:-1]
        return TangentTuple(
            _leaf_like(p, x) for p, x in zip(np.split(flat, bounds), xs, strict=True)
        )
    bounds = np.cumsum([np.shape(x)[axis] for x in xs])[:-1]
    return TangentTuple(
        _leaf_like(p, x) for p, x in zip(np.split(ct, bounds, axis=axis), xs, strict=True)
    )


def stack_vjp(ct, xs, axis=0, out=None, dtype=None, casting="same_kind"):
    """Cotangents of the arrays ``xs`` for ``np.stack(xs, axis)``: the slices of ``ct``."""
    return TangentTuple(
        _leaf_like(p, x) for p, x in zip(np.unstack(np.asarray(ct), axis=axis), xs, strict=True)
    )


def array_vjp(ct, x, *args, **kwargs):
    """Cotangent of ``x`` for ``np.array(x)``/``np.asarray(x)``: ``ct`` itself for an array,
    its entries (as a ``TangentTuple``) for a list of arrays and numbers."""
    if isinstance(x, (list, tuple)) and not is_record(x):
        return gather_list_vjp(ct, x, np.array)
    return ct


def _filled(cts, like):
    """The cotangents ``cts`` with ``None`` (no cotangent) replaced by zeros shaped like ``like``."""
    return [
        np.zeros(np.shape(a), dtype=np.result_type(a, float)) if c is None else c
        for c, a in zip(cts, like, strict=True)
    ]


def split_vjp(ct, ans, axis=0):
    """Cotangent of the array for ``np.split``/``np.array_split`` (and ``h/v/dsplit`` with
    their axis): the pieces' cotangents joined back."""
    return np.concatenate(_filled(ct, ans), axis=axis)


def split_axis(ary, default):
    """The axis ``hsplit`` (1, or 0 for a vector) splits along; ``default`` for the others."""
    return 0 if default == 1 and np.ndim(ary) == 1 else default


def unstack_vjp(ct, ans, axis=0):
    """Cotangent of ``x`` for ``np.unstack(x, axis)``: the slices' cotangents stacked."""
    return np.stack(_filled(ct, ans), axis=axis)


def _promote_chain(xs):
    """The factors of ``multi_dot`` as matrices: a leading vector as a row, a trailing one as a column."""
    mats = [np.asarray(x, dtype=np.result_type(x, float)) for x in xs]
    if mats[0].ndim == 1:
        mats[0] = mats[0][None, :]
    if mats[-1].ndim == 1:
        mats[-1] = mats[-1][:, None]
    return mats


def _chain(mats, n):
    """The product of ``mats`` (identity of size ``n`` when empty)."""
    if not mats:
        return np.eye(n)
    return mats[0] if len(mats) == 1 else np.linalg.multi_dot(mats)


def multi_dot_jvp(dxs, ans, xs, out=None):
    """Tangent of ``np.linalg.multi_dot(xs)``: the sum over factors of the product with one tangent."""
    terms = []
    for i, dx in enumerate(dxs):
        if dx is not None:
            parts = list(xs)
            parts[i] = dx
            terms.append(np.linalg.multi_dot(parts))
    t = sum(terms[1:], terms[0]) if terms else np.zeros_like(ans, dtype=float)
    return _like(t, ans)


def multi_dot_vjp(ct, ans, xs, out=None):
    """Cotangents of the factors of ``np.linalg.multi_dot(xs)``: ``left^T ct right^T`` each."""
    mats = _promote_chain(xs)
    c = np.reshape(np.asarray(ct, dtype=float), (mats[0].shape[0], mats[-1].shape[1]))
    cts = []
    for i, x in enumerate(xs):
        left = _chain(mats[:i], mats[i].shape[0])
        right = _chain(mats[i + 1 :], mats[i].shape[1])
        cts.append(_leaf_like(left.T @ c @ right.T, x))
    return TangentTuple(cts)


def _tuple_like(ans, values):
    """``values`` in the tuple class of the result ``ans`` (a NumPy result namedtuple)."""
    if isinstance(ans, tuple) and hasattr(type(ans), "_fields"):
        return type(ans)(*values)
    return tuple(values)


def _parts(ct, n):
    """The ``n`` entries of a tuple cotangent, ``None`` for each entry when ``ct`` is ``None``."""
    return (None,) * n if ct is None else tuple(ct)


def _from_triangle(dx, UPLO):
    """The symmetric matrix built from the triangle of ``dx`` that ``eigh``/``eigvalsh`` read."""
    return _symmetric_from_lower(dx) if UPLO == "L" else _T(_symmetric_from_lower(_T(dx)))


def _onto_triangle(g, UPLO):
    """The adjoint of :func:`_from_triangle`: ``g`` gathered onto the triangle read."""
    lower = np.tril(g + _T(g)) - np.eye(g.shape[-1]) * g
    return lower if UPLO == "L" else _T(lower)


def _gap_inverse(w):
    """``F[i, j] = 1 / (w[j] - w[i])`` off the diagonal, 0 on it (distinct ``w``)."""
    diff = w[..., None, :] - w[..., :, None]
    eye = np.eye(w.shape[-1], dtype=bool)
    return np.where(eye, 0.0, 1.0 / np.where(eye, 1.0, diff))


def eigh_jvp(dx, ans, x, UPLO="L"):
    """Tangents ``(dw, dv)`` of ``eigh(x)`` (distinct eigenvalues): ``dw = diag(V^T dA V)``,
    ``dv = V (F o V^T dA V)`` with ``dA`` the symmetric matrix of the triangle read."""
    w, v = ans
    p = _T(v) @ _from_triangle(dx, UPLO) @ v
    dw = np.diagonal(p, axis1=-2, axis2=-1).copy()
    dv = v @ (_gap_inverse(w) * p)
    return _tuple_like(ans, (dw, dv))


def eigh_vjp(ct, ans, x, UPLO="L"):
    """Cotangent of ``x`` for ``eigh(x)``: ``V (diag(ct_w) + F o V^T ct_v) V^T`` on the triangle read."""
    w, v = ans
    ct_w, ct_v = _parts(ct, 2)
    inner = np.zeros(np.shape(x), dtype=np.result_type(x, float))
    if ct_w is not None:
        inner = inner + np.asarray(ct_w)[..., None, :] * np.eye(w.shape[-1])
    if ct_v is not None:
        inner = inner + _gap_inverse(w) * (_T(v) @ ct_v)
    return _onto_triangle(v @ inner @ _T(v), UPLO)


def _check_svd(x, full_matrices, compute_uv, hermitian):
    if hermitian:
        raise NotImplementedError("svd derivatives support hermitian=False only")
    m, n = np.shape(x)[-2:]
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError("svd derivatives of a non-square matrix need full_matrices=False")


def svd_jvp(dx, ans, x, full_matrices=True, compute_uv=True, hermitian=False):
    """Tangents of ``svd(x)`` (distinct non-zero singular values), after Townsend (2016)."""
    _check_svd(x, full_matrices, compute_uv, hermitian)
    if not compute_uv:
        return svdvals_jvp(dx, ans, x)
    u, s, vt = ans
    v = _T(vt)
    p = _T(u) @ dx @ v
    ds = np.diagonal(p, axis1=-2, axis2=-1).copy()
    f = _gap_inverse(s**2)
    ps = p * s[..., None, :]  # P S
    sp = s[..., :, None] * p  # S P
    du = u @ (f * (ps + _T(ps))) + (dx @ v - u @ p) / s[..., None, :]
    dv = v @ (f * (sp + _T(sp))) + (_T(dx) @ u - v @ _T(p)) / s[..., None, :]
    return _tuple_like(ans, (du, ds, _T(dv)))


def svd_vjp(ct, ans, x, full_matrices=True, compute_uv=True, hermitian=False):
    """Cotangent of ``x`` for ``svd(x)`` (distinct non-zero singular values)."""
    _check_svd(x, full_matrices, compute_uv, hermitian)
    if not compute_uv:
        return svdvals_vjp(ct, ans, x)
    u, s, vt = ans
    v = _T(vt)
    ct_u, ct_s, ct_vt = _parts(ct, 3)
    f = _gap_inverse(s**2)
    k = s.shape[-1]
    inner = np.zeros(np.shape(s) + (k,))
    g = np.zeros(np.shape(x), dtype=np.result_type(x, float))
    if ct_s is not None:
        inner = inner + np.asarray(ct_s)[..., None, :] * np.eye(k)
    if ct_u is not None:
        j = _T(u) @ ct_u
        inner = inner + (f * (j - _T(j))) * s[..., None, :]
        g = g + (ct_u - u @ j) / s[..., None, :] @ vt
    if ct_vt is not None:
        ct_v = _T(ct_vt)
        j = _T(v) @ ct_v
        inner = inner + s[..., :, None] * (f * (j - _T(j)))
        g = g + u @ (_T(ct_v - v @ j) / s[..., :, None])
    return g + u @ inner @ vt


def _check_qr(x, mode):
    m, n = np.shape(x)[-2:]
    if mode not in ("reduced", "complete", "r"):
        raise NotImplementedError(
            f"qr derivatives support modes 'reduced', 'complete' and 'r', not {mode!r}"
        )
    if m < n or (mode == "complete" and m != n):
        raise NotImplementedError(
            "qr derivatives need a tall or square matrix (and 'complete' only when square)"
        )


def _qr_parts(ans, x, mode):
    if mode == "r":
        q, r = np.linalg.qr(x)
        return q, r
    return ans


def qr_jvp(dx, ans, x, mode="reduced"):
    """Tangents ``(dq, dr)`` of ``qr(x)`` for a tall or square ``x`` of full rank."""
    _check_qr(x, mode)
    q, r = _qr_parts(ans, x, mode)
    r_inv = np.linalg.inv(r)
    c = _T(q) @ dx @ r_inv
    low = np.tril(c, -1)
    omega = low - _T(low)
    dr = (c - omega) @ r
    if mode == "r":
        return dr
    dq = q @ omega + (dx @ r_inv - q @ c)
    return _tuple_like(ans, (dq, dr))


def qr_vjp(ct, ans, x, mode="reduced"):
    """Cotangent of ``x`` for ``qr(x)`` (tall or square, full rank)."""
    _check_qr(x, mode)
    q, r = _qr_parts(ans, x, mode)
    ct_q, ct_r = (None, ct) if mode == "r" else _parts(ct, 2)
    ct_q = np.zeros_like(q) if ct_q is None else np.asarray(ct_q)
    ct_r = np.zeros_like(r) if ct_r is None else np.asarray(ct_r)
    m = _T(q) @ ct_q - ct_r @ _T(r)
    c_bar = ct_r @ _T(r) + np.tril(m - _T(m), -1)
    g = q @ c_bar + (ct_q - q @ (_T(q) @ ct_q))
    return g @ _T(np.linalg.inv(r))
