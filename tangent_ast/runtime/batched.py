"""Batched tangents: ``n`` tangents of one value carried through derived code at once.

A :class:`Batched` holds the tangents as one array ``stack`` with a leading batch axis,
``stack[k]`` the ``k``-th tangent, and looks like *one* tangent to the code it flows
through: its ``shape``, ``ndim`` and ``size`` are the value's. Every NumPy operation on it
means "the operation on each tangent": ufuncs, operators, indexing and the array functions
below are written once for the whole stack (they broadcast over a leading axis once the
batch axis is kept apart from the value's axes); any other NumPy function is applied to
each tangent in turn, which is right for every function and merely slower. So the forward
rules (and the rules of the runtime helpers reverse rules call) need no batched form of
their own: NumPy's dispatch protocols (``__array_ufunc__``, ``__array_function__``) route
each operation here. What cannot be routed (``np.asarray``, ``float``, ``bool``, ``len``)
raises :class:`BatchingError`, and the caller derives one direction at a time instead.

>>> x = np.array([1.0, 2.0, 3.0])
>>> t = Batched(np.eye(3))  # the three unit tangents of x
>>> t.shape
(3,)
>>> (np.cos(x) * t).stack  # each tangent times cos(x): the Jacobian's rows
array([[ 0.54030231, -0.        , -0.        ],
       [ 0.        , -0.41614684, -0.        ],
       [ 0.        , -0.        , -0.9899925 ]])
>>> np.sum(t[1:] * x[:-1]).stack
array([0., 1., 2.])
"""

import numpy as np
from numpy.lib.array_utils import normalize_axis_index
from numpy.lib.mixins import NDArrayOperatorsMixin


class BatchingError(TypeError):
    """An operation a batch of tangents cannot go through as one value."""


class ArrayMethods(NDArrayOperatorsMixin):
    """The methods of an ndarray that tangent code calls, as the NumPy functions they are
    (``t.sum(axis=0)`` is ``np.sum(t, axis=0)``), so that a tangent-like class answers them
    through its ``__array_function__``; operators through ``__array_ufunc__``."""

    __slots__ = ()

    @property
    def T(self):
        return np.transpose(self)

    @property
    def real(self):
        return np.real(self)

    @property
    def imag(self):
        return np.imag(self)

    def conj(self):
        return np.conj(self)

    conjugate = conj

    def sum(self, *args, **kwargs):
        return np.sum(self, *args, **kwargs)

    def mean(self, *args, **kwargs):
        return np.mean(self, *args, **kwargs)

    def reshape(self, *shape, **kwargs):
        return np.reshape(self, shape[0] if len(shape) == 1 else shape, **kwargs)

    def transpose(self, *axes):
        return np.transpose(self, axes[0] if len(axes) == 1 else (axes or None))

    def ravel(self, order="C"):
        return np.ravel(self, order)

    flatten = ravel

    def squeeze(self, axis=None):
        return np.squeeze(self, axis)

    def swapaxes(self, a, b):
        return np.swapaxes(self, a, b)

    def dot(self, other):
        return np.dot(self, other)

    def cumsum(self, axis=None):
        return np.cumsum(self, axis)


