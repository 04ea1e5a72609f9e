"""The Numba backend: rules compiled by ``numba.njit`` give the NumPy backend's values (to
rounding), in both modes, through every public function that takes ``backend``; what Numba
cannot compile is refused with the line it could not, never with Numba's traceback."""

import copy
import sys

import numpy as np
import pytest

import tangent_ast as ta

from ..corpus import control_flow, jumps, language, straight_line
from ..transform.test_for_numba import loop_with_branch as branchy

numba = pytest.importorskip("numba")

# Corpus cases the Numba backend compiles: straight-line code on numbers and arrays (with
# the compiled runtime helpers), loops of every kind (tapes of numbers in arrays, of arrays in
# typed lists, trip counters), break and return at depth, arrays updated in place
COMPILED = {
    "design_example[all]",
    "power_both[all]",
    "math_chain[all]",
    "np_elementwise[all]",
    "np_index[all]",
    "np_sum_axis[all]",
    "range_loop[all]",
    "loop_over_array[all]",
    "nested_break[all]",
    "rnn_matrix[all]",
    "range_start_stop_step[all]",
    "running_product[all]",
    "while_newton_sqrt[all]",
    "while_break_at_depth_two[all]",
    "while_return_from_inner_while[all]",
    "inner_loop_break_at_depth_two[all]",
    "break_out_of_nested_loops[all]no break",
    "return_from_inner_loop[all]",
    "update_in_branch[all]",
    "fill_preallocated[all]",
    "rnn_into_array[all]",
}
ALL_CASES = (
    straight_line.CASES + control_flow.CASES + jumps.CASES + language.CASES
)
CASES = [c for c in ALL_CASES if c.id in COMPILED and not c.kwargs]


def test_every_listed_case_is_in_the_corpus():
    assert {c.id for c in CASES} == COMPILED


def _tangents(args):
    """A direction for each float argument (None for the others)."""
    rng = np.random.default_rng(0)
    return tuple(
        (float(rng.standard_normal()) if np.ndim(a) == 0 else rng.standard_normal(np.shape(a)))
        if np.asarray(a).dtype.kind == "f"
        else None
        for a in args
    )


def _close(a, b):
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    return np.allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_both_modes_give_the_numpy_backends_values(case):
    tangents = _tangents(case.args)
    by_backend = {}
    for backend in ("numpy", "numba"):
        args = copy.deepcopy(case.args)
        out, tangent = ta.jvp(case.fn, args, copy.deepcopy(tangents), backend=backend)
        args = copy.deepcopy(case.args)
        value, pullback = ta.vjp(case.fn, *args, backend=backend)
        by_backend[backend] = (out, tangent, value, pullback(1.0), args)
    assert _close(by_backend["numba"], by_backend["numpy"]), case.id


def test_the_rules_are_compiled_functions():
    rule = ta.derive(branchy, "reverse", args=(0.3, 40), backend="numba")
    assert isinstance(rule.fwd, numba.core.registry.CPUDispatcher)
    assert rule.fwd.signatures and rule.bwd.signatures  # compiled for the example arguments
    assert "@numba.njit(cache=True)" in rule.source


def test_grad_and_value_and_grad():
    want = ta.value_and_grad(branchy)(0.3, 1000)
    got = ta.value_and_grad(branchy, backend="numba")(0.3, 1000)
    assert _close(got, want)
    assert _close(ta.grad(branchy, backend="numba")(0.7, 10), ta.grad(branchy)(0.7, 10))


def test_backends_keep_separate_modules():
    numpy_rule = ta.derive(branchy, "reverse", args=(0.3, 40))
    numba_rule = ta.derive(branchy, "reverse", args=(0.3, 40), backend="numba")
    assert numpy_rule.path != numba_rule.path
    assert numba_rule.path.stem.endswith("__numba") and "njit" not in numpy_rule.source


def calls_a_python_helper(x, y):
    return helper(y) * x  # y is not differentiated: helper itself is called


def helper(x):
    return x * x


def test_what_numba_cannot_compile_is_refused_with_its_line():
    with pytest.raises(ta.TangentAstError, match="Numba cannot compile.*helper") as caught:
        ta.derive(calls_a_python_helper, "reverse", args=(0.5, 2.0), backend="numba")
    message = str(caught.value)
    assert f"{__file__}:{calls_a_python_helper.__code__.co_firstlineno + 1}" in message
    assert "helper is a Python function the rule calls for its value alone" in message
    assert "Traceback" not in message


def test_refused_on_the_first_call_of_grad_too():
    with pytest.raises(ta.TangentAstError, match="Numba cannot compile"):
        ta.grad(calls_a_python_helper, backend="numba")(0.5, 2.0)


def test_an_argument_numba_does_not_type_is_refused_by_name():
    with pytest.raises(ta.TangentAstError, match="argument 'p' .* a dict"):
        ta.derive(lambda p: p["x"] * 2.0, "forward", args=({"x": 1.0},), backend="numba")


def test_a_standalone_package_of_compiled_rules_runs_without_tangent_ast(tmp_path):
    """``tangent-ast generate --backend numba --standalone``, as a subprocess: the package
    imports its copy of the runtime, compiled helpers included, and no tangent_ast."""
    from .test_cli import cli, python

    work = tmp_path / "work"
    work.mkdir()
    (work / "looped_model.py").write_text(
        "def loss(x, y):\n    s = 0.0\n    for i in range(5):\n        s = s + x ** y\n"
        "        x = x * 0.9\n    return s\n"
    )
    done = cli(
        work, "generate", "looped_model:loss", "--mode", "reverse", "--wrt", "x,y",
        "--args", "x: float, y: float", "--backend", "numba", "--standalone", "-o", "derived",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    source = next((work / "derived").glob("*__numba.py")).read_text()
    assert "@numba.njit(cache=True)" in source
    assert "from .runtime import compiled as runtime" in source
    got = python(
        work,
        "import json, sys\nsys.modules['tangent_ast'] = None\nimport derived\n"
        "out, saved = derived.loss_fwd(1.3, 2.5)\n"
        "print(json.dumps([out, *derived.loss_bwd(saved, 1.0)]))",
    )
    sys.path.insert(0, str(work))
    try:
        import looped_model
    finally:
        sys.path.remove(str(work))
    want = ta.value_and_grad(looped_model.loss, wrt=(0, 1))(1.3, 2.5)
    assert _close(got, [want[0], *want[1]])


def test_fuzzed_programs_compile_to_the_numpy_backends_values_or_are_refused():
    """A slice of the program fuzzer's programs (python -m tangent_ast.fuzz --backend numba
    runs any number): the Numba backend's value, gradient and tangent are the NumPy
    backend's, or the program is refused; never a wrong number or an internal error."""
    from tangent_ast.fuzz import Outcome, check_program, generate

    outcomes = [check_program(generate(seed), backend="numba").outcome for seed in range(10)]
    assert Outcome.WRONG not in outcomes and Outcome.INTERNAL not in outcomes
    assert outcomes.count(Outcome.PASS) >= 1
