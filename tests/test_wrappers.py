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


T = np.random.default_rng(0).standard_normal((3, 4, 5))


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 1), (0, -1), (2, 0, 1)])
def test_a_primitive_given_keywords_is_derived_for_their_values(axis):
    """check_grads(np.gradient, ..., kwargs={"axis": a}) for each a in turn: the def around
    it writes a constant keyword as its value (it was a global, and the rule derived for the
    first value was reused for the others)."""
    check_grads(np.gradient, (T,), kwargs={"axis": axis})
    check_grads(functools.partial(np.gradient, axis=axis), (T,))


def calls_with_a_slice_of_its_args(*args):
    return weighted_loss(np.sin(args[0]), *args[1:]) + weighted_loss(*args[:-1])


def test_a_starred_slice_of_args_is_the_arguments_it_holds():
    check_grads(calls_with_a_slice_of_its_args, (V, A, 0.5))


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


def softplus(x):
    return np.log1p(np.exp(x))


ta.defjvp(softplus, lambda dx, ans, x: dx / (1 + np.exp(-x)))
ta.defvjp(softplus, lambda ct, ans, x: ct / (1 + np.exp(-x)))


def scaled_square(x, axis=None, scale=1.0):
    return scale * np.sum(x**2, axis=axis)


# axis and scale taken as constants (None): a call may give them
ta.defjvp(scaled_square, lambda dx, ans, x, axis, scale: scale * np.sum(2 * x * dx, axis=axis), None, None)
ta.defvjp(scaled_square, lambda ct, ans, x, axis, scale: scale * 2 * x * ct, None, None)


def tempered(x, beta=1.0):
    return np.log1p(np.exp(beta * x)) / beta


ta.defvjp(tempered, lambda ct, ans, x: ct / (1 + np.exp(-x)))


@pytest.mark.filterwarnings("ignore:overflow")
def test_a_user_function_with_rules_given_directly_uses_them():
    """Its body overflows at 800 (nan); its rules, which a caller uses, give 1."""
    assert ta.grad(softplus)(800.0) == 1.0 == ta.grad(lambda x: softplus(x))(800.0)
    assert ta.jvp(softplus, (800.0,), (1.0,))[1] == 1.0
    assert ta.vjp(softplus, np.array([800.0, 0.0]))[1](np.ones(2)).tolist() == [1.0, 0.5]
    forward = ta.derive(softplus, "forward", args=(800.0,))
    assert forward.jvp(800.0, 1.0)[1] == 1.0
    reverse = ta.derive(softplus, "reverse", args=(800.0,))
    assert reverse.bwd(reverse.fwd(800.0)[1], 1.0) == 1.0
    assert "np.exp(-x)" in reverse.source  # the rule, inlined


def test_a_user_function_with_rules_keeps_the_parameters_they_take():
    x = np.array([1.0, 2.0])
    assert ta.grad(scaled_square)(x, scale=3.0).tolist() == [6.0, 12.0]
    assert ta.grad(scaled_square, wrt="x")(x, None, 0.5).tolist() == [1.0, 2.0]
    check_grads(scaled_square, (x,), modes=("forward", "reverse"), wrt=(0,))
    # beta has no rule: any other value than its default would be refused where called
    assert ta.grad(tempered)(0.0) == pytest.approx(0.5)
    with pytest.raises(TangentAstError, match="does not fit tempered"):
        ta.grad(tempered)(0.0, 2.0)


@pytest.mark.parametrize(
    "fn, args, wrt",
    [
        (np.einsum, ("ij->ji", A), (1,)),
        (np.einsum, ("k,nk->", V, A), (1, 2)),
        (np.einsum, (A, (0, 1), (1, 0)), (0,)),
        (np.einsum, (A, (Ellipsis, 0, 1), A, (Ellipsis, 1, 2), (Ellipsis, 0, 2)), (0, 2)),
        (np.pad, (A, ((1, 0), (0, 2)), "constant"), (0,)),
        (np.atleast_2d, (V,), (0,)),
    ],
)
def test_a_primitive_given_constants_writes_them_in_its_def(fn, args, wrt):
    """check_grads of a primitive called with constants (subscripts, a pad mode) and with
    *operands: a def of as many parameters, the constants written in it, where its rules take
    constants (they were parameters, or too many for the def)."""
    check_grads(fn, args, wrt=wrt)
