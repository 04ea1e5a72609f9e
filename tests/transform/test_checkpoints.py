"""Checkpointing: a checkpointed loop keeps snapshots, not tapes; a checkpointed function
keeps no residuals; both give the gradients of the plain code, to the last bit."""

import sys
from math import comb

import numpy as np
import pytest

import tangent_ast as ta
from tangent_ast.errors import UnsupportedSyntaxError
from tangent_ast.runtime.checkpoints import binomial_split
from tangent_ast.testing import check_grads

from ..corpus import checkpointing
from ..corpus.checkpointing import CASES, PLAIN

RNN = next(c.args for c in CASES if c.fn is checkpointing.rnn)
STACKED = next(c.args for c in CASES if c.fn is checkpointing.stacked)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_same_gradient_as_without_checkpoints(case):
    wrt = tuple(i for i, a in enumerate(case.args) if isinstance(a, (float, np.ndarray)))
    marked = ta.grad(case.fn, wrt=wrt)(*case.args)
    plain = ta.grad(PLAIN[case.fn], wrt=wrt)(*case.args)  # tuples: wrt is one
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
    _, saved = rule.fwd(x, steps)
    lists = [s for s in saved if isinstance(s, list)]
    # snapshots only, no tape: k of them, and the state the last step starts from (the
    # step the reverse sweep takes first, as revolve tapes it in its forward sweep)
    assert lists and all(len(s) <= snapshots + 1 for s in lists)
    steps_kept = next(s for s in lists if all(isinstance(t, int) for t in s))
    assert len([t for t in steps_kept if t < steps - 1]) <= snapshots
    ct = np.ones(3)
    gradient = rule.bwd(saved, ct)
    np.testing.assert_array_equal(gradient, rule.bwd(saved, ct))  # a pullback runs again
    check_grads(loops.f, (x, steps), modes=("forward", "reverse"))


def test_the_generated_code_goes_back_step_by_step_from_snapshots():
    rule = ta.derive(checkpointing.rnn, "reverse", args=RNN)
    assert "h_snapshots.append(h)" in rule.source
    assert "for step in reversed(range(" in rule.source
    assert "h_1 = h_kept[-1]" in rule.source
    assert "for t in range(start, step):" in rule.source
    assert "_tape" not in rule.source  # one step at a time: its values are plain names


def simulate(steps, snapshots):
    """The schedule the generated code runs, step for step (the loop body replaced by a
    count): how often each step runs, and the most snapshots kept at once."""
    runs, kept, keep_at = [0] * steps, [], 0
    for t in range(steps):  # the forward sweep
        if t == keep_at:
            kept.append((t,))
            keep_at = binomial_split(t, steps, snapshots - len(kept))
        runs[t] += 1
    most = len([s for s in kept if s[0] < steps - 1])  # the last step's start: not kept
    for step in reversed(range(steps)):  # the reverse sweep
        while kept[-1][0] > step:
            kept = kept[:-1]
        start = kept[-1][0]
        keep_at = binomial_split(start, step + 1, snapshots - len(kept))
        for t in range(start, step):
            if t == keep_at:
                kept = [*kept, (t,)]
                keep_at = binomial_split(t, step + 1, snapshots - len(kept))
                most = max(most, len(kept))
            runs[t] += 1
        runs[step] += 1  # again with its tapes, then backwards
    return runs, most


def fewest_runs(steps, snapshots):
    """Revolve's bound: the smallest r with C(snapshots + r, r) >= steps; each step then
    runs at most r + 1 times (r forward, once more with its tapes)."""
    r = 0
    while comb(snapshots + r, r) < steps:
        r += 1
    return r


BOUNDARIES = [
    (comb(k + r, r) + extra, k) for k in (1, 2, 3, 5, 16) for r in (1, 2, 3, 4) for extra in (0, 1)
]


@pytest.mark.parametrize(
    ("steps", "snapshots"),
    [(1, 1), (2, 1), (3, 1), (5, 8), (40, 16), (4000, 16), (1000, 3), *BOUNDARIES],
)
def test_the_binomial_schedule_runs_each_step_as_few_times_as_revolve(steps, snapshots):
    runs, most = simulate(steps, snapshots)
    assert most <= snapshots
    assert max(runs) <= max(fewest_runs(steps, snapshots), 1) + 1  # one step: forward, again
    assert min(runs) >= 1


