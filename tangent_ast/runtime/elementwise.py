"""Derivatives of elementwise functions that need more than an expression.

>>> float(xlogy(0.0, 0.0))
0.0
"""

import numpy as np

from .tangents import TangentTuple, unbroadcast


def clip_mask(x, a_min, a_max):
    """Where ``np.clip(x, a_min, a_max)`` passes ``x`` through."""
    inside = np.ones(np.shape(x), dtype=bool)
    if a_min is not None:
        inside = inside & (x >= a_min)
    if a_max is not None:
        inside = inside & (x <= a_max)
    return inside


def xlogy(a, b):
    """``a * log(b)``, and 0 where ``a`` is 0: the derivative ``b ** y * log(b)`` of a power
    in its exponent, which tends to 0 as the base ``b`` tends to 0 (``0.0 ** y`` for ``y > 0``)."""
    if np.ndim(a) == 0 and np.ndim(b) == 0:
        return 0.0 if a == 0 else a * np.log(b)
    zero = np.asarray(a) == 0
    return np.where(zero, 0.0, a * np.log(np.where(zero, 1.0, b)))


def sinc_derivative(x):
    """``d sinc(x) / dx`` with its limit 0 at ``x = 0``."""
    x = np.asarray(x, dtype=float)
    safe = np.where(x == 0, 1.0, x)
    d = np.where(x == 0, 0.0, (np.cos(np.pi * safe) - np.sinc(safe)) / safe)
    return d if d.ndim else float(d)


def astype_vjp(ct, x):
    """Cotangent of ``x`` for ``x.astype(...)``: ``ct`` in ``x``'s dtype."""
    return np.asarray(ct).astype(np.result_type(x, float)) if isinstance(x, np.ndarray) else ct


def divmod_jvp(dx, ans, x, y, of_y=False):
    """Tangent of ``divmod(x, y) = (q, x - q * y)``: ``q`` is locally constant, so the pair
    ``(0, dx)`` in ``x`` and ``(0, -dy * q)`` in ``y``."""
    zero = np.zeros_like(ans[0], dtype=float) if np.ndim(ans[0]) else 0.0
    return TangentTuple((zero, -dx * ans[0] if of_y else dx + zero))


def divmod_vjp(ct, ans, x, y, of_y=False):
    """Cotangent of ``x`` (or ``y``) for ``divmod(x, y)``: the remainder's cotangent, times
    ``-q`` for ``y`` (a missing one is zero)."""
    ct_r = None if ct is None else ct[1]
    target = y if of_y else x
    if ct_r is None:
        return np.zeros_like(target, dtype=float) if np.ndim(target) else 0.0
    return unbroadcast(-ct_r * ans[0] if of_y else ct_r + 0.0 * ans[0], target)
