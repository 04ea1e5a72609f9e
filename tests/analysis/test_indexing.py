"""Indexing: an element, a view or a copy, as NumPy decides, and what updates through it do.

Two tables. The first checks :func:`tangent_ast.analysis.indexing.indexing` against NumPy itself
(the index is run and its result asked whether it shares memory). The second derives
``s = a[index]; s <op>= c`` for every index form, rank, augmented operator, on an argument
and on a local array, and checks each rule (both modes, both routes) with ``check_grads``:
the primal value, the derivative and the state the caller's array is left in.
"""

import itertools
import linecache

import gast
import numpy as np
import pytest

from tangent_ast.errors import UnsupportedSyntaxError
from tangent_ast.analysis.indexing import Indexing, indexing
from tangent_ast.vocabulary.kinds import Kind, Tag
from tangent_ast.testing import check_grads

# index text, the names it may use; every form of basic and advanced indexing
INDEX_FORMS = [
    "1",
    "-1",
    "i",
    "1, 0",
    "i, 0",
    "1, 0, 1",
    "()",
    "1:",
    "::2",
    "1:3, 0",
    "..., 1",
    "1, ...",
    "None, 1",
    "1, None",
    "[0, 2]",
    "1, [0]",
    "mask",
    "True",
]
NAME_KINDS = {
    "i": Kind(Tag.INT),
    "mask": Kind(Tag.ARRAY, 1, "b"),
}


def _index_node(text):
    return gast.parse(f"a[{text}]").body[0].value.slice


def _numpy_says(a, text):
    env = {"a": a, "i": 1, "mask": np.arange(a.shape[0] if a.ndim else 3) % 2 == 0}
    try:
        result = eval(f"a[{text}]", env)
    except IndexError:
        return None
    if not isinstance(result, np.ndarray):
        return Indexing.ELEMENT
    return Indexing.VIEW if np.shares_memory(result, a) else Indexing.COPY


@pytest.mark.parametrize("ndim", [0, 1, 2, 3])
@pytest.mark.parametrize("text", INDEX_FORMS)
def test_indexing_follows_numpy(text, ndim):
    a = np.arange(3.0**ndim).reshape((3,) * ndim)
    expected = _numpy_says(a, text)
    got = indexing(_index_node(text), ndim, NAME_KINDS.get)
    if expected is None:  # NumPy raises: nothing to follow, as long as no element is assumed
        assert got in (Indexing.UNKNOWN, Indexing.COPY, Indexing.VIEW)
    else:
        assert got is expected
    # without the rank, an index of integers only may be either; anything else is decided
    unranked = indexing(_index_node(text), None, NAME_KINDS.get)
    assert unranked in (got, Indexing.UNKNOWN)


def test_unknown_parts_are_never_assumed():
    assert indexing(_index_node("k"), 1, {}.get) is Indexing.UNKNOWN
    assert indexing(_index_node("k + 1"), 1, NAME_KINDS.get) is Indexing.UNKNOWN
    assert indexing(_index_node("1.5"), 1, NAME_KINDS.get) is Indexing.UNKNOWN


OPS = ["+=", "-=", "*=", "/="]
_counter = itertools.count()


def _function(src):
    filename = f"<indexing-table-{next(_counter)}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    namespace = {"np": np}
    exec(compile(src, filename, "exec"), namespace)
    return namespace["f"]


def _update_through(index, op, on_argument):
    base = "x" if on_argument else "a"
    return _function(
        "def f(x):\n"
        "    i = 1\n"
        "    mask = x > 0.9\n"
        + ("" if on_argument else "    a = x * 2.0\n")
        + f"    s = {base}[{index}]\n"
        f"    s {op} 1.5\n"
        f"    return np.sum(s * s) + np.sum({base} * {base})\n"
    )


