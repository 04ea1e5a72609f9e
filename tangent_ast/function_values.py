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

from .api import derive
from .calling import flat_arguments
from .errors import TangentAstError
from .kinds import KEYS_KEPT, signature_key, signature_of
from .modes import Mode
from .sessions import _session, as_function

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
    rule, flat = _rule_of_function_value(f, Mode.FORWARD, wrt, args, kwargs)
    return rule.jvp(*flat, *tangents)


def call_fwd(f, wrt, *args, **kwargs):
    """``(f(*args, **kwargs), saved)`` for a function value ``f``; ``call_bwd(saved, ct)``
    gives the cotangents of the positional arguments at positions ``wrt``."""
    rule, flat = _rule_of_function_value(f, Mode.REVERSE, wrt, args, kwargs)
    out, saved = rule.fwd(*flat)
    return out, (rule, saved)


def call_bwd(saved, ct):
    """The cotangents of the arguments at positions ``wrt`` of the ``call_fwd`` that saved
    ``saved``."""
    rule, inner = saved
    return rule.bwd(inner, ct)
