"""The rule table and its public registration API.

A :class:`Primitive` is a function tangent_ast does not look inside: it has
hand-written rules, one per differentiable argument and mode.

* ``defjvp(fn, *jvps)``: forward rules, one per positional argument, each
  ``jvp(d_arg, ans, *args, **kwargs) -> tangent contribution``.
* ``defvjp(fn, *vjps)``: reverse rules, one per positional argument, each
  ``vjp(ct, ans, *args, **kwargs) -> cotangent of that argument``.
* ``def_linear(fn)``: the forward rule of a function linear in its first
  argument is the function itself applied to the tangent.
* ``def_multilinear(fn, *argnums)``: the same for a function linear in each of
  ``argnums`` separately (``np.einsum`` in each operand).
* ``elementwise(fn, derivative)``: ``y = fn(x)`` elementwise with
  ``dy/dx = derivative(ans, x)``; gives both modes.
* ``nondifferentiable(fn)``: the result carries no tangent (``floor``, ``len``).
* ``effectful(fn)``: calls have effects (``print``): never dropped, never repeated.
  Every other registered function is pure; an unregistered one is not.
* ``pure(fn)``: a function without rules that derivative code calls is pure.
* ``checks_only(fn)``: ``fn`` checks its arguments and raises or returns None, changing
  nothing: a call of it for its effect is kept, in order, exactly once.
* ``broadcasting(fn)``: arguments broadcast against each other, so a
  cotangent is summed back to its argument's shape where shapes can differ.

``None`` in place of a rule marks an argument with no derivative (an axis,
a shape, a condition). Both decorator and call forms work::

    @defjvp(np.sin)
    def sin_jvp(dx, ans, x):
        return dx * np.cos(x)

    defvjp(operator.mul, lambda ct, ans, x, y: ct * y,
                         lambda ct, ans, x, y: ct * x)
"""

import contextlib
import copy
import functools
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

import gast

from ..modes import Mode
from ..vocabulary.api_roles import Role, register
from ..vocabulary.kinds import Kind
from .binding import CallRefused
from .template import Template, expression_template, template_of


@dataclass
class SameCall:
    """Forward rule of a linear function: the call itself, on the tangent."""

    fn: Callable | None = None
    inlinable = True

    def instantiate(self, leading, args, keywords, bind_global, *, func=None, slot=0, method=None):
        """The call on the tangent: ``slot`` is where the call passes the differentiated
        argument (a position, or a keyword's name)."""
        new_args = [copy.deepcopy(a) for a in args]
        new_keywords = [copy.deepcopy(k) for k in keywords]
        if isinstance(slot, str):
            for k in new_keywords:
                if k.arg == slot:
                    k.value = leading[0]
        else:
            new_args[slot] = leading[0]
        if method is not None:  # x.sum(axis=0) -> dx.sum(axis=0)
            func = gast.Attribute(value=new_args.pop(0), attr=method, ctx=gast.Load())
            return gast.Call(func=func, args=new_args, keywords=new_keywords)
        return gast.Call(func=copy.deepcopy(func), args=new_args, keywords=new_keywords)


@dataclass
class Built:
    """A rule that rearranges the call's arguments, where no one rule function can say it:
    ``build(leading, args, bind_global)`` returns the expression (gast), from copies of the
    call's arguments. ``runtime.einsum_vjp``'s rules move a cotangent into the place of
    the operand whose cotangent it is."""

    fn: Callable
    inlinable = True

    def instantiate(self, leading, args, keywords, bind_global):
        return self.fn(leading, [copy.deepcopy(a) for a in args], bind_global)


@dataclass
class ByConstant:
    """Rules that depend on the value of a constant argument: ``fn(value)`` is the rule
    (``ZERO``, a ``SameCall``, a ``Built``) at a call whose argument ``position`` is
    ``value``. ``runtime.einsum_vjp(ct, argnum, subscripts, *operands)`` is linear in every
    operand but the one numbered ``argnum``, whose shape alone it reads."""

    position: int
    fn: Callable

    def at(self, args, constant_value):
        try:
            value = constant_value(args[self.position])
        except LookupError:
            raise CallRefused(
                f"argument {self.position + 1} that is not a constant, where the rule "
                "depends on its value",
                "pass a literal there",
            ) from None
        return self.fn(value)


