"""Tangents and cotangents of linear algebra: products, solves, factorizations, norms.

>>> x = np.array([[2.0, 0.0], [0.0, 3.0]])
>>> det_vjp(1.0, np.linalg.det(x), x)
array([[3., 0.],
       [0., 2.]])
"""

import numpy as np

from .elementwise import safe_divide
from .errors import TangentAstError
from .reductions import extremum_mask
from .sequences import leaf_like
from .shapes import as_floating, keep_reduced, reduced_axes, scalar_like
from .tangents import TangentTuple, unbroadcast


def _T(a):
    return np.swapaxes(a, -1, -2)


def _H(a):
    """The conjugate transpose of the matrices in ``a``'s last two axes (``_T`` of a real one)."""
    return np.conj(np.swapaxes(a, -1, -2)) if np.iscomplexobj(a) else np.swapaxes(a, -1, -2)


def matmul_vjp_left(ct, x, y):
    """Cotangent of ``x`` in ``x @ y`` for any ranks (vectors, matrices, stacks)."""
    if np.ndim(y) == 1:
        return unbroadcast(np.multiply.outer(ct, y) if np.ndim(x) > 1 else ct * y, x)
    if np.ndim(x) == 1:  # x (k) against y (..., k, m): ct (..., m)
        return unbroadcast((y @ np.asarray(ct)[..., None])[..., 0], x)
    return unbroadcast(ct @ np.swapaxes(y, -1, -2), x)


def matmul_vjp_right(ct, x, y):
    """Cotangent of ``y`` in ``x @ y`` for any ranks."""
    if np.ndim(x) == 1:  # x (k) against y (..., k, m): ct (..., m)
        if np.ndim(y) == 1:
            return unbroadcast(ct * x, y)
        return unbroadcast(np.asarray(x)[:, None] * np.asarray(ct)[..., None, :], y)
    if np.ndim(y) == 1:
        return (
            unbroadcast(np.swapaxes(x, -1, -2) @ ct, y)
            if np.ndim(x) == 2
            else unbroadcast((np.swapaxes(x, -1, -2) @ ct[..., None])[..., 0], y)
        )
    return unbroadcast(np.swapaxes(x, -1, -2) @ ct, y)


def _dot_axes(x, y):
    """np.dot as a tensordot: the last axis of x against the second-to-last of y (its only one for
    a vector)."""
    return [np.ndim(x) - 1], [max(np.ndim(y) - 2, 0)]


def dot_vjp_left(ct, x, y):
    """Cotangent of ``x`` in ``np.dot(x, y)`` for any ranks (a scalar factor included)."""
    if np.ndim(x) == 0 or np.ndim(y) == 0:
        return unbroadcast(ct * y, x)
    if np.ndim(x) <= 2 and np.ndim(y) <= 2:
        return matmul_vjp_left(ct, x, y)
    return tensordot_vjp_left(ct, x, y, _dot_axes(x, y))


def dot_vjp_right(ct, x, y):
    """Cotangent of ``y`` in ``np.dot(x, y)`` for any ranks (a scalar factor included)."""
    if np.ndim(x) == 0 or np.ndim(y) == 0:
        return unbroadcast(ct * x, y)
    if np.ndim(x) <= 2 and np.ndim(y) <= 2:
        return matmul_vjp_right(ct, x, y)
    return tensordot_vjp_right(ct, x, y, _dot_axes(x, y))


def inner_vjp_left(ct, x, y):
    """Cotangent of ``x`` for ``np.inner(x, y)``."""
    nx, ny = np.ndim(x), np.ndim(y)
    if nx == 0:
        return scalar_like(np.sum(ct * y), x)
    if ny == 0:
        return ct * y
    g = np.tensordot(ct, y, axes=(list(range(nx - 1, np.ndim(ct))), list(range(ny - 1))))
    return np.reshape(g, np.shape(x))


def inner_vjp_right(ct, x, y):
    """Cotangent of ``y`` for ``np.inner(x, y)``."""
    nx, ny = np.ndim(x), np.ndim(y)
    if ny == 0:
        return scalar_like(np.sum(ct * x), y)
    if nx == 0:
        return ct * x
    g = np.tensordot(ct, x, axes=(list(range(nx - 1)), list(range(nx - 1))))
    return np.reshape(g, np.shape(y))