class Batched(ArrayMethods):
    """``n`` tangents of a value of shape ``shape``, as ``stack`` of shape ``(n, *shape)``."""

    __slots__ = ("stack",)

    def __init__(self, stack):
        self.stack = np.asarray(stack)
        if self.stack.ndim == 0:
            raise BatchingError("a batch of tangents needs a leading batch axis")

    def __repr__(self):
        return f"Batched({self.stack!r})"

    @property
    def n(self):
        return self.stack.shape[0]

    @property
    def shape(self):
        return self.stack.shape[1:]

    @property
    def ndim(self):
        return self.stack.ndim - 1

    @property
    def size(self):
        return int(np.prod(self.shape))

    @property
    def dtype(self):
        return self.stack.dtype

    def __array__(self, dtype=None, copy=None):
        raise BatchingError("a batch of tangents cannot become one array")

    def _refuse(self, *args):
        raise BatchingError("a batch of tangents has no single value")

    __float__ = __complex__ = __int__ = __index__ = __bool__ = __len__ = __iter__ = _refuse

    def __getitem__(self, index):
        index = index if isinstance(index, tuple) else (index,)
        if not _keeps_axes_in_place(index):
            return _per_tangent(lambda t: t[index], (self,), {})
        picked = self.stack[_batch_first(index)]
        if picked.ndim == 1 and not any(part is Ellipsis for part in index):
            picked = picked.copy()  # NumPy gives a scalar, not a view, for one element
        return Batched(picked)

    def __setitem__(self, index, value):
        index = index if isinstance(index, tuple) else (index,)
        if not _keeps_axes_in_place(index):
            for k in range(self.n):
                self.stack[k][index] = _tangent(value, k)
            return
        target = self.stack[_batch_first(index)]
        self.stack[_batch_first(index)] = _aligned(value, target.ndim - 1)

    def copy(self, order="C"):
        return Batched(self.stack.copy())

    def astype(self, dtype, *args, **kwargs):
        return Batched(self.stack.astype(dtype, *args, **kwargs))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.pop("out", None)
        if out is not None and not all(isinstance(o, Batched) for o in out):
            raise BatchingError("a batch of tangents written into one array")
        if method == "at" and not isinstance(inputs[0], Batched):
            raise BatchingError("a batch of tangents added into one array")
        if kwargs.get("where", True) is not True:
            result = _per_tangent(getattr(ufunc, method), inputs, _with_out(kwargs, out))
        elif ufunc.signature is not None:
            result = _matmul(inputs, kwargs) if ufunc is np.matmul else None
            if result is None:
                result = _per_tangent(ufunc, inputs, kwargs)
        elif method == "__call__":
            depth = max(np.ndim(x) for x in inputs)
            result = ufunc(*(_aligned(x, depth) for x in inputs), **kwargs)
        elif method in ("reduce", "accumulate") and isinstance(inputs[0], Batched):
            x = inputs[0]
            axis = kwargs.pop("axis", 0)
            axis = _shifted(axis, x.ndim, keep_none=method == "reduce")
            result = getattr(ufunc, method)(x.stack, axis=axis, **kwargs)
        else:
            return _per_tangent(getattr(ufunc, method), inputs, _with_out(kwargs, out))
        return _written(result, out)

    def __array_function__(self, func, types, args, kwargs):
        if kwargs.get("out") is not None and not isinstance(kwargs["out"], Batched):
            raise BatchingError(f"a batch of tangents written into one array by {func.__name__}")
        if func in _ABOUT_THE_VALUE:
            return _ABOUT_THE_VALUE[func](*args, **kwargs)
        if func in _IN_PLACE and not isinstance(args[0], Batched):
            raise BatchingError(f"a batch of tangents written into one array by {func.__name__}")
        batched = _BATCHED.get(func)
        if batched is not None:
            result = batched(*args, **kwargs)
            if result is not NotImplemented:
                return result
        return _per_tangent(func, args, kwargs)


def _batch_first(index):
    """A value's index as an index of the stack: every tangent, then ``index``."""
    return (slice(None), *index)


def _with_out(kwargs, out):
    return kwargs if out is None else dict(kwargs, out=out)


def _keeps_axes_in_place(index):
    """Whether ``stack[:, *index]`` puts the batch axis first: NumPy moves the axes of
    advanced indices to the front when they are not next to each other."""
    advanced = [
        i
        for i, part in enumerate(index)
        if isinstance(part, (list, np.ndarray, Batched)) and not isinstance(part, str)
    ]
    if any(isinstance(index[i], Batched) for i in advanced):
        return False
    return not advanced or advanced[-1] - advanced[0] == len(advanced) - 1


def _aligned(x, depth):
    """``x`` as an operand of an elementwise operation whose value has ``depth`` axes: a
    batch gets length-one axes after its batch axis, so NumPy broadcasting lines up the
    value's axes and never the batch axis with them."""
    if not isinstance(x, Batched):
        return x
    return x.stack.reshape((x.n,) + (1,) * (depth - x.ndim) + x.shape)


def _shifted(axis, ndim, keep_none=True):
    """A value's ``axis`` (an int, a tuple, or None for all) as an axis of the stack."""
    if axis is None:
        return tuple(range(1, ndim + 1)) if keep_none else None
    if isinstance(axis, tuple):
        return tuple(_shifted(a, ndim) for a in axis)
    return normalize_axis_index(int(axis), ndim) + 1