@dataclass
class Primitive:
    """A function with hand-written rules."""

    fn: Callable | tuple  # a function, or (class, attribute) for an attribute such as x.T
    jvps: dict = field(default_factory=dict)  # argnum -> Template | SameCall | None
    vjps: dict = field(default_factory=dict)  # argnum -> Template | None
    nondiff: bool = False
    broadcasts: bool = False
    kind: Callable[..., Kind] | None = None  # optional kind inference: (*arg_kinds) -> Kind
    variants: list = field(default_factory=list)  # (mode, predicate(*arg_kinds), {argnum: rule})
    linear_in: tuple = ()  # def_jointly_linear: forward rule is fn(dxs, i, dv)
    static: frozenset = frozenset()  # parameters the rules handle for any constant value
    fills: dict = field(default_factory=dict)  # values for positional parameters a call leaves out
    signature: inspect.Signature | None = None  # the primal's, where it cannot be read
    sequences: bool = False  # differentiable arguments may be lists/tuples/records
    validate: Callable | None = None  # (args, argnum, resolve) -> None, or raises CallRefused
    # No effect but its result: a call whose result is unused may be dropped, and the
    # reverse sweep may evaluate it again instead of saving its value. Declaring rules
    # for a function states it is math; ``effectful`` says otherwise (``print``).
    pure: bool = True
    # Its rules are right for complex values too: they are written as transposes (``ct * y``
    # for ``x * y``, no conjugates), which is the convention for complex cotangents.
    holds_for_complex: bool = False
    # Rules used where the argument is complex, for functions that are not holomorphic
    # (``abs``, ``real``, ``imag``, ``angle``): mode -> {argnum: rule}
    complex_rules: dict = field(default_factory=dict)
    # It only checks its arguments (raises, or returns None): called for its effect, it
    # changes no value, so nothing a derivative needs is lost
    checks_only: bool = False

    @property
    def name(self):
        return qualified_name(self.fn)

    def rule(self, mode, argnum, kinds=None, complex_argument=False, at=None):
        """The rule for ``argnum``; a variant whose predicate holds for ``kinds`` wins. A
        complex argument gets the complex rule where there is one. ``at``, the call's
        arguments and how to read a constant one, picks a rule that depends on a constant
        (``ByConstant``; raises ``CallRefused`` where that argument is not a constant)."""
        rule = self._rule(mode, argnum, kinds, complex_argument)
        if isinstance(rule, ByConstant) and at is not None:
            return rule.at(*at)
        return rule

    def _rule(self, mode, argnum, kinds, complex_argument):
        if complex_argument and argnum in self.complex_rules.get(mode, {}):
            return self.complex_rules[mode][argnum]
        if kinds is not None:
            for variant_mode, predicate, rules in self.variants:
                if variant_mode == mode and argnum in rules and _holds(predicate, kinds):
                    return rules[argnum]
        return self.table(mode).get(argnum)

    def complex_rule_for(self, argnum):
        """Whether argument ``argnum`` has rules of its own for complex values (``defcomplex``)."""
        return any(argnum in rules for rules in self.complex_rules.values())

    def takes_complex(self, argnum):
        """Whether the rules of ``argnum`` are right for a complex value there."""
        return self.holds_for_complex or any(
            argnum in rules for rules in self.complex_rules.values()
        )

    def table(self, mode):
        """The rules of one mode: argnum -> rule."""
        return self.jvps if mode is Mode.FORWARD else self.vjps

    def has(self, mode):
        return (
            self.nondiff
            or bool(self.table(mode))
            or any(variant_mode == mode for variant_mode, _, _ in self.variants)
        )


_TABLE: dict[object, Primitive] = {}  # a function (or (class, attribute)) -> its rules
_VERSION = [0]  # bumped by every registration: what was derived with older rules is stale


