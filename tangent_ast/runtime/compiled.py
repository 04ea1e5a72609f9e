"""The runtime helpers a rule of the Numba backend calls, compiled by Numba.

A module derived with ``backend="numba"`` reads its helpers from here
(``import tangent_ast.runtime.compiled as runtime``): each is the NumPy backend's own
function (the same object, so a call from Python does what it always did), with an
implementation for Numba registered beside it (``numba.extending.overload``), chosen by
the types Numba compiles a call for: numbers, arrays, their dtypes and dimensions.
A call with types no implementation takes does not compile, and the rule is refused
(api/compiled.py tells which line). Importing this module imports Numba.

>>> import numba, numpy as np
>>> from tangent_ast.runtime import compiled as runtime
>>> @numba.njit
... def quotients(a, b):
...     return runtime.safe_divide(a, b), runtime.safe_divide(np.ones(2), np.array([2.0, 0.0]))
>>> quotients(1.0, 0.0)
(0.0, array([0.5, 0. ]))
"""

import numpy as np
from numba import types
from numba.cpython.unsafe.tuple import tuple_setitem
from numba.extending import overload, register_jitable

from . import arrays, elementwise, reductions, tangents

only_shape = tangents.only_shape
broadcast_like = tangents.broadcast_like
unbroadcast = tangents.unbroadcast
zeros_like = tangents.zeros_like
zero_tangent = tangents.zero_tangent
safe_divide = elementwise.safe_divide
xlogy = elementwise.xlogy
power_derivative = elementwise.power_derivative
getitem_vjp = arrays.getitem_vjp
sum_vjp = reductions.sum_vjp
mean_vjp = reductions.mean_vjp
extremum_vjp = reductions.extremum_vjp
real_like = tangents.real_like

__all__ = [
    "broadcast_like",
    "extremum_vjp",
    "getitem_vjp",
    "mean_vjp",
    "only_shape",
    "power_derivative",
    "real_like",
    "safe_divide",
    "sum_vjp",
    "unbroadcast",
    "xlogy",
    "zero_tangent",
    "zeros_like",
]


def _number(t):
    return isinstance(t, (types.Number, types.Boolean))


def _array(t):
    return isinstance(t, types.Array)


def _no_axis(t):
    return t is None or isinstance(t, (types.NoneType, types.Omitted))


@overload(only_shape)
def _only_shape(x):
    # compiled code keeps the array itself: a view of a zero costs more than it saves here
    return lambda x: x


@overload(zeros_like)
@overload(zero_tangent)
def _zeros_like(x):
    if isinstance(x, types.Complex):
        return lambda x: 0j
    if _number(x):
        return lambda x: 0.0
    if _array(x) and isinstance(x.dtype, types.Complex):
        return lambda x: np.zeros(x.shape, np.complex128)
    if _array(x):
        return lambda x: np.zeros(x.shape)
    return None


@overload(safe_divide)
def _safe_divide(num, den):
    if _number(num) and _number(den):
        return lambda num, den: num / den if den != 0 else 0.0 * num
    if _array(den):
        return lambda num, den: np.where(den == 0, 0.0, num / np.where(den == 0, 1.0, den))
    if _array(num):
        dtype = _floating(num)
        return lambda num, den: num / den if den != 0 else np.zeros(num.shape, dtype)
    return None


@overload(xlogy)
def _xlogy(a, b):
    if _number(a) and isinstance(b, types.Complex):
        return lambda a, b: 0.0 * b if a == 0 else a * np.log(b)
    if _number(a) and _number(b):  # log|b|: the real part of log(b) for a negative b
        return lambda a, b: 0.0 if a == 0 else a * np.log(np.abs(b))
    if (_array(a) or _array(b)) and not _complex(b):
        return lambda a, b: np.where(a == 0, 0.0, a * np.log(np.abs(np.where(a == 0, 1.0, b))))
    return None


def _complex(t):
    return isinstance(getattr(t, "dtype", t), types.Complex)


def _floating(t):
    """The dtype of a derivative of values of type ``t``: complex128 or float64."""
    return np.complex128 if _complex(t) else np.float64


@overload(power_derivative)
def _power_derivative(x, y):
    if _number(x) and _number(y):
        return lambda x, y: 0.0 * x if y == 0 and x == 0 else y * x ** (y - 1)
    if _array(x) or _array(y):

        def elementwise_power_derivative(x, y):
            zero = (y == 0) & (x == 0)
            return np.where(zero, 0.0, y * x ** np.where(zero, 1.0, y - 1.0))

        return elementwise_power_derivative
    return None