def _written(result, out):
    """The result of a ufunc, written into ``out`` where one was given."""
    if isinstance(result, tuple):
        return tuple(_written(r, o) for r, o in zip(result, out or (None,) * len(result)))
    if out is None or (isinstance(out, tuple) and out[0] is None):
        return result if isinstance(result, Batched) else Batched(result)
    target = out[0] if isinstance(out, tuple) else out
    if not isinstance(target, Batched):
        raise BatchingError("a batch of tangents written into one array")
    target.stack[...] = result.stack if isinstance(result, Batched) else result
    return target


def _batch_size(values):
    sizes = {v.n for v in values if isinstance(v, Batched)}
    if len(sizes) != 1:
        raise BatchingError(f"batches of different sizes meet: {sorted(sizes)}")
    return sizes.pop()


def _tangent(value, k, plain=None):
    """The ``k``-th tangent of ``value`` (itself when it is not a batch), inside lists,
    tuples and dicts too. An array that is not a batch is given as a copy, recorded in
    ``plain`` with the original: a function writing into it once per tangent would leave
    the last tangent's result in it, so a write is found and refused."""
    if isinstance(value, Batched):
        return value.stack[k]
    if isinstance(value, np.ndarray) and plain is not None:
        copy = value.copy()
        plain.append((value, copy))
        return copy
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_tangent(v, k, plain) for v in value)
    if isinstance(value, dict):
        return {key: _tangent(v, k, plain) for key, v in value.items()}
    return value


def _batches_in(values):
    for v in values:
        if isinstance(v, Batched):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from _batches_in(v)
        elif isinstance(v, dict):
            yield from _batches_in(v.values())


def _per_tangent(func, args, kwargs):
    """``func`` applied to each tangent in turn, the results stacked: right for any
    function of one tangent."""
    n = _batch_size(list(_batches_in([*args, *kwargs.values()])))
    results = []
    for k in range(n):
        plain: list = []
        results.append(func(*_tangent(args, k, plain), **_tangent(kwargs, k, plain)))
        if any(copy.tobytes() != original.tobytes() for original, copy in plain):
            raise BatchingError(f"a batch of tangents written into one array by {func}")
    return _stacked(results)


def _stacked(results):
    first = results[0]
    if first is None:
        return None
    if isinstance(first, tuple):
        return tuple(_stacked(list(parts)) for parts in zip(*results, strict=True))
    return Batched(np.stack([np.asarray(r) for r in results]))


def _matmul(inputs, kwargs):
    """``a @ b`` with one operand a batch: a vector operand gets the length-one axis
    ``matmul`` gives it, so the batch axis is a stacking axis and never a matrix axis."""
    if kwargs or all(isinstance(x, Batched) for x in inputs):
        return None
    a, b = inputs
    left_vector, right_vector = np.ndim(a) == 1, np.ndim(b) == 1
    shapes = [
        (1, *np.shape(a)) if left_vector else np.shape(a),
        (*np.shape(b), 1) if right_vector else np.shape(b),
    ]
    depth = max(len(s) for s in shapes)
    operands = [
        x.stack.reshape((x.n,) + (1,) * (depth - len(s)) + s)
        if isinstance(x, Batched)
        else np.reshape(x, s)
        for x, s in zip((a, b), shapes, strict=True)
    ]
    result = np.matmul(*operands)
    if right_vector:
        result = result[..., 0]
    if left_vector:
        result = result[..., 0, :] if not right_vector else result[..., 0]
    return Batched(result)


def _dot(a, b, out=None):
    if out is not None or (isinstance(a, Batched) and isinstance(b, Batched)):
        return NotImplemented
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return np.multiply(a, b)
    if isinstance(a, Batched):  # sums over the last axis of a: the stack's too
        return Batched(np.dot(a.stack, b))
    axis = 0 if b.ndim == 1 else b.ndim - 2
    result = np.tensordot(a, b.stack, axes=([-1], [axis + 1]))
    return Batched(np.moveaxis(result, np.ndim(a) - 1, 0))


def _reduction(func):
    def batched(x, axis=None, *args, **kwargs):
        if not isinstance(x, Batched) or args or set(kwargs) - {"dtype", "keepdims"}:
            return NotImplemented
        return Batched(func(x.stack, axis=_shifted(axis, x.ndim), **kwargs))

    return batched


