"""Tangents and cotangents of reductions and scans: extrema, products, moments, cumulative sums.

>>> reduce_count(np.zeros((2, 3)), axis=1)
3
"""

import numpy as np

from .elementwise import safe_divide
from .errors import TangentAstError
from .shapes import as_floating, keep_reduced, reduced_axes, scalar_like


def sum_vjp(ct, x, axis=None, keepdims=False):
    """Cotangent of ``x`` for ``np.sum(x, axis, keepdims)``: ``ct`` spread back."""
    shape = np.shape(x)
    if not shape:  # a number (NumPy accepts axis=0 or -1 for it): its cotangent is ct itself
        return scalar_like(np.reshape(ct, ()), x)
    if axis is not None and not keepdims and np.ndim(ct) > 0:  # (a number: one for each)
        ct = np.expand_dims(ct, axis)
    return np.broadcast_to(ct, shape).copy()


def mean_vjp(ct, x, axis=None, keepdims=False):
    """Cotangent of ``x`` for ``np.mean``: the sum's, divided by the count."""
    count = np.size(x) / np.size(np.mean(x, axis=axis, keepdims=keepdims))
    return sum_vjp(ct, x, axis, keepdims) / count


def reduce_count(x, axis=None):
    """How many elements a reduction over ``axis`` combines."""
    shape = np.shape(x)
    return int(np.prod([shape[a] for a in reduced_axes(axis, len(shape))]))


def extremum_mask(ans, x, axis=None, keepdims=False):
    """Where ``x`` attains a max/min ``ans`` along ``axis``, as weights summing to 1 (ties
    share)."""
    mask = (np.asarray(x) == keep_reduced(ans, x, axis, keepdims)).astype(float)
    return mask / np.sum(mask, axis=reduced_axes(axis, np.ndim(x)), keepdims=True)


def extremum_jvp(dx, ans, x, axis=None, out=None, keepdims=False, **kwargs):
    """Tangent of ``np.max``/``np.min``: the tangent at the extremum (averaged over ties)."""
    w = extremum_mask(ans, x, axis, keepdims)
    t = np.sum(w * dx, axis=reduced_axes(axis, np.ndim(x)), keepdims=keepdims)
    return scalar_like(t, ans)


def extremum_vjp(ct, ans, x, axis=None, out=None, keepdims=False, **kwargs):
    """Cotangent of ``x`` for ``np.max``/``np.min``: ``ct`` at the extremum (shared over ties)."""
    w = extremum_mask(ans, x, axis, keepdims)
    return scalar_like(w * keep_reduced(ct, x, axis, keepdims), x)


def ptp_jvp(dx, ans, x, axis=None, out=None, keepdims=False):
    hi, lo = np.max(x, axis=axis, keepdims=keepdims), np.min(x, axis=axis, keepdims=keepdims)
    return extremum_jvp(dx, hi, x, axis, keepdims=keepdims) - extremum_jvp(
        dx, lo, x, axis, keepdims=keepdims
    )


def ptp_vjp(ct, ans, x, axis=None, out=None, keepdims=False):
    hi, lo = np.max(x, axis=axis, keepdims=keepdims), np.min(x, axis=axis, keepdims=keepdims)
    return extremum_vjp(ct, hi, x, axis, keepdims=keepdims) - extremum_vjp(
        ct, lo, x, axis, keepdims=keepdims
    )


