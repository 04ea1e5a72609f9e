"""Second derivatives: hvp (forward mode over the reverse rule) on the corpus, against
central differences of the gradient, and the rules of the helpers generated code calls."""

import copy
import os

import numpy as np
import pytest

import tangent_ast as ta
from tangent_ast import runtime
from tangent_ast.errors import TangentAstError
from tangent_ast.testing import check_grads, check_second_order

from ..corpus import calls, control_flow, jumps, language, straight_line

rng = np.random.default_rng(8)


def _scalar_cases():
    """Corpus cases whose function returns a float, with the first float argument."""
    out = []
    for case in (
        straight_line.CASES + control_flow.CASES + jumps.CASES + calls.CASES + language.CASES
    ):
        if case.kwargs:
            continue
        try:
            value = case.fn(*[copy.deepcopy(a) for a in case.args])
        except Exception:
            continue
        floats = [
            i
            for i, a in enumerate(case.args)
            if isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype.kind == "f")
        ]
        if isinstance(value, (float, np.floating)) and floats:
            out.append((case, floats[0]))
    return out


CASES = _scalar_cases()


def _gradient_difference(f, args, w, v, h):
    grad = ta.grad(f, wrt=w)
    # copies: a function that updates an argument in place must not change the next call's
    plus, minus = ([copy.deepcopy(a) for a in args] for _ in range(2))
    plus[w], minus[w] = args[w] + h * v, args[w] - h * v
    return (np.asarray(grad(*plus)) - np.asarray(grad(*minus))) / (2 * h)


@pytest.mark.parametrize("case, w", CASES, ids=[c.id for c, _ in CASES])
def test_hvp_is_right_or_refused(case, w):
    args = [copy.deepcopy(a) for a in case.args]
    v = rng.standard_normal(np.shape(args[w])) if isinstance(args[w], np.ndarray) else 0.7
    try:
        hv = ta.hvp(case.fn, wrt=w)(*args, v)
    except TangentAstError:
        return  # refused, clearly: the second derivative of this construct is not derived yet
    references = [_gradient_difference(case.fn, case.args, w, v, h) for h in (1e-4, 1e-5, 1e-6)]
    assert any(np.allclose(hv, r, rtol=1e-4, atol=1e-5) for r in references), (hv, references)


def test_most_of_the_corpus_has_second_derivatives():
    derived = 0
    for case, w in CASES:
        args = [copy.deepcopy(a) for a in case.args]
        v = np.ones(np.shape(args[w])) if isinstance(args[w], np.ndarray) else 1.0
        try:
            ta.hvp(case.fn, wrt=w)(*args, v)
            derived += 1
        except TangentAstError:
            pass
    assert derived >= 0.7 * len(CASES), (derived, len(CASES))


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosenbrock_hess_prod(x, p):
    """The analytic Hessian-vector product (as SciPy's rosen_hess_prod writes it)."""
    hp = np.zeros_like(x)
    hp[0] = (1200 * x[0] ** 2 - 400 * x[1] + 2) * p[0] - 400 * x[0] * p[1]
    hp[1:-1] = (
        -400 * x[:-2] * p[:-2]
        + (202 + 1200 * x[1:-1] ** 2 - 400 * x[2:]) * p[1:-1]
        - 400 * x[1:-1] * p[2:]
    )
    hp[-1] = -400 * x[-2] * p[-2] + 200 * p[-1]
    return hp


def test_hvp_of_rosenbrock_is_the_analytic_one():
    x, p = rng.standard_normal(7), rng.standard_normal(7)
    np.testing.assert_allclose(ta.hvp(rosenbrock)(x, p), rosenbrock_hess_prod(x, p), rtol=1e-10)


def two_arguments(a, b):
    return np.sum(a * b**2) + np.sum(np.sin(a) * b)


def test_hvp_with_respect_to_two_arguments():
    a, b = rng.standard_normal(3), rng.standard_normal(3)
    va, vb = rng.standard_normal(3), rng.standard_normal(3)
    ha, hb = ta.hvp(two_arguments, wrt=(0, 1))(a, b, (va, vb))
    # H = [[diag(-sin a * b), diag(2 b + cos a)], [diag(2 b + cos a), diag(2 a)]]
    np.testing.assert_allclose(ha, -np.sin(a) * b * va + (2 * b + np.cos(a)) * vb)
    np.testing.assert_allclose(hb, (2 * b + np.cos(a)) * va + 2 * a * vb)


def test_hvp_needs_a_direction_per_argument():
    with pytest.raises(TangentAstError, match="2 arguments differentiated but 1 directions"):
        ta.hvp(two_arguments, wrt=(0, 1))(np.ones(3), np.ones(3), (np.ones(3),))


# --- the helpers generated code calls have rules ---------------------------------------
M = rng.standard_normal((3, 4))
ROW = rng.standard_normal((1, 4))


def unbroadcast_sum(g):
    return np.sum(runtime.unbroadcast(g, ROW) ** 2)


def broadcast_back(t):
    return np.sum(runtime.broadcast_like(t, M) * M)


def placed(g):
    return np.sum(runtime.getitem_vjp(g, M, (slice(1, None), 2)) ** 2 * M)


def spread(g):
    return np.sum(runtime.sum_vjp(g, M, axis=0) ** 2 * M)


def spread_mean(g):
    return np.sum(runtime.mean_vjp(g, M, axis=1, keepdims=True) * M)


def transposed(g):
    return np.sum(runtime.transpose_vjp(g, (1, 0)) * M)


def added(a, b):
    return np.sum(runtime.add_tangents(a * 2.0, b) ** 2)


