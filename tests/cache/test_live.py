"""Rules follow the live program: a callee redefined or reloaded, a module-level
value or a closure cell rebound makes the dependent rules derive (or load) again."""

import importlib
import linecache
import sys
import textwrap

import numpy as np
import pytest

import tangent_ast as ta


@pytest.fixture
def make_module(tmp_path, monkeypatch):
    """``make_module(name, source)`` writes a module and imports it; again: rewrites and reloads it."""
    monkeypatch.syspath_prepend(str(tmp_path))
    made = []

    def make(name, source):
        path = tmp_path / f"{name}.py"
        path.write_text(textwrap.dedent(source))
        importlib.invalidate_caches()
        linecache.checkcache(str(path))
        if name in sys.modules:
            return importlib.reload(sys.modules[name])
        made.append(name)
        return importlib.import_module(name)

    yield make
    for name in made:
        sys.modules.pop(name, None)


def run_cell(module, source, cell):
    """Run ``source`` in ``module``'s namespace as a notebook cell does: it has its own file."""
    filename = f"<cell-{module.__name__}-{cell}>"
    source = textwrap.dedent(source)
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), vars(module))  # noqa: S102 (what a notebook does)


CALLER = """
    import numpy as np

    def g(x):
        return x * x

    def f(x):
        return g(x) * 3.0
"""


def test_callee_reloaded(make_module):
    mod = make_module("live_reload_a", CALLER)
    assert ta.grad(mod.f)(2.0) == 12.0
    mod = make_module("live_reload_a", CALLER.replace("return x * x", "return x * x * x"))
    assert ta.grad(mod.f)(2.0) == pytest.approx(36.0)


def test_callee_redefined_in_place(make_module):
    mod = make_module("live_redefine_a", CALLER)
    assert ta.grad(mod.f)(2.0) == 12.0
    run_cell(mod, "def g(x):\n    return x ** 3 + x * x * x\n", 1)
    assert ta.grad(mod.f)(2.0) == pytest.approx(72.0)


def test_grad_made_once_sees_the_new_callee(make_module):
    mod = make_module("live_once_a", CALLER)
    df = ta.grad(mod.f)
    vg = ta.value_and_grad(mod.f)
    assert df(2.0) == 12.0 and vg(2.0) == (12.0, 12.0)
    run_cell(mod, "def g(x):\n    return x * x * x\n", 1)
    assert df(2.0) == pytest.approx(36.0)
    assert vg(2.0) == pytest.approx((24.0, 36.0))
    assert ta.jvp(mod.f, (2.0,), (1.0,)) == pytest.approx((24.0, 36.0))
    out, pullback = ta.vjp(mod.f, 2.0)
    assert (out, pullback(1.0)) == pytest.approx((24.0, 36.0))


def test_module_constant_rebound(make_module):
    mod = make_module("live_const_a", """
        SCALE = 2.0

        def h(x):
            return SCALE * x
    """)
    vg = ta.value_and_grad(mod.h)
    assert vg(1.0) == (2.0, 2.0)
    mod.SCALE = 50.0
    assert vg(1.0) == (50.0, 50.0)
    assert ta.value_and_grad(mod.h)(1.0) == (50.0, 50.0)
    assert ta.grad(mod.h)(1.0) == 50.0
    assert ta.jvp(mod.h, (1.0,), (1.0,)) == (50.0, 50.0)


def test_module_constant_rebound_to_another_kind(make_module):
    mod = make_module("live_const_kind_a", """
        import numpy as np
        SCALE = 2.0

        def h(x):
            return np.sum(SCALE * x)
    """)
    df = ta.grad(mod.h)
    assert df(1.0) == 2.0
    mod.SCALE = np.array([1.0, 2.0, 3.0])
    assert df(1.0) == pytest.approx(6.0)


def test_constant_read_by_a_callee(make_module):
    mod = make_module("live_callee_const_a", """
        SCALE = 2.0

        def g(x):
            return SCALE * x * x

        def f(x):
            return g(x) * 3.0
    """)
    df = ta.grad(mod.f)
    assert df(2.0) == pytest.approx(24.0)
    mod.SCALE = 5.0
    assert df(2.0) == pytest.approx(60.0)
    assert ta.jvp(mod.f, (2.0,), (1.0,)) == pytest.approx((60.0, 60.0))


