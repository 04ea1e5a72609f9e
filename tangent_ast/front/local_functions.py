"""The nested functions of a ``def``, and whether each can be inlined where it is called.

A nested ``def`` (or ``g = lambda ...``) that is defined once at the top of the function,
with plain parameters, and only ever called, is inlined by :mod:`tangent_ast.front.lowering`;
``why_not_inlined`` says in words why another one is not (defined twice, inside a loop,
with ``nonlocal``, passed as a value, ...), for the error message.
"""

from dataclasses import dataclass, field

import gast

from ..vocabulary.syntax import is_docstring


@dataclass
class LocalFunction:
    """A nested ``def`` or a ``lambda`` bound to a name, inlined where it is called."""

    params: list
    body: list  # statements before the return
    result: object  # the returned expression
    shared: set = field(default_factory=set)  # names declared nonlocal: the caller's own


def local_functions(node):
    """The nested functions of ``node`` that can be inlined at their calls: name -> the
    ``(definition, LocalFunction)`` of each definition, in order (a name may be defined
    again: each call uses the definition before it).

    A nested ``def`` qualifies when it has plain positional parameters and either its only
    ``return`` is its last statement or it has none (it is called for its effect on the
    names it declares ``nonlocal``, which inlining leaves the caller's); ``g = lambda ...:``
    always does. Every definition of the name must qualify and sit at the top of the
    function (not in a loop or branch), and the name must only ever be called (never passed
    around)."""
    found: dict = {}
    for s in node.body:
        local = _inlinable(s)
        if local is not None:
            fn_name = s.name if isinstance(s, gast.FunctionDef) else s.targets[0].id
            found.setdefault(fn_name, []).append((s, local))
    for fn_name in list(found):
        defined = [
            n
            for n in gast.walk(node)
            if (isinstance(n, gast.FunctionDef) and n.name == fn_name and n is not node)
            or (
                isinstance(n, gast.Assign)
                and any(isinstance(t, gast.Name) and t.id == fn_name for t in n.targets)
            )
        ]
        uses = [n for n in gast.walk(node) if isinstance(n, gast.Name) and n.id == fn_name]
        calls = [
            n
            for n in gast.walk(node)
            if isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id == fn_name
        ] + [  # map(g, xs), sorted(xs, key=g): written out as calls of g
            f
            for n in gast.walk(node)
            if isinstance(n, gast.Call)
            for f in functions_written_out(n)
            if isinstance(f, gast.Name) and f.id == fn_name
        ]
        stores = [n for n in uses if isinstance(n.ctx, gast.Store)]
        loads = [n for n in uses if isinstance(n.ctx, gast.Load)]
        lambdas = [d for d, _ in found[fn_name] if isinstance(d, gast.Assign)]
        if (
            len(loads) != len(calls)
            or len(stores) != len(lambdas)
            or len(defined) != len(found[fn_name])
        ):
            del found[fn_name]
    return found


def _inlinable(s):
    """The LocalFunction of a statement defining one that can be inlined, or None."""
    if isinstance(s, gast.FunctionDef) and not s.decorator_list and _plain_params(s.args):
        body = [b for b in s.body if not is_docstring(b)]
        returns = [n for n in gast.walk(s) if isinstance(n, gast.Return)]
        shared = {n for b in body if isinstance(b, gast.Nonlocal) for n in b.names}
        body = [b for b in body if not isinstance(b, gast.Nonlocal)]
        nested = any(
            isinstance(n, (gast.FunctionDef, gast.Lambda, gast.Global, gast.Nonlocal))
            for b in body
            for n in gast.walk(b)
        )
        params = [a.id for a in s.args.args]
        if body and not nested and not returns:  # called for its effect on nonlocal names
            return LocalFunction(params, body, gast.Constant(None, None), shared)
        if (
            body
            and isinstance(body[-1], gast.Return)
            and len(returns) == 1
            and body[-1].value is not None
            and not nested
        ):
            return LocalFunction(params, body[:-1], body[-1].value, shared)
        return None
    if (
        isinstance(s, gast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], gast.Name)
        and isinstance(s.value, gast.Lambda)
        and _plain_params(s.value.args)
    ):
        return LocalFunction([a.id for a in s.value.args.args], [], s.value.body)
    return None


_TAKE_A_FUNCTION = {"map", "filter", "reduce"}
_TAKE_A_KEY = {"sorted", "min", "max"}


def functions_written_out(call):
    """The function arguments of a call the lowering writes out as loops that call them
    (``map(g, xs)``, ``sorted(xs, key=lambda t: ...)``; lowering/higher_order.py checks the
    callee once names are resolved)."""
    func = call.func
    called = func.id if isinstance(func, gast.Name) else getattr(func, "attr", None)
    if called in _TAKE_A_FUNCTION and call.args:
        return [call.args[0]]
    if called in _TAKE_A_KEY:
        return [kw.value for kw in call.keywords if kw.arg == "key"]
    return []


def why_not_inlined(node, definition):
    """What keeps a nested ``def`` from being inlined at its calls, in words."""
    name = definition.name
    defined = [n for n in gast.walk(node) if isinstance(n, gast.FunctionDef) and n.name == name]
    if len(defined) > 1 and any(d not in node.body for d in defined):
        return f"the local function {name!r} defined more than once, not all at the top"
    if definition not in node.body:
        return f"the local function {name!r} defined inside a loop, branch or another function"
    if definition.decorator_list or not _plain_params(definition.args):
        return (
            f"the local function {name!r} with decorators, *args, keyword-only parameters or "
            "defaults"
        )
    if any(isinstance(n, gast.Global) for n in gast.walk(definition)):
        return f"global in the local function {name!r}"
    if any(
        isinstance(n, gast.Nonlocal)
        for b in definition.body
        for n in gast.walk(b)
        if not isinstance(b, gast.Nonlocal)
    ):
        return f"nonlocal in a block of the local function {name!r}"
    body = [b for b in definition.body if not is_docstring(b)]
    if (
        not body
        or not isinstance(body[-1], gast.Return)
        or body[-1].value is None
        or len([n for n in gast.walk(definition) if isinstance(n, gast.Return)]) != 1
    ):
        return f"the local function {name!r}, whose only return is not its last statement"
    return (
        f"the local function {name!r} used other than by calling it (passed or stored as a value)"
    )


def _plain_params(args):
    return not (args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or args.defaults)
