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


def leaves_a_with_block_early(x):
    with open(__file__) as source:
        return x * len(source.read())  # the file would be closed by a return here


def raises_on_float_errors(x):
    with np.errstate(all="raise"):
        y = np.log(x) * 2
    return y


def has_try(x):
    try:
        return x * 2
    finally:
        print("done")


def calls_no_rule(x):
    return np.frexp(x)[0] * x


def int_argument(n, x):
    return n * x


def vector_output(x):
    return x * 2.0


exec_namespace = {}
exec("def from_string(x):\n    return x * 2\n", exec_namespace)
from_string = exec_namespace["from_string"]


def updates_then_rebinds_argument(x):
    x[0] = 1.0
    x = x * 2.0
    return np.sum(x)


def reads_view_after_update(x):
    tail = x[1:]
    x[1] = 2.0 * x[0]
    return np.sum(tail)


def updates_tuple_argument(params, y):
    params[0] = y  # a tuple: Python raises, and so must the derivation
    return params[0] * params[1]


def aliases_updated_array(x):
    a = np.zeros(3)
    b = a
    a[0] = x
    return np.sum(b)


def updates_list_held_in_tuple(x):
    xs = [x, 1.0]
    pair = (xs, 2.0)
    xs[0] = 3.0
    return pair[0][0] * x


def augments_aliased_array(x):
    y = x * 2.0
    for i in range(2):
        z = y
        z += 1.0
    return np.sum(y)


def augments_view(x):
    y = x * 2.0
    for i in range(2):
        tail = y[1:]
        tail += 1.0
    return np.sum(y)


def augments_array_held_in_list(x):
    # (pair = [y, x]; y += 1.0 alone is followed: pair is built again from the new y)
    y = x * 2.0
    pair = [y, x]
    first = pair[0]
    y += 1.0
    return np.sum(first)


def make_scaled(scale):
    def scaled(x):
        return x * scale
    return scaled


def calls_closure_of_differentiable_value(x, s):
    g = make_scaled(s)
    return g(x)


def calls_closure_of_differentiable_value_on_a_constant(x, s):
    g = make_scaled(s)
    return g(2.0) * x


def two_parameters(x, y):
    return x * y


def spreads_local_tuple(x):
    pair = (x, 2.0)
    return two_parameters(*pair)


def misses_an_argument(x):
    return two_parameters(x)


def returns_nothing(x):
    x * 2


def returns_text(x):
    return "abc"


def evaluates_text(x):
    return eval("x * 2")


def reads_locals(x):
    return locals()["x"] * 2.0


def returns_int(x):
    return int(x)


def divides(x, y):
    return x / y


def _broken_helper(x):
    return 2.0 * x


def calls_broken_rule(x):
    return _broken_helper(x) + x


def broken_rule(ct, ans, x):
    """A reverse rule with a bug, to check how a failure inside generated code is reported."""
    raise ValueError("a broken rule")


def set_of_values(x, y):
    return sum({x, y * 2.0})


def _apply(f, v):
    return f(v)


def lambda_captures_a_derivative(x):
    return np.sum(_apply(lambda t: t * x[0], x))


def puts_along_an_axis(ct, x):
    # np.put_along_axis changes g in place: its derivative was lost (a silent zero)
    g = np.empty(np.shape(x))
    np.put_along_axis(g, np.argsort(x), ct, axis=-1)
    return np.sum(g * np.arange(3.0))


def shuffles_in_place(x):
    y = x * 2.0
    np.random.shuffle(y)
    return np.sum(y * np.arange(3.0))


def multiplies_a_list_holding_an_array_updated_later(x):
    z = x * 1.0
    m = np.linalg.multi_dot([np.outer(x, x), z])  # its rule keeps the list, reading z
    z[0] = 0.0
    return np.sum(m * z)


def adds_into_list_item_with_second_name(x):
    xs = [x * 1.0, x]
    w = xs[0]
    xs[0] += x  # adds into the array w names too
    return np.sum(w * x)


def assigns_field_of_record_with_second_name(x, layer):
    other = layer
    layer.b = 3.0
    return other.b * np.sum(x)


def assigns_field_of_frozen_record(x, frozen):
    frozen.b = 2.0
    return np.sum(x) * frozen.b


def assigns_a_slice_of_a_list(a, m):
    xs = [a, m, a]
    xs[0:2] = [np.sum(a), m * 2.0]
    return np.sum(xs[0] * xs[1]) + np.sum(xs[2])


def appends_through_a_second_name(x):
    l = [x, 2.0]
    m = l
    m.append(x * 3.0)  # l grows too
    return sum(l) * x


CALLS = {"n": 0}


def counts_its_calls(x):
    CALLS["n"] += 1
    return np.sum(x**2)
