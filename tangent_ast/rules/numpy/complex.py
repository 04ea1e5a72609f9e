"""Complex values: which rules hold for them, and the functions that are not holomorphic.

Complex values may carry a derivative inside a function: ``np.exp(1j * x)``,
``np.fft.fft(x)``. A complex cotangent ``ct`` of ``z`` is the one with
``dL = Re(ct * dz)`` (JAX's convention), so the cotangent of a holomorphic function's
argument is the transpose of its derivative, as the real rules write it: ``ct * np.cos(z)``
for ``np.sin``. The rules of the functions listed below are of that form and hold for
complex values as written (those of ``vdot``, ``vecdot`` and ``correlate``, conjugate-linear
in one argument, conjugate there); every other rule refuses a complex argument
(tests/rules/test_complex.py and test_complex_rules.py check them on complex arguments, in
both modes). Where a real value meets a complex one (``x * 1j``), the
reverse sweep keeps the real part of ``x``'s cotangent.

The functions that are not holomorphic have rules of their own for a complex argument:

==============  ====================================  =====================================
function        forward (``dz``)                      reverse (``ct``)
==============  ====================================  =====================================
``abs(z)``      ``Re(conj(z) dz) / |z|``              ``ct conj(z) / |z|``
``real(z)``     ``Re(dz)``                            ``ct``
``imag(z)``     ``Im(dz)``                            ``-1j ct``
``conj(z)``     ``conj(dz)``                          ``conj(ct)``
``angle(z)``    ``Im(conj(z) dz) / |z|^2``            ``-1j ct conj(z) / |z|^2``
==============  ====================================  =====================================

The divisions of ``abs`` and ``angle`` give 0 where ``z`` is 0 (``runtime.safe_divide``:
docs/rules.md, "Where a derivative divides by zero").
"""

import builtins
import operator
from dataclasses import replace
from typing import Any

import numpy as np

from ... import runtime
from ...vocabulary.kinds import UNKNOWN, Kind, Tag, element_kind, real_kind
from ..registry import ZERO, defcomplex, defjvp, defvjp, holds_for_complex, primitive
from .reductions import EXTREMA

_fn: Any  # the loop variable of the tables below: functions of many types

holds_for_complex(
    # holomorphic: arithmetic
    operator.add,
    operator.sub,
    operator.mul,
    operator.truediv,
    operator.pow,
    operator.neg,
    operator.pos,
    operator.matmul,
    builtins.pow,
    np.add,
    np.subtract,
    np.multiply,
    np.divide,
    np.negative,
    np.positive,
    np.power,
    np.float_power,
    np.square,
    np.reciprocal,
    # holomorphic: elementary functions (away from their branch cuts)
    np.sqrt,
    np.exp,
    np.expm1,
    np.exp2,
    np.log,
    np.log2,
    np.log10,
    np.log1p,
    np.sin,
    np.cos,
    np.tan,
    np.sinh,
    np.cosh,
    np.tanh,
    np.arcsin,
    np.arccos,
    np.arctan,
    np.arcsinh,
    np.arccosh,
    np.arctanh,
    np.sinc,
    # holomorphic: products and matrix functions (transposes, no conjugates)
    np.prod,
    np.ndarray.prod,
    np.nanprod,
    np.cumprod,
    np.ndarray.cumprod,
    np.nancumprod,
    np.cumulative_prod,
    np.polyval,
    np.logspace,
    np.linalg.inv,
    np.linalg.det,
    np.linalg.solve,
    np.linalg.matrix_power,
    np.linalg.multi_dot,
    # complex-linear in each argument: products
    np.dot,
    np.ndarray.dot,
    np.matmul,
    np.inner,
    np.outer,
    np.tensordot,
    np.einsum,
    np.kron,
    np.cross,
    np.convolve,
    np.linalg.outer,
    np.linalg.cross,
    np.linalg.matmul,
    np.linalg.tensordot,
    # conjugate-linear in one argument: their reverse rules conjugate there
    np.vdot,
    np.vecdot,
    np.linalg.vecdot,
    np.correlate,
    # complex-linear: sums, means, differences, integrals
    np.sum,
    np.mean,
    np.ndarray.sum,
    np.ndarray.mean,
    np.nansum,
    np.nanmean,
    np.average,
    np.cumsum,
    np.ndarray.cumsum,
    np.nancumsum,
    np.cumulative_sum,
    builtins.sum,
    np.diff,
    np.ediff1d,
    np.gradient,
    np.trapezoid,
    np.linspace,
    # complex-linear: shape and selection
    operator.getitem,
    np.reshape,
    np.ndarray.reshape,
    np.ravel,
    np.ndarray.ravel,
    np.ndarray.flatten,
    np.transpose,
    np.ndarray.transpose,
    (np.ndarray, "T"),
    np.matrix_transpose,
    (np.ndarray, "mT"),
    np.linalg.matrix_transpose,
    np.squeeze,
    np.ndarray.squeeze,
    np.expand_dims,
    np.atleast_1d,
    np.atleast_2d,
    np.atleast_3d,
    np.swapaxes,
    np.ndarray.swapaxes,
    np.moveaxis,
    np.rollaxis,
    np.flip,
    np.fliplr,
    np.flipud,
    np.rot90,
    np.roll,
    np.diag,
    np.diagflat,
    np.diagonal,
    np.ndarray.diagonal,
    np.linalg.diagonal,
    np.trace,
    np.ndarray.trace,
    np.linalg.trace,
    np.triu,
    np.tril,
    np.tile,
    np.repeat,
    np.ndarray.repeat,
    np.resize,
    np.broadcast_to,
    np.full,
    np.full_like,  # linear in the fill value; a real array keeps its real part
    np.take,
    np.take_along_axis,
    np.ndarray.take,
    np.compress,
    np.ndarray.compress,
    np.extract,
    np.delete,
    np.where,
    np.select,
    np.pad,
    # complex-linear: joining and splitting
    np.concatenate,
    np.stack,
    np.hstack,
    np.vstack,
    np.dstack,
    np.column_stack,
    np.block,
    np.append,
    np.split,
    np.array_split,
    np.hsplit,
    np.vsplit,
    np.dsplit,
    np.unstack,
    # complex-linear given the order the values are in (NumPy orders complex values by real
    # part, then imaginary part; a permutation, fixed where the values are distinct)
    np.sort,
    np.partition,
    # the extremum in that order: the entry picked (ties share), complex-linear in it
    *EXTREMA,
    # copies and conversions of one array
    np.array,
    np.asarray,
    np.asanyarray,
    np.asarray_chkfinite,
    np.ascontiguousarray,
    np.copy,
    np.ndarray.copy,
    # not holomorphic, but their rules are the complex ones already
    np.linalg.norm,  # d|z| = Re(conj(z) dz) / |z| entry by entry; u v^H for ord 2 and "nuc"
    # singular values and Hermitian eigenvalues: d s_i = Re(u_i^H dx v_i); the singular vectors
    # of a complex matrix (fixed up to a phase only) are refused where svd is called
    np.linalg.svdvals,
    np.linalg.svd,
    np.linalg.eigvalsh,
    np.linalg.eigh,  # its eigenvectors in reverse mode only, where phase-independence is checked
    np.var,  # d var = Re(2 sum(conj(z - mean) dz)) / (N - ddof)
    np.ndarray.var,
    np.std,
    np.ndarray.std,
    np.conjugate,
    np.ndarray.conj,
    np.ndarray.conjugate,
    np.real,
    (np.ndarray, "real"),
)

