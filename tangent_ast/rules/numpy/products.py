"""Products: dot, matmul, inner, outer, tensordot, kron, einsum, vecdot."""

from typing import Any

import numpy as np

from ... import runtime
from ...modes import Mode
from ...vocabulary.kinds import matmul_kind
from ..binding import CallRefused
from ..registry import (
    broadcasting,
    def_linear,
    def_multilinear,
    defjvp,
    defvjp,
    handles,
    nondifferentiable,
    primitive,
    specialize,
)

_fn: Any  # the loop variable of the tables below: NumPy functions of many types

for _fn in (np.dot, np.matmul, np.ndarray.dot):
    primitive(_fn).kind = matmul_kind

for _fn in (np.dot, np.matmul, np.ndarray.dot):
    defjvp(_fn, lambda dx, ans, x, y: np.dot(dx, y), lambda dy, ans, x, y: np.dot(x, dy))
    defvjp(
        _fn,
        lambda ct, ans, x, y: runtime.matmul_vjp_left(ct, x, y),
        lambda ct, ans, x, y: runtime.matmul_vjp_right(ct, x, y),
    )

# np.dot of N-d arrays is not matmul: it sums the last axis of x against the second-to-last
# of y, pairing every stack of x with every stack of y (a tensordot)
for _fn in (np.dot, np.ndarray.dot):
    defvjp(
        _fn,
        lambda ct, ans, x, y: runtime.dot_vjp_left(ct, x, y),
        lambda ct, ans, x, y: runtime.dot_vjp_right(ct, x, y),
    )
    specialize(
        _fn,
        Mode.REVERSE,
        lambda x, y: x.ndim == 2 and y.ndim == 2,
        lambda ct, ans, x, y: ct @ y.T,
        lambda ct, ans, x, y: x.T @ ct,
    )
    specialize(
        _fn,
        Mode.REVERSE,
        lambda x, y: x.ndim == 2 and y.ndim == 1,
        lambda ct, ans, x, y: np.outer(ct, y),
        lambda ct, ans, x, y: x.T @ ct,
    )
    specialize(
        _fn,
        Mode.REVERSE,
        lambda x, y: x.ndim == 1 and y.ndim == 1,
        lambda ct, ans, x, y: ct * y,
        lambda ct, ans, x, y: ct * x,
    )

defjvp(np.matmul, lambda dx, ans, x, y: dx @ y, lambda dy, ans, x, y: x @ dy)
# np.matmul of matrices and vectors: the hand-written cotangents, as for the @ operator
for _ndims, _left, _right in (
    ((2, 2), lambda ct, ans, x, y: ct @ y.T, lambda ct, ans, x, y: x.T @ ct),
    ((2, 1), lambda ct, ans, x, y: np.outer(ct, y), lambda ct, ans, x, y: x.T @ ct),
    ((1, 2), lambda ct, ans, x, y: y @ ct, lambda ct, ans, x, y: np.outer(x, ct)),
    ((1, 1), lambda ct, ans, x, y: ct * y, lambda ct, ans, x, y: ct * x),
):
    specialize(
        np.matmul,
        Mode.REVERSE,
        lambda x, y, ndims=_ndims: (x.ndim, y.ndim) == ndims,
        _left,
        _right,
    )

nondifferentiable(
    np.sign,
    np.floor,
    np.ceil,
    np.round,
    np.rint,
    np.trunc,
    np.shape,
    np.ndim,
    np.size,
    np.zeros,
    np.ones,
    np.empty,
    np.zeros_like,
    np.ones_like,
    np.empty_like,
    np.argmax,
    np.argmin,
    np.argsort,
    np.isfinite,
    np.isnan,
    np.isinf,
    np.greater,
    np.less,
    np.equal,
    np.not_equal,
    np.greater_equal,
    np.less_equal,
    np.logical_and,
    np.logical_or,
    np.logical_not,
    (np.ndarray, "shape"),
    (np.ndarray, "ndim"),
    (np.ndarray, "size"),
    (np.ndarray, "dtype"),
)

