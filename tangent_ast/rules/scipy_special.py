"""Rules of ``scipy.special``: gamma and beta functions, error functions, the logistic
function, the normal distribution, entropies, Bessel functions, and log-sum-exp/softmax.

Registered only when SciPy is installed (``rules/__init__.py``). Every derivative is
written with functions that have rules themselves, so a derived rule can be derived
again (second derivatives). An order, ``n`` or shape parameter written first
(``polygamma(n, x)``, ``iv(v, x)``, ``gammainc(a, x)``) is taken as a constant: a
differentiable value there is refused.

=====================  ==============================================================
function               derivative
=====================  ==============================================================
``gamma(x)``           ``gamma(x) digamma(x)``
``gammaln(x)``         ``digamma(x)``
``rgamma(x)``          ``-rgamma(x) digamma(x)``
``digamma(x)``         ``polygamma(1, x)`` (``psi`` is the same function)
``polygamma(n, x)``    ``polygamma(n + 1, x)``
``multigammaln(a, d)`` ``sum(digamma(a - j / 2) for j < d)``
``beta(a, b)``         ``beta(a, b) (digamma(a) - digamma(a + b))``, and in ``b``
``betaln(a, b)``       ``digamma(a) - digamma(a + b)``, and in ``b``
``gammainc(a, x)``     ``x ** (a - 1) exp(-x) / gamma(a)`` (``gammaincc``: its negative)
``erf(x)``             ``2 / sqrt(pi) exp(-x ** 2)`` (``erfc``: its negative)
``erfinv(x)``          ``sqrt(pi) / 2 exp(erfinv(x) ** 2)`` (``erfcinv``: its negative)
``erfcx(x)``           ``2 x erfcx(x) - 2 / sqrt(pi)``
``expit(x)``           ``expit(x) (1 - expit(x))``; ``log_expit(x)``: ``expit(-x)``
``logit(x)``           ``1 / (x (1 - x))``
``ndtr(x)``            ``exp(-x ** 2 / 2) / sqrt(2 pi)``
``log_ndtr(x)``        ``exp(-x ** 2 / 2 - log_ndtr(x)) / sqrt(2 pi)``
``ndtri(x)``           ``sqrt(2 pi) exp(ndtri(x) ** 2 / 2)``
``xlogy(x, y)``        ``log(y)``, ``x / y``; ``xlog1py``: ``log1p(y)``, ``x / (1 + y)``
``entr(x)``            ``-(log(x) + 1)``
``rel_entr(x, y)``     ``log(x / y) + 1``, ``-x / y``; ``kl_div``: ``log(x / y)``, ``1 - x / y``
``i0``, ``i1``         ``i1(x)``, ``(i0(x) + iv(2, x)) / 2``
``i0e``, ``i1e``       ``i1e(x) - sign(x) i0e(x)``, ``(i0e(x) + ive(2, x)) / 2 - sign(x) i1e(x)``
``iv(v, x)``           ``(iv(v - 1, x) + iv(v + 1, x)) / 2``; ``ive``: the same of ``ive``,
                       ``- sign(x) ive(v, x)``
``kv(v, x)``           ``-(kv(v - 1, x) + kv(v + 1, x)) / 2``; ``kve``: the same of
                       ``kve``, ``+ kve(v, x)``
``jv(v, x)``           ``(jv(v - 1, x) - jv(v + 1, x)) / 2`` (``jn`` is ``jv``; ``yv``,
                       ``yn`` alike); ``j0``: ``-j1(x)``; ``j1``: ``(j0(x) - jv(2, x)) / 2``;
                       ``y0``, ``y1`` alike
``logsumexp(a)``       ``exp(a - logsumexp(a))`` along ``axis``
``softmax(x)``         ``s (dx - sum(s dx))`` along ``axis``, ``s = softmax(x)``
``log_softmax(x)``     ``dx - sum(exp(log_softmax(x)) dx)`` along ``axis``
=====================  ==============================================================
"""

from typing import Any

import numpy as np
import scipy.special as sp

from .. import runtime
from .registry import broadcasting, defjvp, defvjp, elementwise, handles

_fn: Any  # the loop variables of the tables below: SciPy's ufuncs and functions
_derivative: Any

_SQRT_PI = 1.7724538509055160273  # sqrt(pi)
_SQRT_2PI = 2.5066282746310005024  # sqrt(2 pi)

