"""Reverse rules close to hand-written gradients: shapes of slices, folded factors, spread
sums, residuals kept only for their shape. Each shape of output is also checked for the
numbers it computes."""

import textwrap

import gast
import numpy as np

import tangent_ast as ta
from tangent_ast import runtime
from tangent_ast.api.api import _session
from tangent_ast.emit.emit import to_ast
from tangent_ast.modes import Mode
from tangent_ast.runtime.tangents import ONLY_SHAPE_BYTES
from tangent_ast.emit.signature_text import parse_signature
from tangent_ast.optimize.simplify import _Fold
from tangent_ast.vocabulary.syntax import unparse
from tangent_ast.testing import check_grads

from .test_golden import body


def rosenbrock(x):
    head = x[:-1]
    tail = x[1:]
    return np.sum(100.0 * (tail - head**2) ** 2 + (1.0 - head) ** 2)


def test_slices_trimming_alike_share_a_shape():
    """x[1:] and x[:-1] have one shape whatever x's length: no unbroadcast, no residual
    kept for a shape, the sum's cotangent never spread into an array."""
    x = np.linspace(-1.0, 1.5, 7)
    source = ta.derive(rosenbrock, "reverse", wrt="x", args=(x,)).source
    assert body(source) == textwrap.dedent("""\
        def rosenbrock_fwd(x):
            head = x[:-1]
            tail = x[1:]
            tmp = tail - head ** 2
            out = np.sum(100.0 * tmp ** 2 + (1.0 - head) ** 2)
            return out, (x, tmp)


        def rosenbrock_bwd(saved, ct_out):
            x, tmp = saved
            ct_tail = ct_out * 200.0 * tmp
            ct_head = ct_tail * -2 * x[:-1] - ct_out * 2 * (1.0 - x[:-1])
            ct_x = runtime.getitem_vjp(ct_tail, x, slice(1, None, None))
            ct_x[:-1] += ct_head
            return ct_x
        """)
    check_grads(rosenbrock, (x,))
    want = np.zeros_like(x)
    r = x[1:] - x[:-1] ** 2
    want[1:] += 200.0 * r
    want[:-1] += -400.0 * r * x[:-1] - 2.0 * (1.0 - x[:-1])
    np.testing.assert_allclose(ta.grad(rosenbrock)(x), want, rtol=1e-12)


def trimmed_alike(x):
    return np.sum(x[1:-1] * x[2:] + x[:-2])


def trimmed_otherwise(x):
    # x[2:5] and x[1:4] have one length only because x is long enough: shapes kept apart
    return np.sum(x[2:5] * x[1:4])


def trimmed_2d(m):
    return np.sum(m[1:, :-1] * m[:-1, 1:])


def test_slices_of_other_forms_and_axes_keep_derivatives_right():
    x = np.linspace(0.3, 2.0, 9)
    for f in (trimmed_alike, trimmed_otherwise):
        check_grads(f, (x,))
    assert "unbroadcast" not in ta.derive(trimmed_alike, "reverse", args=(x,)).source
    assert "unbroadcast" in ta.derive(trimmed_otherwise, "reverse", args=(x,)).source
    m = np.arange(12.0).reshape(3, 4) / 7.0
    check_grads(trimmed_2d, (m,))
    ct = np.zeros_like(m)
    ct[1:, :-1] += m[:-1, 1:]
    ct[:-1, 1:] += m[1:, :-1]
    np.testing.assert_allclose(ta.grad(trimmed_2d)(m), ct, rtol=1e-12)


def _folded(source):
    expr = gast.parse(source).body[0].value
    return unparse(to_ast(_Fold().visit(expr)))


def test_number_factors_of_a_product_are_merged():
    assert _folded("ct * 100.0 * 2 * t") == "ct * 200.0 * t"
    assert _folded("-ct * 2 * t") == "ct * -2 * t"
    assert _folded("-(a * b) * 2") == "a * b * -2"
    assert _folded("2 * a * 3") == "6 * a"
    assert _folded("a * 2") == "a * 2"  # one number, no sign: as it was
    assert _folded("a * 20 * 15") == "a * 20 * 15"  # an int past int8 is not made
    assert _folded("a + -b * c") == "a - b * c"
    assert _folded("a - -b") == "a + b"
    assert _folded("a + b * -c") == "a - b * c"  # a negated factor anywhere in a product
    assert _folded("a - b / -c * d") == "a + b / c * d"