# --- products -------------------------------------------------------------------------
defjvp(np.inner, lambda dx, ans, x, y: np.inner(dx, y), lambda dy, ans, x, y: np.inner(x, dy))

defvjp(
    np.inner,
    lambda ct, ans, x, y: runtime.inner_vjp_left(ct, x, y),
    lambda ct, ans, x, y: runtime.inner_vjp_right(ct, x, y),
)

defjvp(np.outer, lambda dx, ans, x, y: np.outer(dx, y), lambda dy, ans, x, y: np.outer(x, dy))

defvjp(
    np.outer,
    lambda ct, ans, x, y: np.reshape(ct @ np.ravel(y), np.shape(x)),
    lambda ct, ans, x, y: np.reshape(np.ravel(x) @ ct, np.shape(y)),
)

# vdot(x, y) = sum(conj(x) * y) is conjugate-linear in x: its forward rules are the call on
# the tangent, and the cotangent of x is the conjugate of ct * y (Re(ct conj(dx) y) =
# Re(conj(ct y) dx)), that of y is ct * conj(x) (identities for real arrays)
defjvp(np.vdot, lambda dx, ans, x, y: np.vdot(dx, y), lambda dy, ans, x, y: np.vdot(x, dy))

defvjp(
    np.vdot,
    lambda ct, ans, x, y: np.conj(ct * np.reshape(y, np.shape(x))),
    lambda ct, ans, x, y: ct * np.reshape(np.conj(x), np.shape(y)),
)

defjvp(
    np.tensordot,
    lambda dx, ans, x, y, axes=2: np.tensordot(dx, y, axes),
    lambda dy, ans, x, y, axes=2: np.tensordot(x, dy, axes),
)

defvjp(
    np.tensordot,
    lambda ct, ans, x, y, axes=2: runtime.tensordot_vjp_left(ct, x, y, axes),
    lambda ct, ans, x, y, axes=2: runtime.tensordot_vjp_right(ct, x, y, axes),
)
handles(np.tensordot, "axes")

defjvp(np.kron, lambda dx, ans, x, y: np.kron(dx, y), lambda dy, ans, x, y: np.kron(x, dy))

defvjp(
    np.kron,
    lambda ct, ans, x, y: runtime.kron_vjp_left(ct, x, y),
    lambda ct, ans, x, y: runtime.kron_vjp_right(ct, x, y),
)

broadcasting(np.cross)

defjvp(
    np.cross,
    lambda dx, ans, x, y, **kw: np.cross(dx, y, **kw),
    lambda dy, ans, x, y, **kw: np.cross(x, dy, **kw),
)

defvjp(
    np.cross,
    lambda ct, ans, x, y, **kw: runtime.cross_vjp(ct, x, y, **kw),
    lambda ct, ans, x, y, **kw: runtime.cross_vjp(ct, x, y, of_y=True, **kw),
)
handles(np.cross, "axisa", "axisb", "axisc", "axis")

nondifferentiable(
    np.floor_divide,
    np.isclose,
    np.allclose,
    np.array_equal,
    np.argwhere,
    np.nonzero,
    np.count_nonzero,
    np.searchsorted,
    np.eye,
    np.identity,
    np.heaviside,
    np.signbit,
    np.iscomplex,
    np.isreal,
    np.any,
    np.all,
    np.ndarray.argmax,
    np.ndarray.argmin,
    np.ndarray.argsort,
    np.ndarray.any,
    np.ndarray.all,
    np.ndarray.nonzero,
)

def_linear(np.take, np.pad, np.take_along_axis)

# np.take_along_axis(arr, indices, axis): linear in arr; indices and axis say what to take
defjvp(np.take_along_axis, None, argnum=1)
defjvp(np.take_along_axis, None, argnum=2)
defvjp(
    np.take_along_axis,
    lambda ct, ans, arr, indices, axis=-1: runtime.take_along_axis_vjp(ct, arr, indices, axis),
    None,
    None,
)