def _tensordot_axes(ndim_x, ndim_y, axes):
    """The contracted axes of each factor of ``np.tensordot``, from the factors' ranks (not
    the factors: the axes have no derivative, which a rule derived from this one sees)."""
    if np.ndim(axes) == 0:
        n = int(axes)
        return list(range(ndim_x - n, ndim_x)), list(range(n))
    a, b = axes
    a = [a] if np.ndim(a) == 0 else list(a)
    b = [b] if np.ndim(b) == 0 else list(b)
    return [i % ndim_x for i in a], [i % ndim_y for i in b]


def tensordot_vjp_left(ct, x, y, axes=2):
    """Cotangent of ``x`` for ``np.tensordot(x, y, axes)``."""
    ax, ay = _tensordot_axes(np.ndim(x), np.ndim(y), axes)
    free_x = [i for i in range(np.ndim(x)) if i not in ax]
    free_y = [i for i in range(np.ndim(y)) if i not in ay]
    g = np.tensordot(ct, y, axes=(list(range(len(free_x), np.ndim(ct))), free_y))
    order = free_x + [ax[k] for k in np.argsort(ay)]
    return np.transpose(g, np.argsort(order))


def tensordot_vjp_right(ct, x, y, axes=2):
    """Cotangent of ``y`` for ``np.tensordot(x, y, axes)``."""
    ax, ay = _tensordot_axes(np.ndim(x), np.ndim(y), axes)
    free_x = [i for i in range(np.ndim(x)) if i not in ax]
    free_y = [i for i in range(np.ndim(y)) if i not in ay]
    g = np.tensordot(x, ct, axes=(free_x, list(range(len(free_x)))))
    order = [ay[k] for k in np.argsort(ax)] + free_y
    return np.transpose(g, np.argsort(order))


