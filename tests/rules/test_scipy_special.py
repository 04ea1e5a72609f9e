"""Table-driven checks of the scipy.special rules: both modes and both routes via
check_grads, and second derivatives (forward over reverse, reverse over reverse).

Each case is a small module-level function calling one primitive, its arguments, and the
qualified name of the primitive whose rule must run.
"""

import numpy as np
import pytest

sp = pytest.importorskip("scipy.special")

import tangent_ast as ta  # noqa: E402
from tangent_ast.errors import TangentAstError  # noqa: E402
from tangent_ast.testing import check_grads  # noqa: E402

rng = np.random.default_rng(41)
POS = rng.uniform(0.6, 2.5, 4)                 # positive: gamma, logs, Bessel functions
POS_B = rng.uniform(0.6, 2.5, 4)
V = rng.standard_normal(4)
M = rng.standard_normal((3, 4))
UNIT = rng.uniform(0.15, 0.85, 4)              # in (0, 1): logit, erfinv, ndtri
SIGNED = np.array([-1.3, -0.4, 0.7, 1.9])      # away from 0: i0e, i1e use sign(x)


def f_gamma(x): return sp.gamma(x)
def f_gammaln(x): return sp.gammaln(x)
def f_rgamma(x): return sp.rgamma(x)
def f_digamma(x): return sp.digamma(x)
def f_psi(x): return sp.psi(x)
def f_polygamma(x): return sp.polygamma(2, x)
def f_multigammaln(a): return sp.multigammaln(a, 3)
def f_beta(a, b): return sp.beta(a, b)
def f_betaln(a, b): return sp.betaln(a, b)
def f_gammainc(x): return sp.gammainc(1.7, x)
def f_gammaincc(x): return sp.gammaincc(2.5, x)
def f_erf(x): return sp.erf(x)
def f_erfc(x): return sp.erfc(x)
def f_erfinv(x): return sp.erfinv(x)
def f_erfcinv(x): return sp.erfcinv(x)
def f_erfcx(x): return sp.erfcx(x)
def f_expit(x): return sp.expit(x)
def f_log_expit(x): return sp.log_expit(x)
def f_logit(x): return sp.logit(x)
def f_ndtr(x): return sp.ndtr(x)
def f_log_ndtr(x): return sp.log_ndtr(x)
def f_ndtri(x): return sp.ndtri(x)
def f_xlogy(x, y): return sp.xlogy(x, y)
def f_xlog1py(x, y): return sp.xlog1py(x, y)
def f_entr(x): return sp.entr(x)
def f_rel_entr(x, y): return sp.rel_entr(x, y)
def f_kl_div(x, y): return sp.kl_div(x, y)
def f_i0(x): return sp.i0(x)
def f_i1(x): return sp.i1(x)
def f_i0e(x): return sp.i0e(x)
def f_i1e(x): return sp.i1e(x)
def f_iv(x): return sp.iv(1.5, x)
def f_ive(x): return sp.ive(2, x)
def f_kv(x): return sp.kv(0.5, x)
def f_kve(x): return sp.kve(1, x)
def f_jv(x): return sp.jv(2.5, x)
def f_jn(x): return sp.jn(3, x)
def f_yv(x): return sp.yv(1.5, x)
def f_yn(x): return sp.yn(2, x)
def f_j0(x): return sp.j0(x)
def f_j1(x): return sp.j1(x)
def f_y0(x): return sp.y0(x)
def f_y1(x): return sp.y1(x)
def f_logsumexp(x): return sp.logsumexp(x)
def f_logsumexp_axis(x): return sp.logsumexp(x, axis=1)
def f_logsumexp_keep(x): return sp.logsumexp(x, axis=0, keepdims=True)
def f_softmax(x): return sp.softmax(x)
def f_softmax_axis(x): return sp.softmax(x, axis=1)
def f_log_softmax(x): return sp.log_softmax(x)
def f_log_softmax_axis(x): return sp.log_softmax(x, axis=0)
def f_broadcast(x, y): return sp.xlogy(x, y)


def c(fn, args, name):
    return pytest.param(fn, args, name, id=fn.__name__)


