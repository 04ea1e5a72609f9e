"""Table-driven checks of the NumPy and numpy.linalg rules: both modes, via check_grads.

Each case is a small module-level function calling one primitive, its
arguments, and the qualified name of the primitive whose rule must run.
"""

import subprocess
import sys

import numpy as np
import pytest

import tangent_ast as ta
from tangent_ast.errors import TangentAstError
from tangent_ast.testing import check_grads

rng = np.random.default_rng(5)
V = rng.standard_normal(4)
W = rng.standard_normal(4)
V3 = rng.standard_normal(3)
W3 = rng.standard_normal(3)
M = rng.standard_normal((3, 4))
N = rng.standard_normal((4, 2))
S = rng.standard_normal((3, 3))
T = rng.standard_normal((2, 3, 4))
P = rng.uniform(0.5, 2.0, 4)
PM = rng.uniform(0.5, 2.0, (3, 4))
ROW = rng.standard_normal((1, 4))
COL = rng.standard_normal((3, 1))
SQ = rng.standard_normal((3, 3)) + 4 * np.eye(3)        # well-conditioned
_B = rng.standard_normal((3, 3))
SPD = _B @ _B.T + 3 * np.eye(3)                           # symmetric positive definite
DISTINCT = np.array([0.3, -1.2, 2.5, 0.9])                # no ties for max/min/sort
DISTINCT_M = np.array([[0.3, -1.2, 2.5, 0.9], [1.7, 0.1, -0.4, -2.2], [0.6, 1.1, -1.5, 0.2]])


# --- elementwise ----------------------------------------------------------------------
def f_deg2rad(x): return np.deg2rad(x)
def f_rad2deg(x): return np.rad2deg(x)
def f_radians(x): return np.radians(x)
def f_degrees(x): return np.degrees(x)
def f_sinc(x): return np.sinc(x)
def f_clip(x): return np.clip(x, -0.5, 0.5)
def f_clip_bounds(x, lo, hi): return np.clip(x, lo, hi)
def f_logaddexp2(x, y): return np.logaddexp2(x, y)
def f_fmod(x, y): return np.fmod(x, y)
def f_remainder(x, y): return np.remainder(x, y)
def f_float_power(x, y): return np.float_power(x, y)


# --- reductions -----------------------------------------------------------------------
def f_prod(x): return np.prod(x)
def f_prod_axis(x): return np.prod(x, axis=1)
def f_prod_keep(x): return np.prod(x, axis=0, keepdims=True)
def f_max(x): return np.max(x)
def f_max_axis(x): return np.max(x, axis=1)
def f_min_keep(x): return np.min(x, axis=0, keepdims=True)
def f_amax(x): return np.amax(x, axis=0)
def f_amin(x): return np.amin(x)
def f_ptp(x): return np.ptp(x, axis=1)
def f_var(x): return np.var(x)
def f_var_axis_ddof(x): return np.var(x, axis=1, ddof=1)
def f_std(x): return np.std(x)
def f_std_keep(x): return np.std(x, axis=0, ddof=1, keepdims=True)
def f_cumsum(x): return np.cumsum(x)
def f_cumsum_axis(x): return np.cumsum(x, axis=1)
def f_cumprod(x): return np.cumprod(x, axis=0)
def f_cumprod_flat(x): return np.cumprod(x)
def f_diff(x): return np.diff(x)
def f_diff_n_axis(x): return np.diff(x, n=2, axis=1)
def f_average(x): return np.average(x, axis=0)
def f_sum_keep(x): return np.sum(x, axis=1, keepdims=True)
def f_sum_tuple_axis(x): return np.sum(x, axis=(0, 2))
def f_mean_axis(x): return np.mean(x, axis=0)
def f_trace(x): return np.trace(x)
def f_trace_offset(x): return np.trace(x, offset=1)
def f_diagonal(x): return np.diagonal(x, 1)


# --- shapes ---------------------------------------------------------------------------
def f_reshape(x): return np.reshape(x, (4, 3))
def f_ravel(x): return np.ravel(x)
def f_transpose(x): return np.transpose(x, (1, 2, 0))
def f_swapaxes(x): return np.swapaxes(x, 0, 2)
def f_moveaxis(x): return np.moveaxis(x, 0, -1)
def f_expand_dims(x): return np.expand_dims(x, 1)
def f_squeeze(x): return np.squeeze(x)
def f_atleast_1d(x): return np.atleast_1d(x)
def f_atleast_2d(x): return np.atleast_2d(x)
def f_atleast_3d(x): return np.atleast_3d(x)
def f_flip(x): return np.flip(x, 1)
def f_fliplr(x): return np.fliplr(x)
def f_flipud(x): return np.flipud(x)
def f_rot90(x): return np.rot90(x)
def f_roll(x): return np.roll(x, 2)
def f_roll_axis(x): return np.roll(x, 1, axis=1)
def f_broadcast_to(x): return np.broadcast_to(x, (3, 4))
def f_tile(x): return np.tile(x, (2, 3))
def f_repeat(x): return np.repeat(x, 2)
def f_repeat_axis(x): return np.repeat(x, 3, axis=0)
def f_select(x): return np.select([x > 0, x < -1], [x ** 2, -x], default=x * 0.5)
def f_select_constants(x): return np.select([x > 0.5, x < 0], [x ** 2, 1.0]) * 2.0
def f_select_default(x, d): return np.select([x > 0], [x * 3.0], d)
def f_repeat_some_none(x): return np.repeat(x, [0, 1, 2, 0], axis=1)
def f_repeat_flat_none(x): return np.repeat(x, [2, 0, 1, 0])
def f_diag_vec(x): return np.diag(x)
def f_diag_mat(x): return np.diag(x)
def f_diag_k(x): return np.diag(x, 1)
def f_triu(x): return np.triu(x)
def f_tril(x): return np.tril(x, -1)
def f_sort(x): return np.sort(x)
def f_sort_axis(x): return np.sort(x, axis=0)
def f_copy(x): return np.copy(x)
def f_array(x): return np.array(x)
def f_asarray(x): return np.asarray(x)


