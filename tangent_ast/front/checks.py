"""The constructs tangent_ast refuses, found before any lowering runs.

``check_supported`` takes the parsed function and raises UnsupportedSyntaxError at the
first construct outside what the stages handle (``yield``, ``global``, ``try``, a class
defined inside, ...), naming the file, the line and what to write instead;
``check_dynamic`` refuses code that computes names at run time (``eval``, ``exec``,
``locals()``, ``getattr`` with a computed name), which no source transformation can follow.

>>> from tangent_ast.front.lowering import lower_source
>>> lower_source('''
... def f(xs):
...     for x in xs:
...         yield x
... ''')
Traceback (most recent call last):
...
tangent_ast.errors.UnsupportedSyntaxError: <lowering example ...>:3: yield is not supported
  hint: generators cannot be differentiated: return a value
"""

import builtins

import gast

from ..errors import UnsupportedSyntaxError
from ..vocabulary.trees import walk
from .local_functions import functions_written_out, local_functions, why_not_inlined

_MOVE_OUT = "move it outside the differentiated function"


_UNSUPPORTED = {
    gast.AsyncFor: ("an async for loop", "use a plain for loop"),
    gast.ClassDef: ("a class definition inside the function", "define the class at module level"),
    gast.FunctionDef: ("a nested def", "define the helper at module level and call it"),
    gast.AsyncFunctionDef: ("a nested async def", "define the helper at module level"),
    gast.Global: (
        "a global statement",
        "mutable globals are not supported: pass the value as an argument and return the new value",
    ),
    gast.Nonlocal: ("a nonlocal statement", "pass the value as an argument and return it"),
    gast.With: (
        "a with block left by return, break or continue, or binding more than a name",
        "leave the block at its end, or move it outside the differentiated function",
    ),
    gast.AsyncWith: ("an async with block", _MOVE_OUT),
    gast.Try: (
        "a return, break or continue inside try ... finally",
        "compute the result in the try block and return it after the finally block",
    ),
    gast.Delete: ("del", "drop the del: a name going out of use needs no statement"),
    gast.Import: ("an import inside the function", "import at module level"),
    gast.ImportFrom: ("an import inside the function", "import at module level"),
    gast.Yield: ("yield", "generators cannot be differentiated: return a value"),
    gast.YieldFrom: ("yield from", "generators cannot be differentiated: return a value"),
    gast.Await: ("await", "async functions cannot be differentiated"),
    gast.NamedExpr: ("an assignment expression (:=)", "assign on a line of its own"),
    gast.DictComp: ("a dict comprehension", "write the loop out"),
    gast.GeneratorExp: (
        "a generator expression here",
        "use it as sum(...)'s argument, or write a list comprehension",
    ),
    gast.Starred: (
        "a starred argument (*t) other than the function's own *args parameter",
        "pass the arguments one by one",
    ),
}


def unsupported(parsed, node, what=None, hint=None):
    what_default, hint_default = _UNSUPPORTED.get(type(node), (type(node).__name__, None))
    return UnsupportedSyntaxError(
        f"{what or what_default} is not supported",
        where=parsed.where(node),
        hint=hint or hint_default,
    )


def _lowered(n):
    """Constructs of ``_UNSUPPORTED`` the lowering handles in these forms: ``del`` of names,
    ``:=`` on a name, ``with`` a context manager (``as`` a name) around a body it is left
    at the end of (no ``return``, ``break`` or ``continue`` out of it), ``try``/``except``
    without ``finally``."""
    if isinstance(n, gast.Delete):
        return all(isinstance(t, gast.Name) for t in n.targets)
    if isinstance(n, gast.NamedExpr):
        return isinstance(n.target, gast.Name)
    if isinstance(n, gast.Try):  # the try body is derived, then the finally block
        return not n.finalbody or not _leaves_early(n.body + n.orelse + n.handlers)
    if isinstance(n, gast.With):  # entered and left around its body (lowering/contexts.py)
        return not _leaves_early(n.body) and all(
            item.optional_vars is None or isinstance(item.optional_vars, gast.Name)
            for item in n.items
        )
    return False


def _leaves_early(stmts):
    """A ``return``, ``break`` or ``continue`` (of this function's own loops or body) in
    ``stmts``: with a ``finally``, the block would then run at a jump, not after the body."""
    return any(
        isinstance(n, (gast.Return, gast.Break, gast.Continue)) for s in stmts for n in gast.walk(s)
    )


def check_supported(parsed):
    """Raise UnsupportedSyntaxError at the first construct outside what the stages handle."""
    node = parsed.node
    definitions = [d for found in local_functions(node).values() for d, _ in found]
    inlined = {id(d) for d in definitions}
    inlined |= {id(d.value) for d in definitions if isinstance(d, gast.Assign)}
    inlined |= {  # nonlocal declarations of an inlined def: its names are the caller's
        id(b)
        for d in definitions
        if isinstance(d, gast.FunctionDef)
        for b in d.body
        if isinstance(b, gast.Nonlocal)
    }
    every = walk(node)  # read four times below
    # f(x for x in xs): a generator as a call's argument is read as a list comprehension
    inlined |= {
        id(a)
        for n in every
        if isinstance(n, gast.Call)
        for a in n.args
        if isinstance(a, gast.GeneratorExp)
    }
    inlined |= {id(n) for n in every if _lowered(n)}
    inlined |= {
        id(f)
        for n in every
        if isinstance(n, gast.Call)
        for f in functions_written_out(n)
        if isinstance(f, gast.Lambda)
    }
    for n in every:
        if (
            n is not node
            and type(n) in _UNSUPPORTED
            and not isinstance(n, gast.Starred)
            and id(n) not in inlined
        ):
            if isinstance(n, gast.FunctionDef):
                raise unsupported(
                    parsed,
                    n,
                    why_not_inlined(node, n),
                    "define the helper at module level and call it",
                )
            raise unsupported(parsed, n)
    args = node.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
        raise unsupported(
            parsed,
            node,
            "*args, **kwargs, keyword-only or positional-only "
            "parameters in the differentiated function",
            "give the differentiated function plain positional parameters",
        )


_DYNAMIC = {
    "eval",
    "exec",
    "compile",
    "globals",
    "locals",
    "vars",
    "__import__",
    "setattr",
    "delattr",
}


def check_dynamic(parsed, scope):
    """Refuse code whose meaning is only known when it runs (``eval("x * 2")``, ``locals()``,
    ``getattr(m, name)`` with a computed name): its derivative cannot be read from the source,
    and treating it as a constant would give a silent zero."""
    for n in walk(parsed.node):
        if not isinstance(n, gast.Call) or not isinstance(n.func, gast.Name):
            continue
        target = scope.lookup(n.func)
        if (
            target is not None
            and getattr(builtins, n.func.id, None) is target
            and n.func.id in _DYNAMIC
        ):
            raise unsupported(
                parsed,
                n,
                f"{n.func.id}(...), whose code is only known when it runs",
                "write the expression itself in the function",
            )
        if target is getattr and (len(n.args) < 2 or not isinstance(n.args[1], gast.Constant)):
            raise unsupported(
                parsed,
                n,
                "getattr with a name computed when it runs",
                "write the attribute itself: obj.name",
            )
