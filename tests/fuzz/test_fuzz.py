"""The program fuzzer (tangent_ast/fuzz): a fixed-seed slice of random programs, each
checked in every mode, must give no wrong derivative and no internal error; the
generator is deterministic and the shrinker finds small failing programs. Programs of
mixed lengths (3, 4 and 1: shapes (3, 4), (4, 3), (1, 3), ...) check that rules specialised
on which axes have equal lengths put each label on the right axis."""

import warnings
from dataclasses import replace

import pytest

from tangent_ast.fuzz import Outcome, check_program, generate, shrink
from tangent_ast.fuzz.check import load
from tangent_ast.fuzz.__main__ import _reproduction, run

# CI's time is shared with the rest of the suite: the fuzzer itself runs any number
# (python -m tangent_ast.fuzz --count N --seed S [--second-order])
SLICE = range(0, 200)  # programs whose arrays' axes all have length 3
MIXED_SLICE = range(0, 130)  # programs of lengths 3, 4 and 1 (about as long to check)
# second derivatives too (forward over reverse, reverse over reverse), both lengths: what
# found the loop dropped in one branch of a reverse rule and the nested loops' tapes
SECOND_ORDER_SLICE = range(100, 120)


def test_same_seed_same_program():
    assert generate(123).source() == generate(123).source()
    assert generate(123).source() != generate(124).source()
    mixed = generate(123, lengths="mixed")
    assert mixed.source() == generate(123, lengths="mixed").source() != generate(123).source()


def test_mixed_programs_run_and_their_signatures_label_lengths():
    """Programs of mixed lengths are valid NumPy for their shapes, and most have arguments
    that share a length (so that their rules carry labels: array2f[a,b], array1f[b])."""
    import copy

    import numpy as np

    from tangent_ast.fuzz.check import load
    from tangent_ast.vocabulary.kinds import describe_signature, signature_of

    programs = [generate(seed, lengths="mixed") for seed in range(60)]
    failed = 0
    for program in programs:
        try:
            value = load(program).f(*copy.deepcopy(program.args()))
            failed += np.ndim(value) != 0
        except Exception:
            failed += 1
    assert failed <= 2
    labelled = [p for p in programs if "[" in describe_signature(signature_of(p.args()))]
    assert len(labelled) > len(programs) // 2
    shapes = {np.shape(a) for p in programs for a in p.args()}
    assert {(3, 4), (4, 3), (4,), (1, 3), (3, 1), (1,)} <= shapes


def test_programs_are_valid_python_that_runs():
    """Run, not checked (the slices below check them): few raise."""
    failures = 0
    for seed in range(40):
        program = generate(seed)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                load(program).f(*program.args())
        except Exception:
            failures += 1
    assert failures < 6


def test_shrinker_finds_the_statement_that_fails():
    program = generate(5, size=8)
    planted = program.body[3]
    small = shrink(program, lambda p: planted in p.body)
    assert small.body == (planted,)


def test_a_planted_wrong_derivative_is_found_and_shrunk(tmp_path, monkeypatch):
    """A rule made wrong on purpose is reported WRONG, and shrunk to the call that uses it."""
    import numpy as np

    from tangent_ast.rules import registry
    program = replace(generate(3), params=("a",), shapes=("vec",), helpers=(), result="np.sum(v3)",
                      body=(("v1 = a * 2.0",), ("v2 = np.sin(v1)",), ("v3 = np.arctan(v2) * v1",)))
    assert check_program(program).outcome is Outcome.PASS
    entry = registry.lookup(np.arctan)
    saved = dict(entry.jvps), dict(entry.vjps)
    registry.defjvp(np.arctan, lambda dx, ans, x: dx * 2.0)
    registry.defvjp(np.arctan, lambda ct, ans, x: ct * 2.0)
    try:
        result = check_program(program)
        assert result.outcome is Outcome.WRONG
        small = shrink(program, lambda p: check_program(p).outcome is Outcome.WRONG)
        assert len(small.body) <= len(program.body) and "np.arctan(" in small.source(preamble=False)
    finally:
        entry.jvps.clear(), entry.jvps.update(saved[0])
        entry.vjps.clear(), entry.vjps.update(saved[1])
        registry._changed()