def cross_vjp(ct, x, y, axisa=-1, axisb=-1, axisc=-1, axis=None, of_y=False):
    """Cotangent of ``x`` (or, ``of_y``, of ``y``) for ``np.cross(x, y, ...)`` of 3-vectors,
    of the broadcast shape (the rule sums it down): ``ct`` crossed with the other factor
    (``<ct, cross(x, y)> = <cross(y, ct), x> = <cross(ct, x), y>``), on the vector axes the
    call names (``axis`` names all three)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    if np.shape(x)[axisa] != 3 or np.shape(y)[axisb] != 3:
        raise TangentAstError("derivatives of np.cross support vectors of 3 components only")
    c, a, b = np.moveaxis(ct, axisc, -1), np.moveaxis(x, axisa, -1), np.moveaxis(y, axisb, -1)
    if of_y:
        g = np.cross(c, a)
        # the vector axis back where the factor has it, counted in the broadcast result
        return np.moveaxis(g, -1, np.ndim(g) - np.ndim(y) + axisb % np.ndim(y))
    g = np.cross(b, c)
    return np.moveaxis(g, -1, np.ndim(g) - np.ndim(x) + axisa % np.ndim(x))


def _kron_cotangent(ct, x, y, of_left):
    """Cotangent of one factor of ``np.kron(x, y)``: contract ``ct`` with the other."""
    nd = max(np.ndim(x), np.ndim(y))
    # the shapes with leading axes of length 1 up to nd
    xs = np.shape(np.expand_dims(x, tuple(range(nd - np.ndim(x)))))
    ys = np.shape(np.expand_dims(y, tuple(range(nd - np.ndim(y)))))
    interleaved = np.ravel(np.stack([xs, ys], axis=-1)).astype(int)  # x0, y0, x1, y1, ...
    r = np.reshape(ct, interleaved)
    if of_left:
        other, start = np.reshape(y, ys), 1
    else:
        other, start = np.reshape(x, xs), 0
    g = np.tensordot(r, other, axes=(list(range(start, 2 * nd, 2)), list(range(nd))))
    mine = x if of_left else y
    return scalar_like(np.reshape(g, np.shape(mine)), mine)


def kron_vjp_left(ct, x, y):
    """Cotangent of ``x`` for ``np.kron(x, y)``."""
    return _kron_cotangent(ct, x, y, of_left=True)


def kron_vjp_right(ct, x, y):
    """Cotangent of ``y`` for ``np.kron(x, y)``."""
    return _kron_cotangent(ct, x, y, of_left=False)


def det_jvp(dx, ans, x):
    """Tangent of ``det(x)``: ``det(x) tr(x^-1 dx)``."""
    return scalar_like(ans * np.einsum("...ij,...ji->...", np.linalg.inv(x), dx), ans)


def det_vjp(ct, ans, x):
    """Cotangent of ``x`` for ``det(x)``: ``ct det(x) x^-T``."""
    return (np.asarray(ct) * ans)[..., None, None] * _T(np.linalg.inv(x))


def solve_jvp_a(da, ans, a, b):
    """Tangent of ``solve(a, b)`` along ``a``: ``-a^-1 da ans``."""
    if np.ndim(b) == 1:
        return -np.linalg.solve(a, (da @ ans[..., None]))[..., 0]
    return -np.linalg.solve(a, da @ ans)


def solve_vjp_a(ct, ans, a, b):
    """Cotangent of ``a`` for ``solve(a, b)``: ``-(a^-T ct) ans^T``."""
    if np.ndim(b) == 1:
        gb = np.linalg.solve(_T(a), ct[..., None])
        return unbroadcast(-gb @ ans[..., None, :], a)
    return unbroadcast(-np.linalg.solve(_T(a), ct) @ _T(ans), a)


def solve_vjp_b(ct, ans, a, b):
    """Cotangent of ``b`` for ``solve(a, b)``: ``a^-T ct``."""
    if np.ndim(b) == 1:
        return unbroadcast(np.linalg.solve(_T(a), ct[..., None])[..., 0], b)
    return unbroadcast(np.linalg.solve(_T(a), ct), b)


def _phi(x):
    """The lower triangle of ``x`` with its diagonal halved."""
    return np.tril(x) - 0.5 * np.eye(x.shape[-1]) * x


def _symmetric_from_lower(x):
    """The symmetric matrix whose lower triangle is that of ``x`` (what cholesky reads)."""
    return np.tril(x) + _T(np.tril(x, -1))


def cholesky_jvp(dx, ans, x):
    """Tangent of ``L = cholesky(x)``: ``L phi(L^-1 dx L^-T)`` (the lower triangle of ``dx``)."""
    inv_l = np.linalg.inv(ans)
    return ans @ _phi(inv_l @ _symmetric_from_lower(dx) @ _T(inv_l))


def cholesky_vjp(ct, ans, x):
    """Cotangent of ``x`` for ``cholesky(x)``, on the lower triangle it reads."""
    inv_l = np.linalg.inv(ans)
    s = _T(inv_l) @ _phi(_T(ans) @ ct) @ inv_l
    g = 0.5 * (s + _T(s))
    return np.tril(g + _T(g)) - np.eye(g.shape[-1]) * g


def _norm_kind(ndim, ord, axis):
    """``("vector" or "matrix", the axes reduced)`` of ``np.linalg.norm`` of an array of
    ``ndim`` dimensions (from the number alone, so no derivative reaches the axes)."""
    if axis is None:
        return ("vector" if ndim <= 1 or ord is None else "matrix"), (
            None if ndim <= 1 or ord is None else (0, 1)
        )
    if isinstance(axis, (tuple, list)) and len(axis) == 2:
        return "matrix", tuple(axis)
    return "vector", axis


def _power_norm_grad(x, n, p):
    """``d norm(x, p) / dx = sign(x) (|x| / n) ** (p - 1)``, and 0 where ``x`` is 0 (where the
    power is infinite for ``p < 1``) and where the norm ``n`` is 0."""
    ratio = safe_divide(np.abs(x), n)
    if p >= 1:
        return np.sign(x) * ratio ** (p - 1)
    return safe_divide(np.sign(x), ratio ** (1 - p))


def norm_grad(ans, x, ord=None, axis=None, keepdims=False):
    """``d norm(x) / dx`` for the supported orders, with the result's axes kept; 0 where the
    norm is 0 (docs/rules.md, "Where a derivative divides by zero"). Of a complex ``x``, ``g``
    with ``d norm = Re(sum(g * dx))``: a vector norm's (and Frobenius's) depends on ``|x|``
    only, so it is the real one at ``|x|`` times ``conj(x) / |x|``; the spectral and nuclear
    norms' is the conjugate of ``u v^H``."""
    kind, ax = _norm_kind(np.ndim(x), ord, axis)
    n = keep_reduced(ans, x, ax, keepdims) if np.ndim(x) else ans
    if kind == "matrix" and ord not in (None, "fro"):
        rows, cols = ax[0] % np.ndim(x), ax[1] % np.ndim(x)
        g = _matrix_norm_grad_last(np.moveaxis(x, (rows, cols), (-2, -1)), ord)
        return np.where(n == 0, 0.0, np.moveaxis(g, (-2, -1), (rows, cols)))
    if np.iscomplexobj(x):
        size = np.abs(x)
        return norm_grad(ans, size, ord, axis, keepdims) * safe_divide(np.conj(x), size)
    x = np.asarray(x, dtype=float)
    if kind == "vector" or ord in (None, "fro"):  # a matrix's default norm is Frobenius's
        if ord in (None, 2, "fro"):
            return safe_divide(x, n)
        if ord == 1:
            return np.sign(x)
        if ord in (np.inf, -np.inf):
            return np.sign(x) * extremum_mask(n, np.abs(x), ax, keepdims=True)
        if np.ndim(ord) == 0 and ord not in (0,):
            return _power_norm_grad(x, n, ord)
    raise TangentAstError(
        f"np.linalg.norm(..., ord={ord!r}, axis={axis!r}) of an array of {np.ndim(x)} dimensions "
        "has no derivative rule",
        hint="vector norms (any ord), and Frobenius, nuclear and spectral (2-D) matrix norms "
        "have one; write the norm out with np.sum/np.max otherwise",
    )


