"""Programs that once gave a wrong derivative with no error. Each must now be right in
every mode or refused with a TangentAstError: never a silent wrong number."""

import collections
import dataclasses
import functools
import math
import operator
import types

import numpy as np

import tangent_ast as ta

rng = np.random.default_rng(11)
V = rng.standard_normal(4)
M = rng.standard_normal((3, 4))
T = rng.standard_normal((2, 4, 3))
T2 = rng.standard_normal((2, 3, 5))
SQ = rng.standard_normal((3, 3)) + 3 * np.eye(3)


def full_of_a_value(x):
    return np.sum(np.full((2, 3), x) * np.arange(6.0).reshape(2, 3))


def full_like_of_a_value(v, x):
    return np.sum(np.full_like(v, x) * v)


def sum_of_a_list(a, b, c):
    return np.sum([a, b * c])


def tanh_of_a_list(a, b):
    return np.sum(np.tanh([a, b]) * np.array([1.0, 2.0]))


def clip_by_keyword(x):
    return np.sum(np.clip(x, a_min=-0.5, a_max=0.5) ** 2)


def r_joined(a, b):
    return np.sum(np.r_[a, b] ** 2)


def c_joined(a, b):
    return np.sum(np.c_[a, b] ** 2)


def einsum_sublists(a, b):
    return np.sum(np.einsum(a, [0, 1], b, [1, 2], [0, 2]) ** 2)


def einsum_ellipsis(a, b):
    return np.sum(np.einsum("...ij,...jk->...ik", a, b) ** 2)


def dot_matrix_stack(a, t):
    return np.sum(np.dot(a, t) ** 2)


def dot_stack_stack(t, u):
    return np.sum(np.dot(t, u) ** 2)


def std_of_a_scalar(x):
    return np.std(x) + x


def power_of_zero(x, y):
    return np.power(x * 0.0, y) + x


def to_the_zeroth(x):
    return np.sum(x ** 0 + np.power(x, 0) + x)


def abs_of_complex(x):
    return np.abs(np.sum(x * 1j + x))


def norm_of_complex(x):
    return np.linalg.norm(x + 1j * x[::-1])


def real_meets_complex(x):
    return np.real(np.sum(np.exp(1j * x)))


def masked_sum(x):
    return np.ma.sum(np.ma.masked_array(x, mask=[False, True, False, False]) ** 2)


def _add_into(a, b):
    a += b


def helper_updates_argument(x):
    _add_into(x, x[1])
    return np.sum(x * x)


def helper_updates_other(x, y):
    _add_into(x, y)
    return np.sum(x * x)


def saved_then_updated(w, a):
    alpha = np.dot(w, np.dot(a, w))
    w /= 1.5
    return np.tanh(alpha) + np.sum(w)


def updated_through_a_second_name(x):
    y = x
    y += 1.0
    return np.sum(x * x)


def view_updated(x):
    v = x[1:]
    v += 1.0
    return np.sum(x * x)


# Calls that crashed inside rule bodies.
def hstack_mixed(x):
    return np.sum(np.hstack([x, np.arange(3)]) ** 2)
def sum_tuple_neg(x):
    return np.sum(np.sum(x, axis=(-1, 0)) ** 2)
def sum_neg_keep(x):
    return np.sum(np.sum(x, axis=-1, keepdims=True) ** 2)
def max_neg(x):
    return np.sum(np.max(x, axis=-1) ** 2)
def prod_tuple(x):
    return np.sum(np.prod(x, axis=(0, 1)))
def prod_neg(x):
    return np.sum(np.prod(x, axis=-1))
def prod_scalar(s):
    return np.prod(s) * s
def row_copy(x):
    h = np.zeros((3, 4))
    for t in range(2):
        h[t] = x[t]
    return np.sum(h * h)
def fancy_repeat(x):
    return np.sum(x[[0, 0, 1]] ** 2)
def mean_tuple(x):
    return np.sum(np.mean(x, axis=(0, 2)) ** 2)
def std_axis_neg(x):
    return np.sum(np.std(x, axis=-1))
def sum_scalar_axis(s):
    return np.sum(s, axis=0) * s
def cumsum_neg(x):
    return np.sum(np.cumsum(x, axis=-1) ** 2)
def vstack_scalars(a, b):
    return np.sum(np.vstack([a, b]) ** 2)
def hstack_scalars(a, b):
    return np.sum(np.hstack([a, b, 1.0]) ** 2)


_T = rng.uniform(0.5, 1.5, (2, 3, 4))

