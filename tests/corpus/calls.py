"""Calls to user functions (derived rules calling derived rules), branches, recursion."""

import numpy as np

import tangent_ast as ta

from .cases import Case


def square(x):
    return x * x


def scaled(x, s):
    return s * np.sin(x)


def calls_helper(x, y):
    return square(x) + scaled(y, x)


def calls_twice(x):
    a = square(x)
    b = square(a)
    return a + b


def array_helper(x):
    return np.sum(scaled(x, 2.0))


def relu_like(x):
    if x > 0:
        y = x * x
    else:
        y = -0.5 * x
    return y + x


def early_return(x, y):
    if x > y:
        return x * y
    z = np.cos(x)
    return z * y


def elif_chain(x):
    if x < -1:
        return -x
    elif x < 1:
        return x * x
    else:
        return 2 * x - 1


def ternary(x, y):
    z = x * y if x > 0 else y - x
    return z * z


def bool_condition(x, y):
    if x > 0 and y > 0:
        return x * y
    return x + y


def branch_reads_outer(x, y):
    a = x * y
    if a > 1:
        b = a * x
    else:
        b = y
    return b + a


def power_rec(x, n):
    if n == 0:
        return 1.0
    return x * power_rec(x, n - 1)


def series(x, n):
    if n <= 0:
        return x
    return np.sin(series(x, n - 1)) + x


def data_dependent_rec(x):
    if x < 0.1:
        return x
    return data_dependent_rec(x / 2) * 1.5 + x


CASES = [
    Case(calls_helper, (0.7, 1.3)),
    Case(calls_helper, (0.7, 1.3), wrt=(1,)),
    Case(calls_twice, (0.9,)),
    Case(array_helper, (np.linspace(0.1, 1.0, 5),)),
    Case(relu_like, (1.2,)),
    Case(relu_like, (-1.2,)),
    Case(early_return, (2.0, 1.0)),
    Case(early_return, (0.5, 1.0)),
    Case(elif_chain, (-2.0,)),
    Case(elif_chain, (0.3,)),
    Case(elif_chain, (3.0,)),
    Case(ternary, (0.5, 1.5)),
    Case(ternary, (-0.5, 1.5)),
    Case(bool_condition, (0.5, 1.5)),
    Case(bool_condition, (-0.5, 1.5)),
    Case(branch_reads_outer, (2.0, 1.0)),
    Case(branch_reads_outer, (0.2, 1.0)),
    Case(power_rec, (1.3, 4)),
    Case(series, (0.4, 3)),
    Case(data_dependent_rec, (3.0,)),
    Case(data_dependent_rec, (0.05,)),
]


# --- mutual recursion: each rule imports the other's module, not its functions
def is_even_scaled(x, n):
    if n <= 0:
        return x
    return is_odd_scaled(x * 1.1, n - 1)


def is_odd_scaled(x, n):
    if n <= 0:
        return np.sin(x)
    return is_even_scaled(x + 0.5, n - 1) * 2.0


CASES += [
    Case(is_even_scaled, (0.3, 3), wrt=(0,)),
    Case(is_odd_scaled, (0.3, 4), wrt=(0,)),
]


# --- a user function with a reverse rule only: forward mode derives it from its source
def softclip(x):
    return np.log1p(np.exp(x)) * 2.0


ta.defvjp(softclip, lambda ct, ans, x: ct * 2.0 / (1.0 + np.exp(-x)))


def uses_softclip(x):
    return np.sum(softclip(x) * x)


CASES += [Case(uses_softclip, (np.array([0.3, -1.0, 2.0]),))]
