"""Tangents and cotangents of integration, interpolation, convolution and polynomials.

>>> trapezoid_vjp_y(1.0, np.zeros(3))
array([0.5, 1. , 0.5])
"""

import numpy as np

from .errors import TangentAstError
from .shapes import as_floating, scalar_like
from .tangents import unbroadcast


def trapezoid_vjp_y(ct, y, x=None, dx=1.0, axis=-1):
    """Cotangent of ``y`` for ``np.trapezoid``: the trapezoid weights times ``ct``."""
    ym = np.moveaxis(as_floating(y), axis, -1)
    if x is None:
        d = dx * np.ones(ym.shape[-1] - 1)
    else:
        d = np.diff(x if np.ndim(x) == 1 else np.moveaxis(np.asarray(x), axis, -1), axis=-1)
    w = np.zeros(
        np.broadcast_shapes(np.shape(d)[:-1] + (ym.shape[-1],), ym.shape), np.result_type(d, float)
    )
    w[..., :-1] += d / 2
    w[..., 1:] += d / 2
    g = np.moveaxis(np.asarray(ct)[..., None] * w, -1, axis)
    return scalar_like(unbroadcast(g, y), y)


def trapezoid_vjp_x(ct, y, x, dx=1.0, axis=-1):
    """Cotangent of the sample points ``x`` for ``np.trapezoid(y, x)``."""
    ym = np.moveaxis(as_floating(y), axis, -1)
    pair = (ym[..., :-1] + ym[..., 1:]) / 2  # d trapezoid / d (x[i+1] - x[i])
    g = np.zeros(ym.shape, ym.dtype)
    g[..., 1:] += pair
    g[..., :-1] -= pair
    g = np.asarray(ct)[..., None] * g
    if np.ndim(x) == 1:
        return np.reshape(np.sum(g, axis=tuple(range(g.ndim - 1))), np.shape(x))
    return unbroadcast(np.moveaxis(g, -1, axis), x)


def linspace_vjp(ct, start, stop, num=50, endpoint=True, axis=0, of_stop=False):
    """Cotangent of ``start`` (or ``stop``) for ``np.linspace``: ``ct`` weighted by ``1 - t``
    (``t``)."""
    shape = np.broadcast_shapes(np.shape(start), np.shape(stop))
    t = np.linspace(np.zeros(shape), np.ones(shape), num, endpoint, axis=axis)
    w = t if of_stop else 1 - t
    g = np.sum(np.asarray(ct) * w, axis=axis)
    mine = stop if of_stop else start
    return scalar_like(unbroadcast(g, mine), mine)


def _interp_index(x, xp):
    """The interval of ``xp`` holding each ``x``: the index of its left end (an integer, no
    derivative)."""
    return np.clip(np.searchsorted(xp, x, side="right") - 1, 0, len(xp) - 2)


def _check_period(period):
    if period is not None:
        raise TangentAstError("derivatives of np.interp with a period are not supported")


def interp_slope(x, xp, fp, left=None, right=None, period=None):
    """``d interp(x, xp, fp) / dx``: the slope of the segment holding ``x`` (0 outside)."""
    _check_period(period)
    xp, fp = np.asarray(xp, dtype=float), as_floating(fp)
    i = _interp_index(x, xp)
    slope = (fp[i + 1] - fp[i]) / (xp[i + 1] - xp[i])
    inside = (np.asarray(x) >= xp[0]) & (np.asarray(x) <= xp[-1])
    return scalar_like(np.where(inside, slope, 0.0), x)


def _interp_weights(x, xp, left, right):
    """Weights ``W`` (``shape(x) + (len(xp),)``) with ``interp(x, xp, fp) == W @ fp``."""
    x = np.asarray(x, dtype=float)
    xp = np.asarray(xp, dtype=float)
    i = _interp_index(x, xp)
    w = (x - xp[i]) / (xp[i + 1] - xp[i])  # the position in the interval, 0..1
    n = len(xp)
    cells = np.arange(n)
    W = np.where(cells == i[..., None], (1 - w)[..., None], 0.0) + np.where(
        cells == (i + 1)[..., None], w[..., None], 0.0
    )
    below, above = (x < xp[0])[..., None], (x > xp[-1])[..., None]
    first, last = np.eye(n)[0], np.eye(n)[-1]
    W = np.where(below, first if left is None else 0.0, W)
    W = np.where(above, last if right is None else 0.0, W)
    return W


def interp_jvp_fp(dfp, x, xp, fp, left=None, right=None, period=None):
    """Tangent of ``np.interp`` in the values ``fp`` (it is linear in them)."""
    _check_period(period)
    dfp = as_floating(dfp)
    return scalar_like(_interp_weights(x, xp, left, right) @ dfp, x)


def interp_vjp_fp(ct, x, xp, fp, left=None, right=None, period=None):
    """Cotangent of ``fp`` for ``np.interp``: ``ct`` split between the segment's ends."""
    _check_period(period)
    W = _interp_weights(x, xp, left, right)
    return np.tensordot(as_floating(ct), W, axes=np.ndim(ct))


def _convolve_offset(n, m, mode):
    """Where the ``mode`` result of ``np.convolve`` of lengths ``n``, ``m`` starts in the full
    one."""
    if mode == "full":
        return 0
    if mode == "valid":
        return min(n, m) - 1
    if mode == "same":
        return (min(n, m) - 1) // 2
    raise ValueError(f"unknown convolution mode {mode!r}")


