"""Rules whose first derivative divides by a value that can be 0: abs of a complex value,
hypot, the norms, sqrt and std (by themselves), a power's base (by itself, when the exponent is 0), the phase functions angle and arctan2 (by
a squared modulus), arcsin, arccos and arccosh (by a square root, at the ends of their
domains). Where the divisor is 0 the rule's derivative is 0 (docs/rules.md, "Where a
derivative divides by zero"), computed without a floating-point warning.

One table: each case is a function through one such rule that is smooth at a point where
the divisor is 0 (``np.abs(rfft(x)) ** 2`` at a constant signal, ``np.sqrt(x ** 4)`` at 0),
so that finite differences give the derivative the rules must give there, in every mode
and on both routes. Away from that point each case is checked as every rule is
(check_grads: finite differences, the dot-product test, second derivatives). At the point,
a second derivative through a division is refused: the convention's 0 has no derivative.
"""

import math

import numpy as np
import pytest

import tangent_ast as ta
from tangent_ast.errors import TangentAstError
from tangent_ast.testing import check_grads

pytestmark = pytest.mark.filterwarnings("error")  # a warning is a failure here

rng = np.random.default_rng(11)
V3 = rng.standard_normal(3)
W3 = rng.standard_normal(3)
V4 = rng.standard_normal(4)
M = rng.standard_normal((2, 3))
MIXED = np.array([0.0, 0.7, -1.2])  # the singular point in one element only
ROWS = np.array([[0.0, 0.0, 0.0], [0.4, -1.1, 0.3]])  # a zero row and another
STACK = np.stack([np.zeros((2, 3)), M])  # a zero matrix and another
LIFT = np.array([0.0, 1j, 0.0])  # away from 0 in one element


# --- sqrt, and the inverse functions that divide by one -------------------------------------
def sqrt_of_fourth_power(x): return np.sum(np.sqrt(x ** 4) * W3)
def math_sqrt_of_fourth_power(x): return math.sqrt(x ** 4)
def arcsin_at_one(x): return np.sum(np.arcsin(1 - x ** 4))
def arccos_at_minus_one(x): return np.sum(np.arccos(x ** 4 - 1))
def arccosh_at_one(x): return np.sum(np.arccosh(1 + x ** 4))
def math_asin_at_one(x): return math.asin(1 - x ** 4)
def math_acos_at_one(x): return math.acos(1 - x ** 4)
def math_acosh_at_one(x): return math.acosh(1 + x ** 4)


# --- moduli: hypot, abs of a complex value, and the phase -----------------------------------
def hypot_squared(x, y): return np.sum(np.hypot(x, y) ** 2 * W3)
def math_hypot_squared(x, y): return math.hypot(x, y) ** 2
def power_spectrum(x): return np.sum(np.abs(np.fft.rfft(x)) ** 2 * np.arange(3.0))
def abs_of_complex_squared(x): return np.abs(x * (1 + 2j)) ** 2
def builtin_abs_of_complex_squared(x): return abs(x * (1 + 2j)) ** 2
def angle_times_square(x): return np.sum(x ** 2 * np.angle(x * (1 + 1j) + LIFT))
def arctan2_times_square(y, x): return np.sum((x ** 2 + y ** 2) * np.arctan2(y, x))
def math_atan2_times_square(y, x): return (x * x + y * y) * math.atan2(y, x)


# --- a power with a zero exponent held in a variable: x ** 0 is 1, 0 ** 0 included -----------
def zero_exponent(): return 0.0  # a value, not a literal: the rule's guard decides at run time
def power_to_zero(x): return np.sum(x ** zero_exponent() * W3 + x)
def np_power_to_zero(x): return np.sum(np.power(x, zero_exponent()) * W3 + x)
def float_power_to_zero(x): return np.sum(np.float_power(x, zero_exponent()) * W3 + x)
def math_pow_to_zero(x): return math.pow(x, zero_exponent()) + x
def builtin_pow_to_zero(x): return pow(x, zero_exponent()) + x


# --- std ------------------------------------------------------------------------------------
def std_squared(x): return np.std(x) ** 2
def std_rows_squared(x): return np.sum(x.std(axis=1, ddof=1) ** 2)
def nanstd_squared(x): return np.nanstd(x) ** 2