CASES = [
    (full_of_a_value, (0.7,)),
    (full_like_of_a_value, (V, 0.7)),
    (sum_of_a_list, (0.3, 0.5, 0.7)),
    (tanh_of_a_list, (0.3, 0.5)),
    (clip_by_keyword, (M,)),
    (r_joined, (V, V[:2] * 2.0)),
    (c_joined, (V, V * 2.0)),
    (einsum_sublists, (M, M.T.copy())),
    (einsum_ellipsis, (T.transpose(0, 2, 1).copy(), T.copy())),
    (dot_matrix_stack, (M[:, :4], T)),
    (dot_stack_stack, (T.transpose(0, 2, 1).copy(), T)),
    (std_of_a_scalar, (0.7,)),
    (power_of_zero, (0.7, 1.5)),
    (to_the_zeroth, (np.array([0.0, 0.5, -0.3]),)),
    (abs_of_complex, (V,)),
    (norm_of_complex, (V,)),
    (real_meets_complex, (V,)),
    (masked_sum, (V,)),
    (helper_updates_argument, (V,)),
    (helper_updates_other, (V, V * 0.5)),
    (saved_then_updated, (V, rng.standard_normal((4, 4)))),
    (updated_through_a_second_name, (V,)),
    (view_updated, (V,)),
    (hstack_mixed, (_T[0, 0],)),
    (sum_tuple_neg, (_T,)),
    (sum_neg_keep, (_T,)),
    (max_neg, (_T,)),
    (prod_tuple, (_T,)),
    (prod_neg, (_T,)),
    (prod_scalar, (0.7,)),
    (row_copy, (_T[0, :2],)),
    (fancy_repeat, (_T[0],)),
    (mean_tuple, (_T,)),
    (std_axis_neg, (_T,)),
    (sum_scalar_axis, (0.7,)),
    (cumsum_neg, (_T,)),
    (vstack_scalars, (0.3, 0.4)),
    (hstack_scalars, (0.3, 0.4)),
]

# The example from the report, differentiated with respect to A only: w carries no
# derivative, but its value before the update is a residual.
CASES += [(saved_then_updated, (V, rng.standard_normal((4, 4))))]


# Found by the fuzzer, differentiated with respect to the last argument only.
def argument_halved_then_read(a, b):
    a *= 0.5
    return np.sum(a * b)


def updated_in_one_branch(a, b, c):
    if c > 1.3:
        return c * 2.0
    v = b * 1.0
    v[1] = v[1] * 2.0
    return np.sum(v)


CASES += [(argument_halved_then_read, (V, 0.45)), (updated_in_one_branch, (V, M, 0.5)),
          (updated_in_one_branch, (V, M, 1.5))]


# An argument updated in place after a call that keeps it (the callee's saved values, a
# record, a view) once gave a wrong reverse derivative: each is refused now.
def _square(p):
    return p * p


def kept_by_a_callee(x):
    v = _square(x)
    x[0] = 5.0
    return np.sum(v)


def kept_by_a_flip(x):
    v = np.flip(x)
    x[0] = 5.0
    return np.sum(v * v)


Kept = collections.namedtuple("Kept", "left right")


def kept_by_a_record(x):
    pr = Kept(x, right=x)
    v = pr.left * pr.right
    x[0] = 5.0
    return np.sum(v)


CASES += [(kept_by_a_callee, (V,)), (kept_by_a_flip, (V,)), (kept_by_a_record, (V,))]


def element_updated_by_augmented_assignment(w):
    """``w[2]`` of a vector is a new scalar: ``s += 1.0`` leaves the caller's ``w`` alone."""
    s = w[2]
    s += 1.0
    return s * w[0]


def tangent_named_like_a_keyword(ef, el):
    """The tangents of ``el`` and ``ef`` are not ``del`` and ``def`` (a SyntaxError)."""
    el = el[..., 0]
    el -= 1.5
    return np.sum(ef * 2.0 + np.sum(el * el))


CASES += [
    (element_updated_by_augmented_assignment, (V,)),
    (tangent_named_like_a_keyword, (SQ, SQ)),
]


def updated_on_one_branch_only(x, a):
    """``x`` is the caller's array when ``a <= 0`` and a new one otherwise: ``x /= 2.0`` changes
    the caller's array on one path only (refused: a derived rule left it alone)."""
    if a > 0:
        x = np.tanh(x)
    x /= 2.0
    return np.sum(x)


def rebound_on_both_branches(x, a):
    if a > 0:
        x = np.tanh(x)
    else:
        x = x * 3.0
    x /= 2.0
    return np.sum(x)


@dataclasses.dataclass
class Weights:
    w: np.ndarray


def second_name_of_a_field(x, p):
    """``v`` is ``p.w``: ``v -= x`` updates the caller's ``p.w`` (refused; it gave 0.0)."""
    v = p.w
    v -= x
    return np.sum(p.w)


def lambda_assigned_through_a_slice(x):
    """The lambda's parameter, inlined, named ``x`` again: the reverse sweep read it updated."""
    g1 = lambda t: np.arcsinh(t)  # noqa: E731
    x[:] = g1(x)
    return np.sum(x * x)


CASES += [
    (updated_on_one_branch_only, (V, -1.0)),
    (rebound_on_both_branches, (V, -1.0)),
    (rebound_on_both_branches, (V, 1.0)),
    (second_name_of_a_field, (0.5, Weights(V))),
    (lambda_assigned_through_a_slice, (V,)),
]


def einsum_over_an_empty_axis(a, b):
    """A length-0 axis broadcast against a length-1 one: the reverse rule took the 1."""
    return np.sum(np.einsum("ij,jk->ik", a, b)) + np.sum(np.einsum("ij,ij->i", a[:1], a))


CASES += [(einsum_over_an_empty_axis, (np.ones((0, 2)), np.ones((2, 3))))]


