"""The float-literal rewrite: which literals it changes, and that the values stay the same
to the bit (Python floats, NumPy float scalars, batches of them, complex values)."""

import math
import textwrap

import gast
import numpy as np
import pytest

import tangent_ast as ta
from tangent_ast.emit.emit import to_ast
from tangent_ast.optimize.float_literals import float_names, write_float_literals
from tangent_ast.vocabulary.syntax import unparse

# (body of f(x, n, a), the names given as floats, the body after the rewrite)
CASES = [
    # a float parameter meets int literals in every position
    ("y = 2 * x + 1\nreturn 3 - y / 4", {"x"}, "y = 2.0 * x + 1.0\nreturn 3.0 - y / 4.0"),
    # a name is a float when each of its assignments is, a running sum included
    ("s = x * 2\ns = s + 1\nreturn s", {"x"}, "s = x * 2.0\ns = s + 1.0\nreturn s"),
    ("s = 2 * x\ns += 1\nreturn s", {"x"}, "s = 2.0 * x\ns += 1.0\nreturn s"),
    # one assignment of something else, and the name is not known
    ("s = x\nif n:\n    s = a\nreturn 2 * s", {"x"}, None),
    # math functions return floats; a local name shadows nothing global
    ("return 1 - math.cos(n) * 2", set(), "return 1.0 - math.cos(n) * 2.0"),
    ("math = a\nreturn 1 - math.cos(n)", set(), None),
    # ints, arrays and unknown values keep their literals
    ("return 2 * n + x", {"x"}, None),
    ("return 2 * a", set(), None),
    ("return 2 * a * x", {"x"}, None),
    ("return 2 * x", set(), None),
    # powers (float ** float may be complex), floor division, modulo, bools, huge ints
    ("return x ** 2 + x // 2 + x % 2", {"x"}, None),
    ("return x * True", {"x"}, None),
    ("return x * 36028797018963969", {"x"}, None),
    # unpacked names and loop targets are not known unless their kind is
    ("b, c = n\nreturn 2 * b", set(), None),
    ("for i in n:\n    x = 2 * i\nreturn x", set(), None),
    ("b, c = n\nreturn 2 * b", {"b"}, "b, c = n\nreturn 2.0 * b"),
    # an item of a float is not known
    ("return 2 * x[0]", {"x"}, None),
]


def rewritten(body, floats):
    source = "def f(x, n, a):\n" + textwrap.indent(body, "    ")
    fn = gast.parse(source).body[0]
    write_float_literals(fn, floats, namespace={"math": math})
    return unparse(to_ast(fn)).split("\n", 1)[1]


@pytest.mark.parametrize(("body", "floats", "expected"), CASES)
def test_literals_are_floats_exactly_where_they_meet_a_float(body, floats, expected):
    assert rewritten(body, floats) == textwrap.indent(expected or body, "    ")


def test_a_float_is_what_the_primal_function_makes_of_float_parameters():
    fn = gast.parse(
        "def f(x, m):\n"
        "    a = math.sin(x) * 2\n"
        "    k = np.sum(m)\n"  # a float by kind inference, an int for a bool array
        "    b = a + k\n"
        "    c = x if a > 0 else 0\n"
        "    return a\n"
    ).body[0]
    assert float_names(fn, {"x"}, {"math": math, "np": np}) == {"x", "a"}


def count_true(x, mask):
    k = np.sum(mask)  # np.int64 for a bool array, though kind inference calls it a float
    return x[k - 1] * 2.0


def shifted(x, n):
    s = np.sum(n)
    return x * (s + 1)


def test_a_reduction_of_ints_keeps_its_int_literals():
    x, mask = np.arange(5.0), np.array([True, True, False, True])
    assert ta.grad(count_true)(x, mask).tolist() == [0.0, 0.0, 2.0, 0.0, 0.0]
    n = np.array([2**53 + 1])  # s + 1.0 would round
    assert ta.value_and_grad(shifted)(1.0, n) == (shifted(1.0, n), shifted(1.0, n))


SCALAR_CODE = """\
y = 2 * x * (1 - x * x) / 3
z = 7 - 5 * y * y + 1 / (2 * x)
z += 9007199254740993 * 0 + 3
return 4 * z - y * 6
"""


@pytest.mark.parametrize(
    "x",
    [
        0.1,
        -2.5,
        1e-310,  # subnormal
        1e300,  # products overflow
        np.float32(0.7),
        np.float64(-0.3),
        np.array([0.2, -1.5, 3.0]),  # a batch of directions
        np.array([0.2, 1.5], dtype=np.float32),
        0.5 + 0.25j,  # a complex value where a float was expected
    ],
    ids=repr,
)
def test_the_values_are_the_same_to_the_bit(x):
    before = textwrap.indent(SCALAR_CODE, "    ")
    after = rewritten(SCALAR_CODE, {"x"})
    assert after != before and "2.0 * x" in after
    results = []
    for body in (before, after):
        namespace = {}
        exec("def f(x, n, a):\n" + body, namespace)
        with np.errstate(all="ignore"):
            results.append(namespace["f"](x, 0, 0))
    first, second = results
    assert type(first) is type(second)
    assert np.asarray(first).dtype == np.asarray(second).dtype
    assert np.asarray(first).tobytes() == np.asarray(second).tobytes()
