"""tangent_ast's own API called in the function: differentiated through, or refused.

The API is known by the identity of its objects (:mod:`tangent_ast.vocabulary.api_roles`),
never by a name. Each call becomes a call of a function whose source is on disk, so that it
is derived like any other (derived rules are plain Python, closed under derivation):

* ``ta.grad(g)(x)`` (``value_and_grad``, ``hvp``, ``checkpoint``, made of constants): the
  function made once, now, and called by a name of its own (``grad_of_g(x)``), which the
  derivation binds to the gradient of ``g``'s reverse rule (``api.grad``);
* ``ta.jvp(g, (x, y), (dx, None))``: ``g``'s forward rule, ``jvp_of_g(x, y, dx)``;
* ``out, pullback = ta.vjp(g, x)``: ``g``'s forward sweep, ``out, pullback = vjp_of_g(x)``
  (``g_fwd``), whose ``pullback`` is then the residuals its reverse sweep reads, and each
  ``pullback(ct)`` that sweep, ``pullback_of_g(pullback, ct)`` (``g_bwd``);
* ``out, g_jvp = ta.linearize(g, x)``: ``out = g(x)`` and the point, ``g_jvp = (x,)``, and each
  ``g_jvp(t)`` the tangent of ``g``'s forward rule there, ``linear_map_of_g(g_jvp, t)``;
* a derived rule called (``rule(x, dx)``): its ``rule.jvp`` (``rule.fwd``), named so.

Everything else is refused, naming the call and what to do instead: a pullback or linear map
that is passed on, stored or made outside, the functions ``jacfwd``, ``jacrev`` and ``hessian``
make, ``derive``, the checks of ``tangent_ast.testing``, the rest of the API.

>>> from tangent_ast.front.lowering import lower_source
>>> print(lower_source('''
... import tangent_ast as ta
... def f(x):
...     out, pullback = ta.vjp(np.sin, x)
...     return pullback(out * 2.0)
... '''))
def f(x):
    vjp_of_sin_1 = vjp_of_sin(x)
    out = vjp_of_sin_1[0]
    pullback = vjp_of_sin_1[1]
    out_times_two = out * 2.0
    out_1 = pullback_of_sin(pullback, out_times_two)
    return out_1
"""

import functools

import gast

from ...vocabulary.api_roles import Role, role_of, second_order
from ...vocabulary.kinds import UNKNOWN, kind_of
from ...vocabulary.syntax import located, name
from ...vocabulary.trees import walk
from ..checks import unsupported

# what to do instead, for each role refused in differentiated code
_INSTEAD = {
    Role.MADE: "compute it outside the function being differentiated, or write what it "
    "computes with ta.jvp or ta.vjp of a module-level function",
    Role.PULLBACK: "make it in the function being differentiated (out, pullback = ta.vjp(f, x)) "
    "and call it there, or call it outside",
    Role.DERIVE: "derive the rule outside the function and call its functions in it "
    "(rule.jvp, rule.fwd, rule.bwd)",
    Role.CHECK: "check the derivatives outside the function being differentiated",
    Role.OTHER: "call it outside the function being differentiated",
}

# the keyword arguments each call form takes (constants), beside its positional ones
_KEYWORDS = {Role.VJP: ("wrt", "cache", "route"), Role.LINEARIZE: ("wrt", "cache")}