def _matrix_norm_grad_last(m, ord):
    """``d norm(m, ord) / dm`` of the matrices in the last two axes of ``m`` (0 where the
    norm is 0 is the caller's): for the spectral norms the conjugate of ``u_k v_k^H`` at the
    largest (``2``) or smallest (``-2``) singular value, for the nuclear norm of ``u v^H``;
    for the 1- and inf-norms the sign of the entries of the column (row) whose sum of
    magnitudes is the extremum (ties share)."""
    if ord in (2, -2, "nuc"):
        u, _s, vt = np.linalg.svd(m, full_matrices=False)
        if ord != "nuc":
            k = 0 if ord == 2 else -1
            u, vt = u[..., :, k, None], vt[..., k, None, :]
        return np.conj(u @ vt)
    if ord in (1, -1, np.inf, -np.inf):
        # ord 1: the largest sum of magnitudes down a column (summed over the rows, axis -2,
        # the extremum over the columns, axis -1); inf: along a row
        summed, across = (-2, -1) if ord in (1, -1) else (-1, -2)
        size = np.abs(m)
        sums = np.sum(size, axis=summed, keepdims=True)
        if ord > 0:
            extreme = np.max(sums, axis=across, keepdims=True)
        else:
            extreme = np.min(sums, axis=across, keepdims=True)
        mask = extremum_mask(extreme, sums, across, keepdims=True)
        return mask * (safe_divide(np.conj(m), size) if np.iscomplexobj(m) else np.sign(m))
    raise TangentAstError(
        f"np.linalg.norm(..., ord={ord!r}) of a matrix has no derivative rule",
        hint="matrix norms with ord None, 'fro', 'nuc', 1, -1, 2, -2, inf and -inf have one",
    )


def norm_jvp(dx, ans, x, ord=None, axis=None, keepdims=False):
    """Tangent of ``np.linalg.norm``."""
    _kind, ax = _norm_kind(np.ndim(x), ord, axis)
    g = norm_grad(ans, x, ord, axis, keepdims)
    t = np.sum(g * dx, axis=ax, keepdims=keepdims)
    return scalar_like(np.real(t), ans)  # real: a norm's tangent


def norm_vjp(ct, ans, x, ord=None, axis=None, keepdims=False):
    """Cotangent of ``x`` for ``np.linalg.norm``."""
    _kind, ax = _norm_kind(np.ndim(x), ord, axis)
    g = norm_grad(ans, x, ord, axis, keepdims)
    return scalar_like(g * keep_reduced(ct, x, ax, keepdims), x)


