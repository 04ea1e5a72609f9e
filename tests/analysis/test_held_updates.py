"""An array held in a record or container, updated in place (``p.w += v``, ``xs[0] *= v``,
``xs = [a, y]; a += v``): followed where no other name sees the array, refused where one
does. Each followed program is checked (value, derivative, the caller's arguments after the
call; both modes, both routes, first and second order); each refused one must be refused,
since following it would give a wrong value."""

import dataclasses
import linecache
import os
import textwrap

import numpy as np
import pytest

import tangent_ast as ta
from tangent_ast.testing import check_grads


@dataclasses.dataclass
class Layer:
    w: np.ndarray
    c: float


X = np.array([0.3, -0.7, 1.1])
Y = np.array([0.5, 1.5, -0.4])

# (name, body): ``def f(x, y)`` with x, y vectors; each updates an array a slot holds
FOLLOWED = [
    ("field", "p = Layer(x * 1.0, 0.5)\np.w += y\np.w *= p.w\nreturn np.sum(p.w)"),
    (
        "field_in_a_loop_and_branch",
        "p = Layer(np.sin(x), 0.5)\nfor _ in range(3):\n    p.w *= y\n"
        "    if np.sum(p.w) > 0.0:\n        p.w -= x\n    p.c = p.c + 1.0\n"
        "return np.sum(p.w) * p.c",
    ),
    (
        "dict_item",
        'd = {"a": x * 2.0, "b": y}\nd["a"] += y\nd["a"] *= d["b"]\nreturn np.sum(d["a"])',
    ),
    (
        "list_item",
        "xs = [y, x * 2.0]\nxs[-1] += y\nxs[0] = xs[0] * 2.0\nreturn np.sum(xs[1] * xs[0])",
    ),
    (
        "read_before",
        "a = x * 1.0\ns = np.sum(a * a)\np = Layer(a, 0.5)\np.w += y\nreturn s + np.sum(p.w * y)",
    ),
    ("held_in_a_list", "a = x * 1.0\nxs = [a, y]\na += y\nreturn np.sum(xs[0] * xs[1])"),
    (
        "held_in_a_tuple_twice",
        "a = np.exp(x)\nt = (a, a)\na *= y\na -= 1.0\nreturn np.sum(t[0] * t[1])",
    ),
    ("held_in_a_record", "a = np.cos(x)\np = Layer(a, 1.5)\na *= y\nreturn np.sum(p.w) * p.c"),
    ("given_to_numpy", "a = x * 1.0\nxs = [a, y]\na += y\nreturn np.sum(np.stack(xs) ** 2)"),
]

# another name holds the array the update changes: following the update would miss it
REFUSED = [
    (
        "made_under_a_name_read_later",
        "a = x * 1.0\np = Layer(a, 0.5)\np.w += y\nreturn np.sum(a * y)",
    ),
    ("read_out_before", "p = Layer(x * 1.0, 0.5)\nold = p.w\np.w *= y\nreturn np.sum(old * y)"),
    ("view_read_later", "p = Layer(x * 1.0, 0.5)\nt = p.w[1:]\np.w *= y\nreturn np.sum(t * t)"),
    (
        "older_name_in_a_loop",
        "p = Layer(x * 1.0, 0.5)\nt = p.w\ns = 0.0\nfor _ in range(2):\n"
        "    s = s + np.sum(t * y)\n    p.w *= y\nreturn s",
    ),
    (
        "in_two_records",
        "a = x * 1.0\np = Layer(a, 0.5)\nq = Layer(a, 2.0)\np.w += y\nreturn np.sum(q.w * y)",
    ),
    ("twice_in_a_list", "a = x * 1.0\nxs = [a, a]\nxs[0] += y\nreturn np.sum(xs[1] * y)"),
    ("an_argument_in_a_list", "xs = [x * 2.0, x]\nxs[1] += y\nreturn np.sum(xs[1] * xs[0])"),
    (
        "item_read_out",
        "a = x * 1.0\nxs = [a, y]\nfirst = xs[0]\na += y\nreturn np.sum(first * xs[1])",
    ),
    ("two_deep", "a = x * 1.0\nxs = [a, y]\nouter = [xs, 1.0]\na *= y\nreturn np.sum(outer[0][0])"),
]


def _function(name, body):
    """``def name(x, y): body``, its source where tangent_ast reads it (linecache)."""
    filename = f"<held_updates {name}>"
    source = f"def {name}(x, y):\n" + textwrap.indent(body, "    ") + "\n"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"np": np, "Layer": Layer}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("route", [None, "transpose"])
@pytest.mark.parametrize("name, body", FOLLOWED, ids=[n for n, _ in FOLLOWED])
def test_followed_updates_are_right(name, body, route, order):
    kw = {"route": route} if route else {}
    check_grads(_function(name, body), [X.copy(), Y.copy()], order=order, **kw)


