"""The public API: jvp, grad, value_and_grad, vjp, derive, show."""

import importlib
import math
import re
import sys
import textwrap

import numpy as np
import pytest

import tangent_ast as ta

from ..corpus import straight_line as sl


def test_jvp_none_tangent_means_not_differentiated():
    out, tangent = ta.jvp(sl.design_example, (1.0, 2.0), (1.0, None))
    assert out == pytest.approx(2.0 + np.sin(1.0))
    assert tangent == pytest.approx(2.0 + np.cos(1.0))


def test_grad_single_and_tuple_wrt():
    assert ta.grad(sl.design_example)(1.0, 2.0) == pytest.approx(2.0 + np.cos(1.0))
    gx, gy = ta.grad(sl.design_example, wrt=("x", "y"))(1.0, 2.0)
    assert (gx, gy) == pytest.approx((2.0 + np.cos(1.0), 1.0))
    assert ta.grad(sl.design_example, wrt=1)(1.0, 2.0) == pytest.approx(1.0)


def test_a_tuple_wrt_of_one_gives_a_tuple_of_one():
    """As JAX's argnums=(0,) and autograd's argnum=[0]: indexing it [0] gives the gradient,
    not the gradient's first entry."""
    f = sl.design_example
    gx = 2.0 + np.cos(1.0)
    assert ta.grad(f, wrt=(0,))(1.0, 2.0) == pytest.approx((gx,))
    assert ta.grad(f, wrt=["y"])(1.0, 2.0) == pytest.approx((1.0,))
    value, grads = ta.value_and_grad(f, wrt=(0,))(1.0, 2.0)
    assert value == pytest.approx(f(1.0, 2.0)) and grads == pytest.approx((gx,))
    _, pullback = ta.vjp(f, 1.0, 2.0, wrt=(0,))
    assert pullback(2.0) == pytest.approx((2 * gx,))
    x, v = np.linspace(0.1, 1.0, 4), np.ones(4)
    (hv,) = ta.hvp(sl.np_elementwise, wrt=(0,))(x, (v,))
    np.testing.assert_allclose(hv, ta.hvp(sl.np_elementwise)(x, v))
    (rows,) = ta.hvp(sl.np_elementwise, wrt=(0,))(x, (np.eye(4),), batched=True)
    np.testing.assert_allclose(rows[0], ta.hvp(sl.np_elementwise)(x, np.eye(4)[0]))
    with pytest.raises(ta.TangentAstError, match=r"tuple of one (.|\n)*hint: give wrt=0"):
        ta.hvp(ta.grad(f, wrt=(0,)))(1.0, 2.0, 1.0)


def test_value_and_grad():
    value, g = ta.value_and_grad(sl.poly)(2.0)
    assert value == pytest.approx(sl.poly(2.0))
    assert g == pytest.approx(9 * 4 - 4 * 2 + 1)


def test_vjp_pullback_can_be_called_twice():
    x = np.linspace(0.1, 1.0, 4)
    out, pullback = ta.vjp(sl.np_elementwise, x)
    first = pullback(1.0)
    second = pullback(1.0)
    np.testing.assert_array_equal(first, second)
    np.testing.assert_allclose(pullback(2.0), 2 * first)


def test_vjp_of_vector_output_takes_any_cotangent():
    x = np.array([0.3, 0.5])
    out, pullback = ta.vjp(sl.vector_like, x)
    ct = np.array([1.0, -2.0])
    np.testing.assert_allclose(pullback(ct), ct * np.cos(x))


def test_generic_rule_without_example_arguments():
    rule = ta.derive(sl.design_example, "reverse", wrt=("x", "y"))
    out, saved = rule.fwd(np.ones(3), 2.0)
    ct_x, ct_y = rule.bwd(saved, np.ones(3))
    np.testing.assert_allclose(ct_x, 2.0 + np.cos(1.0))
    assert np.shape(ct_y) == ()
    assert ct_y == pytest.approx(3.0)