def matrix_power_jvp(dx, ans, x, n):
    """Tangent of ``matrix_power(x, n)``."""
    if n < 0:
        inv = np.linalg.inv(x)
        return matrix_power_jvp(-inv @ dx @ inv, ans, inv, -n)
    powers = [np.broadcast_to(np.eye(np.shape(x)[-1]), np.shape(x))]
    for _ in range(n - 1):
        powers.append(powers[-1] @ x)
    return sum((powers[k] @ dx @ powers[n - 1 - k] for k in range(n)), np.zeros(np.shape(x)))


def matrix_power_vjp(ct, ans, x, n):
    """Cotangent of ``x`` for ``matrix_power(x, n)``."""
    if n < 0:
        inv = np.linalg.inv(x)
        g = matrix_power_vjp(ct, ans, inv, -n)
        return -_T(inv) @ g @ _T(inv)
    xt = _T(np.asarray(x))
    powers = [np.broadcast_to(np.eye(np.shape(x)[-1]), np.shape(x))]
    for _ in range(n - 1):
        powers.append(powers[-1] @ xt)
    return sum((powers[k] @ ct @ powers[n - 1 - k] for k in range(n)), np.zeros(np.shape(x)))


def pinv_jvp(dx, ans, x, *args, **kwargs):
    """Tangent of ``pinv(x)`` (constant rank): Golub and Pereyra's formula."""
    p, dxt = ans, _T(dx)
    eye_m, eye_n = np.eye(np.shape(x)[-2]), np.eye(np.shape(x)[-1])
    return -p @ dx @ p + p @ _T(p) @ dxt @ (eye_m - x @ p) + (eye_n - p @ x) @ dxt @ _T(p) @ p


def pinv_vjp(ct, ans, x, *args, **kwargs):
    """Cotangent of ``x`` for ``pinv(x)`` (constant rank)."""
    p, gt = ans, _T(ct)
    eye_m, eye_n = np.eye(np.shape(x)[-2]), np.eye(np.shape(x)[-1])
    return -_T(p) @ ct @ _T(p) + (eye_m - x @ p) @ gt @ p @ _T(p) + _T(p) @ p @ gt @ (eye_n - p @ x)


def slogdet_jvp(dx, ans, x):
    """Tangent of ``slogdet(x)``: ``(0, tr(x^-1 dx))`` (the sign is locally constant)."""
    return (
        np.zeros_like(ans[0], dtype=float) if np.ndim(ans[0]) else 0.0,
        scalar_like(np.einsum("...ij,...ji->...", np.linalg.inv(x), dx), ans[1]),
    )


def slogdet_vjp(ct, ans, x):
    """Cotangent of ``x`` for ``slogdet(x)``: ``ct[1] x^-T`` (``ct`` indexed like the result;
    the sign has no cotangent, and a missing one for ``logabsdet`` is zero)."""
    ct_log = None if ct is None else ct[1]
    if ct_log is None:
        return np.zeros(np.shape(x), dtype=np.result_type(x, float))
    return np.asarray(ct_log)[..., None, None] * _T(np.linalg.inv(x))


def _einsum_letters(subscripts, operands):
    """The subscripts of each operand and of the output, spelled out: an ellipsis as letters
    of its own (right-aligned, as NumPy broadcasts them), an implicit output as NumPy makes
    it (the letters used once, in order, after the ellipsis's)."""
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    inputs = inputs.split(",")
    if len(inputs) != len(operands):
        raise ValueError("einsum: the number of operands does not match the subscripts")
    named = [len(s.replace("...", "")) for s in inputs]
    dims = [
        np.ndim(op) - n if "..." in s else 0
        for s, op, n in zip(inputs, operands, named, strict=True)
    ]
    free = [c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in spec]
    ellipsis = "".join(free[: max(dims, default=0)])
    spelled = [
        s.replace("...", ellipsis[len(ellipsis) - d :]) for s, d in zip(inputs, dims, strict=True)
    ]
    if arrow:
        output = output.replace("...", ellipsis)
    else:
        counts = {c: "".join(spelled).count(c) for c in "".join(spelled)}
        output = ellipsis + "".join(
            sorted(c for c, k in counts.items() if k == 1 and c not in ellipsis)
        )
    return spelled, output


