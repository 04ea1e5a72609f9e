"""The SSA verifier runs after the SSA stage on every corpus function."""

import pytest

from tangent_ast.pipeline import front
from tangent_ast.front.ssa import verify

from ..corpus import calls, control_flow, jumps, straight_line

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


def test_a_header_with_no_value_yet_is_unset_where_copies_read_it():
    """SSA's join copy reads y before any iteration set it: y is runtime.UNSET before the
    loop. Where only the user's code reads it (assigned_first_in_the_loop), nothing is
    added: a loop that never sets it leaves it unbound, as Python does."""
    from tangent_ast import show

    from ..corpus import jumps

    ssa = show(jumps.set_in_some_iterations, stage="ssa", args=(jumps.np.ones(3),))
    assert "    y = runtime.UNSET\n    for i in range(3):" in ssa
    plain = show(control_flow.assigned_first_in_the_loop, stage="ssa", args=(0.7, 3))
    assert "UNSET" not in plain


def test_verifier_rejects_double_assignment():
    import gast
    tree = gast.parse("def f(x):\n    y = x\n    y = y * 2\n    return y\n").body[0]
    with pytest.raises(AssertionError, match="assigned twice"):
        verify(tree)
