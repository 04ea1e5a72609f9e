"""Control flow: loops, branches, break/continue, early return, recursion."""

import math

import numpy as np

from .cases import Case

X = np.array([0.3, -1.2, 0.8, 2.1, -0.4])
Y = np.array([1.1, 0.4, -0.7, 0.2, 0.9])
M = np.array([[0.2, -0.5, 1.0], [0.7, 0.1, -0.3], [-1.1, 0.4, 0.6]])


def range_loop(x, n):
    s = 0.0
    for i in range(n):
        s = s + x ** i / (i + 1)
    return s


def range_start_stop_step(x, n):
    y = x
    for i in range(n, 1, -2):
        y = y * x + i
    return y


def running_product(x, n):
    p = 1.0
    for i in range(1, n + 1):
        p = p * (1.0 + x / i)
    return p


def loop_over_array(xs):
    s = 0.0
    for x in xs:
        s = s * 0.9 + np.sin(x)
    return s


def loop_over_rows(A, v):
    total = 0.0
    for row in A:
        total = total + np.tanh(np.dot(row, v))
    return total


def loop_enumerate(xs):
    s = 0.0
    for i, x in enumerate(xs):
        s = s + (i + 1) * x * x
    return s


def loop_zip(xs, ys):
    s = 0.0
    for x, y in zip(xs, ys):
        s = s + x * y + np.exp(0.1 * x)
    return s


def loop_zip_strict(xs, ys):
    s = 0.0
    for x, y in zip(xs, ys, strict=True):  # unequal lengths raise ValueError, as in Python
        s = s + x * np.sin(y)
    return s


def loop_enumerate_zip_reversed(xs, ys):
    s = 0.0
    for k, (x, y) in enumerate(zip(xs, reversed(ys)), start=1):
        s = s + k * x * np.sin(y)
    for (i, x), y in zip(enumerate(reversed(xs)), ys):
        s = 0.5 * s + (i + 1.0) * x * y
    return s


def loop_reversed(xs):
    s = 0.0
    for x in reversed(xs):
        s = 0.5 * s + x
    return s


def loop_list(a, b):
    s = 0.0
    for c in [1.0, 2.0, 3.0]:
        s = s + c * a * b
    return s


def while_doubling(x):
    y = x
    while y < 20.0:
        y = y * 2.0 + 0.5
    return y


def while_newton_sqrt(a):
    x = a
    steps = 0
    while steps < 6:
        x = 0.5 * (x + a / x)
        steps = steps + 1
    return x


def while_data_dependent(x):
    y = x
    n = 0
    while y > 0.01 and n < 50:
        y = y * 0.5
        n = n + 1
    return y * n


def loop_break(x):
    y = x
    for i in range(20):
        y = y * 1.3
        if y > 4.0:
            break
        y = y + 0.1
    return y


def loop_continue(xs):
    s = 0.0
    for x in xs:
        if x < 0:
            continue
        s = s + x * x
    return s


def loop_early_return(xs):
    s = 0.0
    for x in xs:
        s = s + x
        if s > 1.0:
            return s * 2.0
    return s


def for_else(x, n):
    y = x
    for i in range(n):
        y = y * 1.5
        if y > 10.0:
            break
    else:
        y = y - 1.0
    return y


def branch_in_loop(xs):
    s = 0.0
    for x in xs:
        if x > 0:
            s = s + x * x
        else:
            s = s - 0.5 * x
    return s


def loop_in_branch(x, n):
    if x > 0:
        y = 1.0
        for i in range(n):
            y = y * x
    else:
        y = x
    return y


def nested_loops(A):
    total = 0.0
    for i in range(3):
        for j in range(3):
            total = total + A[i, j] * A[j, i] * (i + 1)
    return total


def nested_loops_carried(x):
    y = x
    for i in range(3):
        z = y
        for j in range(2):
            z = np.sin(z) + x
        y = y + 0.5 * z
    return y


