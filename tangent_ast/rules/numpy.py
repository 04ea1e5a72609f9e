"""Rules for NumPy functions and ndarray methods.

Elementwise functions are given by their derivative, ``y = f(x)`` with
``dy/dx`` written in terms of the result ``ans`` and the argument ``x``.
"""

import numpy as np

from .. import runtime
from ..kinds import matmul_kind, reduction_kind, transpose_kind
from .registry import (broadcasting, def_linear, defjvp, defvjp, elementwise,
                       nondifferentiable, primitive, specialize)

ELEMENTWISE = [
    (np.sin,     lambda ans, x: np.cos(x)),
    (np.cos,     lambda ans, x: -np.sin(x)),
    (np.tan,     lambda ans, x: 1 / np.cos(x) ** 2),
    (np.arcsin,  lambda ans, x: 1 / np.sqrt(1 - x ** 2)),
    (np.arccos,  lambda ans, x: -1 / np.sqrt(1 - x ** 2)),
    (np.arctan,  lambda ans, x: 1 / (1 + x ** 2)),
    (np.sinh,    lambda ans, x: np.cosh(x)),
    (np.cosh,    lambda ans, x: np.sinh(x)),
    (np.tanh,    lambda ans, x: 1 - ans ** 2),
    (np.arcsinh, lambda ans, x: 1 / np.sqrt(x ** 2 + 1)),
    (np.arccosh, lambda ans, x: 1 / np.sqrt(x ** 2 - 1)),
    (np.arctanh, lambda ans, x: 1 / (1 - x ** 2)),
    (np.exp,     lambda ans, x: ans),
    (np.exp2,    lambda ans, x: ans * np.log(2)),
    (np.expm1,   lambda ans, x: ans + 1),
    (np.log,     lambda ans, x: 1 / x),
    (np.log2,    lambda ans, x: 1 / (x * np.log(2))),
    (np.log10,   lambda ans, x: 1 / (x * np.log(10))),
    (np.log1p,   lambda ans, x: 1 / (1 + x)),
    (np.sqrt,    lambda ans, x: 1 / (2 * ans)),
    (np.cbrt,    lambda ans, x: 1 / (3 * ans ** 2)),
    (np.square,  lambda ans, x: 2 * x),
    (np.reciprocal, lambda ans, x: -ans ** 2),
    (np.absolute, lambda ans, x: np.sign(x)),
    (np.fabs,    lambda ans, x: np.sign(x)),
]
for _fn, _derivative in ELEMENTWISE:
    elementwise(_fn, _derivative)

def_linear(np.negative, np.positive)
defvjp(np.negative, lambda ct, ans, x: -ct)
defvjp(np.positive, lambda ct, ans, x: ct)
broadcasting(np.negative, np.positive)

# Binary elementwise functions: the operators' rules, by their NumPy names.
broadcasting(np.add, np.subtract, np.multiply, np.divide, np.power,
             np.maximum, np.minimum, np.fmax, np.fmin, np.arctan2, np.hypot,
             np.logaddexp, np.where)
defjvp(np.add, lambda dx, ans, x, y: dx,
               lambda dy, ans, x, y: dy)
defvjp(np.add, lambda ct, ans, x, y: ct,
               lambda ct, ans, x, y: ct)
defjvp(np.subtract, lambda dx, ans, x, y: dx,
                    lambda dy, ans, x, y: -dy)
defvjp(np.subtract, lambda ct, ans, x, y: ct,
                    lambda ct, ans, x, y: -ct)
defjvp(np.multiply, lambda dx, ans, x, y: dx * y,
                    lambda dy, ans, x, y: x * dy)
defvjp(np.multiply, lambda ct, ans, x, y: ct * y,
                    lambda ct, ans, x, y: ct * x)
defjvp(np.divide, lambda dx, ans, x, y: dx / y,
                  lambda dy, ans, x, y: -dy * ans / y)
defvjp(np.divide, lambda ct, ans, x, y: ct / y,
                  lambda ct, ans, x, y: -ct * ans / y)
