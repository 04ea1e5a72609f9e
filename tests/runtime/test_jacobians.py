"""Derived rules run on a batch of directions give, for each direction, what they give for
that direction alone: forward rules (jvp), reverse rules (pullbacks) and forward over
reverse (hvp), over the whole corpus. Most of the corpus runs as one batched pass."""

import copy
import numpy as np
import pytest

import tangent_ast as ta
from tangent_ast.runtime import jacobians as batching
from tangent_ast.errors import TangentAstError

from ..corpus import calls, control_flow, language, straight_line
from ..api.test_higher_order import CASES as SCALAR_CASES

rng = np.random.default_rng(11)
N = 3


def _copies(args):
    return [copy.deepcopy(a) for a in args]


def _float_cases():
    out = []
    for case in straight_line.CASES + control_flow.CASES + calls.CASES + language.CASES:
        floats = [
            i
            for i, a in enumerate(case.args)
            if isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype.kind == "f")
        ]
        if not case.kwargs and floats:
            out.append((case, floats[0]))
    return out


FLOAT_CASES = _float_cases()
BATCHED = {"jvp": [], "vjp": [], "hvp": []}  # ids of cases that ran as one batched pass


def _ran_batched(kind, case, before):
    if len(batching.FALLBACKS) == before:
        BATCHED[kind].append(case.id)


def _assert_same(batched, separate):
    if isinstance(batched, tuple):
        for b, s in zip(batched, separate, strict=True):
            _assert_same(b, s)
    elif hasattr(batched, "__dict__") and not isinstance(batched, np.ndarray):
        for name, value in vars(batched).items():
            _assert_same(value, getattr(separate, name))
    else:
        np.testing.assert_allclose(batched, separate, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case, w", FLOAT_CASES, ids=[c.id for c, _ in FLOAT_CASES])
def test_jvp_of_a_batch_is_the_jvp_of_each_direction(case, w):
    directions = rng.standard_normal((N, *np.shape(case.args[w])))
    tangents = [None] * len(case.args)
    try:
        tangents[w] = directions.copy()
        before = len(batching.FALLBACKS)
        out, stack = ta.jvp(case.fn, _copies(case.args), tangents, batched=True)
        separate = []
        for k in range(N):
            tangents[w] = directions[k].copy()
            separate.append(ta.jvp(case.fn, _copies(case.args), tangents)[1])
    except TangentAstError:
        return  # refused in both forms
    _ran_batched("jvp", case, before)
    _assert_same(stack, batching.stacked(separate))


@pytest.mark.parametrize("case, w", FLOAT_CASES, ids=[c.id for c, _ in FLOAT_CASES])
def test_pullback_of_a_batch_is_the_pullback_of_each_cotangent(case, w):
    try:
        out, pullback = ta.vjp(case.fn, *_copies(case.args), wrt=w)
    except TangentAstError:
        return
    if not isinstance(out, (float, np.floating, np.ndarray)):
        return  # containers and records of outputs: cotangents given one at a time
    cts = rng.standard_normal((N, *np.shape(out)))
    before = len(batching.FALLBACKS)
    stack = pullback(cts.copy(), batched=True)
    _ran_batched("vjp", case, before)
    _assert_same(stack, batching.stacked([pullback(cts[k].copy()) for k in range(N)]))


@pytest.mark.parametrize("case, w", SCALAR_CASES, ids=[c.id for c, _ in SCALAR_CASES])
def test_hvp_of_a_batch_is_the_hvp_of_each_direction(case, w):
    directions = rng.standard_normal((N, *np.shape(case.args[w])))
    product = ta.hvp(case.fn, wrt=w)
    try:
        before = len(batching.FALLBACKS)
        stack = product(*_copies(case.args), directions.copy(), batched=True)
    except TangentAstError:
        return
    _ran_batched("hvp", case, before)
    separate = [product(*_copies(case.args), directions[k].copy()) for k in range(N)]
    _assert_same(stack, batching.stacked(separate))


def test_most_of_the_corpus_runs_as_one_batched_pass():
    """Run after the tests above (pytest keeps file order): where an operation cannot take
    a batch the rule runs once per direction, which is right but slower; this keeps the
    share of one-pass batches from sliding back unnoticed."""
    assert len(BATCHED["jvp"]) >= 200, BATCHED["jvp"]
    assert len(BATCHED["hvp"]) >= 140, BATCHED["hvp"]
    assert len(BATCHED["vjp"]) >= 150, BATCHED["vjp"]
