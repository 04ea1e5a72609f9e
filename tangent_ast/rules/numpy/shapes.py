"""Shape functions, copies, conversions, constructors, selections, joining and splitting:
linear, so the forward rule is the call on the tangent and the reverse rule undoes the
rearrangement.
"""

from typing import Any

import numpy as np

from ... import runtime
from ...modes import Mode
from ...vocabulary.kinds import Kind, Tag, array_kind, constructor_kind, full_kind, transpose_kind
from ..registry import (
    ZERO,
    def_jointly_linear,
    def_linear,
    defjvp,
    defvjp,
    handles,
    primitive,
    specialize,
)

_fn: Any  # the loop variable of the tables below: NumPy functions of many types

# Reshaping is linear: the forward rule is the call itself.
def_linear(
    np.reshape, np.transpose, np.ravel, np.ndarray.reshape, np.ndarray.transpose, np.ndarray.ravel
)

defvjp(np.reshape, lambda ct, ans, x, *shape, **kwargs: np.reshape(ct, np.shape(x)))

defvjp(np.ndarray.reshape, lambda ct, ans, x, *shape, **kwargs: np.reshape(ct, np.shape(x)))

defvjp(np.ravel, lambda ct, ans, x: np.reshape(ct, np.shape(x)))

defvjp(np.ndarray.ravel, lambda ct, ans, x: np.reshape(ct, np.shape(x)))

defvjp(np.transpose, lambda ct, ans, x, axes=None: runtime.transpose_vjp(ct, axes))

defvjp(np.ndarray.transpose, lambda ct, ans, x, *axes: runtime.transpose_vjp(ct, axes or None))

for _fn in (np.zeros, np.ones, np.empty):
    primitive(_fn).kind = constructor_kind
primitive(np.full).kind = full_kind

for _fn in (np.transpose, np.ndarray.transpose, (np.ndarray, "T")):
    primitive(_fn).kind = transpose_kind

defjvp((np.ndarray, "T"), lambda dx, ans, x: dx.T)

defvjp((np.ndarray, "T"), lambda ct, ans, x: ct.T)

# --- shape functions: linear; the reverse rule undoes the rearrangement -----------------
def_linear(
    np.swapaxes,
    np.moveaxis,
    np.expand_dims,
    np.squeeze,
    np.atleast_1d,
    np.atleast_2d,
    np.atleast_3d,
    np.flip,
    np.fliplr,
    np.flipud,
    np.roll,
    np.broadcast_to,
    np.tile,
    np.repeat,
    np.diag,
    np.triu,
    np.tril,
    np.rot90,
    np.ndarray.swapaxes,
    np.ndarray.squeeze,
    np.ndarray.flatten,
    np.ndarray.repeat,
    np.ndarray.copy,
    np.ndarray.astype,
    np.copy,
    np.array,
    np.asarray,
    np.ascontiguousarray,
)

for _fn in (
    np.expand_dims,
    np.squeeze,
    np.atleast_1d,
    np.atleast_2d,
    np.atleast_3d,
    np.ndarray.squeeze,
    np.ndarray.flatten,
):
    defvjp(_fn, lambda ct, ans, x, *args, **kw: np.reshape(ct, np.shape(x)))

for _fn in (np.swapaxes, np.ndarray.swapaxes):
    defvjp(_fn, lambda ct, ans, x, axis1, axis2: np.swapaxes(ct, axis1, axis2))

defvjp(
    np.moveaxis,
    lambda ct, ans, x, source, destination: runtime.moveaxis_vjp(ct, source, destination),
)
handles(np.moveaxis, "source", "destination")

defvjp(np.flip, lambda ct, ans, x, axis=None: np.flip(ct, axis))

defvjp(np.fliplr, lambda ct, ans, x: np.fliplr(ct))

defvjp(np.flipud, lambda ct, ans, x: np.flipud(ct))

defvjp(np.rot90, lambda ct, ans, x, k=1, axes=(0, 1): np.rot90(ct, -k, axes))
handles(np.rot90, "k", "axes")

defvjp(np.roll, lambda ct, ans, x, shift, axis=None: runtime.roll_vjp(ct, shift, axis))
handles(np.roll, "shift", "axis")

defvjp(np.broadcast_to, lambda ct, ans, x, shape, **kw: runtime.unbroadcast(ct, x))
handles(np.broadcast_to, "shape")

defvjp(np.tile, lambda ct, ans, x, reps: runtime.tile_vjp(ct, x, reps))
handles(np.tile, "reps")

for _fn in (np.repeat, np.ndarray.repeat):
    defvjp(_fn, lambda ct, ans, x, repeats, axis=None: runtime.repeat_vjp(ct, x, repeats, axis))

defvjp(np.diag, lambda ct, ans, x, k=0: runtime.diag_vjp(ct, x, k))