def _scan(func):
    def batched(x, axis=None, *args, **kwargs):
        if not isinstance(x, Batched) or args or set(kwargs) - {"dtype"}:
            return NotImplemented
        if axis is None:
            return Batched(func(x.stack.reshape(x.n, -1), axis=1, **kwargs))
        return Batched(func(x.stack, axis=_shifted(axis, x.ndim), **kwargs))

    return batched


def _reshape(x, shape=None, order="C", **kwargs):
    shape = kwargs.pop("newshape", shape)
    if not isinstance(x, Batched) or order != "C" or kwargs:
        return NotImplemented
    shape = (shape,) if np.ndim(shape) == 0 else tuple(shape)
    return Batched(x.stack.reshape((x.n, *shape)))


def _ravel(x, order="C"):
    return _reshape(x, -1, order)


def _transpose(x, axes=None):
    if not isinstance(x, Batched):
        return NotImplemented
    axes = tuple(reversed(range(x.ndim))) if axes is None else tuple(axes)
    return Batched(np.transpose(x.stack, (0, *(int(a) % x.ndim + 1 for a in axes))))


def _swapaxes(x, a, b):
    if not isinstance(x, Batched):
        return NotImplemented
    return Batched(np.swapaxes(x.stack, _shifted(a, x.ndim), _shifted(b, x.ndim)))


def _moveaxis(x, source, destination):
    if not isinstance(x, Batched):
        return NotImplemented
    return Batched(
        np.moveaxis(
            x.stack, _shifted(_tuple(source), x.ndim), _shifted(_tuple(destination), x.ndim)
        )
    )


def _tuple(axis):
    return tuple(axis) if isinstance(axis, (list, tuple)) else axis


def _expand_dims(x, axis):
    if not isinstance(x, Batched):
        return NotImplemented
    return Batched(np.expand_dims(x.stack, _shifted(_tuple(axis), x.ndim + np.size(axis))))


def _squeeze(x, axis=None):
    if not isinstance(x, Batched):
        return NotImplemented
    if axis is None:
        axis = tuple(i for i, size in enumerate(x.shape) if size == 1)
    return Batched(np.squeeze(x.stack, _shifted(_tuple(axis), x.ndim)))


def _full(values):
    """Each of ``values`` as a stack of ``n`` tangents (a value that is not a batch is the
    same tangent ``n`` times)."""
    n = _batch_size(values)
    return [
        v.stack if isinstance(v, Batched) else np.broadcast_to(v, (n, *np.shape(v))) for v in values
    ]


def _concatenate(arrays, axis=0, **kwargs):
    arrays = list(arrays)
    if kwargs.get("out") is not None or kwargs.get("casting") or kwargs.get("dtype"):
        return NotImplemented
    stacks = _full(arrays)
    if axis is None:
        return Batched(np.concatenate([s.reshape(s.shape[0], -1) for s in stacks], axis=1))
    return Batched(np.concatenate(stacks, axis=_shifted(axis, stacks[0].ndim - 1)))


def _stack(arrays, axis=0, **kwargs):
    arrays = list(arrays)
    if kwargs.get("out") is not None or kwargs.get("casting") or kwargs.get("dtype"):
        return NotImplemented
    stacks = _full(arrays)
    return Batched(np.stack(stacks, axis=_shifted(axis, stacks[0].ndim)))


def _where(condition, x=None, y=None):
    if x is None or y is None:
        return NotImplemented
    depth = max(np.ndim(v) for v in (condition, x, y))
    return Batched(np.where(*(_aligned(v, depth) for v in (condition, x, y))))


def _elementwise(func):
    def batched(x, *args, **kwargs):
        if args or kwargs or not isinstance(x, Batched):
            return NotImplemented
        return Batched(func(x.stack))

    return batched


def _broadcast_to(x, shape, subok=False):
    if not isinstance(x, Batched):
        return NotImplemented
    shape = (shape,) if np.ndim(shape) == 0 else tuple(shape)
    return Batched(np.broadcast_to(_aligned(x, len(shape)), (x.n, *shape)))


def _like(func):
    def batched(x, *args, dtype=None, shape=None, **kwargs):
        if not isinstance(x, Batched) or args or kwargs:
            return NotImplemented
        shape = x.shape if shape is None else ((shape,) if np.ndim(shape) == 0 else tuple(shape))
        return Batched(func(x.stack, dtype=dtype, shape=(x.n, *shape)))

    return batched