def test_scalar_specialised_rule_has_no_helper_calls():
    """No helpers for shapes; the division of math.sqrt's derivative is safe_divide's (0
    where the root is 0: docs/rules.md, "Where a derivative divides by zero")."""
    source = ta.derive(sl.math_chain, "reverse", args=(0.8,)).source
    assert set(re.findall(r"runtime\.(\w+)", source)) == {"safe_divide"}


def test_show_every_stage():
    for stage in ("parse", "normalize", "ssa", "forward", "simplify", "module"):
        assert "def " in ta.show(sl.quotient, wrt=("x", "y"), stage=stage)
    assert "_bwd" in ta.show(sl.quotient, stage="reverse")


def test_derive_twice_is_byte_identical(tmp_path):
    first = ta.derive(sl.logistic, "reverse", args=(np.ones(2), np.ones((3, 2)), np.ones(3)),
                      cache=tmp_path / "a").source
    second = ta.derive(sl.logistic, "reverse", args=(np.ones(2), np.ones((3, 2)), np.ones(3)),
                       cache=tmp_path / "b").source
    assert first == second


def test_rules_used_are_recorded():
    rule = ta.derive(sl.np_trig, "reverse", args=(np.ones(3),), cache=None)
    assert {"numpy.sin", "numpy.cos", "numpy.arctan", "numpy.sum"} <= rule.rules_used


def make_scaled_sine(scale):
    def scaled_sine(x):
        return np.sin(x) * scale
    return scaled_sine


def test_closures_of_one_function_each_keep_their_captured_values():
    """They share a module file (same code) but not its bindings: each gets its own module object."""
    double, triple = make_scaled_sine(2.0), make_scaled_sine(3.0)
    assert np.isclose(ta.grad(double)(0.5), 2.0 * np.cos(0.5))
    assert np.isclose(ta.grad(triple)(0.5), 3.0 * np.cos(0.5))
    assert np.isclose(ta.grad(double)(0.5), 2.0 * np.cos(0.5))


def test_arguments_updated_in_place_are_left_as_the_function_leaves_them():
    def scale_first(x, y):
        x[0] = x[0] * y
        return np.sum(x * x)

    x = np.array([1.0, 2.0, 3.0])
    expected = x.copy()
    value = scale_first(expected, 2.0)
    gx, gy = ta.grad(scale_first, (0, 1))(x, 2.0)
    assert np.array_equal(x, expected)  # as the function left it, after the reverse sweep too
    assert np.allclose(gx, [8.0, 4.0, 6.0]) and np.isclose(gy, 4.0) and np.isclose(value, 17.0)
    dx = np.array([1.0, 0.0, 0.0])
    x = np.array([1.0, 2.0, 3.0])
    out, dout = ta.jvp(scale_first, (x, 2.0), (dx, 0.0))
    assert np.allclose(dx, [2.0, 0.0, 0.0])  # the tangent is updated alongside x
    assert np.isclose(dout, 8.0)
    with pytest.raises(ta.TangentAstError, match="shares memory with argument 'y'"):
        ta.grad(sets_first_from_second, (0, 1))(x, x)


def test_list_arguments_changed_in_place_are_written_back_with_their_tangents():
    def scale_and_extend(xs, s):
        xs[0] = xs[0] * s
        xs.append(s)
        return xs[0] + xs[1]

    xs = [1.0, 2.0]
    value, grads = ta.value_and_grad(scale_and_extend, (0, 1))(xs, 3.0)
    assert xs == [3.0, 2.0, 3.0] and np.isclose(value, 5.0)
    assert np.allclose(grads[0], [3.0, 1.0]) and np.isclose(grads[1], 1.0)
    xs, dxs = [1.0, 2.0], [1.0, 0.0]
    ta.jvp(scale_and_extend, (xs, 3.0), (dxs, 1.0))
    assert xs == [3.0, 2.0, 3.0] and dxs == [4.0, 0.0, 1.0]  # d(xs[0] * s) = 1 * 3 + 1 * 1
    assert "# updates-in-place: xs" in ta.derive(scale_and_extend, "reverse", wrt=1, args=([1.0], 3.0)).source

    def pairs(xs, ys):
        xs[0] = ys[0] * 2.0
        return xs[0] * ys[0]

    shared = [1.0, 2.0]
    with pytest.raises(ta.TangentAstError, match="shares memory with argument 'ys'"):
        ta.grad(pairs, (0, 1))(shared, shared)


