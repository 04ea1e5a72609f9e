"""Reverse-mode loops save what the reverse sweep reads, once per iteration."""

import numpy as np

import tangent_ast as ta
import tangent_ast.testing

from .corpus import control_flow


def test_ten_thousand_step_loop_saves_one_float_per_step():
    x = np.full(10_000, 0.01)
    rule = ta.derive(control_flow.rnn_sum, "reverse", args=(x, 0.8))
    _, saved = rule.fwd(x, 0.8)
    tapes = [s for s in saved if isinstance(s, list)]
    assert [len(t) for t in tapes] == [10_000]  # one tape: the hidden state
    assert all(isinstance(v, float) for v in tapes[0])  # of Python floats
    # everything else saved is the inputs themselves and the loop's trip count
    others = [s for s in saved if not isinstance(s, list)]
    assert others[0] is x and others[1] == 0.8 and others[2] == 10_000


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
