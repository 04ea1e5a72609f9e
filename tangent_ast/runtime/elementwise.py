"""Derivatives of elementwise functions that need more than an expression.

>>> float(xlogy(0.0, 0.0))
0.0
>>> safe_divide(np.array([1.0, 2.0]), np.array([4.0, 0.0]))
array([0.25, 0.  ])
"""

import numpy as np

from .errors import TangentAstError
from .shapes import as_floating
from .tangents import TangentTuple, real_like, unbroadcast


def safe_divide(num, den):
    """``num / den``, and 0 where ``den`` is 0, with no floating-point warning.

    The first derivatives of ``abs``, ``hypot``, the norms, ``sqrt`` and ``std`` divide by
    the function's value; where it is 0 they are 0 (docs/rules.md, "Where a derivative
    divides by zero"): the derivative of every composite through such a point that is
    differentiable there, such as ``np.abs(z) ** 2``.
    """
    if type(num) is float and type(den) is float:  # scalar code: as fast as a division
        return num / den if den else 0.0
    if isinstance(num, np.ndarray) or isinstance(den, np.ndarray):
        zero = np.equal(den, 0)
        return np.where(zero, 0, np.divide(num, np.where(zero, 1, den)))
    return num / den if den != 0 else np.zeros((), np.result_type(num, den))[()]


def divide_nonzero(num, den):
    """``num / den`` where no element of ``den`` is 0: the derivative of ``safe_divide`` in its
    divisor, which has none where the divisor is 0 (the quotient jumps to 0 there)."""
    if np.any(np.equal(den, 0)):
        raise TangentAstError(
            "a second derivative at a point where a first derivative divides by 0 (an abs, a "
            "hypot, a norm, a sqrt or a std that is 0, the modulus of an angle or an arctan2, "
            "the root of an arcsin, arccos or arccosh): the first derivative is 0 there by "
            "convention, and that 0 has no derivative of its own",
            hint="differentiate twice at another point, or write the function without the "
            "division (np.sum(x ** 2) rather than np.linalg.norm(x) ** 2); see 'Where a "
            "derivative divides by zero' in docs/rules.md",
        )
    return num / den


def clip_mask(x, a_min, a_max):
    """Where ``np.clip(x, a_min, a_max)`` passes ``x`` through."""
    inside = np.ones(np.shape(x), dtype=bool)
    if a_min is not None:
        inside = inside & (x >= a_min)
    if a_max is not None:
        inside = inside & (x <= a_max)
    return inside


def clipped_low(x, a_min, a_max):
    """Where ``np.clip(x, a_min, a_max)``, which is ``np.minimum(np.maximum(x, a_min),
    a_max)``, gives ``a_min``: below it, and ``a_min`` not above ``a_max``."""
    low = x < a_min
    return low if a_max is None else low & (a_min <= a_max)


def clipped_high(x, a_min, a_max):
    """Where ``np.clip(x, a_min, a_max)`` gives ``a_max``: above it, or everywhere ``a_min``
    is above it (NumPy then gives ``a_max``)."""
    high = x > a_max
    return high if a_min is None else high | (a_min > a_max)


def xlogy(a, b):
    """``a * log(b)``, and 0 where ``a`` is 0: the derivative ``b ** y * log(b)`` of a power
    in its exponent, which tends to 0 as the base ``b`` tends to 0 (``0.0 ** y`` for ``y > 0``).
    For a real negative base, ``log(|b|)``: ``b ** y`` is real there only at whole ``y``,
    where it is ``±|b| ** y``, whose derivative in ``y`` this is (``log(b)`` is complex: a
    NaN, which a constant exponent's zero tangent would carry into the result)."""
    if np.ndim(a) == 0 and np.ndim(b) == 0:
        return 0.0 if a == 0 else a * _log(b)
    zero = np.asarray(a) == 0
    return np.where(zero, 0.0, a * _log(np.where(zero, 1.0, b)))


def _log(b):
    """``log(b)``, of ``|b|`` for a real ``b`` (its real part)."""
    return real_like(np.log(b + 0j), b)


def power_derivative(x, y):
    """``y * x ** (y - 1)``, the derivative of ``x ** y`` in its base, and 0 where ``x`` and
    ``y`` are 0: ``x ** 0`` is 1 for every ``x``, ``0 ** 0`` included, where the formula
    would divide by 0 (elsewhere it is the formula, whose derivative in ``y`` is kept)."""
    if np.ndim(x) == 0 and np.ndim(y) == 0:
        return 0.0 * x if y == 0 and x == 0 else y * x ** (y - 1)
    zero = (np.asarray(y) == 0) & (np.asarray(x) == 0)
    return np.where(zero, 0.0, y * x ** np.where(zero, 1, y - 1))


def sinc_derivative(x):
    """``d sinc(x) / dx`` with its limit 0 at ``x = 0`` (holomorphic: the same formula for
    a complex ``x``)."""
    x = as_floating(x)
    safe = np.where(x == 0, 1.0, x)
    d = np.where(x == 0, 0.0, (np.cos(np.pi * safe) - np.sinc(safe)) / safe)
    return d if d.ndim else complex(d) if np.iscomplexobj(d) else float(d)


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
