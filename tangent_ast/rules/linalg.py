"""Rules for ``numpy.linalg``.

Matrix functions act on the last two axes, so the rules use ``np.swapaxes(a,
-1, -2)`` for a transpose and work on stacks of matrices too. Multi-step rules
are helpers in :mod:`tangent_ast.runtime`.
"""

import numpy as np

from .. import runtime
from ..vocabulary.kinds import FLOAT, INT, NUMBER, UNKNOWN, Kind, Tag, real_reduction_kind
from .registry import (
    broadcasting,
    def_linear,
    defjvp,
    defvjp,
    handles,
    holds_for_complex,
    nondifferentiable,
    primitive,
)

defjvp(np.linalg.inv, lambda dx, ans, x: -(ans @ dx @ ans))
defvjp(
    np.linalg.inv, lambda ct, ans, x: -(np.swapaxes(ans, -1, -2) @ ct @ np.swapaxes(ans, -1, -2))
)

defjvp(np.linalg.det, lambda dx, ans, x: runtime.det_jvp(dx, ans, x))
defvjp(np.linalg.det, lambda ct, ans, x: runtime.det_vjp(ct, ans, x))

defjvp(
    np.linalg.solve,
    lambda da, ans, a, b: runtime.solve_jvp_a(da, ans, a, b),
    lambda db, ans, a, b: np.linalg.solve(a, db),
)
defvjp(
    np.linalg.solve,
    lambda ct, ans, a, b: runtime.solve_vjp_a(ct, ans, a, b),
    lambda ct, ans, a, b: runtime.solve_vjp_b(ct, ans, a, b),
)

defjvp(np.linalg.cholesky, lambda dx, ans, x, **kw: runtime.cholesky_jvp(dx, ans, x))
defvjp(np.linalg.cholesky, lambda ct, ans, x, **kw: runtime.cholesky_vjp(ct, ans, x))

defjvp(np.linalg.norm, lambda dx, ans, x, *args, **kw: runtime.norm_jvp(dx, ans, x, *args, **kw))
defvjp(np.linalg.norm, lambda ct, ans, x, *args, **kw: runtime.norm_vjp(ct, ans, x, *args, **kw))
primitive(np.linalg.norm).kind = real_reduction_kind  # real, for complex values too

defjvp(np.linalg.matrix_power, lambda dx, ans, x, n: runtime.matrix_power_jvp(dx, ans, x, n), None)
defvjp(np.linalg.matrix_power, lambda ct, ans, x, n: runtime.matrix_power_vjp(ct, ans, x, n), None)

defjvp(np.linalg.pinv, lambda dx, ans, x, *args, **kw: runtime.pinv_jvp(dx, ans, x))
defvjp(np.linalg.pinv, lambda ct, ans, x, *args, **kw: runtime.pinv_vjp(ct, ans, x))

nondifferentiable(np.linalg.matrix_rank)

# slogdet returns (sign, logabsdet): the tangent is a pair (the sign's is zero); the
# cotangent arriving is a pair too (the sign's ignored, None is zero).
defjvp(np.linalg.slogdet, lambda dx, ans, x: runtime.slogdet_jvp(dx, ans, x))
defvjp(np.linalg.slogdet, lambda ct, ans, x: runtime.slogdet_vjp(ct, ans, x))

defjvp(
    np.linalg.eigvalsh,
    lambda dx, ans, x, *args, **kw: runtime.eigvalsh_jvp(dx, ans, x, *args, **kw),
)
defvjp(
    np.linalg.eigvalsh,
    lambda ct, ans, x, *args, **kw: runtime.eigvalsh_vjp(ct, ans, x, *args, **kw),
)