def test_callee_in_another_module_reached_by_attribute(make_module):
    make_module("live_other_b", "def g(x):\n    return x * x\n")
    mod = make_module("live_attr_a", """
        import live_other_b

        def f(x):
            return live_other_b.g(x) * 3.0
    """)
    df = ta.grad(mod.f)
    assert df(2.0) == 12.0
    make_module("live_other_b", "def g(x):\n    return x * x * x\n")
    assert df(2.0) == pytest.approx(36.0)
    assert ta.jvp(mod.f, (2.0,), (1.0,)) == pytest.approx((24.0, 36.0))


def test_callee_of_a_callee(make_module):
    mod = make_module("live_transitive_a", """
        def k(x):
            return x * x

        def g(x):
            return k(x) + 1.0

        def f(x):
            return g(x) * 3.0
    """)
    df = ta.grad(mod.f)
    assert df(2.0) == 12.0
    run_cell(mod, "def k(x):\n    return x * x * x\n", 1)
    assert df(2.0) == pytest.approx(36.0)
    assert ta.grad(mod.f)(2.0) == pytest.approx(36.0)


def test_closure_cell_rebound():
    def make():
        scale = 2.0

        def h(x):
            return scale * x

        def set_scale(value):
            nonlocal scale
            scale = value
        return h, set_scale

    h, set_scale = make()
    vg = ta.value_and_grad(h)
    assert vg(1.0) == (2.0, 2.0)
    set_scale(50.0)
    assert vg(1.0) == (50.0, 50.0)
    assert ta.jvp(h, (1.0,), (1.0,)) == (50.0, 50.0)


def test_code_replaced(make_module):
    mod = make_module("live_code_a", CALLER + """
    def cube(x):
        return x * x * x
    """)
    df = ta.grad(mod.f)
    assert df(2.0) == 12.0
    mod.g.__code__ = mod.cube.__code__
    assert df(2.0) == pytest.approx(36.0)


def test_builtin_shadowed_later(make_module):
    mod = make_module("live_shadow_a", """
        def f(x):
            return abs(x) * 2.0
    """)
    df = ta.grad(mod.f)
    assert df(-1.0) == -2.0
    run_cell(mod, "def abs(x):\n    return x * x\n", 1)
    assert df(-1.0) == pytest.approx(-4.0)


def test_disk_cache_does_not_reuse_a_module_derived_from_an_older_callee(make_module, tmp_path):
    cache = tmp_path / "cache"
    mod = make_module("live_disk_a", CALLER)
    rule = ta.derive(mod.f, "reverse", args=(2.0,), cache=cache)
    assert "live_disk_a:g=" in rule.source
    assert rule.bwd(rule.fwd(2.0)[1], 1.0) == 12.0
    mod = make_module("live_disk_a", CALLER.replace("return x * x", "return x * x * x"))
    # a new process: its own session, the same cache directory
    from tangent_ast.pipeline import Session
    fresh = Session(cache).rule(mod.f, "reverse", 0, (ta.vocabulary.kinds.kind_of(2.0),))
    assert fresh.bwd(fresh.fwd(2.0)[1], 1.0) == pytest.approx(36.0)


def test_disk_cache_records_the_kinds_of_values_read(make_module, tmp_path):
    cache = tmp_path / "cache"
    mod = make_module("live_disk_kind_a", """
        import numpy as np
        SCALE = 2.0

        def h(x):
            return np.sum(SCALE * x)
    """)
    rule = ta.derive(mod.h, "reverse", args=(1.0,), cache=cache)
    assert "# reads: SCALE=float" in rule.source
    mod.SCALE = np.array([1.0, 2.0])
    from tangent_ast.pipeline import Session
    fresh = Session(cache).rule(mod.h, "reverse", 0, (ta.vocabulary.kinds.kind_of(1.0),))
    assert "# reads: SCALE=array1f" in fresh.source
    assert fresh.bwd(fresh.fwd(1.0)[1], 1.0) == pytest.approx(3.0)


