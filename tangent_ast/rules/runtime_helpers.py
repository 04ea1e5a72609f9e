"""Rules of the helpers generated code calls, so that a derived rule can be differentiated
again (forward over reverse for Hessian-vector products, and higher orders).

Most helpers are the transposes of linear maps: ``unbroadcast(g, x)`` sums ``g`` down to the
shape of ``x`` (its transpose broadcasts back), ``getitem_vjp(ct, x, i)`` places ``ct`` at
``x[i]`` (its transpose reads ``[i]``). Each is linear in its first argument; the others
give only a shape (their derivative is zero) or an index.
"""

import inspect
from dataclasses import replace
from typing import Any

import gast
import numpy as np

from .. import runtime
from ..runtime.linalg import _check_qr
from ..runtime.signal import _check_period, _gradient_form, _interp_index
from ..runtime.spectral import _check_phase_free, _check_svd
from ..runtime.statistics import _check_linear
from ..vocabulary.kinds import FLOAT, INT, UNKNOWN, Kind, Tag, scalar_dtype
from .registry import (
    ZERO,
    Built,
    ByConstant,
    SameCall,
    broadcasting,
    checks_only,
    def_jointly_linear,
    def_linear,
    defjvp,
    defvjp,
    handles,
    holds_for_complex,
    nondifferentiable,
    primitive,
)

_fn: Any  # the loop variable of the tables below

LINEAR = (
    runtime.unbroadcast,
    runtime.broadcast_like,
    runtime.getitem_vjp,
    runtime.sum_vjp,
    runtime.mean_vjp,
    runtime.transpose_vjp,
)
def_linear(*LINEAR)
holds_for_complex(*LINEAR, runtime.add_tangents)

# the argument that gives only a shape: no derivative
for _fn in (
    runtime.unbroadcast,
    runtime.broadcast_like,
    runtime.getitem_vjp,
    runtime.sum_vjp,
    runtime.mean_vjp,
):
    defjvp(_fn, ZERO, argnum=1)

defvjp(runtime.unbroadcast, lambda ct, ans, g, x: runtime.broadcast_like(ct, g), ZERO)

defvjp(runtime.broadcast_like, lambda ct, ans, t, x: runtime.unbroadcast(ct, t), ZERO)

# real_like(ct, x) is Re(ct) where x is real, ct where it is complex: linear in ct, and its
# own transpose (Re(c * Re(ct)) == Re(Re(c) * ct)); x gives only a dtype
def_linear(runtime.real_like)
holds_for_complex(runtime.real_like)
defjvp(runtime.real_like, ZERO, argnum=1)
defvjp(runtime.real_like, lambda ct, ans, g, x: runtime.real_like(ct, x), ZERO)

# scalar_like(g, x) is g, as a Python number where x is one: the identity on values; x gives
# only a type
def_linear(runtime.scalar_like)
holds_for_complex(runtime.scalar_like)
defjvp(runtime.scalar_like, ZERO, argnum=1)
defvjp(runtime.scalar_like, lambda ct, ans, g, x: runtime.real_like(ct, g), ZERO)

# astype_vjp(ct, x) is ct in x's floating type: linear in ct, x gives only a type; its
# transpose casts back to the type of ct
def_linear(runtime.astype_vjp)
defjvp(runtime.astype_vjp, ZERO, argnum=1)
defvjp(runtime.astype_vjp, lambda c, ans, ct, x: runtime.astype_vjp(c, ct), ZERO)

# as_floating(x) converts integers (which carry no derivative) and leaves a float or complex
# value as it is: the identity, on what has a derivative
def_linear(runtime.as_floating)
holds_for_complex(runtime.as_floating)
defvjp(runtime.as_floating, lambda ct, ans, x: runtime.scalar_like(ct, x))

# full_like_jvp(dv, ans) spreads dv over ans's shape (its real part for a real ans, zero for
# an integer one); full_like_vjp(ct, ans, v) sums ct to v's shape: each the other's
# transpose, linear in its first argument; ans and v give only a shape and a dtype
def_linear(runtime.full_like_jvp, runtime.full_like_vjp)
holds_for_complex(runtime.full_like_jvp, runtime.full_like_vjp)
defjvp(runtime.full_like_jvp, ZERO, argnum=1)
defjvp(runtime.full_like_vjp, ZERO, argnum=1)
defjvp(runtime.full_like_vjp, ZERO, argnum=2)
defvjp(runtime.full_like_jvp, lambda ct, ans_, dv, ans: runtime.full_like_vjp(ct, ans, dv), ZERO)
defvjp(
    runtime.full_like_vjp,
    lambda ct, ans_, g, ans, fill_value: runtime.full_like_jvp(ct, ans),
    ZERO,
    ZERO,
)


