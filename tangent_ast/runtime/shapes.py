"""Where a reduction's cotangent goes back: its axes, kept as size 1, as a value like its input.

>>> keep_reduced(np.ones(2), np.zeros((2, 3)), axis=1, keepdims=False).shape
(2, 1)
"""

import numpy as np


def as_floating(x):
    """``x`` as an array of at least a floating type: a float or complex array as it is (no
    copy), an integer or bool one converted to float."""
    return np.asarray(x, dtype=np.result_type(x, float))


def reduced_axes(axis, ndim):
    """``axis`` (None, int or tuple) as a sorted tuple of non-negative ints."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(sorted(a % ndim for a in axis))
    return (axis % ndim,)


def keep_reduced(g, x, axis, keepdims):
    """A reduction's result (or cotangent) ``g`` with the reduced axes kept as size 1."""
    ndim = np.ndim(x)
    if keepdims or ndim == 0:
        return g
    return np.reshape(
        g, [1 if i in reduced_axes(axis, ndim) else n for i, n in enumerate(np.shape(x))]
    )


def scalar_like(g, x):
    """``g`` as a value of the kind of ``x``: a Python float for a Python scalar."""
    if not isinstance(x, np.ndarray) and np.ndim(g) == 0:
        return float(np.real(g)) if not np.iscomplexobj(g) else complex(g)
    return g
