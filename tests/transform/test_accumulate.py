"""Cotangents of slices of one array added into one buffer (tangent_ast/transform/accumulate.py):
where the rewrite is made, where it must not be, and that every derivative stays right."""

import textwrap

import gast
import numpy as np
import pytest

import tangent_ast as ta
from tangent_ast import runtime
from tangent_ast.transform.accumulate import accumulate_slices
from tangent_ast.emit.emit import to_ast
from tangent_ast.vocabulary.kinds import FLOAT, INT, Kind, Tag
from tangent_ast.vocabulary.syntax import unparse
from tangent_ast.testing import check_grads, check_second_order

from ..test_golden import body


def bwd_of(f, *args, **options):
    source = ta.derive(f, "reverse", args=args, **options).source
    return body(source).split("_bwd(saved")[1]


def neighbours(x):
    return np.sum(x[1:] * x[:-1]) + np.sum(np.sin(x[2:]))


def rows_and_columns(a, k):
    return np.sum(a[0] * a[1:, 0]) + np.sum(a[k] ** 2) + np.sum(a[:, 1:] * a[:, :-1])


def repeated_indices(x):
    # x[[0, 0, 1]] reads x[0] twice: its cotangent is added with np.add.at, never with +=
    return np.sum(x[[0, 0, 1]] ** 2) + np.sum(x[1:] * 3.0)


def complex_parts(z):
    return np.real(np.sum(z[1:] * np.conj(z[:-1])))


def through_complex(x):
    w = np.exp(1j * x[1:])
    return np.abs(np.sum(w * x[:-1]))


def float32_and_float64(x):
    return np.sum(x[1:] ** 2) + np.sum(x[:-1] * np.float64(2.0))


def test_the_first_slice_is_the_buffer_and_the_others_are_added_in_place():
    x = np.linspace(-1.0, 1.0, 7)
    bwd = bwd_of(neighbours, x)
    assert "ct_x = runtime.getitem_vjp(" in bwd
    assert "ct_x[1:] += " in bwd and "ct_x[:-1] += " in bwd
    assert bwd.count("getitem_vjp") == 1
    check_grads(neighbours, (x,))
    check_second_order(neighbours, (x,))


def test_items_rows_and_columns_by_ints_and_int_names():
    a = np.random.default_rng(0).normal(size=(4, 3))
    bwd = bwd_of(rows_and_columns, a, 2)
    assert "ct_a[k] += " in bwd and "ct_a[1:, 0] += " in bwd and "ct_a[0] += " in bwd
    check_grads(rows_and_columns, (a, 2))
    check_second_order(rows_and_columns, (a, 2), wrt=0)


def test_repeated_indices_keep_np_add_at():
    x = np.linspace(0.5, 2.0, 5)
    bwd = bwd_of(repeated_indices, x)
    assert "[[0, 0, 1]] +=" not in bwd and "[0, 0, 1]" in bwd
    check_grads(repeated_indices, (x,))
    want = 3.0 * np.ones(5)
    want[0] = 3.0 * 0.0 + 4.0 * x[0]  # x[0] is read twice, x[1:] * 3 does not reach it
    want[1] += 2.0 * x[1]
    np.testing.assert_allclose(ta.grad(repeated_indices)(x), want)


def test_complex_arrays_and_complex_cotangents_keep_their_sums():
    z = np.exp(1j * np.linspace(0.0, 1.0, 5))
    assert "+=" not in bwd_of(complex_parts, z)
    check_grads(complex_parts, (z,))
    x = np.linspace(-1.0, 1.0, 6)
    check_grads(through_complex, (x,))  # real x: its cotangents are real parts, added in place


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtypes_of_the_buffer(dtype):
    x = np.linspace(-1.0, 1.0, 6).astype(dtype)
    got = ta.grad(float32_and_float64)(x)
    want = np.zeros(6)
    want[1:] += 2.0 * x[1:].astype(np.float64)
    want[:-1] += 2.0
    np.testing.assert_allclose(got, want, rtol=1e-6 if dtype is np.float32 else 1e-12)


def test_jacobians_of_a_function_whose_rule_adds_in_place():
    def pairs(x):
        return x[1:] * x[:-1]

    x = np.linspace(-1.0, 1.0, 5)
    want = np.zeros((4, 5))
    want[np.arange(4), np.arange(4)] = x[1:]
    want[np.arange(4), np.arange(1, 5)] = x[:-1]
    np.testing.assert_allclose(ta.jacrev(pairs)(x), want)
    np.testing.assert_allclose(ta.jacfwd(pairs)(x), want)


class _Namespace:
    objects = {"runtime": runtime, "np": np}


KINDS = {"x": Kind(Tag.ARRAY, 1, "f"), "z": Kind(Tag.ARRAY, 1, "c"), "k": INT, "f": FLOAT}


def rewritten(source):
    fn = gast.parse(textwrap.dedent(source)).body[0]
    accumulate_slices(fn, KINDS, _Namespace())
    return unparse(to_ast(fn)).split("\n", 1)[1]