def sets_first_from_second(x, y):
    x[0] = y[1] * 2.0
    return np.sum(x * y)


def test_a_bound_method_is_refused_with_the_call_to_make_instead():
    class Model:
        def __init__(self, w):
            self.w = w

        def loss(self, x):
            return np.sum(self.w * x)

    model = Model(np.ones(2))
    with pytest.raises(ta.TangentAstError, match="is a bound method") as info:
        ta.grad(model.loss)(np.array([1.0, 2.0]))
    assert "grad(test_a_bound_method_is_refused_with_the_call_to_make_instead.<locals>.Model.loss, wrt=1)" \
        in str(info.value)
    assert np.allclose(ta.grad(Model.loss, wrt=1)(model, np.array([1.0, 2.0])), [1.0, 1.0])


def test_grad_of_a_lambda_written_in_the_call():
    x = np.array([0.3, -1.2, 2.0])
    np.testing.assert_allclose(ta.grad(lambda x: np.sum(x ** 2))(x), 2 * x)
    a, b = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    ga, gb = ta.grad(lambda a, b: np.dot(a, b), wrt=(0, 1))(a, b)
    np.testing.assert_allclose(ga, b)
    np.testing.assert_allclose(gb, a)


def test_check_grads_of_a_lambda():
    from tangent_ast.testing import check_grads

    check_grads(lambda a, b: np.dot(a, b) * np.sin(a[0]), (np.array([0.4, 1.1]), np.array([2.0, -0.5])))


def test_two_lambdas_on_one_line_get_their_own_rules():
    double, triple = (lambda x: x * 2.0), (lambda x: x * 3.0)
    assert (ta.grad(double)(1.0), ta.grad(triple)(1.0)) == (2.0, 3.0)
    assert ta.derive(double, args=(1.0,)).path != ta.derive(triple, args=(1.0,)).path


def test_the_pullback_of_a_namedtuple_result_takes_the_record():
    from ..corpus.language import Pair

    def make_pair(x):
        return Pair(x * 2.0, np.sin(x))

    out, pullback = ta.vjp(make_pair, 0.3)
    assert pullback(Pair(1.0, 1.0)) == pytest.approx(2.0 + np.cos(0.3))
    assert pullback((1.0, None)) == pytest.approx(2.0)


def _private_loss(x):
    return x * x


def loss_(x):
    return x * 3.0


def test_names_with_leading_or_trailing_underscores_keep_them():
    assert ta.grad(_private_loss)(2.0) == 4.0
    assert ta.grad(loss_)(2.0) == 3.0
    assert ta.jvp(loss_, (2.0,), (1.0,)) == (6.0, 3.0)


def test_a_swap_reads_both_values_before_assigning():
    def swap_difference(x, y):
        x, y = y, x
        return x - y

    value, gradient = ta.value_and_grad(swap_difference, wrt=(0, 1))(1.0, 2.0)
    assert value == 1.0 and gradient == (-1.0, 1.0)


def test_notebooks_show_generated_code_highlighted():
    text = ta.show(sl.np_trig, "reverse", args=(np.ones(3),))
    assert isinstance(text, str) and text.startswith('"""Reverse rule')
    html = text._repr_html_()
    assert "<pre" in html and "np_trig_bwd" in html
    rule = ta.derive(sl.np_trig, "reverse", args=(np.ones(3),))
    assert "np_trig_fwd" in rule._repr_html_()


# One grad object keeps a rule for each kind of arguments it is called with, found from
# a cheap key of the arguments: calls that alternate kinds must each get the rule of
# their own kinds, and a program changed between two calls must be derived again.