def _rows():
    ops = itertools.cycle(OPS)
    for ndim, index, on_argument in itertools.product([1, 2, 3], INDEX_FORMS, [True, False]):
        a = np.zeros((3,) * ndim)
        if index in ("True", "()") or _numpy_says(a, index) is None:
            continue
        yield pytest.param(
            ndim,
            index,
            next(ops),
            on_argument,
            id=f"{ndim}d-[{index}]-" + ("argument" if on_argument else "local"),
        )


@pytest.mark.parametrize("ndim, index, op, on_argument", list(_rows()))
@pytest.mark.parametrize("route", ["direct", "transpose"])
def test_update_through_an_index_leaves_the_caller_as_python_does(
    ndim, index, op, on_argument, route, tmp_path
):
    f = _update_through(index, op, on_argument)
    x = np.random.default_rng(ndim).uniform(0.5, 1.5, size=(3,) * ndim)
    modes = ("forward", "reverse") if route == "direct" else ("reverse",)
    check_grads(f, (x,), modes=modes, route=route, cache=tmp_path)


def test_the_element_of_a_vector_is_a_new_scalar(tmp_path):
    """``s = w[2]; s += 1.0``: the caller's ``w`` is left alone by every entry point."""
    import tangent_ast as ta

    def f(w):
        s = w[2]
        s += 1.0
        return s * w[0]

    w0 = np.array([0.5, 0.2, 0.031])
    for call in (
        lambda w: ta.grad(f, cache=tmp_path)(w),
        lambda w: ta.vjp(f, w, cache=tmp_path)[1](1.0),
        lambda w: ta.jvp(f, (w,), (np.ones(3),), cache=tmp_path),
        lambda w: ta.grad(f, cache=tmp_path, route="transpose")(w),
    ):
        w = w0.copy()
        call(w)
        np.testing.assert_array_equal(w, w0)
    np.testing.assert_allclose(ta.grad(f, cache=tmp_path)(w0.copy()), [1.031, 0.0, 0.5])


@pytest.mark.parametrize("index", ["1:", "..., 1", "None, 1"])
def test_a_view_read_after_its_base_changes_is_refused(index, tmp_path):
    """``s = a[1:]; a += 2.0``: Python's ``s`` sees the new values; the derived rules
    would keep the old ones, so the update is refused (it was a wrong value)."""
    f = _function(
        "def f(x):\n"
        "    a = x * 2.0\n"
        f"    s = a[{index}]\n"
        "    a += 2.0\n"
        "    return np.sum(s * s) + np.sum(a * a)\n"
    )
    with pytest.raises(UnsupportedSyntaxError, match="'s', a view of it, is read later"):
        check_grads(f, (np.ones(3),), cache=tmp_path)


def test_without_kinds_an_index_may_be_a_view_and_is_refused_saying_so(tmp_path):
    """A generic rule (no example arguments): ``w[2]`` is an element of a vector and a row of
    a matrix, so the update is refused, saying why and what to do; never assumed."""
    import tangent_ast as ta

    def f(w):
        s = w[2]
        s += 1.0
        return s * w[0]

    for mode in ("forward", "reverse"):
        with pytest.raises(UnsupportedSyntaxError, match="may be a view of 'w'") as info:
            ta.derive(f, mode, cache=tmp_path)
        assert "args=" in str(info.value)


def _indexed_by_lists(c, order):
    rows = c[[0, 2, 1]]
    cols = c[:, [1, 1]]
    named = c[order]
    return rows, cols, named


def test_a_list_of_ints_as_the_one_advanced_index_keeps_the_axis():
    from tangent_ast.pipeline import front
    from tangent_ast.vocabulary.kinds import signature_of

    c = np.arange(9.0).reshape(3, 3)
    f = front(_indexed_by_lists, signature_of((c, [2, 0, 1])))
    for name in ("rows", "cols", "named"):
        kind = f.kinds[name]
        assert kind.tag is Tag.ARRAY and kind.ndim == 2, (name, kind)