def einsum_jvp(dx, argnum, subscripts, *operands):
    """Tangent of ``np.einsum`` along operand ``argnum``: the same contraction with ``dx``
    there. Rules no longer write it (they write the contraction itself); kept so that
    packages generated by earlier versions, which call it, keep working."""
    ops = list(operands)
    ops[argnum] = dx
    return np.einsum(subscripts, *ops)


def einsum_vjp(ct, argnum, subscripts, *operands):
    """Cotangent of operand ``argnum`` of ``np.einsum``: the contraction of ``ct`` with the
    other operands onto its subscripts. An index repeated in the operand (a trace, a
    diagonal) is tied to its first place by an identity matrix; an index only it has is
    spread by broadcasting; a dimension it broadcasts (size 1) is summed back."""
    inputs, output = _einsum_letters(subscripts, operands)
    sizes = {}
    for letters, op in zip(inputs, operands, strict=True):
        for c, n in zip(letters, np.shape(op), strict=True):
            # as NumPy broadcasts: a length 1 takes the other (0 included), others agree
            sizes[c] = n if sizes.get(c, 1) == 1 else sizes[c]
    full = [
        np.broadcast_to(op, [sizes[c] for c in letters])
        for letters, op in zip(inputs, operands, strict=True)
    ]
    target = inputs[argnum]
    spare = iter(
        c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in sizes
    )
    untied, ties = "", []
    for c in target:
        if c in untied:  # the same index again: a fresh one, equal to it through eye
            fresh = next(spare)
            sizes[fresh] = sizes[c]
            ties.append((c + fresh, np.eye(sizes[c])))
            untied += fresh
        else:
            untied += c
    others = [(s, op) for i, (s, op) in enumerate(zip(inputs, full, strict=True)) if i != argnum]
    terms = [(output, ct), *others, *ties]
    present = set("".join(s for s, _ in terms))
    kept = "".join(c for c in untied if c in present)
    g = np.einsum(",".join(s for s, _ in terms) + "->" + kept, *[op for _, op in terms])
    # an index only this operand has: the contraction sums over it, so ct spreads along it
    g = np.reshape(g, [sizes[c] if c in kept else 1 for c in untied])
    g = np.broadcast_to(g, [sizes[c] for c in untied])
    return unbroadcast(g, operands[argnum])


def _vector_norm_grad(ans, x, axis=None, keepdims=False, ord=2):
    x = np.asarray(x, dtype=float)
    if axis is None:
        n = np.reshape(ans, (1,) * x.ndim) if x.ndim else ans
    else:
        n = keep_reduced(ans, x, axis, keepdims)
    if ord in (2, None):
        return safe_divide(x, n)
    if ord == 1:
        return np.sign(x)
    if ord in (np.inf, -np.inf):
        return np.sign(x) * extremum_mask(n, np.abs(x), axis, keepdims=True)
    if np.ndim(ord) == 0 and ord != 0:
        return _power_norm_grad(x, n, ord)
    raise TangentAstError(f"no derivative of np.linalg.vector_norm for ord={ord!r}")


def vector_norm_jvp(dx, ans, x, axis=None, keepdims=False, ord=2):
    """Tangent of ``np.linalg.vector_norm``."""
    g = _vector_norm_grad(ans, x, axis, keepdims, ord)
    return scalar_like(np.sum(g * dx, axis=reduced_axes(axis, np.ndim(x)), keepdims=keepdims), ans)


def vector_norm_vjp(ct, ans, x, axis=None, keepdims=False, ord=2):
    """Cotangent of ``x`` for ``np.linalg.vector_norm``."""
    g = _vector_norm_grad(ans, x, axis, keepdims, ord)
    c = (
        np.reshape(ct, (1,) * np.ndim(x))
        if axis is None and np.ndim(x)
        else keep_reduced(ct, x, axis, keepdims)
    )
    return scalar_like(g * c, x)


def _matrix_norm_grad(ans, x, keepdims=False, ord="fro"):
    x = np.asarray(x, dtype=float)
    n = np.asarray(ans) if keepdims else np.asarray(ans)[..., None, None]
    if ord == "fro":
        return safe_divide(x, n)
    if ord in ("nuc", 2):
        u, _s, vt = np.linalg.svd(x, full_matrices=False)
        g = u @ vt if ord == "nuc" else u[..., :, :1] @ vt[..., :1, :]
        return np.where(n == 0, 0.0, g)  # the singular vectors of 0 are arbitrary
    raise TangentAstError(f"no derivative of np.linalg.matrix_norm for ord={ord!r}")


