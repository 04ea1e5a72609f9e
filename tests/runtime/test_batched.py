"""A batch of tangents behaves as each of its tangents would, operation by operation: every
operation below is run on a batch and on each tangent alone, and the results compared.
Operations that cannot take a batch raise BatchingError, never a number."""

import numpy as np
import pytest

from tangent_ast.runtime import getitem_vjp, unbroadcast
from tangent_ast.runtime.batched import Batched, BatchingError

rng = np.random.default_rng(3)
N = 3  # batch size equal to a value's length on purpose: a misplaced axis would broadcast
A = rng.standard_normal((3, 3))
B = rng.standard_normal((3, 4))
V = rng.standard_normal(3)
S = 0.7


def _setitem(t):
    t = t.copy()
    t[1] = 2.0 * t[0]
    return t


def _setitem_rows(t):
    t = t.copy()
    t[[0, 2], 1:] = 0.0
    return t


def _read_then_zero(t):  # a reverse sweep reads an element, then zeroes its slot
    t = t.copy()
    first = t[0]
    t[0] = 0.0
    return first * 2.0 + t


# (name, shape of one tangent, operation)
OPERATIONS = [
    ("times value", (3,), lambda t: np.cos(V) * t),
    ("scalar tangent times vector", (), lambda t: t * V),
    ("scalar tangent plus matrix", (), lambda t: A + t),
    ("vector plus matrix", (3,), lambda t: t + A),
    ("matrix times vector", (3, 3), lambda t: t * V),
    ("python scalar", (3,), lambda t: 2.0 * t - 1.0),
    ("negate and power", (3,), lambda t: -(t**2)),
    ("where", (3,), lambda t: np.where(V > 0, t, 0.0)),
    ("sum", (3, 3), lambda t: np.sum(t)),
    ("sum axis", (3, 4), lambda t: np.sum(t, axis=0)),
    ("sum negative axis keepdims", (3, 4), lambda t: t.sum(axis=-1, keepdims=True)),
    ("mean axis tuple", (3, 4), lambda t: np.mean(t, axis=(0, 1))),
    ("add reduce", (3, 4), lambda t: np.add.reduce(t, axis=1)),
    ("cumsum", (3, 4), lambda t: np.cumsum(t, axis=1)),
    ("cumsum flat", (3, 4), lambda t: np.cumsum(t)),
    ("diff", (4,), lambda t: np.diff(t)),
    ("slices", (5,), lambda t: t[1:] - t[:-1]),
    ("element", (5,), lambda t: t[2]),
    ("row and column", (3, 4), lambda t: t[1] + t[:, 1].sum()),
    ("fancy index", (5,), lambda t: t[[0, 0, 3]]),
    ("two fancy indices apart", (3, 4, 5), lambda t: t[[0, 1], :, [2, 3]]),
    ("boolean mask", (3,), lambda t: t[V > 0]),
    ("ellipsis and newaxis", (3, 4), lambda t: t[..., None, 1]),
    ("setitem", (3,), _setitem),
    ("setitem fancy", (3, 4), _setitem_rows),
    ("read then zero", (3,), _read_then_zero),
    ("matmul left", (3,), lambda t: t @ B),
    ("matmul right", (3,), lambda t: A @ t),
    ("matmul matrices", (3, 3), lambda t: A @ t @ B),
    ("matmul vectors", (3,), lambda t: t @ V),
    ("matmul stack of matrices", (3,), lambda t: t @ np.stack([B, B])),
    ("dot left", (3,), lambda t: np.dot(t, B)),
    ("dot right", (3,), lambda t: np.dot(A, t)),
    ("dot matrix right", (3, 4), lambda t: np.dot(A, t)),
    ("dot scalar", (), lambda t: np.dot(t, V)),
    ("method dot", (3, 3), lambda t: t.dot(V)),
    ("outer", (3,), lambda t: np.outer(t, V)),
    ("einsum", (3, 4), lambda t: np.einsum("ij,i->j", t, V)),
    ("einsum implicit", (3, 4), lambda t: np.einsum("ij,ik", A, t)),
    ("tensordot", (3, 4), lambda t: np.tensordot(A, t, axes=1)),
    ("reshape", (3, 4), lambda t: t.reshape(2, -1)),
    ("reshape tuple", (3, 4), lambda t: np.reshape(t, (12,))),
    ("ravel", (3, 4), lambda t: t.T.ravel()),
    ("transpose axes", (2, 3, 4), lambda t: np.transpose(t, (2, 0, 1))),
    ("T", (3, 4), lambda t: t.T),
    ("swapaxes", (2, 3, 4), lambda t: np.swapaxes(t, 0, -1)),
    ("moveaxis", (2, 3, 4), lambda t: np.moveaxis(t, 0, 2)),
    ("expand dims", (3,), lambda t: np.expand_dims(t, -1)),
    ("squeeze", (3, 1), lambda t: np.squeeze(t)),
    ("concatenate", (3,), lambda t: np.concatenate([t, V, t])),
    ("concatenate axis", (3, 4), lambda t: np.concatenate([t, B], axis=1)),
    ("stack", (3,), lambda t: np.stack([t, V], axis=1)),
    ("broadcast_to", (3,), lambda t: np.broadcast_to(t, (2, 3))),
    ("zeros_like with shape", (3,), lambda t: np.zeros_like(t, shape=(2, 2)) + 1.0),
    ("full_like", (3,), lambda t: np.full_like(t, 2.0)),
    ("copy", (3,), lambda t: np.copy(t) * 2),
    ("flip", (3, 4), lambda t: np.flip(t, axis=1)),
    ("take", (5,), lambda t: np.take(t, [4, 0])),
    ("take axis", (3, 4), lambda t: np.take(t, [1], axis=1)),
    ("trace", (3, 3), lambda t: np.trace(t)),
    ("diagonal", (3, 3), lambda t: np.diagonal(t, 1)),
    ("real of complex", (3,), lambda t: np.real(t * (1 + 2j))),
    ("imag", (3,), lambda t: (t * 1j).imag),
    ("unstack (one by one)", (2, 3), lambda t: np.unstack(t)[1]),
    ("sort (one by one)", (4,), lambda t: np.sort(t)),
    ("linalg solve (one by one)", (3,), lambda t: np.linalg.solve(A + 3 * np.eye(3), t)),
    ("add.at", (5,), lambda t: _add_at(t)),
    ("unbroadcast", (3, 4), lambda t: unbroadcast(t, np.zeros(4))),
    ("unbroadcast to a float", (3,), lambda t: unbroadcast(t, 1.0)),
    ("getitem_vjp", (2,), lambda t: getitem_vjp(t, np.zeros(5), slice(1, 3))),
    ("getitem_vjp repeated", (3,), lambda t: getitem_vjp(t, np.zeros(5), [0, 0, 2])),
    ("ufunc out", (3,), lambda t: np.multiply(t, 2.0, out=t.copy())),
    ("divmod (two results)", (3,), lambda t: np.divmod(t, 0.3)[1]),
]