def _prod_others(x, axis):
    """Per element, the product of the *other* elements along the reduced axes (no division)."""
    x = as_floating(x)
    axes = reduced_axes(axis, x.ndim)  # (a 0-d x: none, and its one element's others: 1)
    rest = [a for a in range(x.ndim) if a not in axes]
    moved = np.transpose(x, rest + list(axes))
    flat = moved.reshape(moved.shape[: len(rest)] + (-1,))
    ones = np.ones_like(flat[..., :1])  # (of flat's dtype, which the kinds then know)
    left = np.cumprod(np.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
    right = np.flip(
        np.cumprod(np.flip(np.concatenate([flat[..., 1:], ones], axis=-1), -1), axis=-1), -1
    )
    others = (left * right).reshape(moved.shape)
    return np.transpose(others, np.argsort(rest + list(axes)))


def prod_jvp(dx, ans, x, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    """Tangent of ``np.prod``: correct also where elements are zero."""
    t = np.sum(_prod_others(x, axis) * dx, axis=reduced_axes(axis, np.ndim(x)), keepdims=keepdims)
    return scalar_like(t, ans)


def prod_vjp(ct, ans, x, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    """Cotangent of ``x`` for ``np.prod``."""
    return scalar_like(_prod_others(x, axis) * keep_reduced(ct, x, axis, keepdims), x)


def var_jvp(dx, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    """Tangent of ``np.var``: ``2 <x - mean, dx> / (N - ddof)`` (of complex values,
    ``Re(2 sum(conj(x - mean) dx)) / (N - ddof)``), and 0 where ``N <= ddof`` (the variance
    is NaN there: a path that does not use it must not take a NaN from it)."""
    centered = _conj_if_complex(x - np.mean(x, axis=axis, keepdims=True), x)
    t = safe_divide(
        2 * np.sum(centered * dx, axis=reduced_axes(axis, np.ndim(x)), keepdims=keepdims),
        max(reduce_count(x, axis) - ddof, 0),
    )
    return scalar_like(np.real(t), ans)  # real: a variance's tangent


def var_vjp(ct, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    """Cotangent of ``x`` for ``np.var`` (0 where ``N <= ddof``, as its tangent); of complex
    values ``2 conj(x - mean) ct / (N - ddof)``."""
    centered = _conj_if_complex(x - np.mean(x, axis=axis, keepdims=True), x)
    count = max(reduce_count(x, axis) - ddof, 0)
    return scalar_like(safe_divide(2 * centered * keep_reduced(ct, x, axis, keepdims), count), x)


def _conj_if_complex(a, x):
    """``np.conj(a)`` of ``a`` computed from ``x``, without the copy it makes of a real
    array. (Decided by ``x``, whose kind the rule derived from this one knows.)"""
    return np.conj(a) if np.iscomplexobj(x) else a


def std_jvp(dx, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    """Tangent of ``np.std``: the variance's over ``2 * std``, and 0 where the std is 0 (equal
    elements, where the std has a kink; a single element, whose std is always 0)."""
    t = var_jvp(dx, ans, x, axis, ddof=ddof, keepdims=keepdims)
    return scalar_like(safe_divide(t, _twice_spread(ans, x, axis, keepdims)), ans)


def std_vjp(ct, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    """Cotangent of ``x`` for ``np.std``."""
    twice = _twice_spread(ans, x, axis, keepdims)
    return var_vjp(safe_divide(ct, twice), ans, x, axis, ddof=ddof, keepdims=keepdims)


def _twice_spread(ans, x, axis, keepdims):
    """``2 * std``, and 0 where the elements are equal: their std is 0 then, though NumPy's
    may be a rounding error of the mean (``np.std(np.full(3, 0.1))`` is ``1.4e-17``), over
    which the derivative would be a ratio of rounding errors."""
    if np.size(x) == 0:  # no elements: NumPy's std is NaN (with a warning), and so is this
        return 2 * ans
    equal = np.max(x, axis=axis, keepdims=keepdims) == np.min(x, axis=axis, keepdims=keepdims)
    return np.where(equal, 0.0, 2 * ans)


def cumsum_vjp(ct, x, axis=None, dtype=None, out=None):
    """Cotangent of ``x`` for ``np.cumsum``: a reversed cumulative sum."""
    if axis is None:
        return np.reshape(np.flip(np.cumsum(np.flip(np.ravel(ct)))), np.shape(x))
    return np.flip(np.cumsum(np.flip(ct, axis), axis), axis)


def cumprod_jvp(dx, ans, x, axis=None, dtype=None, out=None):
    """Tangent of ``np.cumprod``: ``ans * cumsum(dx / x)`` where no element is zero; else
    by the recurrence ``dy[k] = dy[k - 1] * x[k] + y[k - 1] * dx[k]``, which holds at zeros
    too (the product is smooth there; the quotient is 0/0)."""
    if axis is None:
        return cumprod_jvp(np.ravel(dx), np.ravel(ans), np.ravel(x), 0)
    if np.all(x != 0):
        return ans * np.cumsum(dx / x, axis)
    xs, dxs, ys = np.moveaxis(x, axis, 0), np.moveaxis(dx, axis, 0), np.moveaxis(ans, axis, 0)
    dy = np.zeros(np.shape(dxs), dtype=np.result_type(dxs, ys))
    dy[0] = dxs[0]
    for k in range(1, len(xs)):
        dy[k] = dy[k - 1] * xs[k] + ys[k - 1] * dxs[k]
    return np.moveaxis(dy, 0, axis)


def cumprod_vjp(ct, ans, x, axis=None, dtype=None, out=None):
    """Cotangent of ``x`` for ``np.cumprod``: ``cumsum_vjp(ct * ans) / x`` where no element
    is zero; else ``y[j - 1] * s[j]``, with ``s[j] = ct[j] + x[j + 1] * s[j + 1]`` the
    cotangent summed back from the end (no division)."""
    if axis is None:
        return np.reshape(cumprod_vjp(ct, ans, np.ravel(x), 0), np.shape(x))
    if np.all(x != 0):
        return cumsum_vjp(ct * ans, x, axis) / x
    xs, cts, ys = np.moveaxis(x, axis, 0), np.moveaxis(ct, axis, 0), np.moveaxis(ans, axis, 0)
    n = len(xs)
    s = np.zeros(np.shape(cts), dtype=np.result_type(cts, xs))
    s[n - 1] = cts[n - 1]
    for k in range(n - 2, -1, -1):
        s[k] = cts[k] + xs[k + 1] * s[k + 1]
    before = np.concatenate([np.ones_like(ys[:1]), ys[:-1]])  # y[j - 1], 1 for the first
    return np.moveaxis(before * s, 0, axis)


def diff_vjp(ct, x, n=1, axis=-1, prepend=None, append=None):
    """Cotangent of ``x`` for ``np.diff``: the adjoint of a difference, ``n`` times."""
    if prepend is not None or append is not None:
        raise TangentAstError("the reverse rule of np.diff supports no prepend/append")
    for _ in range(n):
        pad = [(0, 0)] * np.ndim(ct)
        pad[axis] = (1, 1)
        ct = -np.diff(np.pad(ct, pad), axis=axis)
    return ct


def _weights_like(weights, x, axis):
    """The weights of ``np.average`` broadcast against ``x`` (1-D weights lie along ``axis``)."""
    w = as_floating(weights)
    if w.ndim == 1 and np.ndim(x) > 1:
        shape = [1] * np.ndim(x)
        shape[axis] = -1
        w = np.reshape(w, shape)
    return w


def _average_parts(ans, x, axis, weights, keepdims):
    """``(w, sum of w, average)`` with the reduced axes kept, for the rules of np.average."""
    if isinstance(axis, (tuple, list)) and np.ndim(weights) == 1 and np.ndim(x) > 1:
        raise TangentAstError("np.average with 1-D weights over several axes has no rule")
    w = np.broadcast_to(_weights_like(weights, x, axis), np.shape(x))
    total = np.sum(w, axis=axis, keepdims=True)
    return w, total, keep_reduced(ans, x, axis, keepdims)


def mean_jvp(dx, ans, x, axis=None, weights=None, returned=False, keepdims=False):
    """Tangent of ``np.average`` in ``x``: a mean, weighted by ``weights``."""
    if returned:
        raise TangentAstError("np.average(..., returned=True) has no rule")
    if weights is None:
        return scalar_like(np.mean(dx, axis=axis, keepdims=keepdims), ans)
    w, total, _ = _average_parts(ans, x, axis, weights, keepdims)
    return scalar_like(np.sum(dx * w / total, axis=axis, keepdims=keepdims), ans)


def average_vjp(ct, ans, x, axis=None, weights=None, returned=False, keepdims=False):
    """Cotangent of ``x`` for ``np.average``: ``ct`` spread by the normalized weights."""
    if returned:
        raise TangentAstError("np.average(..., returned=True) has no rule")
    if weights is None:
        return scalar_like(mean_vjp(ct, x, axis, keepdims), x)
    w, total, _ = _average_parts(ans, x, axis, weights, keepdims)
    return scalar_like(keep_reduced(ct, x, axis, keepdims) * w / total, x)


def average_jvp_weights(dw, ans, x, axis=None, weights=None, returned=False, keepdims=False):
    """Tangent of ``np.average`` in its weights: ``sum(dw * (x - average)) / sum(w)``."""
    _w, total, mean = _average_parts(ans, x, axis, weights, keepdims)
    dw = np.broadcast_to(_weights_like(dw, x, axis), np.shape(x))
    return scalar_like(np.sum(dw * (x - mean) / total, axis=axis, keepdims=keepdims), ans)


def average_vjp_weights(ct, ans, x, axis=None, weights=None, returned=False, keepdims=False):
    """Cotangent of the weights of ``np.average``: ``ct * (x - average) / sum(w)``, summed
    back to the weights' shape."""
    _w, total, mean = _average_parts(ans, x, axis, weights, keepdims)
    g = keep_reduced(ct, x, axis, keepdims) * (np.asarray(x) - mean) / total
    if np.ndim(weights) == 1 and np.ndim(x) > 1:
        return np.sum(g, axis=tuple(i for i in range(np.ndim(x)) if i != axis % np.ndim(x)))
    return g


def cumulative_sum_vjp(ct, x, axis=None, dtype=None, include_initial=False):
    """Cotangent of ``x`` for ``np.cumulative_sum``: a reversed cumulative sum."""
    axis = 0 if axis is None else axis
    g = np.flip(np.cumsum(np.flip(ct, axis), axis), axis)
    if include_initial:
        g = np.take(g, np.arange(1, np.shape(g)[axis]), axis=axis)
    return g


def cumulative_prod_jvp(dx, ans, x, axis=None, dtype=None, include_initial=False):
    """Tangent of ``np.cumulative_prod`` (for non-zero elements)."""
    axis = 0 if axis is None else axis
    t = np.asarray(ans) * np.cumulative_sum(
        np.asarray(dx) / x, axis=axis, include_initial=include_initial
    )
    return t


def cumulative_prod_vjp(ct, ans, x, axis=None, dtype=None, include_initial=False):
    """Cotangent of ``x`` for ``np.cumulative_prod`` (for non-zero elements)."""
    return cumulative_sum_vjp(ct * ans, x, axis, include_initial=include_initial) / x
