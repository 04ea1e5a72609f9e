"""Cotangents of NumPy's array functions: products, indexing, reshaping, selection.

Each helper serves one rule of ``tangent_ast/rules/numpy/`` or ``rules/linalg.py`` and
takes the leading cotangent, then the arguments in the order of the NumPy function.

>>> getitem_vjp(np.array([1.0, 2.0]), np.zeros(4), slice(1, 3))
array([0., 1., 2., 0.])
"""

import numpy as np

from .errors import TangentAstError
from .shapes import scalar_like
from .tangents import TangentTuple, is_record, real_like, rebuild, unbroadcast, zero_tangent


def full_like_jvp(dv, ans):
    """Tangent of ``np.full_like(a, v)``: ``dv`` everywhere, or 0 if ``a`` is not a float
    array (its dtype truncates v, so the result does not change with v)."""
    if np.result_type(ans).kind not in "fc":
        return np.zeros(np.shape(ans))
    if np.result_type(ans).kind == "f":  # a real array keeps a complex fill value's real part
        dv = np.real(dv)
    return np.broadcast_to(dv, np.shape(ans)).astype(np.result_type(ans, dv))


def full_like_vjp(ct, ans, fill_value):
    """Cotangent of ``v`` in ``np.full_like(a, v)``: ``ct`` summed to ``v``'s shape."""
    if np.result_type(ans).kind not in "fc":
        return zero_tangent(fill_value)
    return unbroadcast(ct, fill_value)


def transpose_vjp(ct, axes=None):
    """Cotangent for ``np.transpose(x, axes)``: transpose back."""
    if axes is None:
        return np.transpose(ct)
    return np.transpose(ct, np.argsort(axes))


