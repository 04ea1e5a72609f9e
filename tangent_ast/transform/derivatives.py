"""How the derivative of one operation is written, in either mode.

Shared by the forward and reverse transforms: look up what an operation
calls, pick the rule for each active argument (specialised to the argument
kinds where a variant exists), instantiate it at the call site, and adapt
shapes only where kinds say broadcasting can really happen.

The rule of ``np.sum`` of an array gives ``np.full_like`` of the cotangent; that of
``np.tanh`` multiplies by ``1 - ans ** 2``, with ``ans`` the saved result:

>>> import numpy as np, tangent_ast as ta
>>> def f(x):
...     return np.sum(np.tanh(x))
>>> print(ta.show(f, mode="reverse", stage="simplify", args=(np.ones(3),)))
def f_fwd(x):
    tanh = np.tanh(x)
    out = np.sum(tanh)
    return (out, (tanh,))
<BLANKLINE>
def f_bwd(saved, ct_out):
    tanh, = saved
    ct_x = np.full_like(tanh, ct_out) * (1 - tanh ** 2)
    return ct_x
<BLANKLINE>
"""

import functools
import inspect
import operator
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import gast
import numpy as np

from .. import runtime
from ..analysis.activity import Activity, assignments
from ..emit.emit import FUNCTION_VALUES, ModuleNamespace
from ..errors import ForwardRuleOnly, MissingRuleError, TangentAstError, UnsupportedSyntaxError
from ..front.aliasing import check_updates
from ..front.parse import ParsedFunction, parse
from ..front.resolve import Pack, Scope, callee, resolve
from ..modes import Mode, Route
from ..optimize.folding import with_number_exponents
from ..optimize.terms import merged, structural_zero
from ..rules.binding import CallRefused, bind_call
from ..rules.registry import ZERO, SameCall, lookup, qualified_name
from ..rules.template import literal
from ..vocabulary.calling import CallMismatch, bind, flat_params
from ..vocabulary.code_keys import is_library
from ..vocabulary.kinds import (
    UNKNOWN,
    Kind,
    Tag,
    has_complex,
    is_complex,
    kind_of,
    leading_axes,
    same_shape,
    type_unknown,
)
from ..vocabulary.naming import Namer
from ..vocabulary.syntax import name
from ..vocabulary.trees import copy_tree, walk
from .complex_values import ComplexValues
from .transpose import transpose_refusal, transposed


