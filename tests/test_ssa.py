"""The SSA verifier runs after the SSA stage on every corpus function."""

import pytest

from tangent_ast.pipeline import front
from tangent_ast.ssa import verify

from .corpus import calls, control_flow, straight_line

FUNCTIONS = sorted({c.fn for c in straight_line.CASES + calls.CASES + control_flow.CASES}, key=lambda f: f.__name__)


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_ssa_invariants(fn):
    f = front(fn, None)
    verify(f.function, f.ssa_info.carried)


def test_verifier_rejects_double_assignment():
    import gast
    tree = gast.parse("def f(x):\n    y = x\n    y = y * 2\n    return y\n").body[0]
    with pytest.raises(AssertionError, match="assigned twice"):
        verify(tree)
