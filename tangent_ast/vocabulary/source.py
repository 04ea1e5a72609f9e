"""Finding the source of a lambda: which ``lambda`` of its line a code object is.

A lambda has no name and often shares its line with others (``defvjp(f, lambda ...,
lambda ...)``, ``grad(lambda x: ...)(lambda y: ...)``). On Python 3.11+ every instruction of
a code object records its column span (``co_positions``), which singles the lambda out;
on 3.10 the candidates of the line with the same parameters are compiled again and
compared, and lambdas written alike (``lambda ct, ans, x, y: ct`` twice) are one function.
A line whose lambdas cannot be told apart is refused: guessing could pick the wrong
function, and the wrong derivative would follow.

>>> import numpy as np
>>> square, cube = (lambda x: x * x), (lambda x: x * x * x)
>>> import ast, gast
>>> ast.unparse(gast.gast_to_ast(lambda_node(cube.__code__)))
'lambda x: x * x * x'
"""

import ast
import collections
import hashlib
import inspect
import linecache

import gast

from ..errors import NoSourceError
from .stdlib_ast import as_gast
from .trees import copy_tree, dump

_PARSED: dict[tuple[str, str], tuple[ast.Module, dict[int, list]]] = {}
# (file, hash of its text) -> its tree, and the lambdas found so far by the line they start on
_AS_GAST: dict[int, gast.Lambda] = {}  # id of a lambda of _PARSED -> it as gast


def _lambdas_on(filename, line):
    """The ``ast`` lambdas of a file that start on ``line``, in ``ast.walk``'s order (each
    version of the file parsed once).

    Parsed by ``ast`` and converted to gast one lambda at a time, when asked for: a rule
    table's file holds hundreds of lambdas, and converting it whole costs ~20 ms; walking
    it whole, ~4 ms per file, so only the nodes whose lines hold ``line`` are walked."""
    text = "".join(linecache.getlines(filename))
    key = (filename, hashlib.sha256(text.encode()).hexdigest())
    if key not in _PARSED:
        try:
            tree = ast.parse(text)
        except SyntaxError:
            tree = ast.Module(body=[], type_ignores=[])
        _PARSED[key] = (tree, {})
    tree, by_line = _PARSED[key]
    if line not in by_line:
        by_line[line] = [
            n for n in _walk_spanning(tree, line) if isinstance(n, ast.Lambda) and n.lineno == line
        ]
    return by_line[line]


def _walk_spanning(tree, line):
    """``ast.walk(tree)`` without the nodes whose lines do not hold ``line`` (nor what they
    hold): breadth first as it, so the nodes left come in its order. A node without lines
    (``arguments``, a context) is walked."""
    todo = collections.deque([tree])
    while todo:
        node = todo.popleft()
        todo.extend(
            child
            for child in ast.iter_child_nodes(node)
            if _first_line(child, line) <= line <= getattr(child, "end_lineno", line)
        )
        yield node


def _first_line(node, default):
    """The line ``node``'s source starts on: its decorators' lines come before a ``def``'s."""
    decorators = getattr(node, "decorator_list", ())
    return min([getattr(node, "lineno", default)] + [d.lineno for d in decorators])


def _as_gast(node):
    if id(node) not in _AS_GAST:
        _AS_GAST[id(node)] = as_gast(node)
    return _AS_GAST[id(node)]


def lambda_node(code):
    """A copy of the gast ``Lambda`` whose compiled code is ``code``; NoSourceError if the
    source cannot be read or the lambda cannot be told apart from another on its line."""
    filename = code.co_filename
    where = f"{filename}:{code.co_firstlineno}"
    arg_names = list(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])
    candidates = [
        n
        for n in map(_as_gast, _lambdas_on(filename, code.co_firstlineno))
        if [a.id for a in n.args.posonlyargs + n.args.args + n.args.kwonlyargs] == arg_names
    ]
    if len(candidates) > 1 and hasattr(code, "co_positions"):  # Python 3.11+: columns
        candidates = [n for n in candidates if _spans(n, code)]
    if len(candidates) > 1:
        candidates = [n for n in candidates if _same_code(n, code, filename)]
    if len(candidates) > 1 and len({dump(n) for n in candidates}) == 1:
        candidates = candidates[:1]  # written alike on one line, in one scope: the same function
    if not candidates:
        raise NoSourceError(
            "cannot read the source of this lambda",
            where=where,
            hint="define the function in a .py file or a notebook cell (or with def)",
        )
    if len(candidates) > 1:
        raise NoSourceError(
            "this lambda cannot be told apart from another one with the same parameters on "
            "its line",
            where=where,
            hint="put the lambdas on separate lines, or define the function with def",
        )
    return copy_tree(candidates[0])  # the parsed file is cached: never hand it out


def _spans(node, code):
    """Whether every instruction of ``code`` lies within the source span of ``node``."""
    start = (node.lineno, node.col_offset)
    end = (node.end_lineno, node.end_col_offset)
    return all(
        start <= (line, col) <= end
        for line, _, col, end_col in code.co_positions()
        if line is not None and col is not None and (col, end_col) != (0, 0)  # (0, 0): none
    )


def _same_code(node, code, filename):
    tree = ast.Expression(gast.gast_to_ast(copy_tree(node)))
    ast.fix_missing_locations(tree)
    compiled = compile(tree, filename, "eval")
    inner = next(c for c in compiled.co_consts if inspect.iscode(c))
    return all(
        getattr(inner, part) == getattr(code, part)  # names: np.sin and np.cos differ there only
        for part in ("co_code", "co_consts", "co_names", "co_varnames", "co_freevars")
    )