def _full_cotangent(ct, n, m, mode):
    full = np.zeros(n + m - 1, np.result_type(ct, float))
    start = _convolve_offset(n, m, mode)
    full[start : start + len(ct)] = ct
    return full


def convolve_vjp(ct, a, v, mode="full", of_v=False):
    """Cotangent of ``a`` (or ``v``) for ``np.convolve(a, v, mode)``: ``full`` correlated with
    the other factor, unconjugated (``np.correlate`` conjugates its second argument)."""
    full = _full_cotangent(ct, len(a), len(v), mode)
    other = np.asarray(a if of_v else v)
    return np.correlate(full, np.conj(as_floating(other)), "valid")


def correlate_vjp(ct, a, v, mode="valid", of_v=False):
    """Cotangent of ``a`` (or ``v``) for ``np.correlate(a, v, mode) == convolve(a,
    conj(v[::-1]), mode)``, conjugate-linear in ``v``: the conjugate of the cotangent of
    ``conj(v[::-1])``, reversed (conjugates are identities for real arrays)."""
    v_rev = np.conj(np.asarray(v))[::-1]
    if of_v:
        return np.conj(convolve_vjp(ct, a, v_rev, mode, of_v=True))[::-1]
    return convolve_vjp(ct, a, v_rev, mode)


def polyval_vjp_p(ct, p, x):
    """Cotangent of the coefficients ``p`` for ``np.polyval(p, x)``: ``ct`` times the powers of
    ``x``."""
    n = len(p)
    powers = as_floating(x)[..., None] ** np.arange(n - 1, -1, -1)
    return np.tensordot(as_floating(ct), powers, axes=np.ndim(ct))


def polyval_slope(p, x):
    """``d polyval(p, x) / dx``: the polynomial of the derivative's coefficients, each times
    its power (written out, as np.polyder has no rules: second derivatives go through it)."""
    n = len(p)
    if n < 2:
        return np.zeros_like(x, dtype=float)
    return np.polyval(as_floating(p)[:-1] * np.arange(n - 1, 0, -1), x)


def _ediff1d_ends(to_end, to_begin):
    return (0 if to_begin is None else np.size(to_begin)), (
        0 if to_end is None else np.size(to_end)
    )


def ediff1d_jvp(dx, ary, to_end=None, to_begin=None):
    """Tangent of ``np.ediff1d``: the differences of ``dx`` (the added ends are constants)."""
    nb, ne = _ediff1d_ends(to_end, to_begin)
    return np.concatenate([np.zeros(nb), np.diff(np.ravel(dx)), np.zeros(ne)])


def ediff1d_vjp(ct, ary, to_end=None, to_begin=None):
    """Cotangent of ``ary`` for ``np.ediff1d``: the adjoint of a difference."""
    nb, ne = _ediff1d_ends(to_end, to_begin)
    core = np.asarray(ct)[nb : len(ct) - ne]
    g = np.zeros(np.size(ary), np.result_type(core, float))
    g[1:] += core
    g[:-1] -= core
    return np.reshape(g, np.shape(ary))


def _gradient_form(f, spacing, axis, edge_order):
    """The axis ``np.gradient`` differentiates along and its step, for the forms with
    rules: one axis (a vector, or ``axis=`` an int), one constant step, ``edge_order=1``."""
    if edge_order != 1 or len(spacing) > 1 or np.ndim(spacing[0] if spacing else 1.0) != 0:
        raise TangentAstError(
            "np.gradient with edge_order=2 or with coordinates instead of one step has no rule",
            hint="write the differences out (x[2:] - x[:-2]) / (2 * h)",
        )
    if isinstance(axis, (tuple, list)) or (axis is None and np.ndim(f) != 1):
        raise TangentAstError(
            "np.gradient over several axes (it returns one array per axis) of an array whose "
            "rank was not known when the rule was derived has no rule",
            hint="derive with the arguments, so that their ranks are known, or give one axis at "
            "a time: np.gradient(f, axis=0)",
        )
    return (0 if axis is None else axis), float(spacing[0]) if spacing else 1.0


def gradient_jvp(df, f, *spacing, axis=None, edge_order=1):
    """Tangent of ``np.gradient`` (linear in ``f``): the gradient of the tangent."""
    axis, step = _gradient_form(f, spacing, axis, edge_order)
    return np.gradient(df, step, axis=axis)


def gradient_vjp(ct, f, *spacing, axis=None, edge_order=1):
    """Cotangent of ``f`` for ``np.gradient``: the transpose of its difference stencil
    (central inside, one-sided at both ends)."""
    axis, step = _gradient_form(f, spacing, axis, edge_order)
    c = np.moveaxis(as_floating(ct), axis, -1) / step
    g = np.zeros_like(c)
    g[..., 0] -= c[..., 0]  # g_0 = f_1 - f_0
    g[..., 1] += c[..., 0]
    g[..., -1] += c[..., -1]  # g_n-1 = f_n-1 - f_n-2
    g[..., -2] -= c[..., -1]
    g[..., 2:] += c[..., 1:-1] / 2  # g_i = (f_i+1 - f_i-1) / 2
    g[..., :-2] -= c[..., 1:-1] / 2
    return np.moveaxis(g, -1, axis)