# A negative number constant printed where an operator binds tighter than its minus:
# Constant(-2.0) was written -2.0 ** 2, which Python reads as -(2.0 ** 2).
def squared_negative_constant(x):
    return x * (-2.0) ** 2


def arctan2_of_a_negative_constant(a):
    return np.arctan2(-0.995, a)  # its rule squares the constant


def arctan2_by_a_negative_constant(a):
    return np.arctan2(a, -0.5)


def powers_of_a_negative_int(x):
    return (-3) ** 3 * x + x**2 * (-3) ** 2


def negative_exponents(x):
    return x**-2 + 2.0**-x + np.power(x, -3.0)


def power_of_a_negative_base(x, k):
    return x * np.power(-2.0, k) + x * (-1.5) ** k


def real_part_of_a_negative_constant(x):
    return (-2.0).real * x + (-3).real * x * x


def squared_negative_imaginary(x):
    return np.real(x * (-2j) ** 2) + np.real(x * (-1 + 2j) ** 2)


def negative_constants_in_calls(x):
    return np.sum(np.clip(x, -0.5, 0.5) ** 2 * np.maximum(-1.0, x) * np.hypot(-3.0, x))


def atan2_of_a_negative_constant(x):
    return math.atan2(-1.5, x)  # its reverse rule squares the constant: -1.5 * -1.5


NEGATIVE_CONSTANTS = [
    (squared_negative_constant, (1.3,)),
    (arctan2_of_a_negative_constant, (0.3,)),
    (arctan2_by_a_negative_constant, (0.4,)),
    (powers_of_a_negative_int, (0.7,)),
    (negative_exponents, (0.8,)),
    (power_of_a_negative_base, (0.6, 3)),
    (real_part_of_a_negative_constant, (0.4,)),
    (squared_negative_imaginary, (0.5,)),
    (negative_constants_in_calls, (V,)),
    (atan2_of_a_negative_constant, (0.5,)),
]
CASES += NEGATIVE_CONSTANTS


def lambda_through_a_slice_of_unknown_kind(a):
    """As above, where the updated array's kind is not known (np.outer of a (4,) minimum):
    the inlined parameter was left a second name of the array (fuzz seed 127, mixed)."""
    v1 = np.min(a, axis=0)
    v8 = np.outer(v1, v1) * 1.0
    g1 = lambda t: np.arcsinh(t)  # noqa: E731
    v8[:] = g1(v8)
    return np.sum(v8) + np.sum(v1)


CASES += [(lambda_through_a_slice_of_unknown_kind, (M,))]


# tangent_ast's own API inside a differentiated function was taken for a constant: the
# pullback of a vjp called on a constant cotangent gave x no derivative (lowering/api_calls.py)


def _sine_times(x):
    return np.sin(x) * x


def pullback_called_on_a_constant(x, v):
    out, pullback = ta.vjp(_sine_times, x)
    return pullback(1.0) * v


def linear_map_called(x, v):
    out, f_jvp = ta.linearize(_sine_times, x)
    return f_jvp(v) * out


CASES += [(pullback_called_on_a_constant, (0.7, 2.0)), (linear_map_called, (0.7, 2.0))]


# One def, two closures, one rule: the rule derived for the closure over np.fft.fft was
# used for the one over np.fft.ifft, and a rule calling two closures of one def gave both
# the cells of one (code_keys.py, the header's calls and closure-rules)


def _spectrum(fft_fun, n):
    def fun(x, w):
        z = fft_fun(x, n)
        return np.sum(np.real(z) * w)

    return fun


def _layer(w, act):
    def layer(x):
        return act(w @ x)

    return layer


spectrum_by_fft = _spectrum(np.fft.fft, 4)
spectrum_by_ifft = _spectrum(np.fft.ifft, 4)
_FIRST = _layer(SQ, np.tanh)
_SECOND = _layer(SQ.T * 0.5, np.tanh)
_THIRD = _layer(SQ * 0.3, np.sin)


def closures_of_one_def(x):
    return np.sum(_SECOND(_FIRST(x)) * _THIRD(x))


# the same through tangent_ast's API: the functions ta.vjp makes of each closure live in
# the closure's rule modules, named alike for the closures of one def, and were imported
# from them, so both read the cells of one closure (a wrong value where not differentiated)
def closures_of_one_def_by_vjp(x, v, m):
    first, pullback_first = ta.vjp(_FIRST, v)
    second, pullback_second = ta.vjp(_SECOND, m)
    return np.sum(pullback_first(second[:, 0]) * x) + np.sum(pullback_second(np.outer(first, x)))


CASES += [
    (spectrum_by_fft, (V, V[::-1].copy())),
    (spectrum_by_ifft, (V, V[::-1].copy())),
    (closures_of_one_def, (V[:3].copy(),)),
    (closures_of_one_def_by_vjp, (V[:3].copy(), V[1:].copy(), M[:, :3].T.copy())),
]


# an array of the function's own bound more than once, each time a new array, and updated
# in place: right where each version is updated as the one it is (straight code, a branch,
# a loop; there the reverse loop once computed the array again from the taped one before
# restoring its slots, or once for every iteration: a wrong gradient)
def new_array_bound_again_then_updated(x):
    a = np.zeros(4)
    a[0] = x[0] * 2.0
    a = a * x
    a[1] += x[2] * a[0]
    return np.sum(a**2)