def test_edited_rule_is_kept_when_a_callee_changes(make_module, tmp_path):
    cache = tmp_path / "cache"
    mod = make_module("live_edited_a", CALLER)
    rule = ta.derive(mod.f, "reverse", args=(2.0,), cache=cache)
    edited = rule.source.replace("* 3.0", "* 4.0")
    rule.path.write_text(edited)
    run_cell(mod, "def g(x):\n    return x * x * x\n", 1)
    from tangent_ast.cache.load import StaleRuleWarning
    from tangent_ast.pipeline import Session
    with pytest.warns(StaleRuleWarning):
        again = Session(cache).rule(mod.f, "reverse", 0, (ta.vocabulary.kinds.kind_of(2.0),))
    assert again.source == edited


def test_unchanged_program_keeps_the_rule(make_module):
    mod = make_module("live_same_a", CALLER)
    session = ta.api.api._session()
    first = session.rule(mod.f, "reverse", 0, (ta.vocabulary.kinds.kind_of(2.0),))
    assert session.rule(mod.f, "reverse", 0, (ta.vocabulary.kinds.kind_of(2.0),)) is first
    mod.UNRELATED = 1.0
    assert session.rule(mod.f, "reverse", 0, (ta.vocabulary.kinds.kind_of(2.0),)) is first


# Effects: derivative code keeps every call the rule table does not mark pure, in order,
# exactly once per primal execution, so the random stream ends where the primal leaves it.

def unused_global_draw(x):
    _ = np.random.random()
    return x * 2.0


def draw_used_in_a_loop(x):
    n = np.random.random()
    for _ in range(3):
        x = x * n + np.random.random()
    return x


def draw_in_each_iteration(x):
    for _ in range(3):
        n = np.random.random()
        x = x * n
    return x


def unused_generator_draw(x, rng):
    z = rng.normal()  # noqa: F841 (unused on purpose: the draw must still happen)
    return x * 3.0


def generator_draw_used(x, rng):
    noise = rng.normal(size=3)
    return np.sum(x * noise)


def unused_print(x):
    y = print("effect")  # noqa: F841 (unused on purpose: the print must still happen)
    return x * 2.0


def _state_after(call):
    np.random.seed(0)
    result = call()
    return result, np.random.random()


@pytest.mark.usefixtures("unverified")
@pytest.mark.parametrize("fn", [unused_global_draw, draw_used_in_a_loop, draw_in_each_iteration])
def test_global_random_stream_as_the_primal_leaves_it(fn):
    value, expected = _state_after(lambda: fn(1.5))
    for derived in (lambda: ta.grad(fn)(1.5), lambda: ta.value_and_grad(fn)(1.5)[0],
                    lambda: ta.jvp(fn, (1.5,), (1.0,))[0], lambda: ta.vjp(fn, 1.5)[0]):
        _, after = _state_after(derived)
        assert after == expected
    assert _state_after(lambda: ta.value_and_grad(fn)(1.5))[0][0] == value
    assert _state_after(lambda: ta.jvp(fn, (1.5,), (1.0,)))[0][0] == value


def test_a_draw_is_saved_not_drawn_again_backwards():
    np.random.seed(0)
    draws = np.random.random(3)
    np.random.seed(0)
    assert ta.grad(draw_in_each_iteration)(1.5) == pytest.approx(np.prod(draws))


def test_vjp_pullback_does_not_draw_again():
    np.random.seed(0)
    draw_used_in_a_loop(1.5)
    expected = np.random.random()
    np.random.seed(0)
    _, pullback = ta.vjp(draw_used_in_a_loop, 1.5)
    pullback(1.0)
    pullback(1.0)
    assert np.random.random() == expected


@pytest.mark.parametrize("fn, x", [(unused_generator_draw, 1.5), (generator_draw_used, np.ones(3))])
def test_generator_passed_in_as_the_primal_leaves_it(fn, x):
    rng = np.random.default_rng(0)
    value = fn(x, rng)
    expected = rng.random()
    for derived in (lambda r: ta.value_and_grad(fn)(x, r), lambda r: ta.jvp(fn, (x, r), (np.ones_like(x), None)),
                    lambda r: ta.vjp(fn, x, r, wrt=0)):
        rng = np.random.default_rng(0)
        out = derived(rng)
        assert rng.random() == expected
        assert np.allclose(out[0], value)


