"""Calls of the user's helpers that update an argument in place: their bodies, inlined.

Takes the parsed function and its resolved scope; guarantees that each call, as a
statement (``h(a, x)``), an assignment's value (``y = h(a, x)``) or a ``return``'s, of a
module-level ``def`` of the user's that updates a parameter in place (``a += b``,
``a[i] = v``, ``a.append(v)``, ``out=a``) and is given a name of this function there is
replaced by the helper's body: the names it is given stand for its parameters, its own
names are renamed apart, its globals are bound in this function's scope and its final
``return`` becomes the assignment. The in-place updates are then this function's own,
which the later stages follow (or refuse) as if the user had written them here: the
caller's array changes as it does when the program runs, and its derivative with it.

Substituting the caller's name for a parameter is exact only where the helper never
rebinds the parameter: ``a += b`` rebinds a float, so a parameter updated that way is
substituted only when the name given for it is surely an array or a list (a new one of
``np.zeros``, ``.copy()``, ..., or an array argument). A call that does not qualify (a
helper calling itself, one with ``*args``, a nested ``return``, globals that generated code
could not import, ...) is left as it is, for the later stages to derive or refuse.

The inlined statements carry the line of the call; the function's statements are then
numbered again in program order (the stages order updates and reads by line), and
``ParsedFunction.line`` maps the numbers back to the lines of the file.

>>> import numpy as np
>>> from tangent_ast.front.parse import parse
>>> from tangent_ast.front.resolve import resolve
>>> from tangent_ast.vocabulary.naming import Namer
>>> def scale_first(v, c):
...     v[0] = v[0] * c
>>> scale_first.__module__ = "example"  # a user's module (this example runs in tangent_ast's)
>>> def f(x):
...     y = np.zeros(2)
...     y[:] = x
...     scale_first(y, x[0])
...     return np.sum(y)
>>> parsed = parse(f)
>>> scope = resolve(parsed)
>>> inlined = inline_updating_helpers(parsed, scope, Namer(scope.locals | set(scope.free)), {})
>>> print(gast.unparse(inlined.node).strip())  # doctest: +NORMALIZE_WHITESPACE
def f(x):
    y = np.zeros(2)
    y[:] = x
    c = x[0]
    y[0] = y[0] * c
    return np.sum(y)
>>> [inlined.line(s) - inlined.first_line + 1 for s in inlined.node.body]
[2, 3, 4, 4, 5]
"""

import copy
import inspect
import itertools
import sys
from dataclasses import replace

import gast
import numpy as np

from ..errors import TangentAstError
from ..rules.registry import lookup
from ..vocabulary.code_keys import is_library
from ..vocabulary.kinds import Kind, Tag
from ..vocabulary.syntax import assign, is_docstring, located, written_targets
from ..vocabulary.trees import walk
from .aliasing import changed_list, is_new_list, out_target
from .checks import check_dynamic, check_supported
from .new_arrays import new_array_call
from .parse import parse
from .resolve import assigned_names, resolve

# a helper inlined in a helper ...: deeper than this, the call is left to its own rule
_MAX_DEPTH = 8
# a helper with one of these in its body is not inlined (its own rule is derived)
_NOT_INLINED = (
    gast.FunctionDef,
    gast.Lambda,
    gast.ClassDef,
    gast.Global,
    gast.Nonlocal,
    gast.Yield,
    gast.YieldFrom,
    gast.Await,
)


def inline_updating_helpers(parsed, scope, namer, param_kinds):
    """``parsed`` with the qualifying calls inlined (see the module docstring), or
    ``parsed`` itself when there is none. ``scope`` gains the helpers' renamed names and
    the globals they read; ``param_kinds``: the signature's kind of each parameter."""
    inliner = _Inliner(parsed, scope, namer, param_kinds)
    node = copy.deepcopy(parsed.node)
    node.body = inliner.block(node.body, (), top_level=True)
    if not inliner.inlined:
        return parsed
    return replace(parsed, node=node, line_map=_renumber(node, parsed.line_map))