def version():
    """A number that changes whenever a rule is registered or changed."""
    return _VERSION[0]


def _changed():
    _VERSION[0] += 1


def _holds(predicate, kinds):
    """A variant's predicate; one that does not take this many arguments does not hold."""
    try:
        return bool(predicate(*kinds))
    except TypeError:
        return False


def _key(fn):
    return ("attr",) + fn if isinstance(fn, tuple) else fn


def primitive(fn, create=True):
    """The table entry of ``fn`` (``None`` if it has none and not ``create``)."""
    key = _key(fn)
    try:
        entry = _TABLE.get(key)
    except TypeError:  # unhashable callables cannot have rules
        return None
    if entry is None and create:
        entry = _TABLE[key] = Primitive(fn)
        _changed()
    return entry


def lookup(fn):
    return primitive(fn, create=False)


def all_primitives():
    return list(_TABLE.values())


class _ZeroDerivative:
    """A rule for an argument the result does not change with at all (``np.full_like(a, v)``
    reads only ``a``'s shape): a differentiable value there contributes nothing. ``None``, by
    contrast, marks an argument the rule takes as a constant, and refuses a differentiable one."""

    inlinable = True

    def __repr__(self):
        return "ZERO"


ZERO = _ZeroDerivative()


_DEFERRED = [False]  # parse rules when first used (the built-in tables), not when registered


@contextlib.contextmanager
def deferred():
    """Rules registered inside are parsed when first used. For the built-in tables, whose
    sources are known to parse: a user's rule is parsed at once, so that one whose source
    cannot be read is refused where it is registered."""
    _DEFERRED[0] = True
    try:
        yield
    finally:
        _DEFERRED[0] = False


def _as_template(rule):
    if rule is None or rule is ZERO or isinstance(rule, (Template, SameCall, Built, ByConstant)):
        return rule
    if _DEFERRED[0]:
        return Template.deferred(rule, lambda: template_of(rule))
    return template_of(rule)


def _register(mode, fn, rules, argnum):
    rules_by_arg = {argnum: rules[0]} if argnum is not None else dict(enumerate(rules))
    templates = {
        i: _as_template(rule) for i, rule in rules_by_arg.items()
    }  # may raise: table untouched
    entry = primitive(fn)
    entry.table(mode).update(templates)
    _changed()
    return entry


def _decorator_or_call(mode, fn, rules, argnum):
    if rules:
        _register(mode, fn, rules, argnum)
        return None

    def decorate(rule):
        _register(mode, fn, [rule], argnum if argnum is not None else 0)
        return rule

    return decorate


def defjvp(fn, *jvps, argnum=None):
    """Register forward rules for ``fn``: one per positional argument."""
    return _decorator_or_call(Mode.FORWARD, fn, jvps, argnum)


def defvjp(fn, *vjps, argnum=None):
    """Register reverse rules for ``fn``: one per positional argument."""
    return _decorator_or_call(Mode.REVERSE, fn, vjps, argnum)


def specialize(fn, mode, when, *rules):
    """Rules used instead of the general ones when ``when(*arg_kinds)`` holds.

    This is how a rule is specialised to a signature: ``x @ y`` on two
    matrices gets ``ct @ y.T`` inline, other shapes the general helper.
    """
    primitive(fn).variants.append(
        (Mode.of(mode), when, {i: _as_template(r) for i, r in enumerate(rules)})
    )
    _changed()


def holds_for_complex(*fns):
    """The rules of ``fns`` hold for complex values as written. A holomorphic function's do
    when each is the transpose of the derivative (``ct * np.cos(x)`` for ``np.sin``, no
    conjugates), which is tangent_ast's convention for complex cotangents: ``dL = Re(ct * dz)``.
    Every other rule refuses a complex value."""
    for fn in fns:
        primitive(fn).holds_for_complex = True
    _changed()


