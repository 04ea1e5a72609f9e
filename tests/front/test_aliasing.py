"""``v = <expression>; v[0] = ...``: an update in place of an array the function made.

A table of the expressions NumPy code makes arrays with. Those that always make a new array
are followed (checked: value, derivative, the arguments' state; both modes, both routes);
those that may give an argument itself or a view of it (``np.reshape``, ``x.ravel()``,
``np.diff(x, n=0)``, ``np.real``) are followed as updates of that argument or refused, never
wrong. The tangent of a new array is one too: ``v = x + 0.0`` has the tangent ``dx``
itself, which the update of ``v`` must not write into."""

import linecache

import numpy as np
import pytest

import tangent_ast as ta
from tangent_ast.testing import check_grads

X = np.array([0.3, -0.7, 1.1])
Y = np.array([0.5, 1.5, -0.4])

NEW = [
    "np.where(x > 0.0, x, y)",
    "np.clip(x, -0.5, 0.9)",
    "np.sum(np.outer(x, y), axis=0)",
    "np.max(np.outer(x, y), axis=1)",
    "np.dot(np.outer(x, y), y)",
    "np.round(x * 3.0) + x",
    "np.roll(x, 1)",
    "np.append(x, y)[:3] * 1.0",
    "np.outer(x, y).flatten()",
    "(x * y).astype(float)",
    "x * 2.0 if x[0] > 0.0 else y * 3.0",
    "np.maximum(x, y)",
    "x + 0.0",
    "np.floor(x * 3.0) + x",
    "scaled(x, y)",
]

MAY_SHARE = [
    "np.tril(np.outer(x, y))[0]",
    "np.reshape(x, (3,))",
    "x.ravel()",
    "np.diff(x, n=0)",
    "np.real(x)",
    "np.asarray(x)",
    "x[::-1]",
    "(x * y).astype(float, copy=False)",
    "np.clip(x, -0.5, 0.9, out=x)",
    "passed_on(x, y)",
]


def scaled(a, b):
    if b[0] > 0.0:
        return a * b
    return np.sin(a) + b


def passed_on(a, b):
    return a


def _updating(expression):
    """``v = expression; v[0] = x[1] * y[0]; return np.sum(v * v)``, with its source."""
    filename = f"<aliasing {expression}>"
    source = (
        "def f(x, y):\n"
        f"    v = {expression}\n"
        "    v[0] = x[1] * y[0]\n"
        "    return np.sum(v * v) + np.sum(x * y)\n"
    )
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"np": np, "scaled": scaled, "passed_on": passed_on}
    exec(compile(source, filename, "exec"), namespace)
    return namespace["f"]


@pytest.mark.parametrize("route", [None, "transpose"])
@pytest.mark.parametrize("expression", NEW)
def test_an_update_of_a_new_array_is_followed(expression, route):
    kw = {"route": route} if route else {}
    check_grads(_updating(expression), [X.copy(), Y.copy()], **kw)


@pytest.mark.parametrize("expression", MAY_SHARE)
def test_an_update_of_what_may_share_an_argument_is_right_or_refused(expression):
    try:
        check_grads(_updating(expression), [X.copy(), Y.copy()])
    except ta.TangentAstError:
        pass
