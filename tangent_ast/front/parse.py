"""Stage parse: a Python function object -> its gast ``FunctionDef``.

Takes a function; guarantees a :class:`ParsedFunction` holding the gast tree
of its (dedented) source, without decorators, plus where it came from, so
every later error and every generated comment can cite ``file:line``.

>>> import numpy as np, tangent_ast as ta
>>> def f(x, y):
...     z = x * y  # the product
...     return z + np.sin(x)
>>> print(ta.show(f, stage="parse"))
def f(x, y):
    z = x * y  # the product
    return z + np.sin(x)
<BLANKLINE>
"""

import inspect
import linecache
import textwrap
import types
from dataclasses import dataclass, field

import gast

from ..errors import NoSourceError, UnsupportedSyntaxError
from ..vocabulary.naming import rule_base, source_hash
from ..vocabulary.source import lambda_node
from ..vocabulary.stdlib_ast import parse_gast


@dataclass
class ParsedFunction:
    fn: types.FunctionType = field(repr=False)
    node: gast.FunctionDef = field(repr=False)
    filename: str
    first_line: int  # line of the function's first source line in ``filename``
    source: str = field(repr=False)
    source_hash: str
    module: str
    qualname: str
    # the tree's line numbers -> the lines of ``source`` they stand for, where a stage
    # numbered the statements again (helper_inlining.py); None: they are the lines
    line_map: dict | None = field(default=None, repr=False)

    @classmethod
    def of(cls, fn, node, filename, first_line, source):
        """The parse of ``fn``: its tree, where it is and the text it was read from."""
        return cls(
            fn=fn,
            node=node,
            filename=filename,
            first_line=first_line,
            source=source,
            source_hash=source_hash(source),
            module=fn.__module__ or "__main__",
            qualname=fn.__qualname__,
        )

    @property
    def name(self):
        return self.node.name

    def line(self, node):
        """The line in ``filename`` of a node of this function's tree."""
        return self.file_line(getattr(node, "lineno", None)) or self.first_line

    def file_line(self, lineno):
        """The line in ``filename`` of the tree's line number ``lineno`` (None for None)."""
        if not lineno:
            return None
        if self.line_map is not None:
            lineno = self.line_map.get(lineno, lineno)
        return self.first_line + lineno - 1

    def where_line(self, lineno):
        """``file:line`` of the tree's line number ``lineno`` (the function's first line for
        None)."""
        return f"{self.filename}:{self.file_line(lineno) or self.first_line}"

    def where(self, node=None):
        return f"{self.filename}:{self.line(node) if node is not None else self.first_line}"


def _parse_lambda(fn, filename):
    """A lambda as the def it stands for: ``lambda x: e`` is ``def lambda(x): return e``."""
    node = lambda_node(fn.__code__)
    lines = linecache.getlines(filename)[node.lineno - 1 : node.end_lineno]
    lines[-1] = lines[-1][: node.end_col_offset]
    lines[0] = lines[0][node.col_offset :]
    source = "".join(lines)
    for n in gast.walk(node):  # lines relative to the lambda's, as for a def's own source
        if getattr(n, "lineno", None) is not None:
            n.lineno -= node.lineno - 1
            n.end_lineno = (n.end_lineno or n.lineno) - (node.lineno - 1)
    first_line = fn.__code__.co_firstlineno
    body = gast.Return(value=node.body)
    definition = gast.FunctionDef(
        name=rule_base(fn),  # lambda_jvp, lambda_fwd, lambda_bwd
        args=node.args,
        body=[gast.copy_location(body, node.body)],
        decorator_list=[],
        returns=None,
        type_comment=None,
        type_params=[],
    )
    gast.copy_location(definition, node)
    return ParsedFunction.of(fn, definition, filename, first_line, source)


def parse(fn):
    """Read and parse the source of ``fn``."""
    fn = getattr(fn, "__func__", fn)
    name = getattr(fn, "__qualname__", repr(fn))
    if not inspect.isfunction(fn):
        raise NoSourceError(
            f"{name} is not a Python function (it is {type(fn).__name__})",
            hint="tangent_ast differentiates functions written in Python; "
            "for a builtin or extension function, register rules with "
            "tangent_ast.defjvp / tangent_ast.defvjp",
        )
    # From the code object: a functools.wraps wrapper has its own source, not the wrapped one's.
    filename = inspect.getsourcefile(fn.__code__) or fn.__code__.co_filename
    try:
        lines, first_line = inspect.getsourcelines(fn.__code__)
    except (OSError, TypeError) as exc:
        raise NoSourceError(
            f"cannot read the source of {name} (defined in {fn.__code__.co_filename})",
            where=f"{fn.__code__.co_filename}:{fn.__code__.co_firstlineno}",
            hint="define the function in a .py file or a notebook cell; functions made "
            "with exec/eval or typed at a bare interpreter prompt have no source",
        ) from exc
    if fn.__name__ == "<lambda>":
        return _parse_lambda(fn, filename)
    source = textwrap.dedent("".join(lines))
    try:
        module = parse_gast(source)
    except SyntaxError as exc:
        raise NoSourceError(
            f"the source of {name} does not parse on its own: {exc.msg}",
            where=f"{filename}:{first_line}",
        ) from exc
    node = module.body[0]
    if not isinstance(node, gast.FunctionDef):
        raise UnsupportedSyntaxError(
            f"{name} is not a plain def (found {type(node).__name__})",
            where=f"{filename}:{first_line}",
        )
    node.decorator_list = []
    return ParsedFunction.of(fn, node, filename, first_line, source)