# --- products and linear algebra ------------------------------------------------------
def f_dot(x, y): return np.dot(x, y)
def f_matmul(x, y): return np.matmul(x, y)
def f_inner(x, y): return np.inner(x, y)
def f_inner_mat(x, y): return np.inner(x, y)
def f_outer(x, y): return np.outer(x, y)
def f_vdot(x, y): return np.vdot(x, y)
def f_tensordot(x, y): return np.tensordot(x, y, axes=1)
def f_tensordot_axes(x, y): return np.tensordot(x, y, axes=([1, 0], [0, 1]))
def f_kron(x, y): return np.kron(x, y)
def f_cross(x, y): return np.cross(x, y)
def f_cross_axes(x, y): return np.cross(x, y, axisa=0, axisb=-1, axisc=0)
def f_cross_axis(x, y): return np.cross(x, y, axis=0)
def f_inv(x): return np.linalg.inv(x)
def f_det(x): return np.linalg.det(x)
def f_solve(a, b): return np.linalg.solve(a, b)
def f_solve_mat(a, b): return np.linalg.solve(a, b)
def f_cholesky(x): return np.linalg.cholesky(x)
def f_norm(x): return np.linalg.norm(x)
def f_norm_2(x): return np.linalg.norm(x, 2)
def f_norm_1(x): return np.linalg.norm(x, 1)
def f_norm_fro(x): return np.linalg.norm(x, "fro")
def f_norm_axis(x): return np.linalg.norm(x, axis=1)
def f_norm_spectral(x): return np.linalg.norm(x, 2)
def f_matrix_power(x): return np.linalg.matrix_power(x, 3)
def f_matrix_power_neg(x): return np.linalg.matrix_power(x, -2)
def f_pinv(x): return np.linalg.pinv(x)
def f_slogdet(x): return np.linalg.slogdet(x)[1]
def f_eigvalsh(x): return np.linalg.eigvalsh(x)
def f_take(x): return np.take(x, [2, 0, 2])
def f_take_axis(x): return np.take(x, [[1, 1], [3, 0]], axis=1)
def f_take_along_axis(x): return np.take_along_axis(x, np.argsort(x, axis=1), axis=1)
def f_take_along_repeated(x): return np.take_along_axis(x, np.array([[0, 0, 2]]), axis=1)
def f_take_along_flat(x): return np.take_along_axis(x, np.array([3, 0, 0]), axis=None)
def f_pad(x): return np.pad(x, 1)
def f_pad_widths(x): return np.pad(x, ((1, 0), (2, 3)))
def f_einsum_matmul(x, y): return np.einsum("ij,jk->ik", x, y)
def f_einsum_trace_sum(x, y): return np.einsum("ij,j->", x, y)
def f_einsum_outer_sum(x, y): return np.einsum("i,jk->ik", x, y)
def f_einsum_three(x, y, z): return np.einsum("ij,jk,k->i", x, y, z)
def f_einsum_trace(x): return np.einsum("ii->", x)
def f_lstsq(a, b): return np.linalg.lstsq(a, b, rcond=None)[0]
def f_lstsq_residuals(a, b):
    x, res, rank, s = np.linalg.lstsq(a, b)
    return np.sum(x ** 2) + np.sum(res) * 0.5
def f_einsum_diagonal(x): return np.einsum("ii->i", x) ** 2
def f_einsum_repeated_three(x, y, z): return np.einsum("ii,ij,j->", x, y, z)
def f_einsum_implicit(x, y): return np.einsum("ij,jk", x, y)
def f_einsum_batched(x, y): return np.einsum("...ij,...jk->...ik", x, y)
def f_einsum_broadcast(x, y): return np.einsum("...ij,jk->...ik", x, y)
def f_einsum_sum_last(x): return np.einsum("...i->...", x) ** 2
def f_einsum_outer(x, y): return np.einsum("i,j", x, y)
def f_einsum_sublists(x, y): return np.einsum(x, [0, 1], y, [1, 2], [0, 2])
def f_einsum_sublists_implicit(x, y): return np.einsum(x, [Ellipsis, 0], y, [0])


# --- ndarray methods ------------------------------------------------------------------
def m_sum(x): return x.sum(axis=0)
def m_mean(x): return x.mean(axis=1, keepdims=True)
def m_max(x): return x.max(axis=1)
def m_min(x): return x.min()
def m_prod(x): return x.prod(axis=0)
def m_std(x): return x.std(ddof=1)
def m_var(x): return x.var(axis=0)
def m_dot(x, y): return x.dot(y)
def m_clip(x): return x.clip(-0.5, 0.5)
def m_flatten(x): return x.flatten()
def m_ravel(x): return x.ravel()
def m_squeeze(x): return x.squeeze()
def m_transpose(x): return x.transpose()
def m_reshape(x): return x.reshape(2, 6)
def m_astype(x): return x.astype(float)
def f_float64(x): return np.float64(x) * 2.0
def f_float32(x): return np.float32(x) * np.float64(x)
def f_int_cast_as_index(x): return x[np.int64(x[0] > 0.0)] * np.sum(x)
def m_cumsum(x): return x.cumsum(axis=0)
def m_cumprod(x): return x.cumprod(axis=1)
def m_trace(x): return x.trace()
def m_diagonal(x): return x.diagonal()
def m_swapaxes(x): return x.swapaxes(0, 1)
def m_copy(x): return x.copy()
def m_repeat(x): return x.repeat(2, axis=1)
def m_T(x): return x.T


# --- NaN-aware reductions, quantiles, array-API functions, signals, selections ---------
NAN_M = DISTINCT_M.copy()
NAN_M[0, 1] = np.nan
NAN_M[2, 3] = np.nan
NAN_PM = PM.copy()
NAN_PM[1, 2] = np.nan
XS = np.array([0.0, 0.4, 1.1, 1.5, 2.6])                  # increasing sample points
S34 = np.diag([3.0, 2.0, 1.0]) @ rng.standard_normal((3, 4)) + np.eye(3, 4)
S34[0] *= 2                                               # well-separated singular values