# keep_reduced(g, x, axis, keepdims) is g with x's reduced axes kept as length 1: a reshape,
# linear in g (its transpose reshapes back); x gives only a shape, axis and keepdims are
# constants. A rule of its own: derived from its source, its two returns (g as it is, or
# reshaped to a shape computed from a list) join a value of known kind with one of unknown
def _kept_kind(g, x, *rest, **keywords):
    if x.scalar:
        return g
    dtype = g.dtype if g.tag is Tag.ARRAY else scalar_dtype(g)
    if x.tag is Tag.ARRAY and x.ndim is not None and dtype is not None:
        return Kind(Tag.ARRAY, x.ndim, dtype)
    return UNKNOWN


def_linear(runtime.keep_reduced)
holds_for_complex(runtime.keep_reduced)
defjvp(runtime.keep_reduced, ZERO, argnum=1)
defvjp(
    runtime.keep_reduced,
    lambda c, ans, g, x, axis, keepdims: np.reshape(c, np.shape(g)),
    ZERO,
)
for _argnum in (2, 3):  # axis, keepdims: constants
    defjvp(runtime.keep_reduced, None, argnum=_argnum)
    defvjp(runtime.keep_reduced, None, argnum=_argnum)
primitive(runtime.keep_reduced).kind = _kept_kind

# (an index has no derivative: its value is an integer, a slice or a key)
defvjp(runtime.getitem_vjp, lambda ct, ans, g, x, index: ct[index], ZERO, ZERO)

defjvp(runtime.getitem_vjp, ZERO, argnum=2)

# getattr_vjp(ct, x, name): the record of zeros with ``ct`` at field ``name``
def_linear(runtime.getattr_vjp)

defjvp(runtime.getattr_vjp, ZERO, argnum=1)

defvjp(runtime.getattr_vjp, lambda ct, ans, g, x, name: getattr(ct, name), ZERO, None)
holds_for_complex(runtime.getattr_vjp)  # a field placed: linear, complex or not

# TangentTuple(items): the tangent of a tuple or list, item by item (of an array's rows, for
# tuple(v): their cotangent is an array again)
def_linear(runtime.TangentTuple)

defvjp(
    runtime.TangentTuple, lambda ct, ans, items: runtime.list_vjp(runtime.TangentTuple(ct), items)
)
# item_tangent(t, index, item) is t[index] (operators.py: the forward rule of an item of a
# list): its transpose, for the transpose route, puts the cotangent at that index
defvjp(
    runtime.item_tangent,
    lambda ct, ans, t, index, item=0.0: runtime.getitem_vjp(ct, t, index),
    None,
    None,
)
handles(
    [runtime.TangentTuple, runtime.getitem_vjp, runtime.getattr_vjp, runtime.item_tangent],
    sequences=True,
)

defvjp(
    runtime.sum_vjp,
    lambda ct, ans, g, x, axis=None, keepdims=False: np.sum(ct, axis=axis, keepdims=keepdims),
    ZERO,
)

defvjp(
    runtime.mean_vjp,
    lambda ct, ans, g, x, axis=None, keepdims=False: np.mean(ct, axis=axis, keepdims=keepdims),
    ZERO,
)

defvjp(runtime.transpose_vjp, lambda ct, ans, g, axes=None: np.transpose(ct, axes))

# add_tangents(a, b) is a + b for tangents of any structure
def_jointly_linear(runtime.add_tangents, 0, 1)

defvjp(runtime.add_tangents, lambda ct, ans, a, b: ct, lambda ct, ans, a, b: ct)
handles(runtime.add_tangents, sequences=True)  # of tuples, lists, dicts, records: item by item