def test_the_binomial_schedule_at_the_benchmark_size():
    runs, most = simulate(4000, 16)
    assert (max(runs), most) == (5, 16)  # C(20, 4) = 4845 >= 4000 > C(19, 3) = 969
    assert sum(runs) < 5 * 4000


@pytest.mark.parametrize(
    ("steps", "snapshots"), [(1, 1), (6, 2), (7, 2), (20, 3), (21, 3), (17, 16)]
)
def test_the_generated_code_runs_that_schedule(steps, snapshots, tmp_path, monkeypatch):
    """Count what the generated reverse sweep does: snapshots kept at once (a list that
    counts its appends) and runs of the loop body (a NumPy whose sin counts its calls)."""
    source = tmp_path / f"counted_{steps}_{snapshots}.py"
    source.write_text(
        "import numpy as np\nimport tangent_ast as ta\n\n\n"
        "def f(x, n):\n    h = x\n"
        f"    for t in ta.checkpointed(range(n), snapshots={snapshots}):\n"
        "        h = np.sin(h) * x + 0.1\n    return np.sum(h)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    module = __import__(source.stem)
    x = np.linspace(0.1, 0.9, 3)
    rule = ta.derive(module.f, "reverse", args=(x, steps))
    _, saved = rule.fwd(x, steps)
    most = [0]

    class Counted(list):
        """The lists the reverse sweep keeps its snapshots in."""

        def append(self, value):
            super().append(value)
            most[0] = max(most[0], len(self))

    class CountingNumPy:
        sins = 0

        def __getattr__(self, attr):
            return getattr(np, attr)

        def sin(self, value):
            CountingNumPy.sins += 1
            return np.sin(value)

    generated = sys.modules[rule.bwd.__module__]
    monkeypatch.setattr(generated, "np", CountingNumPy())
    monkeypatch.setattr(generated, "list", Counted, raising=False)
    gradient = rule.bwd(saved, 1.0)
    runs, _ = simulate(steps, snapshots)
    assert most[0] <= snapshots
    assert CountingNumPy.sins == sum(runs) - steps  # what runs after the forward sweep
    monkeypatch.undo()
    np.testing.assert_array_equal(gradient, ta.grad(module.f)(x, steps))


def loops_module(tmp_path, monkeypatch, snapshots):
    source = tmp_path / f"pair_{snapshots}.py"
    source.write_text(
        "import numpy as np\nimport tangent_ast as ta\n\n\n"
        "def marked(W, h, xs):\n"
        f"    for t in ta.checkpointed(range(xs.shape[0]), snapshots={snapshots}):\n"
        "        h = np.tanh(W @ h + xs[t])\n    return np.sum(h ** 2)\n\n\n"
        "def plain(W, h, xs):\n"
        "    for t in range(xs.shape[0]):\n"
        "        h = np.tanh(W @ h + xs[t])\n    return np.sum(h ** 2)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return __import__(source.stem)


@pytest.mark.parametrize("snapshots", [1, 2, 3, 5])
def test_same_gradient_for_many_lengths(snapshots, tmp_path, monkeypatch):
    module = loops_module(tmp_path, monkeypatch, snapshots)
    rng = np.random.default_rng(snapshots)
    W, h = rng.normal(size=(3, 3)) / 2, rng.normal(size=3)
    lengths = {1, 2, snapshots - 1, snapshots, snapshots + 1, 30}
    lengths |= {comb(snapshots + r, r) + extra for r in (1, 2, 3) for extra in (-1, 0, 1)}
    for steps in sorted(n for n in lengths if 0 <= n <= 60):
        xs = rng.normal(size=(steps, 3))
        for wrt in (0, 1, 2):
            np.testing.assert_array_equal(
                ta.grad(module.marked, wrt=wrt)(W, h, xs),
                ta.grad(module.plain, wrt=wrt)(W, h, xs),
            )


def test_a_checkpointed_function_keeps_no_residuals():
    args = STACKED
    rule = ta.derive(checkpointing.stacked, "reverse", args=args)
    assert "h_1 = cell(W, h_1)" in rule.source  # the primal call in the forward sweep
    assert "cell_fwd(W, h)[1]" in rule.source  # run again in the reverse sweep
    _, saved = rule.fwd(*args)
    assert not any(isinstance(s, tuple) for s in saved)  # no residuals of the callee


def test_hessian_vector_products_through_checkpoints():
    gated = next(c.args for c in CASES if c.fn is checkpointing.gated)
    for fn, args in [
        (checkpointing.stacked, STACKED),
        (checkpointing.rnn, RNN),
        (checkpointing.gated, gated),
    ]:
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