ELEMENTWISE = [
    (sp.gamma, lambda ans, x: ans * sp.digamma(x)),
    (sp.gammaln, lambda ans, x: sp.digamma(x)),
    (sp.rgamma, lambda ans, x: -ans * sp.digamma(x)),
    (sp.digamma, lambda ans, x: sp.polygamma(1, x)),
    (sp.erf, lambda ans, x: 2 / _SQRT_PI * np.exp(-(x**2))),
    (sp.erfc, lambda ans, x: -2 / _SQRT_PI * np.exp(-(x**2))),
    (sp.erfinv, lambda ans, x: _SQRT_PI / 2 * np.exp(ans**2)),
    (sp.erfcinv, lambda ans, x: -_SQRT_PI / 2 * np.exp(ans**2)),
    (sp.erfcx, lambda ans, x: 2 * x * ans - 2 / _SQRT_PI),
    (sp.expit, lambda ans, x: ans * (1 - ans)),
    (sp.log_expit, lambda ans, x: sp.expit(-x)),
    (sp.logit, lambda ans, x: 1 / (x * (1 - x))),
    (sp.ndtr, lambda ans, x: np.exp(-0.5 * x**2) / _SQRT_2PI),
    (sp.log_ndtr, lambda ans, x: np.exp(-0.5 * x**2 - ans) / _SQRT_2PI),
    (sp.ndtri, lambda ans, x: _SQRT_2PI * np.exp(0.5 * ans**2)),
    (sp.entr, lambda ans, x: -(np.log(x) + 1)),
    (sp.i0, lambda ans, x: sp.i1(x)),
    (sp.i1, lambda ans, x: (sp.i0(x) + sp.iv(2, x)) / 2),
    (sp.i0e, lambda ans, x: sp.i1e(x) - np.sign(x) * ans),
    (sp.i1e, lambda ans, x: (sp.i0e(x) + sp.ive(2, x)) / 2 - np.sign(x) * ans),
    (sp.j0, lambda ans, x: -sp.j1(x)),
    (sp.j1, lambda ans, x: (sp.j0(x) - sp.jv(2, x)) / 2),
    (sp.y0, lambda ans, x: -sp.y1(x)),
    (sp.y1, lambda ans, x: (sp.y0(x) - sp.yv(2, x)) / 2),
]

for _fn, _derivative in ELEMENTWISE:
    elementwise(_fn, _derivative)

# --- functions of x with an order or shape parameter first, taken as a constant ------------
# (jn is jv under another name: one function object, one rule)
ORDER_FIRST = [
    (sp.polygamma, lambda ans, n, x: sp.polygamma(n + 1, x)),
    (sp.iv, lambda ans, v, x: (sp.iv(v - 1, x) + sp.iv(v + 1, x)) / 2),
    (sp.ive, lambda ans, v, x: (sp.ive(v - 1, x) + sp.ive(v + 1, x)) / 2 - np.sign(x) * ans),
    (sp.kv, lambda ans, v, x: -(sp.kv(v - 1, x) + sp.kv(v + 1, x)) / 2),
    (sp.kve, lambda ans, v, x: ans - (sp.kve(v - 1, x) + sp.kve(v + 1, x)) / 2),
    (sp.jv, lambda ans, v, x: (sp.jv(v - 1, x) - sp.jv(v + 1, x)) / 2),
    (sp.yv, lambda ans, v, x: (sp.yv(v - 1, x) - sp.yv(v + 1, x)) / 2),
    (sp.yn, lambda ans, n, x: (sp.yn(n - 1, x) - sp.yn(n + 1, x)) / 2),
    # the regularized incomplete gamma functions: x ** (a - 1) exp(-x) / gamma(a), in logs
    (sp.gammainc, lambda ans, a, x: np.exp(sp.xlogy(a - 1, x) - x - sp.gammaln(a))),
    (sp.gammaincc, lambda ans, a, x: -np.exp(sp.xlogy(a - 1, x) - x - sp.gammaln(a))),
]

for _fn, _derivative in ORDER_FIRST:
    elementwise(_fn, _derivative, argnum=1)

# --- functions of two variables ---------------------------------------------------------------
broadcasting(sp.beta, sp.betaln, sp.xlogy, sp.xlog1py, sp.rel_entr, sp.kl_div)

