"""tangent_ast's own API called in a function being differentiated (lowering/api_calls.py):
each call is differentiated through (right in both modes, on both routes, and again at
second order) or refused with an error naming the call, its file and line, and what to do;
never taken for a constant."""

import os

import numpy as np
import pytest

import tangent_ast as ta
from tangent_ast import testing
from tangent_ast.errors import TangentAstError
from tangent_ast.testing import check_grads

HERE = os.path.basename(__file__)
ROUTES = ["direct", "transpose"]


def f(x):
    return np.sin(x) * x


def f2(x, y):
    return np.sin(x) * y


def fa(x):
    return np.sum(np.sin(x) * x)


def pullback_of_a_constant(x, v):
    out, pullback = ta.vjp(f, x)
    g = pullback(1.0)
    return g * v


def pullback_and_value(x, v):
    out, pullback = ta.vjp(f, x)
    return pullback(v) * out


def pullback_of_one_argument(x, v):
    out, pb = ta.vjp(f2, x, v, wrt=0)
    return pb(1.0) * v


def pullback_called_twice(x, v):
    out, pb = ta.vjp(f, x)
    return pb(v) + pb(out) * v


def jvp_inside(x, v):
    out, t = ta.jvp(f, (x,), (v,))
    return t * out


def linearized(x, v):
    out, f_jvp = ta.linearize(f, x)
    return f_jvp(v) * out


def linearized_twice(x, v):
    out, f_jvp = ta.linearize(f2, x, v)
    return f_jvp(v, x) + f_jvp(1.0, 2.0) * out


def gradient_inside(x, v):
    return ta.grad(f)(x) * v


def gradient_of_a_gradient(x, v):
    return ta.grad(ta.grad(f))(x) * v


def gradient_made_in_the_function(x, v):
    g = ta.grad(f)
    return g(x) * v


def value_and_gradient_inside(x, v):
    value, gradient = ta.value_and_grad(f)(x)
    return value * gradient * v


def hessian_vector_product_inside(x, v):
    return ta.hvp(f)(x, v) * x


def checkpointed_call(x, v):
    return ta.checkpoint(f)(x) * v


RULE_JVP = None  # a derived rule made at module level (made in the test: its cache)


def rule_called(x, v):
    out, t = RULE_JVP(x, v)
    return t * out


def rule_functions_called(x, v):
    out, t = RULE_JVP.jvp(x, v)
    return t


DIFFERENTIATED_THROUGH = [
    pullback_of_a_constant,
    pullback_and_value,
    pullback_of_one_argument,
    pullback_called_twice,
    jvp_inside,
    linearized,
    linearized_twice,
    gradient_inside,
    gradient_of_a_gradient,
    gradient_made_in_the_function,
    value_and_gradient_inside,
    hessian_vector_product_inside,
    checkpointed_call,
    rule_called,
    rule_functions_called,
]


@pytest.fixture(autouse=True)
def _rule():
    global RULE_JVP
    RULE_JVP = ta.derive(f, "forward", args=(0.5,))
    yield
    RULE_JVP = None


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("fn", DIFFERENTIATED_THROUGH, ids=lambda fn: fn.__name__)
def test_differentiated_through(fn, route):
    check_grads(fn, (0.7, 2.0), route=route)


def test_the_pullback_of_vjp_inside_is_differentiated_not_a_constant():
    x, v = 0.7, 2.0
    second = 2 * np.cos(x) - x * np.sin(x)  # f''(x)
    assert ta.grad(pullback_of_a_constant)(x, v) == pytest.approx(second * v)
    assert ta.jvp(pullback_of_a_constant, (x, v), (1.0, None))[1] == pytest.approx(second * v)


@pytest.mark.parametrize(
    "fn", [pullback_of_a_constant, linearized, gradient_inside], ids=lambda fn: fn.__name__
)
def test_second_derivatives_through_the_api(fn):
    check_grads(fn, (0.7, 2.0), order=2)


def vjp_of_arrays(x):
    out, pullback = ta.vjp(fa, x)
    return np.sum(pullback(1.0) ** 2)


def test_arrays():
    x = np.array([0.3, -0.9, 1.4])
    for route in ROUTES:
        check_grads(vjp_of_arrays, (x,), route=route)


# --- refused: what the error says, and where


JF = ta.jacfwd(f)
_, PULLBACK = ta.vjp(f, 0.5)
_, LINEAR_MAP = ta.linearize(f, 0.5)


def jacobian_inside(x, v):
    return ta.jacfwd(f)(x) * v


def jacobian_made_outside(x, v):
    return JF(x) * v


def hessian_inside(x, v):
    return np.sum(ta.hessian(fa)(np.array([x, v])))


def jacobian_made_in_the_function(x, v):
    j = ta.jacrev(f)
    return j(x) * v


def pullback_made_outside(x, v):
    return PULLBACK(v) * x


def linear_map_made_outside(x, v):
    return LINEAR_MAP(v) * x


def pullback_passed_on(x, v):
    out, pullback = ta.vjp(f, x)
    return apply(pullback, v)


