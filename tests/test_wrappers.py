"""A NumPy or math function given directly, or a functools.partial, differentiates
through a def that calls it: both modes against finite differences and each other."""

import functools
import math

import numpy as np
import pytest

import tangent_ast as ta
from tangent_ast.errors import TangentAstError
from tangent_ast.testing import check_grads

A = np.array([[2.0, 1.0, 0.3], [0.5, 3.0, -0.2], [0.1, 0.4, 1.5]])
V = np.array([0.3, -1.2, 0.8])


def weighted_loss(w, data, scale=1.0):
    return np.sum((data @ w) ** 2) * scale


CASES = [
    (np.sin, (0.7,)),
    (np.exp, (V,)),
    (np.tanh, (V,)),
    (np.sum, (A,)),
    (np.linalg.det, (A,)),
    (np.linalg.inv, (A,)),
    (np.dot, (V, A)),
    (math.exp, (0.4,)),
    (math.atan2, (0.4, 1.3)),
    (functools.partial(np.sum, axis=1), (A,)),
    (functools.partial(np.linalg.norm, ord=1), (V,)),
    (functools.partial(weighted_loss, data=A), (V,)),
    (functools.partial(weighted_loss, data=A, scale=0.5), (V,)),
]


@pytest.mark.parametrize("fn, args", CASES, ids=lambda c: getattr(c, "__name__", None) or repr(c)[:40])
def test_a_primitive_given_directly_differentiates(fn, args):
    check_grads(fn, args, modes=("forward", "reverse"))


def test_grad_jvp_and_vjp_of_numpy_functions():
    assert ta.grad(np.sin)(0.5) == pytest.approx(np.cos(0.5))
    det, d_det = ta.jvp(np.linalg.det, (A,), (np.eye(3),))
    assert d_det == pytest.approx(np.trace(np.linalg.det(A) * np.linalg.inv(A)))
    out, pullback = ta.vjp(functools.partial(np.sum, axis=1), A)
    np.testing.assert_allclose(pullback(np.array([1.0, 2.0, 3.0])), np.repeat([[1.0], [2.0], [3.0]], 3, axis=1))


def test_the_def_around_a_numpy_function_reads_as_written():
    source = ta.derive(np.sin, args=(0.5,)).source
    assert "import numpy as np" in source and "out = np.sin(x)" in source and "np.cos(x)" in source


def test_a_function_without_rules_or_source_is_refused():
    with pytest.raises(TangentAstError, match="not a Python function"):
        ta.grad(np.busday_count)(1.0, 2.0)


def test_a_variadic_primitive_asks_for_a_def():
    with pytest.raises(TangentAstError, match="no readable signature") as error:
        ta.grad(math.hypot)(0.4, 1.3)
    assert "wrap it in a def" in str(error.value)