# --- NumPy 2 / array-API functions of numpy.linalg --------------------------------------
defjvp(np.linalg.vector_norm, lambda dx, ans, x, **kw: runtime.vector_norm_jvp(dx, ans, x, **kw))
defvjp(np.linalg.vector_norm, lambda ct, ans, x, **kw: runtime.vector_norm_vjp(ct, ans, x, **kw))
defjvp(np.linalg.matrix_norm, lambda dx, ans, x, **kw: runtime.matrix_norm_jvp(dx, ans, x, **kw))
defvjp(np.linalg.matrix_norm, lambda ct, ans, x, **kw: runtime.matrix_norm_vjp(ct, ans, x, **kw))
# svdvals: distinct singular values
defjvp(np.linalg.svdvals, lambda dx, ans, x: runtime.svdvals_jvp(dx, ans, x))
defvjp(np.linalg.svdvals, lambda ct, ans, x: runtime.svdvals_vjp(ct, ans, x))

def_linear(np.linalg.matrix_transpose, np.linalg.diagonal, np.linalg.trace)
defvjp(np.linalg.matrix_transpose, lambda ct, ans, x: np.matrix_transpose(ct))
defvjp(np.linalg.diagonal, lambda ct, ans, x, offset=0: runtime.diagonal_vjp(ct, x, offset, -2, -1))
defvjp(
    np.linalg.trace,
    lambda ct, ans, x, offset=0, dtype=None: runtime.trace_vjp(ct, x, offset, -2, -1),
)

defjvp(
    np.linalg.outer,
    lambda dx, ans, x, y: np.linalg.outer(dx, y),
    lambda dy, ans, x, y: np.linalg.outer(x, dy),
)
defvjp(np.linalg.outer, lambda ct, ans, x, y: ct @ y, lambda ct, ans, x, y: x @ ct)
broadcasting(np.linalg.cross)
defjvp(
    np.linalg.cross,
    lambda dx, ans, x, y, axis=-1: np.linalg.cross(dx, y, axis=axis),
    lambda dy, ans, x, y, axis=-1: np.linalg.cross(x, dy, axis=axis),
)
defvjp(
    np.linalg.cross,
    lambda ct, ans, x, y, axis=-1: runtime.cross_vjp(ct, x, y, axis=axis),
    lambda ct, ans, x, y, axis=-1: runtime.cross_vjp(ct, x, y, axis=axis, of_y=True),
)
defjvp(
    np.linalg.matmul,
    lambda dx, ans, x, y: np.linalg.matmul(dx, y),
    lambda dy, ans, x, y: np.linalg.matmul(x, dy),
)
defvjp(
    np.linalg.matmul,
    lambda ct, ans, x, y: runtime.matmul_vjp_left(ct, x, y),
    lambda ct, ans, x, y: runtime.matmul_vjp_right(ct, x, y),
)
defjvp(
    np.linalg.tensordot,
    lambda dx, ans, x, y, axes=2: np.linalg.tensordot(dx, y, axes=axes),
    lambda dy, ans, x, y, axes=2: np.linalg.tensordot(x, dy, axes=axes),
)
defvjp(
    np.linalg.tensordot,
    lambda ct, ans, x, y, axes=2: runtime.tensordot_vjp_left(ct, x, y, axes),
    lambda ct, ans, x, y, axes=2: runtime.tensordot_vjp_right(ct, x, y, axes),
)
# vecdot(x, y) = sum(conj(x) * y) over axis: conjugate-linear in x, as np.vdot
defjvp(
    np.linalg.vecdot,
    lambda dx, ans, x, y, axis=-1: np.linalg.vecdot(dx, y, axis=axis),  # type: ignore[call-overload]
    lambda dy, ans, x, y, axis=-1: np.linalg.vecdot(x, dy, axis=axis),  # type: ignore[call-overload]
)
defvjp(
    np.linalg.vecdot,
    lambda ct, ans, x, y, axis=-1: runtime.vecdot_vjp(ct, y, x, axis, conjugated=True),
    lambda ct, ans, x, y, axis=-1: runtime.vecdot_vjp(ct, x, y, axis),
)