class ApiCallLowering:
    """The lowering of calls of tangent_ast's API (a mixin of the Normalizer: ``self.made``
    maps each name made here to what it stands for, ``self.made_calls`` a pullback's or
    linear map's name to the name its calls become)."""

    def made_name(self, base, made):
        """A fresh global name for ``made``, made for a call of the API here; bound to the
        function with source on disk it stands for once the kinds are known (:func:`bind_made`)."""
        label = self.namer.fresh(base)
        self.scope.free[label] = made
        self.made[label] = made
        return label

    def api_role(self, func):
        """The role of what ``func`` denotes, a global name or attribute chain; else None."""
        if not self.is_global(func):
            return None
        return role_of(self.scope.lookup(func))

    def is_global(self, expr):
        return (isinstance(expr, gast.Name) and not self.scope.is_local(expr.id)) or (
            isinstance(expr, gast.Attribute) and self.scope.is_global_chain(expr)
        )

    def api_assignment(self, s):
        """``out, pullback = ta.vjp(g, x)`` (or ``ta.linearize``): the statements it is lowered
        to; None for any other statement."""
        value = s.value
        role = self.api_role(value.func) if isinstance(value, gast.Call) else None
        if role not in (Role.VJP, Role.LINEARIZE):
            return None
        what = f"ta.{role.value}"
        made = "pullback" if role is Role.VJP else "f_jvp"
        target = s.targets[0]
        if not (
            len(s.targets) == 1
            and isinstance(target, (gast.Tuple, gast.List))
            and len(target.elts) == 2
            and all(isinstance(t, gast.Name) for t in target.elts)
        ):
            raise unsupported(
                self.parsed,
                s,
                f"{what} in a function being differentiated, its result not unpacked",
                f"unpack it into two names: out, {made} = {what}(f, x)",
            )
        out, made = (t.id for t in target.elts)
        g, args = self.function_and_arguments(value, what, s)
        options = self.constant_keywords(value, _KEYWORDS[role], what, s)
        self.check_only_called(made, s, what, role)
        api, fn, base = self.scope.lookup(value.func), self.scope.lookup(g), _base(g)
        if role is Role.VJP:
            forward, backward = api.as_functions(
                fn, len(args), where=self.parsed.where(s), **options
            )
            label = self.made_name(f"vjp_of_{base}", forward)
            self.record_made_from(label, g)
            call = gast.Call(func=name(label), args=args, keywords=[])
            self.made_calls[made] = self.made_name(f"pullback_of_{base}", backward)
            self.record_made_from(self.made_calls[made], g)
            unpacked = gast.Assign(targets=[target], value=call, type_comment=None)
            return self.assign(located(unpacked, s))
        linear_map = api.as_function(fn, len(args), where=self.parsed.where(s), **options)
        self.made_calls[made] = self.made_name(f"linear_map_of_{base}", linear_map)
        self.record_made_from(self.made_calls[made], g)
        primal = gast.Assign(
            targets=[name(out, gast.Store())],
            value=gast.Call(func=g, args=list(args), keywords=[]),
            type_comment=None,
        )
        point = gast.Assign(
            targets=[name(made, gast.Store())],
            value=gast.Tuple(elts=list(args), ctx=gast.Load()),
            type_comment=None,
        )
        return self.assign(located(primal, s)) + self.assign(located(point, s))

    def api_call(self, call, at):
        """A call in the function as the derivation takes it: a pullback's or linear map's
        call, ``ta.jvp(...)`` and a derived rule's call written as calls of functions with
        source on disk; any other call of the API refused; other calls as they are."""
        func = call.func
        if isinstance(func, gast.Name) and func.id in self.made_calls:
            if call.keywords:
                raise unsupported(
                    self.parsed,
                    at,
                    f"calling {func.id!r} with keyword arguments in a function being "
                    "differentiated",
                    f"call it with the cotangent or tangents only: {func.id}(ct)",
                )
            label = self.made_calls[func.id]
            return gast.Call(func=name(label), args=[name(func.id), *call.args], keywords=[])
        role = self.api_role(func)
        if role is None or hasattr(self.scope.lookup(func), "tangent_ast_source_for"):
            return call  # grad(g) made outside: resolve takes its source (api.grad)
        if role is Role.JVP:
            return self.jvp_call(call, at)
        if role is Role.RULE:
            rule = self.scope.lookup(func)
            function = rule.jvp if hasattr(rule, "jvp") else rule.fwd
            return gast.Call(
                func=name(self.made_name(function.__name__, function)),
                args=call.args,
                keywords=call.keywords,
            )
        if role in (Role.MAKER, Role.FUNCTION_VALUE):
            # g = ta.grad(f): a function value, its rule found when it is called; a derived
            # rule's call of a function value is one too (resolve.py)
            return call
        self.refuse(func, role, at)
        return call

    def refuse(self, func, role, at):
        """Refuse a call of ``func`` (of ``role``) in the function being differentiated."""
        called = self.scope.lookup(func)
        shown = _shown(func, called)
        if role in (Role.VJP, Role.LINEARIZE):
            made = "pullback" if role is Role.VJP else "f_jvp"
            raise unsupported(
                self.parsed,
                at,
                f"{shown} in a function being differentiated, its result not unpacked",
                f"unpack it into two names: out, {made} = {shown}(f, x)",
            )
        raise unsupported(
            self.parsed,
            at,
            f"calling {shown}, tangent_ast's own, in a function being differentiated",
            _INSTEAD[role],
        )

    def made_by_api(self, func):
        """``ta.grad(g, wrt)(x)`` (``value_and_grad``, ``hvp``, ``checkpoint``) of constants:
        the function made now (it is what the call makes every time), bound to a name of the
        function's globals, whose calls are differentiated through its own source. None for
        any other callee."""
        if not isinstance(func, gast.Call):
            return None
        role = self.api_role(func.func)
        if role is not None and role is not Role.MAKER:
            self.api_call(func, func)  # ta.jacfwd(f)(x): refused, naming it
        if role is not Role.MAKER:
            return None
        try:
            made = self.constant_value(func)
        except LookupError:
            raise unsupported(
                self.parsed,
                func,
                f"calling what {_shown(func.func, None)} makes of values of the function being "
                "differentiated",
                f"make it of module-level functions and constants: {_shown(func.func, None)}(f)(x)",
            ) from None
        maker, first = self.scope.lookup(func.func), func.args[0] if func.args else None
        if second_order(maker) and first is not None and _holds_values(self.constant_value(first)):
            raise unsupported(
                self.parsed,
                func,
                f"{_shown(func.func, None)} of a closure or a functools.partial in a function "
                "being differentiated (a third derivative through captured values)",
                "pass the captured values as arguments of a module-level function",
            )
        return name(self.made_name(f"{maker.__name__}_of_{_base(first)}", made))

    def constant_value(self, expr):
        """The value of ``expr``: a constant, a global, or a call of an API function that
        makes functions (``ta.grad(ta.grad(g))``) on such values. LookupError otherwise."""
        if isinstance(expr, gast.Constant):
            return expr.value
        if self.is_global(expr):
            return self.scope.lookup(expr)
        if isinstance(expr, gast.Call) and self.api_role(expr.func) is Role.MAKER:
            args = [self.constant_value(a) for a in expr.args]
            keywords = {kw.arg: self.constant_value(kw.value) for kw in expr.keywords}
            return self.scope.lookup(expr.func)(*args, **keywords)
        raise LookupError(expr)

    def jvp_call(self, call, at):
        """``ta.jvp(g, (x, y), (dx, None))`` of a global function ``g``, primals and tangents
        written out: a call of the forward rule of ``g``, ``jvp_of_g(x, y, dx)``, which
        returns the same pair and is differentiated through its own source."""
        if (
            len(call.args) != 3
            or call.keywords
            or not isinstance(call.args[1], gast.Tuple)
            or not isinstance(call.args[2], gast.Tuple)
            or len(call.args[1].elts) != len(call.args[2].elts)
            or any(isinstance(e, gast.Starred) for e in call.args[1].elts + call.args[2].elts)
        ):
            raise unsupported(
                self.parsed,
                at,
                f"{_shown(call.func, None)} in a function being differentiated in this form",
                "write the primals and tangents out as tuples, with no keywords: "
                "ta.jvp(f, (x, y), (dx, None))",
            )
        g, args = self.function_and_arguments(call, "ta.jvp", at)
        primals, tangents = args
        given = [
            i
            for i, t in enumerate(tangents.elts)
            if not (isinstance(t, gast.Constant) and t.value is None)
        ]
        target = self.scope.lookup(g)
        # api.jvp says how: a function of (*primals, *given tangents) with its source on disk
        made = self.scope.lookup(call.func).as_function(target, tuple(given), len(primals.elts))
        label = self.made_name(f"jvp_of_{_base(g)}", made)
        self.record_made_from(label, g)
        return gast.Call(
            func=name(label),
            args=[*primals.elts, *(tangents.elts[i] for i in given)],
            keywords=[],
        )

    def record_made_from(self, label, g):
        """``label`` is made of ``g`` read as a free name or attribute chain: its rules are
        those of the closure ``g`` denotes, loaded with that closure's values."""
        chain = []
        while isinstance(g, gast.Attribute):
            chain.append(g.attr)
            g = g.value
        if isinstance(g, gast.Name) and not self.scope.is_local(g.id):
            self.scope.made_from[label] = ".".join([g.id, *reversed(chain)])

    def function_and_arguments(self, call, what, at):
        """The function ``call`` is given first, a module-level one (refused otherwise), and
        the rest of its positional arguments, none starred."""
        if not call.args or any(isinstance(a, gast.Starred) for a in call.args):
            raise unsupported(
                self.parsed, at, f"{what} with *arguments", f"write them out: {what}(f, x, y)"
            )
        g = call.args[0]
        if not self.is_global(g):
            raise unsupported(
                self.parsed,
                at,
                f"{what} of a function made or passed in the function being differentiated",
                f"call {what} on a function defined at module level",
            )
        return g, list(call.args[1:])

    def constant_keywords(self, call, allowed, what, at):
        """The keyword arguments of ``call``: each one of ``allowed``, a constant or global."""
        options = {}
        for kw in call.keywords:
            try:
                if kw.arg not in allowed:
                    raise LookupError(kw.arg)
                options[kw.arg] = self.constant_value(kw.value)
            except LookupError:
                raise unsupported(
                    self.parsed,
                    at,
                    f"{what}(..., {kw.arg}=...) in a function being differentiated",
                    f"pass {', '.join(allowed)} only, as constants",
                ) from None
        return options

    def check_only_called(self, made, at, what, role):
        """Refuse a pullback (or linear map) ``made`` that the function does anything with
        but call it, or binds again: its calls are what is differentiated through."""
        node = self.parsed.node
        called = {id(n.func) for n in walk(node) if isinstance(n, gast.Call)}
        names = [n for n in walk(node) if isinstance(n, gast.Name) and n.id == made]
        stores = [n for n in names if not isinstance(n.ctx, gast.Load)]
        other = [n for n in names if isinstance(n.ctx, gast.Load) and id(n) not in called]
        if len(stores) > 1 or other:
            kind = "pullback" if role is Role.VJP else "linear map"
            raise unsupported(
                self.parsed,
                other[0] if other else at,
                f"the {kind} {made!r} of {what} "
                + ("assigned again" if len(stores) > 1 else "used other than by calling it"),
                f"call it where it is made, under a name of its own: {made}(...)",
            )


