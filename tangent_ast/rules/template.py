"""Rule templates: a rule function read back as code to inline or to call.

A rule is a plain Python function, written with ``def`` or ``lambda``. When
its body is a single expression, the transformer substitutes the call site's
expressions for its parameters and *inlines* the result, so

    lambda dx, ans, x: dx * np.cos(x)        at the call  y = np.sin(a)

becomes the statement ``dy = da * np.cos(a)``. Any other rule is *called*:
the generated module imports it and calls it with the same arguments.

Free names in a rule body (``np``, ``math``, helpers) are looked up in the
rule's own module and handed to ``bind_global`` so the generated module can
import them under a name that does not collide with the user's.
"""

import contextlib
import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field

import gast

from ..errors import NoSourceError, TangentAstError
from ..vocabulary.source import lambda_node
from ..vocabulary.stdlib_ast import parse_gast
from ..vocabulary.trees import Transformer, copy_tree

_LITERALS = (type(None), bool, int, float, complex, str)


@dataclass
class Template:
    """A rule function, parsed once."""

    fn: Callable  # the rule function (a def or a lambda)
    params: list  # positional-or-keyword parameter names
    defaults: dict  # parameter name -> default value
    var_positional: str | None
    var_keyword: str | None
    body: gast.expr | None  # the expression to inline, or None: call ``fn``
    globals: dict = field(repr=False)
    keyword_only: tuple = ()  # parameters after ``*args``: never bound positionally

    @classmethod
    def deferred(cls, fn, make):
        """The template ``make()`` returns, made when first used: parsing the ~600 rules of
        the built-in tables when they are imported would cost most of a second, and a
        derivation uses a few of them (a cached rule none). ``fn`` is known at once."""
        template = cls.__new__(cls)
        template.__dict__.update(fn=fn, _make=make)
        return template

    def __getattr__(self, attribute):
        """Called for attributes not set yet: those of a deferred template, until made."""
        make = self.__dict__.get("_make")
        if make is None:
            raise AttributeError(attribute)
        self.__dict__.update(vars(make()))  # if make raises, the next use tries again
        del self.__dict__["_make"]
        return getattr(self, attribute)

    @property
    def inlinable(self):
        return self.body is not None

    def instantiate(self, leading, args, keywords, bind_global):
        """The rule applied to a call site, as a gast expression.

        ``leading`` are the expressions for the rule's own leading parameters
        (tangent or cotangent, then the primal result); ``args``/``keywords``
        are the call site's arguments (gast expressions).
        """
        bound, extra_pos, extra_kw = self._bind(leading, args, keywords)
        if not self.inlinable:
            name = bind_global(_import_name(self.fn), self.fn)
            call_args = [as_value(e) for e in leading + list(args)]
            return gast.Call(
                func=gast.Name(name, gast.Load(), None, None),
                args=call_args,
                keywords=[copy_tree(k) for k in keywords],
            )
        body = copy_tree(self.body)
        return _Substitute(bound, extra_pos, extra_kw, self, bind_global).visit(body)

    def _bind(self, leading, args, keywords):
        names = list(self.params)
        positional = [n for n in names if n not in self.keyword_only]
        values = list(leading) + list(args)
        bound = {}
        extra_pos = []
        for i, value in enumerate(values):
            if i < len(positional):
                bound[positional[i]] = value
            elif self.var_positional:
                extra_pos.append(value)
            else:
                raise _mismatch(self, "too many positional arguments")
        extra_kw = []
        for kw in keywords:
            if kw.arg in names and kw.arg not in bound:
                bound[kw.arg] = kw.value
            elif self.var_keyword:
                extra_kw.append(kw)
            else:
                raise _mismatch(self, f"unexpected keyword argument {kw.arg!r}")
        for name in names:
            if name not in bound:
                if name not in self.defaults:
                    raise _mismatch(self, f"no value for parameter {name!r}")
                bound[name] = literal(self.defaults[name])
        return bound, extra_pos, extra_kw

    def free_names(self):
        if self.body is None:
            return set()
        params = set(self.params) | {self.var_positional, self.var_keyword}
        return {
            n.id for n in gast.walk(self.body) if isinstance(n, gast.Name) and n.id not in params
        }


def _mismatch(template, why):
    name = getattr(template.fn, "__qualname__", repr(template.fn))
    return TangentAstError(
        f"rule {name} does not fit its call: {why}",
        hint="check the rule's parameters: (tangent or cotangent, result, *arguments)",
    )


