"""Jumps nested in branches: ``break``, ``continue`` and ``return`` two and three ``if``
levels deep (in ``else`` and ``elif`` branches too), in ``for`` and ``while`` loops.

A path that jumps must run nothing after the jump: the copies that hand values to the
next iteration (and a ``while`` loop's test) go at the end of each path that falls
through, at every depth. Each function is called at a point where its jump is taken
and, where it says so, at one where it is not.
"""

# ruff: noqa: SIM102 (the nested ifs are what is checked)

import numpy as np

from .cases import Case


def break_at_depth_two(x):
    s = 0.0
    for i in range(10):
        t = s + x
        if i > 0:
            if t > 3.0:
                s = t
                break
        s = t
    return s


def break_at_depth_two_in_else(x):
    s = 0.0
    for i in range(10):
        t = s + x
        if i == 0:
            s = t * 1.0
        else:
            if t > 3.0:
                s = t
                break
            s = t
    return s


def break_at_depth_three(x):
    s = x
    for i in range(12):
        t = s * 1.1 + x
        if i > 1:
            if t > 2.0:
                if i % 2 == 0:
                    s = t * 0.5
                    break
                s = t - 0.1
            else:
                s = t
        else:
            s = np.sin(t) + s
    return s


def break_at_depth_three_in_elif(x):
    s = x
    for i in range(12):
        t = s * 1.2
        if t < -5.0:
            s = t + 1.0
        elif i > 2:
            if t > 1.0:
                if t > 3.0:
                    break
                else:
                    s = t * x
            else:
                s = t + x
        else:
            s = t + 0.5 * x
    return s * x


def continue_at_depth_two(x):
    s = 0.0
    for i in range(8):
        t = s + x * (i + 1.0)
        if i % 2 == 0:
            if t > 2.0:
                s = s + 0.1 * t
                continue
        s = np.sin(t) + s
    return s


def continue_at_depth_three_in_else(xs):
    s = 0.0
    for x in xs:
        if x > 1.0:
            s = s + x
        else:
            if x < 0.0:
                if x < -1.0:
                    s = s * 0.5
                    continue
                s = s - x * x
            s = s + np.cos(x) * s
    return s


def return_at_depth_two(x):
    s = 0.0
    for i in range(10):
        t = s + x
        if i > 0:
            if t > 3.0:
                return t * s
        s = t
    return s


def return_at_depth_three_in_else(xs, c):
    s = c
    for x in xs:
        if x > 0.0:
            s = s + x * c
        else:
            if s > 0.5:
                if x < -0.3:
                    return s * x
                s = s * 0.9
            s = s + 0.1 * x
    return s


def while_break_at_depth_two(x):
    s = x
    n = 0
    while n < 10:
        t = s * 1.5
        if n > 0:
            if t > 4.0:
                s = t - x
                break
        s = t
        n = n + 1
    return s


def while_continue_at_depth_three(x):
    s = x
    n = 0
    while s < 20.0:
        n = n + 1
        t = s * 1.3 + 0.1
        if n > 1:
            if t > 2.0:
                if n % 2 == 0:
                    s = t + x
                    continue
        s = t
    return s


def while_return_at_depth_two_in_else(x):
    s = x
    n = 0
    while n < 10:
        n = n + 1
        t = s * x + 0.2
        if t < 0.0:
            s = -t
        else:
            if t > 3.0:
                return t * s
            s = t
    return s


def inner_loop_break_at_depth_two(A):
    # the inner loop's break two levels down; the outer loop carries s across it
    s = 0.0
    for i in range(3):
        for j in range(3):
            t = s + A[i, j]
            if j > 0:
                if t > 1.5:
                    s = t * 0.5
                    break
            s = t
        s = s * 0.9
    return s


def assigned_only_before_break(x):
    # s changes only on the path that breaks: on the others the reverse loop hands its
    # cotangent on unchanged, and must not take it for the breaking branch's
    s = x
    for _ in range(5):
        t = s * 1.2 + x
        if t > 30.0:
            s = t
            break
    return s * x


def assigned_only_before_break_at_depth_two(x):
    s = x
    for i in range(6):
        t = s * 1.2 + x
        if i > 0:
            if t > 30.0:
                s = t
                break
        else:
            u = t * 2.0
            if u > 100.0:
                s = u
                break
    return s * x


def while_continue_at_depth_two_in_else(x):
    s = x
    n = 0
    while n < 8:
        n = n + 1
        if s > 100.0:
            s = s - 90.0
        else:
            if n % 3 == 0:
                continue
            s = s * 1.4 + x
    return s


def while_return_at_depth_three(x):
    s = x
    n = 0
    while s < 50.0:
        n = n + 1
        s = s * 1.3 + 0.2
        if n > 1:
            if s > 2.0:
                if n % 2 == 1:
                    return s * x
        s = s + 0.1 * x
    return s


def kept_on_one_side_broken_on_the_other(x):
    # the else branch keeps s as it was before the if (a join copy) on the path that falls
    # through its inner if, and breaks with a new s on the other: the copy goes to the path
    # that falls through, not after the inner if
    s = x
    c = 0.0
    for i in range(6):
        s = s * 1.1 + x
        if i > 2:
            s = s + 1.0
        else:
            if s > 3.0:
                s = s * 2.0
                break
            c = c + np.sin(s)
    return s + c


def return_from_inner_loop(x):
    # the result is set in the inner loop only: SSA hands it on from before the loops,
    # where it has no value yet (None stands for that)
    s = x
    for _ in range(2):
        for _ in range(3):
            if s > 0.5:
                return s * 2.0
            s = s * 1.1
    return s