def _full_like(x, fill_value, dtype=None, shape=None, **kwargs):
    if not isinstance(x, Batched) or kwargs:
        return NotImplemented
    shape = x.shape if shape is None else ((shape,) if np.ndim(shape) == 0 else tuple(shape))
    return Batched(np.full_like(x.stack, fill_value, dtype=dtype, shape=(x.n, *shape)))


def _copy(x, *args, **kwargs):
    return x.copy() if isinstance(x, Batched) and not args and not kwargs else NotImplemented


def _flip(x, axis=None):
    if not isinstance(x, Batched):
        return NotImplemented
    return Batched(np.flip(x.stack, _shifted(_tuple(axis), x.ndim)))


def _take(x, indices, axis=None, **kwargs):
    if not isinstance(x, Batched) or kwargs or isinstance(indices, Batched):
        return NotImplemented
    if axis is None:
        return Batched(np.take(x.stack.reshape(x.n, -1), indices, axis=1))
    return Batched(np.take(x.stack, indices, axis=_shifted(axis, x.ndim)))


def _einsum(subscripts, *operands, **kwargs):
    batches = [i for i, x in enumerate(operands) if isinstance(x, Batched)]
    if (
        not isinstance(subscripts, str)
        or "->" not in subscripts
        or len(batches) != 1
        or kwargs.get("out") is not None
    ):
        return NotImplemented
    inputs, output = subscripts.replace(" ", "").split("->")
    terms = inputs.split(",")
    fresh = next(
        c for c in "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA" if c not in subscripts
    )
    terms[batches[0]] = fresh + terms[batches[0]]
    stacks = [x.stack if isinstance(x, Batched) else x for x in operands]
    return Batched(np.einsum(f"{','.join(terms)}->{fresh}{output}", *stacks, **kwargs))


def _trace_like(func):
    def batched(x, offset=0, axis1=0, axis2=1, **kwargs):
        if not isinstance(x, Batched) or kwargs:
            return NotImplemented
        return Batched(func(x.stack, offset, _shifted(axis1, x.ndim), _shifted(axis2, x.ndim)))

    return batched


def _diff(x, n=1, axis=-1, **kwargs):
    if not isinstance(x, Batched) or kwargs:
        return NotImplemented
    return Batched(np.diff(x.stack, n, axis=_shifted(axis, x.ndim)))


# Questions about the value, answered for the value (not for the stack).
_ABOUT_THE_VALUE: dict = {
    np.shape: lambda x: x.shape,
    np.ndim: lambda x: x.ndim,
    np.size: lambda x, axis=None: x.size if axis is None else x.shape[axis],
    np.iscomplexobj: lambda x: np.iscomplexobj(x.stack),
    np.isrealobj: lambda x: np.isrealobj(x.stack),
    np.result_type: lambda *xs: np.result_type(
        *(x.stack if isinstance(x, Batched) else x for x in xs)
    ),
}

# Functions that write into their first argument: tangent by tangent, that must be a batch.
_IN_PLACE = {np.copyto, np.put, np.place, np.putmask, np.fill_diagonal, np.put_along_axis}

# NumPy functions written once for a whole batch; any other is applied tangent by tangent.
_BATCHED = {
    np.sum: _reduction(np.sum),
    np.mean: _reduction(np.mean),
    np.cumsum: _scan(np.cumsum),
    np.reshape: _reshape,
    np.ravel: _ravel,
    np.transpose: _transpose,
    np.swapaxes: _swapaxes,
    np.moveaxis: _moveaxis,
    np.expand_dims: _expand_dims,
    np.squeeze: _squeeze,
    np.concatenate: _concatenate,
    np.stack: _stack,
    np.where: _where,
    np.real: _elementwise(np.real),
    np.imag: _elementwise(np.imag),
    np.broadcast_to: _broadcast_to,
    np.zeros_like: _like(np.zeros_like),
    np.ones_like: _like(np.ones_like),
    np.empty_like: _like(np.empty_like),
    np.full_like: _full_like,
    np.copy: _copy,
    np.dot: _dot,
    np.flip: _flip,
    np.take: _take,
    np.einsum: _einsum,
    np.trace: _trace_like(np.trace),
    np.diagonal: _trace_like(np.diagonal),
    np.diff: _diff,
}