# --- norms: every ord, over an axis, the array-API functions ---------------------------------
def norm_squared(x): return np.linalg.norm(x) ** 2
def norm_fro_squared(x): return np.linalg.norm(x, "fro") ** 2
def norm_1_squared(x): return np.linalg.norm(x, 1) ** 2
def norm_3_squared(x): return np.linalg.norm(x, 3) ** 2
def norm_half_squared(x): return np.linalg.norm(x, 0.5) ** 2
def norm_inf_squared(x): return np.linalg.norm(x, np.inf) ** 2
def norm_spectral_squared(x): return np.linalg.norm(x, 2) ** 2
def norm_nuclear_squared(x): return np.linalg.norm(x, "nuc") ** 2
def norm_rows_squared(x): return np.sum(np.linalg.norm(x, axis=1, keepdims=True) ** 2)
def norm_rows_3_squared(x): return np.sum(np.linalg.norm(x, 3, axis=1) ** 2)
def vector_norm_squared(x): return np.sum(np.linalg.vector_norm(x, axis=-1) ** 2)
def matrix_norm_squared(x): return np.sum(np.linalg.matrix_norm(x) ** 2)
def matrix_norm_spectral_squared(x): return np.sum(np.linalg.matrix_norm(x, ord=2) ** 2)


REFUSED = "refused"  # a second derivative at the point: TangentAstError


def case(fn, at, away, name, twice=REFUSED):
    """``fn`` through the rule of ``name``, smooth at ``at`` where the rule divides by 0,
    checked by check_grads at ``away``. ``twice``: what a second derivative at ``at`` does,
    REFUSED, or None where the rule does not divide (sign-based, as np.abs of a real) or an
    SVD's own derivative is not defined there (the singular values of 0 are tied)."""
    return pytest.param(fn, at, away, name, twice, id=fn.__name__)


CASES = [
    case(sqrt_of_fourth_power, (MIXED,), (V3,), "numpy.sqrt"),
    case(math_sqrt_of_fourth_power, (0.0,), (0.8,), "math.sqrt"),
    case(arcsin_at_one, (MIXED * 0.5,), (V3 * 0.5,), "numpy.arcsin"),
    case(arccos_at_minus_one, (MIXED * 0.5,), (V3 * 0.5,), "numpy.arccos"),
    case(arccosh_at_one, (MIXED,), (V3,), "numpy.arccosh"),
    case(math_asin_at_one, (0.0,), (0.6,), "math.asin"),
    case(math_acos_at_one, (0.0,), (0.6,), "math.acos"),
    case(math_acosh_at_one, (0.0,), (0.6,), "math.acosh"),
    case(hypot_squared, (MIXED, MIXED[::-1] * 0), (V3, W3), "numpy.hypot"),
    case(math_hypot_squared, (0.0, 0.0), (0.3, -0.4), "math.hypot"),
    case(power_spectrum, (np.ones(4),), (V4,), "numpy.absolute"),
    case(abs_of_complex_squared, (0.0,), (0.7,), "numpy.absolute"),
    case(builtin_abs_of_complex_squared, (0.0,), (0.7,), "builtins.abs"),
    case(angle_times_square, (MIXED,), (V3,), "numpy.angle"),
    case(arctan2_times_square, (MIXED, MIXED * 0), (V3, W3), "numpy.arctan2"),
    case(math_atan2_times_square, (0.0, 0.0), (0.3, -0.4), "math.atan2"),
    case(power_to_zero, (MIXED,), (V3 + 2.0,), "operator.pow", twice=None),
    case(np_power_to_zero, (MIXED,), (V3 + 2.0,), "numpy.power", twice=None),
    case(float_power_to_zero, (MIXED,), (V3 + 2.0,), "numpy.float_power", twice=None),
    case(math_pow_to_zero, (0.0,), (0.6,), "math.pow", twice=None),
    case(builtin_pow_to_zero, (0.0,), (0.6,), "builtins.pow", twice=None),
    case(std_squared, (np.full(4, 0.3),), (V4,), "numpy.std"),
    case(std_rows_squared, (np.array([[0.5, 0.5, 0.5], [0.1, 0.9, -0.3]]),), (M,), "ndarray.std"),
    case(nanstd_squared, (np.full(3, 1.5),), (V3,), "numpy.nanstd"),
    case(norm_squared, (np.zeros(3),), (V3,), "numpy.linalg.norm"),
    case(norm_squared, (np.zeros((2, 3)),), (M,), "numpy.linalg.norm"),
    case(norm_fro_squared, (np.zeros((2, 3)),), (M,), "numpy.linalg.norm"),
    case(norm_1_squared, (np.zeros(3),), (V3,), "numpy.linalg.norm", twice=None),
    case(norm_3_squared, (np.zeros(3),), (V3,), "numpy.linalg.norm"),
    case(norm_half_squared, (np.zeros(3),), (V3,), "numpy.linalg.norm"),
    case(norm_inf_squared, (np.zeros(3),), (V3,), "numpy.linalg.norm", twice=None),
    case(norm_spectral_squared, (np.zeros((2, 3)),), (M,), "numpy.linalg.norm", twice=None),
    case(norm_nuclear_squared, (np.zeros((2, 3)),), (M,), "numpy.linalg.norm", twice=None),
    case(norm_rows_squared, (ROWS,), (M,), "numpy.linalg.norm"),
    case(norm_rows_3_squared, (ROWS,), (M,), "numpy.linalg.norm"),
    case(vector_norm_squared, (ROWS,), (M,), "numpy.linalg.vector_norm"),
    case(matrix_norm_squared, (STACK,), (STACK + 1.0,), "numpy.linalg.matrix_norm"),
    case(
        matrix_norm_spectral_squared,
        (STACK,),
        (STACK + M[::-1],),
        "numpy.linalg.matrix_norm",
        twice=None,
    ),
]