class _Substitute(Transformer):
    def __init__(self, bound, extra_pos, extra_kw, template, bind_global):
        self.bound = bound
        self.extra_pos = extra_pos
        self.extra_kw = extra_kw
        self.template = template
        self.bind_global = bind_global

    def visit_Subscript(self, node):
        node.value = self.visit(node.value)
        # An index may be slice syntax (x[1:3]): substitute it as syntax there.
        if isinstance(node.slice, gast.Name) and node.slice.id in self.bound:
            node.slice = copy_tree(self.bound[node.slice.id])
        else:
            node.slice = self.visit(node.slice)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        args = []
        for a in node.args:
            if (
                isinstance(a, gast.Starred)
                and isinstance(a.value, gast.Tuple)
                and getattr(a, "_extra", False)
            ):
                args.extend(a.value.elts)
            else:
                args.append(a)
        node.args = args
        keywords = []
        for kw in node.keywords:
            if (
                kw.arg is None
                and isinstance(kw.value, gast.Dict)
                and getattr(kw.value, "_extra", False)
            ):
                keywords.extend(
                    gast.keyword(arg=k.value, value=v)
                    for k, v in zip(kw.value.keys, kw.value.values, strict=True)
                )
            else:
                keywords.append(kw)
        node.keywords = keywords
        return node

    def visit_Name(self, node):
        if node.id in self.bound:
            return as_value(copy_tree(self.bound[node.id]))
        if node.id == self.template.var_positional:
            tup = gast.Tuple(elts=[as_value(copy_tree(e)) for e in self.extra_pos], ctx=gast.Load())
            tup._extra = True
            return tup
        if node.id == self.template.var_keyword:
            d = gast.Dict(
                keys=[gast.Constant(kw.arg, None) for kw in self.extra_kw],
                values=[as_value(copy_tree(kw.value)) for kw in self.extra_kw],
            )
            d._extra = True
            return d
        cells = _cells(self.template.fn)
        if node.id in cells:  # a rule defined in a function: the value it closes over
            return gast.Name(self.bind_global(node.id, cells[node.id]), gast.Load(), None, None)
        glob = self.template.globals
        if node.id in glob:
            return gast.Name(self.bind_global(node.id, glob[node.id]), gast.Load(), None, None)
        builtins = glob.get("__builtins__", {})
        builtins = builtins if isinstance(builtins, dict) else vars(builtins)
        if node.id in builtins:
            return node
        raise _mismatch(self.template, f"name {node.id!r} is not defined in the rule's module")

    def visit_Starred(self, node):
        node.value = self.visit(node.value)
        if isinstance(node.value, gast.Tuple) and getattr(node.value, "_extra", False):
            node._extra = True
        return node


def _cells(fn):
    """The values of the closure cells of rule ``fn`` (none for a rule without a closure)."""
    code = getattr(fn, "__code__", None)
    cells = {}
    for name, cell in zip(code.co_freevars if code else (), getattr(fn, "__closure__", None) or ()):
        with contextlib.suppress(ValueError):  # an empty cell: the name is not bound yet
            cells[name] = cell.cell_contents
    return cells


def as_value(expr):
    """``expr`` usable as a value: slice syntax becomes ``slice(...)`` calls."""
    if isinstance(expr, gast.Slice):
        parts = [expr.lower, expr.upper, expr.step]
        return gast.Call(
            func=gast.Name("slice", gast.Load(), None, None),
            args=[p if p is not None else gast.Constant(None, None) for p in parts],
            keywords=[],
        )
    if isinstance(expr, gast.Tuple) and any(isinstance(e, gast.Slice) for e in expr.elts):
        return gast.Tuple(elts=[as_value(e) for e in expr.elts], ctx=gast.Load())
    return expr


def literal(value):
    """A gast expression for a simple Python value (a rule's default)."""
    if isinstance(value, _LITERALS):
        return gast.Constant(value, None)
    if isinstance(value, tuple) and all(isinstance(v, _LITERALS) for v in value):
        return gast.Tuple(elts=[gast.Constant(v, None) for v in value], ctx=gast.Load())
    raise TangentAstError(
        f"rule default {value!r} is not a literal; give it as None and decide in the rule"
    )


def _import_name(fn):
    return getattr(fn, "__name__", "rule")


def _function_node(fn):
    """The gast node (FunctionDef or Lambda) of a rule function."""
    if fn.__name__ != "<lambda>":
        source = textwrap.dedent(inspect.getsource(fn))
        return parse_gast(source).body[0]
    return lambda_node(fn.__code__)


def template_of(fn):
    """Parse a rule function into a :class:`Template`."""
    try:
        node = _function_node(fn)
    except (OSError, TypeError) as exc:
        name = getattr(fn, "__qualname__", repr(fn))
        raise NoSourceError(
            f"cannot read the source of the rule {name}: rules are inlined from their source",
            where=f"{fn.__code__.co_filename}:{fn.__code__.co_firstlineno}"
            if hasattr(fn, "__code__")
            else None,
            hint=(
                "define the rule in a .py file or a notebook cell, not with exec or at a bare "
                "prompt"
            ),
        ) from exc
    sig = inspect.signature(fn)
    params, defaults, keyword_only = [], {}, []
    var_pos = var_kw = None
    for p in sig.parameters.values():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            params.append(p.name)
            if p.kind == p.KEYWORD_ONLY:
                keyword_only.append(p.name)
            if p.default is not p.empty:
                defaults[p.name] = p.default
        elif p.kind == p.VAR_POSITIONAL:
            var_pos = p.name
        else:
            var_kw = p.name
    if isinstance(node, gast.Lambda):
        body = node.body
    else:
        stmts = [
            s
            for s in node.body
            if not (isinstance(s, gast.Expr) and isinstance(s.value, gast.Constant))
        ]
        body = stmts[0].value if len(stmts) == 1 and isinstance(stmts[0], gast.Return) else None
    return Template(
        fn=fn,
        params=params,
        defaults=defaults,
        var_positional=var_pos,
        var_keyword=var_kw,
        body=body,
        globals=fn.__globals__,
        keyword_only=tuple(keyword_only),
    )


def expression_template(body, params, globals_, fn=None):
    """A template made directly from a gast expression (used by rule helpers)."""
    return Template(
        fn=fn,
        params=list(params),
        defaults={},
        var_positional=None,
        var_keyword=None,
        body=body,
        globals=globals_,
    )