@dataclass
class Derivation(ComplexValues):
    """Everything the transforms need to know about the function being derived."""

    parsed: ParsedFunction
    scope: Scope
    namer: Namer
    kinds: dict[str, Kind]
    activity: Activity
    mode: Mode
    namespace: ModuleNamespace  # the globals of the generated module
    # (fn, mode, wrt positions, signature, where, form) -> the pipeline's CalleeRule
    derive_callee: Callable[..., Any]
    temps: set = field(default_factory=set)  # normalization temporaries
    carried: set = field(default_factory=set)  # loop header names
    loop_headers: dict = field(default_factory=dict)  # id(loop) -> header names of that loop
    rules_used: set = field(default_factory=set)  # qualified names of primitives used
    callees: list = field(default_factory=list)  # CalleeRules this rule calls
    tangent_names: dict = field(default_factory=dict)
    complex_involved: set = field(default_factory=set)  # names computed from complex values
    origin: dict = field(default_factory=dict)  # SSA name -> the user's name
    route: Route = Route.DIRECT
    sites: dict = field(default_factory=dict)  # id(expression) -> (its _site_key, its site)

    @property
    def transposing(self):
        """Reverse rules by the transpose route: a forward rule is enough for a primitive."""
        return self.mode is Mode.REVERSE and self.route is Route.TRANSPOSE

    def kind(self, atom):
        if (isinstance(atom, gast.Name) and self.scope.is_local(atom.id)) or (
            isinstance(atom, gast.Name) and atom.id in self.kinds
        ):
            return self.kinds.get(atom.id, UNKNOWN)

        if isinstance(atom, gast.Constant):
            return kind_of(atom.value)
        return kind_of(self.scope.lookup(atom)) if self.scope.lookup(atom) is not None else UNKNOWN

    def constant_value(self, expr):
        """The object a constant expression denotes: a literal, or a global such as
        ``np.float32``."""
        if isinstance(expr, gast.Constant):
            return expr.value
        found = self.scope.lookup(expr)
        if found is None or (isinstance(expr, gast.Name) and self.scope.is_local(expr.id)):
            raise LookupError(expr)
        return found

    def site(self, value):
        """The call site of ``value``; a primitive's is bound against its signature, its
        arguments in the canonical order of rules.binding (a refusal is kept, and raised
        only if the call carries a derivative).

        Bound once per expression: activity, the checks and the transform each ask for a
        statement's site. The memo holds ``value`` (its id is not reused) and is used while
        everything the site is made of is as it was (:func:`_site_key`; the scope is
        complete once the front stages end, and no rule is registered while a rule is
        derived); each caller gets its own copy, as some rewrite its arguments. A site
        holding what was made for it (a record's field name, a default, a gradient's
        function) is made for each caller."""
        key = _site_key(value, self.kinds)
        known = self.sites.get(id(value))
        if known is not None and _same_key(known[0], key):
            site = known[1]
        else:
            site = self._bound_site(value)
            if not _made_for_it(site, value, key, self.scope):
                self.sites[id(value)] = (key, site)
        if site is None:
            return None
        return replace(site, args=list(site.args), keywords=list(site.keywords))

    def _bound_site(self, value):
        site = callee(value, self.scope, self.kind)
        if site is None or site.fn is None or isinstance(site.fn, Pack):
            return site
        entry = lookup(site.fn)
        if entry is None or entry.nondiff or not (entry.jvps or entry.vjps):
            return site
        try:
            bound = bind_call(entry, site.args, site.keywords, self.constant_value)
        except CallRefused as refusal:
            return replace(site, refused=refusal)
        return replace(
            site,
            args=list(bound.args),
            keywords=list(bound.keywords),
            written=(site.args, site.keywords),
            slots={g.position: g.slot for g in bound.given if g.position is not None},
        )

    def is_active(self, atom):
        return isinstance(atom, gast.Name) and self.activity.active(atom.id)

    def active_args(self, site):
        return [i for i, a in enumerate(site.args) if _contains_active(a, self)]

    def call_function_value(self, node, site, helper, extra=()):
        """``function_values.<helper>(g, wrt, *args, *extra)`` for a call ``g(*args)`` of a function
        value (an argument, or a closure made in the function): its rule is found when
        the call runs, because which function ``g`` is, is only known then."""
        for kw in site.keywords:
            if _contains_active(kw.value, self):
                raise unsupported_call(
                    self,
                    node,
                    f"a differentiable value passed by keyword ({kw.arg}=...) to a function value",
                    "pass it positionally",
                )
        self.check_function_value(node, site)
        wrt = gast.Tuple(
            elts=[gast.Constant(i, None) for i in self.active_args(site)], ctx=gast.Load()
        )
        args = [copy_tree(site.func), wrt] + [copy_tree(a) for a in site.args] + list(extra)
        call = gast.Call(func=self.function_values_helper(helper), args=args, keywords=[])
        call.keywords = [
            gast.keyword(arg=kw.arg, value=copy_tree(kw.value)) for kw in site.keywords
        ]
        return call

    def check_function_value(self, node, site):
        """Refuse a call ``g(...)`` of a function value made from differentiable values (a
        closure of them, a pullback of ``vjp``): what it captures would get no derivative,
        whether or not its arguments carry one."""
        if isinstance(site.func, gast.Name) and site.func.id in self.activity.reached:
            raise unsupported_call(
                self,
                node,
                f"calling {site.func.id!r}, a function value made from "
                "differentiable values (what it captures would get no derivative)",
                "pass those values to it as arguments",
            )

    def runtime_helper(self, helper):
        """``runtime.<helper>``, with ``runtime`` imported by the generated module."""
        return gast.Attribute(
            value=name(self.bind("runtime", runtime)), attr=helper, ctx=gast.Load()
        )

    def function_values_helper(self, helper):
        """``function_values.<helper>``: generated code that calls a function value imports
        ``tangent_ast.function_values`` (it derives rules when the call runs)."""
        module = self.bind("function_values", FUNCTION_VALUES)
        return gast.Attribute(value=name(module), attr=helper, ctx=gast.Load())

    def call_runtime(self, helper, args):
        return gast.Call(func=self.runtime_helper(helper), args=args, keywords=[])

    def bind(self, preferred, obj):
        return self.namespace.bind(preferred, obj)

    def where(self, node):
        return self.parsed.where(node)

    def is_user_function(self, fn):
        """A function derived from its source: a Python function of the user's with no rule
        for this mode (a ``defvjp`` alone leaves forward mode to the source). NumPy's and the
        standard library's own Python code is not user code: a function of theirs without a
        rule is refused (MissingRuleError), never derived from its source."""
        entry = lookup(fn)
        # on the transpose route a forward rule is enough, except for tangent_ast's runtime
        # helpers: their forward rules are for forward over reverse, their source is the
        # reverse rule's (as on the direct route)
        forward_rule = (
            entry is not None
            and bool(entry.jvps)
            and not getattr(fn, "__module__", "").startswith("tangent_ast.")
        )
        transposed = self.transposing and forward_rule
        # the direct route: a forward rule alone is transposed too (by the transpose route)
        if forward_rule and self.mode is Mode.REVERSE and not (entry.vjps or self.transposing):
            raise ForwardRuleOnly(qualified_name(fn))
        return (
            (entry is None or not (entry.has(self.mode) or transposed))
            and inspect.isfunction(fn)
            and not is_library(fn.__module__)
        )

    def differentiable_args(self, value):
        """Local names in ``value`` through which derivatives can flow. Every argument of a
        call counts, those a rule declares without a derivative too: a differentiable value
        reaching one of them is refused where the rule is applied, never dropped silently."""
        site = self.site(value)
        if site is None:
            return {value.id} if isinstance(value, gast.Name) else set()
        names = set()
        entry = lookup(site.fn) if site.fn is not None else None
        if entry is not None and entry.nondiff:
            return names
        for i, a in enumerate(site.args):
            if entry is not None and _never_changes_with(entry, i):
                continue  # np.full_like(a, v) reads only a's shape: no derivative flows from a
            names |= {n.id for n in walk(a) if isinstance(n, gast.Name)}
        for kw in site.keywords:
            names |= {n.id for n in walk(kw.value) if isinstance(n, gast.Name)}
        return names

    def called_value(self, value):
        """``{"g"}`` for ``value`` a call ``g(...)`` of a local function value, else nothing:
        what ``g`` returns varies with what it was made from (a closure, a pullback of
        ``vjp``), even where none of its arguments does."""
        site = self.site(value)
        if site is not None and site.fn is None and isinstance(site.func, gast.Name):
            return {site.func.id}
        return set()

    def bind_user_call(self, node, site):
        """``(form, args)``: the call's arguments in flattened parameter order, keywords
        and defaults filled in (derived rules take every parameter positionally, see calling.py)."""
        fn = site.fn

        def default(p):
            try:
                return literal(p.default)
            except Exception:
                raise unsupported_call(
                    self,
                    node,
                    f"the default of {fn.__qualname__}'s parameter {p.name!r} is not a literal",
                    "pass it explicitly",
                ) from None

        try:
            return bind(fn, site.args, {kw.arg: kw.value for kw in site.keywords}, default)
        except CallMismatch as exc:
            raise unsupported_call(
                self,
                node,
                f"this call of {fn.__qualname__} ({exc})",
                "check the call against the function's parameters",
            ) from None

    def check_callee_updates(self, node, fn, form, args):
        """Refuse passing a value of ours to a function that updates that argument in place
        (``def h(a, b): a += b``): our value would change under us, and our derivative with it,
        which the call's rule does not tell us. A temporary (``h(x * 1.0, y)``) is fine."""

        params = flat_params(fn, form)
        kinds = [self.kind(a) for a in args]
        arrays = {
            p for p, k in zip(params, kinds, strict=False) if k.tag in (Tag.ARRAY, Tag.UNKNOWN)
        }
        lists = {p for p, k in zip(params, kinds, strict=False) if k.tag is Tag.LIST}
        dicts = {p for p, k in zip(params, kinds, strict=False) if k.tag is Tag.DICT}
        try:
            parsed = parse(fn)
            updated, written, by_key = check_updates(parsed, resolve(parsed), arrays, lists, dicts)
        except TangentAstError:
            return  # the callee's own derivation reports what it refuses
        for p, a in zip(params, args, strict=False):
            if (
                p in updated | written | by_key
                and isinstance(a, gast.Name)
                and a.id not in self.temps
                and self.scope.is_local(a.id)
            ):
                raise unsupported_call(
                    self,
                    node,
                    f"passing {a.id!r} to {fn.__qualname__}, which updates its argument {p!r} in "
                    f"place: {a.id!r} would change without its derivative",
                    f"have {fn.__name__} return the new value ({p} = {p} + ...; return {p}), or "
                    "pass a copy: "
                    f"{a.id}.copy()",
                )

    def zero(self, target):
        """A zero tangent for the value named ``target``, as cheap as its kind allows."""
        kind = self.kinds.get(target, UNKNOWN)
        if kind.tag is Tag.FLOAT:
            return gast.Constant(0.0, None)
        if kind.tag is Tag.COMPLEX:
            return gast.Constant(0j, None)
        if kind.tag is Tag.ARRAY:
            return _call(self.bind("np", np), "zeros_like", [name(target)])
        if kind.container:
            return self.call_runtime("zero_tangent", [name(target)])
        return self.call_runtime("zeros_like", [name(target)])

    def total(self, target, terms):
        """The sum of (co)tangent ``terms`` of ``target``: ``+``, or ``add_tangents``
        for containers, whose ``+`` would concatenate. A term that occurs twice
        (``x * x`` gives ``dx * x + x * dx``) is written once, doubled. A value of a kind
        not known whose cotangent places an item (``getitem_vjp``) may be a container (a
        dict, made by a function value): added by ``add_tangents`` too."""
        if not _adds_as_container(self.kinds.get(target, UNKNOWN), terms):
            return functools.reduce(
                lambda a, b: gast.BinOp(left=a, op=gast.Add(), right=b), merged(terms)
            )
        return functools.reduce(lambda a, b: self.call_runtime("add_tangents", [a, b]), terms)

    def summands(self, target, terms):
        """The terms :meth:`total` adds, equal ones merged (not for containers)."""
        kind = self.kinds.get(target, UNKNOWN)
        return terms if _adds_as_container(kind, terms) else merged(terms)

    def is_pack(self, site):
        return isinstance(site.fn, Pack)

    def pack_tangent(self, site, tangent_of):
        """``(a, b)`` -> ``(da, 0.0)``: the same container of tangents. The place of an int
        (or of a number of a type not known, which may be one) in a tuple, list or dict holds
        0.0 too, not None (an int's own tangent), so that the tangents add up as the numbers
        do (``sum([0, x])``, ``d["p"] * y``)."""
        elts = []
        held = site.fn.kind in (Tag.LIST, Tag.TUPLE, Tag.DICT)
        for a in site.args:
            t = tangent_of(a)
            if t is None:
                kind = self.kind(a)
                number = kind.scalar and kind.tag is not Tag.COMPLEX
                t = (
                    gast.Constant(0.0, None)
                    if kind.tag is Tag.FLOAT or (held and number)
                    else self.call_runtime("zero_tangent", [copy_tree(a)])
                )
            elts.append(t)
        if site.fn.kind is Tag.DICT:
            return gast.Dict(keys=[gast.Constant(k, None) for k in site.fn.keys], values=elts)
        if site.fn.replaces:  # replace(dp, W=dv): the record's tangent, those fields changed
            return gast.Call(
                func=copy_tree(site.func),
                args=[elts[0]],
                keywords=[
                    gast.keyword(arg=k, value=v)
                    for k, v in zip(site.fn.keys, elts[1:], strict=True)
                ],
            )
        if site.fn.kind is Tag.RECORD:  # Params(dW, db): the same class, holding tangents
            return gast.Call(
                func=copy_tree(site.func),
                args=[],
                keywords=[
                    gast.keyword(arg=k, value=v) for k, v in zip(site.fn.keys, elts, strict=True)
                ],
            )
        return (gast.Tuple if site.fn.kind is Tag.TUPLE else gast.List)(elts=elts, ctx=gast.Load())

    def contributions(self, node, site, target, leading):
        """Per active argument: the rule's expression at this call site.

        ``leading`` is the (co)tangent expression for each argument position
        (forward) or the result's cotangent (reverse). Returns a list of
        ``(argnum, expression)``.
        """
        entry = lookup(site.fn)
        transposing = self.transposing
        if entry is None or not (entry.has(self.mode) or (transposing and entry.jvps)):
            raise _missing(self, node, site, self.mode)
        if site.refused is not None:
            raise unsupported_call(self, node, site.refused.what, site.refused.hint)
        self.rules_used.add(entry.name)
        for kw in site.keywords:
            if _contains_active(kw.value, self):
                raise unsupported_call(
                    self,
                    node,
                    f"a differentiable value passed as {kw.arg}= to {entry.name}, whose rule "
                    f"treats {kw.arg} as a constant",
                    f"pass a constant there, or register a rule with a derivative for {kw.arg}",
                )
        # Variants are specialised on positional arguments only: keywords (axis=...) pick the
        # general rule.
        kinds = None if site.keywords else [self.kind(a) for a in site.args]
        out = []
        self.check_complex_constants(node, entry, site)
        for i in self.active_args(site):
            if entry.nondiff:
                continue
            try:
                if entry.validate is not None:
                    entry.validate(site.args, i, self.constant_value)
                # a value whose kind is not known may be complex when the rule runs: a
                # function's complex rule holds for real values too (taken real below)
                complex_argument = is_complex(self.kind(site.args[i])) or (
                    type_unknown(self.kind(site.args[i])) and entry.complex_rule_for(i)
                )
                at = (site.args, self.constant_value)
                rule = entry.rule(self.mode, i, kinds, complex_argument=complex_argument, at=at)
            except CallRefused as refusal:
                raise unsupported_call(self, node, refusal.what, refusal.hint) from None
            if rule is ZERO and any(i in r for r in entry.complex_rules.values()):
                self.check_argument(node, entry, site.args[i], i)  # zero for real values only
            if rule is ZERO:
                continue  # the result does not change with this argument (only its shape counts)
            # on the transpose route a forward rule alone will do: transposed below
            forward_only = transposing and entry.rule(Mode.FORWARD, i, kinds) is not None
            if rule is None and not forward_only:
                if i not in _rule_table(entry, self.mode) and (i in entry.jvps or i in entry.vjps):
                    raise _missing(
                        self, node, site, self.mode, argnum=i
                    )  # a rule in the other mode only
                # declared as a constant (an index, a condition, interp's sample points):
                # a differentiable value there would silently get no derivative
                raise self.constant_argument(node, entry, site, i)
            self.check_argument(node, entry, site.args[i], i)
            lead = leading[i] if self.mode is Mode.FORWARD else leading
            # a complex rule taken for a value of a kind not known: its reverse rule, which
            # reads the value's own type at run time (the transposer takes it as real)
            if transposing and not (complex_argument and not is_complex(self.kind(site.args[i]))):
                expr = self.transposed(node, site, entry, i, target, lead, kinds, rule)
                if expr is not None:
                    out.append((i, self.real_cotangent(node, entry, site, i, target, expr)))
                    continue
            try:
                if isinstance(rule, SameCall):
                    expr = self.same_call(rule, site, i, lead)
                else:
                    expr = rule.instantiate(
                        [lead, name(target)], site.args, site.keywords, self.bind
                    )
            except TangentAstError as exc:
                if exc.where is not None:
                    raise
                raise TangentAstError(
                    f"{exc.message} (calling {entry.name})", where=self.where(node), hint=exc.hint
                ) from None
            expr = structural_zero(with_number_exponents(expr, self.namespace))
            if self.mode is Mode.REVERSE and entry.broadcasts:
                expr = self.unbroadcast(expr, site.args[i], target)
            if self.mode is Mode.REVERSE:
                expr = self.real_cotangent(node, entry, site, i, target, expr, complex_argument)
            out.append((i, expr))
        return out

    def transposed(self, node, site, entry, i, target, ct, kinds, reverse_rule):
        """The transpose route: argument ``i``'s cotangent from the forward rule, or None
        where it cannot be transposed and the primitive's reverse rule is used."""
        result = transposed(self, node, site, entry, i, target, ct, kinds)
        if result.expr is not None:
            return result.expr
        if reverse_rule is None:
            raise transpose_refusal(self, node, entry, i, result.why)
        return None  # the reverse rule is used

    def constant_argument(self, node, entry, site, i):
        """The refusal of a differentiable value where ``entry``'s rule takes a constant."""
        if entry.fn is operator.getitem:
            base = self.scope.lookup(site.args[0])  # a global such as np.r_, or None for a local
            if isinstance(base, (type(np.r_), type(np.c_))):
                return unsupported_call(
                    self,
                    node,
                    "np.r_[...] / np.c_[...] of differentiable values",
                    "join them with np.concatenate([...]) or np.column_stack([...])",
                )
            return unsupported_call(
                self,
                node,
                "a differentiable value used as an index",
                "index with integers; for interpolation use np.interp",
            )
        return unsupported_call(
            self,
            node,
            f"a differentiable value passed as argument {i + 1} of {entry.name}, which its "
            "rule treats as a constant",
            "pass a constant there, or register a rule with a derivative for that argument",
        )

    def same_call(self, rule, site, i, lead):
        """A linear function's forward rule: the call as written, the tangent in place of argument
        ``i``."""
        if site.written is None:
            return rule.instantiate(
                [lead],
                site.args,
                site.keywords,
                self.bind,
                func=site.func,
                slot=i,
                method=site.method,
            )
        args, keywords = site.written
        return rule.instantiate(
            [lead],
            args,
            keywords,
            self.bind,
            func=site.func,
            slot=site.slots[i],
            method=site.method,
        )

    def check_complex_constants(self, node, entry, site):
        """An argument without a derivative may still be complex (``lstsq(A, b)`` of a complex
        constant ``A``): the formulas of rules for real values are wrong for it."""
        active = set(self.active_args(site))
        if entry.nondiff or not active or entry.holds_for_complex:
            return
        for j, arg in enumerate(site.args):
            if j not in active and has_complex(self.kind(arg)) and not entry.takes_complex(j):
                raise unsupported_call(
                    self,
                    node,
                    f"argument {j + 1} of {entry.name} is complex ({self.kind(arg).describe()}), "
                    "and its rules are for real values",
                    "take np.real(...) or np.abs(...) of it first, or register complex rules "
                    "(tangent_ast.holomorphic / defcomplex)",
                )

    def check_argument(self, node, entry, arg, i):
        """A differentiable argument is of a kind the rule has formulas for: a real float or
        float array (lists, tuples and records only where the rule says so; no complex values)."""
        kind = self.kind(arg)
        what = f"argument {i + 1} of {entry.name}"
        if kind.container and not entry.sequences:
            raise unsupported_call(
                self,
                node,
                f"{what} is a {kind.tag} of differentiable values; the rule takes arrays",
                "make it an array first with np.array(...): the derivative of np.array of a list "
                "is known",
            )
        if (
            self.may_be_complex(arg)
            and not is_complex(kind)
            and not (entry.holds_for_complex or entry.complex_rule_for(i))
        ):
            raise unsupported_call(
                self,
                node,
                f"{what} is computed from complex values, and whether it is real or complex "
                f"is not known ({kind.describe()}), while the rules of {entry.name} differ for "
                "the two",
                "take np.real(...) or np.abs(...) of it first, or make it complex with "
                "np.asarray(..., complex)",
            )
        if is_complex(kind) and not entry.takes_complex(i):
            raise unsupported_call(
                self,
                node,
                f"{what} is complex ({kind.describe()}), and the rules of {entry.name} are for "
                "real values",
                "take np.real(...), np.imag(...) or np.abs(...) of it first, or register complex "
                "rules (tangent_ast.holomorphic / defcomplex)",
            )

    def check_calls(self, fn):
        """Every call of a user function, active or not (its effect on an argument happens
        either way): refuse one that updates a value of ours in place."""
        for s in assignments(fn.body):
            site = self.site(s.value)
            if site is None or site.fn is None or not self.is_user_function(site.fn):
                continue
            try:
                form, args = bind(
                    site.fn,
                    site.args,
                    {kw.arg: kw.value for kw in site.keywords},
                    lambda p: gast.Constant(None, None),
                )
            except CallMismatch:
                continue  # refused where the call is derived, if it carries a derivative
            self.check_callee_updates(s, site.fn, form, args)

    def check_lambda_values(self, fn):
        """A lambda kept as a function value is called through its own rule, which takes
        what it captures as constants: refuse one that captures a value carrying a
        derivative (it would get none)."""
        for s in assignments(fn.body):
            for lam in (n for n in walk(s.value) if isinstance(n, gast.Lambda)):
                params = {a.id for a in lam.args.args}
                for n in gast.walk(lam.body):
                    if (
                        isinstance(n, gast.Name)
                        and n.id not in params
                        and self.activity.active(n.id)
                    ):
                        raise UnsupportedSyntaxError(
                            f"a lambda passed or stored as a value that reads "
                            f"{self.origin.get(n.id, n.id)!r}, which carries a derivative (the "
                            "lambda's own rule would take it as a constant)",
                            where=self.where(s),
                            hint="pass it to the lambda as an argument",
                        )

    def unbroadcast(self, expr, arg, result):
        arg_kind, result_kind = self.kind(arg), self.kinds.get(result, UNKNOWN)
        if same_shape(arg_kind, result_kind) or arg_kind.container or result_kind.container:
            return expr
        if arg_kind.scalar and result_kind.tag is Tag.ARRAY:
            return _call(self.bind("np", np), "sum", [expr])
        leading = leading_axes(arg_kind, result_kind)
        if leading:  # b of X @ W + b: the cotangent summed over the axes b was stretched along
            axis = gast.Tuple([gast.Constant(i, None) for i in leading], gast.Load())
            sum_call = _call(self.bind("np", np), "sum", [expr])
            sum_call.keywords = [gast.keyword("axis", axis if len(leading) > 1 else axis.elts[0])]
            return sum_call
        return self.call_runtime("unbroadcast", [expr, copy_tree(arg)])

    def broadcast_tangent(self, expr, site, active, target):
        """Forward mode: make a tangent from smaller arguments the result's shape."""
        entry = lookup(site.fn)
        if entry is None or not entry.broadcasts:
            return expr
        result_kind = self.kinds.get(target, UNKNOWN)
        if (
            any(same_shape(self.kind(site.args[i]), result_kind) for i in active)
            or result_kind.container
        ):
            return expr
        if result_kind.tag is Tag.FLOAT or result_kind.scalar:
            return expr
        if len(active) == len(site.args) and not any(self.kind(a).container for a in site.args):
            return expr  # each argument's term is its shape at least: the sum is the result's
        return self.call_runtime("broadcast_like", [expr, name(target)])