defvjp(np.triu, lambda ct, ans, x, k=0: np.triu(ct, k))

defvjp(np.tril, lambda ct, ans, x, k=0: np.tril(ct, k))

for _fn in (np.sort,):
    defjvp(_fn, lambda dx, ans, x, *args, **kw: runtime.sort_jvp(dx, x, *args, **kw))
    defvjp(_fn, lambda ct, ans, x, *args, **kw: runtime.sort_vjp(ct, x, *args, **kw))
handles(np.sort, "axis", "kind")

# partition: a rearrangement of x, like sort (the k-th element in its sorted place)
defjvp(
    np.partition,
    lambda dx, ans, a, kth, axis=-1, kind="introselect", order=None: runtime.partition_jvp(
        dx, ans, a, axis
    ),
    None,
)
defvjp(
    np.partition,
    lambda ct, ans, a, kth, axis=-1, kind="introselect", order=None: runtime.partition_vjp(
        ct, ans, a, axis
    ),
    None,
)
handles(np.partition, "axis", "kind")

# identities: copies and conversions of one array
for _fn in (np.copy, np.ascontiguousarray, np.ndarray.copy):
    defvjp(_fn, lambda ct, ans, x, *args, **kw: ct)
handles(np.ascontiguousarray, "dtype")

# np.array/np.asarray of one array is an identity; of a list of arrays and numbers the
# cotangent is split back into the list's entries (a TangentTuple).
for _fn in (np.array, np.asarray):
    defvjp(_fn, lambda ct, ans, x, *args, **kw: runtime.array_vjp(ct, x))
    specialize(
        _fn, Mode.REVERSE, lambda x, *rest: x.tag is Tag.ARRAY, lambda ct, ans, x, *args, **kw: ct
    )

    primitive(_fn).kind = array_kind

defvjp(np.ndarray.astype, lambda ct, ans, x, *args, **kw: runtime.astype_vjp(ct, x))

# --- selections and rearrangements: linear ---------------------------------------------
defjvp(
    np.ediff1d,
    lambda dx, ans, ary, to_end=None, to_begin=None: runtime.ediff1d_jvp(dx, ary, to_end, to_begin),
)

defvjp(
    np.ediff1d,
    lambda ct, ans, ary, to_end=None, to_begin=None: runtime.ediff1d_vjp(ct, ary, to_end, to_begin),
)
handles(np.ediff1d, "to_end", "to_begin")

defjvp(
    np.append,
    lambda d, ans, arr, values, axis=None: np.append(d, np.zeros_like(values, dtype=float), axis),
    lambda d, ans, arr, values, axis=None: np.append(np.zeros_like(arr, dtype=float), d, axis),
)

defvjp(
    np.append,
    lambda ct, ans, arr, values, axis=None: runtime.append_vjp(ct, arr, values, axis),
    lambda ct, ans, arr, values, axis=None: runtime.append_vjp(
        ct, arr, values, axis, of_values=True
    ),
)

def_linear(np.delete, np.resize, np.diagflat, np.rollaxis, np.ndarray.take, np.ndarray.compress)

defvjp(
    np.delete,
    lambda ct, ans, arr, obj, axis=None: runtime.gather_vjp(ct, arr, np.delete, obj, axis),
    None,
)

defvjp(np.resize, lambda ct, ans, a, new_shape: runtime.gather_vjp(ct, a, np.resize, new_shape))
handles(np.resize, "new_shape")

defvjp(np.diagflat, lambda ct, ans, v, k=0: np.reshape(np.diagonal(ct, k), np.shape(v)))
handles([np.diag, np.triu, np.tril, np.diagflat], "k")

defvjp(
    np.rollaxis,
    lambda ct, ans, a, axis, start=0: runtime.gather_vjp(ct, a, np.rollaxis, axis, start),
)
handles(np.rollaxis, "axis", "start")

defvjp(
    np.ndarray.take,
    lambda ct, ans, x, indices, *args, **kw: runtime.take_vjp(ct, x, indices, *args, **kw),
    None,
)

defvjp(
    np.ndarray.compress,
    lambda ct, ans, x, condition, axis=None: runtime.compress_vjp(ct, condition, x, axis),
    None,
)
handles([np.reshape, np.ndarray.reshape], "shape")
handles([np.transpose, np.ndarray.transpose], "axes")
handles([np.swapaxes, np.ndarray.swapaxes], "axis1", "axis2")
handles([np.repeat, np.ndarray.repeat], "repeats", "axis")
handles([np.ndarray.copy, np.copy], "order")
# Conversions: a float dtype keeps the derivative (binding.py checks that it is one).
handles([np.ndarray.astype, np.array, np.asarray, np.asanyarray], "dtype", "order", "copy")

defjvp(np.compress, None, lambda d, ans, condition, a, axis=None: np.compress(condition, d, axis))