class _Inliner:
    def __init__(self, parsed, scope, namer, param_kinds):
        self.parsed = parsed
        self.scope = scope
        self.namer = namer
        self.param_kinds = param_kinds
        self.inlined = False
        self.top = 0

    def block(self, stmts, chain, top_level=False):
        out = []
        for i, s in enumerate(stmts):
            if top_level:
                self.top = i  # the statement of the function's body the calls below are in
            for field in ("body", "orelse", "finalbody"):
                if not isinstance(s, (gast.FunctionDef, gast.ClassDef)) and isinstance(
                    getattr(s, field, None), list
                ):
                    setattr(s, field, self.block(getattr(s, field), chain))
            for handler in getattr(s, "handlers", []):
                handler.body = self.block(handler.body, chain)
            out += self.statement(s, chain)
        return out

    def statement(self, s, chain):
        """``s``, or the statements of the helper it calls, inlined."""
        call = s.value if isinstance(s, (gast.Expr, gast.Assign, gast.Return)) else None
        if not isinstance(call, gast.Call) or len(chain) >= _MAX_DEPTH:
            return [s]
        helper = self.scope.lookup(call.func)
        if not _is_users_def(helper) or helper in chain:
            return [s]
        try:
            plan = _Plan.of(helper, call, self)
        except TangentAstError:
            return [s]
        if plan is None:
            return [s]
        body = plan.statements(s)
        for n in body:
            for m in gast.walk(n):
                if hasattr(m, "lineno"):
                    m.lineno = m.end_lineno = s.lineno
        self.inlined = True
        return self.block(body, (*chain, helper))

    def surely_mutable(self, arg):
        """Whether the name ``arg`` is an array or a list where the call is: bound last by
        a statement of the function's body before the call's, and not in the call's own, to
        one; or one wherever it is bound. ``arg += v`` then changes it in place."""
        body = self.parsed.node.body
        last = next(
            (j for j in range(self.top - 1, -1, -1) if _binds(body[j], arg)),
            None,
        )
        if (
            last is not None
            and isinstance(body[last], gast.Assign)
            and len(body[last].targets) == 1
            and isinstance(body[last].targets[0], gast.Name)
            and not _binds(body[self.top], arg)
        ):
            return self.mutable(body[last].value, frozenset({arg}))
        return self.bound_to(arg, self.mutable, frozenset())

    def bound_to(self, arg, test, seen):
        """Whether every binding of the name ``arg`` passes ``test`` (a parameter: its
        kind; ``a += v``: keeps what ``a`` was); False where one is not known (a loop's
        target, an unpacking, ``with ... as``)."""
        if arg in seen:
            return False
        node = self.parsed.node
        stores = [
            n
            for n in walk(node)
            if isinstance(n, gast.Name) and n.id == arg and isinstance(n.ctx, gast.Store)
        ]
        values = [
            n.value
            for n in walk(node)
            if isinstance(n, gast.Assign)
            and any(isinstance(t, gast.Name) and t.id == arg for t in n.targets)
        ]
        augmented = [
            n
            for n in walk(node)
            if isinstance(n, gast.AugAssign)
            and isinstance(n.target, gast.Name)
            and n.target.id == arg
        ]
        if len(stores) != len(values) + len(augmented):
            return False
        if arg in {a.id for a in node.args.args}:
            kind = self.param_kinds.get(arg)
            if kind is None or not test(kind, seen | {arg}):
                return False
        elif not values:
            return False
        return all(test(v, seen | {arg}) for v in values)

    def mutable(self, value, seen):
        """A list or an array (a kind, or an expression making a new one)."""
        if isinstance(value, Kind):
            return value.tag in (Tag.ARRAY, Tag.LIST)
        if is_new_list(value, self.scope) or self.has_axes(value, seen):
            return True
        if not isinstance(value, gast.Call):
            return False
        if isinstance(value.func, gast.Attribute) and value.func.attr == "copy":
            return True
        return new_array_call(value, self.scope.lookup(value.func))

    def has_axes(self, value, seen):
        """Whether ``value`` is surely an array of one or more axes (arithmetic on a 0-d
        array gives a NumPy scalar, which ``+=`` rebinds)."""
        if isinstance(value, Kind):
            return value.tag is Tag.ARRAY and value.ndim is not None and value.ndim >= 1
        if isinstance(value, gast.Name):
            return self.bound_to(value.id, self.has_axes, seen)
        if isinstance(value, gast.BinOp) and isinstance(value.op, _ELEMENTWISE):
            return self.has_axes(value.left, seen) or self.has_axes(value.right, seen)
        if isinstance(value, gast.UnaryOp) and isinstance(value.op, (gast.USub, gast.UAdd)):
            return self.has_axes(value.operand, seen)
        if not isinstance(value, gast.Call) or value.keywords:
            return False
        if isinstance(value.func, gast.Attribute) and value.func.attr == "copy":
            return not value.args and self.has_axes(value.func.value, seen)
        obj = self.scope.lookup(value.func)
        first = value.args[0] if value.args else None
        if isinstance(obj, np.ufunc) and len(value.args) == obj.nin:  # broadcasts its arguments
            return any(self.has_axes(a, seen) for a in value.args)
        if any(obj is getattr(np, f) for f in _SAME_SHAPE):
            return first is not None and self.has_axes(first, seen)
        if any(obj is getattr(np, f) for f in _OF_SHAPE):
            return (isinstance(first, (gast.Tuple, gast.List)) and bool(first.elts)) or (
                isinstance(first, gast.Constant) and type(first.value) is int
            )
        return False