def test_seed_inside_the_function():
    def seeded(x):
        np.random.seed(3)
        return x * np.random.random()

    np.random.seed(1)
    value = seeded(2.0)
    expected = np.random.random()
    np.random.seed(1)
    assert ta.value_and_grad(seeded)(2.0)[0] == value
    assert np.random.random() == expected


@pytest.mark.usefixtures("unverified")
def test_unused_print_runs_once(capsys):
    ta.grad(unused_print)(1.0)
    ta.jvp(unused_print, (1.0,), (1.0,))
    assert capsys.readouterr().out == "effect\neffect\n"


# One def, several closures: a rule is derived for the code a closure's cells hold (and the
# kinds of its data), never reused for another closure of the same def.

X4 = np.array([0.3, -0.2, 0.5, 0.1])
W4 = np.array([1.0, 2.0, -1.0, 0.5])
ROUTES = ["direct", "transpose"]


def check_spectrum(fft_fun, n):
    def fun(x, w):
        z = fft_fun(x, n)
        return np.sum(np.real(z) * w)

    return fun


@pytest.mark.parametrize("route", ROUTES)
def test_closures_over_two_functions_get_two_rules(route):
    from tangent_ast.testing import check_grads

    forward = ta.grad(check_spectrum(np.fft.fft, 4), route=route)(X4, W4)
    inverse = ta.grad(check_spectrum(np.fft.ifft, 4), route=route)(X4, W4)
    np.testing.assert_allclose(forward, np.real(np.fft.fft(W4)))
    np.testing.assert_allclose(inverse, np.real(np.fft.fft(W4)) / 4)
    for fft_fun in (np.fft.fft, np.fft.ifft, np.fft.fft):
        check_grads(check_spectrum(fft_fun, 4), (X4, W4), route=route)


def test_a_module_on_disk_is_not_reused_for_another_function_in_a_cell(tmp_path):
    cache = tmp_path / "cache"
    from tangent_ast.pipeline import Session

    kinds = (ta.vocabulary.kinds.kind_of(X4), ta.vocabulary.kinds.kind_of(W4))
    first = Session(cache).rule(check_spectrum(np.fft.fft, 4), "reverse", 0, kinds)
    assert "fft_fun=numpy.fft.fft" in first.source
    # a new process: its own session, the same cache directory
    other = Session(cache).rule(check_spectrum(np.fft.ifft, 4), "reverse", 0, kinds)
    assert other.path != first.path
    np.testing.assert_allclose(other.bwd(other.fwd(X4, W4)[1], 1.0), np.real(np.fft.fft(W4)) / 4)


def apply_to(g):
    def fun(x, w):
        return np.sum(g(x) * w)

    return fun


def make_scaled(c):
    def scaled(x):
        return c * np.sin(x)

    return scaled


def make_calling(h):
    def calls(x):
        return h(x) * 2.0

    return calls


def two_of(a, b):
    def fun(x, w):
        return np.sum((a(x) + 2.0 * b(x)) * w)

    return fun


SAME_LINE = [lambda x: np.sin(x), lambda x: np.cos(x)]  # noqa: E731


CLOSURES = {
    "constants": [make_scaled(2.0), make_scaled(5.0)],
    "arrays": [make_scaled(W4), make_scaled(W4[::-1].copy())],
    "kinds": [make_scaled(2.0), make_scaled(W4)],
    "lambdas on one line": [apply_to(SAME_LINE[0]), apply_to(SAME_LINE[1])],
    # before NumPy 2.2 a ufunc has no __qualname__: its name tells np.sin from np.cos
    "ufuncs": [apply_to(np.sin), apply_to(np.cos), apply_to(np.arctan)],
    "closures over closures": [
        apply_to(make_calling(np.sin)),
        apply_to(make_calling(np.cos)),
    ],
    "swapped": [two_of(np.sin, np.cos), two_of(np.cos, np.sin)],
    "two closures of one def in one rule": [
        two_of(make_scaled(2.0), make_scaled(5.0)),
        two_of(make_calling(np.sin), make_calling(np.tanh)),
    ],
}


