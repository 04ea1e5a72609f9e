"""Verification of rules as they are used: each check is shown to catch the bug it guards
against, planted on purpose (two modes that disagree, a rule that writes into the caller's
array, a rule whose value is not the function's)."""

import numpy as np
import pytest

import tangent_ast as ta
from tangent_ast.api import gradient_checks
from tangent_ast.errors import InternalError
from tangent_ast.testing import GradientCheckError, check_grads


def _straight_through(x):
    return np.round(x)


def _times_rounded(x):
    return _straight_through(x) * x


def test_a_forward_rule_that_reverse_mode_ignores_is_caught(tmp_path):
    """A rule registered for forward mode only (a straight-through estimator): the reverse
    rule must use it too. If it does not, the two modes disagree, and verification says so."""
    ta.defjvp(_straight_through, lambda dx, ans, x: dx)
    value, tangent = ta.jvp(_times_rounded, (1.7,), (1.0,), cache=tmp_path)
    assert tangent == pytest.approx(2.0 + 1.7)
    try:
        gradient = ta.grad(_times_rounded, cache=tmp_path, verify=True)(1.7)
    except InternalError as disagreement:
        assert "dot-product test failed" in str(disagreement)
    else:
        assert gradient == pytest.approx(3.7)


def _plant(rule, which, wrong):
    """Replace ``rule``'s function ``which`` by ``wrong(original)``: a bug in derived code."""
    setattr(rule, which, wrong(getattr(rule, which)))


def _square_sum(w):
    return np.sum(w * w)


@pytest.mark.parametrize("entry", ["grad", "vjp", "derive"])
def test_a_rule_writing_into_the_callers_array_is_caught(entry, tmp_path):
    w = np.array([0.5, -1.0, 2.0])
    rule = ta.derive(_square_sum, "reverse", args=(w,), cache=tmp_path, verify=False)

    def writes(fwd):
        def fwd_writing(w):
            w[0] = 5.0
            return fwd(w)

        return fwd_writing

    _plant(rule, "fwd", writes)
    with pytest.raises(InternalError, match="left argument 0 in a different state"):
        if entry == "grad":
            ta.grad(_square_sum, cache=tmp_path, verify=True)(w.copy())
        elif entry == "vjp":
            ta.vjp(_square_sum, w.copy(), cache=tmp_path, verify=True)
        else:
            ta.derive(_square_sum, "reverse", args=(w.copy(),), cache=tmp_path, verify=True)


def test_a_forward_rule_with_a_wrong_value_is_caught(tmp_path, monkeypatch):
    monkeypatch.setenv("TANGENT_AST_VERIFY", "1")
    w = np.array([0.5, -1.0, 2.0])
    rule = ta.derive(_square_sum, "forward", args=(w,), cache=tmp_path, verify=False)
    _plant(rule, "jvp", lambda jvp: lambda w, dw: (jvp(w, dw)[0] + 1.0, jvp(w, dw)[1]))
    with pytest.raises(InternalError, match="the forward rule of _square_sum computes"):
        ta.jvp(_square_sum, (w,), (np.ones(3),), cache=tmp_path)


def test_each_rule_is_verified_once(tmp_path, monkeypatch):
    checked = []
    original = gradient_checks.check_first_order
    monkeypatch.setattr(
        gradient_checks,
        "check_first_order",
        lambda *a, **k: checked.append(a[0]) or original(*a, **k),
    )
    gradient = ta.grad(_square_sum, cache=tmp_path, verify=True)
    for _ in range(3):
        gradient(np.array([0.5, -1.0, 2.0]))
    assert len(checked) == 1
    off = ta.grad(_square_sum, cache=tmp_path / "other", verify=False)
    off(np.array([0.5, -1.0, 2.0]))  # a new rule, not verified
    assert len(checked) == 1


def doubled(a):
    return a * 2.0