def f_nansum(x): return np.nansum(x)
def f_nansum_axis(x): return np.nansum(x, axis=0)
def f_nanmean(x): return np.nanmean(x, axis=1)
def f_nanmean_all(x): return np.nanmean(x)
def f_nanmax(x): return np.nanmax(x, axis=1)
def f_nanmin(x): return np.nanmin(x)
def f_nanprod(x): return np.nanprod(x, axis=0)
def f_nanvar(x): return np.nanvar(x, axis=1, ddof=1)
def f_nanstd(x): return np.nanstd(x)
def f_nanstd_keep(x): return np.nanstd(x, axis=0, keepdims=True)
def f_cumulative_prod_initial(x): return np.cumulative_prod(x, axis=1, include_initial=True)
def f_matrix_norm_keep(x): return np.linalg.matrix_norm(x, keepdims=True)
def f_vector_norm_inf(x): return np.linalg.vector_norm(x, ord=np.inf)
def f_median(x): return np.median(x)
def f_median_axis(x): return np.median(x, axis=0)
def f_median_keep(x): return np.median(x, axis=1, keepdims=True)
def f_quantile(x): return np.quantile(x, 0.3)
def f_quantile_axis(x): return np.quantile(x, [0.25, 0.9], axis=1)
def f_percentile(x): return np.percentile(x, 70, axis=0)
def f_cumulative_sum(x): return np.cumulative_sum(x)
def f_cumulative_sum_axis(x): return np.cumulative_sum(x, axis=1, include_initial=True)
def f_cumulative_prod(x): return np.cumulative_prod(x, axis=0)
def f_nancumsum(x): return np.nancumsum(x, axis=1)
def f_nancumprod(x): return np.nancumprod(x)
def f_trapezoid(y): return np.trapezoid(y)
def f_trapezoid_dx(y): return np.trapezoid(y, dx=0.5, axis=0)
def f_trapezoid_x(y, x): return np.trapezoid(y, x)
def f_trapezoid_x_mat(y, x): return np.trapezoid(y, x, axis=1)
def f_interp(x, fp): return np.interp(x, XS, fp)
def f_interp_scalar(x, fp): return np.interp(x, XS, fp, left=-1.0)
def f_convolve(a, v): return np.convolve(a, v)
def f_convolve_same(a, v): return np.convolve(a, v, "same")
def f_convolve_valid(a, v): return np.convolve(a, v, mode="valid")
def f_correlate(a, v): return np.correlate(a, v)
def f_correlate_full(a, v): return np.correlate(a, v, "full")
def f_correlate_same(a, v): return np.correlate(a, v, "same")
def f_polyval(p, x): return np.polyval(p, x)
def f_linspace(a, b): return np.linspace(a, b, 5)
def f_linspace_arrays(a, b): return np.linspace(a, b, 4, endpoint=False, axis=1)
def f_logspace(a, b): return np.logspace(a, b, 4, base=2.0)
def f_ediff1d(x): return np.ediff1d(x)
def f_ediff1d_ends(x): return np.ediff1d(x, to_end=[1.0, 2.0], to_begin=0.0)
def f_append(a, b): return np.append(a, b)
def f_append_axis(a, b): return np.append(a, b, axis=0)
def f_delete(x): return np.delete(x, [0, 2])
def f_delete_axis(x): return np.delete(x, 1, axis=1)
def f_compress(x): return np.compress([True, False, True], x, axis=0)
def f_extract(x): return np.extract(DISTINCT_M > 0, x)
def f_resize(x): return np.resize(x, (3, 3))
def f_diagflat(x): return np.diagflat(x, 1)
def f_rollaxis(x): return np.rollaxis(x, 2)
def f_copysign(x): return np.copysign(x, W)
def f_nan_to_num(x): return np.nan_to_num(x)
def f_conjugate(x): return np.conjugate(x)
def f_real(x): return np.real(x)
def f_asanyarray(x): return np.asanyarray(x)
def f_asarray_chkfinite(x): return np.asarray_chkfinite(x)
def f_matrix_transpose(x): return np.matrix_transpose(x)
def f_vecdot(x, y): return np.vecdot(x, y)
def f_vecdot_axis(x, y): return np.vecdot(x, y, axis=0)
def f_matvec(a, v): return np.matvec(a, v)
def f_vecmat(v, a): return np.vecmat(v, a)
def f_vector_norm(x): return np.linalg.vector_norm(x)
def f_vector_norm_axis(x): return np.linalg.vector_norm(x, axis=1, ord=1)
def f_vector_norm_keep(x): return np.linalg.vector_norm(x, axis=0, keepdims=True, ord=3)
def f_matrix_norm(x): return np.linalg.matrix_norm(x)
def f_matrix_norm_nuc(x): return np.linalg.matrix_norm(x, ord="nuc")
def f_matrix_norm_2(x): return np.linalg.matrix_norm(x, ord=2)
def f_svdvals(x): return np.linalg.svdvals(x)
def f_linalg_matrix_transpose(x): return np.linalg.matrix_transpose(x)
def f_linalg_diagonal(x): return np.linalg.diagonal(x, offset=1)
def f_linalg_trace(x): return np.linalg.trace(x)
def f_linalg_outer(x, y): return np.linalg.outer(x, y)
def f_linalg_cross(x, y): return np.linalg.cross(x, y)
def f_linalg_matmul(x, y): return np.linalg.matmul(x, y)
def f_linalg_tensordot(x, y): return np.linalg.tensordot(x, y, axes=1)
def f_linalg_vecdot(x, y): return np.linalg.vecdot(x, y)
def m_take(x): return x.take([3, 0, 3], axis=1)
def m_compress(x): return x.compress([False, True, True], axis=0)
def m_conj(x): return x.conj()
def m_conjugate(x): return x.conjugate()
def m_real(x): return x.real
def m_mT(x): return x.mT


# --- lists of arrays in, tuples and lists of arrays out ---------------------------------
TALL = rng.standard_normal((4, 3)) + 2 * np.eye(4, 3)     # full column rank


def f_concatenate(a, b): return np.sum(np.concatenate([a, b * 2.0]) ** 2)
def f_concatenate_axis(a, b): return np.concatenate([a, b], axis=1)
def f_concatenate_none(a, b): return np.concatenate((a, b), axis=None)
def f_concatenate_const(a): return np.concatenate([a, np.ones(2), a])
def f_concat(a, b): return np.concat([a, b], axis=0)
def f_stack(a, b): return np.stack([a, b])
def f_stack_axis(a, b): return np.stack([a, b * b], axis=1)
def f_stack_scalars(a, b): return np.stack([a, b, a * b])
def f_hstack(a, b): return np.hstack([a, b])
def f_hstack_scalars(a, b): return np.hstack([a, b, 1.0])
def f_vstack(a, b): return np.vstack([a, b])
def f_row_stack(a, b): return np.row_stack([a, b])  # NumPy's deprecated name of vstack
def f_dstack(a, b): return np.dstack([a, b])
def f_column_stack(a, b): return np.column_stack([a, b])
def f_block(a, b): return np.block([[a, b], [b, a]])
def f_block_vec(a, b): return np.block([a, b, 2.0])
def f_multi_dot(a, b, c): return np.linalg.multi_dot([a, b, c])
def f_multi_dot_const(a): return np.linalg.multi_dot([a, N, N.T])