@pytest.mark.parametrize("name, body", REFUSED, ids=[n for n, _ in REFUSED])
def test_updates_another_name_sees_are_refused(name, body):
    with pytest.raises(ta.TangentAstError, match="augmented assignment"):
        ta.grad(_function(name, body))(X.copy(), Y.copy())


def augments_the_argument_s_field(p, y):
    s = np.sum(p.w**2)
    for _ in range(2):
        p.w *= y
    p.w += 1.0
    p.c = p.c * 2.0
    return s + np.sum(np.sin(p.w)) * p.c


def test_a_dataclass_argument_s_array_is_updated_where_the_caller_holds_it():
    expected = Layer(X.copy(), 0.5)
    value = augments_the_argument_s_field(expected, Y)
    for derivative in (ta.grad, ta.value_and_grad):
        held = X.copy()
        layer = Layer(held, 0.5)
        derivative(augments_the_argument_s_field)(layer, Y)
        assert layer.w is held and np.allclose(held, expected.w) and layer.c == expected.c
    held, tangent = X.copy(), np.ones(3)
    layer = Layer(held, 0.5)
    out, _ = ta.jvp(augments_the_argument_s_field, (layer, Y), (Layer(tangent, 0.0), 0 * Y))
    assert np.isclose(out, value) and layer.w is held and np.allclose(held, expected.w)
    for order in (1, 2):
        for route in (None, "transpose"):
            kw = {"route": route} if route else {}
            check_grads(augments_the_argument_s_field, [Layer(X.copy(), 0.5), Y], order=order, **kw)


def assigns_a_field_updated_in_place(p, y):
    p.w += y
    p.w = p.w * 2.0
    return np.sum(p.w)


def reads_the_caller_s_array_after_its_update(p, y):
    old = p.w
    p.w += y
    return np.sum(old * y)


def test_what_the_caller_s_array_cannot_follow_is_refused():
    with pytest.raises(ta.TangentAstError, match="also updated in place"):
        ta.grad(assigns_a_field_updated_in_place)(Layer(X.copy(), 0.5), Y)
    with pytest.raises(ta.TangentAstError, match="augmented assignment"):
        ta.grad(reads_the_caller_s_array_after_its_update)(Layer(X.copy(), 0.5), Y)


def test_check_grads_sees_a_field_replaced_where_the_caller_s_array_was_written(monkeypatch):
    # a planted bug: the write-back replaces the field instead of writing into the array
    from tangent_ast import runtime
    from tangent_ast.testing import GradientCheckError

    written = runtime.write_fields

    def replaces_instead(given, new, in_place=()):
        written(given, new)

    monkeypatch.setattr(runtime, "write_fields", replaces_instead)
    with pytest.raises(GradientCheckError, match="left argument 0 in a different state"):
        check_grads(augments_the_argument_s_field, [Layer(X.copy(), 0.5), Y])


def augments_items_of_a_list_and_a_dict(xs, d, y):
    s = np.sum(xs[0] ** 2)
    xs[0] += y
    xs[-1] *= xs[0]
    for _ in range(2):
        d["a"] *= y
    return s + np.sum(xs[0] * xs[1]) + np.sum(np.sin(d["a"])) * d["s"]


def test_the_arrays_a_list_and_a_dict_argument_hold_are_updated_where_the_caller_holds_them():
    def given():
        return [X.copy(), Y.copy()], {"a": X * 2.0, "s": 0.5}

    xs, d = given()
    augments_items_of_a_list_and_a_dict(xs, d, Y)
    expected = (xs, d)
    xs, d = given()
    held = (xs[0], xs[1], d["a"])
    ta.grad(augments_items_of_a_list_and_a_dict)(xs, d, Y)
    assert all(a is b for a, b in zip(held, (xs[0], xs[1], d["a"]), strict=True))
    assert all(np.allclose(a, b) for a, b in zip(held, (*expected[0], expected[1]["a"])))
    for route in ("direct", "transpose"):
        check_grads(augments_items_of_a_list_and_a_dict, [*given(), Y], route=route)
    # second order: refused where the gradient is built by the transpose route (its rule
    # reads the list argument after writing it back), right where it is built directly
    transposed = os.environ.get("TANGENT_AST_ROUTE") == "transpose"
    for route in ("direct", "transpose"):
        try:
            check_grads(augments_items_of_a_list_and_a_dict, [*given(), Y], order=2, route=route)
        except ta.TangentAstError:
            assert route == "transpose" or transposed


def reads_an_item_of_the_caller_s_list_after_its_update(xs, y):
    old = xs[0]
    xs[0] += y
    return np.sum(old * y)


def appends_and_augments_the_caller_s_list(xs, y):
    xs[0] += y
    xs.append(y * 2.0)
    return np.sum(xs[0])


@pytest.mark.parametrize(
    "f",
    [reads_an_item_of_the_caller_s_list_after_its_update, appends_and_augments_the_caller_s_list],
)
def test_an_item_of_a_list_argument_another_name_sees_is_refused(f):
    with pytest.raises(ta.TangentAstError, match="augmented assignment"):
        ta.grad(f)([X.copy(), Y.copy()], Y)
