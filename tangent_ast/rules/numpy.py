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
