"""Reverse-mode loops save what the reverse sweep reads, once per iteration."""

import math
import textwrap

import numpy as np

import tangent_ast as ta
import tangent_ast.testing

from ..corpus import control_flow
from ..test_golden import body


def test_ten_thousand_step_loop_saves_one_float_per_step():
    x = np.full(10_000, 0.01)
    rule = ta.derive(control_flow.rnn_sum, "reverse", args=(x, 0.8))
    _, saved = rule.fwd(x, 0.8)
    tapes = [s for s in saved if isinstance(s, list)]
    assert [len(t) for t in tapes] == [10_000]  # one tape: the hidden state
    assert all(isinstance(v, float) for v in tapes[0])  # of Python floats
    # everything else saved is the inputs themselves (the trip count is x.shape[0] again)
    others = [s for s in saved if not isinstance(s, list)]
    assert len(others) == 2 and others[0] is x and others[1] == 0.8


def test_pullback_reads_tapes_by_index_so_it_can_run_twice():
    x = np.linspace(-1, 1, 7)
    _, pullback = ta.vjp(control_flow.recurrence, x, 0.3)
    first = pullback(1.0)
    np.testing.assert_array_equal(first[0], pullback(1.0)[0])
    np.testing.assert_allclose(pullback(2.0)[0], 2 * first[0])


def test_nothing_is_taped_when_the_reverse_sweep_reads_nothing():
    rule = ta.derive(control_flow.while_doubling, "reverse", args=(0.7,))
    _, saved = rule.fwd(0.7)
    assert not any(isinstance(s, list) for s in saved)  # only the trip count is saved


def test_a_loop_carried_value_has_one_tape():
    """``h = np.tanh(W @ h + x[t])``: the new ``h`` of iteration k is the old ``h`` of
    iteration k + 1, so the reverse loop hands it down instead of keeping a second tape."""
    W = np.linspace(-0.5, 0.5, 9).reshape(3, 3)
    xs = np.linspace(-1.0, 1.0, 15).reshape(5, 3)
    rule = ta.derive(control_flow.rnn_matrix, "reverse", wrt="W", args=(W, np.ones(3), xs))
    # h at the start of each step only: W @ h has h's shape (the signature's lengths tell),
    # so it is not kept for an unbroadcast
    assert rule.source.count("_tape = []") == 1
    _, saved = rule.fwd(W, np.ones(3), xs)
    assert sorted(len(s) for s in saved if isinstance(s, list)) == [5]
    ta.testing.check_grads(control_flow.rnn_matrix, (W, np.ones(3), xs))


def sine_steps(x, a):
    s = 0.0
    for i in range(50):  # noqa: B007 (the golden text names it)
        x = math.sin(a * x) + 0.5 * x
        s = s + x * x
    return s


def test_a_cheap_value_is_recomputed_not_taped():
    """``a * x`` of a restored ``x`` is computed again in the reverse loop: no tape of it,
    and, read once in each loop, it stays inside its expression. The last ``x`` is
    unpacked under the name the reverse loop hands it down by."""
    source = ta.derive(sine_steps, "reverse", wrt=("x", "a"), args=(0.3, 1.1)).source
    assert body(source) == textwrap.dedent("""\
        def sine_steps_fwd(x, a):
            x_1_tape = []
            s = 0.0
            x_1 = x
            for i in range(50):
                x_1_tape.append(x_1)
                x_1 = math.sin(a * x_1) + 0.5 * x_1
                s = s + x_1 * x_1
            return s, (a, x_1_tape, x_1)


        def sine_steps_bwd(saved, ct_s):
            a, x_1_tape, x_2 = saved
            ct_x = 0.0
            ct_a = 0.0
            for i in reversed(range(50)):
                x_1 = x_1_tape[i]
                ct_sin = ct_x + 2.0 * ct_s * x_2
                ct_a_times_x = ct_sin * math.cos(a * x_1)
                ct_a = ct_a + ct_a_times_x * x_1
                ct_x = ct_sin * 0.5 + ct_a_times_x * a
                x_2 = x_1
            return ct_x, ct_a
        """)
    tangent_ast.testing.check_grads(sine_steps, (0.3, 1.1), wrt=(0, 1))


def indexed_rnn(W, U, h, xs):
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t])
    return np.sum(h**2)


def test_an_item_of_an_unchanged_array_is_read_again():
    """``xs[t]`` is read again in the reverse loop (a view: nothing copied, nothing
    taped); ``W @ h`` is a matmul, too dear to compute again, and ``h`` is handed down."""
    rng = np.random.default_rng(1)
    W, U = rng.standard_normal((3, 3)) / 3, rng.standard_normal((3, 2))
    h, xs = rng.standard_normal(3), rng.standard_normal((4, 2))
    rule = ta.derive(indexed_rnn, "reverse", wrt=("W", "U"), args=(W, U, h, xs))
    bwd = body(rule.source).split("def indexed_rnn_bwd")[1]
    assert "xs_t_tape" not in rule.source and "np.outer(ct_W_at_h, xs[t])" in bwd
    assert rule.source.count("_tape = []") == 1  # h at the start of each step
    _, saved = rule.fwd(W, U, h, xs)
    assert any(s is xs for s in saved)
    tangent_ast.testing.check_grads(indexed_rnn, (W, U, h, xs), wrt=(0, 1))


def elementwise_steps(x, w):
    y = x
    for i in range(4):  # noqa: B007
        z = y * w
        y = np.sin(z) * y
    return np.sum(y)


def test_elementwise_array_arithmetic_is_recomputed_a_call_is_not():
    """``y * w`` of arrays costs what reading a tape does: computed again from the taped
    ``y``; ``np.sin`` of an array is not (it would cost as much as the forward step)."""
    x, w = np.linspace(-1.0, 1.0, 5), np.linspace(0.5, 1.5, 5)
    rule = ta.derive(elementwise_steps, "reverse", args=(x, w))
    assert "z_tape" not in rule.source and "sin_tape" in rule.source
    assert "np.cos(y * w)" in rule.source
    tangent_ast.testing.check_grads(elementwise_steps, (x, w))
    x2 = np.linspace(0.1, 0.9, 5)
    tangent_ast.testing.check_grads(elementwise_steps, (x2, w), modes=("reverse",))


def test_a_header_replaces_the_tape_of_what_is_computed_from_it():
    """Only ``a * x`` and the new ``x`` are read backwards: the old ``x`` is taped in
    their stead, ``a * x`` recomputed from it and the new ``x`` handed down."""
    rule = ta.derive(sine_steps, "reverse", args=(0.3, 1.1))
    assert rule.source.count("_tape = []") == 1 and "a_times_x_tape" not in rule.source
    assert "x_2 = x_1\n    for" not in rule.source
    _, pullback = ta.vjp(sine_steps, 0.3, 1.1)
    assert pullback(1.0) == pullback(1.0)
