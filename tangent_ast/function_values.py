"""Calls of function values in derived code: their rules are derived when the call runs.

A function passed in as an argument, or a closure made inside the differentiated
function, is only known when the call runs. Derived code calls it through these
helpers, which derive (or find in the cache) the rule of the function actually passed:

    def apply(g, x):              def apply_jvp(g, x, dx):
        return g(x)         ->        out, dout = function_values.call_jvp(g, (0,), x, dx)
                                      return out, dout

So a module that calls a function value needs the transformer at run time; every
other generated module needs only :mod:`tangent_ast.runtime`.
"""

import inspect
import weakref
from dataclasses import dataclass

from .api.api import derive
from .api.sessions import _session, as_function
from .errors import TangentAstError
from .modes import Mode
from .runtime import zero_tangent
from .vocabulary.api_roles import Role, register
from .vocabulary.calling import flat_arguments
from .vocabulary.kinds import KEYS_KEPT, signature_key, signature_of

# function -> {(mode, wrt, arguments' key): rule}
_FUNCTION_VALUE_RULES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _rule_of_function_value(f, mode, wrt, args, kwargs):
    """The derived rule of ``f``, a function value called in a derived rule (a function
    passed in, or a closure), and the arguments to call it with (calling.py); closures
    of one function each keep their captured values. A function made by the API
    (``grad(g)``) is called through its source on disk, a primitive with rules (``np.sin``)
    through a def that calls it (``sessions.as_function``)."""
    again = getattr(f, "tangent_ast_source_for", None)
    if again is not None and not kwargs:
        f = again(signature_of(args))
    elif not inspect.isfunction(f):
        f = as_function(f, _session().directory)
    rules = _FUNCTION_VALUE_RULES.setdefault(f, {}) if inspect.isfunction(f) else None
    if rules is None:
        raise TangentAstError(
            f"a derived rule called {getattr(f, '__qualname__', f)!r} passed as a function value, "
            "and only Python functions (def, closures) can be called that way",
            hint="wrap it in a def: def g(x): return np.sin(x), and pass g",
        )
    form, flat = flat_arguments(f, args, kwargs)  # the positional arguments come first
    key = (mode, wrt, form, signature_key(flat))
    if key not in rules or not rules[key].dependencies.current():  # redefined callees: derive again
        if len(rules) >= KEYS_KEPT:
            rules.clear()
        rules[key] = derive(f, mode, wrt, args=args, kwargs=kwargs)
    return rules[key], flat


def call_jvp(f, wrt, *args_and_tangents, **kwargs):
    """``(f(*args, **kwargs), its tangent)`` for a function value ``f``; the tangents of
    the positional arguments at positions ``wrt`` follow the arguments."""
    args = args_and_tangents[: len(args_and_tangents) - len(wrt)]
    tangents = args_and_tangents[len(args) :]
    if f in _SWEEPS:
        sweep = _Sweep.of(f, wrt, args, kwargs)
        if not sweep.wrt:  # only what has no derivative varies: the value, a zero tangent
            value = sweep.function(*sweep.point)
            return value, zero_tangent(value)
        rule, flat = _rule_of_function_value(
            sweep.function, Mode.FORWARD, sweep.wrt, sweep.point, {}
        )
        value, tangent = rule.jvp(*flat, *sweep.tangents(tangents))
        return sweep.value(value), sweep.tangent(tangent)
    rule, flat = _rule_of_function_value(f, Mode.FORWARD, wrt, args, kwargs)
    return rule.jvp(*flat, *tangents)


def call_fwd(f, wrt, *args, **kwargs):
    """``(f(*args, **kwargs), saved)`` for a function value ``f``; ``call_bwd(saved, ct)``
    gives the cotangents of the positional arguments at positions ``wrt``."""
    if f in _SWEEPS:
        sweep = _Sweep.of(f, wrt, args, kwargs)
        if not sweep.wrt:  # only what has no derivative varies: no cotangent to give
            nothing = None if len(wrt) == 1 else (None,) * len(wrt)
            return sweep.function(*sweep.point), (lambda saved, ct: nothing, None)
        rule, flat = _rule_of_function_value(
            sweep.function, Mode.REVERSE, sweep.wrt, sweep.point, {}
        )
        value, saved = rule.fwd(*flat)

        def pullback(saved, ct):
            return sweep.cotangents(rule.bwd(saved, sweep.cotangent(ct)))

        return sweep.value(value), (pullback, saved)
    rule, flat = _rule_of_function_value(f, Mode.REVERSE, wrt, args, kwargs)
    out, saved = rule.fwd(*flat)
    return out, (rule.bwd, saved)