def f_split(x):
    p, q = np.split(x, 2)
    return np.sum(p * q)


def f_split_indices(x):
    parts = np.split(x, [1, 3], axis=1)
    return np.sum(parts[0]) + np.sum(parts[2] ** 2)


def f_split_unused(x):
    a, b, c = np.split(x, 3, axis=1)
    return b * 2.0


def f_array_split(x):
    a, b, c = np.array_split(x, 3)
    return np.sum(a ** 2) + np.sum(c * 3.0)


def f_hsplit(x):
    a, b = np.hsplit(x, 2)
    return np.sum(a * b)


def f_vsplit(x):
    a, b = np.vsplit(x, 2)
    return np.sum(a * b)


def f_dsplit(x):
    a, b = np.dsplit(x, [1])
    return np.sum(a) + np.sum(b ** 2)


def f_unstack(x):
    a, b = np.unstack(x)
    return np.sum(a * b)


def f_unstack_axis(x):
    r = np.unstack(x, axis=1)
    return r[0] * r[3]


def f_array_list(a, b): return np.array([a, b * 2.0])
def f_asarray_list(a, b): return np.asarray([a, b, a * b])
def f_array_scalars(a, b): return np.sum(np.array([a, b, a * b]) ** 2)
def f_array_nested(a, b): return np.array([[a, b], [b * a, 1.0]])


def f_slogdet_unpack(x):
    s, l = np.linalg.slogdet(x)
    return l * 2.0


def f_slogdet_both(x):
    s, l = np.linalg.slogdet(x)
    return s * l


def f_eigh(a):
    w, v = np.linalg.eigh(a + a.T)
    return np.sum(w ** 2) + np.sum((v ** 2) @ w)


def f_eigh_values(a):
    w, v = np.linalg.eigh(a)
    return w


def f_eigh_reconstruct(a):
    w, v = np.linalg.eigh(a + a.T)
    return v @ np.diag(w ** 3) @ v.T


def f_eigh_upper(a):
    w, v = np.linalg.eigh(a, UPLO="U")
    return np.sum((v ** 2) @ (w * w))


def f_eigh_attributes(a):
    r = np.linalg.eigh(a + a.T)
    return np.sum(r.eigenvalues ** 2) + np.sum(r.eigenvectors[:, 0] ** 2 * r.eigenvalues)


def f_eig_values(a):
    w, v = np.linalg.eig(a)
    return np.real(w) + np.imag(w) ** 2


def f_eig_vectors(a):
    w, v = np.linalg.eig(a)  # as LAPACK normalizes them: unit length, largest entry real
    return np.real(v * w) + np.imag(v) ** 2


def f_eig_attributes(a):
    r = np.linalg.eig(a)
    return np.abs(r.eigenvectors) ** 2 @ np.abs(r.eigenvalues)


def f_svd(x):
    u, s, vt = np.linalg.svd(x, full_matrices=False)
    return np.sum(s ** 2) + np.sum((u ** 2) @ s) + np.sum(s @ (vt ** 2))


def f_svd_reconstruct(x):
    u, s, vt = np.linalg.svd(x, full_matrices=False)
    return u @ np.diag(np.sqrt(s)) @ vt


def f_svd_square(x):
    u, s, vt = np.linalg.svd(x)
    return (u * s) @ vt @ vt.T


def f_svd_values(x): return np.linalg.svd(x, compute_uv=False)
def f_svd_index(x): return np.linalg.svd(x, full_matrices=False)[1]


def f_qr(x):
    q, r = np.linalg.qr(x)
    return q @ r


def f_qr_abs_diag(x):
    q, r = np.linalg.qr(x)
    return np.sum(np.abs(np.diag(r)) ** 2) + np.sum((q ** 2) @ np.abs(np.diag(r)))


def f_qr_r(x): return np.abs(np.linalg.qr(x, mode="r"))


def f_average_weighted(x, w): return np.average(x, weights=w)
def f_average_rows(x, w): return np.average(x, axis=1, weights=w)


def f_gradient(x): return np.gradient(x) * np.arange(1.0, 5.0)
def f_gradient_rows(x): return np.gradient(x, 0.5, axis=1) ** 2


def f_partition(x): return np.partition(x, 2)[:3] * np.arange(1.0, 4.0)
def f_partition_rows(x): return np.partition(x, 1, axis=1)
def f_vector_at_stack(x, y): return np.matmul(x, y)
def f_stack_at_vector(x, y): return x @ y


def _in_this_numpy(name):
    """Whether this NumPy has the function ``name`` (``numpy.matvec`` is 2.2+)."""
    obj = np
    for part in name.split(".")[1:] if name.startswith("numpy.") else []:
        obj = getattr(obj, part, None)
    return obj is not None


def c(fn, args, name):
    missing = not _in_this_numpy(name)
    marks = pytest.mark.skip(reason=f"NumPy {np.__version__} has no {name}") if missing else ()
    return pytest.param(fn, args, name, id=fn.__name__, marks=marks)