def new_array_bound_again_on_one_branch(x, s):
    a = x * 1.0
    if s > 0:
        a = np.ones(4) * s
        a[0] = x[1] * a[2]
    a[2] = a[2] * x[0]
    return np.sum(a * x)


def new_array_bound_again_in_a_loop(x):
    a = x * 1.0
    for i in range(3):
        a[i] = a[i] * x[i]
        a = a * np.sin(a)
    return np.sum(a)


def new_array_bound_in_a_loop_and_updated_twice(x):
    t = 0.0
    for i in range(2):
        a = x * 2.0
        a[i] = a[i] ** 2
        t = t + np.sum(a * x)
        a = np.cos(a)
        a[2] = a[0] * x[1]
        t = t + np.sum(a)
    return t


CASES += [
    (new_array_bound_again_then_updated, (V,)),
    (new_array_bound_again_on_one_branch, (V, 0.5)),
    (new_array_bound_again_on_one_branch, (V, -0.5)),
    (new_array_bound_again_in_a_loop, (V,)),
    (new_array_bound_in_a_loop_and_updated_twice, (V,)),
]


# Complex values whose kind inference cannot tell (np.full's): a sum of them is a number that
# may be complex (np.imag of it was taken as zero), and a callee given one derives its rule for
# a parameter that may be complex (it ran real rules on complex values: np.std, np.median).
def _pick(d):
    return d["v"]


def _spread(t):
    return np.std(t)


def _middle(t):
    return np.median(t)


def _sum_of_squares(t):
    return np.sum(t * t)


def imag_of_a_sum_through_a_dict(x):
    z = x * (1.0 + 2.0j) * np.full(3, 0.5)
    return np.imag(np.sum(_pick({"v": z})))


def imag_of_a_sum_scaled(x):
    s = np.sum(x * (1.0 + 2.0j) * np.full(3, 0.5))
    return np.imag(s * 2.0) + np.real(s)


def callee_spread_of_a_complex_value(x):
    z = x * (1.0 + 2.0j) * np.full(3, 0.5) + np.full(3, 0.25)
    return _spread(z)


def callee_ordering_a_complex_value(x):
    z = x * (1.0 + 2.0j) * np.hstack([np.full(2, 0.5), [1.5]])
    return np.real(_middle(z))


def callee_squaring_a_complex_value(x):
    z = x * (1.0 + 2.0j) * np.full(3, 0.5) + np.full(3, 0.25)
    return np.imag(_sum_of_squares(_pick({"v": z})))


MAYBE_COMPLEX = [
    (imag_of_a_sum_through_a_dict, (0.7,)),
    (imag_of_a_sum_scaled, (0.7,)),
    (callee_squaring_a_complex_value, (0.7,)),
    (callee_spread_of_a_complex_value, (0.7,)),  # its std 0 (equal elements), as its derivative
]
CASES += MAYBE_COMPLEX + [(callee_ordering_a_complex_value, (0.7,))]


# np.std of equal elements is 0, though NumPy's is a rounding error of the mean (1e-16): its
# derivative was a ratio of rounding errors (-0.5 for 0)
def std_of_equal_elements(x):
    return np.std(x * np.full(3, 0.1) + 0.3) + np.std(np.full((2, 3), x), axis=1)[0]


CASES += [(std_of_equal_elements, (1.1,)), (std_of_equal_elements, (0.3,))]


# a list item replaced by a value of another shape (np.linalg.multi_dot's helper makes a
# leading vector a row): the item replaced got a zero cotangent of the new value's shape,
# which broadcast the argument's cotangent to (1, 3); reverse over reverse gave wrong values
def list_item_reshaped(a, m):
    mats = [a, m]
    mats[0] = mats[0][None, :]
    return np.sum((mats[0] @ mats[1]) ** 2)


# np.cumprod of an array with a zero: the product is smooth there, but its derivative was
# ans * cumsum(dx / x), NaN (0/0)
def cumprod_through_a_zero(x):
    return np.sum(np.cumprod(x * np.array([1.0, 0.0, 1.0, 1.0])) * np.arange(1.0, 5.0))


CASES += [(list_item_reshaped, (V[:3].copy(), M)), (cumprod_through_a_zero, (V,))]


# A loop over a dict runs over its keys: it read d[0], d[1] (the values, where the keys are
# 0 and 1; a KeyError else).
def loop_over_int_keys(d, x):
    s = 0.0
    for k in d:
        s = s + k * d[k] * x
    return s


def loop_over_keys_enumerated(d, x):
    s = 0.0
    for j, k in enumerate(d):
        s = s + (j + 1.0) * d[k] * x
    return s


def loop_over_keys_zipped(d, xs):
    s = 0.0
    for k, x in zip(d, xs):
        s = s + d[k] * x
    return s


def loop_over_keys_reversed(d):
    s = 0.0
    for k in reversed(d):
        s = s * 2.0 + d[k]
    return s


# A loop runs over what its iterable was when it started: rebinding the name in the body
# changed what the loop read.
def loop_rebinding_its_list(xs):
    s = 0.0
    for x in xs:
        s = s + x * x
        xs = [2.0 * xs[0], xs[1]]
    return s