def reused_loop_name(x, n):
    # the last loop reuses the inner loop's name: no earlier i is handed on (the inner loop
    # runs zero times at j == 0, so handing its i on read a name never bound)
    y = x
    for j in range(n):
        for i in range(j):
            y = np.sin(y) + 0.5 * y
        y = y * 1.1
    if y > 10.0:
        return y
    for i in range(2):
        y = y * (i + 1.0)
    return y


def reused_loop_name_read_after(x, n):
    # i keeps its value (0 at first) when the inner loop runs zero times, as Python's does
    i = 0
    s = x
    for j in range(n):
        for i in range(j):
            s = np.sin(s) + 0.1 * s
        s = s * (i + 1.5)
    return s


def loop_name_reused_after_an_empty_loop(x, n):
    # i has no value before the first loop, which may run zero times; the second loop's
    # i starts as the first one's (what a zero-trip loop leaves), None if there is none
    s = x
    for i in range(n):  # noqa: B007 (the next loop reuses the name)
        s = s * 0.7
    for i in range(3):  # noqa: B007 (read after the loop)
        s = np.sin(s) + s
    return s * i


def updated_in_a_loop_then_read(A, b, c):
    # the reverse loop restores t's rows: what reads t after the loop is added up first
    t = np.zeros_like(A)
    for i in range(3):
        t[i] += np.full_like(A[i], c)
    return np.sum(t * b * A)


def updated_in_a_branch_then_read(A, b, c):
    t = np.zeros_like(A)
    if c > 0:
        t[0] += np.full_like(A[0], c)
    return np.sum(t * b * A)


def early_return_before_nested_loops(x, b):
    # the loops' headers are defined in the branch that runs them: the other branch
    # neither zeroes their cotangents nor needs them saved
    if b > 1.3:
        return b * 2.0
    y = x * 1.0
    for j in range(3):
        z = y * 0.5
        for i in range(2):
            z = z * 0.7 + np.sin(z)
        y = y * np.cos(z) + 0.1 * z
    return np.sum(y)


def nested_break(A):
    s = 0.0
    for i in range(3):
        for j in range(3):
            if A[i, j] > 0.5:
                break
            s = s + A[i, j] ** 2
    return s


def elif_in_loop(xs):
    s = 0.0
    for x in xs:
        if x < -1.0:
            s = s - x
        elif x < 1.0:
            s = s + x * x
        else:
            s = s + 2.0 * x - 1.0
    return s


def ternary_in_loop(xs):
    s = 0.0
    for x in xs:
        s = s + (x * x if x > 0 else -x)
    return s


def chained_comparison(x):
    if -1.0 < x < 1.0:
        return x ** 3
    return x


def recurrence(x, h0):
    h = h0
    for t in range(len(x)):
        h = np.tanh(0.5 * h + x[t])
    return h


def rnn_sum(x, w):
    h = 0.0
    total = 0.0
    for t in range(len(x)):
        h = math.tanh(w * h + x[t])
        total = total + h * h
    return total


def rnn_matrix(W, h0, xs):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t])
    return np.sum(h ** 2)


def assigned_first_in_the_loop(x, n):
    """``y`` has no value before the loop: its first iteration assigns it before reading it."""
    for t in range(n):
        if t == 0:
            y = x
        else:
            y = y * x
    return y


def fib_like(x, n):
    if n <= 1:
        return x
    return fib_like(x, n - 1) * 0.5 + fib_like(x, n - 2) * x


def rec_until_small(x):
    if abs(x) < 0.1:
        return x
    return np.sin(rec_until_small(x * 0.5)) + x * 0.2