def scaled_square_sum(x, scale):
    return np.sum(x * x) * scale


def test_one_grad_object_called_with_arguments_of_alternating_kinds():
    df = ta.grad(scaled_square_sum)
    vg = ta.value_and_grad(scaled_square_sum)
    calls = [
        (1.5, 2.0),  # Python floats: looked up by their types
        (1.5, 2),  # an int scale: another signature
        (1.5, True),
        (np.float64(1.5), 2.0),
        (np.array(1.5), 2.0),  # arrays of ndim 0, 1, 2: looked up by ndim and dtype
        (np.array([1.0, -2.0]), 3),
        (np.array([[1.0], [2.0]]), 0.5),
        (np.array([1.0, -2.0], dtype=np.float32), 2.0),
        (1.5, 2.0),  # the first kinds again: their rule is found, not another's
        (np.array([1.0, -2.0]), 3),
        (1.5, 2),
    ]
    for _ in range(2):
        for x, scale in calls:
            want = 2 * np.asarray(x) * scale
            gradient = df(x, scale)
            assert np.shape(gradient) == np.shape(x)
            np.testing.assert_allclose(gradient, want, rtol=1e-6)
            value, gradient = vg(x, scale)
            assert value == pytest.approx(np.sum(np.asarray(x) ** 2) * scale, rel=1e-6)
            np.testing.assert_allclose(gradient, want, rtol=1e-6)
        assert type(df(1.5, 2.0)) is float and df(1.5, scale=2.0) == 6.0
        assert df(np.array([1.0, -2.0], dtype=np.float32), 2.0).dtype == np.float32


def summed_product(a, v):
    return np.sum(a @ v)


def energy(x):
    return np.sum(np.abs(x) ** 2)


def test_a_rule_for_arrays_of_one_ndim_or_dtype_is_not_used_for_another():
    # each rule run for the other kinds gives a wrong result: the rule of a @ v for a
    # matrix a returns a matrix for a vector a; the rule of |x|**2 for a real x leaves out
    # the conjugate a complex x needs
    dg = ta.grad(summed_product)
    de = ta.grad(energy)
    v = np.array([1.0, 2.0])
    z = np.array([1.0 + 2.0j, 3.0 - 1.0j])
    for _ in range(2):
        np.testing.assert_array_equal(dg(np.ones((3, 2)), v), np.tile(v, (3, 1)))
        np.testing.assert_array_equal(dg(np.array([3.0, 4.0]), v), v)
        np.testing.assert_array_equal(de(np.array([1.0, -2.0])), [2.0, -4.0])
        np.testing.assert_array_equal(de(z), 2 * np.conj(z))


def test_errors_are_the_same_on_every_call_of_one_grad_object():
    df = ta.grad(sl.poly)
    for _ in range(2):
        assert df(2.0) == 29.0
        with pytest.raises(ta.NotDifferentiableError, match="is int: it has no derivative"):
            df(2)
        with pytest.raises(ta.NonScalarOutputError, match=r"of shape \(2,\)"):
            df(np.array([1.0, 2.0]))
        with pytest.raises(ta.NotDifferentiableError, match="complex number"):
            df(2.0 + 1.0j)

    root = ta.grad(lambda x: math.sqrt(x))
    for _ in range(2):
        assert root(4.0) == 0.25
        with pytest.raises(ValueError, match="math domain error"):
            root(-1.0)  # the function's own error, raised as it is