def _binds(stmt, name):
    """Whether ``stmt`` binds ``name`` anywhere in it (``+=`` included)."""
    return any(
        isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Store)
        for n in walk(stmt)
    )


_ELEMENTWISE = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.FloorDiv, gast.Mod, gast.Pow)
# NumPy functions whose result has the shape of their first argument / the shape it gives
_SAME_SHAPE = ("zeros_like", "ones_like", "empty_like", "full_like", "copy", "array")
_OF_SHAPE = ("zeros", "ones", "empty", "full")


class _Plan:
    """How one call of a helper is inlined: what stands for each parameter."""

    def __init__(self, parsed, body, result, stands_for, bound_first):
        self.parsed = parsed
        self.body = body  # the helper's statements before its final return
        self.result = result  # the returned expression, or None
        # parameter -> the caller's name given for it, or the number (a gast.Constant)
        self.stands_for = stands_for
        self.bound_first = bound_first  # [(fresh name, value)] assigned before the body

    @classmethod
    def of(cls, helper, call, inliner):
        """The plan for ``call`` of ``helper``, or None if it is not inlined."""
        h = parse(helper)
        node = h.node
        args = node.args
        if args.vararg or args.kwarg or args.kwonlyargs or getattr(args, "posonlyargs", []):
            return None
        if any(isinstance(a, gast.Starred) for a in call.args) or any(
            k.arg is None for k in call.keywords
        ):
            return None
        check_supported(h)
        h_scope = resolve(h)
        check_dynamic(h, h_scope)
        body = [b for b in node.body if not is_docstring(b)]
        if not body or any(isinstance(n, _NOT_INLINED) for b in body for n in gast.walk(b)):
            return None
        returns = [n for b in body for n in gast.walk(b) if isinstance(n, gast.Return)]
        result = None
        if returns:
            if len(returns) > 1 or body[-1] is not returns[0] or returns[0].value is None:
                return None
            result, body = returns[0].value, body[:-1]
        params = [a.id for a in args.args]
        given = _bind_arguments(params, args.defaults, call, helper)
        if given is None:
            return None
        updated = _updated_in_place(body, h_scope, params)
        caller = inliner.scope
        if not any(
            p in updated and isinstance(a, gast.Name) and caller.is_local(a.id)
            for p, a in given.items()
        ):
            return None  # nothing of ours changes: the helper's own rule is derived
        stores = _name_stores(body)
        stands_for, bound_first = {}, []
        for p, a in given.items():
            kinds = stores.get(p, set())
            named = isinstance(a, gast.Name) and caller.is_local(a.id)
            # the caller's name stands for a parameter the helper never rebinds, or only
            # updates with ``+=`` when the name is surely an array or a list
            if named and (
                not kinds or (kinds == {gast.AugAssign} and inliner.surely_mutable(a.id))
            ):
                stands_for[p] = a.id
            elif p in updated and (named or kinds):
                return None  # the helper's update would reach the caller's value by a second name
            elif isinstance(a, gast.Constant) and not kinds:
                stands_for[p] = a  # a number (a default's): written where the helper reads it
            else:
                bound_first.append((p, a))
        return cls(h, body, result, stands_for, bound_first).renamed(inliner, h_scope)

    def renamed(self, inliner, h_scope):
        """The plan with the helper's names made the caller's (None if a global of the
        helper cannot be bound in the caller's scope)."""
        constants = {p: c for p, c in self.stands_for.items() if isinstance(c, gast.Constant)}
        renames = {p: n for p, n in self.stands_for.items() if p not in constants}
        own = assigned_names(self.parsed.node) - set(self.stands_for)
        for n in sorted(own):
            renames[n] = inliner.namer.fresh(n)
            inliner.scope.locals.add(renames[n])
        for n, obj in h_scope.free.items():
            bound = _bind_global(inliner.scope, inliner.namer, n, obj, self.parsed.fn)
            if bound is None:
                return None
            renames[n] = bound
        self.body = [_substituted(b, renames, constants) for b in self.body]
        if self.result is not None:
            self.result = _substituted(self.result, renames, constants)
        self.bound_first = [(renames[p], v) for p, v in self.bound_first]
        return self

    def statements(self, s):
        """The statements standing for ``s``, the call's statement."""
        out = [assign(name, value, s) for name, value in self.bound_first]
        out += self.body
        if self.result is None and isinstance(s, (gast.Assign, gast.Return)):
            self.result = gast.Constant(value=None, kind=None)  # what a call without return gives
        if isinstance(s, gast.Assign):
            out.append(
                located(gast.Assign(targets=s.targets, value=self.result, type_comment=None), s)
            )
        elif isinstance(s, gast.Return):
            out.append(located(gast.Return(value=self.result), s))
        elif self.result is not None and _has_calls(self.result):
            # ``h(a)`` for its effect: a result computed by a call is still computed
            out.append(located(gast.Expr(value=self.result), s))
        return out