CASES = [
    Case(range_loop, (0.7, 5)),
    Case(range_loop, (0.7, 0)),
    Case(reused_loop_name, (0.7, 3)),
    Case(reused_loop_name, (30.0, 3), note="early return"),
    Case(reused_loop_name_read_after, (0.7, 3)),
    Case(loop_name_reused_after_an_empty_loop, (0.4, 0)),
    Case(loop_name_reused_after_an_empty_loop, (0.4, 2)),
    Case(updated_in_a_loop_then_read, (M, M[0] + 0.5, 0.7)),
    Case(updated_in_a_branch_then_read, (M, M[0] + 0.5, 0.7)),
    Case(early_return_before_nested_loops, (X, 0.9)),
    Case(early_return_before_nested_loops, (X, 2.0), note="early return"),
    Case(range_start_stop_step, (0.9, 7)),
    Case(running_product, (0.4, 6)),
    Case(loop_over_array, (X,)),
    Case(loop_over_rows, (M, Y[:3].copy())),
    Case(loop_enumerate, (X,)),
    Case(loop_zip, (X, Y)),
    Case(loop_zip_strict, (X, Y)),
    Case(loop_reversed, (X,)),
    Case(loop_enumerate_zip_reversed, (X, Y)),
    Case(loop_list, (0.3, -0.8)),
    Case(while_doubling, (0.7,)),
    Case(while_doubling, (25.0,)),
    Case(while_newton_sqrt, (2.5,)),
    Case(while_data_dependent, (3.0,)),
    Case(while_data_dependent, (0.005,)),
    Case(loop_break, (0.5,)),
    Case(loop_break, (5.0,)),
    Case(loop_continue, (X,)),
    Case(loop_early_return, (X,)),
    Case(loop_early_return, (X * 0.1,)),
    Case(for_else, (1.0, 3)),
    Case(for_else, (3.0, 5)),
    Case(branch_in_loop, (X,)),
    Case(loop_in_branch, (1.2, 3)),
    Case(loop_in_branch, (-1.2, 3)),
    Case(nested_loops, (M,)),
    Case(nested_loops_carried, (0.6,)),
    Case(nested_break, (M,)),
    Case(elif_in_loop, (X * 1.5,)),
    Case(ternary_in_loop, (X,)),
    Case(chained_comparison, (0.5,)),
    Case(chained_comparison, (1.5,)),
    Case(recurrence, (X, 0.2)),
    Case(rnn_sum, (X, 0.8)),
    Case(rnn_matrix, (np.linspace(-0.5, 0.5, 9).reshape(3, 3), np.ones(3), np.ones((4, 3)))),
    Case(assigned_first_in_the_loop, (0.7, 4)),
    Case(fib_like, (0.7, 5)),
    Case(rec_until_small, (2.0,)),
    Case(rec_until_small, (0.05,)),
]


def weighted_loss(w, x, y):
    z = np.tanh(x @ w)
    r = z - y
    total = 0.0
    for i in range(3):
        total = total + np.sum(r * r) * (i + 1.0)
    return total / 6.0


CASES.append(Case(weighted_loss, (np.array([0.1, -0.3, 0.2]), M, np.array([0.2, 0.1, -0.4])), wrt=(0,)))


def scales_after_loop(x, t):
    """t's cotangent reads the loop's final total: it must be added up before the
    reverse loop restores total to earlier iterations."""
    total = 2.0 * x
    for i in range(3):
        total = total + i * x * total
    return total * t


CASES += [Case(scales_after_loop, (0.7, 1.3))]


def reads_input_and_loop_result(a):
    """Found by the fuzzer: a's cotangent from ``v3 * v1`` reads the loop's final v1; the
    simplifier must not move that read past the reverse loop, which restores v1."""
    v1 = a * 1.0
    for i in range(2):
        v1 = v1 * 0.7 + np.sin(v1) * (i + 1.0)
    v3 = a - 1.0
    return np.sum(v3 * v1)


CASES += [Case(reads_input_and_loop_result, (np.array([0.3, -0.5, 0.8]),))]


def loop_in_one_branch_same_name_in_other(xs, flag, c):
    # y is the loop's carried value in one branch and a plain value in the other, and is
    # not read after the if: SSA gives both one name, which must stay the loop's header
    if flag:
        r = c * 2.0
        y = 0.0
    else:
        y = c
        for i in range(3):
            y = y * np.cos(xs[i])
        r = c + y
    return r


CASES += [
    Case(loop_in_one_branch_same_name_in_other, (X, False, 0.9)),
    Case(loop_in_one_branch_same_name_in_other, (X, True, 0.9)),
]


