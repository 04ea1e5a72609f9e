"""What generated code calls, and nothing else: this package imports only NumPy.

Generated modules import it as ``from tangent_ast import runtime`` and call
``runtime.unbroadcast(...)``, ``runtime.sum_vjp(...)``: the helpers a rule needs beyond a
NumPy expression, grouped by topic in the modules below. ``tangent-ast generate
--standalone`` copies this package into the generated one, so that shipped derivatives
need no tangent_ast at all.

    errors       the error a derived rule raises at run time
    tangents     tangents of containers and records; unbroadcast; lists updated in place
    batched      a batch of tangents: many directions through derived code in one pass
    jacobians    a derived rule run on a batch of directions: Jacobians, Hessians
    shapes       where a reduction's cotangent goes back
    reductions   sums, means, extrema, products, moments, scans
    arrays       indexing, reshaping, selection, padding
    elementwise  elementwise derivatives that need more than an expression
    sequences    functions of a list of arrays, or returning a tuple of them
    linalg       products, solves, factorizations, norms, einsum
    spectral     eigenvalues and eigenvectors, singular values and vectors
    fourier      the discrete Fourier transforms
    statistics   NaN-aware reductions, quantiles, medians
    signal       integration, interpolation, convolution, polynomials
    checkpoints  the markers checkpointed(range(n), snapshots=k) and @checkpoint
"""