RULE_TEST_CASES = [
    c(f_deg2rad, (V,), "numpy.deg2rad"),
    c(f_rad2deg, (V,), "numpy.rad2deg"),
    c(f_radians, (M,), "numpy.radians"),
    c(f_degrees, (1.3,), "numpy.degrees"),
    c(f_sinc, (V,), "numpy.sinc"),
    c(f_clip, (DISTINCT * 0.4,), "numpy.clip"),
    c(f_clip_bounds, (DISTINCT, -1.0, 1.0), "numpy.clip"),
    c(f_logaddexp2, (V, W), "numpy.logaddexp2"),
    c(f_logaddexp2, (M, ROW), "numpy.logaddexp2"),
    c(f_logaddexp2, (M, 0.3), "numpy.logaddexp2"),
    c(f_clip_bounds, (DISTINCT_M, -np.ones((3, 1)), np.ones(4)), "numpy.clip"),
    c(f_clip_bounds, (DISTINCT_M * 0.3, -0.2, 0.25), "numpy.clip"),
    c(f_fmod, (1.7, P), "numpy.fmod"),
    c(f_fmod, (PM * 3, P), "numpy.fmod"),
    c(f_remainder, (PM * 3, COL + 3), "numpy.remainder"),
    c(f_float_power, (PM, P), "numpy.float_power"),

    c(f_prod, (P,), "numpy.prod"),
    c(f_prod, (np.array([0.0, 1.5, -2.0, 0.7]),), "numpy.prod"),
    c(f_prod_axis, (PM,), "numpy.prod"),
    c(f_prod_keep, (M,), "numpy.prod"),
    c(f_max, (DISTINCT,), "numpy.max"),
    c(f_max, (np.array([1.0, 2.0, 2.0, -1.0]),), "numpy.max"),
    c(f_max_axis, (DISTINCT_M,), "numpy.max"),
    c(f_min_keep, (DISTINCT_M,), "numpy.min"),
    c(f_amax, (DISTINCT_M,), "numpy.amax"),
    c(f_amin, (DISTINCT_M,), "numpy.amin"),
    c(f_ptp, (DISTINCT_M,), "numpy.ptp"),
    c(f_var, (M,), "numpy.var"),
    c(f_var_axis_ddof, (M,), "numpy.var"),
    c(f_std, (V,), "numpy.std"),
    c(f_std_keep, (M,), "numpy.std"),
    c(f_cumsum, (M,), "numpy.cumsum"),
    c(f_cumsum_axis, (M,), "numpy.cumsum"),
    c(f_cumprod, (PM,), "numpy.cumprod"),
    c(f_cumprod_flat, (PM,), "numpy.cumprod"),
    # a zero element: the product is smooth there, and its derivative has no division
    c(f_cumprod, (np.array([[0.7, 0.0, -1.2], [0.0, 1.5, 0.4]]),), "numpy.cumprod"),
    c(f_cumprod_flat, (np.array([[0.7, 0.0, -1.2], [0.3, 1.5, 0.0]]),), "numpy.cumprod"),
    c(f_diff, (V,), "numpy.diff"),
    c(f_diff_n_axis, (M,), "numpy.diff"),
    c(f_average, (M,), "numpy.average"),
    c(f_sum_keep, (M,), "numpy.sum"),
    c(f_sum_tuple_axis, (T,), "numpy.sum"),
    c(f_mean_axis, (M,), "numpy.mean"),
    c(f_trace, (M,), "numpy.trace"),
    c(f_trace_offset, (S,), "numpy.trace"),
    c(f_diagonal, (M,), "numpy.diagonal"),

    c(f_reshape, (M,), "numpy.reshape"),
    c(f_ravel, (T,), "numpy.ravel"),
    c(f_transpose, (T,), "numpy.transpose"),
    c(f_swapaxes, (T,), "numpy.swapaxes"),
    c(f_moveaxis, (T,), "numpy.moveaxis"),
    c(f_expand_dims, (M,), "numpy.expand_dims"),
    c(f_squeeze, (ROW,), "numpy.squeeze"),
    c(f_atleast_1d, (V,), "numpy.atleast_1d"),
    c(f_atleast_2d, (V,), "numpy.atleast_2d"),
    c(f_atleast_3d, (M,), "numpy.atleast_3d"),
    c(f_flip, (M,), "numpy.flip"),
    c(f_fliplr, (M,), "numpy.fliplr"),
    c(f_flipud, (M,), "numpy.flipud"),
    c(f_rot90, (M,), "numpy.rot90"),
    c(f_roll, (M,), "numpy.roll"),
    c(f_roll_axis, (M,), "numpy.roll"),
    c(f_broadcast_to, (ROW,), "numpy.broadcast_to"),
    c(f_broadcast_to, (V,), "numpy.broadcast_to"),
    c(f_tile, (M,), "numpy.tile"),
    c(f_tile, (V,), "numpy.tile"),
    c(f_repeat, (M,), "numpy.repeat"),
    c(f_repeat_axis, (M,), "numpy.repeat"),
    c(f_repeat_some_none, (M,), "numpy.repeat"),
    c(f_einsum_trace, (S,), "numpy.einsum"),
    c(f_lstsq, (TALL, rng.standard_normal(4)), "numpy.linalg.lstsq"),
    c(f_lstsq, (TALL, rng.standard_normal((4, 2))), "numpy.linalg.lstsq"),
    c(f_lstsq_residuals, (TALL, rng.standard_normal(4)), "numpy.linalg.lstsq"),
    c(f_lstsq_residuals, (TALL, rng.standard_normal((4, 2))), "numpy.linalg.lstsq"),
    c(f_einsum_diagonal, (S,), "numpy.einsum"),
    c(f_einsum_repeated_three, (S, SQ, V3), "numpy.einsum"),
    c(f_einsum_implicit, (M, N), "numpy.einsum"),
    c(f_einsum_batched, (T, rng.standard_normal((2, 4, 2))), "numpy.einsum"),
    c(f_einsum_batched, (T, rng.standard_normal((1, 4, 2))), "numpy.einsum"),
    c(f_einsum_broadcast, (T, N), "numpy.einsum"),
    c(f_einsum_sum_last, (T,), "numpy.einsum"),
    c(f_einsum_outer, (V, V3), "numpy.einsum"),
    c(f_einsum_sublists, (M, N), "numpy.einsum"),
    c(f_einsum_sublists_implicit, (T, V), "numpy.einsum"),
    c(f_select, (M,), "numpy.select"),
    c(f_select_constants, (V,), "numpy.select"),
    c(f_select_default, (V, 0.7), "numpy.select"),
    c(f_repeat_flat_none, (V,), "numpy.repeat"),
    c(f_diag_vec, (V,), "numpy.diag"),
    c(f_diag_mat, (M,), "numpy.diag"),
    c(f_diag_k, (S,), "numpy.diag"),
    c(f_triu, (M,), "numpy.triu"),
    c(f_tril, (S,), "numpy.tril"),
    c(f_sort, (DISTINCT,), "numpy.sort"),
    c(f_sort_axis, (DISTINCT_M,), "numpy.sort"),
    c(f_copy, (M,), "numpy.copy"),
    c(f_array, (M,), "numpy.array"),
    c(f_asarray, (V,), "numpy.asarray"),

    c(f_dot, (M, N), "numpy.dot"),
    c(f_dot, (V, W), "numpy.dot"),
    c(f_matmul, (T, N), "numpy.matmul"),
    c(f_vector_at_stack, (V3, T), "numpy.matmul"),
    c(f_partition, (V,), "numpy.partition"),
    c(f_gradient, (V,), "numpy.gradient"),
    c(f_average_weighted, (V, P), "numpy.average"),
    c(f_average_rows, (M, P), "numpy.average"),
    c(f_gradient_rows, (M,), "numpy.gradient"),
    c(f_partition_rows, (M,), "numpy.partition"),
    c(f_stack_at_vector, (T, V), "operator.matmul"),
    c(f_inner, (V, W), "numpy.inner"),
    c(f_inner_mat, (M, T), "numpy.inner"),
    c(f_outer, (V, V3), "numpy.outer"),
    c(f_outer, (M, V), "numpy.outer"),
    c(f_vdot, (M, M.T.copy()), "numpy.vdot"),
    c(f_tensordot, (M, N), "numpy.tensordot"),
    c(f_tensordot_axes, (T.transpose(1, 0, 2).copy(), T), "numpy.tensordot"),
    c(f_kron, (S, N), "numpy.kron"),
    c(f_kron, (V, W3), "numpy.kron"),
    c(f_cross, (V3, W3), "numpy.cross"),
    c(f_cross, (S, W3), "numpy.cross"),
    c(f_cross_axes, (S.T.copy(), W3), "numpy.cross"),
    c(f_cross_axis, (S.T.copy(), S.T[:, :1].copy()), "numpy.cross"),
    c(f_inv, (SQ,), "numpy.linalg.inv"),
    c(f_det, (SQ,), "numpy.linalg.det"),
    c(f_solve, (SQ, V3), "numpy.linalg.solve"),
    c(f_solve_mat, (SQ, COL @ ROW[:, :2]), "numpy.linalg.solve"),
    c(f_cholesky, (SPD,), "numpy.linalg.cholesky"),
    c(f_norm, (V,), "numpy.linalg.norm"),
    c(f_norm, (M,), "numpy.linalg.norm"),
    c(f_norm_2, (V,), "numpy.linalg.norm"),
    c(f_norm_1, (V,), "numpy.linalg.norm"),
    c(f_norm_fro, (M,), "numpy.linalg.norm"),
    c(f_norm_axis, (M,), "numpy.linalg.norm"),
    c(f_norm_spectral, (M,), "numpy.linalg.norm"),
    c(f_matrix_power, (S,), "numpy.linalg.matrix_power"),
    c(f_matrix_power_neg, (SQ,), "numpy.linalg.matrix_power"),
    c(f_pinv, (M,), "numpy.linalg.pinv"),
    c(f_slogdet, (SQ,), "numpy.linalg.slogdet"),
    c(f_eigvalsh, (SPD,), "numpy.linalg.eigvalsh"),
    c(f_take, (V,), "numpy.take"),
    c(f_take_axis, (M,), "numpy.take"),
    c(f_take_along_axis, (DISTINCT_M,), "numpy.take_along_axis"),
    c(f_take_along_repeated, (M,), "numpy.take_along_axis"),
    c(f_take_along_flat, (V,), "numpy.take_along_axis"),
    c(f_pad, (M,), "numpy.pad"),
    c(f_pad_widths, (M,), "numpy.pad"),
    c(f_einsum_matmul, (M, N), "numpy.einsum"),
    c(f_einsum_trace_sum, (M, V), "numpy.einsum"),
    c(f_einsum_outer_sum, (V3, N), "numpy.einsum"),
    c(f_einsum_three, (M, N, rng.standard_normal(2)), "numpy.einsum"),

    c(m_sum, (M,), "ndarray.sum"),
    c(m_mean, (M,), "ndarray.mean"),
    c(m_max, (DISTINCT_M,), "ndarray.max"),
    c(m_min, (DISTINCT_M,), "ndarray.min"),
    c(m_prod, (PM,), "ndarray.prod"),
    c(m_std, (M,), "ndarray.std"),
    c(m_var, (M,), "ndarray.var"),
    c(m_dot, (M, N), "ndarray.dot"),
    c(m_clip, (DISTINCT * 0.4,), "ndarray.clip"),
    c(m_flatten, (M,), "ndarray.flatten"),
    c(m_ravel, (M,), "ndarray.ravel"),
    c(m_squeeze, (COL,), "ndarray.squeeze"),
    c(m_transpose, (M,), "ndarray.transpose"),
    c(m_reshape, (M,), "ndarray.reshape"),
    c(m_astype, (M,), "ndarray.astype"),
    c(f_float64, (M,), "numpy.float64"),
    c(f_float64, (0.7,), "numpy.float64"),
    c(f_float32, (0.7,), "numpy.float32"),
    c(m_cumsum, (M,), "ndarray.cumsum"),
    c(m_cumprod, (PM,), "ndarray.cumprod"),
    c(m_trace, (S,), "ndarray.trace"),
    c(m_diagonal, (M,), "ndarray.diagonal"),
    c(m_swapaxes, (M,), "ndarray.swapaxes"),
    c(m_copy, (M,), "ndarray.copy"),
    c(m_repeat, (M,), "ndarray.repeat"),
    c(m_T, (M,), "numpy.ndarray.T"),
    c(f_nansum, (NAN_M,), "numpy.nansum"),
    c(f_nansum_axis, (NAN_M,), "numpy.nansum"),
    c(f_nansum, (M,), "numpy.nansum"),
    c(f_nanmean, (NAN_M,), "numpy.nanmean"),
    c(f_nanmean_all, (NAN_M,), "numpy.nanmean"),
    c(f_nanmax, (NAN_M,), "numpy.nanmax"),
    c(f_nanmin, (NAN_M,), "numpy.nanmin"),
    c(f_nanprod, (NAN_PM,), "numpy.nanprod"),
    c(f_nanvar, (NAN_M,), "numpy.nanvar"),
    c(f_nanstd, (NAN_M,), "numpy.nanstd"),
    c(f_nanstd_keep, (NAN_M,), "numpy.nanstd"),
    c(f_median, (DISTINCT,), "numpy.median"),
    c(f_median, (DISTINCT_M,), "numpy.median"),
    c(f_median_axis, (DISTINCT_M,), "numpy.median"),
    c(f_median_keep, (DISTINCT_M,), "numpy.median"),
    c(f_quantile, (DISTINCT_M,), "numpy.quantile"),
    c(f_quantile_axis, (DISTINCT_M,), "numpy.quantile"),
    c(f_percentile, (DISTINCT_M,), "numpy.percentile"),
    c(f_cumulative_sum, (V,), "numpy.cumulative_sum"),
    c(f_cumulative_sum_axis, (M,), "numpy.cumulative_sum"),
    c(f_cumulative_prod, (PM,), "numpy.cumulative_prod"),
    c(f_cumulative_prod_initial, (PM,), "numpy.cumulative_prod"),
    c(f_nancumsum, (NAN_M,), "numpy.nancumsum"),
    c(f_nancumprod, (NAN_PM,), "numpy.nancumprod"),
    c(f_trapezoid, (M,), "numpy.trapezoid"),
    c(f_trapezoid_dx, (M,), "numpy.trapezoid"),
    c(f_trapezoid_x, (XS ** 2, XS), "numpy.trapezoid"),
    c(f_trapezoid_x, (M, np.array([0.0, 0.5, 1.5, 1.7])), "numpy.trapezoid"),
    c(f_trapezoid_x_mat, (M, np.cumsum(PM, axis=1)), "numpy.trapezoid"),
    c(f_interp, (np.array([-0.3, 0.2, 0.7, 1.3, 2.0, 2.9]), V3 @ np.ones((3, 5)) + XS), "numpy.interp"),
    c(f_interp_scalar, (1.2, np.sin(XS)), "numpy.interp"),
    c(f_interp_scalar, (-0.5, np.sin(XS)), "numpy.interp"),
    c(f_convolve, (V, V3), "numpy.convolve"),
    c(f_convolve, (V3, V), "numpy.convolve"),
    c(f_convolve_same, (V, V3), "numpy.convolve"),
    c(f_convolve_same, (np.ones(3) + V3, np.arange(6.0)), "numpy.convolve"),
    c(f_convolve_valid, (V, V3), "numpy.convolve"),
    c(f_correlate, (V, V3), "numpy.correlate"),
    c(f_correlate_full, (V, V3), "numpy.correlate"),
    c(f_correlate_same, (V, V3), "numpy.correlate"),
    c(f_correlate_same, (V3, np.arange(6.0) - 2), "numpy.correlate"),
    c(f_correlate_full, (V3, V), "numpy.correlate"),
    c(f_polyval, (V3, V), "numpy.polyval"),
    c(f_polyval, (V, 0.7), "numpy.polyval"),
    c(f_linspace, (0.5, 2.0), "numpy.linspace"),
    c(f_linspace_arrays, (V3, W3), "numpy.linspace"),
    c(f_logspace, (0.5, 2.0), "numpy.logspace"),
    c(f_ediff1d, (M,), "numpy.ediff1d"),
    c(f_ediff1d_ends, (V,), "numpy.ediff1d"),
    c(f_append, (V, M), "numpy.append"),
    c(f_append_axis, (M, ROW), "numpy.append"),
    c(f_delete, (V,), "numpy.delete"),
    c(f_delete_axis, (M,), "numpy.delete"),
    c(f_compress, (M,), "numpy.compress"),
    c(f_extract, (M,), "numpy.extract"),
    c(f_resize, (V,), "numpy.resize"),
    c(f_resize, (M,), "numpy.resize"),
    c(f_diagflat, (V,), "numpy.diagflat"),
    c(f_diagflat, (np.ones((2, 2)) + S[:2, :2],), "numpy.diagflat"),
    c(f_rollaxis, (T,), "numpy.rollaxis"),
    c(f_copysign, (V,), "numpy.copysign"),
    c(f_nan_to_num, (np.array([1.0, np.inf, -2.0, np.nan]),), "numpy.nan_to_num"),
    c(f_conjugate, (M,), "numpy.conjugate"),
    c(f_real, (M,), "numpy.real"),
    c(f_asanyarray, (M,), "numpy.asanyarray"),
    c(f_asarray_chkfinite, (V,), "numpy.asarray_chkfinite"),
    c(f_matrix_transpose, (T,), "numpy.matrix_transpose"),
    c(f_vecdot, (M, V), "numpy.vecdot"),
    c(f_vecdot_axis, (M, PM), "numpy.vecdot"),
    c(f_matvec, (T, V), "numpy.matvec"),
    c(f_matvec, (M, rng.standard_normal((2, 1, 4))), "numpy.matvec"),
    c(f_vecmat, (V3, M), "numpy.vecmat"),
    c(f_vecmat, (rng.standard_normal((2, 3)), M), "numpy.vecmat"),
    c(f_vector_norm, (M,), "numpy.linalg.vector_norm"),
    c(f_vector_norm_axis, (M,), "numpy.linalg.vector_norm"),
    c(f_vector_norm_keep, (M,), "numpy.linalg.vector_norm"),
    c(f_matrix_norm, (T,), "numpy.linalg.matrix_norm"),
    c(f_matrix_norm_keep, (T,), "numpy.linalg.matrix_norm"),
    c(f_vector_norm_inf, (DISTINCT_M,), "numpy.linalg.vector_norm"),
    c(f_matrix_norm_nuc, (S34,), "numpy.linalg.matrix_norm"),
    c(f_matrix_norm_2, (S34,), "numpy.linalg.matrix_norm"),
    c(f_svdvals, (S34,), "numpy.linalg.svdvals"),
    c(f_svdvals, (S34.T.copy(),), "numpy.linalg.svdvals"),
    c(f_linalg_matrix_transpose, (M,), "numpy.linalg.matrix_transpose"),
    c(f_linalg_diagonal, (T,), "numpy.linalg.diagonal"),
    c(f_linalg_trace, (T,), "numpy.linalg.trace"),
    c(f_linalg_outer, (V, V3), "numpy.linalg.outer"),
    c(f_linalg_cross, (S, W3), "numpy.linalg.cross"),
    c(f_linalg_matmul, (T, N), "numpy.linalg.matmul"),
    c(f_linalg_tensordot, (M, N), "numpy.linalg.tensordot"),
    c(f_linalg_vecdot, (M, V), "numpy.linalg.vecdot"),
    c(m_take, (M,), "ndarray.take"),
    c(m_compress, (M,), "ndarray.compress"),
    c(m_conj, (M,), "ndarray.conj"),
    c(m_conjugate, (M,), "ndarray.conjugate"),
    c(m_real, (M,), "numpy.ndarray.real"),
    c(m_mT, (T,), "numpy.ndarray.mT"),
    c(f_concatenate, (V, V3), "numpy.concatenate"),
    c(f_concatenate_axis, (M, S), "numpy.concatenate"),
    c(f_concatenate_none, (M, V), "numpy.concatenate"),
    c(f_concatenate_const, (V,), "numpy.concatenate"),
    c(f_concat, (M, ROW), "numpy.concatenate"),
    c(f_stack, (V, W), "numpy.stack"),
    c(f_stack_axis, (M, PM), "numpy.stack"),
    c(f_stack_scalars, (0.3, 1.4), "numpy.stack"),
    c(f_hstack, (V, V3), "numpy.hstack"),
    c(f_hstack, (M, S), "numpy.hstack"),
    c(f_hstack_scalars, (0.3, 1.4), "numpy.hstack"),
    c(f_vstack, (V, W), "numpy.vstack"),
    c(f_vstack, (M, ROW), "numpy.vstack"),
    c(f_row_stack, (V, W), "numpy.row_stack"),
    c(f_dstack, (M, PM), "numpy.dstack"),
    c(f_column_stack, (V3, S), "numpy.column_stack"),
    c(f_block, (S, SQ), "numpy.block"),
    c(f_block_vec, (V, V3), "numpy.block"),
    c(f_multi_dot, (M, N, N.T.copy()), "numpy.linalg.multi_dot"),
    c(f_multi_dot, (V3, M, V), "numpy.linalg.multi_dot"),
    c(f_multi_dot_const, (M,), "numpy.linalg.multi_dot"),
    c(f_split, (V,), "numpy.split"),
    c(f_split_indices, (M,), "numpy.split"),
    c(f_split_unused, (M.T.copy(),), "numpy.split"),
    c(f_array_split, (rng.standard_normal(7),), "numpy.array_split"),
    c(f_hsplit, (M,), "numpy.hsplit"),
    c(f_vsplit, (T,), "numpy.vsplit"),
    c(f_dsplit, (T,), "numpy.dsplit"),
    c(f_unstack, (PM[:2],), "numpy.unstack"),
    c(f_unstack_axis, (M,), "numpy.unstack"),
    c(f_array_list, (V, W), "numpy.array"),
    c(f_asarray_list, (V, W), "numpy.asarray"),
    c(f_array_scalars, (0.3, 1.2), "numpy.array"),
    c(f_array_nested, (0.3, 1.2), "numpy.array"),
    c(f_slogdet_unpack, (SQ,), "numpy.linalg.slogdet"),
    c(f_slogdet_both, (SQ,), "numpy.linalg.slogdet"),
    c(f_eigh, (S,), "numpy.linalg.eigh"),
    c(f_eigh_values, (SPD,), "numpy.linalg.eigh"),
    c(f_eigh_reconstruct, (S,), "numpy.linalg.eigh"),
    c(f_eigh_upper, (S,), "numpy.linalg.eigh"),
    c(f_eigh_attributes, (S,), "numpy.linalg.eigh"),
    c(f_eig_values, (SQ,), "numpy.linalg.eig"),
    c(f_eig_vectors, (SQ,), "numpy.linalg.eig"),
    c(f_eig_vectors, (SPD,), "numpy.linalg.eig"),  # real eigenvalues: real vectors
    c(f_eig_attributes, (SQ,), "numpy.linalg.eig"),
    c(f_svd, (S34,), "numpy.linalg.svd"),
    c(f_svd, (S34.T.copy(),), "numpy.linalg.svd"),
    c(f_svd_reconstruct, (S34,), "numpy.linalg.svd"),
    c(f_svd_square, (SQ,), "numpy.linalg.svd"),
    c(f_svd_values, (S34,), "numpy.linalg.svd"),
    c(f_svd_index, (S34,), "numpy.linalg.svd"),
    c(f_qr, (TALL,), "numpy.linalg.qr"),
    c(f_qr_abs_diag, (SQ,), "numpy.linalg.qr"),
    c(f_qr_r, (TALL,), "numpy.linalg.qr"),
]