def _basic(index):
    """Basic indexing (ints, slices, None, ...) never selects an element twice."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(p is None or p is Ellipsis or isinstance(p, (int, np.integer, slice)) for p in parts)


def _numpy_result(x):
    """A tuple result of a NumPy function (``EighResult``, ``SVDResult``, ...): its
    cotangent is a plain ``TangentTuple``, which adds elementwise even where the
    transformer cannot tell the value is a container and sums cotangents with ``+``."""
    return isinstance(x, tuple) and (getattr(type(x), "__module__", "") or "").startswith("numpy")


def getitem_vjp(ct, x, index):
    """Cotangent of ``x`` for ``x[index]``: ``ct`` placed into zeros, summed where indices
    repeat."""
    if isinstance(x, (tuple, list)):
        parts = list(zero_tangent(x))
        parts[index] = ct
        return rebuild(x, parts) if is_record(x) and not _numpy_result(x) else TangentTuple(parts)
    if isinstance(x, dict):
        result = zero_tangent(x)
        result[index] = ct
        return result
    if type(ct) is np.ndarray and ct.dtype.char in "dD":
        # float64 or complex128, the common case, at half the cost: result_type(ct, float)
        result = np.zeros(np.shape(x), ct.dtype)
    else:
        # zeros like ct (of x's shape): a batch of cotangents gets a batch of zeros
        result = np.zeros_like(ct, shape=np.shape(x), dtype=np.result_type(ct, float))
    if _basic(index):
        result[index] = ct
    else:
        np.add.at(result, index, ct)
    return result


def written_slots(ct, index):
    """Cotangent of ``v`` in ``a[index] = v``: ``ct[index]``, except where the index names
    a place twice. NumPy keeps one of those writes (the last); the others are lost, so
    their cotangent is zero. Which write NumPy keeps is asked of NumPy itself, by the
    same assignment of each slot's position.

    >>> written_slots(np.array([1.0, 2.0, 3.0]), np.array([0, 0, 2]))
    array([0., 1., 3.])
    """
    slots = ct[index].copy()
    if _basic(index) or (isinstance(index, np.ndarray) and index.dtype == bool):
        return slots  # no place is named twice
    position = np.arange(np.size(slots)).reshape(np.shape(slots))
    kept = np.full(np.shape(ct), -1)
    kept[index] = position
    return np.where(kept[index] == position, slots, 0)


def moveaxis_vjp(ct, source, destination):
    return np.moveaxis(ct, destination, source)


def roll_vjp(ct, shift, axis=None):
    """Cotangent for ``np.roll``: roll back."""
    back = tuple(-s for s in shift) if isinstance(shift, (tuple, list)) else -shift
    return np.roll(ct, back, axis)


def tile_vjp(ct, x, reps):
    """Cotangent of ``x`` for ``np.tile``: sum the copies."""
    shape = np.shape(x)
    reps = (reps,) if np.ndim(reps) == 0 else tuple(reps)
    ndim = max(len(shape), len(reps))
    full = (1,) * (ndim - len(shape)) + tuple(shape)
    reps = (1,) * (ndim - len(reps)) + reps
    split = [n for pair in zip(reps, full, strict=True) for n in pair]
    g = np.reshape(ct, split).sum(axis=tuple(range(0, 2 * ndim, 2)))
    return np.reshape(g, shape)


def repeat_vjp(ct, x, repeats, axis=None):
    """Cotangent of ``x`` for ``np.repeat``: the sum over each element's repeats (none for an
    element repeated 0 times)."""
    shape = np.shape(x)
    if axis is None:
        ct, axis = np.ravel(ct), 0
        axis_len = int(np.size(x))
    else:
        axis_len = shape[axis]
    counts = np.broadcast_to(repeats, (axis_len,))
    group = np.repeat(np.arange(axis_len), counts)  # the element each entry of ct repeats
    moved = np.moveaxis(np.asarray(ct), axis, 0)
    g = np.zeros((axis_len, *moved.shape[1:]), dtype=np.result_type(moved, float))
    np.add.at(g, group, moved)
    return np.reshape(np.moveaxis(g, 0, axis), shape)


def diag_vjp(ct, x, k=0):
    """Cotangent of ``x`` for ``np.diag``: the diagonal back, or a vector placed on it."""
    if np.ndim(x) == 1:
        return np.diagonal(ct, k).copy()
    return _diag_into(ct, x, k)


def _diag_into(ct, x, k):
    g = np.zeros(np.shape(x), dtype=np.result_type(ct, float))
    n = len(ct)
    rows = np.arange(n) + max(-k, 0)
    cols = np.arange(n) + max(k, 0)
    g[rows, cols] = ct
    return g


def diagonal_vjp(ct, x, offset=0, axis1=0, axis2=1):
    """Cotangent of ``x`` for ``np.diagonal``/``np.trace``: ``ct`` on the diagonal."""
    x_shape = np.shape(x)
    eye = np.eye(x_shape[axis1], x_shape[axis2], k=offset)
    n = int(eye.sum())
    eye = eye.reshape(eye.shape + (1,) * (len(x_shape) - 2))
    # eye[i, j] * ct[..., d(i, j)] in moved-axes layout, then move the axes back
    ct = np.asarray(ct)
    rows = np.arange(n) + max(-offset, 0)
    cols = np.arange(n) + max(offset, 0)
    rest = [
        s for i, s in enumerate(x_shape) if i not in (axis1 % len(x_shape), axis2 % len(x_shape))
    ]
    g = np.zeros([x_shape[axis1], x_shape[axis2]] + rest, dtype=np.result_type(ct, float))
    g[rows, cols] = np.moveaxis(ct, -1, 0) if ct.ndim else ct
    return np.moveaxis(g, [0, 1], [axis1 % len(x_shape), axis2 % len(x_shape)])


def trace_vjp(ct, x, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Cotangent of ``x`` for ``np.trace``."""
    n = len(np.diagonal(x, offset, axis1, axis2).T) if np.ndim(x) else 0
    ct = np.broadcast_to(np.asarray(ct)[..., None], np.shape(ct) + (n,))
    return diagonal_vjp(ct, x, offset, axis1, axis2)


