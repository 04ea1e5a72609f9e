"""Tangents and cotangents of spectral decompositions: eigenvalues and eigenvectors,
singular values and vectors.

Distinct eigenvalues (singular values) throughout. Real symmetric eigenvectors and real
singular vectors are fixed up to a sign, which is locally constant; complex ones (``eigh``
of a Hermitian matrix, ``svd`` of a complex one) only up to a phase ``e^(i t)``: their
reverse rules check that the result does not depend on it, their forward rules refuse.
``eig``'s vectors are as LAPACK normalizes them (unit length, the largest entry real), so
their rules follow that normalization.

>>> x = np.array([[2.0, 1.0], [1.0, 2.0]])
>>> eigvalsh_vjp(np.array([0.0, 1.0]), np.linalg.eigvalsh(x), x)
array([[0.5, 0. ],
       [1. , 0.5]])
"""

import numpy as np

from .errors import TangentAstError
from .linalg import _H, _T, _gap_inverse, _parts, _tuple_like
from .tangents import real_like


def eigvalsh_jvp(dx, ans, x, UPLO="L"):
    """Tangent of ``eigvalsh(x)`` (distinct eigenvalues): ``Re diag(V^H dx V)`` with ``dx``
    the symmetric (Hermitian) matrix of the triangle read."""
    _, v = np.linalg.eigh(x, UPLO)
    d = _from_triangle(dx, UPLO)
    return np.real(np.einsum("...ji,...jk,...ki->...i", np.conj(v), d, v))


def eigvalsh_vjp(ct, ans, x, UPLO="L"):
    """Cotangent of ``x`` for ``eigvalsh(x)``: ``conj(V diag(ct) V^H)`` on the triangle read
    (``V diag(ct) V^T`` of a real ``x``)."""
    _, v = np.linalg.eigh(x, UPLO)
    return _onto_triangle(np.conj((v * np.asarray(ct)[..., None, :]) @ _H(v)), UPLO)


def eigvals_jvp(dx, ans, x):
    """Tangent of ``eigvals(x)`` (distinct eigenvalues): ``diag(V^-1 dA V)``, complex."""
    _, v = np.linalg.eig(x)
    return np.diagonal(np.linalg.solve(v, dx @ v), axis1=-2, axis2=-1)


def eigvals_vjp(ct, ans, x):
    """Cotangent of ``x`` for ``eigvals(x)``: the transpose ``(V diag(ct) V^-1)^T``, real for
    a real ``x``."""
    _, v = np.linalg.eig(x)
    g = np.linalg.solve(_T(v), _T(v * np.asarray(ct)[..., None, :]))
    return real_like(g, x)


def _largest_entries(v):
    """The row of each eigenvector's entry of largest modulus (LAPACK makes it real)."""
    return np.argmax(np.abs(v), axis=-2)[..., None, :]


def eig_jvp(dx, ans, x):
    """Tangents ``(dw, dv)`` of ``eig(x)`` (distinct eigenvalues). With ``P = V^-1 dx V``:
    ``dw = diag(P)``, and ``dv = V (F o P)`` plus the multiple ``delta_i v_i`` of each vector
    that keeps it as LAPACK normalizes it (unit length, its largest entry real)."""
    w, v = ans
    p = np.linalg.solve(v, dx @ v)
    dw = np.diagonal(p, axis1=-2, axis2=-1).copy()
    dv = v @ (_gap_inverse(w) * p)
    rows = _largest_entries(v)
    largest = np.take_along_axis(v, rows, axis=-2)[..., 0, :]
    lengthwise = np.real(np.sum(np.conj(v) * dv, axis=-2))
    turn = np.imag(np.take_along_axis(dv, rows, axis=-2)[..., 0, :]) / np.real(largest)
    dv = (
        dv - v * (lengthwise + 1j * turn)[..., None, :]
        if np.iscomplexobj(dv)
        else (dv - v * lengthwise[..., None, :])
    )
    return _tuple_like(ans, (dw, dv))


