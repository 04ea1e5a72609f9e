"""The free names a function reads, from its source parsed by the standard library.

Takes a Python function; guarantees the tree of its source (as :func:`tangent_ast.parse.parse`
reads it: the dedented ``def`` of its code object, decorators dropped) and the names it
reads that it does not assign, with the attribute chains read from them, exactly as a walk
of its gast tree finds them (``resolve.assigned_names``; a gast tree writes each parameter
and ``except ... as e`` as a ``Name``, which is why they are added here by hand). It
imports no gast: what a rule was derived against (:mod:`tangent_ast.live`) and what its
loader binds (:mod:`tangent_ast.load`) are checked without the transformer.

>>> SCALE = 2.0
>>> def f(x):
...     y = SCALE * x
...     return np.sin(y)
>>> sorted(free_reads(function_tree(f)))
[('SCALE', ()), ('np', ()), ('np', ('sin',))]
"""

import ast
import inspect
import textwrap

from .errors import NoSourceError, UnsupportedSyntaxError
from .trees import walk


def source_lines(fn):
    """``inspect.getsourcelines(fn.__code__)`` (the code's own source, not a wrapped
    function's), its file's module found from ``fn.__module__``: for a code object, inspect
    finds it by resolving the path of every module loaded, milliseconds on first use."""
    lines, start = inspect.findsource(fn)  # a function's lines are its code's
    known = _BLOCKS.get(fn.__code__)
    # linecache gives the same list until the file changes: the block is found again then
    if known is None or known[0] is not lines:
        known = _BLOCKS[fn.__code__] = (lines, inspect.getblock(lines[start:]), start + 1)
    return list(known[1]), known[2]


# code object -> (its file's lines, its block, first line): a check reads a function's
# source several times (its hash, what it reads, what its loader binds)
_BLOCKS: dict = {}


def source_text(fn):
    """``inspect.getsource(fn.__code__)``, as :func:`source_lines` finds it."""
    return "".join(source_lines(fn)[0])


def function_tree(fn):
    """The ``ast.FunctionDef`` of ``fn``'s source, as ``parse`` reads it (a lambda: the def
    it stands for); raises what ``parse`` raises for a function without readable source."""
    fn = getattr(fn, "__func__", fn)
    if not inspect.isfunction(fn) or fn.__name__ == "<lambda>":
        # a lambda is singled out among those of its line by the parse stage (gast): rare
        # enough in a program's functions to cost the import of the transformer
        import gast

        from .parse import parse

        return gast.gast_to_ast(parse(fn).node)
    try:
        lines, _ = source_lines(fn)
    except (OSError, TypeError) as exc:
        raise NoSourceError(f"cannot read the source of {fn.__qualname__}") from exc
    try:
        module = ast.parse(textwrap.dedent("".join(lines)))
    except SyntaxError as exc:
        raise NoSourceError(f"the source of {fn.__qualname__} does not parse on its own") from exc
    node = module.body[0]
    if not isinstance(node, ast.FunctionDef):
        raise UnsupportedSyntaxError(f"{fn.__qualname__} is not a plain def")
    node.decorator_list = []
    return node


def _parameters(args):
    return [a.arg for a in args.args + args.kwonlyargs + args.posonlyargs]


def assigned_names(node):
    """The names ``node`` (a function) assigns: ``resolve.assigned_names`` of its gast tree."""
    names = set(_parameters(node.args))
    for extra in (node.args.vararg, node.args.kwarg):
        if extra is not None:
            names.add(extra.arg)
    for n in walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            names.add(n.id)
        elif isinstance(n, ast.ExceptHandler) and n.name is not None:
            names.add(n.name)  # a Name in gast
        elif n is not node and isinstance(n, (ast.FunctionDef, ast.Lambda)):
            # a local function (inlined by normalize): its name and parameters are local
            names |= {a.arg for a in n.args.args}
            if isinstance(n, ast.FunctionDef):
                names.add(n.name)
    return names


def free_reads(node):
    """``(name, attribute chain)`` of every free name a function reads: ``mod.g`` ->
    ``("mod", ("g",))``, and ``("mod", ())`` for the name itself."""
    local = assigned_names(node)
    found = {}
    for n in walk(node):
        if isinstance(n, ast.Attribute):
            chain, base = [], n
            while isinstance(base, ast.Attribute):
                chain.append(base.attr)
                base = base.value
            if isinstance(base, ast.Name) and base.id not in local:
                chain.reverse()
                found[(base.id, tuple(chain))] = None
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in local:
            found.setdefault((n.id, ()), None)
    return list(found)
