"""Binding a call site against the whole signature of the primitive it calls.

A rule states exactly what it handles. Every call of a primitive is bound, at
derivation time, against the primal's full signature (every parameter NumPy
documents, positional and keyword), and each parameter the call gives has one
:class:`Role`:

* ``DIFFERENTIABLE``: the rule has a formula for it (a jvp/vjp at its position);
* ``NO_DERIVATIVE``: declared with ``None`` in the rule (an index, a condition):
  the result does not change differentiably with it;
* ``STATIC``: declared with :func:`~tangent_ast.rules.registry.handles`: the
  rule takes any value of it that carries no derivative (``axis``, a shape). A
  parameter a rule merely names is not declared by that (rules name parameters
  to absorb them, too: ``linspace``'s rule names ``retstep`` and ignores it);
* ``DEFAULT_ONLY``: everything else. The call may give it only at its default
  (``out=None`` passes; ``out=y``, ``where=mask`` or ``dtype=np.float32`` are
  refused when the call carries a derivative).

The bound call is handed to the rule in one canonical form: the
differentiable and no-derivative parameters positionally, in the primal's
order, and the static ones by keyword, under the primal's names::

    np.clip(x, a_max=hi, a_min=lo)    ->  rule(ct, ans, x, lo, hi)
    np.sum(x, 1)                      ->  rule(ct, ans, x, axis=1)

so a rule never sees a parameter it did not declare, and a keyword never slips
past it into ``**kwargs``.
"""

from __future__ import annotations

import ast
import inspect
import re
from dataclasses import dataclass
from enum import Enum

import gast
import numpy as np


class Role(Enum):
    DIFFERENTIABLE = "differentiable"
    NO_DERIVATIVE = "no derivative"
    STATIC = "handled by the rule"
    DEFAULT_ONLY = "only at its default"


class CallRefused(Exception):
    """A call form the rule does not handle: ``what`` it is, ``hint`` what to do."""

    def __init__(self, what, hint=None):
        super().__init__(what)
        self.what = what
        self.hint = hint


@dataclass(frozen=True)
class Given:
    """One argument of the call: where the call passes it and the parameter it binds to."""

    value: gast.expr
    parameter: str  # the primal's parameter name (``operands[2]`` for a *args item)
    role: Role
    position: int | None  # the rule's argument number (DIFFERENTIABLE / NO_DERIVATIVE)
    slot: int | str  # where the call site has it: a position or a keyword name


@dataclass(frozen=True)
class BoundCall:
    """A call site bound against its primitive's signature."""

    given: tuple  # Given, in the primal's parameter order
    args: tuple  # canonical positional arguments (gast), rule positions 0..n-1
    keywords: tuple  # canonical keywords (gast.keyword) of the static parameters

    def at(self, position):
        """The argument at rule position ``position``."""
        return self.args[position]

    def slot(self, position):
        for g in self.given:
            if g.position == position:
                return g.slot
        raise KeyError(position)


_NO_VALUE = object()


def _literal_value(expr):
    """The Python value of a constant expression, or ``_NO_VALUE``."""
    if isinstance(expr, gast.Constant):
        return expr.value
    if (
        isinstance(expr, gast.UnaryOp)
        and isinstance(expr.op, gast.USub)
        and isinstance(expr.operand, gast.Constant)
    ):
        return -expr.operand.value
    if isinstance(expr, gast.Tuple):
        values = tuple(_literal_value(e) for e in expr.elts)
        return _NO_VALUE if _NO_VALUE in values else values
    return _NO_VALUE


def at_default(expr, parameter):
    """Whether ``expr`` is written as exactly the parameter's default (``out=None``)."""
    if parameter.default is inspect.Parameter.empty:
        return False
    value = _literal_value(expr)
    if value is _NO_VALUE:
        return False
    default = parameter.default
    try:
        return type(value) is type(default) and bool(value == default)
    except Exception:  # an array-valued comparison: not a literal default
        return False


_READ: dict[int, inspect.Signature | None] = {}  # id of a table entry -> its signature


def signature_of(entry):
    """The primal's signature: declared, else read from the function (once), else None."""
    if entry.signature is not None:
        return entry.signature
    if id(entry) not in _READ:
        _READ[id(entry)] = _read_signature(entry.fn)
    return _READ[id(entry)]


def _read_signature(fn):
    if isinstance(fn, tuple):  # an attribute such as x.T: the receiver only
        return inspect.Signature([inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)])
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return _documented_signature(fn)