# safe_divide(num, den) is num / den, and 0 where den is 0: linear in num (exactly: it is 0
# for every num where den is 0), and in den the quotient's derivative -ans / den, which
# divide_nonzero refuses where den is 0 (the jump to 0 there has no derivative).
# divide_nonzero's own rules are the quotient's.
def_linear(runtime.safe_divide, runtime.divide_nonzero)
broadcasting(runtime.safe_divide, runtime.divide_nonzero)
holds_for_complex(runtime.safe_divide, runtime.divide_nonzero)
for _fn in (runtime.safe_divide, runtime.divide_nonzero):
    defjvp(_fn, lambda dden, ans, num, den: -dden * runtime.divide_nonzero(ans, den), argnum=1)

defvjp(
    runtime.safe_divide,
    lambda ct, ans, num, den: runtime.safe_divide(ct, den),
    lambda ct, ans, num, den: -ct * runtime.divide_nonzero(ans, den),
)

defvjp(
    runtime.divide_nonzero,
    lambda ct, ans, num, den: runtime.divide_nonzero(ct, den),
    lambda ct, ans, num, den: -ct * runtime.divide_nonzero(ans, den),
)

# zeros carry no derivative, nor a value kept only for its shape
nondifferentiable(runtime.zero_tangent, runtime.zeros_like, runtime.only_shape)


def _tangent_of(x):
    """The kind of a (co)tangent of a container ``x``: its structure (a list's tangent is
    a TangentTuple), so that a rule differentiated again adds two of them with
    ``add_tangents``, never ``+``, which would concatenate or fail on dicts."""
    if not x.container:
        return UNKNOWN
    return x if x.tag is not Tag.LIST else x.__class__(Tag.TUPLE, elements=x.elements)


def _scalar_like_kind(g, x):
    """The kind of ``scalar_like(g, x)``: a Python number where ``x`` is one and ``g`` is of
    shape () (a 0-d array included), else ``g``'s."""
    if x.tag not in (Tag.FLOAT, Tag.INT, Tag.BOOL, Tag.COMPLEX):
        return g if x.tag is Tag.ARRAY else UNKNOWN
    if g.tag is Tag.COMPLEX or (g.tag is Tag.ARRAY and g.ndim == 0 and g.dtype == "c"):
        return Kind(Tag.COMPLEX)
    if g.tag is Tag.FLOAT or (g.tag is Tag.ARRAY and g.ndim == 0 and g.dtype == "f"):
        return FLOAT
    return g if g.tag is Tag.ARRAY and g.ndim else UNKNOWN


def _as_floating_kind(x):
    """The kind of ``as_floating(x)``: an array of ``x``'s shape, float unless complex."""
    if x.tag is Tag.ARRAY:
        return x if x.dtype in ("f", "c", None) else replace(x, dtype="f")
    if x.tag in (Tag.FLOAT, Tag.INT, Tag.BOOL):
        return Kind(Tag.ARRAY, 0, "f")
    if x.tag is Tag.COMPLEX:
        return Kind(Tag.ARRAY, 0, "c")
    return UNKNOWN


def _placed_into_zeros(ct, x, index):
    """The kind of ``getitem_vjp(ct, x, index)``: a container's structure, or for a real
    cotangent of an array, a float array of its shape."""
    real = ct.tag in (Tag.FLOAT, Tag.INT) or (
        ct.tag is Tag.ARRAY and ct.dtype in ("f", "i", "u", "b")
    )
    if x.tag is Tag.ARRAY and real:
        return replace(x, dtype="f")
    return _tangent_of(x)


def _summed_to_kind(g, x):
    """The kind of ``unbroadcast(g, x)`` and ``broadcast_like(g, x)``: an array of ``x``'s
    rank and ``g``'s dtype where ``x`` is an array of at least one axis; a number where ``x``
    is a number and ``g`` an array of some axes (NumPy's scalar). A value of shape () may be
    ``g`` as it is, a number or a 0-d array: not known."""
    dtype = g.dtype if g.tag is Tag.ARRAY else scalar_dtype(g)
    if dtype is None or g.maybe_complex:
        return UNKNOWN
    if x.tag is Tag.ARRAY and x.ndim:
        return Kind(Tag.ARRAY, x.ndim, dtype, shape=x.shape)
    if x.tag in (Tag.FLOAT, Tag.INT, Tag.BOOL) and g.tag is Tag.ARRAY and g.ndim:
        return Kind(Tag.COMPLEX) if dtype == "c" else FLOAT
    return UNKNOWN