@pytest.mark.parametrize("fn, args, name", RULE_TEST_CASES)
def test_rule_both_modes(fn, args, name, tmp_path):
    # a cache of its own: the rules are derived here, so they know which rules they used
    # (a rule another test derived is loaded from disk, and a loaded rule does not)
    rules = check_grads(fn, args, modes=("forward", "reverse"), cache=str(tmp_path))
    assert name in rules["forward"].rules_used, rules["forward"].rules_used
    assert name in rules["reverse"].rules_used, rules["reverse"].rules_used


@pytest.mark.parametrize("fn, args, name", RULE_TEST_CASES[::7])
def test_rule_reverse_against_finite_differences(fn, args, name):
    check_grads(fn, args, modes=("reverse",))


def test_list_coverage_cli():
    out = subprocess.run([sys.executable, "-m", "tangent_ast.rules", "--list"],
                         capture_output=True, text=True, check=True).stdout
    assert "numpy.linalg.inv" in out and "numpy.sum" in out
    assert "forward" in out and "reverse" in out
    count = int(out.rsplit("both modes:", 1)[1].split()[0])
    assert count >= 205


def f_norm_over_two_axes(x): return np.linalg.norm(x, axis=(0, 1))


@pytest.mark.parametrize("fn, args", [(f_norm_over_two_axes, (M,)), (f_norm_over_two_axes, (T,))])
def test_the_default_norm_over_two_axes_is_frobenius(fn, args):
    check_grads(fn, args)