def _site_key(value, kinds):
    """Everything a call site is made of: ``value``'s nodes, what each holds (a name, a
    constant, an operator) and the kinds of the names read (a method is found by its
    receiver's kind); compared by identity (:func:`_same_key`)."""
    key = []
    for node in walk(value):
        key.append(node)
        key += [getattr(node, f, None) for f in node._fields]
        if isinstance(node, gast.Name):
            key.append(kinds.get(node.id))
    return key


def _made_for_it(site, value, key, scope):
    """Whether ``site`` holds something made when it was found, not ``value``'s own."""
    if site is None:
        return False
    if isinstance(site.fn, Pack) or (
        isinstance(value, gast.Call) and hasattr(scope.lookup(value.func), "tangent_ast_source_for")
    ):
        return True
    own = {id(part) for part in key}
    return not all(id(part) in own for part in site.args + site.keywords)


def _same_key(a, b):
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


def _rule_table(entry, mode):
    return entry.jvps if mode is Mode.FORWARD else entry.vjps


def _never_changes_with(entry, i):
    """Whether the rules of ``entry`` say its result does not change with argument ``i`` at
    all (``ZERO`` in every mode, with no variant or complex rule for it)."""
    rules = [r for r in (entry.jvps.get(i), entry.vjps.get(i)) if r is not None]
    return (
        bool(rules)
        and all(r is ZERO for r in rules)
        and not any(i in table for table in entry.complex_rules.values())
        and not any(i in table for _, _, table in entry.variants)
    )


