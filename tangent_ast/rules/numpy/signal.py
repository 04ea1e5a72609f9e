"""Integration, interpolation, convolution, polynomials and spaced ranges."""

import numpy as np

from ... import runtime
from ..registry import (
    defjvp,
    defvjp,
    handles,
)

# --- integration, interpolation, signals, polynomials ---------------------------------
# trapezoid is linear in y and, for fixed y, in the sample points x.
defjvp(
    np.trapezoid,
    lambda dy, ans, y, x=None, dx=1.0, axis=-1: np.trapezoid(dy, x, dx, axis),
    lambda dxs, ans, y, x=None, dx=1.0, axis=-1: np.trapezoid(y, dxs, dx, axis),
)

defvjp(
    np.trapezoid,
    lambda ct, ans, y, x=None, dx=1.0, axis=-1: runtime.trapezoid_vjp_y(ct, y, x, dx, axis),
    lambda ct, ans, y, x=None, dx=1.0, axis=-1: runtime.trapezoid_vjp_x(ct, y, x, dx, axis),
)
handles(np.trapezoid, "dx", "axis")

# interp: the slope in x; linear in the values fp; no derivative in the sample points xp.
defjvp(
    np.interp,
    lambda dx, ans, x, xp, fp, left=None, right=None, period=None: (
        dx * runtime.interp_slope(x, xp, fp, left, right, period)
    ),
    None,
    lambda dfp, ans, x, xp, fp, left=None, right=None, period=None: runtime.interp_jvp_fp(
        dfp, x, xp, fp, left, right, period
    ),
)

defvjp(
    np.interp,
    lambda ct, ans, x, xp, fp, left=None, right=None, period=None: (
        ct * runtime.interp_slope(x, xp, fp, left, right, period)
    ),
    None,
    lambda ct, ans, x, xp, fp, left=None, right=None, period=None: runtime.interp_vjp_fp(
        ct, x, xp, fp, left, right, period
    ),
)
handles(np.interp, "left", "right")

defjvp(
    np.convolve,
    lambda da, ans, a, v, mode="full": np.convolve(da, v, mode),
    lambda dv, ans, a, v, mode="full": np.convolve(a, dv, mode),
)

defvjp(
    np.convolve,
    lambda ct, ans, a, v, mode="full": runtime.convolve_vjp(ct, a, v, mode),
    lambda ct, ans, a, v, mode="full": runtime.convolve_vjp(ct, a, v, mode, of_v=True),
)

# correlate of real arrays (complex ones would need conjugates)
defjvp(
    np.correlate,
    lambda da, ans, a, v, mode="valid": np.correlate(da, v, mode),
    lambda dv, ans, a, v, mode="valid": np.correlate(a, dv, mode),
)

defvjp(
    np.correlate,
    lambda ct, ans, a, v, mode="valid": runtime.correlate_vjp(ct, a, v, mode),
    lambda ct, ans, a, v, mode="valid": runtime.correlate_vjp(ct, a, v, mode, of_v=True),
)
handles([np.convolve, np.correlate], "mode")

defjvp(
    np.polyval,
    lambda dp, ans, p, x: np.polyval(dp, x),
    lambda dx, ans, p, x: dx * runtime.polyval_slope(p, x),
)

defvjp(
    np.polyval,
    lambda ct, ans, p, x: runtime.polyval_vjp_p(ct, p, x),
    lambda ct, ans, p, x: ct * runtime.polyval_slope(p, x),
)

# linspace/logspace are linear (logspace: exponential) in start and stop; num is an integer.
defjvp(
    np.linspace,
    lambda d, ans, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0: (
        np.linspace(d, np.zeros_like(stop, dtype=float), num, endpoint, axis=axis)
    ),
    lambda d, ans, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0: (
        np.linspace(np.zeros_like(start, dtype=float), d, num, endpoint, axis=axis)
    ),
)

defvjp(
    np.linspace,
    lambda ct, ans, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0: (
        runtime.linspace_vjp(ct, start, stop, num, endpoint, axis)
    ),
    lambda ct, ans, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0: (
        runtime.linspace_vjp(ct, start, stop, num, endpoint, axis, of_stop=True)
    ),
)
handles(np.linspace, "num", "endpoint", "axis")

defjvp(
    np.logspace,
    lambda d, ans, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0: (
        ans
        * np.log(base)
        * np.linspace(d, np.zeros_like(stop, dtype=float), num, endpoint, axis=axis)
    ),
    lambda d, ans, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0: (
        ans
        * np.log(base)
        * np.linspace(np.zeros_like(start, dtype=float), d, num, endpoint, axis=axis)
    ),
)

defvjp(
    np.logspace,
    lambda ct, ans, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0: (
        runtime.linspace_vjp(ct * ans * np.log(base), start, stop, num, endpoint, axis)
    ),
    lambda ct, ans, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0: (
        runtime.linspace_vjp(
            ct * ans * np.log(base), start, stop, num, endpoint, axis, of_stop=True
        )
    ),
)
handles(np.logspace, "num", "endpoint", "base", "axis")

# gradient: linear in f; uniform step, one axis, edge_order=1 (the runtime refuses others)
defjvp(
    np.gradient,
    lambda df, ans, f, *varargs, axis=None, edge_order=1: runtime.gradient_jvp(
        df, f, *varargs, axis=axis, edge_order=edge_order
    ),
)
defvjp(
    np.gradient,
    lambda ct, ans, f, *varargs, axis=None, edge_order=1: runtime.gradient_vjp(
        ct, f, *varargs, axis=axis, edge_order=edge_order
    ),
)
handles(np.gradient, "varargs", "axis", "edge_order")