def loop_rebinding_its_dict(d):
    s = 0.0
    for k in d:
        s = s + d[k] ** 2
        d = {"a": d["a"] * 2.0, "b": d["b"]}
    return s


def loop_over_items(d, x):
    s = 0.0
    for k, v in d.items():
        s = s + v * x * (k + 1.0)
    return s


def loop_over_values(d):
    s = 0.0
    for v in d.values():
        s = s * 2.0 + v**2
    return s


def sum_over_values(d):
    return sum(v**2 for v in d.values()) + np.sum([d[k] for k in d.keys()])


def loop_over_sorted_keys(d):
    s = 0.0
    for k in sorted(d):
        s = s * 2.0 + d[k]
    return s


def sorted_values(xs):
    ys = sorted(xs)
    return ys[0] * 2.0 + ys[1]


def loop_unpacking_pairs(xs):
    s = 0.0
    for i, (a, b) in enumerate(xs):
        s = s + a * b * (i + 1.0)
    return s


def loop_over_sorted_items(d):
    s = 0.0
    for i, (k, v) in enumerate(sorted(d.items(), key=operator.itemgetter(0))):
        s = s + np.sum(np.sin(v)) * (i + 1.0)
    return s


def dict_built_by_dict(x):
    d = dict([("a", x)], b=x * 2.0)
    return d["a"] * d["b"] + dict({"c": x}, c=x * 3.0)["c"]


ITERATION = [
    (loop_over_items, ({1: 2.0, 0: 3.0}, 1.5)),
    (loop_over_values, ({1: 2.0, 0: 3.0},)),
    (sum_over_values, ({"b": 1.5, "a": 2.0},)),
    (loop_over_sorted_keys, ({"b": 1.5, "a": 2.0},)),
    (sorted_values, ([3.0, 1.0, 2.0],)),
    (sorted_values, (np.array([3.0, 1.0, 2.0]),)),
    (loop_unpacking_pairs, ([(1.0, 2.0), (0.5, 3.0)],)),
    (loop_over_sorted_items, ({"b": np.ones(2), "a": np.array([0.3, 0.2])},)),
    (dict_built_by_dict, (1.5,)),
    (loop_over_int_keys, ({0: 1.0, 1: 0.5}, 1.5)),
    (loop_over_int_keys, ({1: 2.0, 0: 3.0}, 1.5)),
    (loop_over_keys_enumerated, ({"b": 1.5, "a": 2.0}, 0.7)),
    (loop_over_keys_zipped, ({"b": 1.5, "a": 2.0}, [1.0, 2.0])),
    (loop_over_keys_reversed, ({"b": 1.5, "a": 2.0},)),
    (loop_rebinding_its_list, ([1.0, 2.0],)),
    (loop_rebinding_its_dict, ({"b": 1.5, "a": 2.0},)),
]
CASES += ITERATION


# two partials of one function, bound to other values, through tangent_ast's API: their
# wrapper modules were one (the loader's values were not in the rules' module names), so
# both gradients read one partial's exponent; and the exponent's zero tangent times the
# NaN of a negative base's log made the forward rule NaN
def _power_sum(x, p, c):
    return c * np.sum(x**p)


_SQUARES = functools.partial(_power_sum, p=2.0, c=1.0)
_HALF_CUBES = functools.partial(_power_sum, p=3.0, c=0.5)


def gradients_of_two_partials(x):
    return np.sum(ta.grad(_SQUARES)(x) * ta.grad(_HALF_CUBES)(x))


CASES += [(gradients_of_two_partials, (np.array([0.3, -0.7, 1.1]),))]


# a bound method held by another object: its receiver is the method's own instance, not the
# object it is read from (the holder's w was passed as self)
class _Weighted:
    def __init__(self, w):
        self.w = w

    def loss(self, x):
        return np.sum(self.w * x**2)


_MODEL = _Weighted(np.array([1.0, 2.0, -0.5]))
_HOLDER = types.SimpleNamespace(w=100 * np.ones(3), loss=_MODEL.loss)


def method_held_by_another_object(x):
    return _HOLDER.loss(x)


# np.take with mode="clip": the cotangent went back to the index as written (-1 read as the
# last element), not the one np.take reads (clipped to 0)
def take_clipped(x):
    return np.sum(np.take(x, [-1, 1, 5], mode="clip") * np.array([10.0, 1.0, 5.0]))


# a complex constant given to a rule for real values (lstsq's cotangents are those of real
# matrices)
_COMPLEX_MATRIX = np.array([[1.0 + 0.5j, 0.3], [0.2j, 1.5], [0.7, -0.4 + 0.1j]])


def least_squares_of_a_complex_matrix(b):
    return np.sum(np.abs(np.linalg.lstsq(_COMPLEX_MATRIX, b, rcond=None)[0]) ** 2)


# the derivative of a power in its exponent, at a point where the cotangent reaching it is 0
# (a stationary point): written with the cotangent inside xlogy, the second derivative lost
# d(ct) * ans * log(x)
def power_at_a_stationary_point(y, x):
    return (x**y - 2.0) ** 2