defjvp(np.power, lambda dx, ans, x, y: dx * y * x ** (y - 1),
                 lambda dy, ans, x, y: dy * ans * np.log(x))
defvjp(np.power, lambda ct, ans, x, y: ct * y * x ** (y - 1),
                 lambda ct, ans, x, y: ct * ans * np.log(x))

# maximum/minimum pick one argument; at ties the derivative goes to the first.
for _fn in (np.maximum, np.fmax):
    defjvp(_fn, lambda dx, ans, x, y: dx * (x >= y),
                lambda dy, ans, x, y: dy * (x < y))
    defvjp(_fn, lambda ct, ans, x, y: ct * (x >= y),
                lambda ct, ans, x, y: ct * (x < y))
for _fn in (np.minimum, np.fmin):
    defjvp(_fn, lambda dx, ans, x, y: dx * (x <= y),
                lambda dy, ans, x, y: dy * (x > y))
    defvjp(_fn, lambda ct, ans, x, y: ct * (x <= y),
                lambda ct, ans, x, y: ct * (x > y))

defjvp(np.arctan2, lambda dy, ans, y, x: dy * x / (x ** 2 + y ** 2),
                   lambda dx, ans, y, x: -dx * y / (x ** 2 + y ** 2))
defvjp(np.arctan2, lambda ct, ans, y, x: ct * x / (x ** 2 + y ** 2),
                   lambda ct, ans, y, x: -ct * y / (x ** 2 + y ** 2))
defjvp(np.hypot, lambda dx, ans, x, y: dx * x / ans,
                 lambda dy, ans, x, y: dy * y / ans)
defvjp(np.hypot, lambda ct, ans, x, y: ct * x / ans,
                 lambda ct, ans, x, y: ct * y / ans)
defjvp(np.logaddexp, lambda dx, ans, x, y: dx * np.exp(x - ans),
                     lambda dy, ans, x, y: dy * np.exp(y - ans))
defvjp(np.logaddexp, lambda ct, ans, x, y: ct * np.exp(x - ans),
                     lambda ct, ans, x, y: ct * np.exp(y - ans))

defjvp(np.where, None, lambda dx, ans, c, x, y: np.where(c, dx, 0.0),
                       lambda dy, ans, c, x, y: np.where(c, 0.0, dy))
defvjp(np.where, None, lambda ct, ans, c, x, y: np.where(c, ct, 0.0),
                       lambda ct, ans, c, x, y: np.where(c, 0.0, ct))

# Reductions and shape functions are linear: the forward rule is the call itself.
def_linear(np.sum, np.mean, np.reshape, np.transpose, np.ravel,
           np.ndarray.sum, np.ndarray.mean, np.ndarray.reshape, np.ndarray.transpose,
           np.ndarray.ravel)
for _fn in (np.sum, np.ndarray.sum):
    defvjp(_fn, lambda ct, ans, x, **kw: runtime.sum_vjp(ct, x, **kw))
    specialize(_fn, "vjp", lambda x, *rest: x.tag == "array" and not rest,
               lambda ct, ans, x: np.full_like(x, ct))
for _fn in (np.mean, np.ndarray.mean):
    defvjp(_fn, lambda ct, ans, x, **kw: runtime.mean_vjp(ct, x, **kw))
    specialize(_fn, "vjp", lambda x, *rest: x.tag == "array" and not rest,
               lambda ct, ans, x: np.full_like(x, ct / x.size))
defvjp(np.reshape, lambda ct, ans, x, *shape, **kwargs: np.reshape(ct, np.shape(x)))
defvjp(np.ndarray.reshape, lambda ct, ans, x, *shape, **kwargs: np.reshape(ct, np.shape(x)))
defvjp(np.ravel, lambda ct, ans, x: np.reshape(ct, np.shape(x)))
defvjp(np.ndarray.ravel, lambda ct, ans, x: np.reshape(ct, np.shape(x)))
defvjp(np.transpose, lambda ct, ans, x, axes=None: runtime.transpose_vjp(ct, axes))
defvjp(np.ndarray.transpose, lambda ct, ans, x, *axes: runtime.transpose_vjp(ct, axes or None))