# --- a list of factors, tuple results ------------------------------------------------
defjvp(np.linalg.multi_dot, lambda dxs, ans, xs, **kw: runtime.multi_dot_jvp(dxs, ans, xs, **kw))
defvjp(np.linalg.multi_dot, lambda ct, ans, xs, **kw: runtime.multi_dot_vjp(ct, ans, xs, **kw))
# eigvals of a general matrix: distinct eigenvalues, complex (a real matrix has real
# eigenvalues or conjugate pairs; their kind is complex either way).
defjvp(np.linalg.eigvals, lambda dx, ans, x: runtime.eigvals_jvp(dx, ans, x))
defvjp(np.linalg.eigvals, lambda ct, ans, x: runtime.eigvals_vjp(ct, ans, x))
holds_for_complex(np.linalg.eigvals)
primitive(np.linalg.eigvals).kind = lambda x: (
    Kind(Tag.ARRAY, x.ndim - 1, "c") if x.tag is Tag.ARRAY and x.ndim else UNKNOWN
)


# eig of a general matrix: distinct eigenvalues; each eigenvector as LAPACK normalizes it
# (unit length, its entry of largest modulus real), so its derivative is fixed too.
defjvp(np.linalg.eig, lambda dx, ans, x: runtime.eig_jvp(dx, ans, x))
defvjp(np.linalg.eig, lambda ct, ans, x: runtime.eig_vjp(ct, ans, x))
holds_for_complex(np.linalg.eig)

# lstsq of a matrix of full column rank: the solution and the residuals (from the normal
# equations); the rank has no derivative, and the singular values' is refused.
defjvp(
    np.linalg.lstsq,
    lambda da, ans, a, b, rcond=None: runtime.lstsq_jvp(da, 0.0, ans, a, b),
    lambda db, ans, a, b, rcond=None: runtime.lstsq_jvp(0.0, db, ans, a, b),
)
defvjp(
    np.linalg.lstsq,
    lambda ct, ans, a, b, rcond=None: runtime.lstsq_vjp(ct, ans, a, b),
    lambda ct, ans, a, b, rcond=None: runtime.lstsq_vjp(ct, ans, a, b, of_b=True),
)
handles(np.linalg.lstsq, "rcond")

# eigh: distinct eigenvalues; like eigvalsh, only the triangle UPLO is read.
defjvp(np.linalg.eigh, lambda dx, ans, x, *args, **kw: runtime.eigh_jvp(dx, ans, x, *args, **kw))
defvjp(np.linalg.eigh, lambda ct, ans, x, *args, **kw: runtime.eigh_vjp(ct, ans, x, *args, **kw))
# svd: distinct non-zero singular values; full_matrices=True only for square matrices.
defjvp(np.linalg.svd, lambda dx, ans, x, *args, **kw: runtime.svd_jvp(dx, ans, x, *args, **kw))
defvjp(np.linalg.svd, lambda ct, ans, x, *args, **kw: runtime.svd_vjp(ct, ans, x, *args, **kw))
# qr: a tall or square matrix of full rank; modes "reduced", "complete" (square) and "r".
defjvp(np.linalg.qr, lambda dx, ans, x, *args, **kw: runtime.qr_jvp(dx, ans, x, *args, **kw))
defvjp(np.linalg.qr, lambda ct, ans, x, *args, **kw: runtime.qr_vjp(ct, ans, x, *args, **kw))
# What each rule handles besides its differentiable arguments (rules/binding.py).
handles(np.linalg.norm, "ord", "axis", "keepdims")
handles(np.linalg.vector_norm, "ord", "axis", "keepdims")
handles(np.linalg.matrix_norm, "ord", "keepdims")
handles([np.linalg.eigvalsh, np.linalg.eigh], "UPLO")
handles([np.linalg.diagonal, np.linalg.trace], "offset")
handles([np.linalg.cross, np.linalg.vecdot], "axis")
handles(np.linalg.tensordot, "axes")
handles(np.linalg.svd, "full_matrices", "compute_uv")
handles(np.linalg.qr, "mode")
handles(np.linalg.multi_dot, sequences=True)