CASES += [
    (method_held_by_another_object, (V[:3].copy(),)),
    (take_clipped, (V[:3].copy(),)),
    (least_squares_of_a_complex_matrix, (V[:3].copy(),)),
    (power_at_a_stationary_point, (0.5, 4.0)),
]


# An argument read in a loop, then updated in place, differentiated with respect to another
# argument only: the reverse loop computed tanh(a[i]) again from the updated a (a value the
# reverse sweep does not restore) instead of taping it
def argument_read_in_loop_then_updated(a, b):
    acc = np.zeros(3)
    for i in range(4):
        acc = acc + b[i] * np.tanh(a[i])
    a += a * 0.5
    return np.sum(acc)


# xs[0] += x on an item that is an array adds into that array, which w names too: w saw the
# change in Python, not in the derived code (refused now)
def list_item_added_into_with_a_second_name(x):
    xs = [x * 1.0, x]
    w = xs[0]
    xs[0] += x
    return np.sum(w * x)


CASES += [
    (argument_read_in_loop_then_updated, (V.copy(), M.T.copy())),
    (list_item_added_into_with_a_second_name, (V[:3].copy(),)),
]


# A dict argument gaining an entry the result does not depend on: its zero cotangent was
# made from the dict as written back (with the new key), not as given
def dict_argument_gains_an_unused_entry(a, entries):
    entries["u"] = np.cos(entries["w"])
    return np.sum(a * a)


CASES += [(dict_argument_gains_an_unused_entry, (V[:3].copy(), {"w": V[:3].copy(), "s": 0.5}))]


# Writes through an index that names a place twice: NumPy keeps one write (the last), so
# the lost writes' values have no effect; the reverse rule gave them the slot's cotangent
def write_twice_by_index(x):
    y = np.zeros(3)
    y[np.array([0, 0, 2])] += x
    return np.sum(y * np.arange(1.0, 4.0))


def write_twice_spread_and_sliced(x):
    m = np.ones((3, 3))
    m[np.array([1, 1])] = x[0]
    m[[0, 0, 1], [1, 1, 2]] = x * x
    m[:, [2, 2]] += x[:, None] * np.ones(2)
    return np.sum(m * np.arange(9.0).reshape(3, 3))


CASES += [(write_twice_by_index, (V[:3].copy(),)), (write_twice_spread_and_sliced, (V[:3].copy(),))]


# Names that share an array's memory without looking like views: np.array(x, copy=False)
# (copy=None) is x itself, taken for a new array (and, updated in place, for one the
# function owns); np.einsum("ii->i", z), z.astype(t, copy=False), np.ascontiguousarray(z)
# are views of z
def array_without_copy_then_argument_updated(x):
    y = np.array(x, copy=False)
    x *= 2.0
    return np.sum(y * x)


def array_without_copy_updated(x):
    z = x * 1.0
    y = np.array(z, copy=None)
    y[0] = 5.0 * x[1]
    return np.sum(y * z)


def einsum_diagonal_then_updated(x):
    z = np.outer(x, x)
    y = np.einsum("ii->i", z)
    z[1, 1] = x[0] ** 3
    return np.sum(y * x)


def astype_without_copy_then_updated(x):
    z = x * 1.0
    y = z.astype(float, copy=False)
    z[1] = x[0] ** 3
    return np.sum(y * x)


CASES += [
    (array_without_copy_then_argument_updated, (V[:3].copy(),)),
    (array_without_copy_updated, (V[:3].copy(),)),
    (einsum_diagonal_then_updated, (V[:3].copy(),)),
    (astype_without_copy_then_updated, (V[:3].copy(),)),
]


# p.w += v on an array another name still holds: Python's update reaches that name too
@dataclasses.dataclass
class _Holder:
    w: np.ndarray
    c: float


def field_augmented_made_from_a_name_read_later(x):
    a = x * 1.0
    p = _Holder(a, 0.5)
    p.w += x**2
    return np.sum(a * x)


def field_augmented_read_before_into_a_name(x):
    p = _Holder(x * 1.0, 0.5)
    before = p.w
    p.w *= x
    return np.sum(before * x)


def field_augmented_with_a_view_read_later(x):
    p = _Holder(x * 1.0, 0.5)
    tail = p.w[1:]
    p.w *= x
    return np.sum(tail * tail)


def field_augmented_in_a_loop_read_through_an_older_name(x):
    p = _Holder(x * 1.0, 0.5)
    first = p.w
    s = 0.0
    for _ in range(2):
        s = s + np.sum(first * x)
        p.w *= x
    return s


def field_augmented_array_in_two_records(x):
    a = x * 1.0
    p = _Holder(a, 0.5)
    q = _Holder(a, 2.0)
    p.w += x
    return np.sum(q.w * x)


def item_augmented_array_twice_in_a_list(x):
    a = x * 1.0
    xs = [a, a]
    xs[0] += x
    return np.sum(xs[1] * x)


def item_augmented_of_an_argument(x):
    xs = [x * 2.0, x]
    xs[1] += x**2
    return np.sum(xs[1] * xs[0])


CASES += [
    (f, (V[:3].copy(),))
    for f in (
        field_augmented_made_from_a_name_read_later,
        field_augmented_read_before_into_a_name,
        field_augmented_with_a_view_read_later,
        field_augmented_in_a_loop_read_through_an_older_name,
        field_augmented_array_in_two_records,
        item_augmented_array_twice_in_a_list,
        item_augmented_of_an_argument,
    )
]


