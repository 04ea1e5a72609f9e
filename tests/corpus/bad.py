"""Functions tangent_ast must refuse with a clear error naming file and line."""

import numpy as np

COUNTER = [0]


def has_class(x):
    class Local:
        pass
    return x * 2


def has_global(x):
    global COUNTER
    COUNTER = x
    return x


def has_yield(x):
    yield x * 2


def has_with(x):
    with np.errstate(all="ignore"):
        y = x * 2
    return y


def has_try(x):
    try:
        return x * 2
    except ValueError:
        return x


def calls_no_rule(x):
    return np.frexp(x)[0] * x


def int_argument(n, x):
    return n * x


def vector_output(x):
    return x * 2.0


exec_namespace = {}
exec("def from_string(x):\n    return x * 2\n", exec_namespace)
from_string = exec_namespace["from_string"]


def updates_argument(x):
    x[0] = 1.0
    return np.sum(x)


def aliases_updated_array(x):
    a = np.zeros(3)
    b = a
    a[0] = x
    return np.sum(b)


def updates_list(x):
    xs = [0.0, 0.0]
    xs[1] = x
    return xs[1]