defjvp(
    sp.beta,
    lambda da, ans, a, b: da * ans * (sp.digamma(a) - sp.digamma(a + b)),
    lambda db, ans, a, b: db * ans * (sp.digamma(b) - sp.digamma(a + b)),
)

defvjp(
    sp.beta,
    lambda ct, ans, a, b: ct * ans * (sp.digamma(a) - sp.digamma(a + b)),
    lambda ct, ans, a, b: ct * ans * (sp.digamma(b) - sp.digamma(a + b)),
)

defjvp(
    sp.betaln,
    lambda da, ans, a, b: da * (sp.digamma(a) - sp.digamma(a + b)),
    lambda db, ans, a, b: db * (sp.digamma(b) - sp.digamma(a + b)),
)

defvjp(
    sp.betaln,
    lambda ct, ans, a, b: ct * (sp.digamma(a) - sp.digamma(a + b)),
    lambda ct, ans, a, b: ct * (sp.digamma(b) - sp.digamma(a + b)),
)

defjvp(sp.xlogy, lambda dx, ans, x, y: dx * np.log(y), lambda dy, ans, x, y: dy * x / y)

defvjp(sp.xlogy, lambda ct, ans, x, y: ct * np.log(y), lambda ct, ans, x, y: ct * x / y)

defjvp(sp.xlog1py, lambda dx, ans, x, y: dx * np.log1p(y), lambda dy, ans, x, y: dy * x / (1 + y))

defvjp(sp.xlog1py, lambda ct, ans, x, y: ct * np.log1p(y), lambda ct, ans, x, y: ct * x / (1 + y))

defjvp(
    sp.rel_entr,
    lambda dx, ans, x, y: dx * (np.log(x / y) + 1),
    lambda dy, ans, x, y: -dy * x / y,
)

defvjp(
    sp.rel_entr,
    lambda ct, ans, x, y: ct * (np.log(x / y) + 1),
    lambda ct, ans, x, y: -ct * x / y,
)

defjvp(
    sp.kl_div,
    lambda dx, ans, x, y: dx * np.log(x / y),
    lambda dy, ans, x, y: dy * (1 - x / y),
)

defvjp(
    sp.kl_div,
    lambda ct, ans, x, y: ct * np.log(x / y),
    lambda ct, ans, x, y: ct * (1 - x / y),
)

# the multivariate log-gamma function: sum(gammaln(a - j / 2) for j < d) + a constant
defjvp(
    sp.multigammaln,
    lambda da, ans, a, d: da * np.sum(sp.digamma(np.expand_dims(a, -1) - np.arange(d) / 2), -1),
    None,
)

defvjp(
    sp.multigammaln,
    lambda ct, ans, a, d: ct * np.sum(sp.digamma(np.expand_dims(a, -1) - np.arange(d) / 2), -1),
    None,
)

# --- reductions along an axis -----------------------------------------------------------------
defjvp(
    sp.logsumexp,
    lambda da, ans, a, axis=None, keepdims=False: np.sum(
        da * np.exp(a - runtime.keep_reduced(ans, a, axis, keepdims)),
        axis=axis,
        keepdims=keepdims,
    ),
)

defvjp(
    sp.logsumexp,
    lambda ct, ans, a, axis=None, keepdims=False: (
        runtime.sum_vjp(ct, a, axis, keepdims)
        * np.exp(a - runtime.keep_reduced(ans, a, axis, keepdims))
    ),
)
handles(sp.logsumexp, "axis", "keepdims")

defjvp(
    sp.softmax,
    lambda dx, ans, x, axis=None: ans * (dx - np.sum(ans * dx, axis=axis, keepdims=True)),
)

defvjp(
    sp.softmax,
    lambda ct, ans, x, axis=None: ans * (ct - np.sum(ans * ct, axis=axis, keepdims=True)),
)

defjvp(
    sp.log_softmax,
    lambda dx, ans, x, axis=None: dx - np.sum(np.exp(ans) * dx, axis=axis, keepdims=True),
)

defvjp(
    sp.log_softmax,
    lambda ct, ans, x, axis=None: ct - np.exp(ans) * np.sum(ct, axis=axis, keepdims=True),
)
handles([sp.softmax, sp.log_softmax], "axis")