def _numerical_gradient(fn, args, step=1e-7):
    """Central differences of ``fn`` in each element of each argument (a small step: some
    composites are smooth to first order only, ``x ** 2 * np.angle(...)``)."""

    def moved(i, index, by):
        xs = [np.array(a, dtype=float) for a in args]
        xs[i][index] += by
        return [x if np.ndim(a) else float(x) for x, a in zip(xs, args)]

    return [
        np.reshape(
            [
                (fn(*moved(i, index, step)) - fn(*moved(i, index, -step))) / (2 * step)
                for index in np.ndindex(np.shape(a))
            ],
            np.shape(a),
        )
        for i, a in enumerate(args)
    ]


def _direction(args, seed):
    r = np.random.default_rng(seed)
    return [r.standard_normal(np.shape(a)) if np.ndim(a) else float(r.standard_normal()) for a in args]


def _as_list(cts, n):
    return list(cts) if n > 1 else [cts]


def _close(a, b):
    return np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("fn, at, away, name, twice", CASES)
def test_at_the_singular_point_the_rules_give_the_derivative(fn, at, away, name, twice):
    wrt = tuple(range(len(at)))
    expected = _numerical_gradient(fn, at)
    v = _direction(at, seed=len(wrt))
    # forward mode
    _, t = ta.jvp(fn, at, v)
    assert _close(t, sum(np.sum(g * d) for g, d in zip(expected, v))), (t, expected)
    # reverse mode, both routes, and the pullback
    for route in ("direct", "transpose"):
        g = _as_list(ta.grad(fn, wrt=wrt if len(wrt) > 1 else 0, route=route)(*at), len(wrt))
        assert all(_close(a, b) for a, b in zip(g, expected)), (route, g, expected)
    _, pullback = ta.vjp(fn, *at)
    assert all(_close(a, b) for a, b in zip(_as_list(pullback(1.0), len(wrt)), expected))


@pytest.mark.parametrize("fn, at, away, name, twice", CASES)
def test_at_the_singular_point_a_second_derivative_is_refused(fn, at, away, name, twice):
    if twice is None:
        pytest.skip("the rule does not divide there")
    v = _direction(at, seed=1)[0]
    with pytest.raises(TangentAstError, match="second derivative"):
        ta.hvp(fn)(*at, v)


@pytest.mark.parametrize("fn, at, away, name, twice", CASES)
def test_away_from_it_the_rules_are_checked_as_every_rule(fn, at, away, name, twice, tmp_path):
    rules = check_grads(fn, away, modes=("forward", "reverse"), cache=str(tmp_path))
    assert name in rules["forward"].rules_used, rules["forward"].rules_used
    assert name in rules["reverse"].rules_used, rules["reverse"].rules_used
    check_grads(fn, away, modes=("reverse",), route="transpose")
    check_grads(fn, away, order=2)


def root(x): return np.sqrt(x)


def test_the_rules_read_as_a_division_that_gives_zero_at_zero():
    """``dx / (2 * sqrt(x))`` reads ``runtime.safe_divide(dx, 2.0 * out)``, one call a person
    would write, in both modes."""
    forward = ta.derive(root, mode="forward", args=(V3 ** 2,)).source
    reverse = ta.derive(root, mode="reverse", args=(V3 ** 2,)).source
    assert "runtime.safe_divide(dx, 2.0 * out)" in forward
    assert "runtime.safe_divide(ct_out, 2.0 * out)" in reverse


def power(x, y): return x ** y


@pytest.mark.parametrize("y, second", [(0.0, 0.0), (1.0, 0.0), (2.0, 2.0)])
def test_a_power_at_zero_has_its_second_derivative_in_the_base(y, second):
    """At ``x = 0`` with the exponent in a variable: ``x ** 0`` and ``x ** 1`` have second
    derivative 0 there, ``x ** 2`` has 2; forward over reverse and reverse over reverse."""
    assert ta.hvp(power)(0.0, y, 1.0) == second
    assert ta.grad(ta.grad(power))(0.0, y) == second
