"""Reductions and scans: sums, means, extrema, products, moments, quantiles, cumulative
functions, and their NaN-aware forms.
"""

from typing import Any

import numpy as np

from ... import runtime
from ...modes import Mode
from ...vocabulary.kinds import Tag, real_reduction_kind, reduction_kind
from ..registry import (
    def_linear,
    defjvp,
    defvjp,
    handles,
    primitive,
    specialize,
)

_fn: Any  # the loop variable of the tables below: NumPy functions of many types

# Sums and means are linear: the forward rule is the call itself.
def_linear(np.sum, np.mean, np.ndarray.sum, np.ndarray.mean)

for _fn in (np.sum, np.ndarray.sum):
    defvjp(_fn, lambda ct, ans, x, **kw: runtime.sum_vjp(ct, x, **kw))
    specialize(
        _fn,
        Mode.REVERSE,
        lambda x, *rest: x.tag is Tag.ARRAY and not rest,
        lambda ct, ans, x: np.full_like(x, ct),
    )

for _fn in (np.mean, np.ndarray.mean):
    defvjp(_fn, lambda ct, ans, x, **kw: runtime.mean_vjp(ct, x, **kw))
    specialize(
        _fn,
        Mode.REVERSE,
        lambda x, *rest: x.tag is Tag.ARRAY and not rest,
        lambda ct, ans, x: np.full_like(x, ct / x.size),
    )

for _fn in (np.sum, np.mean, np.ndarray.sum, np.ndarray.mean):
    primitive(_fn).kind = reduction_kind

# --- reductions -----------------------------------------------------------------------
# the extrema of an array (their rules hold for complex values too: rules/numpy/complex.py)
EXTREMA = (np.max, np.min, np.amax, np.amin, np.ndarray.max, np.ndarray.min)
for _fn in EXTREMA:
    defjvp(_fn, lambda dx, ans, x, *args, **kw: runtime.extremum_jvp(dx, ans, x, *args, **kw))
    defvjp(_fn, lambda ct, ans, x, *args, **kw: runtime.extremum_vjp(ct, ans, x, *args, **kw))

defjvp(np.ptp, lambda dx, ans, x, *args, **kw: runtime.ptp_jvp(dx, ans, x, *args, **kw))

defvjp(np.ptp, lambda ct, ans, x, *args, **kw: runtime.ptp_vjp(ct, ans, x, *args, **kw))

for _fn in (np.prod, np.ndarray.prod):
    defjvp(_fn, lambda dx, ans, x, *args, **kw: runtime.prod_jvp(dx, ans, x, *args, **kw))
    defvjp(_fn, lambda ct, ans, x, *args, **kw: runtime.prod_vjp(ct, ans, x, *args, **kw))

for _fn in (np.var, np.ndarray.var):
    defjvp(_fn, lambda dx, ans, x, *args, **kw: runtime.var_jvp(dx, ans, x, *args, **kw))
    defvjp(_fn, lambda ct, ans, x, *args, **kw: runtime.var_vjp(ct, ans, x, *args, **kw))

for _fn in (np.std, np.ndarray.std):
    defjvp(_fn, lambda dx, ans, x, *args, **kw: runtime.std_jvp(dx, ans, x, *args, **kw))
    defvjp(_fn, lambda ct, ans, x, *args, **kw: runtime.std_vjp(ct, ans, x, *args, **kw))

# average: linear in x; in the weights w, d average = sum(dw * (x - average)) / sum(w)
defjvp(
    np.average,
    lambda dx, ans, a, axis=None, weights=None, returned=False, keepdims=False: runtime.mean_jvp(
        dx, ans, a, axis, weights, returned, keepdims
    ),
    None,
    lambda dw, ans, a, axis=None, weights=None, returned=False, keepdims=False: (
        runtime.average_jvp_weights(dw, ans, a, axis, weights, returned, keepdims)
    ),
)
defvjp(
    np.average,
    lambda ct, ans, a, axis=None, weights=None, returned=False, keepdims=False: runtime.average_vjp(
        ct, ans, a, axis, weights, returned, keepdims
    ),
    None,
    lambda ct, ans, a, axis=None, weights=None, returned=False, keepdims=False: (
        runtime.average_vjp_weights(ct, ans, a, axis, weights, returned, keepdims)
    ),
)