def test_a_power_of_two_cancels_against_a_denominator():
    # the derivatives of sqrt (ct / (2.0 * sqrt)) and of x * x (2 * x), as a person cancels them
    assert _folded("2 * (ct / (2.0 * s)) * x") == "ct / s * x"
    assert _folded("x * 0.5 * (ct / (s * 0.5))") == "x * (ct / s)"
    assert _folded("3 * (ct / (3.0 * s))") == "3 * (ct / (3.0 * s))"  # not a power of two
    assert _folded("2 * (ct / 2.0)") == "2 * (ct / 2.0)"  # a denominator of one number stays
    assert _folded("2 * a * 2 * (ct / (2.0 * s))") == "4 * a * (ct / (2.0 * s))"
    # an int times an int array may wrap around (int8: 2 * 100 == -56): left as it is
    assert _folded("2 * (ct / (2 * s)) * x") == "2 * (ct / (2 * s)) * x"
    # the same numbers to the bit (away from overflow and underflow), negations too
    rng = np.random.default_rng(3)
    ct, s, x = (rng.standard_normal(1000) * 10.0 ** rng.integers(-30, 30, 1000) for _ in range(3))
    for before in ("2 * (ct / (2.0 * s)) * x", "x * 0.5 * (ct / (s * 0.5))", "ct + s * -x"):
        after = _folded(before)
        assert after != before
        values = [eval(e, {"ct": ct, "s": s, "x": x}) for e in (before, after)]
        assert values[0].tobytes() == values[1].tobytes()


def spread_twice(x, y):
    s = np.sum(x)
    return s * np.sum(np.sin(x) * y) + np.sum(x * x)


def test_the_cotangent_of_a_sum_is_not_spread_into_an_array():
    x, y = np.linspace(0.1, 1.0, 5), np.linspace(2.0, 3.0, 5)
    source = ta.derive(rosenbrock, "reverse", wrt="x", args=(x,)).source
    assert "full_like" not in source
    check_grads(spread_twice, (x, y))


def logistic_loss(w, X, y):
    z = X @ w
    p = 1.0 / (1.0 + np.exp(-z))
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def test_residuals_read_only_for_their_shape_are_kept_as_shapes():
    """Told only the ranks (``--args`` with ``:`` axes), the rule cannot know that ``y`` and
    ``X @ w`` have one length: it keeps the log terms for their shapes only."""
    rng = np.random.default_rng(3)
    n = ONLY_SHAPE_BYTES // 8 + 10  # arrays large enough to be let go
    X, w = rng.standard_normal((n, 3)), rng.standard_normal(3)
    y = (rng.random(n) > 0.5).astype(float)
    ranks_only = parse_signature("w: float64[:], X: float64[:, :], y: float64[:]", ["w", "X", "y"])
    rule = _session(None).rule(logistic_loss, Mode.REVERSE, "w", ranks_only)
    assert "runtime.only_shape(tmp_1)" in rule.source
    _out, saved = rule.fwd(w, X, y)
    arrays = [a for a in saved if isinstance(a, np.ndarray)]
    shapes_only = [a for a in arrays if a.strides == (0,)]
    assert len(shapes_only) == 5  # the log terms and their sums: read for unbroadcast only
    # X and y, and exp and p, which the reverse sweep reads (1 + exp, 1 - y and 1 - p it
    # computes again)
    assert sum(a.nbytes for a in arrays if a.strides != (0,)) == X.nbytes + 3 * y.nbytes
    p = 1.0 / (1.0 + np.exp(-X @ w))
    np.testing.assert_allclose(rule.bwd(saved, 1.0), X.T @ (p - y) / n, rtol=1e-10)
    check_grads(logistic_loss, (w, X[:50], y[:50]), wrt=0)


