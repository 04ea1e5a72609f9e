"""Elementwise NumPy functions (ufuncs and their relatives).

A unary one is given by its derivative, ``y = f(x)`` with ``dy/dx`` written in terms of
the result ``ans`` and the argument ``x``; binary ones by their partial derivatives.
"""

from typing import Any

import numpy as np

from ... import runtime
from ..operators import def_power
from ..registry import (
    ZERO,
    broadcasting,
    def_linear,
    defjvp,
    defvjp,
    elementwise,
    handles,
    nondifferentiable,
    pure,
)

_fn: Any  # the loop variable of the tables below: NumPy functions of many types

ELEMENTWISE = [
    (np.sin, lambda ans, x: np.cos(x)),
    (np.cos, lambda ans, x: -np.sin(x)),
    (np.tan, lambda ans, x: 1 / np.cos(x) ** 2),
    (np.arcsin, lambda ans, x: runtime.safe_divide(1, np.sqrt(1 - x**2))),
    (np.arccos, lambda ans, x: -runtime.safe_divide(1, np.sqrt(1 - x**2))),
    (np.arctan, lambda ans, x: 1 / (1 + x**2)),
    (np.sinh, lambda ans, x: np.cosh(x)),
    (np.cosh, lambda ans, x: np.sinh(x)),
    (np.tanh, lambda ans, x: 1 - ans**2),
    (np.arcsinh, lambda ans, x: 1 / np.sqrt(x**2 + 1)),
    # sqrt(x - 1) sqrt(x + 1), not sqrt(x ** 2 - 1): the same for real x, and the principal
    # branch's derivative for complex x (of negative real part too)
    (np.arccosh, lambda ans, x: runtime.safe_divide(1, np.sqrt(x - 1) * np.sqrt(x + 1))),
    (np.arctanh, lambda ans, x: 1 / (1 - x**2)),
    (np.exp, lambda ans, x: ans),
    (np.exp2, lambda ans, x: ans * np.log(2)),
    (np.expm1, lambda ans, x: ans + 1),
    (np.log, lambda ans, x: 1 / x),
    (np.log2, lambda ans, x: 1 / (x * np.log(2))),
    (np.log10, lambda ans, x: 1 / (x * np.log(10))),
    (np.log1p, lambda ans, x: 1 / (1 + x)),
    (np.sqrt, lambda ans, x: runtime.safe_divide(1, 2.0 * ans)),
    (np.cbrt, lambda ans, x: 1 / (3 * ans**2)),
    (np.square, lambda ans, x: 2 * x),
    (np.reciprocal, lambda ans, x: -(ans**2)),
    (np.absolute, lambda ans, x: np.sign(x)),
    (np.fabs, lambda ans, x: np.sign(x)),
]

for _fn, _derivative in ELEMENTWISE:
    elementwise(_fn, _derivative)

def_linear(np.negative, np.positive)

defvjp(np.negative, lambda ct, ans, x: -ct)

defvjp(np.positive, lambda ct, ans, x: ct)

broadcasting(np.negative, np.positive)

# Binary elementwise functions: the operators' rules, by their NumPy names.
broadcasting(
    np.add,
    np.subtract,
    np.multiply,
    np.divide,
    np.power,
    np.maximum,
    np.minimum,
    np.fmax,
    np.fmin,
    np.arctan2,
    np.hypot,
    np.logaddexp,
    np.where,
)

defjvp(np.add, lambda dx, ans, x, y: dx, lambda dy, ans, x, y: dy)

defvjp(np.add, lambda ct, ans, x, y: ct, lambda ct, ans, x, y: ct)

defjvp(np.subtract, lambda dx, ans, x, y: dx, lambda dy, ans, x, y: -dy)

defvjp(np.subtract, lambda ct, ans, x, y: ct, lambda ct, ans, x, y: -ct)

defjvp(np.multiply, lambda dx, ans, x, y: dx * y, lambda dy, ans, x, y: x * dy)

defvjp(np.multiply, lambda ct, ans, x, y: ct * y, lambda ct, ans, x, y: ct * x)

