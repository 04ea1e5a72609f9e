"""The transpose route: reverse rules from forward rules (transpose.py, unzip.py)."""

import subprocess
import sys

import numpy as np
import pytest

import tangent_ast as ta
from tangent_ast.errors import TangentAstError
from tangent_ast.testing import check_grads

from ..corpus import calls, control_flow, language, straight_line
from ..rules.test_complex import CASES as COMPLEX_CASES
from ..rules.test_numpy_rules import RULE_TEST_CASES

rng = np.random.default_rng(11)


def _cotangent_like(out):
    if isinstance(out, (tuple, list)):
        return type(out)(_cotangent_like(o) for o in out) if not hasattr(out, "_fields") else (
            type(out)(*(_cotangent_like(o) for o in out))
        )
    if np.iscomplexobj(out):
        shape = np.shape(out)
        value = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    else:
        value = rng.standard_normal(np.shape(out))
    return value if isinstance(out, np.ndarray) else type(out)(value)


def _same(a, b):
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return np.allclose(a, b, rtol=1e-10, atol=1e-12)


def _differentiable(args):
    return tuple(
        i
        for i, a in enumerate(args)
        if isinstance(a, (float, complex)) or (isinstance(a, np.ndarray) and a.dtype.kind in "fc")
    )


def _fn_and_args(case):
    """A table's case as (fn, args), keeping its marks (a function NumPy 2.1 lacks is
    skipped there)."""
    if hasattr(case, "values"):
        return pytest.param(*case.values[:2], marks=case.marks, id=case.id)
    return case[:2]


