"""Golden sources of the Numba backend's lowering (transform/for_numba.py): derived, not
compiled (tests/api/test_numba_backend.py compiles them), so Numba is not needed here."""

import math
import textwrap

import numpy as np
import pytest

import tangent_ast as ta

pytestmark = pytest.mark.usefixtures("direct_route")  # its text, names


def body(source):
    """Module text without header and imports."""
    return source.split("\n\n\n", 1)[1].strip() + "\n"


def loop_with_branch(x, n):
    s = 0.0
    for i in range(n):
        if s > 1.0:
            s = s * 0.5 + np.sin(x * i)
        else:
            s = s + x * x
    return s


def loop_with_break(x, n):
    s = x
    for i in range(n):
        s = s * np.cos(s)
        if s < 0.1:
            break
    return s


def recurrence(W, h, xs):
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t])
    return np.sum(h)


def down_a_range(x, a, b):
    for i in range(a, b):
        x = x * math.sin(x + i)
    return x


def test_a_counted_loop_keeps_its_tapes_in_arrays_written_by_its_index():
    source = ta.show(loop_with_branch, "reverse", args=(0.3, 5), backend="numba")
    assert "# backend: numba" in source and "import numba\n" in source
    assert body(source) == textwrap.dedent("""\
        @numba.njit(cache=True)
        def loop_with_branch_fwd(x, n):
            s_1 = 0.0  # line 21
            s_gt_one_tape = np.empty(max(n, 0), dtype=np.bool_)
            x_times_i_tape = np.empty(max(n, 0))
            for i in range(n):  # line 22
                x_times_i = 0.0
                s_gt_one = s_1 > 1.0  # line 23
                if s_gt_one:
                    x_times_i = x * i  # line 24
                    s_2 = s_1 * 0.5 + np.sin(x_times_i)
                else:
                    s_2 = s_1 + x * x  # line 26
                s_1 = s_2
                s_gt_one_tape[i] = s_gt_one
                x_times_i_tape[i] = x_times_i
            return s_1, (x, n, s_gt_one_tape, x_times_i_tape)  # line 27


        @numba.njit(cache=True)
        def loop_with_branch_bwd(saved, ct_s_1):
            x, n, s_gt_one_tape, x_times_i_tape = saved
            ct_x = 0.0  # line 22
            for i in range(n - 1, -1, -1):
                s_gt_one = s_gt_one_tape[i]
                x_times_i = x_times_i_tape[i]
                ct_s_3 = ct_s_1
                if s_gt_one:  # line 23
                    ct_s_1 = ct_s_3 * 0.5  # line 24
                    ct_x = ct_x + ct_s_3 * np.cos(x_times_i) * i
                else:
                    ct_s_1 = ct_s_3  # line 26
                    ct_x = ct_x + 2 * ct_s_3 * x
            return ct_x
        """)


def test_a_loop_that_may_break_hands_its_tape_over_as_an_array():
    source = body(ta.show(loop_with_break, "reverse", args=(0.3, 5), backend="numba"))
    assert "    s_1_tape = []\n" in source
    assert "return s_1, (np.asarray(s_1_tape),)" in source
    assert "for k in range(len(s_1_tape) - 1, -1, -1):" in source


def test_a_tape_of_arrays_is_a_typed_list():
    args = (np.eye(2), np.ones(2), np.ones((3, 2)))
    source = body(ta.show(recurrence, "reverse", args=args, backend="numba"))
    assert "h_1_tape = numba.typed.List()" in source
    assert "for t in range(xs.shape[0] - 1, -1, -1):" in source


def test_a_loop_from_a_start_keeps_its_tape_by_the_index_less_the_start():
    source = body(ta.show(down_a_range, "reverse", args=(0.3, 2, 5), backend="numba"))
    assert "x_1_tape = np.empty(max(b - a, 0))" in source
    assert "x_1_tape[i - a] = x_1" in source
    assert "for i in range(b - 1, a - 1, -1):" in source
    assert "x = x_1_tape[i - a]" in source
    assert "i_tape" not in source  # the index is not taped: it is the reverse loop's own


def test_forward_rules_are_decorated_and_otherwise_the_numpy_backends():
    numba_source = body(ta.show(loop_with_branch, "forward", args=(0.3, 5), backend="numba"))
    numpy_source = body(ta.show(loop_with_branch, "forward", args=(0.3, 5)))
    assert numba_source == "@numba.njit(cache=True)\n" + numpy_source


def test_runtime_helpers_come_from_their_compiled_versions():
    def power(x, y):
        return x**y

    source = ta.show(power, "reverse", wrt=(0, 1), args=(1.5, 2.5), backend="numba")
    assert "import tangent_ast.runtime.compiled as runtime" in source
    assert "runtime.power_derivative(x, y)" in source


def test_a_helper_with_no_compiled_version_is_refused_with_its_line():
    def det_of(a):
        return np.linalg.det(a)

    with pytest.raises(ta.TangentAstError, match="backend='numba'.*runtime") as caught:
        ta.show(det_of, "reverse", args=(np.eye(2),), backend="numba")
    assert f"{__file__}:" in str(caught.value)


def test_an_unknown_backend_is_refused():
    with pytest.raises(ta.TangentAstError, match="unknown backend 'cuda'"):
        ta.show(loop_with_branch, "reverse", args=(0.3, 5), backend="cuda")
