"""Tangents and cotangents of NaN-aware reductions, quantiles, medians.

>>> nansum_vjp(1.0, np.array([1.0, np.nan]))
array([1., 0.])
"""

import numpy as np

from .elementwise import safe_divide
from .errors import TangentAstError
from .reductions import prod_jvp, prod_vjp, sum_vjp
from .shapes import keep_reduced, reduced_axes, scalar_like


def nansum_vjp(ct, x, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    """Cotangent of ``x`` for ``np.nansum``: the sum's, zero where ``x`` is NaN."""
    return scalar_like(np.where(np.isnan(x), 0.0, sum_vjp(ct, x, axis, keepdims)), x)


def nanmean_vjp(ct, x, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    """Cotangent of ``x`` for ``np.nanmean``: ``ct`` over the count of non-NaN elements."""
    count = np.sum(~np.isnan(x), axis=reduced_axes(axis, np.ndim(x)), keepdims=True)
    return scalar_like(np.where(np.isnan(x), 0.0, keep_reduced(ct, x, axis, keepdims) / count), x)


def nanprod_jvp(dx, ans, x, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    """Tangent of ``np.nanprod``: the product's, with NaNs as ones."""
    return prod_jvp(
        np.where(np.isnan(x), 0.0, dx), ans, np.where(np.isnan(x), 1.0, x), axis, keepdims=keepdims
    )


def nanprod_vjp(ct, ans, x, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    """Cotangent of ``x`` for ``np.nanprod``."""
    g = prod_vjp(ct, ans, np.where(np.isnan(x), 1.0, x), axis, keepdims=keepdims)
    return scalar_like(np.where(np.isnan(x), 0.0, g), x)


def _quantile_weights(x, q, axis):
    """Weights ``w`` with ``quantile(x, q, axis) == sum(w * x_moved, -1)`` (linear method).

    ``x_moved`` is ``x`` with ``axis`` last (flattened for ``axis=None``); ``w`` has
    shape ``q.shape + x_moved.shape``.
    """
    if isinstance(axis, (tuple, list)):
        raise TangentAstError("quantile derivatives over a tuple of axes are not supported")
    xm = np.ravel(x) if axis is None else np.moveaxis(np.asarray(x), axis, -1)
    n = xm.shape[-1]
    # each element's place in sorted order: weights placed by sorted position, read back by it
    ranks = np.argsort(np.argsort(xm, axis=-1), axis=-1)
    qs = np.asarray(q, dtype=float)
    weights = []
    for qv in np.ravel(qs):
        pos = qv * (n - 1)
        lo = min(int(np.floor(pos)), n - 1)
        hi = min(lo + 1, n - 1)
        on_sorted = np.zeros(n)
        on_sorted[lo] += 1 - (pos - lo)
        on_sorted[hi] += pos - lo
        weights.append(np.take_along_axis(np.broadcast_to(on_sorted, xm.shape), ranks, axis=-1))
    return xm, np.reshape(np.array(weights), qs.shape + xm.shape)


def _check_linear(method):
    if method != "linear":
        raise TangentAstError(f"quantile derivatives support method='linear' only, not {method!r}")


def quantile_jvp(
    dx,
    ans,
    x,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    **kwargs,
):
    """Tangent of ``np.quantile`` (linear interpolation between order statistics)."""
    _check_linear(method)
    _xm, w = _quantile_weights(x, q, axis)
    dxm = np.ravel(dx) if axis is None else np.moveaxis(np.asarray(dx), axis, -1)
    return scalar_like(np.reshape(np.sum(w * dxm, axis=-1), np.shape(ans)), ans)


def quantile_vjp(
    ct,
    ans,
    x,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    **kwargs,
):
    """Cotangent of ``x`` for ``np.quantile``: ``ct`` spread onto the interpolated elements."""
    _check_linear(method)
    xm, w = _quantile_weights(x, q, axis)
    qdims = np.ndim(q)
    c = np.reshape(ct, np.shape(q) + xm.shape[:-1])
    g = np.sum(w * c[..., None], axis=tuple(range(qdims)))
    g = np.reshape(g, np.shape(x)) if axis is None else np.moveaxis(g, -1, axis)
    return scalar_like(g, x)


def percentile_jvp(dx, ans, x, q, *args, **kwargs):
    return quantile_jvp(dx, ans, x, np.asarray(q) / 100, *args, **kwargs)


def percentile_vjp(ct, ans, x, q, *args, **kwargs):
    return quantile_vjp(ct, ans, x, np.asarray(q) / 100, *args, **kwargs)


def median_jvp(dx, ans, x, axis=None, out=None, overwrite_input=False, keepdims=False):
    return quantile_jvp(dx, ans, x, 0.5, axis, keepdims=keepdims)


def median_vjp(ct, ans, x, axis=None, out=None, overwrite_input=False, keepdims=False):
    return quantile_vjp(ct, ans, x, 0.5, axis, keepdims=keepdims)


def nanvar_jvp(dx, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    """Tangent of ``np.nanvar``: the variance's, over the non-NaN elements."""
    ok = ~np.isnan(x)
    centered = np.where(ok, x - np.nanmean(x, axis=axis, keepdims=True), 0.0)
    count = np.sum(ok, axis=reduced_axes(axis, np.ndim(x)), keepdims=keepdims)
    t = 2 * np.sum(
        centered * np.where(ok, dx, 0.0), axis=reduced_axes(axis, np.ndim(x)), keepdims=keepdims
    )
    return scalar_like(t / (count - ddof), ans)


def nanvar_vjp(ct, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    """Cotangent of ``x`` for ``np.nanvar`` (zero where ``x`` is NaN)."""
    ok = ~np.isnan(x)
    centered = np.where(ok, x - np.nanmean(x, axis=axis, keepdims=True), 0.0)
    count = np.sum(ok, axis=reduced_axes(axis, np.ndim(x)), keepdims=True)
    return scalar_like(2 * centered * keep_reduced(ct, x, axis, keepdims) / (count - ddof), x)


def nanstd_jvp(dx, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    """Tangent of ``np.nanstd``: the variance's over ``2 * std``, and 0 where the std is 0."""
    t = nanvar_jvp(dx, ans, x, axis, ddof=ddof, keepdims=keepdims)
    return scalar_like(safe_divide(t, 2 * ans), ans)


def nanstd_vjp(ct, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    """Cotangent of ``x`` for ``np.nanstd``."""
    return nanvar_vjp(safe_divide(ct, 2 * ans), ans, x, axis, ddof=ddof, keepdims=keepdims)
