"""Checkpointing: a checkpointed loop keeps snapshots, not tapes; a checkpointed function
keeps no residuals; both give the gradients of the plain code, to the last bit."""

import numpy as np
import pytest

import tangent_ast as ta
from tangent_ast.errors import UnsupportedSyntaxError
from tangent_ast.testing import check_grads

from .corpus import checkpointing
from .corpus.checkpointing import CASES, PLAIN

RNN = next(c.args for c in CASES if c.fn is checkpointing.rnn)
STACKED = next(c.args for c in CASES if c.fn is checkpointing.stacked)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_same_gradient_as_without_checkpoints(case):
    wrt = tuple(i for i, a in enumerate(case.args) if isinstance(a, (float, np.ndarray)))
    marked = ta.grad(case.fn, wrt=wrt)(*case.args)
    plain = ta.grad(PLAIN[case.fn], wrt=wrt)(*case.args)
    if len(wrt) == 1:
        marked, plain = (marked,), (plain,)
    for a, b in zip(marked, plain, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_both_modes_and_finite_differences(case):
    check_grads(case.fn, case.args, modes=("forward", "reverse"))


@pytest.mark.parametrize("steps", [1, 2, 7, 16, 17, 40])
@pytest.mark.parametrize("snapshots", [1, 2, 3, 16])
def test_at_most_k_snapshots_and_one_segment_of_tapes(steps, snapshots, tmp_path, monkeypatch):
    source = tmp_path / "loops.py"
    source.write_text(
        "import numpy as np\nimport tangent_ast as ta\n\n\n"
        "def f(x, n):\n    h = x\n"
        f"    for t in ta.checkpointed(range(n), snapshots={snapshots}):\n"
        "        h = np.sin(h) * x + 0.1\n    return h\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import loops

    x = np.linspace(0.1, 0.9, 3)
    rule = ta.derive(loops.f, "reverse", args=(x, steps))
    out, saved = rule.fwd(x, steps)
    lists = [s for s in saved if isinstance(s, list)]
    assert lists and all(len(s) <= snapshots for s in lists)  # snapshots only, no tape
    ct = np.ones(3)
    gradient = rule.bwd(saved, ct)
    np.testing.assert_array_equal(gradient, rule.bwd(saved, ct))  # a pullback runs again
    check_grads(loops.f, (x, steps), modes=("forward", "reverse"))


def test_the_generated_code_is_a_loop_over_segments():
    rule = ta.derive(checkpointing.rnn, "reverse", args=RNN)
    assert "h_snapshots.append(h)" in rule.source
    assert "for segment in reversed(range(len(h_snapshots))):" in rule.source
    assert "for t in reversed(range(start, stop)):" in rule.source


def test_a_checkpointed_function_keeps_no_residuals():
    args = STACKED
    rule = ta.derive(checkpointing.stacked, "reverse", args=args)
    assert "h_1 = cell(W, h_1)" in rule.source  # the primal call in the forward sweep
    assert "cell_fwd(W, h)[1]" in rule.source  # run again in the reverse sweep
    _, saved = rule.fwd(*args)
    assert not any(isinstance(s, tuple) for s in saved)  # no residuals of the callee


def test_hessian_vector_products_through_checkpoints():
    for fn, args in [(checkpointing.stacked, STACKED), (checkpointing.rnn, RNN)]:
        v = np.linspace(1.0, -1.0, args[0].size).reshape(args[0].shape)
        np.testing.assert_allclose(
            ta.hvp(fn, wrt=0)(*args, v), ta.hvp(PLAIN[fn], wrt=0)(*args, v), rtol=1e-12
        )


def test_the_markers_leave_the_primal_as_it_is():
    assert ta.checkpointed(range(3), snapshots=2) == range(3)
    assert ta.checkpoint(checkpointing._cell) is checkpointing._cell
    with pytest.raises(ValueError, match="positive int"):
        ta.checkpointed(range(3), snapshots=0)


REFUSED = {
    "draws": (
        "def f(x, n):\n    rng = np.random.default_rng(0)\n    h = x\n"
        "    for t in ta.checkpointed(range(n), snapshots=2):\n"
        "        h = h * x + rng.normal()\n    return h\n",
        "rng.normal",
    ),
    "updates": (
        "def f(x, n):\n    out = np.zeros(n)\n    h = x\n"
        "    for t in ta.checkpointed(range(n), snapshots=2):\n"
        "        h = h * x\n        out[t] = h\n    return np.sum(out)\n",
        "updates an array in place",
    ),
    "nests": (
        "def f(x, n):\n    h = x\n"
        "    for t in ta.checkpointed(range(n), snapshots=2):\n"
        "        for j in range(2):\n            h = h * x\n    return h\n",
        "holds another loop",
    ),
    "breaks": (
        "def f(x, n):\n    h = x\n"
        "    for t in ta.checkpointed(range(n), snapshots=2):\n"
        "        h = h * x\n        if h > 3.0:\n            break\n    return h\n",
        "may leave early",
    ),
    "computed": (
        "def f(x, n):\n    k = n // 2\n    h = x\n"
        "    for t in ta.checkpointed(range(n), snapshots=k):\n"
        "        h = h * x\n    return h\n",
        "a number of snapshots computed in the function",
    ),
    "not_a_range": (
        "def f(x, n):\n    h = x\n"
        "    for v in ta.checkpointed([1.0, 2.0], snapshots=2):\n"
        "        h = h * v\n    return h\n",
        "checkpointed over anything but a range",
    ),
    "checkpointed_draws": (
        "@ta.checkpoint\ndef g(x):\n    return x * np.random.random()\n\n\n"
        "def f(x, n):\n    return g(x) * x\n",
        "may give other values when called again",
    ),
}


@pytest.mark.parametrize("label", sorted(REFUSED))
def test_what_cannot_run_again_is_refused_with_the_reason(label, tmp_path, monkeypatch):
    source, reason = REFUSED[label]
    (tmp_path / f"refused_{label}.py").write_text(
        "import numpy as np\nimport tangent_ast as ta\n\n\n" + source
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    module = __import__(f"refused_{label}")
    with pytest.raises(UnsupportedSyntaxError, match=reason) as refusal:
        ta.grad(module.f)(0.5, 4)
    assert f"refused_{label}.py:" in str(refusal.value)