# np.interp is linear in the values fp, which may be complex (the sample points x may not:
# NumPy takes no complex ones): fp's rules as written, for a complex fp
defcomplex(
    np.interp,
    lambda dfp, ans, x, xp, fp, left=None, right=None, period=None: runtime.interp_jvp_fp(
        dfp, x, xp, fp, left, right, period
    ),
    lambda ct, ans, x, xp, fp, left=None, right=None, period=None: runtime.interp_vjp_fp(
        ct, x, xp, fp, left, right, period
    ),
    argnum=2,
)

for _fn in (np.absolute, builtins.abs):
    defcomplex(
        _fn,
        lambda dz, ans, z: runtime.safe_divide(np.real(np.conj(z) * dz), ans),
        lambda ct, ans, z: runtime.safe_divide(ct * np.conj(z), ans),
    )

# imag and angle of a real value do not change with it
for _fn in (np.imag, (np.ndarray, "imag")):
    defjvp(_fn, ZERO)
    defvjp(_fn, ZERO)
    defcomplex(_fn, lambda dz, ans, z: np.imag(dz), lambda ct, ans, z: -1j * ct)

defjvp(np.angle, ZERO)

defvjp(np.angle, ZERO)

defcomplex(
    np.angle,
    lambda dz, ans, z: runtime.safe_divide(np.imag(np.conj(z) * dz), np.abs(z) ** 2),
    lambda ct, ans, z: runtime.safe_divide(-1j * ct * np.conj(z), np.abs(z) ** 2),
)


def _same_kind(x, *rest, **keywords):
    """``np.conj(z)``: the kind of ``z``."""
    if x.tag in (Tag.ARRAY, Tag.FLOAT, Tag.COMPLEX):
        return replace(x, shape=None)
    return UNKNOWN


for _fn in (np.conjugate, np.ndarray.conj, np.ndarray.conjugate):
    primitive(_fn).kind = _same_kind

for _fn in (
    np.absolute,
    builtins.abs,
    np.real,
    (np.ndarray, "real"),
    np.imag,
    (np.ndarray, "imag"),
    np.angle,
):
    primitive(_fn).kind = real_kind


