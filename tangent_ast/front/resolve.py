"""Stage resolve: every free name of the function -> the object it denotes.

Takes a :class:`ParsedFunction`; guarantees a :class:`Scope` that knows the
function's local names and, for every other name it reads, the object found
in its closure cells, its module globals or the builtins (in that order),
plus :func:`callee`, which says what a call or operator in the tree calls.

>>> import numpy as np
>>> from tangent_ast.front.parse import parse
>>> def f(x):
...     y = np.sin(x)
...     return y
>>> scope = resolve(parse(f))
>>> sorted(scope.locals), scope.free
(['x', 'y'], {'np': <module 'numpy' from '...'>})
"""

import builtins
import contextlib
import dataclasses
import inspect
import operator
import types
from dataclasses import dataclass, field
from typing import Any

import gast
import numpy as np

from ..errors import UnsupportedSyntaxError
from ..rules.binding import CallRefused
from ..rules.template import literal
from ..vocabulary.api_roles import Role, role_of
from ..vocabulary.code_keys import is_library
from ..vocabulary.kinds import Tag
from ..vocabulary.trees import walk

BINOPS = {
    gast.Add: operator.add,
    gast.Sub: operator.sub,
    gast.Mult: operator.mul,
    gast.Div: operator.truediv,
    gast.Pow: operator.pow,
    gast.MatMult: operator.matmul,
    gast.FloorDiv: operator.floordiv,
    gast.Mod: operator.mod,
    gast.BitAnd: operator.and_,
    gast.BitOr: operator.or_,
    gast.BitXor: operator.xor,
}
UNARYOPS = {
    gast.USub: operator.neg,
    gast.UAdd: operator.pos,
    gast.Not: operator.not_,
    gast.Invert: operator.invert,
}
COMPAREOPS = {
    gast.Lt: operator.lt,
    gast.LtE: operator.le,
    gast.Gt: operator.gt,
    gast.GtE: operator.ge,
    gast.Eq: operator.eq,
    gast.NotEq: operator.ne,
    gast.Is: operator.is_,
    gast.IsNot: operator.is_not,
    gast.In: operator.contains,
}


@dataclass
class Scope:
    locals: set
    free: dict = field(repr=False)  # name -> object
    # a name made for a call of tangent_ast's API -> how the function reads what it is made
    # of (``jvp_of_g`` -> ``"g"``, a free name or attribute chain): the closure whose rules it calls
    made_from: dict = field(default_factory=dict, repr=False)
    # a global an inlined helper reads, bound here -> the module generated code imports it
    # from (helper_inlining.py)
    homes: dict = field(default_factory=dict, repr=False)

    def is_local(self, name):
        return name in self.locals

    def lookup(self, expr):
        """The object a global name or dotted chain (``np.linalg.norm``) denotes, or None."""
        if isinstance(expr, gast.Name):
            if expr.id in self.locals:
                return None
            return self.free.get(expr.id)
        if isinstance(expr, gast.Attribute):
            base = self.lookup(expr.value)
            if base is None:
                return None
            return getattr(base, expr.attr, None)
        return None

    def bind(self, obj, namer, preferred):
        """The global name ``obj`` has in this scope, bound under a fresh name (``preferred``,
        or one made from it) where it has none (``runtime`` for derived code's helpers)."""
        bound = next((n for n, v in self.free.items() if v is obj), None)
        if bound is None:
            bound = namer.fresh(preferred)
            self.free[bound] = obj
        return bound

    def is_global_chain(self, expr):
        while isinstance(expr, gast.Attribute):
            expr = expr.value
        return isinstance(expr, gast.Name) and expr.id not in self.locals


class Pack:
    """The operation of building a container from its elements: ``(a, b)``, ``[a, b]``."""

    def __init__(self, kind: Tag, keys=None, cls=None, replaces=False):
        self.kind = kind
        self.keys = keys  # a dict literal's keys, or a record's field names, in order
        self.cls = cls  # the class a record is built with (dataclass or namedtuple)
        self.replaces = replaces  # dataclasses.replace(p, **changes): p with fields replaced
        self.__qualname__ = self.__name__ = "dataclasses.replace" if replaces else f"{kind} literal"
        self.__module__ = "builtins"

    def __repr__(self):
        return self.__name__