defvjp(
    np.take,
    lambda ct, ans, x, indices, *args, **kw: runtime.take_vjp(ct, x, indices, *args, **kw),
    None,
)

defvjp(
    np.pad,
    lambda ct, ans, x, pad_width, *args, **kw: runtime.pad_vjp(ct, x, pad_width, *args, **kw),
    None,
)

# einsum: the subscripts come first; it is linear in each operand separately, so its forward
# rule is the contraction itself with a tangent in one operand's place (up to four operands,
# as far as the reverse rules go)
def_multilinear(np.einsum, 1, 2, 3, 4)

defvjp(
    np.einsum,
    None,
    lambda ct, ans, sub, *ops, optimize=False: runtime.einsum_vjp(ct, 0, sub, *ops),
    lambda ct, ans, sub, *ops, optimize=False: runtime.einsum_vjp(ct, 1, sub, *ops),
    lambda ct, ans, sub, *ops, optimize=False: runtime.einsum_vjp(ct, 2, sub, *ops),
    lambda ct, ans, sub, *ops, optimize=False: runtime.einsum_vjp(ct, 3, sub, *ops),
)

# --- array-API products and transposes (NumPy 2) --------------------------------------
def_linear(np.matrix_transpose)

defvjp(np.matrix_transpose, lambda ct, ans, x: np.matrix_transpose(ct))

defjvp((np.ndarray, "mT"), lambda dx, ans, x: np.matrix_transpose(dx))

defvjp((np.ndarray, "mT"), lambda ct, ans, x: np.matrix_transpose(ct))
handles([np.take, np.ndarray.take], "axis", "mode")

# vecdot(x, y) = sum(conj(x) * y) over axis: conjugate-linear in x, as vdot
defjvp(
    np.vecdot,
    lambda dx, ans, x, y, axis=-1: np.vecdot(dx, y, axis=axis),  # type: ignore[call-overload]
    lambda dy, ans, x, y, axis=-1: np.vecdot(x, dy, axis=axis),  # type: ignore[call-overload]
)

defvjp(
    np.vecdot,
    lambda ct, ans, x, y, axis=-1: runtime.vecdot_vjp(ct, y, x, axis, conjugated=True),
    lambda ct, ans, x, y, axis=-1: runtime.vecdot_vjp(ct, x, y, axis),
)
handles(np.vecdot, "axis")

if hasattr(np, "matvec"):  # NumPy 2.2+
    defjvp(
        np.matvec, lambda da, ans, a, v: np.matvec(da, v), lambda dv, ans, a, v: np.matvec(a, dv)
    )

    defvjp(
        np.matvec,
        lambda ct, ans, a, v: runtime.unbroadcast(
            np.expand_dims(ct, -1) * np.expand_dims(v, -2), a
        ),
        lambda ct, ans, a, v: runtime.unbroadcast(np.vecmat(ct, a), v),
    )

    defjvp(
        np.vecmat, lambda dv, ans, v, a: np.vecmat(dv, a), lambda da, ans, v, a: np.vecmat(v, da)
    )

    defvjp(
        np.vecmat,
        lambda ct, ans, v, a: runtime.unbroadcast(np.matvec(a, ct), v),
        lambda ct, ans, v, a: runtime.unbroadcast(
            np.expand_dims(v, -1) * np.expand_dims(ct, -2), a
        ),
    )


def _einsum_form(args, argnum, resolve):
    """The einsum rules take subscripts as a constant string (any form: implicit output,
    ellipsis, repeated indices); the sublist form is rewritten to one when its lists are
    written out (lowering/calls.py)."""
    try:
        subscripts = resolve(args[0])
    except LookupError:
        subscripts = None
    if not isinstance(subscripts, str):
        raise CallRefused(
            "np.einsum with subscripts that are not a constant string (or sublists of "
            "constant integers)",
            "write the subscripts as a string: np.einsum('ij,jk->ik', a, b)",
        )


handles(np.einsum, "optimize", validate=_einsum_form)