def test_a_reverse_rule_slightly_off_is_caught_at_small_products():
    """<ct, J v> of a random ct and v may be small: the reverse rule is compared relative to
    the products, so a registered rule off by 0.05% (2.001 for 2) fails the check."""
    ta.defvjp(doubled, lambda ct, ans, a: ct * 2.001)
    try:
        # (with TANGENT_AST_VERIFY=1 the first call's verification catches it first)
        with pytest.raises((GradientCheckError, InternalError), match="dot-product test failed"):
            check_grads(doubled, (1.0,), modes=("reverse",))
    finally:
        ta.defvjp(doubled, lambda ct, ans, a: ct * 2.0)


def scaled_sines(a, scale=1.0):
    return np.sum(np.sin(a) * scale)


def test_check_grads_takes_keywords_of_a_primitive_and_at_second_order():
    """check_grads(np.sum, kwargs={"axis": 0}) checks np.sum with its axis (the wrapper of a
    primitive took positional arguments only); at second order the keywords are bound, not
    dropped (the function checked was f without them)."""
    x = np.arange(6.0).reshape(2, 3)
    check_grads(np.sum, (x,), kwargs={"axis": 0})
    plain = check_grads(scaled_sines, (x,), order=2)
    scaled = check_grads(scaled_sines, (x,), kwargs={"scale": 3.0}, order=2)
    np.testing.assert_allclose(scaled[0], 3.0 * plain[0])


def test_check_grads_of_a_gradient_checks_its_rules():
    """grad(f) is checked as the function its source on disk is (it was refused: not a
    Python function)."""
    check_grads(ta.grad(scaled_sines), (np.arange(6.0).reshape(2, 3),))


def rounded_cube(x):
    return x**3


# a forward rule right to 1e-12 at first order whose own derivative is wrong: np.round's is 0
ta.defjvp(rounded_cube, lambda dx, ans, x: 3.0 * np.round(x, 12) ** 2 * dx)
ta.defvjp(rounded_cube, lambda ct, ans, x: 3.0 * np.round(x, 12) ** 2 * ct)


def test_second_order_of_a_function_returning_arrays_and_containers():
    """order=2 checks the first derivatives too, and a function returning an array (or a
    tuple, a list, a dict of them) through <w, f> for a random w: every output takes part."""
    x = np.array([0.3, -1.2, 2.1])
    check_grads(lambda a: np.sin(a) * a, (x,), order=2)
    check_grads(lambda a: {"u": a * a, "v": (np.exp(a), 3)}, (x,), order=2)
    check_grads(np.exp, (x,), order=2)  # a primitive
    check_grads(np.einsum, ("ij,j->i", np.full((2, 3), 0.5), x), order=2)  # its constant
    check_grads(lambda a: np.exp(1j * a), (x,), order=2)  # complex outputs
    with pytest.raises(GradientCheckError, match="first.*derivatives|central differences"):
        check_grads(lambda a: rounded_cube(a) * 1.0, (x,), order=2)


def squared(x):
    return x * x


# squared's forward rule is right to 1e-12, but its own derivative is 0 (np.round's): the
# cube below is then right at first and second order, and wrong at the third
ta.defjvp(squared, lambda dx, ans, x: 2.0 * np.round(x, 12) * dx)
ta.defvjp(squared, lambda ct, ans, x: 2.0 * np.round(x, 12) * ct)


def cube_by_squares(x):
    return x**3


ta.defjvp(cube_by_squares, lambda dx, ans, x: 3.0 * squared(x) * dx)
ta.defvjp(cube_by_squares, lambda ct, ans, x: 3.0 * squared(x) * ct)


def test_third_order():
    """order=3: the second derivatives of the gradient (of <w, f> for an array f)."""
    x = np.array([0.3, -1.2, 2.1])
    check_grads(np.outer, (x, x[::-1].copy()), order=3)
    check_grads(lambda a: np.sum(np.sin(a) * a**3), (x,), order=3)
    check_grads(lambda a: np.sum(cube_by_squares(a)), (x,), order=2)
    with pytest.raises(GradientCheckError, match="central differences"):
        check_grads(lambda a: np.sum(cube_by_squares(a)), (x,), order=3)