def _documented_signature(fn):
    """The signature a NumPy function written in C documents on its first line, for NumPy
    versions whose C functions carry no signature of their own (``concatenate((a1, a2,
    ...), axis=0, ...)``, ``a.sum(axis=None, ...)``: a method gets ``self`` first); None if
    there is none to read."""
    of_numpy = (
        isinstance(fn, np.ufunc)
        or (getattr(fn, "__module__", None) or "").startswith("numpy")
        or getattr(fn, "__objclass__", None) is np.ndarray
    )
    if not of_numpy:
        return None
    doc = inspect.getdoc(fn) or ""
    name = getattr(fn, "__name__", "")
    method = doc.startswith(f"a.{name}(")
    if not (method or doc.startswith(f"{name}(")):
        return None
    start = doc.index("(") + 1
    depth, end = 1, start
    while end < len(doc) and depth:
        depth += {"(": 1, ")": -1}.get(doc[end], 0)
        end += 1
    inner = re.sub(r"\(a1, a2, \.\.\.\)", "arrays", doc[start : end - 1])
    inner = re.sub(r"^shape, /, \*, ", "*shape, ", inner)  # a.reshape(2, 3) as well as ((2, 3))
    inner = inner.replace("<no value>", "None")  # initial=<no value>: not given
    inner = re.sub(  # optional trailing parameters: [, signature, axes]
        r"\[,\s*([\w, ]+)\]",
        lambda m: "".join(f", {p.strip()}=None" for p in m.group(1).split(",")),
        inner,
    )
    inner = re.sub(
        r"\[(\w+(?:, \w+)*)\]", lambda m: m.group(1).replace(",", "=None,") + "=None", inner
    )
    try:
        arguments = ast.parse(f"def f({'self, /, ' if method else ''}{inner}): pass").body[0].args
    except SyntaxError:
        return None
    return _signature_from(arguments)


def _signature_from(arguments):
    kinds = inspect.Parameter
    positional = [(a, kinds.POSITIONAL_ONLY) for a in arguments.posonlyargs]
    positional += [(a, kinds.POSITIONAL_OR_KEYWORD) for a in arguments.args]
    defaults = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
    parameters = [
        kinds(a.arg, kind, default=kinds.empty if d is None else _literal(d))
        for (a, kind), d in zip(positional, defaults, strict=True)
    ]
    if arguments.vararg is not None:
        parameters.append(kinds(arguments.vararg.arg, kinds.VAR_POSITIONAL))
    for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True):
        parameters.append(
            kinds(a.arg, kinds.KEYWORD_ONLY, default=kinds.empty if d is None else _literal(d))
        )
    if arguments.kwarg is not None:
        parameters.append(kinds(arguments.kwarg.arg, kinds.VAR_KEYWORD))
    try:
        return inspect.Signature(parameters)
    except ValueError:
        return None


def _literal(node):
    try:
        return ast.literal_eval(node)
    except ValueError:
        return None  # np._NoValue and the like: not a default a call writes out


def _rule_positions(entry):
    """Rule positions with a formula, and those declared without a derivative."""
    differentiable, none = set(), set()
    for table in (entry.jvps, entry.vjps):
        for i, rule in table.items():
            (none if rule is None else differentiable).add(i)
    for _mode, _when, rules in entry.variants:
        differentiable |= {i for i, r in rules.items() if r is not None}
    return differentiable, none - differentiable


def _role(entry, position, parameter_name, differentiable, none):
    if position is not None and position in differentiable:
        return Role.DIFFERENTIABLE
    if position is not None and position in none:
        return Role.NO_DERIVATIVE
    if parameter_name in entry.static:
        return Role.STATIC
    return Role.DEFAULT_ONLY


def takes(entry, position, parameter_name):
    """Whether ``entry``'s rules take the parameter (at ``position`` of the positional ones,
    None for a keyword-only one) at other than its default: with a formula, declared without
    a derivative, or handled."""
    differentiable, none = _rule_positions(entry)
    return _role(entry, position, parameter_name, differentiable, none) is not Role.DEFAULT_ONLY