def _substituted(tree, renames, constants):
    """``tree`` with names renamed and the parameters given numbers read as those."""

    class Substitute(gast.NodeTransformer):
        def visit_Name(self, n):
            if n.id in constants and isinstance(n.ctx, gast.Load):
                return gast.copy_location(copy.copy(constants[n.id]), n)
            n.id = renames.get(n.id, n.id)
            return n

    return Substitute().visit(tree)


def _is_users_def(obj):
    """A plain function of the user's program: no rule of its own, not a library's, not
    tangent_ast's runtime (derived code calls its helpers by the conventions their rules
    declare)."""
    module = getattr(obj, "__module__", None) or ""
    return (
        inspect.isfunction(obj)
        and obj.__name__ != "<lambda>"
        and not is_library(module)
        and module.partition(".")[0] != "tangent_ast"
        and lookup(obj) is None
    )


def _bind_arguments(params, defaults, call, helper):
    """Parameter -> the expression the call gives it (a default's value as a constant);
    None when the call does not match or a default is not a plain constant."""
    given = dict(zip(params, call.args, strict=False))
    if len(call.args) > len(params):
        return None
    for k in call.keywords:
        if k.arg not in params or k.arg in given:
            return None
        given[k.arg] = k.value
    first_default = len(params) - len(defaults)
    for i, p in enumerate(params):
        if p in given:
            continue
        if i < first_default:
            return None
        value = helper.__defaults__[i - first_default]
        if not isinstance(value, (int, float, complex, bool, str, type(None))):
            return None
        given[p] = gast.Constant(value=value, kind=None)
    return given  # in the order Python evaluates them: positional, keywords, defaults