for _fn in (np.sum, np.mean, np.ndarray.sum, np.ndarray.mean):
    primitive(_fn).kind = reduction_kind
for _fn in (np.dot, np.matmul, np.ndarray.dot):
    primitive(_fn).kind = matmul_kind
for _fn in (np.transpose, np.ndarray.transpose, (np.ndarray, "T")):
    primitive(_fn).kind = transpose_kind

defjvp((np.ndarray, "T"), lambda dx, ans, x: dx.T)
defvjp((np.ndarray, "T"), lambda ct, ans, x: ct.T)

for _fn in (np.dot, np.matmul, np.ndarray.dot):
    defjvp(_fn, lambda dx, ans, x, y: np.dot(dx, y),
                lambda dy, ans, x, y: np.dot(x, dy))
    defvjp(_fn, lambda ct, ans, x, y: runtime.matmul_vjp_left(ct, x, y),
                lambda ct, ans, x, y: runtime.matmul_vjp_right(ct, x, y))
    specialize(_fn, "vjp", lambda x, y: x.ndim == 2 and y.ndim == 2,
               lambda ct, ans, x, y: ct @ y.T,
               lambda ct, ans, x, y: x.T @ ct)
    specialize(_fn, "vjp", lambda x, y: x.ndim == 2 and y.ndim == 1,
               lambda ct, ans, x, y: np.outer(ct, y),
               lambda ct, ans, x, y: x.T @ ct)
    specialize(_fn, "vjp", lambda x, y: x.ndim == 1 and y.ndim == 1,
               lambda ct, ans, x, y: ct * y,
               lambda ct, ans, x, y: ct * x)
defjvp(np.matmul, lambda dx, ans, x, y: dx @ y,
                  lambda dy, ans, x, y: x @ dy)

nondifferentiable(np.sign, np.floor, np.ceil, np.round, np.rint, np.trunc,
                  np.shape, np.ndim, np.size, np.zeros, np.ones, np.empty, np.arange,
                  np.zeros_like, np.ones_like, np.empty_like, np.argmax, np.argmin,
                  np.argsort, np.isfinite, np.isnan, np.isinf, np.greater, np.less,
                  np.equal, np.not_equal, np.greater_equal, np.less_equal,
                  np.logical_and, np.logical_or, np.logical_not,
                  (np.ndarray, "shape"), (np.ndarray, "ndim"), (np.ndarray, "size"),
                  (np.ndarray, "dtype"))


# ---------------------------------------------------------------------------
# Issue 5: the wider NumPy table. Multi-statement rules live in ``runtime`` as
# named helpers whose parameters mirror the NumPy function's; the rules here
# are one-line calls to them, inlined at the call site.

ELEMENTWISE_MORE = [
    (np.deg2rad, lambda ans, x: np.pi / 180),
    (np.radians, lambda ans, x: np.pi / 180),
    (np.rad2deg, lambda ans, x: 180 / np.pi),
    (np.degrees, lambda ans, x: 180 / np.pi),
    (np.sinc,    lambda ans, x: runtime.sinc_derivative(x)),
]
for _fn, _derivative in ELEMENTWISE_MORE:
    elementwise(_fn, _derivative)

broadcasting(np.logaddexp2, np.fmod, np.remainder, np.float_power, np.clip)
defjvp(np.logaddexp2, lambda dx, ans, x, y: dx * np.exp2(x - ans),
                      lambda dy, ans, x, y: dy * np.exp2(y - ans))
defvjp(np.logaddexp2, lambda ct, ans, x, y: ct * np.exp2(x - ans),
                      lambda ct, ans, x, y: ct * np.exp2(y - ans))
# fmod(x, y) == x - trunc(x / y) * y; remainder(x, y) == x - floor(x / y) * y
defjvp(np.fmod, lambda dx, ans, x, y: dx,
                lambda dy, ans, x, y: -dy * np.trunc(x / y))
defvjp(np.fmod, lambda ct, ans, x, y: ct,
                lambda ct, ans, x, y: -ct * np.trunc(x / y))