@overload(broadcast_like)
def _broadcast_like(t, x):
    if _number(x) and _number(t):
        return lambda t, x: t
    if _array(x) and _number(t):
        return lambda t, x: np.full(x.shape, t)
    if _array(x) and _array(t) and t.ndim == x.ndim:
        return lambda t, x: t if t.shape == x.shape else np.broadcast_to(t, x.shape).copy()
    if _array(x) and _array(t):
        return lambda t, x: np.broadcast_to(t, x.shape).copy()
    return None


@overload(unbroadcast)
def _unbroadcast(g, x):
    if _number(x) and _number(g):
        return lambda g, x: g
    if _number(x) and _array(g):
        return lambda g, x: np.sum(g)
    if _array(x) and _array(g) and g.ndim == x.ndim:
        return lambda g, x: _sum_to_shape(g, x)
    if _array(x) and _array(g) and g.ndim == x.ndim + 1:
        return lambda g, x: _sum_to_shape(_sum_first_axis(g), x)
    return None


@register_jitable
def _sum_first_axis(g):
    total = g[0].copy()
    for i in range(1, g.shape[0]):
        total += g[i]
    return total


@register_jitable
def _sum_to_shape(g, x):
    """``g`` summed over the axes where ``x`` has length 1 and ``g`` has more (``g`` and
    ``x`` of one number of dimensions): element by element, into zeros of ``x``'s shape."""
    if g.shape == x.shape:
        return g.copy()
    total = np.zeros(x.shape, g.dtype)
    for index in np.ndindex(g.shape):
        target = index
        for axis in range(len(index)):
            if x.shape[axis] == 1:
                target = tuple_setitem(target, axis, 0)
        total[target] += g[index]
    return total


@overload(getitem_vjp)
def _getitem_vjp(ct, x, index):
    if not _array(x):
        return None
    basic = isinstance(index, (types.Integer, types.SliceType)) or (
        isinstance(index, types.BaseTuple)
        and all(isinstance(i, (types.Integer, types.SliceType)) for i in index)
    )
    dtype = np.complex128 if _complex(x) or _complex(ct) else np.float64
    if basic:

        def placed(ct, x, index):
            result = np.zeros(x.shape, dtype)
            result[index] = ct
            return result

        return placed
    if isinstance(index, types.Array) and isinstance(index.dtype, types.Integer):

        def gathered(ct, x, index):  # indices may repeat: their cotangents add up
            result = np.zeros(x.shape, dtype)
            for k in range(index.shape[0]):
                result[index[k]] += ct[k]
            return result

        return gathered
    return None


@overload(sum_vjp)
def _sum_vjp(ct, x, axis=None, keepdims=False):
    if _array(x) and _no_axis(axis):
        return lambda ct, x, axis=None, keepdims=False: np.full(x.shape, ct)
    if _number(x):
        return lambda ct, x, axis=None, keepdims=False: ct
    if _array(x) and x.ndim in (1, 2) and isinstance(axis, types.Integer) and _array(ct):
        return lambda ct, x, axis=None, keepdims=False: _spread_along(ct, x, axis)
    if _array(x) and x.ndim == 1 and isinstance(axis, types.Integer) and _number(ct):
        return lambda ct, x, axis=None, keepdims=False: np.full(x.shape, ct)
    return None


@register_jitable
def _spread_along(ct, x, axis):
    """The cotangent of a 2-d ``x`` summed along ``axis`` (0, 1, -1 or -2): ``ct`` (its
    sum's cotangent, the axis dropped or kept with length 1) repeated along the axis."""
    result = np.empty(x.shape)
    flat = ct.ravel()
    if axis % x.ndim == 0:
        for i in range(x.shape[0]):
            result[i] = flat
    else:
        for j in range(x.shape[1]):
            result[:, j] = flat
    return result


@overload(mean_vjp)
def _mean_vjp(ct, x, axis=None, keepdims=False):
    if _array(x) and _no_axis(axis):
        return lambda ct, x, axis=None, keepdims=False: np.full(x.shape, ct / x.size)
    if _number(x):
        return lambda ct, x, axis=None, keepdims=False: ct
    return None


@overload(extremum_vjp)
def _extremum_vjp(ct, ans, x, axis=None, out=None, keepdims=False):
    """``ct`` shared by the elements where ``x`` attains its extremum ``ans`` (no ``axis``)."""
    if _array(x) and _no_axis(axis):

        def shared(ct, ans, x, axis=None, out=None, keepdims=False):
            at = x == ans
            return np.where(at, ct / np.sum(at), 0.0)

        return shared
    if _number(x):
        return lambda ct, ans, x, axis=None, out=None, keepdims=False: ct
    return None


@overload(real_like)
def _real_like(ct, x):
    if _complex(x):
        return lambda ct, x: ct
    if _number(x) and _complex(ct):
        return lambda ct, x: ct.real
    if _array(x) or _number(x):
        return lambda ct, x: np.real(ct)
    return None