for _fn in (*EXTREMA, np.ptp, np.prod, np.ndarray.prod):
    primitive(_fn).kind = reduction_kind
for _fn in (np.var, np.ndarray.var, np.std, np.ndarray.std, np.nanvar, np.nanstd):
    primitive(_fn).kind = real_reduction_kind  # real for complex values too

def_linear(
    np.cumsum,
    np.ndarray.cumsum,
    np.diff,
    np.trace,
    np.ndarray.trace,
    np.diagonal,
    np.ndarray.diagonal,
)

for _fn in (np.cumsum, np.ndarray.cumsum):
    defvjp(_fn, lambda ct, ans, x, *args, **kw: runtime.cumsum_vjp(ct, x, *args, **kw))

for _fn in (np.cumprod, np.ndarray.cumprod):
    defjvp(_fn, lambda dx, ans, x, *args, **kw: runtime.cumprod_jvp(dx, ans, x, *args, **kw))
    defvjp(_fn, lambda ct, ans, x, *args, **kw: runtime.cumprod_vjp(ct, ans, x, *args, **kw))

defvjp(np.diff, lambda ct, ans, x, *args, **kw: runtime.diff_vjp(ct, x, *args, **kw))
# (not prepend/append: the forward rule is the call on the tangent, which would take their
# values along; np.diff of a tangent with a prepended constant is not its derivative)
handles(np.diff, "n", "axis")

for _fn in (np.trace, np.ndarray.trace):
    defvjp(_fn, lambda ct, ans, x, *args, **kw: runtime.trace_vjp(ct, x, *args, **kw))

for _fn in (np.diagonal, np.ndarray.diagonal):
    defvjp(_fn, lambda ct, ans, x, *args, **kw: runtime.diagonal_vjp(ct, x, *args, **kw))
handles([np.trace, np.ndarray.trace, np.diagonal, np.ndarray.diagonal], "offset", "axis1", "axis2")

# --- NaN-aware reductions: NaNs are skipped, so their elements get no derivative ------
defjvp(
    np.nansum,
    lambda dx, ans, x, *args, **kw: np.nansum(np.where(np.isnan(x), 0.0, dx), *args, **kw),
)

defvjp(np.nansum, lambda ct, ans, x, *args, **kw: runtime.nansum_vjp(ct, x, *args, **kw))

defjvp(
    np.nanmean,
    lambda dx, ans, x, *args, **kw: np.nanmean(np.where(np.isnan(x), np.nan, dx), *args, **kw),
)

defvjp(np.nanmean, lambda ct, ans, x, *args, **kw: runtime.nanmean_vjp(ct, x, *args, **kw))

for _fn in (np.nanmax, np.nanmin):
    defjvp(_fn, lambda dx, ans, x, *args, **kw: runtime.extremum_jvp(dx, ans, x, *args, **kw))
    defvjp(_fn, lambda ct, ans, x, *args, **kw: runtime.extremum_vjp(ct, ans, x, *args, **kw))

defjvp(np.nanprod, lambda dx, ans, x, *args, **kw: runtime.nanprod_jvp(dx, ans, x, *args, **kw))

defvjp(np.nanprod, lambda ct, ans, x, *args, **kw: runtime.nanprod_vjp(ct, ans, x, *args, **kw))

defjvp(np.nanvar, lambda dx, ans, x, *args, **kw: runtime.nanvar_jvp(dx, ans, x, *args, **kw))

defvjp(np.nanvar, lambda ct, ans, x, *args, **kw: runtime.nanvar_vjp(ct, ans, x, *args, **kw))

defjvp(np.nanstd, lambda dx, ans, x, *args, **kw: runtime.nanstd_jvp(dx, ans, x, *args, **kw))

defvjp(np.nanstd, lambda ct, ans, x, *args, **kw: runtime.nanstd_vjp(ct, ans, x, *args, **kw))

for _fn in (np.nansum, np.nanmean, np.nanmax, np.nanmin, np.nanprod):
    primitive(_fn).kind = reduction_kind