defjvp(np.remainder, lambda dx, ans, x, y: dx,
                     lambda dy, ans, x, y: -dy * np.floor(x / y))
defvjp(np.remainder, lambda ct, ans, x, y: ct,
                     lambda ct, ans, x, y: -ct * np.floor(x / y))
defjvp(np.float_power, lambda dx, ans, x, y: dx * y * np.float_power(x, y - 1),
                       lambda dy, ans, x, y: dy * ans * np.log(x))
defvjp(np.float_power, lambda ct, ans, x, y: ct * y * np.float_power(x, y - 1),
                       lambda ct, ans, x, y: ct * ans * np.log(x))

# clip: the derivative goes to x inside the bounds, to a bound where it clips.
for _fn in (np.clip, np.ndarray.clip):
    broadcasting(_fn)
    defjvp(_fn, lambda dx, ans, x, lo=None, hi=None, **kw: dx * runtime.clip_mask(x, lo, hi),
                lambda dlo, ans, x, lo=None, hi=None, **kw: dlo * (x < lo),
                lambda dhi, ans, x, lo=None, hi=None, **kw: dhi * (x > hi))
    defvjp(_fn, lambda ct, ans, x, lo=None, hi=None, **kw: ct * runtime.clip_mask(x, lo, hi),
                lambda ct, ans, x, lo=None, hi=None, **kw: ct * (x < lo),
                lambda ct, ans, x, lo=None, hi=None, **kw: ct * (x > hi))

# --- reductions -----------------------------------------------------------------------
for _fn in (np.max, np.min, np.amax, np.amin, np.ndarray.max, np.ndarray.min):
    defjvp(_fn, lambda dx, ans, x, *args, **kw: runtime.extremum_jvp(dx, ans, x, *args, **kw))
    defvjp(_fn, lambda ct, ans, x, *args, **kw: runtime.extremum_vjp(ct, ans, x, *args, **kw))
defjvp(np.ptp, lambda dx, ans, x, *args, **kw: runtime.ptp_jvp(dx, ans, x, *args, **kw))
defvjp(np.ptp, lambda ct, ans, x, *args, **kw: runtime.ptp_vjp(ct, ans, x, *args, **kw))
for _fn in (np.prod, np.ndarray.prod):
    defjvp(_fn, lambda dx, ans, x, *args, **kw: runtime.prod_jvp(dx, ans, x, *args, **kw))
    defvjp(_fn, lambda ct, ans, x, *args, **kw: runtime.prod_vjp(ct, ans, x, *args, **kw))
for _fn in (np.var, np.ndarray.var):
    defjvp(_fn, lambda dx, ans, x, *args, **kw: runtime.var_jvp(dx, ans, x, *args, **kw))
    defvjp(_fn, lambda ct, ans, x, *args, **kw: runtime.var_vjp(ct, ans, x, *args, **kw))
for _fn in (np.std, np.ndarray.std):
    defjvp(_fn, lambda dx, ans, x, *args, **kw: runtime.std_jvp(dx, ans, x, *args, **kw))
    defvjp(_fn, lambda ct, ans, x, *args, **kw: runtime.std_vjp(ct, ans, x, *args, **kw))
defjvp(np.average, lambda dx, ans, x, *args, **kw: runtime.mean_jvp(dx, ans, x, *args, **kw))
defvjp(np.average, lambda ct, ans, x, *args, **kw: runtime.average_vjp(ct, ans, x, *args, **kw))
for _fn in (np.max, np.min, np.amax, np.amin, np.ndarray.max, np.ndarray.min, np.ptp,
            np.prod, np.ndarray.prod, np.var, np.ndarray.var, np.std, np.ndarray.std):
    primitive(_fn).kind = reduction_kind

def_linear(np.cumsum, np.ndarray.cumsum, np.diff, np.trace, np.ndarray.trace,
           np.diagonal, np.ndarray.diagonal)
for _fn in (np.cumsum, np.ndarray.cumsum):
    defvjp(_fn, lambda ct, ans, x, *args, **kw: runtime.cumsum_vjp(ct, x, *args, **kw))