def _matrix_norm(ord, axis, keepdims):
    def f(x):
        return np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims) ** 2

    return f


@pytest.mark.parametrize("ord", ["nuc", 1, -1, 2, -2, np.inf, -np.inf])
@pytest.mark.parametrize(
    "shape, axis, keepdims",
    [((3, 4), None, False), ((3, 4), (1, 0), True), ((2, 3, 4), (2, 0), False)],
)
@pytest.mark.parametrize("dtype", [float, complex])
def test_every_matrix_norm_over_any_two_axes(ord, shape, axis, keepdims, dtype):
    """Spectral and nuclear norms (singular values), the 1- and inf-norms (the extreme sum of
    magnitudes down a column, along a row; ties share), of stacks, complex ones too."""
    x = np.random.default_rng(len(shape)).standard_normal(shape)
    if dtype is complex:
        x = x + 1j * np.random.default_rng(3).standard_normal(shape)
    check_grads(_matrix_norm(ord, axis, keepdims), (x.astype(dtype),))


@pytest.mark.parametrize("x", [V, -V])
def test_a_cast_to_numpy_ints_has_no_derivative(x):
    """np.int64(...) and the other integer and bool types: a value without a derivative, as
    int(...) is (it was a missing rule)."""
    check_grads(f_int_cast_as_index, (x,))