def defcomplex(fn, jvp, vjp, argnum=0):
    """Rules for a complex argument of a function that is not holomorphic (``np.abs``,
    ``np.imag``): ``jvp(dz, ans, z)`` and ``vjp(ct, ans, z)`` in the convention above."""
    entry = primitive(fn)
    for mode, rule in ((Mode.FORWARD, jvp), (Mode.REVERSE, vjp)):
        entry.complex_rules.setdefault(mode, {})[argnum] = _as_template(rule)
    _changed()


def def_linear(*fns):
    """``fn`` is linear in its first argument: its forward rule is ``fn(dx, ...)``."""
    for fn in fns:
        primitive(fn).jvps[0] = SameCall(fn)
    _changed()


def def_multilinear(fn, *argnums):
    """``fn`` is linear in each of ``argnums`` separately, the others held fixed (``np.einsum``
    in each operand): the forward rule for each is the call with its tangent in that place
    and every other argument as it is, one such term per argument with a tangent."""
    entry = primitive(fn)
    for argnum in argnums:
        entry.jvps[argnum] = SameCall(fn)
    _changed()


def def_jointly_linear(fn, *argnums):
    """``fn`` is linear in ``argnums`` taken together (``list_with(xs, i, v)`` in ``xs`` and
    ``v``): its forward rule is the call on their tangents, a zero for one without."""
    entry = primitive(fn)
    entry.linear_in = argnums
    for argnum in argnums:
        entry.jvps[argnum] = SameCall(fn)
    _changed()


def handles(fns, *parameters, fills=None, signature=None, sequences=None, validate=None):
    """The rules of ``fns`` handle ``parameters`` (by the primal's names) for any value that
    carries no derivative. Any other parameter a call gives is refused unless it is written
    at its default (see :mod:`tangent_ast.rules.binding`). ``fills`` gives the value of a
    positional parameter a call leaves out before one it gives (``np.clip(x, a_max=1.0)``
    has ``a_min=None``); ``signature`` the primal's signature where Python cannot read it;
    ``sequences=True``: differentiable arguments may be lists, tuples or records;
    ``validate(args, argnum, resolve)``: refuses (raises ``binding.CallRefused``) a call whose
    constant arguments ask for a form the rule has no formula for, when argument ``argnum``
    carries a derivative (``resolve(expr)`` gives a constant argument's value)."""
    for fn in fns if isinstance(fns, list) else [fns]:
        entry = primitive(fn)
        entry.static = entry.static | frozenset(parameters)
        entry.fills = {**entry.fills, **(fills or {})}
        if signature is not None:
            entry.signature = signature
        if sequences is not None:
            entry.sequences = sequences
        if validate is not None:
            entry.validate = validate
    _changed()


def nondifferentiable(*fns):
    """The results of ``fns`` carry no derivative."""
    for fn in fns:
        primitive(fn).nondiff = True
    _changed()


def checks_only(*fns):
    """``fns`` check their arguments: each raises or returns None and changes nothing."""
    for fn in fns:
        entry = primitive(fn)
        entry.nondiff, entry.pure, entry.checks_only = True, False, True
    _changed()


def effectful(*fns):
    """Calls of ``fns`` have effects: derivative code keeps each one, in order, exactly once."""
    for fn in fns:
        primitive(fn).pure = False
    _changed()


# functions without rules that derivative code calls, marked pure
_PURE_HELPERS: set[object] = set()


def pure(*fns):
    """Mark functions without rules pure (the helpers rules call: ``np.full_like``), so
    simplify may drop an unused call or inline it."""
    _PURE_HELPERS.update(fns)
    _changed()


def is_pure_function(fn):
    """True if the rule table marks ``fn`` pure; a function it does not know is not."""
    entry = lookup(fn)
    if entry is not None:
        return entry.pure
    try:
        return fn in _PURE_HELPERS
    except TypeError:  # unhashable
        return False


def broadcasting(*fns):
    """``fns`` broadcast their arguments: cotangents are summed back to shape."""
    for fn in fns:
        primitive(fn).broadcasts = True
    _changed()