def _result_kind(cls, *ranks, form_from=0, real=()):
    """The kind of a NumPy result namedtuple whose fields have rank ``ndim(x) + r`` (a
    float where that is 0). Positional arguments from the ``form_from``-th after ``x`` on may
    change the result (``svd(x, False, False)``'s ``compute_uv``, ``qr(x, "r")``'s ``mode``):
    its kind is then unknown; None: none does (``eigh``'s ``UPLO``). ``real``: the fields
    that are real of a complex ``x`` too (``eigh``'s eigenvalues, ``svd``'s singular values);
    the others are then complex."""

    def kind(x, *rest, **keywords):
        if form_from is not None and len(rest) > form_from:
            return UNKNOWN
        if keywords.keys() & {"compute_uv", "mode"}:  # svd's arrays or one; qr's mode
            return UNKNOWN
        if x.tag is not Tag.ARRAY or x.ndim is None:
            return Kind(Tag.RECORD, cls=cls, fields=cls._fields)
        if x.dtype == "c" and real:
            elements = tuple(
                (Kind(Tag.ARRAY, x.ndim + r, "f" if i in real else "c") if x.ndim + r else FLOAT)
                for i, r in enumerate(ranks)
            )
        elif x.dtype != "f":  # complex or not known, fields not said real: not known
            elements = tuple(Kind(Tag.ARRAY, x.ndim + r) if x.ndim + r else NUMBER for r in ranks)
        else:
            elements = tuple(
                Kind(Tag.ARRAY, x.ndim + r, "f") if x.ndim + r else FLOAT for r in ranks
            )
        return Kind(Tag.RECORD, elements=elements, cls=cls, fields=cls._fields)

    return kind


_EYE = np.eye(2)


def _lstsq_kind(a, b, *rest, **keywords):
    """``(x, residuals, rank, singular values)`` of ``np.linalg.lstsq(a, b)``: ``x`` of
    ``b``'s rank, the rank an integer."""
    if b.tag is not Tag.ARRAY or b.ndim is None or a.tag is not Tag.ARRAY:
        return UNKNOWN
    if "c" in (a.dtype, b.dtype) or None in (a.dtype, b.dtype):
        return UNKNOWN  # complex, or not known to be real: the solution may be complex
    vector = Kind(Tag.ARRAY, 1, "f")
    return Kind(Tag.TUPLE, elements=(Kind(Tag.ARRAY, b.ndim, "f"), vector, INT, vector))


primitive(np.linalg.lstsq).kind = _lstsq_kind


def _eig_kind(x):
    """``eig(x)``'s (eigenvalues, eigenvectors): complex arrays (a real matrix's are complex
    where it has complex eigenvalues; complex rules hold for real values too)."""
    cls = type(np.linalg.eig(_EYE))
    if x.tag is not Tag.ARRAY or x.ndim is None:
        return Kind(Tag.RECORD, cls=cls, fields=cls._fields)
    elements = (Kind(Tag.ARRAY, x.ndim - 1, "c"), Kind(Tag.ARRAY, x.ndim, "c"))
    return Kind(Tag.RECORD, elements=elements, cls=cls, fields=cls._fields)


primitive(np.linalg.eig).kind = _eig_kind
primitive(np.linalg.eigh).kind = _result_kind(
    type(np.linalg.eigh(_EYE)), -1, 0, form_from=None, real=(0,)
)
primitive(np.linalg.svd).kind = _result_kind(
    type(np.linalg.svd(_EYE)), 0, -1, 0, form_from=1, real=(1,)
)
primitive(np.linalg.qr).kind = _result_kind(type(np.linalg.qr(_EYE)), 0, 0)
primitive(np.linalg.slogdet).kind = _result_kind(type(np.linalg.slogdet(_EYE)), -2, -2)
