"""The SSA verifier runs after the SSA stage on every corpus function."""

import pytest

from tangent_ast.pipeline import front
from tangent_ast.ssa import verify

from .corpus import calls, control_flow, jumps, straight_line

FUNCTIONS = sorted(
    {c.fn for c in straight_line.CASES + calls.CASES + control_flow.CASES + jumps.CASES},
    key=lambda f: f.__name__,
)


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_ssa_invariants(fn):
    f = front(fn, None)
    verify(f.function, f.ssa_info.carried)


def test_verifier_rejects_a_statement_after_an_if_that_may_break():
    import gast

    source = (
        "def f(x):\n"
        "    for i in range(3):\n"
        "        if i > 0:\n"
        "            if x > 1.0:\n"
        "                break\n"
        "        x = x * 2.0\n"
        "    return x\n"
    )
    with pytest.raises(AssertionError, match="follows an if that may break"):
        verify(gast.parse(source).body[0])


def test_verifier_rejects_double_assignment():
    import gast
    tree = gast.parse("def f(x):\n    y = x\n    y = y * 2\n    return y\n").body[0]
    with pytest.raises(AssertionError, match="assigned twice"):
        verify(tree)