def call_bwd(saved, ct):
    """The cotangents of the arguments at positions ``wrt`` of the ``call_fwd`` that saved
    ``saved``: its reverse sweep, and what that sweep reads."""
    bwd, residuals = saved
    return bwd(residuals, ct)


_SWEEPS = (call_fwd, call_bwd, call_jvp)


@dataclass(frozen=True)
class _Sweep:
    """A call of the helpers above differentiated again (a rule that calls a function value,
    itself derived: forward over reverse, reverse over reverse): the rule's function it runs,
    with source on disk, so derived like any other, at the point it is called with, and how
    the helper's values, tangents and cotangents are the function's.

    ``call_fwd(g, wrt, x)`` runs ``g_fwd(x)`` and returns ``(out, (g_bwd, saved))``;
    ``call_bwd((g_bwd, saved), ct)`` runs ``g_bwd(saved, ct)``; ``call_jvp(g, wrt, x, dx)`` runs
    ``g_jvp(x, dx)``."""

    helper: object
    function: object  # the rule's function the helper runs
    point: tuple  # what it is called with
    wrt: tuple  # the positions of point that carry derivatives
    bwd: object = None  # call_fwd: the reverse sweep its saved value holds
    # call_bwd of a saved value that holds nothing with a derivative (a closure's shapes or
    # flags): its tangent and cotangent are left out of the function's, which is not
    # differentiated with respect to it
    inert_saved: bool = False

    @classmethod
    def of(cls, helper, wrt, args, kwargs):
        if helper is call_bwd:
            (bwd, residuals), ct = args
            if getattr(bwd, "__module__", None) == __name__:  # a pullback of this module's
                raise _third_order()
            if 0 in wrt and not signature_of((residuals,))[0].differentiable:
                others = tuple(i for i in wrt if i != 0)
                return cls(helper, bwd, (residuals, ct), others, inert_saved=True)
            return cls(helper, bwd, (residuals, ct), wrt)
        g, g_wrt, *rest = args
        if g in _SWEEPS or 0 in wrt or 1 in wrt:
            raise _third_order()
        if helper is call_fwd:
            rule, flat = _rule_of_function_value(g, Mode.REVERSE, g_wrt, tuple(rest), kwargs)
            return cls(helper, rule.fwd, tuple(flat), tuple(i - 2 for i in wrt), rule.bwd)
        primals, tangents = rest[: len(rest) - len(g_wrt)], rest[len(rest) - len(g_wrt) :]
        rule, flat = _rule_of_function_value(g, Mode.FORWARD, g_wrt, tuple(primals), kwargs)
        # a tangent's position among the rule's arguments, after the bound defaults
        shift = len(flat) - len(primals)
        positions = tuple(i - 2 if i - 2 < len(primals) else i - 2 + shift for i in wrt)
        return cls(helper, rule.jvp, (*flat, *tangents), positions)

    def value(self, value):
        """The helper's value, from the function's."""
        if self.helper is call_fwd:
            out, saved = value
            return out, (self.bwd, saved)
        return value

    def tangents(self, tangents):
        """The function's input tangents, from the helper's: the saved value's is its
        residuals'."""
        if self.inert_saved:
            return tuple(tangents)[1:]
        if self.helper is call_bwd and 0 in self.wrt:
            first, *rest = tangents
            return (None if first is None else first[1], *rest)
        return tangents

    def tangent(self, tangent):
        """The helper's output tangent, from the function's (``call_fwd``: the reverse sweep
        it saves has none)."""
        if self.helper is call_fwd:
            dout, dsaved = tangent
            return dout, (None, dsaved)
        return tangent

    def cotangent(self, ct):
        """The function's output cotangent, from the helper's."""
        if self.helper is call_fwd:
            ct_out, ct_saved = ct
            return ct_out, None if ct_saved is None else ct_saved[1]
        return ct

    def cotangents(self, cts):
        """The helper's input cotangents, from the function's (a saved value's holds its
        residuals' at the place of theirs)."""
        if self.inert_saved:
            return (None, cts) if len(self.wrt) == 1 else (None, *cts)
        if self.helper is call_bwd and 0 in self.wrt:
            if len(self.wrt) == 1:
                return (None, cts)
            first, *rest = cts
            return ((None, first), *rest)
        return cts


def _third_order():
    return TangentAstError(
        "a third derivative through a function value (a rule that calls a function passed "
        "in or made in the function, derived twice) is not supported",
        hint="call a function defined at module level instead of a function value",
    )


register(Role.FUNCTION_VALUE, *_SWEEPS)
