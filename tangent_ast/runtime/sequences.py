"""Cotangents of functions taking or returning several arrays (a list or a tuple of them).

A cotangent of a list argument is a ``TangentTuple`` of the entries' cotangents; a
cotangent arriving at a tuple result holds one per entry, ``None`` for a zero.

>>> stack_vjp(np.array([[1.0, 2.0], [3.0, 4.0]]), [np.zeros(2), np.zeros(2)])
TangentTuple((array([1., 2.]), array([3., 4.])))
"""

import numpy as np

from .shapes import scalar_like
from .tangents import TangentTuple, is_record


def leaf_like(g, x):
    """Cotangent ``g`` shaped like the element ``x`` (a float for a Python scalar; None for an
    int): real where ``x`` is (``dL = Re(ct * dx)``), as a list of real and complex arrays
    gets no projection of its own."""
    if isinstance(x, (bool, np.bool_, int, np.integer, str)) or x is None:
        return None
    if np.iscomplexobj(g) and not np.iscomplexobj(x):
        g = np.real(g)
    if isinstance(x, np.ndarray) and x.dtype.kind not in "fc":
        return np.reshape(g, np.shape(x))
    return scalar_like(np.reshape(g, np.shape(x)), x)


def _index_leaves(xs, start=0):
    """``xs`` (nested lists/tuples of arrays and scalars) with each element replaced by its
    flat positions in one numbering of all elements; also the next free position."""
    if isinstance(xs, (list, tuple)) and not isinstance(xs, np.ndarray):
        parts = []
        for x in xs:
            part, start = _index_leaves(x, start)
            parts.append(part)
        return (parts if isinstance(xs, list) else tuple(parts)), start
    n = int(np.size(xs))
    return np.arange(start, start + n).reshape(np.shape(xs)), start + n


def _split_leaves(flat, xs, start=0):
    """The pieces of the flat cotangent ``flat`` belonging to the elements of ``xs``, nested
    like ``xs`` as ``TangentTuple``s; also the next position."""
    if isinstance(xs, (list, tuple)) and not isinstance(xs, np.ndarray):
        parts = []
        for x in xs:
            part, start = _split_leaves(flat, x, start)
            parts.append(part)
        return TangentTuple(parts), start
    n = int(np.size(xs))
    return leaf_like(flat[start : start + n], xs), start + n


def gather_list_vjp(ct, xs, fn, *args, **kwargs):
    """Cotangents of the elements of ``xs`` for ``fn(xs, *args, **kwargs)``, a function that
    only places (or repeats) the elements' entries (``block``, ``stack``, ``hstack``, ...).

    ``fn`` is applied to the elements' flat positions to find where each result entry
    came from; ``ct`` is summed back onto those. The result is a ``TangentTuple`` nested
    like ``xs``.
    """
    index, total = _index_leaves(xs)
    where = np.ravel(np.asarray(fn(index, *args, **kwargs)))
    ct = np.ravel(np.asarray(ct))
    flat = np.bincount(where, weights=ct.real.astype(float), minlength=total)
    if np.iscomplexobj(ct):  # bincount adds real weights: the imaginary parts on their own
        flat = flat + 1j * np.bincount(where, weights=ct.imag, minlength=total)
    return _split_leaves(flat, xs)[0]


def gathered(c, xs, fn):
    """``fn`` of the cotangents ``c`` of the elements of ``xs`` (zeros where one has none): the
    transpose of ``gather_list_vjp``, which sums a cotangent back onto the elements."""
    return np.asarray(fn(_zeros_for_missing(c, xs)))


def _zeros_for_missing(c, xs):
    if isinstance(xs, (list, tuple)) and not isinstance(xs, np.ndarray):
        return [_zeros_for_missing(t, x) for t, x in zip(c, xs, strict=True)]
    return np.zeros(np.shape(xs)) if c is None else c


def concatenate_vjp(ct, xs, axis=0, out=None, dtype=None, casting="same_kind"):
    """Cotangents of the arrays ``xs`` for ``np.concatenate(xs, axis)``: ``ct`` split back."""
    if axis is None:
        flat = np.ravel(ct)
        bounds = np.cumsum([np.size(x) for x in xs])[:-1]
        return TangentTuple(
            leaf_like(p, x) for p, x in zip(np.split(flat, bounds), xs, strict=True)
        )
    bounds = np.cumsum([np.shape(x)[axis] for x in xs])[:-1]
    return TangentTuple(
        leaf_like(p, x) for p, x in zip(np.split(ct, bounds, axis=axis), xs, strict=True)
    )


def _slices(a, axis):
    """``np.unstack(a, axis)`` (NumPy 2.1+), written with ``np.take``."""
    return [np.take(a, i, axis=axis) for i in range(np.shape(a)[axis])]


def stack_vjp(ct, xs, axis=0, out=None, dtype=None, casting="same_kind"):
    """Cotangents of the arrays ``xs`` for ``np.stack(xs, axis)``: the slices of ``ct``."""
    return TangentTuple(
        leaf_like(p, x)
        for p, x in zip(
            _slices(ct if hasattr(ct, "ndim") else np.asarray(ct), axis), xs, strict=True
        )
    )


def array_vjp(ct, x, *args, **kwargs):
    """Cotangent of ``x`` for ``np.array(x)``/``np.asarray(x)``: ``ct`` itself for an array,
    its entries (as a ``TangentTuple``) for a list of arrays and numbers."""
    if isinstance(x, (list, tuple)) and not is_record(x):
        return gather_list_vjp(ct, x, np.array)
    return ct


def _filled(cts, like):
    """The cotangents ``cts`` with ``None`` (no cotangent) replaced by zeros shaped like
    ``like``."""
    return [
        np.zeros(np.shape(a), dtype=np.result_type(a, float)) if c is None else c
        for c, a in zip(cts, like, strict=True)
    ]


def split_vjp(ct, ans, axis=0):
    """Cotangent of the array for ``np.split``/``np.array_split`` (and ``h/v/dsplit`` with
    their axis): the pieces' cotangents joined back."""
    return np.concatenate(_filled(ct, ans), axis=axis)


def split_axis(ary, default):
    """The axis ``hsplit`` (1, or 0 for a vector) splits along; ``default`` for the others."""
    return 0 if default == 1 and np.ndim(ary) == 1 else default


def unstack_vjp(ct, ans, axis=0):
    """Cotangent of ``x`` for ``np.unstack(x, axis)``: the slices' cotangents stacked."""
    return np.stack(_filled(ct, ans), axis=axis)


def sorted_order(keys, reverse=False):
    """The positions of ``keys`` in sorted order, equal keys in their order (as ``sorted``
    orders them): what ``sorted(xs, key=f)``, ``min(xs, key=f)`` and ``max(xs, key=f)`` are
    lowered to, so that the derivative follows the items the order picks."""
    return sorted(range(len(keys)), key=keys.__getitem__, reverse=reverse)