# name -> the module defining it: each module is imported when one of its names is first
# read (PEP 562), so that a program whose rules call a few helpers imports only theirs
# (importing them all costs some 5 ms of a cached rule's start-up).
_EXPORTS = {
    "arrays": (
        "append_vjp",
        "compress_vjp",
        "diag_vjp",
        "diagonal_vjp",
        "extract_vjp",
        "full_like_jvp",
        "full_like_vjp",
        "gather_vjp",
        "getitem_vjp",
        "moveaxis_vjp",
        "pad_vjp",
        "partition_jvp",
        "partition_vjp",
        "repeat_vjp",
        "roll_vjp",
        "select_default_vjp",
        "select_vjp",
        "sort_jvp",
        "sort_vjp",
        "take_along_axis_vjp",
        "take_vjp",
        "tile_vjp",
        "trace_vjp",
        "transpose_vjp",
        "written_slots",
    ),
    "batched": (
        "ArrayMethods",
        "Batched",
        "BatchingError",
    ),
    "checkpoints": (
        "binomial_split",
        "checkpoint",
        "checkpointed",
        "is_checkpointed",
    ),
    "elementwise": (
        "astype_vjp",
        "clip_mask",
        "clipped_high",
        "clipped_low",
        "divide_nonzero",
        "divmod_jvp",
        "divmod_vjp",
        "power_derivative",
        "safe_divide",
        "sinc_derivative",
        "xlogy",
    ),
    "errors": ("TangentAstError",),
    "fourier": (
        "fft_vjp",
        "fftn_vjp",
        "ifft_vjp",
        "ifftn_vjp",
        "irfft_vjp",
        "irfftn_vjp",
        "real_if_close_jvp",
        "rfft_vjp",
        "rfftn_vjp",
    ),
    "jacobians": (
        "jvp_of_batch",
        "run_batched",
        "stacked",
        "unbatched",
        "unit_directions",
    ),
    "linalg": (
        "cholesky_jvp",
        "cholesky_vjp",
        "cross_vjp",
        "det_jvp",
        "det_vjp",
        "dot_vjp_left",
        "dot_vjp_right",
        "einsum_jvp",
        "einsum_vjp",
        "inner_vjp_left",
        "inner_vjp_right",
        "kron_vjp_left",
        "kron_vjp_right",
        "lstsq_jvp",
        "lstsq_vjp",
        "matmul_vjp_left",
        "matmul_vjp_right",
        "matrix_norm_jvp",
        "matrix_norm_vjp",
        "matrix_power_jvp",
        "matrix_power_vjp",
        "multi_dot_jvp",
        "multi_dot_vjp",
        "norm_grad",
        "norm_jvp",
        "norm_vjp",
        "pinv_jvp",
        "pinv_vjp",
        "qr_jvp",
        "qr_vjp",
        "slogdet_jvp",
        "slogdet_vjp",
        "solve_jvp_a",
        "solve_vjp_a",
        "solve_vjp_b",
        "tensordot_vjp_left",
        "tensordot_vjp_right",
        "vecdot_vjp",
        "vector_norm_jvp",
        "vector_norm_vjp",
    ),
    "spectral": (
        "eig_jvp",
        "eig_vjp",
        "eigh_jvp",
        "eigh_vjp",
        "eigvals_jvp",
        "eigvals_vjp",
        "eigvalsh_jvp",
        "eigvalsh_vjp",
        "svd_jvp",
        "svd_vjp",
        "svdvals_jvp",
        "svdvals_vjp",
    ),
    "reductions": (
        "average_jvp_weights",
        "average_vjp",
        "average_vjp_weights",
        "cumprod_jvp",
        "cumprod_vjp",
        "cumsum_vjp",
        "cumulative_prod_jvp",
        "cumulative_prod_vjp",
        "cumulative_sum_vjp",
        "diff_vjp",
        "extremum_jvp",
        "extremum_mask",
        "extremum_vjp",
        "mean_jvp",
        "mean_vjp",
        "prod_jvp",
        "prod_vjp",
        "ptp_jvp",
        "ptp_vjp",
        "reduce_count",
        "std_jvp",
        "std_vjp",
        "sum_vjp",
        "var_jvp",
        "var_vjp",
    ),
    "sequences": (
        "array_vjp",
        "concatenate_vjp",
        "gather_list_vjp",
        "gathered",
        "leaf_like",
        "sorted_order",
        "split_axis",
        "split_vjp",
        "stack_vjp",
        "unstack_vjp",
    ),
    "shapes": (
        "as_floating",
        "keep_reduced",
        "reduced_axes",
        "scalar_like",
    ),
    "signal": (
        "convolve_vjp",
        "correlate_vjp",
        "ediff1d_jvp",
        "ediff1d_vjp",
        "gradient_jvp",
        "gradient_vjp",
        "interp_jvp_fp",
        "interp_slope",
        "interp_vjp_fp",
        "linspace_vjp",
        "polyval_slope",
        "polyval_vjp_p",
        "trapezoid_vjp_x",
        "trapezoid_vjp_y",
    ),
    "statistics": (
        "median_jvp",
        "median_vjp",
        "nanmean_vjp",
        "nanprod_jvp",
        "nanprod_vjp",
        "nanstd_jvp",
        "nanstd_vjp",
        "nansum_vjp",
        "nanvar_jvp",
        "nanvar_vjp",
        "percentile_jvp",
        "percentile_vjp",
        "quantile_jvp",
        "quantile_vjp",
    ),
    "tangents": (
        "EFFECTFUL",
        "Tangent",
        "TangentTuple",
        "UNSET",
        "add_tangents",
        "broadcast_like",
        "concat_tangent",
        "dict_with",
        "dict_with_vjp",
        "enter_context",
        "exit_context",
        "getattr_vjp",
        "inserted_at",
        "is_record",
        "item_tangent",
        "list_inserted",
        "list_vjp",
        "items_vjp",
        "list_with",
        "only_shape",
        "real_like",
        "rebuild",
        "record_fields",
        "replace_vjp",
        "sequence_repeat_vjp",
        "unbroadcast",
        "without",
        "without_vjp",
        "write_fields",
        "write_items",
        "write_list",
        "zero_tangent",
        "zeros_like",
    ),
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = sorted(_WHERE)


def __getattr__(name):
    """``runtime.name`` (and ``from tangent_ast.runtime import name``) for a name of a module
    not imported yet: imports it, and binds the name here so the next read is a plain one."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # a relative import (the package may be a copy: tangent-ast generate --standalone)
    value = getattr(__import__(module, globals(), None, (name,), 1), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_WHERE))