def _holds_values(fn):
    """A function carrying values of its own: a closure, or a ``functools.partial``."""
    return isinstance(fn, functools.partial) or bool(getattr(fn, "__closure__", None))


def bind_made(function, scope, kinds, made):
    """Bind each name ``made`` for a call of the API (:class:`ApiCallLowering`) to the
    function with source on disk it stands for at the kinds of its call's arguments (its
    ``tangent_ast_source_for``), so that the derived code calls that function by name."""
    sites = {}
    for n in walk(function):
        if isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id in made:
            sites.setdefault(n.func.id, n)
    for label, obj in made.items():
        source_for = getattr(obj, "tangent_ast_source_for", None)
        if source_for is None or label not in sites:
            continue
        scope.free[label] = source_for(tuple(_kind(a, scope, kinds) for a in sites[label].args))


def _kind(atom, scope, kinds):
    if isinstance(atom, gast.Constant):
        return kind_of(atom.value)
    if isinstance(atom, gast.Name) and scope.is_local(atom.id):
        return kinds.get(atom.id, UNKNOWN)
    found = scope.lookup(atom)
    return UNKNOWN if found is None else kind_of(found)


def _base(expr):
    """The name made names are made from: ``sin`` for ``np.sin``, ``g`` for ``g``."""
    if isinstance(expr, gast.Attribute):
        return expr.attr
    if isinstance(expr, gast.Name):
        return expr.id
    return "f"


def _shown(func, obj):
    """How a refusal names what is called: as written (``ta.jacfwd``), with what made it."""
    written = []
    while isinstance(func, gast.Attribute):
        written.append(func.attr)
        func = func.value
    if isinstance(func, gast.Name):
        written.append(func.id)
    text = ".".join(reversed(written)) or "it"
    shown = repr(obj)
    return text if obj is None or " at 0x" in shown else f"{text} ({shown})"
