"""linearize: the tangent map written down from one run of the forward rule, replayed for
each tangent, gives what jvp gives, over the whole corpus; what the trace cannot follow
runs the forward rule on each call, with the same numbers."""

import numpy as np
import pytest

import tangent_ast as ta
from tangent_ast.errors import TangentAstError

from ..runtime.test_jacobians import FLOAT_CASES, _assert_same, _copies

rng = np.random.default_rng(12)
TRACED = []


def _direction(x):
    return rng.standard_normal(np.shape(x)) if isinstance(x, np.ndarray) else rng.standard_normal()


@pytest.mark.parametrize("case, w", FLOAT_CASES, ids=[c.id for c, _ in FLOAT_CASES])
def test_the_linear_map_is_the_jvp_at_the_point(case, w):
    try:
        out, f_jvp = ta.linearize(case.fn, *_copies(case.args), wrt=w)
    except TangentAstError:
        return
    if "run_rule" not in f_jvp.__code__.co_freevars:
        TRACED.append(case.id)
    expected_out = case.fn(*_copies(case.args))
    _assert_same(out, expected_out) if not isinstance(out, dict) else None
    for _ in range(2):  # the map is replayed, not used up
        v = _direction(case.args[w])
        tangents = [None] * len(case.args)
        tangents[w] = v.copy() if hasattr(v, "copy") else v
        _, reference = ta.jvp(case.fn, _copies(case.args), tangents)
        _assert_same(f_jvp(v), reference)


def test_most_of_the_corpus_is_traced():
    assert len(TRACED) >= 195, TRACED


def test_a_primal_array_written_after_a_tangent_read_it_is_not_traced():
    def f(x):
        y = x * 1.0
        z = np.sin(y) * y  # the tangent of z reads y ...
        y[0] = 5.0  # ... which changes afterwards
        return z + y

    x = np.array([0.3, 0.7])
    out, f_jvp = ta.linearize(f, x)
    v = np.array([1.0, -2.0])
    np.testing.assert_allclose(f_jvp(v), ta.jvp(f, (x,), (v,))[1])
    assert x.flags.writeable  # arrays made read-only while tracing are writable again


def test_linearize_with_respect_to_two_arguments_and_a_loop():
    def rnn(h, W, xs):
        for t in range(xs.shape[0]):
            h = np.tanh(W @ h + xs[t])
            if t % 2:
                h = h * 0.5
        return np.sum(h**2)

    h, W, xs = rng.standard_normal(3), rng.standard_normal((3, 3)), rng.standard_normal((5, 3))
    out, f_jvp = ta.linearize(rnn, h, W, xs, wrt=(0, 1))
    assert out == pytest.approx(rnn(h, W, xs))
    dh, dW = rng.standard_normal(3), rng.standard_normal((3, 3))
    assert f_jvp(dh, dW) == pytest.approx(ta.jvp(rnn, (h, W, xs), (dh, dW, None))[1])
    with pytest.raises(TangentAstError, match="takes 2 tangents"):
        f_jvp(dh)