def test_a_complex_cotangent_of_a_real_input_is_refused_on_every_call():
    df = ta.grad(sl.design_example, wrt=("x", "y"))
    assert df(1.0, 2.0) == pytest.approx((2.0 + np.cos(1.0), 1.0))
    (reverse,) = df._rules.values()
    real_bwd = reverse.bwd
    reverse.bwd = lambda saved, ct: (real_bwd(saved, ct)[0], 1.0 + 0.5j)  # a derivation bug
    for _ in range(2):
        with pytest.raises(ta.TangentAstError, match="complex value reached the gradient"):
            df(1.0, 2.0)
    vector = ta.grad(lambda x: np.sum(np.sin(x)))
    np.testing.assert_allclose(vector(np.zeros(2)), [1.0, 1.0])
    (reverse,) = vector._rules.values()
    reverse.bwd = lambda saved, ct: np.ones(2, dtype=complex)
    with pytest.raises(ta.TangentAstError, match="complex value reached the gradient"):
        vector(np.zeros(2))


CALLEE = """
    import numpy as np

    SCALE = 2.0

    def g(x):
        return x * x

    def f(x):
        return np.sum(g(x)) * SCALE
"""


def test_one_grad_object_derives_again_after_a_callee_is_redefined(tmp_path, monkeypatch):
    from ..cache.test_live import run_cell

    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "api_fast_path_callee.py").write_text(textwrap.dedent(CALLEE))
    importlib.invalidate_caches()
    mod = importlib.import_module("api_fast_path_callee")
    try:
        df, vg = ta.grad(mod.f), ta.value_and_grad(mod.f)
        x = np.array([1.0, 2.0])
        assert df(3.0) == 12.0 and vg(3.0) == (18.0, 12.0)
        np.testing.assert_allclose(df(x), [4.0, 8.0])
        run_cell(mod, "def g(x):\n    return x * x * x\n", 1)  # between two calls
        assert df(3.0) == 54.0 and vg(3.0) == (54.0, 54.0)
        np.testing.assert_allclose(df(x), [6.0, 24.0])
        run_cell(mod, "SCALE = 1.0\n", 2)  # a global it reads, rebound
        assert df(3.0) == 27.0 and vg(3.0) == (27.0, 27.0)
        np.testing.assert_allclose(df(x), [3.0, 12.0])
    finally:
        sys.modules.pop("api_fast_path_callee", None)


def test_one_grad_object_sees_new_defaults_and_class_attributes(tmp_path, monkeypatch):
    """The currency check behind every call (one generated expression of the lookups the
    derivation made) sees a function's defaults rebound and a class attribute it reaches
    rebound or deleted, on scalar and array arguments alike."""
    from ..cache.test_live import run_cell

    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "api_fast_path_class.py").write_text(
        textwrap.dedent("""
            import numpy as np

            class Ops:
                @staticmethod
                def g(x):
                    return x * x

            def f(x, scale=2.0):
                return np.sum(Ops.g(x)) * scale
        """)
    )
    importlib.invalidate_caches()
    mod = importlib.import_module("api_fast_path_class")
    try:
        df = ta.grad(mod.f)
        x = np.array([1.0, 2.0])
        assert df(3.0) == 12.0
        np.testing.assert_allclose(df(x), [4.0, 8.0])
        mod.f.__defaults__ = (1.0,)
        assert df(3.0) == 6.0
        np.testing.assert_allclose(df(x), [2.0, 4.0])
        run_cell(mod, "def cube(x):\n    return x * x * x\nOps.g = staticmethod(cube)\n", 1)
        assert df(3.0) == 27.0
        np.testing.assert_allclose(df(x), [3.0, 12.0])
        del mod.Ops.g  # the rule reaches Ops.g: it is derived again, and f has no Ops.g
        with pytest.raises(AttributeError):
            df(3.0)
    finally:
        sys.modules.pop("api_fast_path_class", None)


def test_one_grad_object_sees_a_closure_cell_emptied():
    def make():
        scale = 2.0

        def h(x):
            return scale * x

        def forget():
            nonlocal scale
            del scale

        return h, forget

    h, forget = make()
    vg = ta.value_and_grad(h)
    assert vg(1.0) == (2.0, 2.0)
    forget()
    # seen as a change: derived again, which finds the name unbound (not a stale gradient)
    with pytest.raises(ta.TangentAstError, match="name 'scale' is not defined"):
        vg(1.0)