@pytest.mark.parametrize(
    "fn, args",
    [_fn_and_args(c) for c in RULE_TEST_CASES + COMPLEX_CASES],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_each_rule_transposed_agrees_with_its_reverse_rule(fn, args):
    """The two routes check each other: every rule of the table, one cotangent, both routes."""
    wrt = _differentiable(args)
    out, direct = ta.vjp(fn, *args, wrt=wrt, route="direct")
    ct = _cotangent_like(out)
    _, transposed = ta.vjp(fn, *args, wrt=wrt, route="transpose")
    try:
        expected = direct(ct)
    except TangentAstError as refusal:  # refused alike
        with pytest.raises(type(refusal)):
            transposed(ct)
        return
    assert _same(expected, transposed(ct))


def test_a_forward_rule_alone_gives_reverse_mode():
    def softplus_like(x):
        return np.log1p(np.exp(x))

    ta.defjvp(softplus_like, lambda dx, ans, x: dx / (1 + np.exp(-x)))

    def f(x, w):
        return np.sum(softplus_like(x * w) ** 2)

    args = (rng.standard_normal(5), rng.standard_normal(5))
    check_grads(f, args, route="transpose")
    rule = ta.derive(f, "reverse", args=args, route="transpose")
    assert "# route: transpose" in rule.source
    assert "1 + np.exp(-" in rule.source  # the forward rule's own formula, transposed


def broadcast_then_reduce(x, W):
    return np.sum(np.sum(x * W, axis=0) * np.cos(x))


def row_plus_column(r, c):
    return np.sum(np.tanh(r + c) * (r - c))


def scalar_into_array(s, v):
    return np.sum(np.sin(s * v) + s)


def to_the_zeroth(x):
    return np.sum(x ** 0 + np.power(x, 0) + x)


def extremes(x, y):
    return max(x, y) * min(x * y, 1.5) + abs(x - y)


@pytest.mark.parametrize(
    "fn, args",
    [
        (broadcast_then_reduce, (rng.standard_normal(3), rng.standard_normal((4, 3)))),
        (row_plus_column, (rng.standard_normal((1, 4)), rng.standard_normal((3, 1)))),
        (scalar_into_array, (0.7, rng.standard_normal(5))),
        (to_the_zeroth, (np.array([0.0, 0.5, -0.3]),)),  # dx * 0 * x ** -1: zero, not NaN
        (extremes, (0.3, 2.0)),
        (extremes, (2.0, 0.3)),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_broadcasting_and_choices(fn, args):
    check_grads(fn, args, route="transpose")
    wrt = tuple(range(len(args)))
    direct = ta.grad(fn, wrt=wrt, route="direct")(*args)
    transposed = ta.grad(fn, wrt=wrt, route="transpose")(*args)
    assert _same(direct, transposed)


def test_the_route_is_chosen_by_argument_and_by_environment(monkeypatch):
    monkeypatch.delenv("TANGENT_AST_ROUTE", raising=False)
    args = (rng.standard_normal(3), rng.standard_normal(3))
    assert "route" not in ta.derive(scalar_into_array, "reverse", args=(0.5, args[0])).source
    monkeypatch.setenv("TANGENT_AST_ROUTE", "transpose")
    rule = ta.derive(row_plus_column, "reverse", args=args)
    assert "# route: transpose" in rule.source and "transposed" in rule.path.name
    assert "# route" not in ta.derive(row_plus_column, "reverse", args=args, route="direct").source
    monkeypatch.setenv("TANGENT_AST_ROUTE", "sideways")
    with pytest.raises(TangentAstError, match="unknown route 'sideways'"):
        ta.grad(row_plus_column)(*args)


def test_the_stages_of_the_route_can_be_shown():
    def f(x):
        h = np.tanh(x)
        return np.sum(h * x)

    args = (np.ones(3),)
    linearized = ta.show(f, "reverse", stage="linearize", args=args)
    assert "dh = dx * (1 - h ** 2)" in linearized
    unzipped = ta.show(f, "reverse", stage="unzip", args=args)
    primal, linear = unzipped.split("def f_linear")
    assert "dh_factor = 1 - h ** 2" in primal and "dx" not in primal
    assert "dh = dx * dh_factor" in linear and "tanh" not in linear
    transposed = ta.show(f, "reverse", stage="transpose", args=args)
    assert "def f_bwd(saved, ct_out)" in transposed


def test_cli_shows_the_transpose_stage_and_generates_by_route(tmp_path):
    (tmp_path / "model.py").write_text(
        "import numpy as np\n\n\ndef loss(x):\n    return np.sum(np.sin(x) ** 2)\n"
    )
    run = subprocess.run(
        [sys.executable, "-m", "tangent_ast", "show", "model:loss", "--stage", "transpose",
         "--args", "x: float64[:]"],
        cwd=tmp_path, capture_output=True, text=True, check=True,
    )
    assert "def loss_bwd" in run.stdout
    run = subprocess.run(
        [sys.executable, "-m", "tangent_ast", "generate", "model:loss", "--mode", "reverse",
         "--route", "transpose", "--args", "x: float64[:]", "-o", "derived"],
        cwd=tmp_path, capture_output=True, text=True, check=True,
    )
    written = (tmp_path / run.stdout.strip().splitlines()[0]).read_text()
    assert "# route: transpose" in written


@pytest.mark.parametrize(
    "case",
    straight_line.CASES[:8] + calls.CASES[:8] + control_flow.CASES[:8] + language.CASES[:8],
    ids=lambda c: c.id,
)
def test_both_routes_give_the_same_cotangents(case):
    check_grads(case.fn, case.args, kwargs=case.kwargs, wrt=case.wrt, route="transpose")


def _straight_through_round(x):
    return np.round(x)


def _rounded_times(x):
    return _straight_through_round(x) * x


def _calls_the_rounded(x):
    return _rounded_times(x) * 2.0 + _straight_through_round(x * x)


def test_a_forward_rule_alone_is_transposed_on_the_direct_route_too(tmp_path):
    """A straight-through estimator (a forward rule only, not the derivative of its body):
    the direct route derives a function calling it by the transpose route, so both routes and
    forward mode agree (differentiating the body instead gave a zero there)."""
    from tangent_ast.api.gradient_checks import check_first_order

    ta.defjvp(_straight_through_round, lambda dx, ans, x: dx)
    x = 1.7
    expected = 2.0 * (np.round(x) + x) + 2.0 * x  # d/dx with d round(u) = du
    for route in ("direct", "transpose"):
        assert ta.grad(_calls_the_rounded, route=route, cache=tmp_path)(x) == pytest.approx(expected)
        rule = ta.derive(_rounded_times, "reverse", args=(x,), route=route, cache=tmp_path)
        assert "# route: transpose" in rule.source
    assert ta.jvp(_calls_the_rounded, (x,), (1.0,), cache=tmp_path)[1] == pytest.approx(expected)
    # no finite differences: the estimator is not the derivative of np.round
    for args in [(x,), (np.array([1.7, -0.4, 2.2]),)]:
        check_first_order(
            _calls_the_rounded, args, cache=tmp_path, finite_differences=False, derive=ta.derive
        )
    # hvp: forward over the transposed reverse rule, d/dx (x^2 + 2 x round(x)) with the estimator
    second = ta.hvp(lambda y: _rounded_times(y) * y, cache=tmp_path)(x, 1.0)
    assert second == pytest.approx(4.0 * x + 2.0 * np.round(x))