def matrix_norm_jvp(dx, ans, x, keepdims=False, ord="fro"):
    """Tangent of ``np.linalg.matrix_norm`` (``fro``, ``nuc``, 2: the last two axes)."""
    g = _matrix_norm_grad(ans, x, keepdims, ord)
    return scalar_like(np.sum(g * dx, axis=(-2, -1), keepdims=keepdims), ans)


def matrix_norm_vjp(ct, ans, x, keepdims=False, ord="fro"):
    """Cotangent of ``x`` for ``np.linalg.matrix_norm``."""
    c = np.asarray(ct) if keepdims else np.asarray(ct)[..., None, None]
    return _matrix_norm_grad(ans, x, keepdims, ord) * c


def vecdot_vjp(ct, other, x, axis=-1, conjugated=False):
    """Cotangent of ``x`` for ``vecdot(other, x)`` over ``axis`` (``sum(conj(other) * x)``),
    or, ``conjugated``, for ``vecdot(x, other)``, conjugate-linear in ``x``: the conjugate of
    the product (``Re(ct * conj(dx) y) == Re(conj(ct y) dx)``)."""
    if conjugated:
        return unbroadcast(np.conj(np.expand_dims(ct, axis) * other), x)
    return unbroadcast(np.expand_dims(ct, axis) * np.conj(other), x)


def _promote_chain(xs):
    """The factors of ``multi_dot`` as matrices: a leading vector as a row, a trailing one as a
    column."""
    mats = [as_floating(x) for x in xs]
    if mats[0].ndim == 1:
        mats[0] = mats[0][None, :]
    if mats[-1].ndim == 1:
        mats[-1] = mats[-1][:, None]
    return mats


def _chain(mats, n):
    """The product of ``mats`` (identity of size ``n`` when empty)."""
    if not mats:
        return np.eye(n)
    return mats[0] if len(mats) == 1 else np.linalg.multi_dot(mats)


def multi_dot_jvp(dxs, ans, xs, out=None):
    """Tangent of ``np.linalg.multi_dot(xs)``: the sum over factors of the product with one
    tangent."""
    terms = []
    for i, dx in enumerate(dxs):
        if dx is not None:
            parts = list(xs)
            parts[i] = dx
            terms.append(np.linalg.multi_dot(parts))
    t = sum(terms[1:], terms[0]) if terms else np.zeros_like(ans, dtype=float)
    return scalar_like(t, ans)


def multi_dot_vjp(ct, ans, xs, out=None):
    """Cotangents of the factors of ``np.linalg.multi_dot(xs)``: ``left^T ct right^T`` each."""
    mats = _promote_chain(xs)
    c = np.reshape(as_floating(ct), (mats[0].shape[0], mats[-1].shape[1]))
    cts = []
    for i, x in enumerate(xs):
        left = _chain(mats[:i], mats[i].shape[0])
        right = _chain(mats[i + 1 :], mats[i].shape[1])
        cts.append(leaf_like(left.T @ c @ right.T, x))
    return TangentTuple(cts)


def _tuple_like(ans, values):
    """``values`` in the tuple class of the result ``ans`` (a NumPy result namedtuple)."""
    if isinstance(ans, tuple) and hasattr(type(ans), "_fields"):
        return type(ans)(*values)
    return TangentTuple(values)  # adds element by element: + never concatenates tangents


def _parts(ct, n):
    """The ``n`` entries of a tuple cotangent, ``None`` for each entry when ``ct`` is ``None``."""
    return (None,) * n if ct is None else tuple(ct)


def _gap_inverse(w):
    """``F[i, j] = 1 / (w[j] - w[i])`` off the diagonal, 0 on it (distinct ``w``)."""
    diff = w[..., None, :] - w[..., :, None]
    eye = np.eye(w.shape[-1], dtype=bool)
    return np.where(eye, 0.0, 1.0 / np.where(eye, 1.0, diff))


