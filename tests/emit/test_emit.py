"""Printing generated code: the text means what the tree means.

A number constant is one node of the tree and may be several tokens of the text (``-2.0``
is a minus and a number): printed as it is, ``Constant(-2.0) ** 2`` read back as
``-(2.0 ** 2)``, a wrong derivative with no error."""

import ast
import math

import gast
import pytest

import tangent_ast as ta
from tangent_ast.emit import emit
from tangent_ast.vocabulary.stdlib_ast import as_ast
from tangent_ast.vocabulary.syntax import unparse
from tangent_ast.testing import check_grads

from ..corpus import trust

NUMBERS = [
    -2.0,
    -2,
    -0.0,
    -math.inf,
    math.nan,
    -1e-300,
    complex(-1, 2),
    complex(1, -2),
    -2j,
    complex(0, -2),
    2j,
    3,
]


def _places(c):
    """Expressions holding the constant ``c`` where an operator binds tighter than a minus
    (``**``, an attribute, a unary operator), and where none does."""
    x = gast.Name("x", gast.Load(), None, None)
    two = gast.Constant(2, None)
    return [
        gast.BinOp(c, gast.Pow(), two),
        gast.BinOp(two, gast.Pow(), c),
        gast.BinOp(x, gast.Mult(), gast.BinOp(c, gast.Pow(), two)),
        gast.BinOp(c, gast.Mult(), x),
        gast.BinOp(x, gast.Sub(), c),
        gast.UnaryOp(gast.USub(), c),
        gast.Attribute(c, "real", gast.Load()),
        gast.Call(gast.Name("abs", gast.Load(), None, None), [c], []),
        gast.Compare(c, [gast.Lt()], [x]),
        c,
    ]


def _value(code):
    """What evaluating ``code`` gives at ``x = 0.5``: its value, or the class of its error."""
    try:
        return eval(code, {"x": 0.5})
    except Exception as error:
        return type(error)


def _same_value(a, b, signed_zeros):
    if isinstance(a, (float, complex)) and isinstance(b, (float, complex)):
        if signed_zeros:
            return repr(a) == repr(b)  # -0.0 is not 0.0, a NaN is a NaN
        return a == b or repr(a) == repr(b)
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("number", NUMBERS, ids=repr)
def test_a_printed_constant_means_what_the_tree_means(number):
    """To the bit, but for the sign of a zero part of a complex number: Python writes
    complex(0.0, -2.0) as -2j, which is complex(-0.0, -2.0), and has no literal for it."""
    for expr in _places(gast.Constant(number, None)):
        tree = ast.fix_missing_locations(ast.Expression(as_ast(expr)))
        meant = _value(compile(tree, "<tree>", "eval"))
        text = unparse(emit.to_ast(expr))
        assert _same_value(_value(text), meant, type(number) is not complex), (text, meant)


def test_negative_constants_are_parenthesised_as_a_person_writes_them():
    expr = gast.parse("x * c ** 2 + c.real + x ** c - c * x", mode="eval").body
    for n in gast.walk(expr):
        for field, value in gast.iter_fields(n):
            if isinstance(value, gast.Name) and value.id == "c":
                setattr(n, field, gast.Constant(-2.0, None))
    assert unparse(emit.to_ast(expr)) == "x * (-2.0) ** 2 + (-2.0).real + x ** (-2.0) - -2.0 * x"


def test_squared_negative_constant_in_every_mode():
    f = trust.squared_negative_constant
    assert ta.grad(f)(1.0) == 4.0
    assert ta.jvp(f, (1.0,), (1.0,)) == (4.0, 4.0)
    out, pullback = ta.vjp(f, 1.0)
    assert (out, pullback(1.0)) == (4.0, 4.0)
    source = ta.show(f, stage="module", args=(1.0,))
    assert "(-2.0) ** 2" in source and "-2.0 ** 2" not in source.replace("(-2.0) ** 2", "")


def test_arctan2_of_a_negative_constant():
    a = 0.3
    assert ta.grad(trust.arctan2_of_a_negative_constant)(a) == pytest.approx(
        0.995 / (a**2 + 0.995**2), rel=1e-14
    )


@pytest.mark.parametrize("route", ["direct", "transpose"])
@pytest.mark.parametrize(
    "fn, args", trust.NEGATIVE_CONSTANTS, ids=[f.__name__ for f, _ in trust.NEGATIVE_CONSTANTS]
)
def test_negative_constants_on_both_routes(fn, args, route):
    check_grads(fn, args, route=route)


# --- the guard: every emitted module reads back as the trees it was printed from


def _derive_fresh(f, tmp_path, args=(0.3,)):
    return ta.derive(f, "forward", args=args, cache=tmp_path)


def test_a_constant_printed_as_it_is_is_caught(monkeypatch, tmp_path):
    monkeypatch.setattr(emit, "_spelled", lambda constant: constant)  # the printer's old bug
    with pytest.raises(ta.InternalError) as caught:
        _derive_fresh(trust.squared_negative_constant, tmp_path)
    message = str(caught.value)
    assert "squared_negative_constant" in message and "does not read back" in message
    assert "`tmp = -2.0 ** 2" in message and "trust.py:" in message


def test_a_printer_that_drops_parentheses_is_caught(monkeypatch, tmp_path):
    base = vars(ast)["_Unparser"]

    class Careless(base):
        def require_parens(self, precedence, node):
            return self.delimit_if("(", ")", False)

    monkeypatch.setattr(emit, "unparse", lambda node: Careless().visit(node))
    with pytest.raises(ta.InternalError, match="arctan2_of_a_negative_constant") as caught:
        _derive_fresh(trust.arctan2_of_a_negative_constant, tmp_path)
    assert "a ** 2 + -0.995 ** 2" in str(caught.value)  # the line as the careless printer wrote it


def test_a_module_that_does_not_parse_is_caught():
    provenance = emit.Provenance(
        "f", "m", "m.py", 3, "-", "-", "float", "forward", ("x",), "0", route="direct"
    )
    with pytest.raises(ta.InternalError, match="line 2 does not parse"):
        emit.check_reads_back('"""doc"""\ndef f_jvp(x, dx:\n    return x\n', [], provenance)


def test_a_missing_statement_is_caught():
    provenance = emit.Provenance(
        "f", "m", "m.py", 3, "-", "-", "float", "forward", ("x",), "0", route="direct"
    )
    tree = ast.parse("def f_jvp(x, dx):\n    y = x\n    return y, dx\n").body[0]
    with pytest.raises(ta.InternalError, match=r"in f_jvp, `return \(y, dx\)` is missing"):
        emit.check_reads_back("def f_jvp(x, dx):\n    y = x\n", [tree], provenance)