def test_equal_lengths_of_the_arguments_leave_out_unbroadcast():
    """Example arguments tell which axes have one length (``y`` and ``X``'s rows): the
    terms of the loss have one shape, so there is no unbroadcast and nothing is kept for a
    shape; the bias of ``X @ W + b`` gets its cotangent summed over the rows."""
    rng = np.random.default_rng(4)
    X, w = rng.standard_normal((40, 3)), rng.standard_normal(3)
    y = (rng.random(40) > 0.5).astype(float)
    rule = ta.derive(logistic_loss, "reverse", wrt="w", args=(w, X, y))
    assert "runtime.unbroadcast" not in rule.source and "only_shape" not in rule.source
    assert "signature: array1f[a], array2f[b,a], array1f[b]" in rule.source
    _out, saved = rule.fwd(w, X, y)
    assert len(saved) == 4  # X, y, exp, p: 1 + exp, 1 - y, 1 - p are computed again
    check_grads(logistic_loss, (w, X, y), wrt=0)
    # an int y has y's length all the same
    check_grads(logistic_loss, (w, X, y.astype(int)), wrt=0)
    assert (
        "runtime.unbroadcast"
        not in ta.derive(logistic_loss, "reverse", wrt="w", args=(w, X, y.astype(int))).source
    )

    def layer(W, b, X):
        return np.sum(np.tanh(X @ W + b) ** 2)

    W, b = rng.standard_normal((3, 4)), rng.standard_normal(4)
    source = ta.derive(layer, "reverse", wrt=("W", "b"), args=(W, b, X)).source
    assert "np.sum(ct_X_at_W_plus_b, axis=0)" in source and "runtime.unbroadcast" not in source
    check_grads(layer, (W, b, X), wrt=(0, 1))
    # told nothing (lengths all distinct) or a square W, the rule is another one, and right
    check_grads(layer, (rng.standard_normal((3, 3)), rng.standard_normal(3), X), wrt=(0, 1))
    check_grads(layer, (W, rng.standard_normal(1), X), wrt=(0, 1))


def test_only_shape_keeps_shape_and_dtype_and_lets_small_values_be():
    big = np.ones((300, 200), dtype=np.float32)
    view = runtime.only_shape(big)
    assert view.shape == big.shape and view.dtype == big.dtype
    assert view.base is not None and view.strides == (0, 0)
    assert runtime.unbroadcast(np.ones((300, 200)), view).shape == (300, 200)
    assert np.zeros_like(view).flags.writeable
    small = np.ones(3)
    assert runtime.only_shape(small) is small
    assert runtime.only_shape(2.5) == 2.5


class _Tagged(np.ndarray):
    """An ndarray subclass: keyed by the wrapper as another type than ndarray."""


def scaled_difference(a, b):
    return np.sum((a - b) ** 2 * a)


def test_calls_with_other_equal_lengths_get_their_own_rule():
    """A rule is specialised for which lengths are equal: a later call whose lengths differ
    (b of length 1, broadcast) must not reuse it, for ndarray subclasses too."""
    gradient = ta.grad(scaled_difference, wrt=(0, 1))
    for make in (np.asarray, lambda v: np.asarray(v).view(_Tagged)):
        a, b = make(np.array([0.3, -1.2, 2.0])), make(np.array([0.5, 0.1, -0.4]))
        one = make(np.array([0.7]))
        for args in ((a, b), (a, one), (a, b)):
            got = gradient(*args)
            expected_a = (args[0] - args[1]) * 2 * args[0] + (args[0] - args[1]) ** 2
            expected_b = np.sum(-2 * (args[0] - args[1]) * args[0], keepdims=True)
            np.testing.assert_allclose(np.asarray(got[0]), expected_a)
            np.testing.assert_allclose(np.asarray(got[1]).reshape(-1), np.broadcast_to(
                expected_b if args[1].shape == (1,) else -2 * (args[0] - args[1]) * args[0],
                args[1].shape))