def _check_qr(x, mode):
    m, n = np.shape(x)[-2:]
    if mode not in ("reduced", "complete", "r"):
        raise TangentAstError(
            f"qr derivatives support modes 'reduced', 'complete' and 'r', not {mode!r}"
        )
    if m < n or (mode == "complete" and m != n):
        raise TangentAstError(
            "qr derivatives need a tall or square matrix (and 'complete' only when square)"
        )


def _qr_parts(ans, x, mode):
    if mode == "r":
        q, r = np.linalg.qr(x)
        return q, r
    return ans


def qr_jvp(dx, ans, x, mode="reduced"):
    """Tangents ``(dq, dr)`` of ``qr(x)`` for a tall or square ``x`` of full rank."""
    _check_qr(x, mode)
    q, r = _qr_parts(ans, x, mode)
    r_inv = np.linalg.inv(r)
    c = _T(q) @ dx @ r_inv
    low = np.tril(c, -1)
    omega = low - _T(low)
    dr = (c - omega) @ r
    if mode == "r":
        return dr
    dq = q @ omega + (dx @ r_inv - q @ c)
    return _tuple_like(ans, (dq, dr))


def qr_vjp(ct, ans, x, mode="reduced"):
    """Cotangent of ``x`` for ``qr(x)`` (tall or square, full rank)."""
    _check_qr(x, mode)
    q, r = _qr_parts(ans, x, mode)
    ct_q, ct_r = (None, ct) if mode == "r" else _parts(ct, 2)
    ct_q = np.zeros_like(q) if ct_q is None else np.asarray(ct_q)
    ct_r = np.zeros_like(r) if ct_r is None else np.asarray(ct_r)
    m = _T(q) @ ct_q - ct_r @ _T(r)
    c_bar = ct_r @ _T(r) + np.tril(m - _T(m), -1)
    g = q @ c_bar + (ct_q - q @ (_T(q) @ ct_q))
    return g @ _T(np.linalg.inv(r))


def _lstsq_parts(a, b, ans):
    """``x``, the residual ``r = b - a x`` and ``(a^T a)^-1`` of a least-squares solution;
    the derivative needs ``a`` of full column rank (the solution is then unique)."""
    x, _, rank, _ = ans
    if rank < np.shape(a)[1]:
        raise TangentAstError(
            "lstsq derivatives need a matrix of full column rank (the solution is then unique)"
        )
    return x, b - a @ x, np.linalg.inv(_T(a) @ a)


def lstsq_jvp(da, db, ans, a, b):
    """Tangents ``(dx, dresiduals, 0, 0)`` of ``np.linalg.lstsq(a, b)`` along ``da``, ``db``
    (either may be 0): from the normal equations ``a^T a x = a^T b``."""
    x, r, gram = _lstsq_parts(a, b, ans)
    da = np.broadcast_to(da, np.shape(a))
    db = np.broadcast_to(db, np.shape(b))
    dx = gram @ (_T(da) @ r - _T(a) @ (da @ x) + _T(a) @ db)
    residuals = ans[1]
    d_residuals = (
        2 * np.sum(r * (db - da @ x), axis=0).reshape(np.shape(residuals))
        if np.size(residuals)
        else np.zeros(np.shape(residuals))
    )
    return TangentTuple((dx, d_residuals, 0, np.zeros(np.shape(ans[3]))))


def lstsq_vjp(ct, ans, a, b, of_b=False):
    """Cotangent of ``a`` (or of ``b``, ``of_b``) for ``np.linalg.lstsq(a, b)``: from the
    solution's and the residuals' cotangents; the singular values' must be zero."""
    x, r, gram = _lstsq_parts(a, b, ans)
    ct_x, ct_res, _, ct_s = _parts(ct, 4)
    if ct_s is not None and np.any(ct_s):
        raise TangentAstError(
            "the derivative of lstsq's singular values is not implemented",
            hint="take them from np.linalg.svd(a, compute_uv=False)",
        )
    w = gram @ (np.zeros_like(x) if ct_x is None else ct_x)
    weighted = np.zeros_like(r) if ct_res is None or not np.size(ct_res) else r * ct_res
    if of_b:
        return a @ w + 2 * weighted
    outer = np.outer if np.ndim(x) == 1 else (lambda p, q: p @ _T(q))
    return outer(r, w) - outer(a @ w, x) - 2 * outer(weighted, x)