defvjp(
    np.compress,
    None,
    lambda ct, ans, condition, a, axis=None: runtime.compress_vjp(ct, condition, a, axis),
)

defjvp(np.extract, None, lambda d, ans, condition, arr: np.extract(condition, d))

defvjp(np.extract, None, lambda ct, ans, condition, arr: runtime.extract_vjp(ct, condition, arr))

# --- joining: linear in the list; the reverse rule splits the cotangent back ----------
def_linear(np.concatenate, np.stack, np.hstack, np.vstack, np.dstack, np.column_stack, np.block)

defvjp(
    np.concatenate, lambda ct, ans, xs, *args, **kw: runtime.concatenate_vjp(ct, xs, *args, **kw)
)

defvjp(np.stack, lambda ct, ans, xs, *args, **kw: runtime.stack_vjp(ct, xs, *args, **kw))

defvjp(np.hstack, lambda ct, ans, xs, **kw: runtime.gather_list_vjp(ct, xs, np.hstack))

defvjp(np.vstack, lambda ct, ans, xs, **kw: runtime.gather_list_vjp(ct, xs, np.vstack))

defvjp(np.dstack, lambda ct, ans, xs: runtime.gather_list_vjp(ct, xs, np.dstack))

# np.row_stack: NumPy's deprecated name of np.vstack (gone in a later NumPy); its rules call
# np.vstack, which does not warn
if hasattr(np, "row_stack"):
    defjvp(np.row_stack, lambda dxs, ans, xs, **kw: np.vstack(dxs, **kw))
    defvjp(np.row_stack, lambda ct, ans, xs, **kw: runtime.gather_list_vjp(ct, xs, np.vstack))
    handles(np.row_stack, sequences=True)

defvjp(np.column_stack, lambda ct, ans, xs: runtime.gather_list_vjp(ct, xs, np.column_stack))

defvjp(np.block, lambda ct, ans, xs: runtime.gather_list_vjp(ct, xs, np.block))
# Rules whose differentiable arguments may be lists or tuples of arrays and numbers.
handles(
    [
        np.array,
        np.asarray,
        np.concatenate,
        np.stack,
        np.hstack,
        np.vstack,
        np.dstack,
        np.column_stack,
        np.block,
    ],
    sequences=True,
)

# --- splitting: linear; the reverse rule joins the pieces' cotangents -----------------
def_linear(np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit)

defvjp(
    np.split,
    lambda ct, ans, ary, indices_or_sections, axis=0: runtime.split_vjp(ct, ans, axis),
    None,
)

defvjp(
    np.array_split,
    lambda ct, ans, ary, indices_or_sections, axis=0: runtime.split_vjp(ct, ans, axis),
    None,
)

defvjp(
    np.hsplit,
    lambda ct, ans, ary, indices_or_sections: runtime.split_vjp(
        ct, ans, runtime.split_axis(ary, 1)
    ),
    None,
)

defvjp(np.vsplit, lambda ct, ans, ary, indices_or_sections: runtime.split_vjp(ct, ans, 0), None)

defvjp(np.dsplit, lambda ct, ans, ary, indices_or_sections: runtime.split_vjp(ct, ans, 2), None)

# the pieces are a list (their cotangents, and those of their cotangents, add item by item)
for _fn in (np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit):
    primitive(_fn).kind = lambda *args, **keywords: Kind(Tag.LIST)

if hasattr(np, "unstack"):  # NumPy 2.1+
    def_linear(np.unstack)
    primitive(np.unstack).kind = lambda *args, **keywords: Kind(Tag.TUPLE)

    defvjp(np.unstack, lambda ct, ans, x, axis=0: runtime.unstack_vjp(ct, ans, axis))


# np.full(shape, v) and np.full_like(a, v): linear in the fill value v (broadcast to the
# shape); a and shape only give the shape.
defjvp(np.full, None, lambda dv, ans, shape, fill_value: np.full(np.shape(ans), dv))

defjvp(np.full_like, ZERO, lambda dv, ans, a, fill_value: runtime.full_like_jvp(dv, ans))

defvjp(
    np.full_like, ZERO, lambda ct, ans, a, fill_value: runtime.full_like_vjp(ct, ans, fill_value)
)

defvjp(np.full, None, lambda ct, ans, shape, fill_value: runtime.unbroadcast(ct, fill_value))

# select picks, element by element, the first choice whose condition holds (else the
# default): linear in the choices and the default together.
def_jointly_linear(np.select, 1, 2)

defvjp(
    np.select,
    None,
    lambda ct, ans, condlist, choicelist, default=0: runtime.select_vjp(ct, condlist, choicelist),
    lambda ct, ans, condlist, choicelist, default=0: runtime.select_default_vjp(
        ct, condlist, default
    ),
)
handles(np.select, sequences=True)