handles(
    [np.var, np.ndarray.var, np.std, np.ndarray.std, np.nanvar, np.nanstd],
    "axis",
    "ddof",
    "keepdims",
)

# --- order statistics (linear interpolation; no derivative in q) ----------------------
defjvp(np.median, lambda dx, ans, x, *args, **kw: runtime.median_jvp(dx, ans, x, *args, **kw))

defvjp(np.median, lambda ct, ans, x, *args, **kw: runtime.median_vjp(ct, ans, x, *args, **kw))
# What each rule handles besides its differentiable arguments (rules/binding.py): a call
# giving any other parameter (out=, where=, dtype=, order=, initial=, ...) at a value other
# than its default is refused at derivation time.
handles(
    [
        np.sum,
        np.ndarray.sum,
        np.mean,
        np.ndarray.mean,
        np.ptp,
        np.nansum,
        np.nanmean,
        np.max,
        np.min,
        np.amax,
        np.amin,
        np.ndarray.max,
        np.ndarray.min,
        np.nanmax,
        np.nanmin,
        np.prod,
        np.ndarray.prod,
        np.nanprod,
        np.average,
        np.median,
    ],
    "axis",
    "keepdims",
)

defjvp(
    np.quantile,
    lambda dx, ans, x, q, *args, **kw: runtime.quantile_jvp(dx, ans, x, q, *args, **kw),
    None,
)

defvjp(
    np.quantile,
    lambda ct, ans, x, q, *args, **kw: runtime.quantile_vjp(ct, ans, x, q, *args, **kw),
    None,
)

defjvp(
    np.percentile,
    lambda dx, ans, x, q, *args, **kw: runtime.percentile_jvp(dx, ans, x, q, *args, **kw),
    None,
)

defvjp(
    np.percentile,
    lambda ct, ans, x, q, *args, **kw: runtime.percentile_vjp(ct, ans, x, q, *args, **kw),
    None,
)
handles([np.quantile, np.percentile], "axis", "keepdims")

# --- cumulative functions (NumPy 2.1+) ------------------------------------------------
if hasattr(np, "cumulative_sum"):
    def_linear(np.cumulative_sum)

    defvjp(np.cumulative_sum, lambda ct, ans, x, **kw: runtime.cumulative_sum_vjp(ct, x, **kw))

    defjvp(
        np.cumulative_prod, lambda dx, ans, x, **kw: runtime.cumulative_prod_jvp(dx, ans, x, **kw)
    )

    defvjp(
        np.cumulative_prod, lambda ct, ans, x, **kw: runtime.cumulative_prod_vjp(ct, ans, x, **kw)
    )
    handles([np.cumulative_sum, np.cumulative_prod], "axis", "include_initial")

defjvp(
    np.nancumsum,
    lambda dx, ans, x, *args, **kw: np.nancumsum(np.where(np.isnan(x), 0.0, dx), *args, **kw),
)

defvjp(
    np.nancumsum,
    lambda ct, ans, x, *args, **kw: np.where(
        np.isnan(x), 0.0, runtime.cumsum_vjp(ct, x, *args, **kw)
    ),
)

defjvp(
    np.nancumprod,
    lambda dx, ans, x, *args, **kw: runtime.cumprod_jvp(
        np.where(np.isnan(x), 0.0, dx), ans, np.where(np.isnan(x), 1.0, x), *args, **kw
    ),
)

defvjp(
    np.nancumprod,
    lambda ct, ans, x, *args, **kw: np.where(
        np.isnan(x), 0.0, runtime.cumprod_vjp(ct, ans, np.where(np.isnan(x), 1.0, x), *args, **kw)
    ),
)
handles(
    [
        np.cumsum,
        np.ndarray.cumsum,
        np.cumprod,
        np.ndarray.cumprod,
        np.nancumsum,
        np.nancumprod,
        np.expand_dims,
        np.squeeze,
        np.ndarray.squeeze,
        np.flip,
        np.append,
        np.delete,
        *([np.unstack] if hasattr(np, "unstack") else []),  # NumPy 2.1+
        np.split,
        np.array_split,
        np.concatenate,
        np.stack,
        np.ndarray.compress,
        np.compress,
    ],
    "axis",
)