defjvp(np.divide, lambda dx, ans, x, y: dx / y, lambda dy, ans, x, y: -dy * ans / y)

defvjp(np.divide, lambda ct, ans, x, y: ct / y, lambda ct, ans, x, y: -ct * ans / y)

def_power(np.power)

for _fn in (np.maximum, np.fmax):
    defjvp(_fn, lambda dx, ans, x, y: dx * (x >= y), lambda dy, ans, x, y: dy * (x < y))
    defvjp(_fn, lambda ct, ans, x, y: ct * (x >= y), lambda ct, ans, x, y: ct * (x < y))

for _fn in (np.minimum, np.fmin):
    defjvp(_fn, lambda dx, ans, x, y: dx * (x <= y), lambda dy, ans, x, y: dy * (x > y))
    defvjp(_fn, lambda ct, ans, x, y: ct * (x <= y), lambda ct, ans, x, y: ct * (x > y))

defjvp(
    np.arctan2,
    lambda dy, ans, y, x: runtime.safe_divide(dy * x, x**2 + y**2),
    lambda dx, ans, y, x: runtime.safe_divide(-dx * y, x**2 + y**2),
)

defvjp(
    np.arctan2,
    lambda ct, ans, y, x: runtime.safe_divide(ct * x, x**2 + y**2),
    lambda ct, ans, y, x: runtime.safe_divide(-ct * y, x**2 + y**2),
)

defjvp(
    np.hypot,
    lambda dx, ans, x, y: runtime.safe_divide(dx * x, ans),
    lambda dy, ans, x, y: runtime.safe_divide(dy * y, ans),
)

defvjp(
    np.hypot,
    lambda ct, ans, x, y: runtime.safe_divide(ct * x, ans),
    lambda ct, ans, x, y: runtime.safe_divide(ct * y, ans),
)

defjvp(
    np.logaddexp,
    lambda dx, ans, x, y: dx * np.exp(x - ans),
    lambda dy, ans, x, y: dy * np.exp(y - ans),
)

defvjp(
    np.logaddexp,
    lambda ct, ans, x, y: ct * np.exp(x - ans),
    lambda ct, ans, x, y: ct * np.exp(y - ans),
)

defjvp(
    np.where,
    None,
    lambda dx, ans, c, x, y: np.where(c, dx, 0.0),
    lambda dy, ans, c, x, y: np.where(c, 0.0, dy),
)

defvjp(
    np.where,
    None,
    lambda ct, ans, c, x, y: np.where(c, ct, 0.0),
    lambda ct, ans, c, x, y: np.where(c, 0.0, ct),
)

ELEMENTWISE_MORE = [
    (np.deg2rad, lambda ans, x: np.pi / 180),
    (np.radians, lambda ans, x: np.pi / 180),
    (np.rad2deg, lambda ans, x: 180 / np.pi),
    (np.degrees, lambda ans, x: 180 / np.pi),
    (np.sinc, lambda ans, x: runtime.sinc_derivative(x)),
]

for _fn, _derivative in ELEMENTWISE_MORE:
    elementwise(_fn, _derivative)

broadcasting(np.logaddexp2, np.fmod, np.remainder, np.float_power, np.clip)

defjvp(
    np.logaddexp2,
    lambda dx, ans, x, y: dx * np.exp2(x - ans),
    lambda dy, ans, x, y: dy * np.exp2(y - ans),
)

defvjp(
    np.logaddexp2,
    lambda ct, ans, x, y: ct * np.exp2(x - ans),
    lambda ct, ans, x, y: ct * np.exp2(y - ans),
)

# fmod(x, y) == x - trunc(x / y) * y; remainder(x, y) == x - floor(x / y) * y
defjvp(np.fmod, lambda dx, ans, x, y: dx, lambda dy, ans, x, y: -dy * np.trunc(x / y))

defvjp(np.fmod, lambda ct, ans, x, y: ct, lambda ct, ans, x, y: -ct * np.trunc(x / y))

defjvp(np.remainder, lambda dx, ans, x, y: dx, lambda dy, ans, x, y: -dy * np.floor(x / y))