def _contains_active(atom, derivation):
    return any(isinstance(n, gast.Name) and derivation.activity.active(n.id) for n in walk(atom))


def _call(module_name, attr, args):
    return gast.Call(
        func=gast.Attribute(value=name(module_name), attr=attr, ctx=gast.Load()),
        args=args,
        keywords=[],
    )


def _missing(derivation, node, site, mode, argnum=None):
    fn_name = qualified_name(site.fn) if site.fn is not None else "this call"
    decorator = "defjvp" if mode is Mode.FORWARD else "defvjp"
    which = f" for argument {argnum}" if argnum is not None else ""
    return MissingRuleError(
        f"no {mode} rule for {fn_name}{which}",
        where=derivation.where(node),
        hint=f"register one with @tangent_ast.{decorator}({fn_name})",
    )


def unsupported_call(derivation, node, what, hint=None):
    return UnsupportedSyntaxError(what, where=derivation.where(node), hint=hint)


def _adds_as_container(kind, terms):
    """Whether (co)tangents of a value of ``kind`` are added as a container's: a container,
    or a value of a kind not known one of whose ``terms`` places an item or a field in it."""
    if kind.container:
        return True
    return kind.tag is Tag.UNKNOWN and kind.ndim is None and any(map(_places_an_item, terms))


def _places_an_item(term):
    return (
        isinstance(term, gast.Call)
        and isinstance(term.func, gast.Attribute)
        and term.func.attr in ("getitem_vjp", "getattr_vjp")
    )
