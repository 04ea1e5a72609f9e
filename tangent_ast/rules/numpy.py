"""Rules for NumPy functions and ndarray methods.

Elementwise functions are given by their derivative, ``y = f(x)`` with
``dy/dx`` written in terms of the result ``ans`` and the argument ``x``.
"""

import numpy as np

from .. import runtime
from ..kinds import constructor_kind, matmul_kind, reduction_kind, transpose_kind
from .binding import CallRefused
from .registry import (
    ZERO,
    broadcasting,
    def_linear,
    defjvp,
    defvjp,
    elementwise,
    handles,
    nondifferentiable,
    primitive,
    pure,
    specialize,
)

ELEMENTWISE = [
    (np.sin, lambda ans, x: np.cos(x)),
    (np.cos, lambda ans, x: -np.sin(x)),
    (np.tan, lambda ans, x: 1 / np.cos(x) ** 2),
    (np.arcsin, lambda ans, x: 1 / np.sqrt(1 - x**2)),
    (np.arccos, lambda ans, x: -1 / np.sqrt(1 - x**2)),
    (np.arctan, lambda ans, x: 1 / (1 + x**2)),
    (np.sinh, lambda ans, x: np.cosh(x)),
    (np.cosh, lambda ans, x: np.sinh(x)),
    (np.tanh, lambda ans, x: 1 - ans**2),
    (np.arcsinh, lambda ans, x: 1 / np.sqrt(x**2 + 1)),
    (np.arccosh, lambda ans, x: 1 / np.sqrt(x**2 - 1)),
    (np.arctanh, lambda ans, x: 1 / (1 - x**2)),
    (np.exp, lambda ans, x: ans),
    (np.exp2, lambda ans, x: ans * np.log(2)),
    (np.expm1, lambda ans, x: ans + 1),
    (np.log, lambda ans, x: 1 / x),
    (np.log2, lambda ans, x: 1 / (x * np.log(2))),
    (np.log10, lambda ans, x: 1 / (x * np.log(10))),
    (np.log1p, lambda ans, x: 1 / (1 + x)),
    (np.sqrt, lambda ans, x: 1 / (2 * ans)),
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
defjvp(
    np.power,
    lambda dx, ans, x, y: dx * y * x ** (y - 1),
    lambda dy, ans, x, y: dy * runtime.xlogy(ans, x),
)
defvjp(
    np.power,
    lambda ct, ans, x, y: ct * y * x ** (y - 1),
    lambda ct, ans, x, y: ct * runtime.xlogy(ans, x),
)

# maximum/minimum pick one argument; at ties the derivative goes to the first.
for _fn in (np.maximum, np.fmax):
    defjvp(_fn, lambda dx, ans, x, y: dx * (x >= y), lambda dy, ans, x, y: dy * (x < y))
    defvjp(_fn, lambda ct, ans, x, y: ct * (x >= y), lambda ct, ans, x, y: ct * (x < y))
for _fn in (np.minimum, np.fmin):
    defjvp(_fn, lambda dx, ans, x, y: dx * (x <= y), lambda dy, ans, x, y: dy * (x > y))
    defvjp(_fn, lambda ct, ans, x, y: ct * (x <= y), lambda ct, ans, x, y: ct * (x > y))

defjvp(
    np.arctan2,
    lambda dy, ans, y, x: dy * x / (x**2 + y**2),
    lambda dx, ans, y, x: -dx * y / (x**2 + y**2),
)
defvjp(
    np.arctan2,
    lambda ct, ans, y, x: ct * x / (x**2 + y**2),
    lambda ct, ans, y, x: -ct * y / (x**2 + y**2),
)
defjvp(np.hypot, lambda dx, ans, x, y: dx * x / ans, lambda dy, ans, x, y: dy * y / ans)
defvjp(np.hypot, lambda ct, ans, x, y: ct * x / ans, lambda ct, ans, x, y: ct * y / ans)
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

# Reductions and shape functions are linear: the forward rule is the call itself.
def_linear(
    np.sum,
    np.mean,
    np.reshape,
    np.transpose,
    np.ravel,
    np.ndarray.sum,
    np.ndarray.mean,
    np.ndarray.reshape,
    np.ndarray.transpose,
    np.ndarray.ravel,
)
for _fn in (np.sum, np.ndarray.sum):
    defvjp(_fn, lambda ct, ans, x, **kw: runtime.sum_vjp(ct, x, **kw))
    specialize(
        _fn,
        "vjp",
        lambda x, *rest: x.tag == "array" and not rest,
        lambda ct, ans, x: np.full_like(x, ct),
    )
for _fn in (np.mean, np.ndarray.mean):
    defvjp(_fn, lambda ct, ans, x, **kw: runtime.mean_vjp(ct, x, **kw))
    specialize(
        _fn,
        "vjp",
        lambda x, *rest: x.tag == "array" and not rest,
        lambda ct, ans, x: np.full_like(x, ct / x.size),
    )
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
for _fn in (np.zeros, np.ones, np.empty):
    primitive(_fn).kind = constructor_kind
for _fn in (np.transpose, np.ndarray.transpose, (np.ndarray, "T")):
    primitive(_fn).kind = transpose_kind

defjvp((np.ndarray, "T"), lambda dx, ans, x: dx.T)
defvjp((np.ndarray, "T"), lambda ct, ans, x: ct.T)

for _fn in (np.dot, np.matmul, np.ndarray.dot):
    defjvp(_fn, lambda dx, ans, x, y: np.dot(dx, y), lambda dy, ans, x, y: np.dot(x, dy))
    defvjp(
        _fn,
        lambda ct, ans, x, y: runtime.matmul_vjp_left(ct, x, y),
        lambda ct, ans, x, y: runtime.matmul_vjp_right(ct, x, y),
    )
# np.dot of N-d arrays is not matmul: it sums the last axis of x against the second-to-last
# of y, pairing every stack of x with every stack of y (a tensordot)
for _fn in (np.dot, np.ndarray.dot):
    defvjp(
        _fn,
        lambda ct, ans, x, y: runtime.dot_vjp_left(ct, x, y),
        lambda ct, ans, x, y: runtime.dot_vjp_right(ct, x, y),
    )
    specialize(
        _fn,
        "vjp",
        lambda x, y: x.ndim == 2 and y.ndim == 2,
        lambda ct, ans, x, y: ct @ y.T,
        lambda ct, ans, x, y: x.T @ ct,
    )
    specialize(
        _fn,
        "vjp",
        lambda x, y: x.ndim == 2 and y.ndim == 1,
        lambda ct, ans, x, y: np.outer(ct, y),
        lambda ct, ans, x, y: x.T @ ct,
    )
    specialize(
        _fn,
        "vjp",
        lambda x, y: x.ndim == 1 and y.ndim == 1,
        lambda ct, ans, x, y: ct * y,
        lambda ct, ans, x, y: ct * x,
    )
defjvp(np.matmul, lambda dx, ans, x, y: dx @ y, lambda dy, ans, x, y: x @ dy)

nondifferentiable(
    np.sign,
    np.floor,
    np.ceil,
    np.round,
    np.rint,
    np.trunc,
    np.shape,
    np.ndim,
    np.size,
    np.zeros,
    np.ones,
    np.empty,
    np.zeros_like,
    np.ones_like,
    np.empty_like,
    np.argmax,
    np.argmin,
    np.argsort,
    np.isfinite,
    np.isnan,
    np.isinf,
    np.greater,
    np.less,
    np.equal,
    np.not_equal,
    np.greater_equal,
    np.less_equal,
    np.logical_and,
    np.logical_or,
    np.logical_not,
    (np.ndarray, "shape"),
    (np.ndarray, "ndim"),
    (np.ndarray, "size"),
    (np.ndarray, "dtype"),
)


# ---------------------------------------------------------------------------
# Issue 5: the wider NumPy table. Multi-statement rules live in ``runtime`` as
# named helpers whose parameters mirror the NumPy function's; the rules here
# are one-line calls to them, inlined at the call site.

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
defjvp(
    np.float_power,
    lambda dx, ans, x, y: dx * y * np.float_power(x, y - 1),
    lambda dy, ans, x, y: dy * runtime.xlogy(ans, x),
)
defvjp(
    np.float_power,
    lambda ct, ans, x, y: ct * y * np.float_power(x, y - 1),
    lambda ct, ans, x, y: ct * runtime.xlogy(ans, x),
)

# clip: the derivative goes to x inside the bounds, to a bound where it clips.
for _fn in (np.clip, np.ndarray.clip):
    broadcasting(_fn)
    defjvp(
        _fn,
        lambda dx, ans, x, lo=None, hi=None, **kw: dx * runtime.clip_mask(x, lo, hi),
        lambda dlo, ans, x, lo=None, hi=None, **kw: dlo * (x < lo),
        lambda dhi, ans, x, lo=None, hi=None, **kw: dhi * (x > hi),
    )
    defvjp(
        _fn,
        lambda ct, ans, x, lo=None, hi=None, **kw: ct * runtime.clip_mask(x, lo, hi),
        lambda ct, ans, x, lo=None, hi=None, **kw: ct * (x < lo),
        lambda ct, ans, x, lo=None, hi=None, **kw: ct * (x > hi),
    )

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
for _fn in (
    np.max,
    np.min,
    np.amax,
    np.amin,
    np.ndarray.max,
    np.ndarray.min,
    np.ptp,
    np.prod,
    np.ndarray.prod,
    np.var,
    np.ndarray.var,
    np.std,
    np.ndarray.std,
):
    primitive(_fn).kind = reduction_kind

def_linear(
    np.cumsum,
    np.ndarray.cumsum,
    np.diff,
    np.trace,
    np.ndarray.trace,
    np.diagonal,
    np.ndarray.diagonal,
)
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
def_linear(
    np.swapaxes,
    np.moveaxis,
    np.expand_dims,
    np.squeeze,
    np.atleast_1d,
    np.atleast_2d,
    np.atleast_3d,
    np.flip,
    np.fliplr,
    np.flipud,
    np.roll,
    np.broadcast_to,
    np.tile,
    np.repeat,
    np.diag,
    np.triu,
    np.tril,
    np.rot90,
    np.ndarray.swapaxes,
    np.ndarray.squeeze,
    np.ndarray.flatten,
    np.ndarray.repeat,
    np.ndarray.copy,
    np.ndarray.astype,
    np.copy,
    np.array,
    np.asarray,
    np.ascontiguousarray,
)
for _fn in (
    np.expand_dims,
    np.squeeze,
    np.atleast_1d,
    np.atleast_2d,
    np.atleast_3d,
    np.ndarray.squeeze,
    np.ndarray.flatten,
):
    defvjp(_fn, lambda ct, ans, x, *args, **kw: np.reshape(ct, np.shape(x)))
for _fn in (np.swapaxes, np.ndarray.swapaxes):
    defvjp(_fn, lambda ct, ans, x, axis1, axis2: np.swapaxes(ct, axis1, axis2))
defvjp(
    np.moveaxis,
    lambda ct, ans, x, source, destination: runtime.moveaxis_vjp(ct, source, destination),
)
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
for _fn in (np.copy, np.ascontiguousarray, np.ndarray.copy):
    defvjp(_fn, lambda ct, ans, x, *args, **kw: ct)
# np.array/np.asarray of one array is an identity; of a list of arrays and numbers the
# cotangent is split back into the list's entries (a TangentTuple).
for _fn in (np.array, np.asarray):
    defvjp(_fn, lambda ct, ans, x, *args, **kw: runtime.array_vjp(ct, x))
    specialize(_fn, "vjp", lambda x, *rest: x.tag == "array", lambda ct, ans, x, *args, **kw: ct)
defvjp(np.ndarray.astype, lambda ct, ans, x, *args, **kw: runtime.astype_vjp(ct, x))

# --- products -------------------------------------------------------------------------
defjvp(np.inner, lambda dx, ans, x, y: np.inner(dx, y), lambda dy, ans, x, y: np.inner(x, dy))
defvjp(
    np.inner,
    lambda ct, ans, x, y: runtime.inner_vjp_left(ct, x, y),
    lambda ct, ans, x, y: runtime.inner_vjp_right(ct, x, y),
)
defjvp(np.outer, lambda dx, ans, x, y: np.outer(dx, y), lambda dy, ans, x, y: np.outer(x, dy))
defvjp(
    np.outer,
    lambda ct, ans, x, y: np.reshape(ct @ np.ravel(y), np.shape(x)),
    lambda ct, ans, x, y: np.reshape(np.ravel(x) @ ct, np.shape(y)),
)
# vdot of real arrays (complex arguments would need conjugates)
defjvp(np.vdot, lambda dx, ans, x, y: np.vdot(dx, y), lambda dy, ans, x, y: np.vdot(x, dy))
defvjp(
    np.vdot,
    lambda ct, ans, x, y: ct * np.reshape(y, np.shape(x)),
    lambda ct, ans, x, y: ct * np.reshape(x, np.shape(y)),
)
defjvp(
    np.tensordot,
    lambda dx, ans, x, y, axes=2: np.tensordot(dx, y, axes),
    lambda dy, ans, x, y, axes=2: np.tensordot(x, dy, axes),
)
defvjp(
    np.tensordot,
    lambda ct, ans, x, y, axes=2: runtime.tensordot_vjp_left(ct, x, y, axes),
    lambda ct, ans, x, y, axes=2: runtime.tensordot_vjp_right(ct, x, y, axes),
)
defjvp(np.kron, lambda dx, ans, x, y: np.kron(dx, y), lambda dy, ans, x, y: np.kron(x, dy))
defvjp(
    np.kron,
    lambda ct, ans, x, y: runtime.kron_vjp_left(ct, x, y),
    lambda ct, ans, x, y: runtime.kron_vjp_right(ct, x, y),
)
broadcasting(np.cross)
defjvp(
    np.cross,
    lambda dx, ans, x, y, **kw: np.cross(dx, y, **kw),
    lambda dy, ans, x, y, **kw: np.cross(x, dy, **kw),
)
defvjp(np.cross, lambda ct, ans, x, y: np.cross(y, ct), lambda ct, ans, x, y: np.cross(ct, x))

nondifferentiable(
    np.floor_divide,
    np.isclose,
    np.allclose,
    np.array_equal,
    np.argwhere,
    np.nonzero,
    np.count_nonzero,
    np.searchsorted,
    np.eye,
    np.identity,
    np.heaviside,
    np.signbit,
    np.iscomplex,
    np.isreal,
    np.any,
    np.all,
    np.ndarray.argmax,
    np.ndarray.argmin,
    np.ndarray.argsort,
    np.ndarray.any,
    np.ndarray.all,
    np.ndarray.nonzero,
)

def_linear(np.take, np.pad)
defvjp(
    np.take,
    lambda ct, ans, x, indices, *args, **kw: runtime.take_vjp(ct, x, indices, *args, **kw),
    None,
)
defvjp(
    np.pad,
    lambda ct, ans, x, pad_width, *args, **kw: runtime.pad_vjp(ct, x, pad_width, *args, **kw),
    None,
)

# einsum: the subscripts come first; one rule per operand position (up to four operands).
defjvp(
    np.einsum,
    None,
    lambda d, ans, sub, *ops, optimize=False: runtime.einsum_jvp(d, 0, sub, *ops),
    lambda d, ans, sub, *ops, optimize=False: runtime.einsum_jvp(d, 1, sub, *ops),
    lambda d, ans, sub, *ops, optimize=False: runtime.einsum_jvp(d, 2, sub, *ops),
    lambda d, ans, sub, *ops, optimize=False: runtime.einsum_jvp(d, 3, sub, *ops),
)
defvjp(
    np.einsum,
    None,
    lambda ct, ans, sub, *ops, optimize=False: runtime.einsum_vjp(ct, 0, sub, *ops),
    lambda ct, ans, sub, *ops, optimize=False: runtime.einsum_vjp(ct, 1, sub, *ops),
    lambda ct, ans, sub, *ops, optimize=False: runtime.einsum_vjp(ct, 2, sub, *ops),
    lambda ct, ans, sub, *ops, optimize=False: runtime.einsum_vjp(ct, 3, sub, *ops),
)


# ---------------------------------------------------------------------------
# Issue 5, second batch.

# --- NaN-aware reductions: NaNs are skipped, so their elements get no derivative ------
defjvp(
    np.nansum,
    lambda dx, ans, x, *args, **kw: np.nansum(np.where(np.isnan(x), 0.0, dx), *args, **kw),
)
defvjp(np.nansum, lambda ct, ans, x, *args, **kw: runtime.nansum_vjp(ct, x, *args, **kw))
defjvp(
    np.nanmean,
    lambda dx, ans, x, *args, **kw: np.nanmean(np.where(np.isnan(x), np.nan, dx), *args, **kw),
)
defvjp(np.nanmean, lambda ct, ans, x, *args, **kw: runtime.nanmean_vjp(ct, x, *args, **kw))
for _fn in (np.nanmax, np.nanmin):
    defjvp(_fn, lambda dx, ans, x, *args, **kw: runtime.extremum_jvp(dx, ans, x, *args, **kw))
    defvjp(_fn, lambda ct, ans, x, *args, **kw: runtime.extremum_vjp(ct, ans, x, *args, **kw))
defjvp(np.nanprod, lambda dx, ans, x, *args, **kw: runtime.nanprod_jvp(dx, ans, x, *args, **kw))
defvjp(np.nanprod, lambda ct, ans, x, *args, **kw: runtime.nanprod_vjp(ct, ans, x, *args, **kw))
defjvp(np.nanvar, lambda dx, ans, x, *args, **kw: runtime.nanvar_jvp(dx, ans, x, *args, **kw))
defvjp(np.nanvar, lambda ct, ans, x, *args, **kw: runtime.nanvar_vjp(ct, ans, x, *args, **kw))
defjvp(np.nanstd, lambda dx, ans, x, *args, **kw: runtime.nanstd_jvp(dx, ans, x, *args, **kw))
defvjp(np.nanstd, lambda ct, ans, x, *args, **kw: runtime.nanstd_vjp(ct, ans, x, *args, **kw))
for _fn in (np.nansum, np.nanmean, np.nanmax, np.nanmin, np.nanprod, np.nanvar, np.nanstd):
    primitive(_fn).kind = reduction_kind

# --- order statistics (linear interpolation; no derivative in q) ----------------------
defjvp(np.median, lambda dx, ans, x, *args, **kw: runtime.median_jvp(dx, ans, x, *args, **kw))
defvjp(np.median, lambda ct, ans, x, *args, **kw: runtime.median_vjp(ct, ans, x, *args, **kw))
defjvp(
    np.quantile,
    lambda dx, ans, x, q, *args, **kw: runtime.quantile_jvp(dx, ans, x, q, *args, **kw),
    None,
)
defvjp(
    np.quantile,
    lambda ct, ans, x, q, *args, **kw: runtime.quantile_vjp(ct, ans, x, q, *args, **kw),
    None,
)
defjvp(
    np.percentile,
    lambda dx, ans, x, q, *args, **kw: runtime.percentile_jvp(dx, ans, x, q, *args, **kw),
    None,
)
defvjp(
    np.percentile,
    lambda ct, ans, x, q, *args, **kw: runtime.percentile_vjp(ct, ans, x, q, *args, **kw),
    None,
)

# --- cumulative functions -------------------------------------------------------------
def_linear(np.cumulative_sum)
defvjp(np.cumulative_sum, lambda ct, ans, x, **kw: runtime.cumulative_sum_vjp(ct, x, **kw))
defjvp(np.cumulative_prod, lambda dx, ans, x, **kw: runtime.cumulative_prod_jvp(dx, ans, x, **kw))
defvjp(np.cumulative_prod, lambda ct, ans, x, **kw: runtime.cumulative_prod_vjp(ct, ans, x, **kw))
defjvp(
    np.nancumsum,
    lambda dx, ans, x, *args, **kw: np.nancumsum(np.where(np.isnan(x), 0.0, dx), *args, **kw),
)
defvjp(
    np.nancumsum,
    lambda ct, ans, x, *args, **kw: np.where(
        np.isnan(x), 0.0, runtime.cumsum_vjp(ct, x, *args, **kw)
    ),
)
defjvp(
    np.nancumprod,
    lambda dx, ans, x, *args, **kw: runtime.cumprod_jvp(
        np.where(np.isnan(x), 0.0, dx), ans, np.where(np.isnan(x), 1.0, x), *args, **kw
    ),
)
defvjp(
    np.nancumprod,
    lambda ct, ans, x, *args, **kw: np.where(
        np.isnan(x), 0.0, runtime.cumprod_vjp(ct, ans, np.where(np.isnan(x), 1.0, x), *args, **kw)
    ),
)

# --- integration, interpolation, signals, polynomials ---------------------------------
# trapezoid is linear in y and, for fixed y, in the sample points x.
defjvp(
    np.trapezoid,
    lambda dy, ans, y, x=None, dx=1.0, axis=-1: np.trapezoid(dy, x, dx, axis),
    lambda dxs, ans, y, x=None, dx=1.0, axis=-1: np.trapezoid(y, dxs, dx, axis),
)
defvjp(
    np.trapezoid,
    lambda ct, ans, y, x=None, dx=1.0, axis=-1: runtime.trapezoid_vjp_y(ct, y, x, dx, axis),
    lambda ct, ans, y, x=None, dx=1.0, axis=-1: runtime.trapezoid_vjp_x(ct, y, x, dx, axis),
)
# interp: the slope in x; linear in the values fp; no derivative in the sample points xp.
defjvp(
    np.interp,
    lambda dx, ans, x, xp, fp, left=None, right=None, period=None: (
        dx * runtime.interp_slope(x, xp, fp, left, right, period)
    ),
    None,
    lambda dfp, ans, x, xp, fp, left=None, right=None, period=None: runtime.interp_jvp_fp(
        dfp, x, xp, fp, left, right, period
    ),
)
defvjp(
    np.interp,
    lambda ct, ans, x, xp, fp, left=None, right=None, period=None: (
        ct * runtime.interp_slope(x, xp, fp, left, right, period)
    ),
    None,
    lambda ct, ans, x, xp, fp, left=None, right=None, period=None: runtime.interp_vjp_fp(
        ct, x, xp, fp, left, right, period
    ),
)
defjvp(
    np.convolve,
    lambda da, ans, a, v, mode="full": np.convolve(da, v, mode),
    lambda dv, ans, a, v, mode="full": np.convolve(a, dv, mode),
)
defvjp(
    np.convolve,
    lambda ct, ans, a, v, mode="full": runtime.convolve_vjp(ct, a, v, mode),
    lambda ct, ans, a, v, mode="full": runtime.convolve_vjp(ct, a, v, mode, of_v=True),
)
# correlate of real arrays (complex ones would need conjugates)
defjvp(
    np.correlate,
    lambda da, ans, a, v, mode="valid": np.correlate(da, v, mode),
    lambda dv, ans, a, v, mode="valid": np.correlate(a, dv, mode),
)
defvjp(
    np.correlate,
    lambda ct, ans, a, v, mode="valid": runtime.correlate_vjp(ct, a, v, mode),
    lambda ct, ans, a, v, mode="valid": runtime.correlate_vjp(ct, a, v, mode, of_v=True),
)
defjvp(
    np.polyval,
    lambda dp, ans, p, x: np.polyval(dp, x),
    lambda dx, ans, p, x: dx * runtime.polyval_slope(p, x),
)
defvjp(
    np.polyval,
    lambda ct, ans, p, x: runtime.polyval_vjp_p(ct, p, x),
    lambda ct, ans, p, x: ct * runtime.polyval_slope(p, x),
)
# linspace/logspace are linear (logspace: exponential) in start and stop; num is an integer.
defjvp(
    np.linspace,
    lambda d, ans, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0: (
        np.linspace(d, np.zeros_like(stop, dtype=float), num, endpoint, axis=axis)
    ),
    lambda d, ans, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0: (
        np.linspace(np.zeros_like(start, dtype=float), d, num, endpoint, axis=axis)
    ),
)
defvjp(
    np.linspace,
    lambda ct, ans, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0: (
        runtime.linspace_vjp(ct, start, stop, num, endpoint, axis)
    ),
    lambda ct, ans, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0: (
        runtime.linspace_vjp(ct, start, stop, num, endpoint, axis, of_stop=True)
    ),
)
defjvp(
    np.logspace,
    lambda d, ans, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0: (
        ans
        * np.log(base)
        * np.linspace(d, np.zeros_like(stop, dtype=float), num, endpoint, axis=axis)
    ),
    lambda d, ans, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0: (
        ans
        * np.log(base)
        * np.linspace(np.zeros_like(start, dtype=float), d, num, endpoint, axis=axis)
    ),
)
defvjp(
    np.logspace,
    lambda ct, ans, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0: (
        runtime.linspace_vjp(ct * ans * np.log(base), start, stop, num, endpoint, axis)
    ),
    lambda ct, ans, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0: (
        runtime.linspace_vjp(
            ct * ans * np.log(base), start, stop, num, endpoint, axis, of_stop=True
        )
    ),
)

# --- selections and rearrangements: linear ---------------------------------------------
defjvp(
    np.ediff1d,
    lambda dx, ans, ary, to_end=None, to_begin=None: runtime.ediff1d_jvp(dx, ary, to_end, to_begin),
)
defvjp(
    np.ediff1d,
    lambda ct, ans, ary, to_end=None, to_begin=None: runtime.ediff1d_vjp(ct, ary, to_end, to_begin),
)
defjvp(
    np.append,
    lambda d, ans, arr, values, axis=None: np.append(d, np.zeros_like(values, dtype=float), axis),
    lambda d, ans, arr, values, axis=None: np.append(np.zeros_like(arr, dtype=float), d, axis),
)
defvjp(
    np.append,
    lambda ct, ans, arr, values, axis=None: runtime.append_vjp(ct, arr, values, axis),
    lambda ct, ans, arr, values, axis=None: runtime.append_vjp(
        ct, arr, values, axis, of_values=True
    ),
)
def_linear(np.delete, np.resize, np.diagflat, np.rollaxis, np.ndarray.take, np.ndarray.compress)
defvjp(
    np.delete,
    lambda ct, ans, arr, obj, axis=None: runtime.gather_vjp(ct, arr, np.delete, obj, axis),
    None,
)
defvjp(np.resize, lambda ct, ans, a, new_shape: runtime.gather_vjp(ct, a, np.resize, new_shape))
defvjp(np.diagflat, lambda ct, ans, v, k=0: np.reshape(np.diagonal(ct, k), np.shape(v)))
defvjp(
    np.rollaxis,
    lambda ct, ans, a, axis, start=0: runtime.gather_vjp(ct, a, np.rollaxis, axis, start),
)
defvjp(
    np.ndarray.take,
    lambda ct, ans, x, indices, *args, **kw: runtime.take_vjp(ct, x, indices, *args, **kw),
    None,
)
defvjp(
    np.ndarray.compress,
    lambda ct, ans, x, condition, axis=None: runtime.compress_vjp(ct, condition, x, axis),
    None,
)
defjvp(np.compress, None, lambda d, ans, condition, a, axis=None: np.compress(condition, d, axis))
defvjp(
    np.compress,
    None,
    lambda ct, ans, condition, a, axis=None: runtime.compress_vjp(ct, condition, a, axis),
)
defjvp(np.extract, None, lambda d, ans, condition, arr: np.extract(condition, d))
defvjp(np.extract, None, lambda ct, ans, condition, arr: runtime.extract_vjp(ct, condition, arr))

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
def_linear(np.conjugate, np.ndarray.conj, np.ndarray.conjugate, np.asanyarray, np.asarray_chkfinite)
for _fn in (np.conjugate, np.ndarray.conj, np.ndarray.conjugate):
    defvjp(_fn, lambda ct, ans, x: np.conjugate(ct))
for _fn in (np.asanyarray, np.asarray_chkfinite):
    defvjp(_fn, lambda ct, ans, x, *args, **kw: ct)
# real part: for real arguments an identity
defjvp(np.real, lambda dx, ans, x: np.real(dx))
defvjp(np.real, lambda ct, ans, x: ct)
defjvp((np.ndarray, "real"), lambda dx, ans, x: np.real(dx))
defvjp((np.ndarray, "real"), lambda ct, ans, x: ct)

# --- array-API products and transposes (NumPy 2) --------------------------------------
def_linear(np.matrix_transpose)
defvjp(np.matrix_transpose, lambda ct, ans, x: np.matrix_transpose(ct))
defjvp((np.ndarray, "mT"), lambda dx, ans, x: np.matrix_transpose(dx))
defvjp((np.ndarray, "mT"), lambda ct, ans, x: np.matrix_transpose(ct))
# vecdot of real arrays (complex ones would need conjugates)
defjvp(
    np.vecdot,
    lambda dx, ans, x, y, axis=-1: np.vecdot(dx, y, axis=axis),
    lambda dy, ans, x, y, axis=-1: np.vecdot(x, dy, axis=axis),
)
defvjp(
    np.vecdot,
    lambda ct, ans, x, y, axis=-1: runtime.vecdot_vjp(ct, y, x, axis),
    lambda ct, ans, x, y, axis=-1: runtime.vecdot_vjp(ct, x, y, axis),
)
defjvp(np.matvec, lambda da, ans, a, v: np.matvec(da, v), lambda dv, ans, a, v: np.matvec(a, dv))
defvjp(
    np.matvec,
    lambda ct, ans, a, v: runtime.unbroadcast(np.expand_dims(ct, -1) * np.expand_dims(v, -2), a),
    lambda ct, ans, a, v: runtime.unbroadcast(np.vecmat(ct, a), v),
)
defjvp(np.vecmat, lambda dv, ans, v, a: np.vecmat(dv, a), lambda da, ans, v, a: np.vecmat(v, da))
defvjp(
    np.vecmat,
    lambda ct, ans, v, a: runtime.unbroadcast(np.matvec(a, ct), v),
    lambda ct, ans, v, a: runtime.unbroadcast(np.expand_dims(v, -1) * np.expand_dims(ct, -2), a),
)


# ---------------------------------------------------------------------------
# Issue 7: functions taking a list of arrays (its tangent is the list of tangents, its
# cotangent a TangentTuple), and functions returning a list or tuple of arrays (the
# cotangent arriving is a tuple of cotangents, None where one carries none).

# --- joining: linear in the list; the reverse rule splits the cotangent back ----------
def_linear(np.concatenate, np.stack, np.hstack, np.vstack, np.dstack, np.column_stack, np.block)
defvjp(
    np.concatenate, lambda ct, ans, xs, *args, **kw: runtime.concatenate_vjp(ct, xs, *args, **kw)
)
defvjp(np.stack, lambda ct, ans, xs, *args, **kw: runtime.stack_vjp(ct, xs, *args, **kw))
defvjp(np.hstack, lambda ct, ans, xs, **kw: runtime.gather_list_vjp(ct, xs, np.hstack))
defvjp(np.vstack, lambda ct, ans, xs, **kw: runtime.gather_list_vjp(ct, xs, np.vstack))
defvjp(np.dstack, lambda ct, ans, xs: runtime.gather_list_vjp(ct, xs, np.dstack))
defvjp(np.column_stack, lambda ct, ans, xs: runtime.gather_list_vjp(ct, xs, np.column_stack))
defvjp(np.block, lambda ct, ans, xs: runtime.gather_list_vjp(ct, xs, np.block))

# --- splitting: linear; the reverse rule joins the pieces' cotangents -----------------
def_linear(np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit, np.unstack)
defvjp(
    np.split,
    lambda ct, ans, ary, indices_or_sections, axis=0: runtime.split_vjp(ct, ans, axis),
    None,
)
defvjp(
    np.array_split,
    lambda ct, ans, ary, indices_or_sections, axis=0: runtime.split_vjp(ct, ans, axis),
    None,
)
defvjp(
    np.hsplit,
    lambda ct, ans, ary, indices_or_sections: runtime.split_vjp(
        ct, ans, runtime.split_axis(ary, 1)
    ),
    None,
)
defvjp(np.vsplit, lambda ct, ans, ary, indices_or_sections: runtime.split_vjp(ct, ans, 0), None)
defvjp(np.dsplit, lambda ct, ans, ary, indices_or_sections: runtime.split_vjp(ct, ans, 2), None)
defvjp(np.unstack, lambda ct, ans, x, axis=0: runtime.unstack_vjp(ct, ans, axis))


# ---------------------------------------------------------------------------
# What each rule handles besides its differentiable arguments (rules/binding.py): a call
# giving any other parameter (out=, where=, dtype=, order=, initial=, ...) at a value other
# than its default is refused at derivation time.
handles(
    [
        np.sum,
        np.ndarray.sum,
        np.mean,
        np.ndarray.mean,
        np.ptp,
        np.nansum,
        np.nanmean,
        np.max,
        np.min,
        np.amax,
        np.amin,
        np.ndarray.max,
        np.ndarray.min,
        np.nanmax,
        np.nanmin,
        np.prod,
        np.ndarray.prod,
        np.nanprod,
        np.average,
        np.median,
    ],
    "axis",
    "keepdims",
)
handles(
    [np.var, np.ndarray.var, np.std, np.ndarray.std, np.nanvar, np.nanstd],
    "axis",
    "ddof",
    "keepdims",
)
handles([np.quantile, np.percentile], "axis", "keepdims")
handles(
    [
        np.cumsum,
        np.ndarray.cumsum,
        np.cumprod,
        np.ndarray.cumprod,
        np.nancumsum,
        np.nancumprod,
        np.expand_dims,
        np.squeeze,
        np.ndarray.squeeze,
        np.flip,
        np.append,
        np.delete,
        np.unstack,
        np.split,
        np.array_split,
        np.concatenate,
        np.stack,
        np.ndarray.compress,
        np.compress,
    ],
    "axis",
)
handles([np.cumulative_sum, np.cumulative_prod], "axis", "include_initial")
# (not prepend/append: the forward rule is the call on the tangent, which would take their
# values along; np.diff of a tangent with a prepended constant is not its derivative)
handles(np.diff, "n", "axis")
handles([np.trace, np.ndarray.trace, np.diagonal, np.ndarray.diagonal], "offset", "axis1", "axis2")
handles([np.reshape, np.ndarray.reshape], "shape")
handles([np.transpose, np.ndarray.transpose], "axes")
handles([np.swapaxes, np.ndarray.swapaxes], "axis1", "axis2")
handles(np.moveaxis, "source", "destination")
handles(np.roll, "shift", "axis")
handles(np.broadcast_to, "shape")
handles(np.tile, "reps")
handles([np.repeat, np.ndarray.repeat], "repeats", "axis")
handles([np.diag, np.triu, np.tril, np.diagflat], "k")
handles(np.rot90, "k", "axes")
handles([np.ndarray.copy, np.copy], "order")
handles([np.take, np.ndarray.take], "axis", "mode")
handles(np.sort, "axis", "kind")
handles(np.tensordot, "axes")


def _einsum_form(args, argnum, resolve):
    """The einsum rules take explicit string subscripts ('ij,jk->ik'): no sublist form, no
    ellipsis, no implicit output, no index repeated within the differentiated operand."""
    try:
        subscripts = resolve(args[0])
    except LookupError:
        subscripts = None
    if not isinstance(subscripts, str):
        raise CallRefused(
            "np.einsum in sublist form, or with subscripts that are not a constant string",
            "write the subscripts as a string: np.einsum('ij,jk->ik', a, b)",
        )
    if "->" not in subscripts or "." in subscripts:
        raise CallRefused(
            f"np.einsum({subscripts!r}, ...) without an explicit '->' output or with '...'",
            "spell every index out, with the output after '->': 'bij,bjk->bik'",
        )
    target = subscripts.replace(" ", "").split("->")[0].split(",")[argnum - 1]
    if len(set(target)) != len(target):
        raise CallRefused(
            f"np.einsum({subscripts!r}, ...) with an index repeated in a differentiated "
            "operand (a trace or a diagonal)",
            "take it with np.trace or np.diagonal first",
        )


handles(np.einsum, "optimize", validate=_einsum_form)
handles(np.trapezoid, "dx", "axis")
handles(np.interp, "left", "right")
handles([np.convolve, np.correlate], "mode")
handles(np.linspace, "num", "endpoint", "axis")
handles(np.logspace, "num", "endpoint", "base", "axis")
handles(np.ediff1d, "to_end", "to_begin")
handles(np.resize, "new_shape")
handles(np.rollaxis, "axis", "start")
handles(np.nan_to_num, "copy", "nan", "posinf", "neginf")
handles(np.vecdot, "axis")
handles(np.clip, fills={"a_min": None, "a_max": None})
# Conversions: a float dtype keeps the derivative (binding.py checks that it is one).
handles([np.ndarray.astype, np.array, np.asarray, np.asanyarray], "dtype", "order", "copy")
handles(np.ascontiguousarray, "dtype")
handles(np.asarray_chkfinite, "dtype", "order")
# Rules whose differentiable arguments may be lists or tuples of arrays and numbers.
handles(
    [
        np.array,
        np.asarray,
        np.concatenate,
        np.stack,
        np.hstack,
        np.vstack,
        np.dstack,
        np.column_stack,
        np.block,
    ],
    sequences=True,
)
# Helpers the rules above call that have no rules of their own: pure, so an unused call
# in derivative code may be dropped. (np.add.at and np.put_along_axis write into their
# first argument: not pure.)
pure(
    np.full_like,
    np.bincount,
    np.broadcast_shapes,
    np.iscomplexobj,
    np.multiply.outer,
    np.polyder,
    np.result_type,
    np.take_along_axis,
    np.add.reduceat,
)

# np.full(shape, v) and np.full_like(a, v): linear in the fill value v (broadcast to the
# shape); a and shape only give the shape.
defjvp(np.full, None, lambda dv, ans, shape, fill_value: np.full(np.shape(ans), dv))
defvjp(np.full, None, lambda ct, ans, shape, fill_value: runtime.unbroadcast(ct, fill_value))
defjvp(np.full_like, ZERO, lambda dv, ans, a, fill_value: runtime.full_like_jvp(dv, ans))
defvjp(
    np.full_like, ZERO, lambda ct, ans, a, fill_value: runtime.full_like_vjp(ct, ans, fill_value)
)