@pytest.mark.parametrize(
    "fn, args",
    [
        (unbroadcast_sum, (M,)),
        (broadcast_back, (ROW,)),
        (placed, (rng.standard_normal(2),)),
        (spread, (rng.standard_normal(4),)),
        (spread_mean, (rng.standard_normal((3, 1)),)),
        (transposed, (M.T.copy(),)),
        (added, (M, M[::-1].copy())),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_runtime_helpers_have_rules(fn, args):
    check_grads(fn, args, modes=("forward", "reverse"))


# --- Jacobians and dense Hessians ---------------------------------------------------------
def vector_field(s, x):
    return np.sin(x) * s + x**2 * x[::-1]


def matrix_map(m):
    return m @ np.array([1.0, 2.0, 3.0]) * m[:, 0]


@pytest.mark.parametrize(
    "fn, args, wrt",
    [
        (vector_field, (0.7, rng.standard_normal(4)), 1),
        (vector_field, (0.7, rng.standard_normal(4)), 0),
        (matrix_map, (rng.standard_normal((2, 3)),), 0),
    ],
    ids=["vector", "scalar-input", "matrix"],
)
def test_jacobians_forward_and_reverse_agree_with_differences(fn, args, wrt):
    forward, reverse = ta.jacfwd(fn, wrt=wrt)(*args), ta.jacrev(fn, wrt=wrt)(*args)
    x = np.asarray(args[wrt], dtype=float)
    out = np.asarray(fn(*args))
    assert forward.shape == out.shape + x.shape
    np.testing.assert_allclose(forward, reverse, rtol=1e-12, atol=1e-12)
    h = 1e-6
    for j in range(x.size):
        e = np.zeros(x.size)
        e[j] = h
        plus, minus = list(args), list(args)
        plus[wrt], minus[wrt] = x + e.reshape(x.shape), x - e.reshape(x.shape)
        column = (np.asarray(fn(*plus)) - np.asarray(fn(*minus))) / (2 * h)
        np.testing.assert_allclose(
            forward.reshape(out.shape + (x.size,))[..., j], column, rtol=1e-5, atol=1e-7
        )


def test_hessian_of_rosenbrock_is_symmetric_and_analytic():
    x = rng.standard_normal(5)
    hess = ta.hessian(rosenbrock)(x)
    columns = np.stack([rosenbrock_hess_prod(x, e) for e in np.eye(5)], axis=1)
    np.testing.assert_allclose(hess, columns, rtol=1e-10)
    np.testing.assert_allclose(hess, hess.T, rtol=1e-12)


# --- the rule table at second order (forward over reverse) --------------------------------
def _smooth_cases():
    """The rule table's cases, where the function is smooth at its arguments: no ties
    between entries (max, sort, ...) and no infinities."""
    from ..rules import test_numpy_rules as table

    out = []
    for c in table.RULE_TEST_CASES:
        if c.marks:  # not in this NumPy
            continue
        fn, args, name = c.values
        arrays = [np.asarray(a) for a in args if isinstance(a, np.ndarray)]
        if any(not np.all(np.isfinite(a)) or np.unique(a).size < a.size for a in arrays):
            continue
        out.append((fn, args, name))
    return out


SECOND_ORDER = _smooth_cases()


@pytest.fixture(scope="module")
def squared(tmp_path_factory):
    """``case_i(*args) = sum(fn_i(*args) ** 2)`` for each case, in a module on disk."""
    import importlib
    import sys

    directory = tmp_path_factory.mktemp("second_order")
    lines = ["import numpy as np", "from tests.rules.test_numpy_rules import *", ""]
    for i, (fn, args, _) in enumerate(SECOND_ORDER):
        params = ", ".join(f"a{j}" for j in range(len(args)))
        lines.append(
            f"def case_{i}({params}):\n    r = {fn.__name__}({params})\n    return np.sum(r * r)\n"
        )
    (directory / "squared_cases.py").write_text("\n".join(lines))
    sys.path.insert(0, str(directory))
    try:
        yield importlib.import_module("squared_cases")
    finally:
        sys.path.remove(str(directory))


def test_the_rule_table_at_second_order(squared):
    """Each case's Hessian-vector product is right (differences of the gradient, reverse
    over reverse, symmetry) or refused clearly; most are derived (the runtime helpers of a
    reverse rule without rules of their own are derived from their source)."""
    derived = 0
    for i, (fn, args, name) in enumerate(SECOND_ORDER):
        f = getattr(squared, f"case_{i}")
        value = f(*[copy.deepcopy(a) for a in args])
        if np.ndim(value) != 0:
            continue  # a tuple result: not a scalar function of its own
        try:
            check_grads(f, args, order=2)
        except TangentAstError:
            continue
        derived += 1
    assert derived >= 285, derived  # 293 of 295 derived when last measured


def squared_sine(x):
    return np.sin(x) ** 2


def calls_a_helper(x):
    return np.sum(squared_sine(x) * x)


def test_show_prints_the_module_of_hvp():
    source = ta.show(ta.hvp(rosenbrock), args=(np.ones(3), np.ones(3)))
    assert "def rosenbrock_hvp(x, dx):" in source  # one function: the gradient's tangent
    # where the product calls other generated modules, they follow it, each once
    source = ta.show(ta.hvp(calls_a_helper), args=(np.ones(3), np.ones(3)))
    assert source.count("def calls_a_helper_hvp(") == 1
    assert source.count("def squared_sine_fwd_jvp(") == 1
    with pytest.raises(TangentAstError, match="shows the module of its forward rule"):
        ta.show(ta.hvp(rosenbrock), stage="ssa", args=(np.ones(3), np.ones(3)))


def stack_times_matrix(a, b):
    return np.sum((a @ b) ** 2)


def matrix_dot_vector(a, v):
    return np.sum(np.dot(a, v) ** 3)


def vector_times_stack(v, a):
    return np.sum((v @ a) ** 2)


@pytest.mark.parametrize(
    "fn, args",
    [
        (stack_times_matrix, (rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 2)))),
        (matrix_dot_vector, (rng.standard_normal((3, 4)), rng.standard_normal(4))),
        (vector_times_stack, (rng.standard_normal(3), rng.standard_normal((2, 3, 4)))),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
@pytest.mark.parametrize("wrt", [0, 1])
def test_products_at_second_order(fn, args, wrt):
    check_grads(fn, args, wrt=(wrt,), order=2)


# --- nesting: grad of grad, and tangent_ast's API called inside differentiated code --------
def quintic_sine(x):
    return np.sin(x) * x**3


def cubes(x):
    return np.sum(x**3)


def calls_grad(x):
    d = ta.grad(cubes)(x)
    return np.sum(d * d)


def norms(x):
    return np.linalg.norm(x) ** 3 + np.sum(np.linalg.norm(x, 3, axis=1)) + np.linalg.norm(x, "nuc")


def array_api_norms(x):
    return np.sum(np.linalg.vector_norm(x, axis=0) ** 3) + np.linalg.matrix_norm(x, ord=2)


def nan_moments(x):
    return np.nanstd(x) * np.nanvar(x, axis=0)[1]


@pytest.mark.parametrize("fn", [norms, array_api_norms, nan_moments])
def test_norms_and_nan_moments_at_second_order(fn):
    """Their runtime helpers are derived again: the norm's axes and the mask of NaNs are
    computed from x's rank and NaN-ness alone, so no derivative reaches them."""
    check_grads(fn, (M,), order=2)


def phase_of_a_complex_number(x):
    return np.angle(x * 1j + 0.5) * x


def test_hvp_through_a_complex_number_saved_for_its_shape():
    """The forward rule of a reverse rule that saves a complex Python number for its shape
    gives it the zero tangent 0j (zero_tangent took it for a record: a TypeError)."""
    check_grads(phase_of_a_complex_number, (0.7,), order=2)


def test_grad_of_grad():
    x = 0.7
    expected = -np.sin(x) * x**3 + 6 * np.cos(x) * x**2 + 6 * x * np.sin(x)
    assert ta.grad(ta.grad(quintic_sine))(x) == pytest.approx(expected)
    assert ta.jvp(ta.grad(quintic_sine), (x,), (1.0,))[1] == pytest.approx(expected)


def test_a_call_of_grad_inside_differentiated_code():
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(ta.grad(calls_grad)(x), 36 * x**3)
    check_grads(calls_grad, (x,), modes=("forward", "reverse"))


def sine_weighted(x):
    return np.sum(np.sin(x) * x**2)


# (made in the tests, not at import: a session made while tests are collected would
# use the default cache directory, not the test run's own)
def test_value_and_grad_differentiated_again():
    x = np.array([0.3, 0.9, -0.4])
    v = np.array([1.0, -0.5, 2.0])
    value_and_gradient = ta.value_and_grad(sine_weighted)
    (value, gradient), (dvalue, dgradient) = ta.jvp(value_and_gradient, (x,), (v,))
    assert dvalue == pytest.approx(np.dot(ta.grad(sine_weighted)(x), v))
    np.testing.assert_allclose(dgradient, ta.hvp(sine_weighted)(x, v))


def test_third_derivatives_by_differentiating_hvp():
    product = ta.hvp(sine_weighted)
    x, v = np.array([0.3, 0.9, -0.4]), np.array([1.0, -0.5, 2.0])
    gradient = ta.grad(lambda y: np.sum(product(y, v) ** 2))(x)
    h = 1e-5
    numeric = [
        (np.sum(product(x + h * e, v) ** 2) - np.sum(product(x - h * e, v) ** 2)) / (2 * h)
        for e in np.eye(3)
    ]
    np.testing.assert_allclose(gradient, numeric, rtol=1e-5, atol=1e-7)


def sine_times(x, y):
    return np.sin(x) * y


DIRECTION = np.array([1.0, 0.5, -2.0])


def calls_jvp(x):
    out, d = ta.jvp(sine_times, (x, 2.0), (DIRECTION, None))
    return np.sum(out * d)


def calls_hvp(x):
    return np.sum(ta.hvp(sine_weighted)(x, DIRECTION) ** 2)


def calls_value_and_grad(x):
    value, gradient = ta.value_and_grad(sine_weighted)(x)
    return value * np.sum(gradient)


@pytest.mark.parametrize("fn", [calls_jvp, calls_hvp, calls_value_and_grad])
def test_the_api_called_inside_differentiated_code(fn):
    check_grads(fn, (np.array([0.3, 0.9, -0.4]),), modes=("forward", "reverse"))


def calls_jvp_of_a_nested_break(x):
    out, d = ta.jvp(jumps.break_at_depth_two, (x,), (1.0,))
    return out * d


@pytest.mark.parametrize("route", ["direct", "transpose"])
def test_reverse_rule_of_a_forward_rule_with_a_nested_break(route):
    """The forward rule tangent_ast emits for a break two ``if`` levels down has that shape
    itself (and a loop header's copies in every branch that falls through): grad of a
    function calling it went through the same lowering, and once gave 0.0 for 5.0."""
    check_grads(calls_jvp_of_a_nested_break, (0.7,), modes=("forward", "reverse"), route=route)
    assert ta.grad(calls_jvp_of_a_nested_break, route=route)(0.7) == pytest.approx(25.0)


def _halves(p):
    return p * 0.5, p * 0.5


def returns_from_a_loop_a_value_of_unknown_kind(a):
    # sum of a user function's tuple: a kind not known, so the reverse rule reads the
    # result's value for its zeros, UNSET before the loop sets it
    v = sum(_halves(a)) * 2.0
    i = 0
    while i < 2:
        i = i + 1
        if v > 1.5:
            return v * 2.0
    return v


@pytest.mark.parametrize(
    "fn, args",
    [
        (jumps.set_in_some_iterations, (np.array([0.3, -1.2, 0.8]),)),
        (jumps.break_out_of_nested_loops, (np.array([0.5, 0.4, 0.3]),)),
        (jumps.return_from_inner_loop, (0.45,)),
        (returns_from_a_loop_a_value_of_unknown_kind, (0.996,)),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_second_derivatives_through_values_a_loop_has_not_set_yet(fn, args):
    """Derived code holds runtime.UNSET where a loop has not set a name yet; differentiated
    again (reverse over reverse), its cotangents are zeros that add up."""
    check_second_order(fn, args)


def test_jacobians_of_functions_made_by_grad():
    x = np.array([1.0, 2.0, -0.5])
    np.testing.assert_allclose(ta.jacfwd(ta.grad(cubes))(x), np.diag(6 * x))
    np.testing.assert_allclose(ta.jacrev(ta.grad(cubes))(x), np.diag(6 * x))


def early_exit_then_loop(a):
    if a > 1.3:
        return a * 2.0
    v = a * 1.0
    for i in range(3):
        v = v * 0.7 + np.sin(v)
    return a + v


def test_reverse_over_reverse_of_a_rule_with_a_loop_in_one_branch():
    """The reverse sweep of early_exit_then_loop has its loop in one branch and sets the
    loop's cotangent to 0.0 in the other; reverse over reverse once lost the loop."""
    for a in (0.9, 1.5):
        check_second_order(early_exit_then_loop, (a,))


def dict_built_twice(b):
    d = {"a": b, "b": b}
    v = d["a"] - d["b"] * 2.0
    d = {"a": b, "b": v * v}
    return np.sum(d["a"] - d["b"] * 2.0)


def test_second_derivatives_through_cotangents_of_dicts():
    """The reverse rule sums cotangents of dicts with add_tangents: differentiated again,
    those sums are dicts too (their kind is the dict's), never added with +."""
    check_second_order(dict_built_twice, (np.array([0.3, -0.2]),))


def slot_then_gram(b, c):
    v1 = b.copy()
    v1[1] = c
    v2 = v1.T @ v1
    return np.sum(v2 * v2)


def test_reverse_over_reverse_of_a_rule_that_restores_a_slot():
    """The reverse rule copies v1 and restores its slot after v1.T is read: differentiated
    again in reverse, v1.T is a view of a copy updated in place later, and is copied when
    taken (every SSA version of an updated array counts), as a user's function's is."""
    b = np.array([[-0.45, -0.57, 1.47], [1.12, 1.41, 0.42], [0.75, -1.46, 0.16]])
    check_grads(slot_then_gram, (b, -0.97), order=2)


def scaled_by_an_int_power(x):
    k = 3**2  # int ** int: a kind not known (2 ** -1 is a float), an int when it runs
    return np.sum(x**2) * k


def scaled_by_an_int_power_in_a_tuple(x):
    p = (2**2, x)
    return np.sum(p[1] ** 3) * p[0]


@pytest.mark.parametrize("fn", [scaled_by_an_int_power, scaled_by_an_int_power_in_a_tuple])
def test_second_derivatives_through_saved_integers_of_unknown_kind(fn):
    """The reverse rule saves ``k`` for its sweep; differentiated again, the tangent of an
    integer of unknown kind is missing, and read as a zero."""
    x = np.array([0.3, 0.5, 0.9])
    check_second_order(fn, (x,))
    expected = {
        scaled_by_an_int_power: 18.0 * np.ones(3),
        scaled_by_an_int_power_in_a_tuple: 24 * x,
    }
    np.testing.assert_allclose(ta.hvp(fn)(x, np.ones(3)), expected[fn])


def wave_sum(p):
    return np.sum(np.sin(p) * p) + 0.5 * np.sum(p * p)


def hessian_product_inside(a):
    return np.sum(ta.hvp(wave_sum)(a, a) * 1.0)


def test_third_derivatives_write_modules_whose_names_fit_a_file_system():
    """Rules of rules of rules have long names: each is kept to a length a file system
    takes (the start and the end of the name, and a digest of it)."""
    a = np.array([[-0.19, 2.50, -0.34], [0.26, -0.07, -0.14], [0.42, -1.02, 0.58]])
    check_second_order(hessian_product_inside, (a,))


def dict_made_after_an_early_return(a, b):
    v = np.std(a)
    if v > 1.3:
        return v * 2.0
    d = {"a": b, "b": b}
    return np.sum(d["a"] - d["b"] * 2.0)


@pytest.mark.parametrize("a", [np.array([-1.5, -1.6, -0.2]), np.array([-1.5, 3.0, 1.0])])
def test_second_derivatives_through_a_container_set_on_one_path(a):
    """The reverse rule holds ``d = None`` on the path that returns early; differentiated
    again, ``d`` is a dict or None, and its cotangents add up as a dict's."""
    check_second_order(dict_made_after_an_early_return, (a, np.array([0.9, -0.3, 0.1, 0.4])))


def variance_of_one_element_on_a_path_not_taken(a):
    total = np.sum(a, keepdims=True)
    v = np.var(total, ddof=1)  # NaN: one element, one degree of freedom taken
    if v > 1.3:
        return v * 2.0
    return np.sum(total)


@pytest.mark.filterwarnings("ignore:Degrees of freedom", "ignore:invalid value encountered")
def test_a_nan_variance_on_a_path_not_taken_gives_no_nan_derivative():
    """np.var's derivative divides by N - ddof; where that is 0 it is 0 (as at the other
    removable singularities), so a path that does not use the NaN variance takes no NaN."""
    a = np.array([0.3, -0.2, 0.9])
    np.testing.assert_allclose(ta.grad(variance_of_one_element_on_a_path_not_taken)(a), 1.0)
    for route in ("direct", "transpose"):
        check_grads(variance_of_one_element_on_a_path_not_taken, (a,), route=route)


def penalized(w, x, *, l2=0.1):
    r = x @ w
    return np.sum(r * r) + l2 * np.sum(w * w)


@pytest.mark.parametrize(
    "fn, args",
    [
        (penalized, (np.array([0.3, -0.2]), np.array([[1.0, 2.0], [0.5, -1.0]]))),
        (lambda x, s=2.0: np.sin(x) * s, (0.7,)),
        (control_flow.assigned_first_in_the_loop, (0.7, 4)),
    ],
    ids=["keyword default", "lambda default", "assigned first in the loop"],
)
def test_reverse_over_reverse_of_defaults_and_values_not_set_yet(fn, args):
    """vjp of grad(f) where f has defaults the call leaves out (the gradient takes them too),
    and where a loop's first iteration sets a value it tapes (UNSET, whose zero is 0.0)."""
    check_second_order(fn, args, wrt=0)


def test_hvp_of_functions_with_star_args_and_defaults():
    """The gradient takes the flattened arguments as plain parameters: hvp of ``*xs`` and of
    a decorated function (a wrapper of ``*args, **kwargs``) is derived, not refused."""
    from ..corpus.language import decorated_helper, norm_of_all

    x = np.array([0.3, -0.5, 0.8])
    np.testing.assert_allclose(ta.hvp(norm_of_all)(x, 2 * x, np.ones(3)), 2 * np.ones(3))
    t = np.tanh(0.4)
    np.testing.assert_allclose(ta.hvp(decorated_helper)(0.4, 1.0), -4 * t * (1 - t**2))


def sorted_times_sine(a, b):
    return np.sum(np.sort(b) * np.sin(a) * a)


def test_hvp_through_sort_crosses_arguments():
    """np.sort's cotangent helper is linear in the cotangent, with a forward rule of its own
    (its source updates an array by np.put_along_axis, refused when derived): the product's
    block of b once came out zero."""
    a, b = np.array([-0.43, 0.12, -1.63]), np.array([-0.08, -1.48, -1.74])
    va, vb = np.array([0.3, 0.1, -0.2]), np.array([1.0, -0.5, 0.25])
    hv = ta.hvp(sorted_times_sine, wrt=(0, 1))(a, b, (va, vb))
    gradient, h = ta.grad(sorted_times_sine, wrt=(0, 1)), 1e-6
    plus, minus = gradient(a + h * va, b + h * vb), gradient(a - h * va, b - h * vb)
    for got, p, m in zip(hv, plus, minus, strict=True):
        np.testing.assert_allclose(got, (p - m) / (2 * h), rtol=1e-5, atol=1e-7)


def filled_in_a_loop(x):
    out = np.zeros(len(x))
    for i in range(len(x)):
        out[i] = np.sin(x[i]) * 2.0
    return np.sum(out * out)


def test_an_item_of_a_range_is_an_index():
    """The reverse sweep runs a loop backwards over range(n)'s items: each is an int, so
    ct_out[i] is an element, not a view of ct_out (refused when derived again)."""
    check_second_order(filled_in_a_loop, (np.array([0.3, -0.5, 0.8]),))


@pytest.mark.parametrize("flag", [1, -1])
def test_full_like_has_its_arguments_kind(flag):
    """np.full_like(y, c) is an array of y's kind: the reverse rule's ct_y = ... +
    np.full_like(y, ct_out) is a vector, and ct_y[0] an element of it, not a view."""
    check_second_order(language.update_in_branch, (0.7, flag), wrt=0)


def test_grad_of_star_args_differentiated_again_is_refused_saying_so():
    from ..corpus.language import decorated_helper, norm_of_all

    x = np.array([0.3, -0.5, 0.8])
    with pytest.raises(TangentAstError, match=r"grad\(norm_of_all\) differentiated again: .*\*xs"):
        ta.vjp(ta.grad(norm_of_all), x, 2 * x, wrt=0)
    with pytest.raises(TangentAstError, match=r"takes \*args, \*\*kwargs.*\n.*hint: ta.hvp"):
        ta.vjp(ta.grad(decorated_helper), 0.4)


def twice_sine(x):
    return np.sin(x) * 2.0


def applied_twice(f, x, y):
    a = f(x)
    b = f(a * y)
    return a + b


@pytest.mark.parametrize("wrt", [(1,), (1, 2)])
def test_second_derivatives_through_a_function_value(wrt):
    """A reverse rule calls a function passed in through function_values' helpers; derived
    again, a call of one of them is a function value's call in turn (its rule derived when it
    runs): hvp and reverse over reverse agree with differences of the gradient."""
    check_second_order(applied_twice, (twice_sine, 0.5, 1.5), wrt=wrt)
    text = ta.show(ta.hvp(applied_twice, wrt=1), args=(twice_sine, 0.5, 1.5, 1.0))
    assert "function_values.call_jvp(function_values.call_fwd, (2,), f, (0,), x, dx)" in text
    assert text.count("import") == 2, text  # function_values once, runtime once


def test_third_derivatives_through_a_function_value_are_refused():
    product = ta.hvp(applied_twice, wrt=1)

    def third(x):
        return product(twice_sine, x, 1.5, 1.0)

    with pytest.raises(TangentAstError, match="a third derivative through a function value"):
        ta.grad(third)(0.5)


@pytest.mark.parametrize(
    "fn, args",
    [
        (language.scales_list_argument, ([0.5, -1.0, 2.0], 1.5)),
        (language.appends_to_list_argument, ([0.5, 2.0], 0.7)),
        (language.appends_to_list_argument_only, ([0.5, 2.0], 0.7)),
    ],
)
def test_second_derivatives_of_list_arguments_written_back(fn, args):
    """A reverse rule writes a list argument back (runtime.write_list): derived again, that
    is the derived function's own write-back. The direction is left as it is, and the
    cotangent of the list has the length it was given."""
    try:
        check_second_order(fn, args, wrt=(0, 1))
    except TangentAstError as refusal:
        # the transpose route's reverse rule reads the argument it wrote back (for
        # list_vjp): derived again, that write is refused, clearly
        if os.environ.get("TANGENT_AST_ROUTE") != "transpose":
            raise
        assert "write_list for its effect" in str(refusal)
        return
    direction = ([0.3] * len(args[0]), 0.4)
    ta.hvp(fn, wrt=(0, 1))(list(args[0]), args[1], direction)
    assert direction == ([0.3] * len(args[0]), 0.4)


def checkpointed_steps(a, s):
    v = a * 1.0
    for i in ta.checkpointed(range(9), snapshots=4):
        v = v * 0.7 + np.sin(v) * (i + 1.0) * s
    return np.sum(v)


def test_reverse_over_reverse_of_a_checkpointed_loop():
    """The reverse sweep of a checkpointed loop keeps its snapshots in a list it pops from and
    appends to (runtime.without, +): a list still, so derived again its cotangents are added
    item by item, not concatenated (found by second-order fuzzing)."""
    check_second_order(checkpointed_steps, (np.array([0.3, -0.5, 0.8]), 0.4), wrt=(0, 1))


def split_and_read(x, w):
    a, b = np.split(x * w, [1])
    return np.sum(a**2) + np.sum(np.sin(b))


def concatenated(x, w):
    return np.sum(np.concatenate([x * w, np.sin(x)]) ** 2)


def unstacked_rows(x, w):
    rows = np.unstack(np.outer(x, x) * w)
    return np.sum(rows[0] * rows[1])


@pytest.mark.parametrize(
    "fn",
    [
        split_and_read,
        concatenated,
        unstacked_rows,
        language.stack_comprehension,
        language.norm_of_a_list,
        language.tuple_of_an_array,
        language.pops_and_inserts,
        language.pops_from_a_dict,
        language.update_rows,
        control_flow.loop_name_bound_on_one_path_then_reused_in_a_branch,
        control_flow.loop_in_one_branch_same_name_in_other,
    ],
)
def test_reverse_over_reverse_of_joins_splits_and_lists(fn):
    """Reverse rules that join or split arrays (their cotangent helpers are each other's
    transposes), read a list's items (a tape's items are of one kind: an index read from
    one is an int), or update a cotangent bound twice in a loop, derived again both ways."""
    case = next((c for c, _ in CASES if c.fn is fn), None)
    args = case.args if case is not None else (np.array([0.3, -0.5, 0.8]), 0.7)
    args = tuple(copy.deepcopy(a) for a in args)
    floats = tuple(
        i for i, a in enumerate(args) if isinstance(a, float) or getattr(a, "dtype", None) == float
    )
    check_second_order(fn, args, wrt=floats)


def make_wave(c):
    def wave_c(p):
        return c * np.sum(np.sin(p) * p)

    return wave_c


def scaled_wave(p, scale=1.0):
    return scale * np.sum(np.sin(p) * p)


def test_closures_and_partials_of_one_function_each_get_their_own_second_derivatives():
    """Closures of one def share their rules' modules, each loaded with its own values: the
    modules built on those rules (the gradient, the Hessian-vector product) are each
    closure's own too (the second closure once got the first one's products)."""
    import functools

    x, v = np.array([0.3, 0.7]), np.array([1.0, -0.5])
    for _ in range(2):
        for c in (1.0, 10.0, 3.0):
            for f in (make_wave(c), functools.partial(scaled_wave, scale=c)):
                hessian = np.diag(c * (2 * np.cos(x) - x * np.sin(x)))
                np.testing.assert_allclose(ta.hvp(f)(x, v), hessian @ v)
                np.testing.assert_allclose(ta.hessian(f)(x), hessian)
                np.testing.assert_allclose(ta.jacfwd(ta.grad(f))(x), hessian)


WAVE_A, WAVE_B = make_wave(0.5), make_wave(1.5)


def hvp_of_closures_inside(a, b):
    return np.sum(ta.hvp(WAVE_A)(a, b) + ta.hvp(WAVE_B)(a, b) * 2.0)


def gradients_of_closures_of_a_sum(a, ys):
    v = sum(ys) * a  # of a kind not known when derived: the rules are derived for any value
    return ta.grad(WAVE_B)(v) + 10.0 * ta.grad(WAVE_A)(v)


def test_gradients_of_two_closures_inside_keep_their_own_values():
    """The modules made on each closure's gradient are loaded again while the derivation of
    the outer function finds their sources; each keeps its closure's rule functions (the
    second closure's loaded since had replaced them: f's value, jvp and grad all silently
    the first closure's)."""
    args = (0.84, [0.3, 0.5])
    check_grads(gradients_of_closures_of_a_sum, args, wrt=(0,))
    value, _ = ta.jvp(gradients_of_closures_of_a_sum, args, (1.0, [0.0, 0.0]))
    assert value == pytest.approx(gradients_of_closures_of_a_sum(*args))


def jvps_of_closures(v, w):
    wa, twa = ta.jvp(WAVE_A, (v,), (w,))
    return twa * ta.jvp(WAVE_B, (w,), (v,))[1] + wa


def vjps_of_closures(v, w):
    wb, pullback_b = ta.vjp(WAVE_B, v)
    wa, pullback_a = ta.vjp(WAVE_A, w)
    return pullback_b(wa) + pullback_a(1.0) * wb


def linear_maps_of_closures(v, w):
    wa, wave_a_jvp = ta.linearize(WAVE_A, v)
    wb, wave_b_jvp = ta.linearize(WAVE_B, w)
    return wave_a_jvp(w) * wb + wave_b_jvp(v)


def jvps_of_closures_of_a_sum(a, ys):
    v = sum(ys) * a  # of a kind not known when derived
    return jvps_of_closures(v, v * 0.5)


@pytest.mark.parametrize(
    "fn, args",
    [
        (jvps_of_closures, (0.84, 0.3)),
        (jvps_of_closures, (np.array([0.84, 0.2]), np.array([0.3, -0.5]))),
        (vjps_of_closures, (0.84, 0.3)),
        (vjps_of_closures, (np.array([0.84, 0.2]), np.array([0.3, -0.5]))),
        (linear_maps_of_closures, (0.84, 0.3)),
        (jvps_of_closures_of_a_sum, (0.84, [0.3, 0.5])),
    ],
    ids=["jvp", "jvp arrays", "vjp", "vjp arrays", "linearize", "jvp unknown kind"],
)
def test_jvp_vjp_and_linearize_of_two_closures_inside_keep_their_own_values(fn, args):
    """The rules of jvp_of_WAVE_A and jvp_of_WAVE_B (forward rules of two closures' rules,
    of one def) are each that closure's: named by its values and loaded with its cells (they
    shared one module, loaded with one closure's cells: the value, jvp and grad of f were
    computed with it)."""
    wrt = tuple(i for i, a in enumerate(args) if not isinstance(a, list))
    check_grads(fn, args, wrt=wrt)
    tangents = tuple(np.ones_like(a) if not isinstance(a, list) else [0.0] * len(a) for a in args)
    value, _ = ta.jvp(fn, args, tangents)
    np.testing.assert_allclose(value, fn(*args))


def test_hvp_of_a_closure_inside_a_differentiated_function_is_refused():
    a = np.array([0.3, 0.7])
    with pytest.raises(TangentAstError, match="of a closure or a functools.partial"):
        ta.grad(hvp_of_closures_inside)(a, a)


def make_norm(ord):
    def norm_of(x):
        return np.linalg.norm(x, ord=ord)

    return norm_of


@pytest.mark.parametrize("order", [2, 3])
def test_a_closure_cell_named_as_a_builtin_is_the_cell(order):
    """A closure's cell named ord (a builtin's name) is the value the loader binds, not the
    builtin: the gradient written out as one function must not read builtins.ord."""
    check_second_order(make_norm(order), (np.array([0.5, -1.2, 0.3, 2.0, -0.7, 1.1]),))


COMPLEX_WEIGHT = 0.3 - 0.8j


def phase(z): return np.angle(z)
def modulus_squared(z): return np.abs(z) ** 2
def real_of_square(z): return np.real(z * z)
def real_of_cube_times_conj(z): return np.real(np.conj(z) * z * z)


@pytest.mark.parametrize("inner", [phase, modulus_squared, real_of_square, real_of_cube_times_conj])
def test_second_derivatives_of_a_complex_gradient_taken_inside(inner):
    """``Re(w * grad(inner)(z))`` at a complex ``z``: reverse over reverse derives the reverse
    rule of a reverse rule whose cotangent argument's kind its caller could not tell; it is
    taken as possibly complex, never as real (its real part alone gave a wrong product for
    the phase), and real_like, which such rules call, has rules of its own."""

    def contracted(z):
        return np.real(COMPLEX_WEIGHT * ta.grad(inner)(z))

    contracted.__qualname__ = f"contracted_{inner.__name__}"
    check_second_order(contracted, (0.42 + 0.73j,))


def elementwise_tanh(x): return np.tanh(x)
def sum_of_its_gradient(x): return np.sum(ta.grad(elementwise_tanh)(x))


@pytest.mark.parametrize(
    "second",
    [
        lambda x: ta.hvp(elementwise_tanh)(x, np.ones_like(x)),
        lambda x: ta.hessian(elementwise_tanh)(x),
        lambda x: ta.jacfwd(ta.grad(elementwise_tanh))(x),
        lambda x: ta.jacrev(ta.grad(elementwise_tanh))(x),
        lambda x: ta.jvp(ta.grad(elementwise_tanh), (x,), (np.ones_like(x),)),
        lambda x: ta.grad(sum_of_its_gradient)(x),
    ],
    ids=["hvp", "hessian", "jacfwd(grad)", "jacrev(grad)", "jvp(grad)", "grad inside"],
)
def test_second_derivatives_of_a_function_returning_an_array_are_refused(second):
    """As grad refuses it: the gradient built for a second derivative started its sweep from
    1.0, which broadcast into the derivatives of the sum of the outputs (a diagonal matrix
    for the Hessian of tanh)."""
    with pytest.raises(ta.NonScalarOutputError, match="returns array1f"):
        second(np.array([0.5, 1.0]))


def inner_loop_in_a_branch(a):
    v = a * 1.0
    acc = 0.0
    for i in range(2):
        v = np.cos(v) * v
        if i > 0:
            v = v - 0.1 * np.tanh(v)
        else:
            for j in range(1):
                acc = np.sum(v)
    return np.sum(v) + acc


def test_a_nested_reverse_loop_keeps_the_value_read_after_it():
    """Reverse over reverse (verified fuzzing, seed 150280): the gradient's reverse loop
    over ``for j`` restores its cotangent by its own name, which the outer reverse body read
    again after the branch (an accumulation from the inner loop's last value): it got the
    first iteration's value (2.78 became 3.32)."""
    check_second_order(inner_loop_in_a_branch, (np.array([2.03, -0.22, 0.79, 0.93]),))


def grows_its_list(a, b, ys):
    ys.append(1.0)
    if ys[1] + ys[2] * 0.5 > 0.2:
        b = np.clip(b, a_min=-0.8, a_max=0.9)
    _, tangent = ta.jvp(WAVE_A, (a,), (b,))
    return np.sum(b) + tangent


def test_hvp_leaves_a_direction_for_a_list_it_grows_as_it_was():
    """The tangent of a list f appends to grows with it: hvp's own copy, not the caller's
    direction (which then had an item more, and check_second_order failed inside)."""
    direction = [0.5, -1.0, 0.25]
    a, b, ys = np.array([0.02, 1.07, -0.29]), np.array([0.12, -2.23, -0.15]), [-0.2, 0.9, 1.05]
    ta.hvp(grows_its_list, wrt=(0, 1, 2))(a, b, list(ys), (np.ones(3), np.ones(3), direction))
    assert direction == [0.5, -1.0, 0.25]
    check_second_order(grows_its_list, (a, b, ys))


def modulus_squared_of(z): return np.abs(z) ** 2
def gradient_of_a_sum_made_complex(a, ys):
    v = sum(ys) * a  # of a kind not known: so is v * (1 + 1j), the callee's parameter
    return ta.grad(modulus_squared_of)(v * (1 + 1j)).real


def test_a_callee_derived_for_a_kind_not_known_takes_complex_values():
    """modulus_squared_of's rule, derived for a parameter of a kind not known, ran np.abs's
    real rule (np.sign) on a complex value: jvp and grad gave -1.6 for 1.6. The complex rule
    holds for both."""
    check_grads(gradient_of_a_sum_made_complex, (0.7, [0.3, 0.5]), wrt=(0,))
    check_second_order(gradient_of_a_sum_made_complex, (0.7, [0.3, 0.5]), wrt=(0,))


def _power_spectrum(x):
    return np.sum(np.abs(np.fft.fft(x)) ** 2)


def test_second_derivatives_through_the_complex_cotangents_of_the_fft():
    # the helpers take the real part of a cotangent for a real argument with real_like, not
    # an if on the type, whose two paths' kinds the transformer cannot join
    check_second_order(_power_spectrum, (np.array([0.3, -0.7, 1.1, 0.5]),))


_X34 = rng.standard_normal((3, 4))
_SPECTRUM = np.fft.rfftn(_X34)


@pytest.mark.parametrize(
    "fn, arg",
    [
        (lambda v: np.fft.fftn(v, s=(5, 3), axes=(0, 1)), _X34),
        (lambda v: np.fft.ifftn(v, axes=(0,)), _X34),
        (lambda v: np.fft.fft2(v, norm="ortho"), _X34),
        (lambda v: np.fft.rfftn(v, s=(2, 6), axes=(0, 1), norm="ortho"), _X34),
        (lambda v: np.fft.rfft(v, n=3, axis=0), _X34),
        (lambda v: np.fft.irfftn(v, s=(3, 4), axes=(0, 1), norm="forward"), _SPECTRUM),
        (lambda v: np.fft.irfft2(v), _SPECTRUM),
        (lambda v: np.fft.irfft(v, n=7), _SPECTRUM),
    ],
    ids=["fftn-s", "ifftn-axes", "fft2", "rfftn-s", "rfft-n", "irfftn-s", "irfft2", "irfft-n"],
)
def test_second_derivatives_of_the_transforms(fn, arg):
    """The rules of np.fft, derived again: their helpers are in the language derived (the
    axes of a transform were taken for values of the array, a norm's scale read from a
    dict keyed by None, a cut-and-pad carried through a loop of unknown kind)."""
    check_grads(fn, (arg,), order=2)


def _rows_of_sines(x):
    return np.sum(np.sin(x), axis=1)


def _sum_of_the_gradient(x):
    return np.sum(ta.grad(_rows_of_sines)(x))


def test_the_gradient_of_a_one_element_output_reduced_along_an_axis_derived_again():
    # the gradient seeds a one-element output with 1.0, which sum's rule spreads back
    # along axis 1 of a (1, 3) array: a number, not an array with that axis
    x = np.array([[0.3, -0.7, 1.1]])
    for route in (None, "transpose"):
        kw = {"route": route} if route else {}
        check_grads(_sum_of_the_gradient, [x], **kw)


def _make_scaled(c, act):
    def scaled(p):
        return act(p) * c

    return scaled


_HALF_SINE = _make_scaled(0.5, np.sin)


def _sets_an_entry_then_calls_a_closure_twice(entries):
    entries["s"] = entries["s"] + np.sum(entries["w"])
    v1 = np.sum(entries["w"]) * entries["s"]
    return _HALF_SINE(v1) + _HALF_SINE(v1)


def test_hvp_leaves_a_dict_direction_as_it_was_given():
    """The tangent of a dict entry the function sets was written into the caller's
    direction (found by the fuzzer at second order: the check then differenced the
    gradient along the changed direction)."""
    entries = {"w": np.array([-1.19, -1.68, 0.1]), "s": 0.87}
    direction = {"w": np.array([1.0, 0.0, 0.0]), "s": 0.5}
    ta.hvp(_sets_an_entry_then_calls_a_closure_twice)(copy.deepcopy(entries), direction)
    assert direction["s"] == 0.5 and direction["w"].tolist() == [1.0, 0.0, 0.0]
    check_grads(_sets_an_entry_then_calls_a_closure_twice, (entries,), order=2)


def _returns_from_a_loop_on_one_branch(x, a):
    if x > 0:
        x = x - a[2]
    else:
        while True:
            return np.cos(sum(t for t in a))
    return x


def _weighs_its_gradient(x, a):
    return np.sum(ta.grad(_returns_from_a_loop_on_one_branch, wrt=1)(x, a) * np.array([0.5, 1.0, 1.5]))


@pytest.mark.parametrize("x", [0.3, -0.3])
def test_a_residual_made_in_a_loop_on_one_branch_is_bound_on_the_other(x):
    """The gradient's forward sweep saves the last value of a loop's array, which the
    branch not taken never binds: it is None there (before, an UnboundLocalError)."""
    check_grads(_weighs_its_gradient, (x, np.array([0.4, -0.8, 0.65])), wrt=1)
