"""Straight-line functions: scalars, math, NumPy, several active and inactive arguments."""

import math

import numpy as np

from .cases import Case

rng = np.random.default_rng(0)
V = rng.standard_normal(4)
W = rng.standard_normal(4)
M = rng.standard_normal((3, 4))
P = rng.uniform(0.5, 2.0, 4)
SCALE = 3.0


def design_example(x, y):
    z = x * y
    return z + np.sin(x)


def poly(x):
    return 3 * x ** 3 - 2 * x ** 2 + x - 7


def reassign(x):
    y = x * 2
    y = y * y
    y = y + x
    return y


def quotient(x, y):
    return (x + 1) / (y * y + 1)


def power_both(x, y):
    return x ** y


def math_chain(x):
    return math.exp(math.sin(x)) + math.log(x * x + 1) - math.sqrt(x * x + 2)


def math_two(x, y):
    return math.atan2(y, x) + math.hypot(x, y) * math.tanh(x)


def math_inverse(x):
    return math.asin(x / 3) + math.acos(x / 4) + math.atan(x) + math.asinh(x) + math.log1p(x * x)


def uses_global(x):
    return SCALE * x * x


def builtins_mix(x, y):
    return abs(x) * max(x, y) + min(x, y) ** 2 + float(x)


def inactive_int(x, n):
    return x ** n + n * x


def unused_argument(x, y):
    return x * 2.0


def constant_output(x):
    return 3.0


def neg_and_pos(x):
    return -x + (+x) * -2.0


def np_elementwise(x):
    return np.sum(np.exp(x) * np.tanh(x) + np.log(x) * np.sqrt(x))


def np_trig(x):
    return np.sum(np.sin(x) * np.cos(x) + np.arctan(x) - np.arcsinh(x))


def np_dot_vec(x, y):
    return np.dot(x, y) * 2.0


def np_matvec(A, x):
    return np.sum(np.tanh(A @ x))


def np_matmat(A, B):
    return np.sum((A @ B) ** 2)


def np_broadcast(x, A):
    return np.sum(A * x + x)


def np_scalar_array(s, x):
    return np.sum(s * x + s)


def np_mean_axis(A):
    return np.sum(np.mean(A, axis=0) ** 2) + np.mean(A)


def np_sum_axis(A):
    return np.sum(np.sum(A, axis=1) ** 3)


def mean_of_squares_and_column_sums(a):
    # the reverse rule reads the size of v1 ** 2, moved to v1 (kept: read twice), once to a,
    # which was not passed (a NameError, found by fuzzing)
    v1 = a * (-0.995) ** 2
    v3 = np.mean(v1**2)
    v4 = np.sum(v1, axis=0, keepdims=True)
    return np.sum(v4) + v3


def np_maximum(x, y):
    return np.sum(np.maximum(x, y) * np.minimum(x, 0.1))


def np_where(x):
    return np.sum(np.where(x > 0, x * x, -x))


def np_transpose_reshape(A):
    return np.sum(A.T @ A) + np.sum(np.reshape(A, (4, 3)) ** 2) + np.sum(A.reshape(-1) * 2)


def np_methods(A):
    return A.sum() * A.mean() + A.sum(axis=0).dot(A.sum(axis=0))


def np_index(x):
    return x[0] * x[2] + np.sum(x[1:3] ** 2)


def np_power_arrays(x, y):
    return np.sum(np.power(x, 2) + np.power(y, x))


def logistic(w, X, y):
    z = X @ w
    p = 1 / (1 + np.exp(-z))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


CASES = [
    Case(design_example, (1.3, -0.7)),
    Case(design_example, (1.3, -0.7), wrt=(1,)),
    Case(design_example, (V, W)),
    Case(poly, (0.7,)),
    Case(reassign, (1.1,)),
    Case(quotient, (0.3, 1.7)),
    Case(quotient, (0.3, 1.7), wrt=(0,)),
    Case(power_both, (1.7, 2.3)),
    Case(math_chain, (0.8,)),
    Case(math_two, (0.6, 1.4)),
    Case(math_inverse, (0.5,)),
    Case(uses_global, (1.5,)),
    Case(builtins_mix, (-0.6, 0.4)),
    Case(builtins_mix, (0.9, 0.4)),
    Case(inactive_int, (1.3, 3)),
    Case(unused_argument, (1.3, 2.0)),
    Case(constant_output, (1.3,)),
    Case(neg_and_pos, (0.4,)),
    Case(np_elementwise, (P,)),
    Case(np_trig, (V,)),
    Case(np_dot_vec, (V, W)),
    Case(np_matvec, (M, V)),
    Case(np_matvec, (M, V), wrt=(1,)),
    Case(np_matmat, (M, M.T.copy())),
    Case(np_broadcast, (V, M)),
    Case(np_scalar_array, (0.7, V)),
    Case(np_mean_axis, (M,)),
    Case(np_sum_axis, (M,)),
    Case(mean_of_squares_and_column_sums, (M,)),
    Case(np_maximum, (V, W)),
    Case(np_where, (V,)),
    Case(np_transpose_reshape, (M,)),
    Case(np_methods, (M,)),
    Case(np_index, (V,)),
    Case(np_power_arrays, (W, P)),
    Case(logistic, (V * 0.1, M, np.array([0.0, 1.0, 1.0]))),
    Case(logistic, (V * 0.1, M, np.array([0.0, 1.0, 1.0])), wrt=(0, 1)),
]


def vector_like(x):
    return np.sin(x)