primitive(runtime.getitem_vjp).kind = _placed_into_zeros
primitive(runtime.unbroadcast).kind = _summed_to_kind
primitive(runtime.broadcast_like).kind = _summed_to_kind
primitive(runtime.as_floating).kind = _as_floating_kind
primitive(runtime.scalar_like).kind = _scalar_like_kind
primitive(runtime.getattr_vjp).kind = lambda ct, x, name: _tangent_of(x)
primitive(runtime.zero_tangent).kind = _tangent_of
primitive(runtime.only_shape).kind = lambda x: x  # x itself, or an array of its shape and dtype
primitive(runtime.add_tangents).kind = lambda a, b: (
    _tangent_of(a) if a.container else _tangent_of(b)
)

handles([runtime.sum_vjp, runtime.mean_vjp], "axis", "keepdims")
handles(runtime.transpose_vjp, "axes")


# The cotangent helpers of the NumPy rules: linear in the cotangent (the first argument);
# the primal values they take (``x``, ``xs``, ``ans``) give shapes, structure or a mask that
# is constant where the derivative exists; the rest are constants (axes, indices). Forward
# rules, so that a derived reverse rule has a forward rule of its own (forward over reverse).
SHAPE_ONLY = {"x", "xs", "ans"}
COTANGENT_HELPERS = (
    runtime.extremum_vjp,
    runtime.cumsum_vjp,
    runtime.repeat_vjp,
    runtime.tile_vjp,
    runtime.diag_vjp,
    runtime.diagonal_vjp,
    runtime.trace_vjp,
    runtime.take_vjp,
    runtime.take_along_axis_vjp,
    runtime.pad_vjp,
    runtime.gather_vjp,
    runtime.moveaxis_vjp,
    runtime.roll_vjp,
    runtime.gather_list_vjp,
    runtime.concatenate_vjp,
    runtime.stack_vjp,
    runtime.split_vjp,
    runtime.unstack_vjp,
    runtime.sort_vjp,
    runtime.list_vjp,
    runtime.without_vjp,
    runtime.dict_with_vjp,
    runtime.replace_vjp,
)
for _fn in COTANGENT_HELPERS:
    _params = list(inspect.signature(_fn).parameters.values())
    def_linear(_fn)
    for _i, _p in enumerate(_params[1:], start=1):
        if _p.kind is _p.POSITIONAL_OR_KEYWORD and _p.name in SHAPE_ONLY:
            defjvp(_fn, ZERO, argnum=_i)
        elif _p.kind is _p.POSITIONAL_OR_KEYWORD and _p.default is _p.empty:
            # what to take or move and how (np.take's indices, np.roll's shift, np.repeat's
            # repeats): integers and functions, no derivative
            defjvp(_fn, None, argnum=_i)
    handles(
        _fn,
        *(p.name for p in _params[1:] if p.default is not p.empty),
        sequences=True,
    )
# gather_vjp(ct, x, select, *args): select(positions, *args) picks entries (np.delete's
# obj and axis, np.resize's shape): what to pick, no derivative
handles(runtime.gather_vjp, "args")
# its transpose picks the same entries: select itself
defvjp(
    runtime.gather_vjp,
    lambda c, ans, ct, x, select, *args, **kwargs: select(c, *args, **kwargs),
    ZERO,
    None,
)
nondifferentiable(
    runtime.clip_mask, runtime.clipped_low, runtime.clipped_high, runtime.inserted_at, _interp_index
)
# the interval of np.interp's points holding x: an integer index, x's shape
primitive(_interp_index).kind = lambda x, xp: (
    replace(x, dtype="i") if x.tag is Tag.ARRAY else INT if x.scalar else UNKNOWN
)
# np.gradient's axis and step, read from its call's form: constants
nondifferentiable(_gradient_form)
primitive(_gradient_form).kind = lambda *kinds, **keywords: Kind(Tag.TUPLE, elements=(INT, FLOAT))
# the checks of what a rule supports (a refusal at run time), called for their effect
checks_only(_check_linear, _check_period, _check_svd, _check_qr, _check_phase_free)
primitive(runtime.inserted_at).kind = lambda xs, i: INT  # a position: an index
# gather_list_vjp(ct, xs, fn, ...): fn places the entries (np.array, np.stack): a function,
# no derivative
handles(runtime.gather_list_vjp, "fn")

