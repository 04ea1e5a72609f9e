"""Call forms of primitives: the ones a rule handles and the ones it must refuse."""

import numpy as np

X = np.array([[0.3, -0.9, 0.7], [0.1, 0.6, -0.2]])
MASK = X > 0


def scaled(x, scale=1.0, where=None):
    """A user function given a rule of its own (test_binding registers and removes it)."""
    return scale * x


# --- handled: checked in both modes ---------------------------------------------------
def clip_keyword_bounds(x):
    return np.sum(np.clip(x, a_min=-0.5, a_max=0.5) ** 2)


def clip_bounds_in_other_order(x, lo, hi):
    return np.sum(np.clip(x, a_max=hi, a_min=lo) ** 2)


def mean_by_keyword(x):
    return np.mean(a=x * x)


def sum_positional_axis(x):
    return np.sum(np.sum(x, 0) ** 2)


def defaults_written_out(x):
    return np.sum(np.tanh(x, out=None), axis=None, keepdims=False)


def array_of_scalars(a, b, c):
    return np.sum(np.tanh(np.array([a, b * c, 2.0])))


def float_conversions(x):
    return np.sum(np.asarray(x, dtype=float) * x.astype(np.float64))


def reshape_method_forms(x):
    return np.sum(x.reshape(3, 2) * x.reshape((3, 2)) * np.reshape(x, shape=(3, 2)))


def sum_with_start(a, b):
    return sum([a * b, b], 0.5)


def arange_of_ints(x):
    return np.sum(np.arange(3) * x)


# --- refused: (function, what the message names) --------------------------------------
def sum_where(x):
    return np.sum(x, where=MASK)


def sum_out(x):
    total = np.zeros(())
    return np.sum(x * x, out=total)


def sum_initial(x):
    return np.max(x, initial=5.0)


def sum_int_dtype(x):
    return np.sum(x, dtype=np.int64)


def astype_int(x):
    return np.sum(x.astype(int) * x)


def reshape_order(x):
    return np.sum(np.reshape(x, (3, 2), order="F") * np.arange(6.0).reshape(3, 2))


def pad_constant_values(x):
    return np.sum(np.pad(x, 1, constant_values=2.0) ** 2)


def ufunc_casting(x):
    return np.sum(np.sin(x, casting="unsafe"))


def sum_of_list(a, b, c):
    return np.sum([a, b * c])


def tanh_of_list(a, b):
    return np.sum(np.tanh([a, b]))


def sum_of_named_list(a, b, c):
    xs = [a, b * c]
    return np.sum(xs)


def complex_maximum(x):
    return np.real(np.sum(np.maximum(x * 1j + x, 0.5)))


def differentiable_step(y, h):
    return np.trapezoid(y, dx=h)


def sum_with_differentiable_start(a, b):
    return sum([a * b, b], a)


def arange_of_a_differentiable_value(x):
    return np.sum(np.arange(x, x + 3.0) ** 2)


def interp_sample_points(x, xp):
    return np.sum(np.interp(x, xp, np.array([0.0, 1.0, 4.0])))


def quantile_level(x, q):
    return np.quantile(x, q)


REFUSED = [
    (sum_where, (X,), "where="),
    (sum_out, (X,), "out="),
    (sum_initial, (X,), "initial="),
    (sum_int_dtype, (X,), "dtype="),
    (astype_int, (X,), "dtype="),
    (reshape_order, (X,), "order="),
    (pad_constant_values, (X,), "constant_values="),
    (ufunc_casting, (X,), "casting="),
    (complex_maximum, (X,), "complex"),
    (differentiable_step, (X[0], 0.5), "dx="),
    (sum_with_differentiable_start, (0.5, 0.7), "start="),
    (arange_of_a_differentiable_value, (0.5,), "numpy.arange"),
    (interp_sample_points, (np.array([0.2, 1.4]), np.array([0.0, 1.0, 2.0])), "argument 2 of numpy.interp"),
    (quantile_level, (X[0], 0.3), "argument 2 of numpy.quantile"),
]