def test_the_latest_rule_is_tried_first_only_for_arguments_of_its_key():
    """grad's wrapper runs the rule of its latest call when ``same_kinds`` holds: only for
    arguments whose signature_key is that call's (type, shape and dtype of arrays)."""
    from tangent_ast.api.api import same_kinds
    from tangent_ast.vocabulary.kinds import signature_key

    class Sub(np.ndarray):
        pass

    x, a = np.zeros((2, 3)), 0.5
    same = same_kinds((x, a))
    assert same((np.ones((2, 3)), 1.5))
    others = [
        (np.ones((3, 2)), 1.5),  # another shape
        (np.ones((2, 3), dtype=np.float32), 1.5),  # another dtype
        (np.ones((2, 3)), 1),  # an int for a float
        (np.ones((2, 3)).view(Sub), 1.5),  # a subclass of ndarray
        (np.ones((2, 3)),),  # fewer arguments
        (np.ones((2, 3)), 1.5, 2.0),
    ]
    for args in others:
        assert not same(args)
        assert signature_key(args) != signature_key((x, a))
    assert not same_kinds(([1.0], 2.0))(([1.0], 2.0))  # containers: looked up by their key
    assert same_kinds(())(())

    def f(v, s):
        return np.sum(np.sin(v)) * s

    df = ta.grad(f, wrt=(0, 1))
    for args in [(x, a), (np.ones(4), a), (np.ones(4, dtype=np.float32), a), (x, a)]:
        got = df(*args)
        np.testing.assert_allclose(got[0], np.cos(args[0]) * a, rtol=1e-6)
        assert np.shape(got[0]) == args[0].shape


def test_the_latest_rule_is_not_run_once_what_it_was_derived_against_changed():
    from tangent_ast.api.api import same_kinds
    from tangent_ast.cache.live import dependencies_of

    def outer():
        scale = 2.0

        def f(v):
            return np.sum(v) * scale

        def set_scale(value):
            nonlocal scale
            scale = value

        return f, set_scale

    f, set_scale = outer()
    x = np.ones(3)
    ready = same_kinds((x,), dependencies_of(f))
    assert ready((np.zeros(3),)) and not ready((np.zeros(4),))
    df = ta.grad(f)
    np.testing.assert_allclose(df(x), [2.0, 2.0, 2.0])
    set_scale(3.0)
    assert not ready((x,))
    np.testing.assert_allclose(df(x), [3.0, 3.0, 3.0])


def real_part_sum(z): return np.sum(np.real(z))
def sine_in_double(x): return np.sum(np.sin(x.astype("float64")))


@pytest.mark.parametrize("route", ["direct", "transpose"])
def test_a_gradient_has_its_input_type(route):
    """Complex in, complex out (np.real's cotangent is a real number); a float32 array's
    gradient is float32 whatever precision the function computes in, from grad and vjp."""
    assert type(ta.grad(real_part_sum, route=route)(1j)) is complex
    assert ta.grad(real_part_sum, route=route)(np.array([1j, 2.0])).dtype == np.complex128
    x32 = np.array([0.3, 0.5], dtype=np.float32)
    for gradient in (ta.grad(sine_in_double, route=route)(x32), ta.vjp(sine_in_double, x32)[1](1.0)):
        assert gradient.dtype == np.float32
        np.testing.assert_allclose(gradient, np.cos(x32.astype(np.float64)), rtol=1e-6)
    assert ta.grad(sine_in_double, route=route)(x32.astype(np.float64)).dtype == np.float64


def one_element(x):
    return np.sum(x**2, axis=0, keepdims=True)[:, :1] * 3.0


def test_grad_of_an_array_of_one_element_is_that_elements():
    x = np.arange(6.0).reshape(3, 2)
    value, g = ta.value_and_grad(one_element)(x)
    assert value.shape == (1, 1) and value[0, 0] == 3.0 * np.sum(x[:, 0] ** 2)
    np.testing.assert_array_equal(g, np.stack([6.0 * x[:, 0], np.zeros(3)], axis=1))