# Their reverse rules, for reverse over reverse: each is linear in the cotangent, and the
# cotangent helpers of joining and splitting are each other's transposes (the slices of a
# stack, stacked again; the pieces of a concatenation, concatenated again), with the
# arrays they return giving the shapes of missing cotangents.
defvjp(runtime.list_vjp, lambda c, ans, ct, x: runtime.items_vjp(c, x), ZERO)
# dict_with_vjp zeroes (or drops) the entry at key; its transpose puts a zero there, of the
# shape of ct's entry
defvjp(
    runtime.dict_with_vjp,
    lambda c, ans, ct, d, key: runtime.dict_with(c, key, runtime.zero_tangent(ct[key])),
    ZERO,
    None,
)
# the dict dict_with_vjp reads only for its keys and shapes: no derivative
defjvp(runtime.dict_with_vjp, ZERO, argnum=1)
primitive(runtime.dict_with_vjp).kind = lambda ct, d, key: ct
# replace_vjp zeroes the fields replace(p, **changed) replaced: a projection, its own transpose
defvjp(runtime.replace_vjp, lambda c, ans, ct, changed: runtime.replace_vjp(c, changed), None)
primitive(runtime.replace_vjp).kind = lambda ct, changed: ct
# without_vjp puts a zero back where xs.pop(key) took an item; its transpose takes it out
defvjp(runtime.without_vjp, lambda c, ans, ct, xs, key=-1: runtime.without(c, key), ZERO, None)
defvjp(
    runtime.gather_list_vjp,
    lambda c, ans, ct, xs, fn: runtime.gathered(c, xs, fn),
    ZERO,
    None,
)
defvjp(
    runtime.stack_vjp,
    lambda c, ans, ct, xs, axis=0, out=None, dtype=None, casting="same_kind": runtime.unstack_vjp(
        c, ans, axis
    ),
    ZERO,
)
defvjp(
    runtime.unstack_vjp,
    lambda c, ans, ct, pieces, axis=0: runtime.stack_vjp(c, pieces, axis),
    ZERO,
)
defvjp(
    runtime.concatenate_vjp,
    lambda c, ans, ct, xs, axis=0, out=None, dtype=None, casting="same_kind": runtime.split_vjp(
        c, ans, axis
    ),
    ZERO,
)
defvjp(
    runtime.split_vjp,
    lambda c, ans, ct, pieces, axis=0: runtime.concatenate_vjp(c, pieces, axis),
    ZERO,
)
# The cotangent helpers of the NumPy functions that only move, pick, repeat or add up
# entries: each is the transpose of its NumPy function, so the NumPy function is its
# transpose (np.take's vjp places ct at the indices taken; its transpose takes them).
defvjp(
    runtime.take_vjp,
    lambda c, ans, ct, x, indices, axis=None, out=None, mode="raise": np.take(
        c, indices, axis=axis, mode=mode
    ),
    ZERO,
    None,
)
defvjp(
    runtime.take_along_axis_vjp,
    lambda c, ans, ct, x, indices, axis: np.take_along_axis(c, indices, axis),
    ZERO,
    None,
    None,
)
defvjp(
    runtime.repeat_vjp,
    lambda c, ans, ct, x, repeats, axis=None: np.repeat(c, repeats, axis=axis),
    ZERO,
    None,
)
defvjp(runtime.tile_vjp, lambda c, ans, ct, x, reps: np.tile(c, reps), ZERO, None)
defvjp(runtime.roll_vjp, lambda c, ans, ct, shift, axis=None: np.roll(c, shift, axis), None)
defvjp(
    runtime.moveaxis_vjp,
    lambda c, ans, ct, source, destination: np.moveaxis(c, source, destination),
    None,
    None,
)
defvjp(
    runtime.pad_vjp,
    lambda c, ans, ct, x, pad_width, mode="constant", **kwargs: np.pad(c, pad_width),
    ZERO,
    None,
)
defvjp(
    runtime.cumsum_vjp,
    lambda c, ans, ct, x, axis=None, dtype=None, out=None: np.cumsum(c, axis=axis),
    ZERO,
)
defvjp(runtime.diag_vjp, lambda c, ans, ct, x, k=0: np.diag(c, k), ZERO)
defvjp(
    runtime.diagonal_vjp,
    lambda c, ans, ct, x, offset=0, axis1=0, axis2=1: np.diagonal(c, offset, axis1, axis2),
    ZERO,
)
defvjp(
    runtime.trace_vjp,
    lambda c, ans, ct, x, offset=0, axis1=0, axis2=1, dtype=None, out=None: np.trace(
        c, offset, axis1, axis2
    ),
    ZERO,
)
defvjp(
    runtime.sort_vjp,
    lambda c, ans, ct, x, axis=-1, kind=None, order=None: runtime.sort_jvp(c, x, axis, kind),
    ZERO,
)