def eig_vjp(ct, ans, x):
    """Cotangent of ``x`` for ``eig(x)``: ``V^-T (diag(ct_w) + F o V^T ct_v') V^T``, where
    ``ct_v'`` is ``ct_v`` through the adjoint of the normalization (see :func:`eig_jvp`);
    real for a real ``x``."""
    w, v = ans
    ct_w, ct_v = _parts(ct, 2)
    inner = np.zeros(np.shape(v)) + 0j  # complex, as the eigenvalues may be
    if ct_w is not None:
        inner = inner + np.asarray(ct_w)[..., None, :] * np.eye(w.shape[-1])
    if ct_v is not None:
        c = np.sum(v * ct_v, axis=-2)[..., None, :]  # (V^T ct_v)_ii
        rows = _largest_entries(v)
        largest = np.take_along_axis(v, rows, axis=-2)
        ct_v = ct_v - np.real(c) * np.conj(v)
        at_largest = (np.arange(v.shape[-2])[:, None] == rows) * (
            -1j * np.imag(c) / np.real(largest)
        )
        inner = inner + _gap_inverse(w) * (_T(v) @ (ct_v + at_largest))
    g = np.linalg.solve(_T(v), inner @ _T(v))
    return real_like(g, x)


def svdvals_jvp(dx, ans, x):
    """Tangent of ``np.linalg.svdvals`` (distinct singular values): ``Re(u_i^H dx v_i)``."""
    u, _s, vt = np.linalg.svd(x, full_matrices=False)
    return np.real(np.einsum("...ji,...jk,...ik->...i", np.conj(u), dx, np.conj(vt)))


def svdvals_vjp(ct, ans, x):
    """Cotangent of ``x`` for ``np.linalg.svdvals``: ``conj(u diag(ct) v^H)`` (``u diag(ct)
    v^T`` of a real ``x``)."""
    u, _s, vt = np.linalg.svd(x, full_matrices=False)
    return np.conj((u * np.asarray(ct)[..., None, :]) @ vt)


def _from_triangle(dx, UPLO):
    """The symmetric (complex: Hermitian) matrix ``eigh``/``eigvalsh`` build from the triangle
    of ``dx`` they read: the strict triangle, its conjugate transpose, and the real part of
    the diagonal."""
    strict = np.tril(dx, -1) if UPLO == "L" else np.triu(dx, 1)
    return strict + _H(strict) + np.real(dx) * np.eye(np.shape(dx)[-1])


def _onto_triangle(g, UPLO):
    """The adjoint of :func:`_from_triangle`: ``g`` gathered onto the triangle read (where
    ``Re sum(g * dA) == Re sum(result * dx)``), real on the diagonal."""
    both = g + _H(g)
    return (np.tril(both) if UPLO == "L" else np.triu(both)) - np.eye(g.shape[-1]) * both / 2


def eigh_jvp(dx, ans, x, UPLO="L"):
    """Tangents ``(dw, dv)`` of ``eigh(x)`` (distinct eigenvalues): ``dw = diag(V^T dA V)``,
    ``dv = V (F o V^T dA V)`` with ``dA`` the symmetric matrix of the triangle read."""
    if np.iscomplexobj(x):
        raise _phases_forward("np.linalg.eigh's eigenvectors", "np.linalg.eigvalsh(x)")
    w, v = ans
    p = _T(v) @ _from_triangle(dx, UPLO) @ v
    dw = np.diagonal(p, axis1=-2, axis2=-1).copy()
    dv = v @ (_gap_inverse(w) * p)
    return _tuple_like(ans, (dw, dv))


def eigh_vjp(ct, ans, x, UPLO="L"):
    """Cotangent of ``x`` for ``eigh(x)``: ``V (diag(ct_w) + F o V^T ct_v) V^T`` on the triangle
    read; of a complex ``x``, ``conj(V) (...) V^T``, where the result must not depend on the
    eigenvectors' phases (checked: ``Im diag(V^T ct_v) == 0``)."""
    w, v = ans
    ct_w, ct_v = _parts(ct, 2)
    inner = np.zeros(np.shape(x), dtype=np.result_type(x, float))
    if ct_w is not None:
        inner = inner + np.asarray(ct_w)[..., None, :] * np.eye(w.shape[-1])
    if ct_v is not None:
        projected = _T(v) @ ct_v
        if np.iscomplexobj(v):
            _check_phase_free(
                np.diagonal(projected, axis1=-2, axis2=-1), _column_norms(ct_v), "eigenvectors"
            )
        inner = inner + _gap_inverse(w) * projected
    return _onto_triangle(np.conj(v) @ inner @ _T(v), UPLO)


def _check_phase_free(diagonal, scale, what):
    """A result that does not change when complex vectors ``v_i`` are multiplied by a phase
    ``e^(i t)`` has ``Im(diagonal) == 0``, ``diagonal`` being ``(V^T ct_v)_ii`` (summed over
    the vectors sharing the phase); otherwise refuse: no derivative is right."""
    if np.any(np.abs(np.imag(diagonal)) > 1e-8 * (1.0 + scale)):
        raise TangentAstError(
            f"the result depends on the phases of the {what} of a complex matrix, which NumPy "
            "does not fix (a vector times e^(i t) is as good): it has no derivative",
            hint="use values that do not depend on the phases, such as np.abs(v) or v @ v.conj().T",
        )


