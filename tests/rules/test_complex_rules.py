"""The rules declared to hold for complex values (rules/numpy/complex.py), on complex
arguments: one table, one checker.

Each row is a small function calling one primitive, its arguments (complex ones drawn at
random; real ones where a real argument meets a complex one) and the arguments
differentiated. The checker reduces the result to a real number through fixed complex
weights, ``Re(sum(r * W)) + Im(sum(r * V))``, so that a missing or extra conjugate shows,
and runs check_grads in both modes on both reverse routes; a real argument's cotangent
must be real.
"""

import importlib

import numpy as np
import pytest

import tangent_ast as ta
from tangent_ast.testing import check_grads

rng = np.random.default_rng(29)


def _c(*shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


Z = _c(4)
Y = _c(4)
Z3 = _c(3)
Y3 = _c(3)
Z5 = _c(5)
ZM = _c(3, 4)
YM = _c(3, 4)
ZT = _c(2, 3, 4)
ZS = _c(3, 3) + 3 * np.eye(3)  # well-conditioned
YS = _c(3, 3)
ZB = _c(3, 2)
ZROW = _c(1, 4)
ZC = complex(0.4, -0.7)
R = rng.standard_normal(4)
R3 = rng.standard_normal(3)
RS = rng.standard_normal((3, 3)) + 3 * np.eye(3)
RM = rng.standard_normal((3, 4))
GRID = np.array([0.0, 0.3, 0.7, 1.4])
COND = np.array([True, False, True, True])


# --- reductions and scans ---------------------------------------------------------------
def f_diff(z): return np.diff(z)
def f_diff_twice_rows(z): return np.diff(z, n=2, axis=0)
def f_cumprod(z): return np.cumprod(z)
def f_cumprod_axis(z): return np.cumprod(z, axis=1)
def f_method_cumprod(z): return z.cumprod(axis=0)
def f_method_cumsum(z): return z.cumsum(axis=1)
def f_method_prod(z): return z.prod(axis=0)
def f_method_trace(z): return z.trace()
def f_method_diagonal(z): return z.diagonal(1)
def f_cumulative_sum(z): return np.cumulative_sum(z, axis=1, include_initial=True)
def f_cumulative_prod(z): return np.cumulative_prod(z)
def f_nansum(z): return np.nansum(z, axis=0)
def f_nanmean(z): return np.nanmean(z)
def f_nanprod(z): return np.nanprod(z, axis=1)
def f_nancumsum(z): return np.nancumsum(z)
def f_nancumprod(z): return np.nancumprod(z, axis=1)
def f_average(z): return np.average(z, axis=1, weights=R)
def f_average_weights(z, w): return np.average(z, axis=1, weights=w)


# --- shapes, selections, joining and splitting -------------------------------------------
def f_atleast_1d(z): return np.atleast_1d(z)
def f_atleast_2d(z): return np.atleast_2d(z)
def f_atleast_3d(z): return np.atleast_3d(z)
def f_fliplr(z): return np.fliplr(z)
def f_flipud(z): return np.flipud(z)
def f_rot90(z): return np.rot90(z, 3)
def f_triu(z): return np.triu(z, 1)
def f_tril(z): return np.tril(z)
def f_method_squeeze(z): return z.squeeze()
def f_method_swapaxes(z): return z.swapaxes(0, 2)
def f_method_flatten(z): return z.flatten()
def f_method_repeat(z): return z.repeat(2, axis=1)
def f_method_take(z): return z.take([0, 2, 2], axis=1)
def f_method_compress(z): return z.compress(COND, axis=1)
def f_ascontiguousarray(z): return np.ascontiguousarray(z)
def f_append(a, b): return np.append(a, b)
def f_append_rows(a, b): return np.append(a, b, axis=0)
def f_delete(z): return np.delete(z, [0, 2])
def f_resize(z): return np.resize(z, (2, 5))
def f_rollaxis(z): return np.rollaxis(z, 2)
def f_diagflat(z): return np.diagflat(z, -1)
def f_compress(z): return np.compress(COND, z, axis=1)
def f_extract(z): return np.extract(np.abs(z) > 0.5, z)
def f_ediff1d(z): return np.ediff1d(z, to_begin=[1.0])
def f_split(z): return np.split(z, 2)[0] * 2.0 + np.split(z, 2)[1] * 1j
def f_array_split(z): return np.concatenate(np.array_split(z, 2)[::-1])
def f_hsplit(z): return np.hsplit(z, 2)[1] * np.hsplit(z, 2)[0]
def f_vsplit(z): return np.vsplit(z, 3)[2] - 0.5j * np.vsplit(z, 3)[0]
def f_dsplit(z): return np.dsplit(z, 2)[1]
def f_unstack(z): return np.unstack(z)[1] * np.unstack(z)[2]
def f_column_stack(a, b): return np.column_stack([a, b])
def f_dstack(a, b): return np.dstack([a, b])
def f_block(a, b): return np.block([[a, b], [b, a]])
def f_concatenate(a, b): return np.concatenate([a, b])
def f_stack(a, b): return np.stack([a, b], axis=1)
def f_full(v): return np.full((2, 3), v)
def f_select(a, b, d): return np.select([R > 0, R < -0.5], [a, b], d)
def f_sort(z): return np.sort(z)
def f_sort_rows(z): return np.sort(z, axis=0)
def f_partition(z): return np.partition(z, 2)


# --- products -----------------------------------------------------------------------------
def f_cross(a, b): return np.cross(a, b)
def f_linalg_cross(a, b): return np.linalg.cross(a, b)
def f_matrix_transpose(z): return np.matrix_transpose(z)
def f_mT(z): return z.mT
def f_linalg_matrix_transpose(z): return np.linalg.matrix_transpose(z)
def f_vdot(a, b): return np.vdot(a, b)
def f_vecdot(a, b): return np.vecdot(a, b)
def f_linalg_vecdot(a, b): return np.linalg.vecdot(a, b, axis=0)
def f_linalg_outer(a, b): return np.linalg.outer(a, b)
def f_linalg_matmul(a, b): return np.linalg.matmul(a, b)
def f_linalg_tensordot(a, b): return np.linalg.tensordot(a, b, axes=1)
def f_linalg_diagonal(z): return np.linalg.diagonal(z)
def f_linalg_trace(z): return np.linalg.trace(z, offset=1)


# --- numpy.linalg -----------------------------------------------------------------------
def f_inv(z): return np.linalg.inv(z)
def f_det(z): return np.linalg.det(z)
def f_solve(a, b): return np.linalg.solve(a, b)
def f_matrix_power(z): return np.linalg.matrix_power(z, 3)
def f_matrix_power_negative(z): return np.linalg.matrix_power(z, -2)
def f_multi_dot(a, b, c): return np.linalg.multi_dot([a, b, c])


# --- integration, signals, polynomials ----------------------------------------------------
def f_trapezoid(z): return np.trapezoid(z, dx=0.5)
def f_trapezoid_points(y, x): return np.trapezoid(y, x, axis=1)
def f_convolve(a, v): return np.convolve(a, v)
def f_convolve_same(a, v): return np.convolve(a, v, "same")
def f_convolve_valid(a, v): return np.convolve(a, v, "valid")
def f_correlate(a, v): return np.correlate(a, v)
def f_correlate_full(a, v): return np.correlate(a, v, "full")
def f_correlate_same(a, v): return np.correlate(a, v, "same")
def f_polyval(p, x): return np.polyval(p, x)
def f_interp(x, fp): return np.interp(x, GRID, fp)
def f_linspace(a, b): return np.linspace(a, b, 5)
def f_logspace(a, b): return np.logspace(a, b, 4)
def f_gradient(z): return np.gradient(z)
def f_gradient_axis(z): return np.gradient(z, 0.5, axis=1)


# --- real values of complex ones: norms, variance, standard deviation --------------------
def f_norm(z): return np.linalg.norm(z)
def f_norm_ord_1(z): return np.linalg.norm(z, 1)
def f_norm_ord_3(z): return np.linalg.norm(z, ord=3)
def f_norm_inf(z): return np.linalg.norm(z, np.inf)
def f_norm_fro(z): return np.linalg.norm(z, "fro")
def f_norm_nuc(z): return np.linalg.norm(z, "nuc")
def f_norm_spectral(z): return np.linalg.norm(z, 2)
def f_norm_rows(z): return np.linalg.norm(z, axis=1, keepdims=True)
def f_var(z): return np.var(z)
def f_std_columns(z): return np.std(z, axis=0, ddof=1)
def f_method_var(z): return z.var(axis=1)
def f_method_std(z): return z.std()


# --- elementwise ------------------------------------------------------------------------
def f_arcsin(z): return np.arcsin(z)
def f_arccos(z): return np.arccos(z)
def f_arctan(z): return np.arctan(z)
def f_arcsinh(z): return np.arcsinh(z)
def f_arctanh(z): return np.arctanh(z)
def f_sinc(z): return np.sinc(z)
def f_float_power(a, b): return np.float_power(a, b)
def f_where(a, b): return np.where(R > 0, a, b)
def f_asanyarray(z): return np.asanyarray(z)
def f_asarray_chkfinite(z): return np.asarray_chkfinite(z)
def f_builtin_pow(a, b): return pow(a, b)
def f_builtin_sum(a, b): return sum([a, b * 2.0, a * b])
def f_full_like(a, v): return np.full_like(a, v[1] * v[2])
def f_full_like_real_fill(a, v): return np.full_like(a, v[0])


def row(fn, *args, wrt=None):
    """A row of the table: ``fn`` at ``args``, differentiated in ``wrt`` (default: all)."""
    wrt = tuple(range(len(args))) if wrt is None else wrt
    return pytest.param(fn, args, wrt, id=fn.__name__[2:])


CASES = [
    row(f_full_like, Z, Y, wrt=(1,)),
    row(f_full_like_real_fill, Z, R, wrt=(1,)),
    row(f_norm, Z),
    row(f_norm_ord_1, Z),
    row(f_norm_ord_3, Z),
    row(f_norm_inf, Z),
    row(f_norm_fro, ZM),
    row(f_norm_nuc, ZM),
    row(f_norm_spectral, ZM),
    row(f_norm_rows, ZM),
    row(f_var, Z),
    row(f_std_columns, ZM),
    row(f_method_var, ZM),
    row(f_method_std, ZM),
    row(f_diff, Z),
    row(f_diff_twice_rows, ZM),
    row(f_cumprod, ZM),
    row(f_cumprod_axis, ZM),
    row(f_method_cumprod, ZM),
    row(f_method_cumsum, ZM),
    row(f_method_prod, ZM),
    row(f_method_trace, ZS),
    row(f_method_diagonal, ZM),
    row(f_cumulative_sum, ZM),
    row(f_cumulative_prod, Z),
    row(f_nansum, ZM),
    row(f_nanmean, ZM),
    row(f_nanprod, ZM),
    row(f_nancumsum, ZM),
    row(f_nancumprod, ZM),
    row(f_average, ZM),
    row(f_average_weights, ZM, Y),
    row(f_average_weights, ZM, R),
    row(f_atleast_1d, ZC),
    row(f_atleast_2d, Z),
    row(f_atleast_3d, ZM),
    row(f_fliplr, ZM),
    row(f_flipud, ZM),
    row(f_rot90, ZM),
    row(f_triu, ZS),
    row(f_tril, ZM),
    row(f_method_squeeze, ZROW),
    row(f_method_swapaxes, ZT),
    row(f_method_flatten, ZM),
    row(f_method_repeat, ZM),
    row(f_method_take, ZM),
    row(f_method_compress, ZM),
    row(f_ascontiguousarray, ZM),
    row(f_append, Z, Z3),
    row(f_append, R, Z3),
    row(f_append_rows, ZM, ZROW),
    row(f_delete, Z5),
    row(f_resize, Z),
    row(f_rollaxis, ZT),
    row(f_diagflat, Z3),
    row(f_compress, ZM),
    row(f_extract, ZM),
    row(f_ediff1d, Z5),
    row(f_split, Z),
    row(f_array_split, Z5),
    row(f_hsplit, ZM),
    row(f_vsplit, ZM),
    row(f_dsplit, ZT),
    row(f_unstack, ZM),
    row(f_column_stack, Z, Y),
    row(f_column_stack, R, Y),
    row(f_dstack, ZM, YM),
    row(f_block, ZS, YS),
    row(f_block, RS, YS),
    row(f_concatenate, R, Z5),
    row(f_stack, Z, R),
    row(f_full, ZC),
    row(f_select, Z, Y, complex(Z3[0])),
    row(f_select, Z, R, 0.5),
    row(f_sort, Z5),
    row(f_sort_rows, ZM),
    row(f_partition, Z5),
    row(f_cross, Z3, Y3),
    row(f_cross, R3, Y3),
    row(f_linalg_cross, ZM[:, :3], Y3),
    row(f_matrix_transpose, ZT),
    row(f_mT, ZM),
    row(f_linalg_matrix_transpose, ZT),
    row(f_vdot, Z, Y),
    row(f_vdot, ZM, YM),
    row(f_vdot, R, Y),
    row(f_vdot, Z, R),
    row(f_vecdot, ZM, Y),
    row(f_vecdot, RM, Y),
    row(f_vecdot, ZM, R),
    row(f_linalg_vecdot, ZM, YM[:, :1]),
    row(f_linalg_outer, Z, Y3),
    row(f_linalg_matmul, ZS, ZB),
    row(f_linalg_tensordot, ZM, Y),
    row(f_linalg_diagonal, ZT),
    row(f_linalg_trace, ZT),
    row(f_inv, ZS),
    row(f_det, ZS),
    row(f_solve, ZS, ZB),
    row(f_solve, ZS, Z3),
    row(f_solve, RS, ZB),
    row(f_solve, ZS, R3),
    row(f_matrix_power, ZS),
    row(f_matrix_power_negative, ZS),
    row(f_multi_dot, ZS, ZM, Y),
    row(f_multi_dot, RS, ZM, R),
    row(f_trapezoid, ZM),
    row(f_trapezoid_points, ZM, GRID),
    row(f_trapezoid_points, RM, Z),
    row(f_convolve, Z, Y3),
    row(f_convolve, R, Y3),
    row(f_convolve_same, Z3, Z5),
    row(f_convolve_valid, Z5, Y3),
    row(f_correlate, Z5, Y3),
    row(f_correlate, R, Y3),
    row(f_correlate, Z5, R3),
    row(f_correlate_full, Z, Y3),
    row(f_correlate_same, Z5, Y3),
    row(f_polyval, Z3, Z),
    row(f_polyval, R3, Z),
    row(f_polyval, Z3, R),
    row(f_interp, np.array([0.1, 0.5, 1.0]), Z),
    row(f_linspace, ZC, complex(Z3[1])),
    row(f_logspace, ZC, complex(Z3[1])),
    row(f_gradient, Z5),
    row(f_gradient_axis, ZM),
    row(f_arcsin, ZM),
    row(f_arccos, ZM),
    row(f_arctan, ZM),
    row(f_arcsinh, ZM),
    row(f_arctanh, ZM),
    row(f_sinc, ZM),
    row(f_float_power, Z + 3.0, Y),
    row(f_float_power, R + 3.0, Y),
    row(f_float_power, Z, 3.0),
    row(f_where, Z, Y),
    row(f_where, R, Y),
    row(f_asanyarray, ZM),
    row(f_asarray_chkfinite, ZM),
    row(f_builtin_pow, Z + 3.0, Y),
    row(f_builtin_sum, Z, Y),
]


def weight(shape, seed):
    """Fixed complex weights of ``shape``."""
    w = np.random.default_rng(seed)
    return w.standard_normal(shape) + 1j * w.standard_normal(shape)


def _variant(fn, args, directory):
    """A module (a file, imported) with ``variant(*args) = Re(sum(r * W)) + Im(sum(r * V))``
    for ``r = fn(*args)``, ``W`` and ``V`` fixed complex weights of the shape of ``r``."""
    shape = np.shape(fn(*args))
    params = ", ".join(f"a{j}" for j in range(len(args)))
    name = f"complex_rule_{fn.__name__}_{abs(hash((shape, len(args)))) % 10**8}"
    (directory / f"{name}.py").write_text(
        "import numpy as np\n"
        f"from tests.rules.test_complex_rules import {fn.__name__}, weight\n\n"
        f"W = weight({shape!r}, 1)\n"
        f"V = weight({shape!r}, 2)\n\n\n"
        f"def variant({params}):\n"
        f"    r = {fn.__name__}({params})\n"
        "    return np.real(np.sum(r * W)) + np.imag(np.sum(r * V))\n"
    )
    return importlib.import_module(name).variant


@pytest.mark.parametrize("route", ["direct", "transpose"])
@pytest.mark.parametrize("fn, args, wrt", CASES)
def test_rules_hold_for_complex_arguments(fn, args, wrt, route, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    variant = _variant(fn, args, tmp_path)
    check_grads(variant, args, modes=("forward", "reverse"), wrt=wrt, route=route)
    gradients = ta.grad(variant, wrt=wrt, route=route)(*args)  # a tuple: wrt is one
    for i, g in zip(wrt, gradients, strict=True):
        assert np.iscomplexobj(g) == np.iscomplexobj(args[i]), (i, g)


# --- second order: the helpers the products' cotangents call, derived again ---------------
def f_matmul(a, b): return a @ b
def f_dot(a, b): return np.dot(a, b)
def f_tensordot_axes(a, b): return np.tensordot(a, b, axes=([2], [0]))
def f_kron(a, b): return np.kron(a, b)
def f_sum_filled(a, b): return np.full_like(a, np.sum(a * b))
def f_prod_of_a_number(z): return np.prod(z)


RM4 = rng.standard_normal((4, 2))
RT = rng.standard_normal((2, 3, 4))

SECOND_ORDER = [
    row(f_matmul, RM, ZM.T),
    row(f_matmul, ZM, RM4),
    row(f_dot, RT, ZB[:1].repeat(4, axis=0)),
    row(f_dot, ZT, RM4),
    row(f_tensordot_axes, RT, Z),
    row(f_kron, RM, ZB),
    row(f_kron, ZM, ZB),
    row(f_sum_filled, Z, R),
    row(f_method_prod, ZM),
    row(f_prod_of_a_number, ZC),
]


@pytest.mark.parametrize("fn, args, wrt", SECOND_ORDER)
def test_product_cotangents_hold_for_complex_at_second_order(fn, args, wrt, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    check_grads(_variant(fn, args, tmp_path), args, wrt=wrt, order=2)