def sort_jvp(dx, x, axis=-1, kind=None, order=None):
    """Tangent of ``np.sort``: the tangent permuted like ``x``."""
    if axis is None:
        return np.ravel(dx)[np.argsort(np.ravel(x), kind=kind)]
    return np.take_along_axis(dx, np.argsort(x, axis=axis, kind=kind), axis=axis)


def sort_vjp(ct, x, axis=-1, kind=None, order=None):
    """Cotangent of ``x`` for ``np.sort``: ``ct`` permuted back."""
    if axis is None:
        g = np.empty(np.size(x), dtype=np.result_type(ct, float))
        g[np.argsort(np.ravel(x), kind=kind)] = ct
        return np.reshape(g, np.shape(x))
    g = np.empty(np.shape(x), dtype=np.result_type(ct, float))
    np.put_along_axis(g, np.argsort(x, axis=axis, kind=kind), ct, axis=axis)
    return g


def _origins(ans, x, axis):
    """For each element of ``ans``, a rearrangement of ``x`` along ``axis``, the position in
    ``x`` it came from (equal values share out their positions in order)."""
    order_x = np.argsort(x, axis=axis, kind="stable")
    order_ans = np.argsort(ans, axis=axis, kind="stable")
    return np.take_along_axis(order_x, np.argsort(order_ans, axis=axis), axis=axis)


def partition_jvp(dx, ans, x, axis=-1):
    """Tangent of ``np.partition``: the tangent rearranged like ``x`` was."""
    if axis is None:
        return np.ravel(dx)[_origins(ans, np.ravel(x), 0)]
    return np.take_along_axis(dx, _origins(ans, x, axis), axis=axis)


def partition_vjp(ct, ans, x, axis=-1):
    """Cotangent of ``x`` for ``np.partition``: ``ct`` put back where each element came from."""
    if axis is None:
        g = np.zeros(np.size(x), dtype=np.result_type(ct, float))
        g[_origins(ans, np.ravel(x), 0)] = ct
        return np.reshape(g, np.shape(x))
    # where each element of x went: the inverse of the rearrangement
    return np.take_along_axis(ct, np.argsort(_origins(ans, x, axis), axis=axis), axis=axis)


def take_vjp(ct, x, indices, axis=None, out=None, mode="raise"):
    """Cotangent of ``x`` for ``np.take``: ``ct`` added back at the indices taken (an index
    clipped or wrapped into range as ``mode`` says, as np.take reads it)."""
    n = np.size(x) if axis is None else np.shape(x)[axis]
    if mode == "clip":
        indices = np.clip(indices, 0, n - 1)
    elif mode == "wrap":
        indices = np.mod(indices, n)
    g = np.zeros(
        np.shape(x) if axis is not None else (np.size(x),), dtype=np.result_type(ct, float)
    )
    if axis is None:
        np.add.at(g, np.asarray(indices), ct)
        return np.reshape(g, np.shape(x))
    axis = axis % np.ndim(x)
    moved = np.moveaxis(g, axis, 0)  # a view: writes reach g
    ct = np.asarray(ct)
    idx_nd = np.ndim(indices)
    np.add.at(
        moved,
        np.asarray(indices),
        np.moveaxis(ct, list(range(axis, axis + idx_nd)), list(range(idx_nd))),
    )
    return g


def take_along_axis_vjp(ct, x, indices, axis):
    """Cotangent of ``x`` for ``np.take_along_axis``: ``ct`` added back where each element was
    taken (twice for an element taken twice; summed over an axis of ``x`` of length 1 that
    the indices broadcast)."""
    if axis is None:
        return take_vjp(ct, x, indices)
    shape, ct = np.shape(x), np.asarray(ct)
    axis = axis % len(shape)
    index = []
    for d in range(len(shape)):
        if d == axis:
            index.append(np.broadcast_to(indices, ct.shape))
            continue
        along = np.arange(ct.shape[d]) if shape[d] != 1 else np.zeros(ct.shape[d], dtype=int)
        index.append(
            np.broadcast_to(
                np.reshape(along, [-1 if e == d else 1 for e in range(len(shape))]), ct.shape
            )
        )
    g = np.zeros(shape, dtype=np.result_type(ct, float))
    np.add.at(g, tuple(index), ct)
    return g