TUPLE_PACK = Pack(Tag.TUPLE)
LIST_PACK = Pack(Tag.LIST)


@dataclass
class CallSite:
    """One primitive operation: what is called and with which arguments.

    Syntax is mapped to functions: ``x * y`` calls ``operator.mul(x, y)``,
    ``x.sum(axis=0)`` calls ``numpy.ndarray.sum(x, axis=0)``, ``x.T`` reads
    the attribute ``(numpy.ndarray, "T")`` of ``x``.
    """

    # a function, a Pack, or (class, attribute) for an attribute read such as x.T
    fn: Any
    func: gast.expr | None  # the gast expression called (for calls), else None
    args: list  # gast atoms; a method's receiver comes first
    keywords: list
    method: str | None = None
    written: tuple | None = (
        None  # (args, keywords) as the call writes them, when ``args`` are canonical
    )
    slots: dict | None = None  # canonical position -> its position or keyword name in ``written``
    refused: CallRefused | None = None  # a call form the rule does not handle


def assigned_names(node):
    names = {a.id for a in node.args.args + node.args.kwonlyargs + node.args.posonlyargs}
    for extra in (node.args.vararg, node.args.kwarg):
        if extra is not None:
            names.add(extra.id)
    for n in walk(node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
            names.add(n.id)
        elif n is not node and isinstance(n, (gast.FunctionDef, gast.Lambda)):
            # a local function (inlined by normalize): its name and parameters are local
            names |= {a.id for a in n.args.args}
            if isinstance(n, gast.FunctionDef):
                names.add(n.name)
    return names


def resolve(parsed):
    fn = parsed.fn
    local = assigned_names(parsed.node)
    cells = {}
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__, strict=True):
            with contextlib.suppress(ValueError):  # an empty cell: the name is not bound yet
                cells[name] = cell.cell_contents
    free = {}
    for n in walk(parsed.node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id not in local:
            if n.id in cells:
                free[n.id] = cells[n.id]
            elif n.id in fn.__globals__:
                free[n.id] = fn.__globals__[n.id]
            elif hasattr(builtins, n.id):
                free[n.id] = getattr(builtins, n.id)
            else:
                raise UnsupportedSyntaxError(
                    f"name {n.id!r} is not defined",
                    where=parsed.where(n),
                    hint="define it before deriving the function",
                )
    return Scope(locals=local, free=free)


def callee(expr, scope, kind_of):
    """The :class:`CallSite` of a one-operation expression, or None for atoms.

    ``kind_of(atom)`` gives the kind of a local value (to resolve methods).
    """
    if isinstance(expr, gast.BinOp):
        return CallSite(BINOPS[type(expr.op)], None, [expr.left, expr.right], [])
    if isinstance(expr, gast.UnaryOp):
        return CallSite(UNARYOPS[type(expr.op)], None, [expr.operand], [])
    if isinstance(expr, gast.Compare):
        return CallSite(
            COMPAREOPS.get(type(expr.ops[0]), operator.eq),
            None,
            [expr.left, expr.comparators[0]],
            [],
        )
    if isinstance(expr, gast.Subscript):
        return CallSite(operator.getitem, None, [expr.value, expr.slice], [])
    if isinstance(expr, (gast.Tuple, gast.List)) and not all(
        isinstance(e, gast.Constant) for e in expr.elts
    ):
        return CallSite(
            TUPLE_PACK if isinstance(expr, gast.Tuple) else LIST_PACK, None, list(expr.elts), []
        )
    if isinstance(expr, gast.Dict):
        return CallSite(
            Pack(Tag.DICT, tuple(k.value for k in expr.keys)), None, list(expr.values), []
        )
    if isinstance(expr, gast.Attribute) and not scope.is_global_chain(expr):
        receiver = kind_of(expr.value)
        if receiver is not None and receiver.tag in (Tag.RECORD, Tag.OBJECT):
            return CallSite(
                builtins.getattr, None, [expr.value, gast.Constant(expr.attr, None)], []
            )
        return CallSite((_receiver_type(receiver), expr.attr), None, [expr.value], [])
    if isinstance(expr, gast.Call):
        func = expr.func
        if isinstance(func, gast.Attribute) and not scope.is_global_chain(func):
            owner = _receiver_type(kind_of(func.value))
            fn = getattr(owner, func.attr, None) or (owner, func.attr)
            return CallSite(
                fn, func, [func.value] + list(expr.args), list(expr.keywords), method=func.attr
            )
        if isinstance(func, gast.Name) and scope.is_local(func.id):
            return CallSite(None, func, list(expr.args), list(expr.keywords))
        target = scope.lookup(func)
        if role_of(target) is Role.FUNCTION_VALUE:
            # a derived rule's call of a function value, derived again: itself a call of a
            # function value, whose rules are found when it runs (function_values.py)
            return CallSite(None, func, list(expr.args), list(expr.keywords))
        differentiated_again = getattr(target, "tangent_ast_source_for", None)
        if differentiated_again is not None and not expr.keywords:
            # grad(f) (value_and_grad(f), hvp(f)) called in differentiated code: a function
            # whose source is on disk, built on f's rules (api.grad)
            target = differentiated_again(tuple(kind_of(a) for a in expr.args))
        if isinstance(target, type) and (
            dataclasses.is_dataclass(target) or hasattr(target, "_fields")
        ):
            return _record_site(target, func, expr)
        if target is dataclasses.replace and len(expr.args) == 1:
            # replace(p, W=v): p with some fields changed; p's cotangent keeps the others
            names = tuple(kw.arg for kw in expr.keywords)
            return CallSite(
                Pack(Tag.RECORD, names, replaces=True),
                func,
                list(expr.args) + [kw.value for kw in expr.keywords],
                [],
            )
        if (
            _users_method(target)
            and isinstance(func, gast.Attribute)
            and scope.lookup(func.value) is target.__self__  # model.loss, model the receiver
        ):
            # model.loss(x) with model a global instance: Model.loss(model, x), as for a
            # receiver that is a local value
            return CallSite(
                target.__func__,
                func,
                [func.value, *expr.args],
                list(expr.keywords),
                method=func.attr,
            )
        if _users_callable(target):
            # layer(x) with layer a global instance of a class with __call__:
            # Layer.__call__(layer, x)
            call = type(target).__call__
            return CallSite(call, func, [func, *expr.args], list(expr.keywords), method="__call__")
        return CallSite(target, func, list(expr.args), list(expr.keywords))
    return None


def _users_callable(target):
    """An instance of the program's own class that defines ``__call__``."""
    call = inspect.getattr_static(type(target), "__call__", None)
    return (
        not isinstance(target, type)
        and inspect.isfunction(call)
        and not is_library(call.__module__)
    )


def _users_method(target):
    """A method of the program's own class bound to an instance (``model.loss``)."""
    return (
        isinstance(target, types.MethodType)
        and inspect.isfunction(target.__func__)
        and not isinstance(target.__self__, type)
        and not is_library(target.__func__.__module__)
    )


def _record_site(cls, func, call):
    """``Params(W, b=b)``: building a record, its fields in order (defaults filled in)."""
    if dataclasses.is_dataclass(cls):
        fields = [(f.name, f.default) for f in dataclasses.fields(cls) if f.init]
    else:
        defaults = getattr(cls, "_field_defaults", {})
        fields = [(n, defaults.get(n, dataclasses.MISSING)) for n in cls._fields]
    given = dict(zip((n for n, _ in fields), call.args))
    given.update((kw.arg, kw.value) for kw in call.keywords)
    args = [
        given[n] if n in given else literal(d)
        for n, d in fields
        if n in given or d is not dataclasses.MISSING
    ]
    names = tuple(n for n, d in fields if n in given or d is not dataclasses.MISSING)
    return CallSite(Pack(Tag.RECORD, names, cls), func, args, [])


def _receiver_type(kind):
    """The class whose methods a receiver of ``kind`` has (ndarray when unknown;
    the user's class for an instance of it, so ``model.loss(x)`` calls ``Model.loss``)."""
    if kind is None or kind.tag in (Tag.ARRAY, Tag.UNKNOWN, Tag.FLOAT, Tag.INT, Tag.BOOL):
        return np.ndarray
    if kind.cls is not None:
        return kind.cls
    return {Tag.DICT: dict, Tag.LIST: list, Tag.TUPLE: tuple}.get(kind.tag, object)