@pytest.mark.parametrize(
    "source",
    [
        # the buffer has a second name: updating it in place would change y
        """\
        def f_bwd(a, b):
            ct_x = runtime.getitem_vjp(a, x, slice(1, None, None))
            y = ct_x
            ct_x = ct_x + runtime.getitem_vjp(b, x, slice(None, -1, None))
            return ct_x, y
        """,
        # the sum's new name is read in between (a value of an earlier iteration)
        """\
        def f_bwd(a, b):
            for i in range(3):
                ct_x = runtime.getitem_vjp(a, x, slice(1, None, None))
                c = ct_x_1 * 2.0
                ct_x_1 = ct_x + runtime.getitem_vjp(b, x, slice(None, -1, None))
            return ct_x_1
        """,
        # an index that is not basic (f is a float; an array of indices may repeat one)
        """\
        def f_bwd(a, b, idx):
            ct_x = runtime.getitem_vjp(a, x, slice(1, None, None))
            ct_x = ct_x + runtime.getitem_vjp(b, x, idx)
            ct_x = ct_x + runtime.getitem_vjp(b, x, f)
            return ct_x
        """,
        # a complex array, a difference
        """\
        def f_bwd(a, b):
            ct_z = runtime.getitem_vjp(a, z, 0)
            ct_z = ct_z + runtime.getitem_vjp(b, z, 1)
            ct_y = runtime.getitem_vjp(a, x, 0)
            ct_y = ct_y - runtime.getitem_vjp(b, x, 1)
            return ct_z, ct_y
        """,
    ],
)
def test_sums_that_must_stay_sums(source):
    assert "+=" not in rewritten(source)


def test_a_term_of_another_form_is_added_into_the_whole_buffer():
    """Not a slice of x: a term of x's cotangent all the same, of x's shape (or broadcast to
    it), added into the whole buffer; never into a part named by another array's index."""
    got = rewritten("""\
        def f_bwd(a, b, c):
            ct_x = runtime.getitem_vjp(a, x, slice(1, None, None))
            ct_x = ct_x + runtime.getitem_vjp(b, w, slice(None, -1, None))
            ct_x = ct_x + c * 2.0
            return ct_x
        """)
    assert textwrap.dedent(got) == textwrap.dedent("""\
            ct_x = runtime.getitem_vjp(a, x, slice(1, None, None))
            ct_x += runtime.getitem_vjp(b, w, slice(None, -1, None))
            ct_x += c * 2.0
            return ct_x""")


def test_a_chain_of_sums_takes_the_last_name():
    got = rewritten("""\
        def f_bwd(a, b, c):
            ct_x = runtime.getitem_vjp(a, x, slice(1, None, None))
            ct_x_1 = ct_x + runtime.getitem_vjp(b, x, k)
            ct_x_2 = runtime.getitem_vjp(c, x, (slice(None, -1, None),)) + ct_x_1
            return ct_x_2
        """)
    assert textwrap.dedent(got) == textwrap.dedent("""\
            ct_x_2 = runtime.getitem_vjp(a, x, slice(1, None, None))
            ct_x_2[k] += b
            ct_x_2[:-1,] += c
            return ct_x_2""")


def neighbours_in_a_loop(x):
    s = 0.0
    for i in range(x.shape[0] - 1):
        s = s + x[i] * x[i + 1]
    return s


def recurrence_over_rows(W, h0, xs):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t])
    return np.sum(h**2)


def rows_in_a_loop(xs):
    out = xs[0] * 1.0
    for t in range(1, xs.shape[0]):
        out = out * xs[t]
    return out


def test_a_loop_adds_into_the_cotangent_itself():
    """No buffer beside the cotangent: zeros, the loop adds into them, nothing to sum."""
    x = np.linspace(-1.0, 1.0, 6)
    bwd = bwd_of(neighbours_in_a_loop, x)
    assert "buffer" not in bwd and bwd.count("np.zeros_like(x)") == 1
    assert "ct_x[i] += " in bwd
    check_grads(neighbours_in_a_loop, (x,))
    check_second_order(neighbours_in_a_loop, (x,))
    rng = np.random.default_rng(1)
    W, xs = 0.5 * rng.normal(size=(3, 3)), rng.normal(size=(4, 3))
    bwd = bwd_of(recurrence_over_rows, W, np.zeros(3), xs, wrt=("W", "xs"))
    assert "buffer" not in bwd and "ct_xs[t] += " in bwd
    check_grads(recurrence_over_rows, (W, np.zeros(3), xs), wrt=(0, 2))
    check_second_order(recurrence_over_rows, (W, np.zeros(3), xs), wrt=(0, 2))
    xs = rng.normal(size=(4, 3))
    jacobian = ta.jacrev(rows_in_a_loop)(xs)
    np.testing.assert_allclose(jacobian, ta.jacfwd(rows_in_a_loop)(xs), rtol=1e-12)
    np.testing.assert_allclose(jacobian[:, 2, 1], np.prod(xs[[0, 1, 3], 1]) * (np.arange(3) == 1))


def chain_energy(x, k):
    return k * np.sum(x**4) + np.sum(x[1:] * x[:-1])


def test_the_other_terms_of_a_sliced_array_are_added_in_place_too():
    """ct_x = getitem_vjp(...); ct_x[1:] += ...; ct_x += (the x ** 4 term): one array,
    assigned once, so forward over reverse (hessian) takes it as a new array updated."""
    x = np.linspace(-1.0, 1.0, 5)
    bwd = bwd_of(chain_energy, x, 2.0)
    assert "ct_x[1:] += " in bwd and "ct_x += " in bwd and "ct_x = ct_x" not in bwd
    check_grads(chain_energy, (x, 2.0))
    check_second_order(chain_energy, (x, 2.0), wrt=0)
    want = np.diag(24.0 * x**2) + np.eye(5, k=1) + np.eye(5, k=-1)
    np.testing.assert_allclose(ta.hessian(chain_energy, wrt=0)(x, 2.0), want, atol=1e-12)