def _column_norms(a):
    return np.sqrt(np.sum(np.abs(a) ** 2, axis=-2))


def _phases_forward(what, values):
    """The refusal of tangents of complex vectors fixed only up to a phase, in forward mode."""
    return TangentAstError(
        f"the tangent of {what} of a complex matrix depends on their phases, which NumPy does "
        "not fix, and forward mode cannot tell whether the result does",
        hint="differentiate in reverse mode (grad, vjp), which checks that the result does not "
        f"depend on the phases, or take the values alone with {values}",
    )


def _check_svd(x, full_matrices, compute_uv, hermitian):
    if hermitian:
        raise TangentAstError("svd derivatives support hermitian=False only")

    m, n = np.shape(x)[-2:]
    if compute_uv and full_matrices and m != n:
        raise TangentAstError("svd derivatives of a non-square matrix need full_matrices=False")


def svd_jvp(dx, ans, x, full_matrices=True, compute_uv=True, hermitian=False):
    """Tangents of ``svd(x)`` (distinct non-zero singular values), after Townsend (2016)."""
    _check_svd(x, full_matrices, compute_uv, hermitian)
    if not compute_uv:
        return svdvals_jvp(dx, ans, x)
    if np.iscomplexobj(x):
        raise _phases_forward("np.linalg.svd's singular vectors", "np.linalg.svdvals(x)")
    u, s, vt = ans
    v = _T(vt)
    p = _T(u) @ dx @ v
    ds = np.diagonal(p, axis1=-2, axis2=-1).copy()
    f = _gap_inverse(s**2)
    ps = p * s[..., None, :]  # P S
    sp = s[..., :, None] * p  # S P
    du = u @ (f * (ps + _T(ps))) + (dx @ v - u @ p) / s[..., None, :]
    dv = v @ (f * (sp + _T(sp))) + (_T(dx) @ u - v @ _T(p)) / s[..., None, :]
    return _tuple_like(ans, (du, ds, _T(dv)))


def svd_vjp(ct, ans, x, full_matrices=True, compute_uv=True, hermitian=False):
    """Cotangent of ``x`` for ``svd(x)`` (distinct non-zero singular values). Of a complex
    ``x``, the pairs ``(u_i, v_i)`` are fixed only up to a common phase: the result must not
    depend on it (checked: ``Im diag(U^T ct_u + V^T ct_v) == 0``); the term ``diag(i Im
    (U^T ct_u)_ii / s_i)`` is that of the phase in which ``U^H dU`` has a real diagonal."""
    _check_svd(x, full_matrices, compute_uv, hermitian)
    if not compute_uv:
        return svdvals_vjp(ct, ans, x)
    u, s, vt = ans
    v = _H(vt)
    ct_u, ct_s, ct_vt = _parts(ct, 3)
    f = _gap_inverse(s**2)
    k = s.shape[-1]
    inner = np.zeros(np.shape(s) + (k,), dtype=np.result_type(x, float))
    g = np.zeros(np.shape(x), dtype=np.result_type(x, float))
    phase = 0.0  # diag(U^T ct_u + V^T ct_v)
    scale = 0.0
    if ct_s is not None:
        inner = inner + np.asarray(ct_s)[..., None, :] * np.eye(k)
    if ct_u is not None:
        j = _T(u) @ ct_u
        # off the diagonal, F o (J - J^H) S; on it, i Im(J_ii) / s_i: 0 for real values
        inner = inner + (f * (j - _H(j))) * s[..., None, :]
        inner = inner + np.eye(k) * (j - _H(j)) / (2 * s[..., None, :])
        phase = phase + np.diagonal(j, axis1=-2, axis2=-1)
        scale = scale + _column_norms(ct_u)
        g = g + (ct_u - np.conj(u) @ j) / s[..., None, :] @ _T(v)
    if ct_vt is not None:
        ct_v = _H(ct_vt)
        j = _T(v) @ ct_v
        inner = inner + s[..., :, None] * (f * (j - _H(j)))
        phase = phase + np.diagonal(j, axis1=-2, axis2=-1)
        scale = scale + _column_norms(ct_v)
        g = g + _H((ct_v - np.conj(v) @ j) / s[..., None, :] @ _T(u))
    if np.iscomplexobj(x):
        _check_phase_free(phase, scale, "singular vectors")
    return g + np.conj(u) @ inner @ _T(v)
