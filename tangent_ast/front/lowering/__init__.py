"""Stage normalize: desugar to a small core, one operation per statement.

Takes the parsed function and its scope; guarantees a function whose body contains only

* ``a[index] = atom``: an in-place update of an array created in the function or of an
  array argument; ``xs[i] = v`` on a local list becomes ``xs = runtime.list_with(xs, i, v)``;
* ``name = <op>`` where ``<op>`` is an atom (name, constant, global such as ``np.pi``) or
  ONE operation on atoms: an operator, a single comparison, a call, an attribute read, a
  subscript (:mod:`.operations`);
* ``if atom: ... else: ...`` (:mod:`.conditionals`: ``elif``, ``a if c else b``,
  ``and``/``or`` and chained comparisons are lowered to it);
* ``for i in range(a, b, c):`` and ``while t:`` (:mod:`.loops`), with ``continue`` gone,
  ``break`` only ending a branch and ``return`` inside a loop a flag (:mod:`.jumps`);
* bare calls kept for their effect (``print(x)``), ``assert``, ``raise`` (:mod:`.calls`);
* exactly one ``return atom``, as the last statement (:mod:`.jumps`);
* no comprehensions (:mod:`.comprehensions`) and no local functions: a nested ``def`` or
  ``g = lambda ...`` that is only called is inlined at each call (:mod:`.inlining`).

One walk (:class:`~.walk.Normalizer`) visits the statements once; each construct's lowering
is a mixin class in its own module, so the state they share (names, scope, the result
name) lives in one object while the code for a construct stays in one place.

>>> print(lower_source('''
... def f(x, y):
...     if x > 0:
...         return x * np.sin(y)
...     return y
... '''))
def f(x, y):
    x_gt_zero = x > 0
    if x_gt_zero:
        sin = np.sin(y)
        out = x * sin
    else:
        out = y
    return out
"""

import ast
import copy
import functools
import linecache
import textwrap
import types

import numpy as np

from ...emit.emit import to_ast
from ...vocabulary.naming import Namer
from ..aliasing import check_updates
from ..checks import check_dynamic, check_supported
from ..parse import parse
from ..resolve import resolve
from .walk import Normalizer

__all__ = ["Normalizer", "lower_source"]


def lower_source(text):
    """The normalized source of the function defined in ``text`` (NumPy is ``np``, and
    ``functools`` is imported): how
    the examples in this package's docstrings are run."""
    source = textwrap.dedent(text).strip() + "\n"
    filename = f"<lowering example {abs(hash(source))}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"np": np, "functools": functools}
    exec(compile(source, filename, "exec"), namespace)
    fn = next(v for v in namespace.values() if isinstance(v, types.FunctionType))
    parsed = parse(fn)
    check_supported(parsed)
    scope = resolve(parsed)
    check_dynamic(parsed, scope)
    params = {a.id for a in parsed.node.args.args}
    updated, lists, dicts = check_updates(parsed, scope, None, set())
    normalizer = Normalizer(
        parsed, scope, Namer(scope.locals | set(scope.free)), updated & params, lists, dicts=dicts
    )
    return ast.unparse(to_ast(normalizer.function(copy.deepcopy(parsed.node))))