# a += v on an array a container holds, where an item was read out before the update, or the
# container sits in another one
def augmented_after_an_item_was_read_out(x):
    a = x * 1.0
    xs = [a, x]
    first = xs[0]
    a += x**2
    return np.sum(first * xs[1])


def augmented_while_held_two_deep(x):
    a = x * 1.0
    xs = [a, x]
    outer = [xs, 1.0]
    a *= x
    return np.sum(outer[0][0] * x)


CASES += [
    (augmented_after_an_item_was_read_out, (V[:3].copy(),)),
    (augmented_while_held_two_deep, (V[:3].copy(),)),
]


# v3[[0, -1, 0]] += w on an array whose kind the stages did not know (the rows of a matrix
# picked by a list): the write NumPy keeps was not asked for, and every write got the slot's
# cotangent
def write_twice_into_rows_picked_by_a_list(c):
    v1 = c[[0, 2, 1]]
    v3 = v1 * 1.0
    v3[[0, -1, 0]] += v1[[-1, 0, 0]] * 2.0
    return np.sum(v3)


CASES += [(write_twice_into_rows_picked_by_a_list, (SQ.copy(),))]


# v = x + 0.0 is a new array, but its tangent was dx itself: the update of v wrote into dx,
# and a later read of x's tangent saw it (forward mode)
def updated_copy_whose_tangent_was_the_argument_s(x):
    v = x + 0.0
    v[1] *= 2.0
    return np.sum(v * v) + np.sum(x * x[0])


def updated_sum_whose_tangent_was_the_argument_s(x):
    v = np.floor(x * 3.0) + x
    v[0] = x[1] * 2.0
    return np.sum(v * v) + np.sum(x * x[2])


CASES += [
    (updated_copy_whose_tangent_was_the_argument_s, (V[:3].copy(),)),
    (updated_sum_whose_tangent_was_the_argument_s, (V[:3].copy(),)),
]


# a += v on an array a dataclass instance was built with: the record sees the new values, but
# the rule read the old ones (the check looked for tuples, lists and dicts only)
def array_held_by_a_record_then_updated(x):
    a = np.exp(x)
    p = _Holder(a, 1.5)
    a *= x
    return np.sum(p.w) * p.c


CASES += [(array_held_by_a_record_then_updated, (V[:3].copy(),))]


def _add_into(out, v):
    out += v


# v1 = a + 3.0 is a new array whose tangent was da itself; the argument a, updated in place
# by a helper, had its tangent updated alongside, and v1's with it (forward mode; found by
# the fuzzer)
def argument_updated_after_a_name_shared_its_tangent(a):
    v1 = a + 3.0
    v2 = np.cumprod(v1 * 0.1 + 1.0)
    _add_into(a, v2 * 0.5)
    return np.sum(v1 + v1)


CASES += [(argument_updated_after_a_name_shared_its_tangent, (V[:3].copy(),))]


# A helper that returns the array it was given (or a view of it): the caller's update of
# the result is one of that array, which the caller's other name (or the argument) sees.
# Found by an independent program generator (a lost effect on the argument, and a wrong
# value where the helper was given a local array).
def _same_array(t):
    return t


def _first_row(t):
    return t[0]


def _doubled_by_name(t):
    out = t * 2.0
    out[0] = out[0] + 1.0
    return out


def updates_what_a_helper_returned_of_an_argument(x):
    y = _same_array(x)
    y *= 2.0
    return np.sum(y**2)


def updates_what_a_helper_returned_of_a_local(x):
    z = x * 1.0
    y = _same_array(z)
    y *= 2.0
    return np.sum(z**2)


def updates_a_row_a_helper_returned(m):
    z = m * 1.0
    row = _first_row(z)
    row += 1.0
    return np.sum(z**2)


def updates_a_new_array_a_helper_returned_by_name(x):
    y = _doubled_by_name(x)
    y += 1.0
    return np.sum(y * x)


# x = x binds nothing new: the update after it is one of the caller's array (the derived
# rules left the argument as it was)
def assigns_an_argument_to_itself_then_updates_it(x):
    x = x
    x *= 2.0
    return np.sum(x**2)


def assigns_an_argument_to_itself_on_a_branch(x, c):
    if c > 0.0:
        x = x
    x *= 2.0
    return np.sum(x**2)


@dataclasses.dataclass
class _Weights:
    w: np.ndarray

    def weights(self):
        return self.w


# a method returning a field, dict.get and next(iter(...)) give back an array they hold
def updates_what_a_method_returned(x):
    holder = _Weights(x * 1.0)
    w = holder.weights()
    w *= 2.0
    return np.sum(holder.w**2)


def updates_what_dict_get_returned(x):
    z = x * 1.0
    d = {"a": z}
    y = d.get("a")
    y *= 2.0
    return np.sum(z**2)


def updates_what_next_returned(x):
    z = x * 1.0
    y = next(iter([z]))
    y *= 2.0
    return np.sum(z**2)