def while_return_from_inner_while(x):
    s = x
    i = 0
    while i < 2:
        i = i + 1
        j = 0
        while j < 3:
            j = j + 1
            if s > 0.5:
                return s * s
            s = s * 1.1
    return s


def returns_from_two_loops(x):
    s = x
    for _ in range(3):
        if s > 1.0:
            return s * 2.0
        s = s * 1.1
    for _ in range(3):
        if s > 0.8:
            return s * 3.0
        s = s * 1.2
    return s


def set_in_some_iterations(x):
    # Python reads y only after an iteration set it; SSA's join copies read it before
    for i in range(3):
        if i == 1:
            y = np.sin(x) * 2.0
    return np.sum(y * x)


def inner_index_read_after(x):
    s = x
    for j in range(2):
        for i in range(2):  # noqa: B007 (read after the loops)
            s = np.sin(s) + 0.5 * s
        s = s * (j + 1.0)
    return s * (i + 1.0)


def return_in_loop_else(x):
    s = x
    for _ in range(3):
        s = s * 1.3
        if s > 2.0:
            break
    else:
        return s * s
    return s + 1.0


def break_out_of_nested_loops(x):
    # for ... else: continue; break: the inner loop's else block jumps in the outer loop
    s = x * 1.0
    for _ in range(2):
        for _ in range(3):
            if np.sum(s) > 2.0:
                r = s * 2.0
                break
            s = s * 1.1 + 0.05
        else:
            continue
        break
    else:
        return np.sum(s)
    return np.sum(r * s)


def return_in_inner_loop_else(x):
    s = x
    for _ in range(3):
        for _ in range(2):
            s = s * 1.3
            if s > 5.0:
                break
        else:
            if s > 1.0:
                return s * x
            s = s + 0.1
    return s


CASES = [
    Case(break_at_depth_two, (0.7,)),
    Case(break_at_depth_two, (0.2,), note="no break"),
    Case(break_at_depth_two_in_else, (0.7,)),
    Case(break_at_depth_two_in_else, (0.2,), note="no break"),
    Case(break_at_depth_three, (0.3,)),
    Case(break_at_depth_three, (-0.3,), note="no break"),
    Case(break_at_depth_three_in_elif, (1.3,)),
    Case(break_at_depth_three_in_elif, (-0.2,), note="no break"),
    Case(continue_at_depth_two, (0.4,)),
    Case(continue_at_depth_three_in_else, (np.array([0.3, -1.2, 0.8, 2.1, -0.4, -1.5]),)),
    Case(return_at_depth_two, (0.7,)),
    Case(return_at_depth_two, (0.2,), note="no return"),
    Case(return_at_depth_three_in_else, (np.array([0.3, 0.4, -0.2, -0.6, 0.5]), 0.4)),
    Case(
        return_at_depth_three_in_else,
        (np.array([0.3, 0.4, -0.2, -0.1, 0.5]), 0.4),
        note="no return",
    ),
    Case(while_break_at_depth_two, (0.9,)),
    Case(while_break_at_depth_two, (0.05,), note="no break"),
    Case(while_continue_at_depth_three, (0.9,)),
    Case(while_return_at_depth_two_in_else, (1.3,)),
    Case(while_return_at_depth_two_in_else, (0.5,), note="no return"),
    Case(
        inner_loop_break_at_depth_two,
        (np.array([[0.2, 0.9, 0.3], [0.3, 0.7, 0.1], [0.7, 0.6, 0.5]]),),
    ),
    Case(assigned_only_before_break, (0.5,)),
    Case(assigned_only_before_break, (20.0,), note="break"),
    Case(assigned_only_before_break_at_depth_two, (0.5,)),
    Case(assigned_only_before_break_at_depth_two, (20.0,), note="break"),
    Case(assigned_only_before_break_at_depth_two, (60.0,), note="break in else"),
    Case(while_continue_at_depth_two_in_else, (1.5,)),
    Case(while_return_at_depth_three, (0.7,)),
    Case(while_return_at_depth_three, (45.0,), note="no return"),
    Case(kept_on_one_side_broken_on_the_other, (0.3,)),
    Case(kept_on_one_side_broken_on_the_other, (2.0,), note="break"),
    Case(return_from_inner_loop, (0.45,)),
    Case(return_from_inner_loop, (0.1,), note="no return"),
    Case(while_return_from_inner_while, (0.45,)),
    Case(while_return_from_inner_while, (0.1,), note="no return"),
    Case(returns_from_two_loops, (1.5,)),
    Case(returns_from_two_loops, (0.3,), note="no return"),
    Case(returns_from_two_loops, (0.7,), note="return from the second loop"),
    Case(set_in_some_iterations, (np.array([0.3, -1.2, 0.8]),)),
    Case(inner_index_read_after, (0.4,)),
    Case(return_in_loop_else, (0.5,)),
    Case(return_in_loop_else, (1.5,), note="break"),
    Case(break_out_of_nested_loops, (np.array([0.5, 0.4, 0.3]),)),
    Case(break_out_of_nested_loops, (np.array([0.9, 0.5, 0.7]),), note="break at once"),
    Case(break_out_of_nested_loops, (np.array([0.1, -0.2, 0.05]),), note="no break"),
    Case(return_in_inner_loop_else, (0.5,)),
    Case(return_in_inner_loop_else, (0.05,), note="no return"),
    Case(return_in_inner_loop_else, (3.0,), note="break"),
]
