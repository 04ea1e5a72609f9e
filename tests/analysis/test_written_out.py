"""Forms written out once kinds are known: np.r_, np.c_ and np.gradient of n-d arrays.

Every form is checked against NumPy itself (the rule's value, shape and dtype are those of
the function run by Python) and its derivatives in both modes, both routes; the forms a
kind does not decide are left as written and refused where a derivative goes through them.
"""

import linecache
import types

import numpy as np
import pytest

import tangent_ast as ta
from tangent_ast.errors import TangentAstError
from tangent_ast.testing import check_grads

from ..test_golden import body

rng = np.random.default_rng(0)
V = rng.standard_normal(3)
M = rng.standard_normal((3, 2))
C = rng.standard_normal((3, 2))
T = rng.standard_normal((2, 3, 4))

# (expression of x, the argument): every item form and directive NumPy's concatenators take
FORMS = [
    ("np.r_[x, x]", M),
    ("np.r_[C] * x", M),
    ("np.r_[x, C, x]", M),
    ("np.r_[C[:, 0], x, 1:4]", V),
    ("np.r_[x[0], 2.0, x]", V),
    ("np.r_[x, 0:1:4j] * 2", V),
    ("np.r_[:2, x]", V),
    ("np.r_[x, [1.0, 2.0]]", V),
    ("np.c_[x, x]", V),
    ("np.c_[x, C, x]", M),
    ("np.c_[x, V, x]", V),
    ("np.c_[x[:1], 3.0]", V),
    ("np.c_[x, 1:4]", V),
    ("np.r_['0,2', x, V]", V),
    ("np.r_['0,2,0', x, V]", V),
    ("np.r_['-1', x, C]", M),
    ("np.r_['1,3,-1', x, M]", M),
    ("np.r_['0,3,1', x, V]", V),
    ("np.c_['0', x, x]", M),
    ("np.gradient(x)", M.T @ M + 1.0),
    ("np.gradient(x, 0.5)[2] * np.gradient(x, 1.0, 2.0, 3.0)[1]", T),
    ("np.gradient(x, axis=(1, 0))[0]", T[0]),
    ("np.gradient(x, axis=(-1, 0), edge_order=1)[1]", T),
]


def _function(expression):
    """``f(x) = <expression>``, defined in a file of its own (so its source can be read)."""
    source = f"def f(x):\n    return {expression}\n"
    filename = f"<written out {abs(hash(expression))}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"np": np, "C": C, "V": V, "M": M}
    exec(compile(source, filename, "exec"), namespace)
    return namespace["f"]


@pytest.mark.parametrize("expression, x", FORMS, ids=[e for e, _ in FORMS])
def test_each_form_is_numpys_and_differentiates(expression, x):
    f = _function(expression)
    expected = f(x)
    out, _ = ta.vjp(f, x)
    for got, want in zip(*(v if isinstance(v, tuple) else (v,) for v in (out, expected))):
        assert got.shape == want.shape and got.dtype == want.dtype
        assert np.array_equal(got, want)
    check_grads(f, (x,))
    check_grads(f, (x,), route="transpose", modes=("reverse",))


def joined(x, c):
    return np.sum(np.r_[x, c, 1:3] ** 2)


def test_the_written_out_form_reads_as_a_person_would_write_it():
    source = ta.derive(joined, "reverse", wrt=("x", "c"), args=(np.ones(2), 0.5)).source
    assert body(source) == (
        "def joined_fwd(x, c):\n"
        "    tmp_parts = [x, np.atleast_1d(c), np.arange(1, 3)]\n"
        "    tmp = np.concatenate(tmp_parts)\n"
        "    out = np.sum(tmp ** 2)\n"
        "    return out, (c, tmp_parts, tmp)\n"
        "\n"
        "\n"
        "def joined_bwd(saved, ct_out):\n"
        "    c, tmp_parts, tmp = saved\n"
        "    ct_tmp_parts = runtime.concatenate_vjp(ct_out * 2 * tmp, tmp_parts)\n"
        "    ct_x = ct_tmp_parts[0]\n"
        "    ct_c = np.reshape(ct_tmp_parts[1], np.shape(c))\n"
        "    return ct_x, ct_c\n"
    )


def columns_of_anything(x, y):
    return np.sum(np.c_[x, y] ** 2)


def test_a_column_of_a_value_of_unknown_rank_is_refused():
    """np.c_ makes a vector a column and leaves a matrix as it is: of a value whose rank is
    not known it is left as written, and its derivative refused."""
    with pytest.raises(TangentAstError, match=r"np.r_\[...\] / np.c_\[...\]"):
        ta.grad(columns_of_anything)(V, types.SimpleNamespace())


def matrix_directive(x):
    return np.r_["r", x, x]


def test_a_matrix_directive_is_refused():
    with pytest.raises(TangentAstError, match="directive 'r'"):
        ta.grad(lambda x: np.sum(matrix_directive(x)))(V)