# The cotangents of a product's factors: linear in the cotangent and in the other factor;
# the factor whose cotangent it is gives only a shape.
for _fn in (runtime.matmul_vjp_left, runtime.dot_vjp_left):
    def_linear(_fn)
    defjvp(_fn, ZERO, argnum=1)
for _fn in (runtime.matmul_vjp_right, runtime.dot_vjp_right):
    def_linear(_fn)
    defjvp(_fn, ZERO, argnum=2)

defjvp(
    runtime.matmul_vjp_left,
    lambda dy, ans, ct, x, y: runtime.matmul_vjp_left(ct, x, dy),
    argnum=2,
)

defjvp(
    runtime.matmul_vjp_right,
    lambda dx, ans, ct, x, y: runtime.matmul_vjp_right(ct, dx, y),
    argnum=1,
)

defjvp(runtime.dot_vjp_left, lambda dy, ans, ct, x, y: runtime.dot_vjp_left(ct, x, dy), argnum=2)

defjvp(runtime.dot_vjp_right, lambda dx, ans, ct, x, y: runtime.dot_vjp_right(ct, dx, y), argnum=1)

# Their reverse rules: vjp_left(ct, x, y), the cotangent of x in x @ y, is the transpose of
# dx -> dx @ y, so its own transpose in ct is c -> c @ y; in y it is the cotangent of y in
# c @ y, vjp_right(ct, c, y). The same for vjp_right and for np.dot.
defvjp(
    runtime.matmul_vjp_left,
    lambda c, ans, ct, x, y: np.matmul(c, y),
    ZERO,
    lambda c, ans, ct, x, y: runtime.matmul_vjp_right(ct, c, y),
)

defvjp(
    runtime.matmul_vjp_right,
    lambda c, ans, ct, x, y: np.matmul(x, c),
    lambda c, ans, ct, x, y: runtime.matmul_vjp_left(ct, x, c),
    ZERO,
)

defvjp(
    runtime.dot_vjp_left,
    lambda c, ans, ct, x, y: np.dot(c, y),
    ZERO,
    lambda c, ans, ct, x, y: runtime.dot_vjp_right(ct, c, y),
)

defvjp(
    runtime.dot_vjp_right,
    lambda c, ans, ct, x, y: np.dot(x, c),
    lambda c, ans, ct, x, y: runtime.dot_vjp_left(ct, x, c),
    ZERO,
)

# The same for np.tensordot's (the axes a constant) and np.kron's.
def_linear(runtime.tensordot_vjp_left, runtime.tensordot_vjp_right)
defjvp(runtime.tensordot_vjp_left, ZERO, argnum=1)
defjvp(runtime.tensordot_vjp_right, ZERO, argnum=2)
defjvp(
    runtime.tensordot_vjp_left,
    lambda dy, ans, ct, x, y, axes=2: runtime.tensordot_vjp_left(ct, x, dy, axes),
    argnum=2,
)
defjvp(
    runtime.tensordot_vjp_right,
    lambda dx, ans, ct, x, y, axes=2: runtime.tensordot_vjp_right(ct, dx, y, axes),
    argnum=1,
)
defvjp(
    runtime.tensordot_vjp_left,
    lambda c, ans, ct, x, y, axes=2: np.tensordot(c, y, axes),
    ZERO,
    lambda c, ans, ct, x, y, axes=2: runtime.tensordot_vjp_right(ct, c, y, axes),
)
defvjp(
    runtime.tensordot_vjp_right,
    lambda c, ans, ct, x, y, axes=2: np.tensordot(x, c, axes),
    lambda c, ans, ct, x, y, axes=2: runtime.tensordot_vjp_left(ct, x, c, axes),
    ZERO,
)
for _fn in (runtime.tensordot_vjp_left, runtime.tensordot_vjp_right):
    for _mode_rule in (defjvp, defvjp):
        _mode_rule(_fn, None, argnum=3)  # axes: a constant