def bind_call(entry, args, keywords, resolve=None):
    """Bind a call ``fn(*args, **keywords)`` (gast expressions) against ``entry``'s primal.

    Returns a :class:`BoundCall`; raises :class:`CallRefused` when the call does
    not fit the signature or gives a parameter the rule does not handle at a
    value other than its default. ``resolve(expr)`` gives the object a constant
    expression denotes (``np.float32``), to check a ``dtype=`` the rule handles.
    """
    signature = signature_of(entry)
    by_keyword = {kw.arg: kw.value for kw in keywords}
    if signature is None:  # no signature to read: the rule's own positions, no keywords
        if by_keyword:
            raise CallRefused(
                f"keyword arguments ({', '.join(by_keyword)}=...) to {entry.name}, whose "
                "signature cannot be read",
                "pass the arguments positionally",
            )
        signature = inspect.Signature(
            [
                inspect.Parameter(f"arg{i}", inspect.Parameter.POSITIONAL_ONLY)
                for i in range(len(args))
            ]
        )
    try:
        bound = signature.bind(*args, **by_keyword)
    except TypeError as exc:
        raise CallRefused(
            f"this call does not fit {entry.name}{signature} ({exc})",
            "check the call against the function's parameters",
        ) from None
    differentiable, none = _rule_positions(entry)
    slots = {id(a): i for i, a in enumerate(args)}
    slots.update({id(v): k for k, v in by_keyword.items()})
    given = []
    position = 0
    for parameter in signature.parameters.values():
        kind = parameter.kind
        if kind == parameter.VAR_POSITIONAL:
            for j, value in enumerate(bound.arguments.get(parameter.name, ())):
                role = _role(entry, position, parameter.name, differentiable, none)
                given.append(
                    Given(value, f"{parameter.name}[{j}]", role, position, slots[id(value)])
                )
                position += 1
            continue
        if kind == parameter.VAR_KEYWORD:
            for key, value in bound.arguments.get(parameter.name, {}).items():
                role = Role.STATIC if key in entry.static else Role.DEFAULT_ONLY
                given.append(Given(value, key, role, None, key))
            continue
        rule_position = None
        if kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            rule_position, position = position, position + 1
        if parameter.name not in bound.arguments:
            continue
        value = bound.arguments[parameter.name]
        role = _role(entry, rule_position, parameter.name, differentiable, none)
        if role in (Role.DEFAULT_ONLY, Role.STATIC) and at_default(value, parameter):
            continue  # written out at its default: as if not given
        given.append(Given(value, parameter.name, role, rule_position, slots[id(value)]))
    for g in given:
        if g.role is Role.DEFAULT_ONLY:
            raise CallRefused(
                f"{entry.name} called with {_shown(g)}, which its rule does not handle",
                _hint(entry, g),
            )
        if g.role is Role.STATIC and g.parameter == "dtype":
            _check_float_dtype(entry, g.value, resolve)
    args = _canonical_args(entry, signature, given)
    keywords = tuple(
        gast.keyword(arg=g.parameter, value=g.value)
        for g in given
        if g.role is Role.STATIC and (g.position is None or g.position >= len(args))
    )
    return BoundCall(tuple(given), args, keywords)


def _check_float_dtype(entry, expr, resolve):
    """A dtype the rules handle is a real floating type: it changes precision, not the
    derivative."""
    try:
        value = resolve(expr) if resolve is not None else _literal_value(expr)
        floating = value is not _NO_VALUE and np.dtype(value).kind == "f"
    except (TypeError, ValueError, LookupError):
        floating = False
    if not floating:
        raise CallRefused(
            f"{entry.name} called with dtype= other than a floating type written out "
            "(float, np.float64, np.float32, 'float64')",
            "the derivative of a conversion to an integer, bool or complex type is not "
            "that of the value: convert after differentiating, or use a float type",
        )


def _shown(g):
    return (
        f"{g.parameter}=..."
        if isinstance(g.slot, str)
        else f"{g.parameter} (argument {g.slot + 1})"
    )


def _hint(entry, g):
    if g.parameter == "out":
        return "assign the result instead of writing it into an array: y = f(x)"
    if g.parameter == "where":
        return "select with np.where(mask, f(x), fallback) instead"
    if g.parameter == "dtype":
        return "convert the result instead (y.astype(...)), or register a rule that handles dtype"
    handled = sorted(entry.static)
    shown = f" (it handles: {', '.join(handled)})" if handled else ""
    return f"leave {g.parameter} at its default{shown}, or register a rule that handles it"


def _canonical_args(entry, signature, given):
    """The rule's positional arguments: every position up to the last one with a derivative
    (or a static item of ``*args``), with a declared fill or the primal's literal default
    where the call leaves one out. Static parameters after that go by keyword."""
    by_position = {g.position: g for g in given if g.position is not None}
    ends = [
        g.position
        for g in given
        if g.position is not None and (g.role is not Role.STATIC or g.parameter.endswith("]"))
    ]
    if not ends:
        return ()
    positional = [
        p
        for p in signature.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    out = []
    for i in range(max(ends) + 1):
        if i in by_position:
            out.append(by_position[i].value)
            continue
        parameter = positional[i] if i < len(positional) else None
        name = parameter.name if parameter is not None else f"argument {i + 1}"
        if name in entry.fills:
            value = entry.fills[name]
        elif parameter is not None and parameter.default is not inspect.Parameter.empty:
            value = parameter.default
        else:
            raise CallRefused(
                f"{entry.name} called without {name} before a later argument",
                f"pass {name} explicitly",
            )
        try:
            out.append(_constant(value))
        except TypeError:
            raise CallRefused(
                f"{entry.name} called without {name}, whose default its rule cannot spell out",
                f"pass {name} explicitly",
            ) from None
    return tuple(out)


def _constant(value):
    if value is None or isinstance(value, (bool, int, float, complex, str)):
        return gast.Constant(value, None)
    if isinstance(value, tuple):
        return gast.Tuple(elts=[_constant(v) for v in value], ctx=gast.Load())
    raise TypeError(value)