for _fn in (np.cumprod, np.ndarray.cumprod):
    defjvp(_fn, lambda dx, ans, x, *args, **kw: runtime.cumprod_jvp(dx, ans, x, *args, **kw))
    defvjp(_fn, lambda ct, ans, x, *args, **kw: runtime.cumprod_vjp(ct, ans, x, *args, **kw))
defvjp(np.diff, lambda ct, ans, x, *args, **kw: runtime.diff_vjp(ct, x, *args, **kw))
for _fn in (np.trace, np.ndarray.trace):
    defvjp(_fn, lambda ct, ans, x, *args, **kw: runtime.trace_vjp(ct, x, *args, **kw))
for _fn in (np.diagonal, np.ndarray.diagonal):
    defvjp(_fn, lambda ct, ans, x, *args, **kw: runtime.diagonal_vjp(ct, x, *args, **kw))

# --- shape functions: linear; the reverse rule undoes the rearrangement -----------------
def_linear(np.swapaxes, np.moveaxis, np.expand_dims, np.squeeze, np.atleast_1d, np.atleast_2d,
           np.atleast_3d, np.flip, np.fliplr, np.flipud, np.roll, np.broadcast_to, np.tile,
           np.repeat, np.diag, np.triu, np.tril, np.rot90,
           np.ndarray.swapaxes, np.ndarray.squeeze, np.ndarray.flatten, np.ndarray.repeat,
           np.ndarray.copy, np.ndarray.astype, np.copy, np.array, np.asarray, np.ascontiguousarray)
for _fn in (np.expand_dims, np.squeeze, np.atleast_1d, np.atleast_2d, np.atleast_3d,
            np.ndarray.squeeze, np.ndarray.flatten):
    defvjp(_fn, lambda ct, ans, x, *args, **kw: np.reshape(ct, np.shape(x)))
for _fn in (np.swapaxes, np.ndarray.swapaxes):
    defvjp(_fn, lambda ct, ans, x, axis1, axis2: np.swapaxes(ct, axis1, axis2))
defvjp(np.moveaxis, lambda ct, ans, x, source, destination: runtime.moveaxis_vjp(ct, source, destination))
defvjp(np.flip, lambda ct, ans, x, axis=None: np.flip(ct, axis))
defvjp(np.fliplr, lambda ct, ans, x: np.fliplr(ct))
defvjp(np.flipud, lambda ct, ans, x: np.flipud(ct))
defvjp(np.rot90, lambda ct, ans, x, k=1, axes=(0, 1): np.rot90(ct, -k, axes))
defvjp(np.roll, lambda ct, ans, x, shift, axis=None: runtime.roll_vjp(ct, shift, axis))
defvjp(np.broadcast_to, lambda ct, ans, x, shape, **kw: runtime.unbroadcast(ct, x))
defvjp(np.tile, lambda ct, ans, x, reps: runtime.tile_vjp(ct, x, reps))
for _fn in (np.repeat, np.ndarray.repeat):
    defvjp(_fn, lambda ct, ans, x, repeats, axis=None: runtime.repeat_vjp(ct, x, repeats, axis))
defvjp(np.diag, lambda ct, ans, x, k=0: runtime.diag_vjp(ct, x, k))
defvjp(np.triu, lambda ct, ans, x, k=0: np.triu(ct, k))
defvjp(np.tril, lambda ct, ans, x, k=0: np.tril(ct, k))
for _fn in (np.sort,):
    defjvp(_fn, lambda dx, ans, x, *args, **kw: runtime.sort_jvp(dx, x, *args, **kw))
    defvjp(_fn, lambda ct, ans, x, *args, **kw: runtime.sort_vjp(ct, x, *args, **kw))
# identities: copies and conversions of one array
for _fn in (np.copy, np.array, np.asarray, np.ascontiguousarray, np.ndarray.copy):
    defvjp(_fn, lambda ct, ans, x, *args, **kw: ct)
defvjp(np.ndarray.astype, lambda ct, ans, x, *args, **kw: runtime.astype_vjp(ct, x))

# --- products -------------------------------------------------------------------------
defjvp(np.inner, lambda dx, ans, x, y: np.inner(dx, y),
                 lambda dy, ans, x, y: np.inner(x, dy))