CASES += [
    (updates_what_a_method_returned, (V[:3].copy(),)),
    (updates_what_dict_get_returned, (V[:3].copy(),)),
    (updates_what_next_returned, (V[:3].copy(),)),
    (updates_what_a_helper_returned_of_an_argument, (V[:3].copy(),)),
    (updates_what_a_helper_returned_of_a_local, (V[:3].copy(),)),
    (updates_a_row_a_helper_returned, (M.copy(),)),
    (updates_a_new_array_a_helper_returned_by_name, (V[:3].copy(),)),
    (assigns_an_argument_to_itself_then_updates_it, (V[:3].copy(),)),
    (assigns_an_argument_to_itself_on_a_branch, (V[:3].copy(), 0.5)),
]


# a loop's array copied, zeroed in place and rebuilt: its tape holds the object the loop
# went on changing, so the copy, computed again in the reverse loop from the taped array
# before the zeroing was undone, read zeros (the gradient in s was 0)
def copies_a_loop_array_then_zeroes_it(x, s):
    c = 2.0 * x
    for i in range(3):
        kept = c.copy()
        c[...] = 0.0
        c += kept * s
    return np.sum(c * np.array([0.3, -0.5, 0.9]))


CASES += [(copies_a_loop_array_then_zeroes_it, (V[:3].copy(), 1.1))]


# an array made in each iteration from values the loop does not change, then updated in
# place: the reverse loop made it once, before the loop, for every iteration (a wrong
# gradient, with no error)
def makes_an_array_in_a_loop_then_updates_it(x):
    t = 0.0
    for i in range(2):
        a = x * 2.0
        a[i] = a[i] ** 2
        t = t + np.sum(a * x)
    return t


CASES += [(makes_an_array_in_a_loop_then_updates_it, (V[:3].copy(),))]


# an array made and updated in place in each iteration, read after the update: the reverse
# loop restored its slots in the array the tape holds, so a pullback run a second time
# read the restored values (other cotangents each time; check_grads now runs it twice)
def reads_an_array_after_updating_it_in_a_loop(x, s):
    a = x * 2.0
    t = 0.0
    for i in range(3):
        b = a.copy()
        b[i] = b[i] * s
        t = t + np.sum(b**2)
        a = b * 1.0
    return t


CASES += [(reads_an_array_after_updating_it_in_a_loop, (V[:3].copy(), 0.8))]


# a list changed in place through a second name (append, +=, *=): the derived rules built a
# new list for that name, and the first name kept the old one (a wrong value and gradient)
def appends_to_a_list_through_a_second_name(x, a):
    l = [x, a[0]]
    m = l
    m.append(a[1] * x)
    return sum(l) * x


def extends_a_list_through_a_second_name(x, a):
    l = [x, a[0]]
    m = l
    m += [a[1] * x]
    return sum(l) * x


def repeats_a_list_through_a_second_name(x, a):
    l = [x, a[0]]
    m = l
    m *= 2
    return sum(l) * x


CASES += [
    (appends_to_a_list_through_a_second_name, (0.37, V[:3].copy())),
    (extends_a_list_through_a_second_name, (0.37, V[:3].copy())),
    (repeats_a_list_through_a_second_name, (0.37, V[:3].copy())),
]


# an array bound by a conditional expression, then updated in place: the expression's
# branch result was a temporary the name copied, and the reverse rule of exp read that
# temporary, which the update had changed (reverse mode only)
def updates_what_a_conditional_expression_made(a):
    v = np.exp(a) if a[0] > 0 else a * 2.0
    s = np.sum(v)
    v[0] = 1.0
    return s + np.sum(v * a)


CASES += [(updates_what_a_conditional_expression_made, (np.array([0.4, -0.8, 0.65]),))]


# np.clip with its lower bound above its upper: NumPy gives the upper bound everywhere
# (minimum(maximum(x, lo), hi)), whose derivative in the lower bound is 0 (it was 1 below it)
def clips_with_crossed_bounds(x, lo):
    return np.sum(np.clip(x, lo, lo * 0.5 - 1.0) ** 2) + np.sum(np.clip(x, -0.2, lo) * x)


CASES += [(clips_with_crossed_bounds, (V[:3].copy(), 0.7))]


# an array a loop makes and reads, updated in place after the loop (through the name the
# loop hands it on under): the tape held that very array, so the reverse loop read it as the
# later update left it (reverse mode only)
def updates_after_the_loop_an_array_the_loop_read(x):
    for i in range(2):
        v = np.ones(3)
        v[0] = 2.0
        v = v + x
        s = np.sum(v * x)
    v[1] = 5.0
    return s + np.sum(v)


CASES += [(updates_after_the_loop_an_array_the_loop_read, (0.3,))]


# an array updated in place, read by np.min, then carried into a loop that copies, zeroes
# and rebuilds it in place: the loop's name for it was the same array as np.min's residual,
# which the loop zeroed (a NaN gradient). The loop's name is a copy of its own
def rebuilds_in_a_loop_what_a_minimum_read(x):
    v = np.array([1.0, 2.0, 3.0]) * x
    v[1] -= np.min(v)
    for i in range(2):
        k = v.copy()
        v[...] = 0.0
        v += k * x
    return np.sum(v)


CASES += [(rebuilds_in_a_loop_what_a_minimum_read, (0.9,))]