def _updated_in_place(body, scope, params):
    """The parameters the statements update in place: an item or slice assigned, ``p += v``
    (in place when ``p`` is an array or a list), a method that changes a list, ``out=p``,
    or may update: given to another function of the user's."""
    updated = set()
    for n in (m for b in body for m in gast.walk(b)):
        for t in written_targets(n):
            base = t
            while isinstance(base, (gast.Subscript, gast.Attribute)):
                base = base.value
            if isinstance(base, gast.Name) and base is not t:
                updated.add(base.id)
        if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
            updated.add(n.target.id)
        if isinstance(n, gast.Expr):
            for changed in (changed_list(n.value, scope), out_target(n.value)):
                if changed is not None:
                    updated.add(changed)
        if (
            isinstance(n, gast.Call)
            and isinstance(n.func, gast.Attribute)
            and isinstance(n.func.value, gast.Name)
            and n.func.attr in _CHANGING_METHODS
        ):
            updated.add(n.func.value.id)
        if isinstance(n, gast.Call) and _is_users_def(scope.lookup(n.func)):
            # given to another helper of the user's, which may update it: inlined too
            updated |= {
                a.id for a in [*n.args, *(k.value for k in n.keywords)] if isinstance(a, gast.Name)
            }
    return updated & set(params)


# methods that change their receiver in place (lists, dicts, arrays)
_CHANGING_METHODS = {
    "append",
    "extend",
    "insert",
    "pop",
    "remove",
    "clear",
    "sort",
    "reverse",
    "update",
    "setdefault",
    "popitem",
    "fill",
    "resize",
    "put",
    "itemset",
    "setfield",
    "partition",
}


def _name_stores(body):
    """Name -> the kinds of statement that bind it (Assign, AugAssign, For, ...)."""
    stores: dict = {}
    for b in body:
        for n in gast.walk(b):
            if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
                stores.setdefault(n.target.id, set()).add(gast.AugAssign)
                continue
            for m in gast.iter_child_nodes(n):
                if isinstance(m, gast.Name) and isinstance(m.ctx, gast.Store):
                    stores.setdefault(m.id, set()).add(type(n))
    return stores


def _bind_global(scope, namer, name, obj, helper):
    """The caller's name for the helper's global ``name`` (``obj``), bound in its scope if
    it has none; None where generated code could not import it."""
    if scope.free.get(name, _MISSING) is obj and not scope.is_local(name):
        return name
    if isinstance(obj, type(np)) or _importable(obj):
        return scope.bind(obj, namer, name)
    module = getattr(helper, "__module__", None)
    home = inspect.getmodule(helper)
    if (
        module not in (None, "__main__")
        and home is not None
        and getattr(home, name, _MISSING) is obj
        and name not in namer.taken
    ):
        namer.reserve(name)
        scope.free[name] = obj
        scope.homes[name] = module
        return name
    return None


def _importable(obj):
    """A function or class that is a global of its own, importable module."""
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if not module or module == "__main__" or not qualname or "." in qualname or "<" in qualname:
        return False
    return getattr(sys.modules.get(module), qualname, _MISSING) is obj


_MISSING = object()


def _has_calls(expr):
    return any(isinstance(n, gast.Call) for n in gast.walk(expr))


def _renumber(node, line_map):
    """Number the statements of ``node`` again in program order (each expression takes its
    statement's number); the map from the new numbers to the lines of the source."""
    numbers = itertools.count(node.lineno + 1)
    new_map = {node.lineno: _original(line_map, node.lineno)}

    def visit(s):
        number = next(numbers)
        new_map[number] = _original(line_map, s.lineno)
        for _, value in gast.iter_fields(s):
            children = value if isinstance(value, list) else [value]
            for child in children:
                if isinstance(child, (gast.stmt, gast.excepthandler)):
                    visit(child)
                elif isinstance(child, gast.AST):
                    for m in gast.walk(child):
                        if hasattr(m, "lineno"):
                            m.lineno = m.end_lineno = number
        s.lineno = s.end_lineno = number

    for s in node.body:
        visit(s)
    return new_map


def _original(line_map, lineno):
    return line_map.get(lineno, lineno) if line_map else lineno