defvjp(np.remainder, lambda ct, ans, x, y: ct, lambda ct, ans, x, y: -ct * np.floor(x / y))

def_power(np.float_power)

# clip(x, lo, hi) is minimum(maximum(x, lo), hi): the derivative goes to x inside the
# bounds, to the bound it gives elsewhere (hi everywhere where lo > hi, as NumPy gives)
for _fn in (np.clip, np.ndarray.clip):
    broadcasting(_fn)
    defjvp(
        _fn,
        lambda dx, ans, x, lo=None, hi=None, **kw: dx * runtime.clip_mask(x, lo, hi),
        lambda dlo, ans, x, lo=None, hi=None, **kw: dlo * runtime.clipped_low(x, lo, hi),
        lambda dhi, ans, x, lo=None, hi=None, **kw: dhi * runtime.clipped_high(x, lo, hi),
    )
    defvjp(
        _fn,
        lambda ct, ans, x, lo=None, hi=None, **kw: ct * runtime.clip_mask(x, lo, hi),
        lambda ct, ans, x, lo=None, hi=None, **kw: ct * runtime.clipped_low(x, lo, hi),
        lambda ct, ans, x, lo=None, hi=None, **kw: ct * runtime.clipped_high(x, lo, hi),
    )
handles(np.clip, fills={"a_min": None, "a_max": None})

# --- elementwise odds and ends (real arguments) ---------------------------------------
broadcasting(np.copysign)

defjvp(
    np.copysign,
    lambda dx, ans, x, y: dx * np.where(np.signbit(x) == np.signbit(ans), 1.0, -1.0),
    ZERO,
)

defvjp(
    np.copysign,
    lambda ct, ans, x, y: ct * np.where(np.signbit(x) == np.signbit(ans), 1.0, -1.0),
    ZERO,
)

defjvp(np.nan_to_num, lambda dx, ans, x, *args, **kw: dx * np.isfinite(x))

defvjp(np.nan_to_num, lambda ct, ans, x, *args, **kw: ct * np.isfinite(x))
handles(np.nan_to_num, "copy", "nan", "posinf", "neginf")

def_linear(np.conjugate, np.ndarray.conj, np.ndarray.conjugate, np.asanyarray, np.asarray_chkfinite)

for _fn in (np.conjugate, np.ndarray.conj, np.ndarray.conjugate):
    defvjp(_fn, lambda ct, ans, x: np.conjugate(ct))

for _fn in (np.asanyarray, np.asarray_chkfinite):
    defvjp(_fn, lambda ct, ans, x, *args, **kw: ct)
handles(np.asarray_chkfinite, "dtype", "order")

# real part: for real arguments an identity
defjvp(np.real, lambda dx, ans, x: np.real(dx))

defvjp(np.real, lambda ct, ans, x: ct)

defjvp((np.ndarray, "real"), lambda dx, ans, x: np.real(dx))

defvjp((np.ndarray, "real"), lambda ct, ans, x: ct)


# Helpers the rules above call that have no rules of their own: pure, so an unused call
# in derivative code may be dropped. (np.add.at and np.put_along_axis write into their
# first argument: not pure.)
pure(
    np.full_like,
    np.bincount,
    np.multiply.outer,
    np.polyder,
    np.take_along_axis,
    np.add.reduceat,
)

# Questions about a value's type and shape: no derivative (the runtime's helpers ask them,
# and are differentiated again for second derivatives).
nondifferentiable(np.result_type, np.iscomplexobj, np.isrealobj, np.broadcast_shapes)

# Conversions to NumPy's integer and bool types (np.int64(x), np.bool_(x)): values without a
# derivative, as builtins.int's; kinds of their results as the conversions say.
_INTEGER_TYPES = (
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.intp,
    np.bool_,
)
nondifferentiable(*dict.fromkeys(_INTEGER_TYPES))

# Conversions to NumPy's float types (np.float64(x), np.float32(x)): the identity, its
# tangent in the type converted to, its cotangent in the argument's (as x.astype's)
for _fn in (np.float64, np.float32, np.float16):
    def_linear(_fn)
    defvjp(_fn, lambda ct, ans, x: runtime.astype_vjp(ct, x))
