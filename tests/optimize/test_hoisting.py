"""Golden sources of optimize/hoisting.py: what a reverse loop computes the same in every
iteration moves before it, and nothing else does."""

import numpy as np
import pytest

import tangent_ast as ta

pytestmark = pytest.mark.usefixtures("direct_route")  # its text, names


def reverse_sweep(f, args, wrt=0):
    return ta.show(f, "reverse", wrt=wrt, args=args).split("\n\n\n")[-1]


def accumulates(x, r, n):
    total = 0.0
    for i in range(n):
        total = total + x * r * r + np.sin(x * i)
    return total


def test_a_statement_of_values_the_loop_does_not_change_runs_once_before_it():
    bwd = reverse_sweep(accumulates, (0.3, 1.2, 5), wrt=(0, 1))
    before, _, loop = bwd.partition("for i in reversed(range(n)):")
    assert "ct_x_times_r = ct_total * r" in before
    assert "ct_x_times_r =" not in loop
    assert "np.cos(x * i) * i" in loop  # reads the loop's variable: stays


def carries(x, n):
    s = x
    for i in range(n):
        s = s * x + 1.0
    return s


def test_a_statement_of_a_carried_cotangent_stays():
    bwd = reverse_sweep(carries, (0.7, 4))
    loop = bwd.partition("for i in reversed(range(n)):")[2]
    assert "ct_s * x" in loop or "ct_s_1 * x" in loop


def nested(x, n):
    total = 0.0
    for i in range(n):
        for j in range(n):
            total = total + x * x * 3.0
    return total


def test_out_of_nested_loops():
    bwd = reverse_sweep(nested, (0.4, 3))
    assert bwd.index("ct_total") < bwd.index("for ")
    assert not any(
        "ct_total" in line and "=" in line and line.startswith("            ")
        for line in bwd.splitlines()
    )
    got = ta.grad(nested)(0.4, 3)
    assert np.isclose(got, 9 * 2 * 0.4 * 3.0)
