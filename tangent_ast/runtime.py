"""The small, stable helpers generated modules may import.

Generated code calls these only where kinds cannot rule the case out: for
example ``unbroadcast`` appears only where broadcasting can really happen.
"""

import numpy as np


def unbroadcast(g, x):
    """Sum the cotangent ``g`` down to the shape of ``x`` (undo broadcasting)."""
    shape = np.shape(x)
    if np.shape(g) == shape:
        return g
    g = np.asarray(g)
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and g.shape[axis] != 1:
            g = g.sum(axis=axis, keepdims=True)
    if not isinstance(x, np.ndarray):
        return g[()] if g.ndim == 0 else g
    return g


def broadcast_like(t, x):
    """The tangent ``t`` broadcast to the shape of ``x`` (no copy when it fits)."""
    shape = np.shape(x)
    if np.shape(t) == shape:
        return t
    return np.broadcast_to(t, shape).copy()


def zeros_like(x):
    """A zero tangent for ``x``: ``0.0`` for a Python scalar, else zeros of its shape."""
    if isinstance(x, (float, int)):
        return 0.0
    if isinstance(x, complex):
        return 0j
    return np.zeros_like(x, dtype=np.result_type(x, float))


def sum_vjp(ct, x, axis=None, keepdims=False):
    """Cotangent of ``x`` for ``np.sum(x, axis, keepdims)``: ``ct`` spread back."""
    shape = np.shape(x)
    if axis is not None and not keepdims:
        ct = np.expand_dims(ct, axis)
    return np.broadcast_to(ct, shape).copy() if shape else ct


def mean_vjp(ct, x, axis=None, keepdims=False):
    """Cotangent of ``x`` for ``np.mean``: the sum's, divided by the count."""
    count = np.size(x) / np.size(np.mean(x, axis=axis, keepdims=keepdims))
    return sum_vjp(ct, x, axis, keepdims) / count


def matmul_vjp_left(ct, x, y):
    """Cotangent of ``x`` in ``x @ y`` for any ranks (vectors, matrices, stacks)."""
    if np.ndim(y) == 1:
        return unbroadcast(np.multiply.outer(ct, y) if np.ndim(x) > 1 else ct * y, x)
    if np.ndim(x) == 1:
        return unbroadcast(y @ ct, x) if np.ndim(y) == 2 else unbroadcast(np.swapaxes(y, -1, -2) @ ct[..., None], x)
    return unbroadcast(ct @ np.swapaxes(y, -1, -2), x)


def matmul_vjp_right(ct, x, y):
    """Cotangent of ``y`` in ``x @ y`` for any ranks."""
    if np.ndim(x) == 1:
        return unbroadcast(np.multiply.outer(x, ct) if np.ndim(y) > 1 else ct * x, y)
    if np.ndim(y) == 1:
        return unbroadcast(np.swapaxes(x, -1, -2) @ ct, y) if np.ndim(x) == 2 else unbroadcast((np.swapaxes(x, -1, -2) @ ct[..., None])[..., 0], y)
    return unbroadcast(np.swapaxes(x, -1, -2) @ ct, y)


def transpose_vjp(ct, axes=None):
    """Cotangent for ``np.transpose(x, axes)``: transpose back."""
    if axes is None:
        return np.transpose(ct)
    return np.transpose(ct, np.argsort(axes))


def getitem_vjp(ct, x, index):
    """Cotangent of ``x`` for ``x[index]``: ``ct`` placed into zeros, summed where indices repeat."""
    result = np.zeros(np.shape(x), dtype=np.result_type(ct, float))
    np.add.at(result, index, ct)
    return result