defvjp(np.inner, lambda ct, ans, x, y: runtime.inner_vjp_left(ct, x, y),
                 lambda ct, ans, x, y: runtime.inner_vjp_right(ct, x, y))
defjvp(np.outer, lambda dx, ans, x, y: np.outer(dx, y),
                 lambda dy, ans, x, y: np.outer(x, dy))
defvjp(np.outer, lambda ct, ans, x, y: np.reshape(ct @ np.ravel(y), np.shape(x)),
                 lambda ct, ans, x, y: np.reshape(np.ravel(x) @ ct, np.shape(y)))
# vdot of real arrays (complex arguments would need conjugates)
defjvp(np.vdot, lambda dx, ans, x, y: np.vdot(dx, y),
                lambda dy, ans, x, y: np.vdot(x, dy))
defvjp(np.vdot, lambda ct, ans, x, y: ct * np.reshape(y, np.shape(x)),
                lambda ct, ans, x, y: ct * np.reshape(x, np.shape(y)))
defjvp(np.tensordot, lambda dx, ans, x, y, axes=2: np.tensordot(dx, y, axes),
                     lambda dy, ans, x, y, axes=2: np.tensordot(x, dy, axes))
defvjp(np.tensordot, lambda ct, ans, x, y, axes=2: runtime.tensordot_vjp_left(ct, x, y, axes),
                     lambda ct, ans, x, y, axes=2: runtime.tensordot_vjp_right(ct, x, y, axes))
defjvp(np.kron, lambda dx, ans, x, y: np.kron(dx, y),
                lambda dy, ans, x, y: np.kron(x, dy))
defvjp(np.kron, lambda ct, ans, x, y: runtime.kron_vjp_left(ct, x, y),
                lambda ct, ans, x, y: runtime.kron_vjp_right(ct, x, y))
broadcasting(np.cross)
defjvp(np.cross, lambda dx, ans, x, y, **kw: np.cross(dx, y, **kw),
                 lambda dy, ans, x, y, **kw: np.cross(x, dy, **kw))
defvjp(np.cross, lambda ct, ans, x, y: np.cross(y, ct),
                 lambda ct, ans, x, y: np.cross(ct, x))

nondifferentiable(np.floor_divide, np.isclose, np.allclose, np.array_equal, np.argwhere,
                  np.nonzero, np.count_nonzero, np.searchsorted, np.full, np.eye, np.identity,
                  np.linspace, np.heaviside, np.signbit, np.iscomplex, np.isreal, np.any, np.all,
                  np.ndarray.argmax, np.ndarray.argmin, np.ndarray.argsort, np.ndarray.any,
                  np.ndarray.all, np.ndarray.nonzero)

def_linear(np.take, np.pad)
defvjp(np.take, lambda ct, ans, x, indices, *args, **kw: runtime.take_vjp(ct, x, indices, *args, **kw), None)
defvjp(np.pad, lambda ct, ans, x, pad_width, *args, **kw: runtime.pad_vjp(ct, x, pad_width, *args, **kw), None)

# einsum: the subscripts come first; one rule per operand position (up to four operands).
defjvp(np.einsum, None,
       lambda d, ans, sub, *ops: runtime.einsum_jvp(d, 0, sub, *ops),
       lambda d, ans, sub, *ops: runtime.einsum_jvp(d, 1, sub, *ops),
       lambda d, ans, sub, *ops: runtime.einsum_jvp(d, 2, sub, *ops),
       lambda d, ans, sub, *ops: runtime.einsum_jvp(d, 3, sub, *ops))
defvjp(np.einsum, None,
       lambda ct, ans, sub, *ops: runtime.einsum_vjp(ct, 0, sub, *ops),
       lambda ct, ans, sub, *ops: runtime.einsum_vjp(ct, 1, sub, *ops),
       lambda ct, ans, sub, *ops: runtime.einsum_vjp(ct, 2, sub, *ops),
       lambda ct, ans, sub, *ops: runtime.einsum_vjp(ct, 3, sub, *ops))