def _add_at(t):
    out = np.zeros_like(t)
    np.add.at(out, [0, 0, 1], t[:3])
    return out


@pytest.mark.parametrize("shape, operation", [o[1:] for o in OPERATIONS], ids=[o[0] for o in OPERATIONS])
def test_an_operation_on_a_batch_is_the_operation_on_each_tangent(shape, operation):
    stack = rng.standard_normal((N, *shape))
    expected = np.stack([np.asarray(operation(stack[k].copy())) for k in range(N)])
    result = operation(Batched(stack.copy()))
    assert isinstance(result, Batched)
    assert result.shape == expected.shape[1:]
    np.testing.assert_allclose(result.stack, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "operation",
    [
        np.asarray,
        float,
        bool,
        len,
        list,
        lambda t: np.full_like(V, t),  # fill value is a batch: one array cannot hold it
        lambda t: np.zeros(3).__setitem__(slice(None), t),
        lambda t: np.add(V, t, out=np.zeros(3)),
        lambda t: np.add.at(np.zeros(3), [0, 1, 2], t),
        lambda t: np.cumsum(t, 0, None, np.zeros(3)),  # out given by position
        lambda t: np.array([t, 1.0]),
    ],
)
def test_what_cannot_take_a_batch_raises(operation):
    with pytest.raises(BatchingError):
        operation(Batched(rng.standard_normal((N, 3))))


def test_a_batch_reports_the_shape_of_one_tangent():
    t = Batched(np.zeros((5, 3, 4)))
    assert (t.shape, t.ndim, t.size, np.shape(t), np.ndim(t), np.size(t)) == (
        (3, 4), 2, 12, (3, 4), 2, 12,
    )


def test_batches_of_different_sizes_do_not_mix():
    with pytest.raises(BatchingError):
        np.concatenate([Batched(np.zeros((2, 3))), Batched(np.zeros((3, 3)))])


SHAPES = [(), (3,), (1, 3), (3, 1), (3, 3), (2, 3, 3)]
BINARY = [np.add, np.subtract, np.multiply, np.divide, np.maximum, np.arctan2]


@pytest.mark.parametrize("ufunc", BINARY, ids=lambda u: u.__name__)
def test_binary_ufuncs_line_up_the_value_axes_for_every_pair_of_shapes(ufunc):
    for tangent_shape in SHAPES:
        for other_shape in SHAPES:
            other = rng.uniform(0.5, 1.5, other_shape)
            stack = rng.uniform(0.5, 1.5, (N, *tangent_shape))
            for op in (lambda t: ufunc(t, other), lambda t: ufunc(other, t)):
                expected = np.stack([op(stack[k]) for k in range(N)])
                np.testing.assert_allclose(op(Batched(stack)).stack, expected, rtol=1e-13)