def pad_vjp(ct, x, pad_width, mode="constant", **kwargs):
    """Cotangent of ``x`` for ``np.pad`` in ``constant`` mode: the middle of ``ct``."""
    if mode != "constant":
        raise TangentAstError(
            f"the reverse rule of np.pad supports mode='constant' only, not {mode!r}"
        )
    widths = np.broadcast_to(np.asarray(pad_width, dtype=int), (np.ndim(x), 2))
    return ct[tuple(slice(lo, lo + n) for (lo, _), n in zip(widths, np.shape(x), strict=True))]


def append_vjp(ct, arr, values, axis=None, of_values=False):
    """Cotangent of ``arr`` (or ``values``) for ``np.append``: its part of ``ct``."""
    if axis is None:
        flat = np.ravel(ct)
        k = np.size(arr)
        part, mine = (flat[k:], values) if of_values else (flat[:k], arr)
        return np.reshape(part, np.shape(mine))
    k = np.shape(arr)[axis]
    idx = np.arange(k, np.shape(ct)[axis]) if of_values else np.arange(k)
    return np.take(ct, idx, axis=axis)


def gather_vjp(ct, x, select, *args, **kwargs):
    """Cotangent of ``x`` for a function that only picks (or repeats) elements of ``x``.

    ``select(x, *args, **kwargs)`` is applied to the flat indices of ``x`` to find
    where each result element came from; ``ct`` is summed back onto those.
    """
    index = np.ravel(select(np.arange(np.size(x)).reshape(np.shape(x)), *args, **kwargs))
    ct = np.ravel(ct)
    g = np.bincount(index, weights=np.real(ct), minlength=np.size(x))
    if np.iscomplexobj(ct):  # bincount adds real weights: the imaginary parts on their own
        g = g + 1j * np.bincount(index, weights=ct.imag, minlength=np.size(x))
    return scalar_like(np.reshape(g, np.shape(x)), x)


def compress_vjp(ct, condition, a, axis=None):
    """Cotangent of ``a`` for ``np.compress(condition, a, axis)``."""
    return gather_vjp(ct, a, lambda i: np.compress(condition, i, axis))


def extract_vjp(ct, condition, arr):
    """Cotangent of ``arr`` for ``np.extract(condition, arr)``."""
    return gather_vjp(ct, arr, lambda i: np.extract(condition, i))


def _picked(condlist, shape):
    """For each condition of ``np.select``, where it is the first that holds."""
    taken = np.zeros(shape, dtype=bool)
    for cond in condlist:
        picked = np.logical_and(cond, np.logical_not(taken))
        yield picked
        taken = np.logical_or(taken, picked)
    yield np.logical_not(taken)  # where none holds: the default


def select_vjp(ct, condlist, choicelist):
    """Cotangents of the choices of ``np.select(condlist, choicelist, default)``: ``ct`` where
    a choice is the one picked, 0 elsewhere (real for a real choice)."""
    picks = list(_picked(condlist, np.shape(ct)))
    return TangentTuple(
        real_like(unbroadcast(np.where(picked, ct, 0.0), choice), choice)
        for picked, choice in zip(picks, choicelist, strict=False)
    )


def select_default_vjp(ct, condlist, default):
    """Cotangent of the default of ``np.select``: ``ct`` where no condition holds."""
    none_holds = list(_picked(condlist, np.shape(ct)))[-1]
    return unbroadcast(np.where(none_holds, ct, 0.0), default)