def _with_w(fn):
    """A function of (x, w) for each closure (make_scaled's take x only)."""
    if fn.__code__.co_argcount == 2:
        return fn

    def fun(x, w):
        return np.sum(fn(x) * w)

    return fun


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("case", sorted(CLOSURES))
def test_closures_of_one_def_each_get_their_rule(case, route):
    from tangent_ast.testing import check_grads

    for fn in CLOSURES[case] + CLOSURES[case][:1]:  # and back to the first
        check_grads(_with_w(fn), (X4, W4), route=route)


class Scaled:
    def __init__(self, k):
        self.k = k

    def times(self, x):
        return self.k * x * x


def test_closures_over_bound_methods_are_refused():
    with pytest.raises(ta.MissingRuleError, match="Scaled.times"):
        ta.grad(apply_to(Scaled(2.0).times))(X4, W4)


def test_a_global_function_rebound_between_calls(make_module, tmp_path):
    mod = make_module("live_rebound_function_a", """
        import numpy as np

        act = np.sin

        def f(x):
            return np.sum(act(x))
    """)
    df = ta.grad(mod.f)
    np.testing.assert_allclose(df(X4), np.cos(X4))
    mod.act = np.tanh
    np.testing.assert_allclose(df(X4), 1 - np.tanh(X4) ** 2)
    # a new process, the same cache directory: the module derived for np.sin is stale
    cache = tmp_path / "cache"
    from tangent_ast.pipeline import Session

    mod.act = np.sin
    Session(cache).rule(mod.f, "reverse", 0, (ta.vocabulary.kinds.kind_of(X4),))
    mod.act = np.tanh
    again = Session(cache).rule(mod.f, "reverse", 0, (ta.vocabulary.kinds.kind_of(X4),))
    assert "# calls: act=numpy.tanh" in again.source
    np.testing.assert_allclose(again.bwd(again.fwd(X4)[1], 1.0), 1 - np.tanh(X4) ** 2)


def make_layer(w):
    def layer(x):
        return np.tanh(w @ x)

    return layer


FIRST = make_layer(np.eye(3) + 0.5)
SECOND = make_layer(np.eye(3)[::-1] * 2.0)


def two_layers(x):
    return np.sum(SECOND(FIRST(x)) ** 2)


def test_two_closures_of_one_def_called_by_one_rule_each_get_their_cells():
    from tangent_ast.testing import check_grads

    x = np.array([0.2, -0.4, 0.9])
    for route in ROUTES:
        check_grads(two_layers, (x,), route=route)
    rule = ta.derive(two_layers, "reverse", args=(x,))
    assert "closure-rules:" in rule.source
    # differentiated again: the rules of each closure's rule functions get their cells too
    check_grads(two_layers, (x,), order=2)


@pytest.mark.parametrize("case", ["swapped", "two closures of one def in one rule"])
def test_closures_of_one_def_at_second_order(case):
    from tangent_ast.testing import check_grads

    for fn in CLOSURES[case]:
        check_grads(_with_w(fn), (X4, W4), order=2)


GLOBAL_INSTANCE = """
    import numpy as np

    class A:
        def __init__(self, w):
            self.w = w

        def loss(self, x):
            return np.sum(np.sin(self.w * x))

    class B(A):
        def loss(self, x):
            return np.sum(np.cos(self.w * x) ** 2)

    MODEL = A(0.5)

    def f(x):
        return MODEL.loss(x) * 2.0
"""


def test_a_global_instance_rebound_or_changed(make_module):
    mod = make_module("live_global_instance", GLOBAL_INSTANCE)
    x = np.array([0.3, 0.7])
    gradient = ta.grad(mod.f)
    np.testing.assert_allclose(gradient(x), np.cos(0.5 * x))
    mod.MODEL = mod.B(0.5)  # another class: its method's rule
    np.testing.assert_allclose(gradient(x), -np.sin(x) * 0.5 * 2)
    mod.MODEL.w = 1.5  # the instance's value, read when the rule runs
    np.testing.assert_allclose(gradient(x), -np.sin(3.0 * x) * 1.5 * 2)