def apply(g, v):
    return g(v)


def pullback_not_unpacked(x, v):
    made = ta.vjp(f, x)
    return made[0] * v


def pullback_batched(x, v):
    out, pullback = ta.vjp(f, x)
    return pullback(v, batched=True)


def jvp_of_a_list(x, v):
    out, t = ta.jvp(f, [x], [v])
    return t


def jvp_of_a_local_function(x, v):
    g = f
    out, t = ta.jvp(g, (x,), (v,))
    return t


def derive_inside(x, v):
    rule = ta.derive(f, "forward", args=(x,))
    return rule.jvp(x, v)[1]


def checked_inside(x, v):
    testing.check_grads(f, (x,))
    return f(x) * v


def finite_differences_inside(x, v):
    return testing.numerical_jvp(f, (x,), (v,)) * x


def shown_inside(x, v):
    ta.show(f)
    return f(x) * v


def gradient_of_a_value(x, v, g=f):
    return ta.grad(g)(x) * v


REFUSED = [
    (jacobian_inside, "calling ta.jacfwd, tangent_ast's own"),
    (jacobian_made_outside, r"calling JF \(<jacfwd\(f, 0\)>\), tangent_ast's own"),
    (hessian_inside, "calling ta.hessian, tangent_ast's own"),
    (jacobian_made_in_the_function, "calling ta.jacrev, tangent_ast's own"),
    (pullback_made_outside, "calling PULLBACK, tangent_ast's own"),
    (linear_map_made_outside, "calling LINEAR_MAP, tangent_ast's own"),
    (pullback_passed_on, "the pullback 'pullback' of ta.vjp used other than by calling it"),
    (pullback_not_unpacked, "ta.vjp in a function being differentiated, its result not unpacked"),
    (pullback_batched, "calling 'pullback' with keyword arguments"),
    (jvp_of_a_list, "ta.jvp in a function being differentiated in this form"),
    (jvp_of_a_local_function, "ta.jvp of a function made or passed in the function"),
    (derive_inside, "calling ta.derive, tangent_ast's own"),
    (checked_inside, "calling testing.check_grads, tangent_ast's own"),
    (finite_differences_inside, "calling testing.numerical_jvp, tangent_ast's own"),
    (shown_inside, "calling ta.show, tangent_ast's own"),
    (gradient_of_a_value, "calling what ta.grad makes of values of the function"),
]


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("fn, message", REFUSED, ids=lambda v: getattr(v, "__name__", ""))
def test_refused_naming_the_call(fn, message, route):
    line = fn.__code__.co_firstlineno
    for derive in (
        lambda: ta.grad(fn, (0, 1), route=route)(0.7, 2.0),
        lambda: ta.jvp(fn, (0.7, 2.0), (1.0, 1.0)),
    ):
        with pytest.raises(TangentAstError, match=message) as refused:
            derive()
        where = str(refused.value).split(": ")[0]
        assert where.startswith(os.path.join(os.path.dirname(__file__), HERE) + ":")
        assert line < int(where.rsplit(":", 1)[1]) <= line + 3
        assert "hint:" in str(refused.value)


# --- by identity, never by name


def vjp(g, x):  # named as tangent_ast's, but the program's own
    return g(x), 2.0


def linearize(g, x):
    return g(x) * 3.0


def calls_functions_named_like_the_api(x, v):
    out, two = vjp(f, x)
    return linearize(f, x) * two * v + out


def test_functions_named_like_the_api_are_the_program_s():
    check_grads(calls_functions_named_like_the_api, (0.7, 2.0))


# --- an argument updated in place after a call through the API kept it


def wave_sum(p):
    return np.sum(np.sin(p) * p) + 0.5 * np.sum(p * p)


def gradient_then_update_through_a_view(a, c):
    v = ta.grad(wave_sum)(a) * a
    tail = a[1:]
    tail *= 2.0  # the caller's a changes: what grad(wave_sum)'s rule saved of it must not
    return np.sum(v @ c)


def value_and_gradient_then_update_of_an_element_row(a, c):
    value, gradient = ta.value_and_grad(wave_sum)(a)
    column = a[1:, 0]
    column += 0.5
    return np.sum(gradient * value @ c)


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize(
    "fn",
    [gradient_then_update_through_a_view, value_and_gradient_then_update_of_an_element_row],
    ids=lambda f: f.__name__,
)
def test_an_argument_updated_after_a_call_that_keeps_it_is_refused(fn, route):
    """The rule of ``ta.grad(g)`` saves ``a`` for its reverse sweep; the update after it would
    change what it saved (the gradient came out wrong by 4%, found by verification)."""
    a = np.array([[0.3, -0.5, 1.2], [0.7, 0.1, -0.4], [-1.1, 0.6, 0.2]])
    with pytest.raises(TangentAstError, match="passing 'a' to this call before 'a' is updated"):
        ta.grad(fn, (0, 1), route=route)(a.copy(), np.array([0.3, 0.5, -0.2]))