# --- kinds: which of the results above are complex ---------------------------------------
# The shape functions keep the dtype of their argument; their rank follows from it.
def _dtype_of(kinds):
    dtypes = {
        k.dtype if k.tag is Tag.ARRAY else {Tag.FLOAT: "f", Tag.COMPLEX: "c"}.get(k.tag)
        for k in kinds
    }
    return "c" if "c" in dtypes else "f" if dtypes == {"f"} else None


def _ranked(rank):
    """A kind function: an array of dtype of ``x``, of rank ``rank(x.ndim, *rest)``."""

    def kind(x, *rest, **keywords):
        if x.tag is not Tag.ARRAY or x.ndim is None:
            return UNKNOWN
        try:
            ndim = rank(x.ndim, *rest, **keywords)
        except (TypeError, ValueError):
            return UNKNOWN
        if ndim is None or ndim < 0:
            return UNKNOWN
        return Kind(Tag.ARRAY, ndim, x.dtype) if ndim else element_kind(x.dtype)

    return kind


def _shape_rank(*shape, **keywords):
    """The rank of ``reshape(x, shape)``: the shape given as one tuple, as integers, or by
    keyword (``shape=`` or NumPy's older ``newshape=``)."""
    shape = shape or tuple(keywords[k] for k in ("shape", "newshape") if k in keywords)
    if not shape:
        return None
    if len(shape) == 1 and shape[0].tag is Tag.TUPLE and shape[0].elements is not None:
        return len(shape[0].elements)
    if all(k.tag is Tag.INT for k in shape):
        return len(shape)
    return None


def _joined(extra):
    """``np.concatenate([a, b])`` (``extra=0``), ``np.stack`` (1): from a list of arrays."""

    def kind(xs, *rest, **keywords):
        if xs.tag not in (Tag.LIST, Tag.TUPLE) or not xs.elements:
            return UNKNOWN
        ranks = {k.ndim for k in xs.elements if k.tag is Tag.ARRAY}
        if len(ranks) != 1 or not all(k.tag is Tag.ARRAY for k in xs.elements):
            return UNKNOWN
        return Kind(Tag.ARRAY, ranks.pop() + extra, _dtype_of(xs.elements))

    return kind


_RANKS = {
    np.reshape: lambda n, *shape, **kw: _shape_rank(*shape, **kw),
    np.ndarray.reshape: lambda n, *shape, **kw: _shape_rank(*shape, **kw),
    np.ravel: lambda n: 1,
    np.ndarray.ravel: lambda n: 1,
    np.ndarray.flatten: lambda n: 1,
    np.flip: lambda n, *rest, **kw: n,
    np.roll: lambda n, *rest, **kw: n,
    np.copy: lambda n: n,
    np.ndarray.copy: lambda n: n,
    np.swapaxes: lambda n, *rest: n,
    np.moveaxis: lambda n, *rest: n,
    np.expand_dims: lambda n, axis: n + 1 if axis.tag is Tag.INT else None,
    np.cumsum: lambda n, axis=None: n if axis is not None else 1,
    np.diag: lambda n: {1: 2, 2: 1}.get(n),
    np.diagonal: lambda n: n - 1,
    np.trace: lambda n: n - 2,
    np.outer: lambda n, y: 2,
    np.fft.fftshift: lambda n, *rest, **kw: n,
    np.fft.ifftshift: lambda n, *rest, **kw: n,
}
for _fn, _rank in _RANKS.items():
    primitive(_fn).kind = _ranked(_rank)
primitive(np.concatenate).kind = _joined(0)
primitive(np.arange).kind = lambda *bounds, **keywords: (
    Kind(Tag.ARRAY, 1, "f" if any(b.tag is Tag.FLOAT for b in bounds) else "i")
    if all(b.tag in (Tag.INT, Tag.FLOAT) for b in bounds) and "dtype" not in keywords
    else UNKNOWN
)
primitive((np.ndarray, "shape")).kind = lambda x: (
    Kind(Tag.TUPLE, elements=(Kind(Tag.INT),) * x.ndim)
    if x.tag is Tag.ARRAY and x.ndim is not None
    else Kind(Tag.TUPLE)
)
primitive(np.stack).kind = _joined(1)


# real_if_close drops an imaginary part that is rounding: real or complex by value, so a
# result computed from a complex argument is of a kind not known when the rule is derived
# (refused where it carries a derivative); for a real argument it is the identity.
def _real_if_close_kind(z, *rest, **keywords):
    if z.tag is Tag.FLOAT or (z.tag is Tag.ARRAY and z.dtype == "f"):
        return z
    return UNKNOWN if z.tag is not Tag.ARRAY else Kind(Tag.ARRAY, z.ndim, None)


defjvp(np.real_if_close, lambda dz, ans, z, tol=100: runtime.real_if_close_jvp(dz, ans))

defvjp(np.real_if_close, lambda ct, ans, z, tol=100: ct)

holds_for_complex(np.real_if_close)
primitive(np.real_if_close).kind = _real_if_close_kind