def_linear(runtime.kron_vjp_left, runtime.kron_vjp_right)
defjvp(runtime.kron_vjp_left, ZERO, argnum=1)
defjvp(runtime.kron_vjp_right, ZERO, argnum=2)
defjvp(runtime.kron_vjp_left, lambda dy, ans, ct, x, y: runtime.kron_vjp_left(ct, x, dy), argnum=2)
defjvp(
    runtime.kron_vjp_right, lambda dx, ans, ct, x, y: runtime.kron_vjp_right(ct, dx, y), argnum=1
)
defvjp(
    runtime.kron_vjp_left,
    lambda c, ans, ct, x, y: np.kron(c, y),
    ZERO,
    lambda c, ans, ct, x, y: runtime.kron_vjp_right(ct, c, y),
)
defvjp(
    runtime.kron_vjp_right,
    lambda c, ans, ct, x, y: np.kron(x, c),
    lambda c, ans, ct, x, y: runtime.kron_vjp_left(ct, x, c),
    ZERO,
)

# transposes, no conjugates: as the rules of the products they belong to
holds_for_complex(
    runtime.matmul_vjp_left,
    runtime.matmul_vjp_right,
    runtime.dot_vjp_left,
    runtime.dot_vjp_right,
    runtime.tensordot_vjp_left,
    runtime.tensordot_vjp_right,
    runtime.kron_vjp_left,
    runtime.kron_vjp_right,
)


# einsum_vjp(ct, argnum, subscripts, *operands) is the cotangent of operand ``argnum`` of
# np.einsum(subscripts, *operands): linear in ct and in each other operand, and reading only
# the shape of operand argnum. Its transpose in ct is the contraction with the cotangent c in
# place of operand argnum; in another operand j, <ct, einsum(.., c at argnum, ..)> is linear
# in operand j, whose cotangent is einsum_vjp(ct, j, ..) of that contraction. Which rule an
# operand has depends on argnum, a literal at every call the NumPy rules write.
def_linear(runtime.einsum_vjp)
for _i in (1, 2):  # argnum, subscripts: constants
    defjvp(runtime.einsum_vjp, None, argnum=_i)
    defvjp(runtime.einsum_vjp, None, argnum=_i)
holds_for_complex(runtime.einsum_vjp)  # transposes, no conjugates: as np.einsum's rules


def _call(bind_global, module, attr, args):
    """``np.einsum(*args)`` or ``runtime.einsum_vjp(*args)``, as the rules write them."""
    module_name = bind_global("np" if module is np else "runtime", module)
    func = gast.Attribute(
        value=gast.Name(module_name, gast.Load(), None, None), attr=attr, ctx=gast.Load()
    )
    return gast.Call(func=func, args=args, keywords=[])


def _einsum_vjp_tangent(j):
    """The forward rule of operand ``j``: zero where it is the operand whose cotangent it is."""
    return ByConstant(1, lambda argnum: ZERO if argnum == j else SameCall(runtime.einsum_vjp))


def _einsum_vjp_transpose_in_ct(argnum):
    """np.einsum(subscripts, *operands) with the cotangent in place of operand ``argnum``."""

    def build(leading, args, bind_global):
        _ct, _argnum, subscripts, *operands = args
        operands[argnum] = leading[0]
        return _call(bind_global, np, "einsum", [subscripts, *operands])

    return Built(build)


def _einsum_vjp_transpose(j):
    """The reverse rule of operand ``j``: einsum_vjp(ct, j, subscripts, *operands) with the
    cotangent in place of operand argnum; zero where j is argnum."""

    def choose(argnum):
        if argnum == j:
            return ZERO

        def build(leading, args, bind_global):
            ct, _argnum, subscripts, *operands = args
            operands[argnum] = leading[0]
            arguments = [ct, gast.Constant(j, None), subscripts, *operands]
            return _call(bind_global, runtime, "einsum_vjp", arguments)

        return Built(build)

    return ByConstant(1, choose)


_EINSUM_OPERANDS = range(4)  # as many as the rules of np.einsum take
for _j in _EINSUM_OPERANDS:
    defjvp(runtime.einsum_vjp, _einsum_vjp_tangent(_j), argnum=3 + _j)
    defvjp(runtime.einsum_vjp, _einsum_vjp_transpose(_j), argnum=3 + _j)
defvjp(runtime.einsum_vjp, ByConstant(1, _einsum_vjp_transpose_in_ct), argnum=0)