def test_jumps_deep_in_branches_are_generated():
    """Some programs have a loop whose break, continue or return sits two or three levels
    deep in its branches (the class of the nested-break bug), in for and while loops."""
    sources = [generate(seed).source(preamble=False) for seed in range(160)]
    with_jumps = [s for s in sources if "_acc = 0.0" in s]
    assert len(with_jumps) > 10
    text = "\n".join(with_jumps)
    for jump in ("break", "continue", "return"):
        assert f"\n                {jump}" in text or f"\n                    {jump}" in text
    assert "while i < " in text and "for i in range(" in text and "elif " in text


def test_the_shrinker_deletes_statements_inside_a_block():
    program = replace(
        generate(5),
        body=(("v1 = a * 1.0", "for i in range(3):", "    v1 = v1 * 2.0", "    if i > 1:",
               "        v1 = v1 + 1.0", "        break"),),
    )
    small = shrink(program, lambda p: any("break" in line for block in p.body for line in block))
    assert small.body == (("for i in range(3):", "    if i > 1:", "        break"),)


def test_a_program_that_runs_too_long_is_skipped(monkeypatch):
    """A shrunk program may lose a while loop's counter: it is skipped, not waited for."""
    from tangent_ast.fuzz import check

    monkeypatch.setattr(check, "PLAIN_SECONDS", 0.5)
    program = replace(generate(5), params=("a",), shapes=("scalar",), helpers=(),
                      body=(("k = 0", "while k < 3:", "    a = a * 1.0"),), result="a")
    result = check_program(program)
    assert result.outcome is Outcome.SKIPPED and "longer than" in result.detail


def test_a_broadcast_number_written_into_a_row():
    """Found by the fuzzer: ``v[0] = b`` spreads the number b over a row; its cotangent
    is the row's summed."""
    program = replace(generate(1251), body=(("v1 = a.copy()", "v1[0] = b"),), result="np.sum(v1 * v1)")
    assert check_program(program).outcome is Outcome.PASS


@pytest.mark.parametrize("seeds, lengths", [(SLICE, "equal"), (MIXED_SLICE, "mixed")])
def test_fixed_seed_slice_has_no_wrong_derivative_and_no_internal_error(seeds, lengths):
    counts, _, failures = run(seeds, shrink_failures=False, echo=lambda *a: None, lengths=lengths)
    assert counts[Outcome.WRONG] == 0 and counts[Outcome.INTERNAL] == 0, \
        "\n\n".join(f"seed {seed}: {r.outcome.value}: {r.detail}\n{p.source(preamble=False)}"
                    for seed, r, p in failures)
    assert counts[Outcome.PASS] > 0.8 * len(seeds)


def test_second_derivatives_of_a_fixed_seed_slice():
    counts, _, failures = run(
        SECOND_ORDER_SLICE, shrink_failures=False, echo=lambda *a: None, lengths="both",
        second_order=True,
    )
    assert counts[Outcome.WRONG] == 0 and counts[Outcome.INTERNAL] == 0, \
        "\n\n".join(f"seed {seed}: {r.outcome.value}: {r.detail}\n{p.source(preamble=False)}"
                    for seed, r, p in failures)
    assert counts[Outcome.PASS] > 0.5 * 2 * len(SECOND_ORDER_SLICE)


def test_a_run_for_some_minutes_does_not_list_its_seeds_first():
    """``--minutes`` hands run every seed up to sys.maxsize: they are taken one at a time."""
    import sys
    import time

    counts, _, _ = run(range(0, sys.maxsize), time.monotonic() - 1, echo=lambda *a: None, lengths="both")
    assert sum(counts.values()) == 0


def test_a_failure_is_written_as_a_module_that_runs():
    program = generate(5, lengths="mixed")
    namespace = {"__name__": "reproduction"}
    exec(compile(_reproduction(program, "wrong: a line\nand another"), "<fuzz>", "exec"), namespace)
    assert namespace["f"](*namespace["ARGS"]) == load(program).f(*program.args())