def inner_loop_result_read_by_the_outer_body(x):
    # the outer reverse body reads v's value after the inner loop before the inner reverse
    # loop restores v iteration by iteration: the outer loop must save that value itself
    s = 0.0
    for j in range(3):
        v = x * (j + 1.0)
        for i in range(2):
            v = v * 0.7 + np.sin(v)
        s = s + np.cos(v)
    return s


def inner_loop_of_varying_length(x, c):
    s = x
    for j in range(3):
        v = s * c
        for i in range(j):  # no iteration at all when j == 0
            v = v * 0.7 + np.sin(v)
        s = s * np.cos(v)
    return s


CASES += [
    Case(inner_loop_result_read_by_the_outer_body, (0.4,)),
    Case(inner_loop_of_varying_length, (0.4, 1.3)),
]


def captured_in_a_branch_of_a_loop(v0, a):
    # the transpose route once shared one name node between two statements of its
    # reverse loop: renaming one read renamed the other, past a reassignment
    v = v0
    w = 0.0
    for i in range(3):
        if i == 1:
            w = v
        v = v * np.sin(v) * a
    return w * v


CASES += [Case(captured_in_a_branch_of_a_loop, (0.9, 0.8))]


def loop_name_reused_by_an_inner_loop_that_may_not_run(x):
    # the outer loop carries ``i`` (an earlier loop set it), which an inner loop binds only
    # when it runs: with j == 0 it keeps the earlier loop's value
    for i in range(2):
        x = x * 0.7 + np.sin(x) * (i + 1.0)
    for j in range(1):
        for i in range(j):
            x = x * np.cos(x)
    if np.sum(x) > 10.0:
        return np.sum(x) * 2.0
    for i in range(1):
        if i == 1:
            x = np.tanh(x)
    return np.sum(x)


CASES += [Case(loop_name_reused_by_an_inner_loop_that_may_not_run, (X,))]


def loop_name_first_bound_by_a_loop_that_does_not_run(x, n):
    # ``i`` has no value after the first loop (n == 0); the outer loop below carries it all
    # the same, as its inner loop binds it
    s = x * 1.0
    for i in range(n):
        s = s * 0.7 + i
    for j in range(2):
        s = s * 0.5
        for i in range(2 - j):
            s = s * 0.7 + np.sin(s)
    return s


CASES += [
    Case(loop_name_first_bound_by_a_loop_that_does_not_run, (0.4, 0)),
    Case(loop_name_first_bound_by_a_loop_that_does_not_run, (0.4, 2)),
]


def loop_name_bound_on_one_path_then_reused_in_a_branch(a):
    # ``i`` has a value after the first if on one path only; the second if's loop binds it
    # again, and SSA's copy at that if's end once read it on the path where it has none
    tape = []
    if a > 1.3:
        out = a * 2.0
    else:
        v = a * 1.0
        for i in range(3):
            tape.append(v)
            v = v * 0.7 + np.sin(v)
        out = a + v
    if a > 1.3:
        r = out * 2.0
    else:
        r = out
        for i in reversed(range(3)):
            r = r * np.cos(tape[i]) + r * 0.7
    return r


CASES += [
    Case(loop_name_bound_on_one_path_then_reused_in_a_branch, (0.9,)),
    Case(loop_name_bound_on_one_path_then_reused_in_a_branch, (1.5,)),
]


def loop_name_of_a_loop_that_runs_zero_times_carried_later(x, n):
    # the second loop runs zero times and leaves ``i`` as the first left it; the outer loop
    # below carries ``i`` (its inner loop binds it) from the value the second loop left,
    # which SSA's copy once read unbound
    s = x * 1.0
    for i in range(2):
        s = s * 0.9 + i
    for i in range(n):
        s = s * 0.7 + np.sin(s) * (i + 1.0)
    for j in range(3):
        for i in range(j):
            s = s * 0.7 + np.sin(s)
    return s


CASES += [
    Case(loop_name_of_a_loop_that_runs_zero_times_carried_later, (0.4, 0)),
    Case(loop_name_of_a_loop_that_runs_zero_times_carried_later, (0.4, 2)),
]