def elementwise(fn, derivative, *, broadcasts=True, argnum=0):
    """Register both modes of a unary elementwise ``fn`` from ``derivative(ans, x)``.

    The forward rule is ``dx * derivative`` and the reverse rule
    ``ct * derivative``; a derivative of the form ``1 / e`` reads as a division.
    ``argnum``: the argument differentiated, the ones before it taken as constants
    (``derivative(ans, n, x)`` for ``scipy.special.polygamma(n, x)``, ``argnum=1``).
    """
    parsed = functools.cache(lambda: template_of(derivative))  # once for both modes

    def make(lead):
        deriv = parsed()
        body = _scale(gast.Name(lead, gast.Load(), None, None), deriv.body)
        params = ["ans"] + deriv.params[1:]
        return expression_template(body, [lead] + params, deriv.globals, fn=derivative)

    for mode, lead in ((Mode.FORWARD, "dx"), (Mode.REVERSE, "ct")):
        table = primitive(fn).table(mode)
        table.update(dict.fromkeys(range(argnum)))  # constants: a derivative there is refused
        table[argnum] = (
            Template.deferred(derivative, functools.partial(make, lead))
            if _DEFERRED[0]
            else make(lead)
        )
    if broadcasts:
        primitive(fn).broadcasts = True
    _changed()


def _scale(factor, derivative):
    """``factor * derivative``, written ``factor / e`` when the derivative is ``1 / e``, and
    ``runtime.safe_divide(factor, e)`` when it is ``runtime.safe_divide(1, e)``, with its
    minus sign in front when it is ``-runtime.safe_divide(1, e)``."""
    d = copy.deepcopy(derivative)
    negated = isinstance(d, gast.UnaryOp) and isinstance(d.op, gast.USub)
    if _is_safe_divide_of_one(d.operand if negated else d):
        quotient = d.operand if negated else d
        quotient.args[0] = factor
        return gast.UnaryOp(op=gast.USub(), operand=quotient) if negated else quotient
    if (
        isinstance(d, gast.BinOp)
        and isinstance(d.op, gast.Div)
        and isinstance(d.left, gast.Constant)
        and d.left.value == 1
    ):
        return gast.BinOp(left=factor, op=gast.Div(), right=d.right)
    return gast.BinOp(left=factor, op=gast.Mult(), right=d)


def _ufunc_module(ufunc):
    """The module exporting a ufunc under its name: ``scipy.special`` for ``gamma`` (whose
    ``__module__`` is None), else ``numpy``."""
    special = sys.modules.get("scipy.special")
    name = getattr(ufunc, "__name__", "")
    if special is not None and getattr(special, name, None) is ufunc:
        return "scipy.special"
    return "numpy"


def _is_safe_divide_of_one(node):
    """Whether ``node`` is ``runtime.safe_divide(1, e)``."""
    return (
        isinstance(node, gast.Call)
        and isinstance(node.func, gast.Attribute)
        and isinstance(node.func.value, gast.Name)
        and (node.func.value.id, node.func.attr) == ("runtime", "safe_divide")
        and len(node.args) == 2
        and isinstance(node.args[0], gast.Constant)
        and node.args[0].value == 1
    )


def qualified_name(fn):
    if isinstance(fn, tuple):
        owner, attr = fn
        return f"{qualified_name(owner)}.{attr}"
    module = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    if module in ("builtins", "_operator"):
        module = "" if module == "builtins" else "operator"
    if type(fn).__name__ == "ufunc":
        module = _ufunc_module(fn)
    if (
        isinstance(fn, type(len))
        and module == ""
        and hasattr(fn, "__self__")
        and fn.__self__ is not None
        and type(fn.__self__).__name__ == "module"
    ):
        module = fn.__self__.__name__
    return f"{module}.{name}" if module else name


# called in a function being differentiated: refused (lowering/api_calls.py), by identity
register(
    Role.OTHER,
    defjvp,
    defvjp,
    specialize,
    holds_for_complex,
    defcomplex,
    def_linear,
    def_multilinear,
    handles,
    nondifferentiable,
    effectful,
    pure,
    broadcasting,
    elementwise,
)
