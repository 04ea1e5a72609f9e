"""tangent_ast's own API, known by the identity of its objects: what a call of it becomes in
a function being differentiated.

The public functions register themselves here when their module is imported (``api``,
``higher_order``, ``linearization``, ``testing``), and so do the classes of the objects they
make (a pullback, a rule, a Jacobian's function); the normalize stage asks
:func:`role_of` what it calls (:mod:`tangent_ast.front.lowering.api_calls`), and so never goes by
a name, which a program is free to give to anything.

>>> def vjp(f, *args):
...     return f(*args)
>>> role_of(vjp) is None  # named vjp, but not tangent_ast's
True
"""

import weakref
from enum import Enum


class Role(Enum):
    """What a call of an API object becomes in differentiated code."""

    VJP = "vjp"  # out, pullback = vjp(f, x): f's reverse rule, its pullback f_bwd(saved, ct)
    JVP = "jvp"  # jvp(f, (x,), (dx,)): f's forward rule
    LINEARIZE = "linearize"  # out, f_jvp = linearize(f, x): f at x, f_jvp(t) its forward rule
    MAKER = "maker"  # grad(f), value_and_grad(f), hvp(f), checkpoint(f): made once, called
    MADE = "made"  # a function made by the API with no source of its own: refused
    RULE = "rule"  # a DerivedRule called: its jvp (or fwd), whose source is on disk
    PULLBACK = "pullback"  # a pullback or a linear map made outside: refused
    DERIVE = "derive"  # derive(f, ...) inside: refused (call the rule's functions instead)
    CHECK = "check"  # the checks of tangent_ast.testing: refused
    # function_values' helpers, which derived code calls a function value through: a call of
    # one is itself a function value's call (its rules found when it runs)
    FUNCTION_VALUE = "function value"
    OTHER = "other"  # any other public function (show, defjvp, ...): refused


_ROLES: dict[int, tuple[object, Role]] = {}  # id -> (the object, kept alive, its role)
_MADE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # functions made at run time


def register(role, *objects):
    """Give each of ``objects`` (a function, or a class whose instances are made) ``role``."""
    for obj in objects:
        _ROLES[id(obj)] = (obj, role)


_SECOND_ORDER: dict[int, object] = {}  # id -> a maker of second derivatives (hvp)


def register_second_order(*objects):
    """``objects`` make functions of second derivatives (``hvp``)."""
    for obj in objects:
        _SECOND_ORDER[id(obj)] = obj


def second_order(obj):
    """Whether ``obj`` is a maker of second derivatives registered as one."""
    return _SECOND_ORDER.get(id(obj)) is obj


def register_made(obj, role):
    """Give ``obj``, a function the API made at run time (``linearize``'s ``f_jvp``), ``role``
    for as long as it lives."""
    _MADE[obj] = role


def role_of(obj):
    """The :class:`Role` of ``obj``, an object of tangent_ast's API or one it made (an
    instance of a registered class), or None."""
    for candidate in (obj, type(obj)):
        entry = _ROLES.get(id(candidate))
        if entry is not None and entry[0] is candidate:
            return entry[1]
    try:
        return _MADE.get(obj)
    except TypeError:  # neither hashable nor weakly referenced: not one the API made
        return None