CASES = [
    c(f_gamma, (POS,), "scipy.special.gamma"),
    c(f_gammaln, (POS,), "scipy.special.gammaln"),
    c(f_rgamma, (POS,), "scipy.special.rgamma"),
    c(f_digamma, (POS,), "scipy.special.psi"),
    c(f_psi, (POS,), "scipy.special.psi"),
    c(f_polygamma, (POS,), "scipy.special._basic.polygamma"),
    c(f_multigammaln, (2.7,), "scipy.special._spfun_stats.multigammaln"),
    c(f_beta, (POS, POS_B), "scipy.special.beta"),
    c(f_betaln, (POS, POS_B), "scipy.special.betaln"),
    c(f_gammainc, (POS,), "scipy.special.gammainc"),
    c(f_gammaincc, (POS,), "scipy.special.gammaincc"),
    c(f_erf, (V,), "scipy.special.erf"),
    c(f_erfc, (V,), "scipy.special.erfc"),
    c(f_erfinv, (UNIT - 0.5,), "scipy.special.erfinv"),
    c(f_erfcinv, (UNIT,), "scipy.special.erfcinv"),
    c(f_erfcx, (V,), "scipy.special.erfcx"),
    c(f_expit, (V,), "scipy.special.expit"),
    c(f_log_expit, (V,), "scipy.special.log_expit"),
    c(f_logit, (UNIT,), "scipy.special.logit"),
    c(f_ndtr, (V,), "scipy.special.ndtr"),
    c(f_log_ndtr, (V,), "scipy.special.log_ndtr"),
    c(f_ndtri, (UNIT,), "scipy.special.ndtri"),
    c(f_xlogy, (V, POS), "scipy.special.xlogy"),
    c(f_xlog1py, (V, POS), "scipy.special.xlog1py"),
    c(f_entr, (POS,), "scipy.special.entr"),
    c(f_rel_entr, (POS, POS_B), "scipy.special.rel_entr"),
    c(f_kl_div, (POS, POS_B), "scipy.special.kl_div"),
    c(f_i0, (V,), "scipy.special.i0"),
    c(f_i1, (V,), "scipy.special.i1"),
    c(f_i0e, (SIGNED,), "scipy.special.i0e"),
    c(f_i1e, (SIGNED,), "scipy.special.i1e"),
    c(f_iv, (POS,), "scipy.special.iv"),
    c(f_ive, (SIGNED,), "scipy.special.ive"),
    c(f_kv, (POS,), "scipy.special.kv"),
    c(f_kve, (POS,), "scipy.special.kve"),
    c(f_jv, (POS,), "scipy.special.jv"),
    c(f_jn, (POS,), "scipy.special.jv"),
    c(f_yv, (POS,), "scipy.special.yv"),
    c(f_yn, (POS,), "scipy.special.yn"),
    c(f_j0, (V,), "scipy.special.j0"),
    c(f_j1, (V,), "scipy.special.j1"),
    c(f_y0, (POS,), "scipy.special.y0"),
    c(f_y1, (POS,), "scipy.special.y1"),
    c(f_logsumexp, (M,), "scipy.special._logsumexp.logsumexp"),
    c(f_logsumexp_axis, (M,), "scipy.special._logsumexp.logsumexp"),
    c(f_logsumexp_keep, (M,), "scipy.special._logsumexp.logsumexp"),
    c(f_softmax, (M,), "scipy.special._logsumexp.softmax"),
    c(f_softmax_axis, (M,), "scipy.special._logsumexp.softmax"),
    c(f_log_softmax, (M,), "scipy.special._logsumexp.log_softmax"),
    c(f_log_softmax_axis, (M,), "scipy.special._logsumexp.log_softmax"),
    c(f_broadcast, (M, POS), "scipy.special.xlogy"),
]


@pytest.mark.parametrize("fn, args, name", CASES)
def test_rule_both_modes(fn, args, name, tmp_path):
    # a cache of its own: the rules are derived here, so they know which rules they used
    rules = check_grads(fn, args, modes=("forward", "reverse"), cache=str(tmp_path))
    assert name in rules["forward"].rules_used, rules["forward"].rules_used
    assert name in rules["reverse"].rules_used, rules["reverse"].rules_used


@pytest.mark.parametrize("fn, args, name", CASES)
def test_rule_transpose_route(fn, args, name, tmp_path):
    check_grads(fn, args, modes=("forward", "reverse"), cache=str(tmp_path), route="transpose")


def scalar(fn, arity):
    """A scalar function of ``fn``'s result, nonlinear in it, for second derivatives."""
    if arity == 1:
        def total(x):
            return np.sum(np.sin(fn(x)))
    else:
        def total(x, y):
            return np.sum(np.sin(fn(x, y)))
    return total


@pytest.mark.parametrize("fn, args, name", CASES)
def test_rule_second_order(fn, args, name, tmp_path):
    check_grads(scalar(fn, len(args)), args, order=2, cache=str(tmp_path))


def test_a_primitive_given_directly():
    assert np.isclose(ta.grad(sp.gamma)(1.5), sp.gamma(1.5) * sp.digamma(1.5))
    x = np.array([0.2, -1.0, 0.7])
    assert np.allclose(ta.grad(sp.logsumexp)(x), sp.softmax(x))


def g_polygamma(n, x): return sp.polygamma(n, x)
def g_iv(v, x): return sp.iv(v, x)
def g_jv(v, x): return sp.jv(v, x)
def g_gammainc(a, x): return sp.gammainc(a, x)
def g_multigammaln(a, d): return sp.multigammaln(a, d)


@pytest.mark.parametrize(
    "fn, args",
    [
        (g_polygamma, (1.0, 1.5)),
        (g_iv, (1.0, 1.5)),
        (g_jv, (2.5, 1.5)),
        (g_gammainc, (1.5, 0.8)),
        (g_multigammaln, (2.5, 2.0)),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_an_order_or_shape_parameter_with_a_derivative_is_refused(fn, args):
    with pytest.raises(TangentAstError, match="treats as a constant"):
        ta.grad(fn, wrt=(0, 1))(*args)


def test_the_derivative_in_x_with_a_constant_order():
    assert np.isclose(ta.grad(g_polygamma, wrt=1)(1, 1.5), sp.polygamma(2, 1.5))
    assert np.isclose(ta.grad(g_iv, wrt=1)(1.0, 1.5), (sp.iv(0, 1.5) + sp.iv(2, 1.5)) / 2)


def h_logsumexp_b(x): return sp.logsumexp(x, b=np.ones(4))
def h_logsumexp_sign(x): return sp.logsumexp(x, return_sign=True)[0]


@pytest.mark.parametrize("fn, keyword", [(h_logsumexp_b, "b"), (h_logsumexp_sign, "return_sign")])
def test_logsumexp_forms_without_a_rule_are_refused(fn, keyword):
    with pytest.raises(TangentAstError, match=f"called with {keyword}="):
        ta.grad(fn)(V)
