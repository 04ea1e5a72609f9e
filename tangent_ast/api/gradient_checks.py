"""Do a function's derived rules agree with the function, with each other and with finite
differences? The first-order checks behind :func:`tangent_ast.testing.check_grads`, and the
verification of rules as they are used (``TANGENT_AST_VERIFY=1``, ``verify=True``).

At a point ``args`` and random directions (a fixed seed: the same check each time):

* the forward rule's ``J v`` against central finite differences of ``f`` along ``v``
  (several step sizes; one must agree);
* the dot-product test ``<ct, J v> == <J^T ct, v>`` between the reverse rule and the
  forward rule (or finite differences when only reverse mode is checked);
* each rule's primal output equals ``f(*args)``, and each leaves the arguments in the
  state ``f`` leaves them in (for an argument updated in place, its tangent too).

:func:`verify_rules` runs these checks once per rule and point kind, on the first call of a
rule through ``grad``, ``value_and_grad``, ``vjp`` or ``jvp``, without finite differences
(the two modes check each other), and raises an :class:`~tangent_ast.errors.InternalError`
naming both rules and the point where they disagree.
"""

import copy
import random

import numpy as np

from .. import runtime
from ..cache.load import body_hash_of, read_header
from ..errors import InternalError, TangentAstError
from ..modes import Mode
from ..vocabulary.calling import PLAIN, flat_arguments, unbind
from ..vocabulary.kinds import (
    describe_signature,
    is_plain_object,
    is_record,
    kind_of,
    record_fields,
)

# one must agree: the small ones for stiff programs (a derivative of 1e6 that iterated
# cos(v) * v gives is resolved by differences at 1e-8 and 1e-9 only)
_STEPS = (1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9)


class GradientCheckError(AssertionError):
    """A derived rule disagrees with finite differences or with the other mode."""


def _rng(seed):
    return np.random.default_rng(seed)


def _fields(x):
    """The parts of a container or record, in order (None for a leaf)."""
    parts = _named_parts(x)
    return None if parts is None else [part for _, part in parts]


def _rebuild_like(x, parts):
    if is_record(x):
        return runtime.rebuild(x, parts)
    if is_plain_object(x) or isinstance(x, runtime.Tangent):
        new = copy.copy(x)
        new.__dict__.update(zip(sorted(vars(x)), parts, strict=True))
        return new
    if isinstance(x, dict):  # in x's own order: a loop over the dict runs in it
        by_key = dict(zip(sorted(x, key=repr), parts, strict=True))
        return {k: by_key[k] for k in x}
    return type(x)(parts) if isinstance(x, list) else tuple(parts)


def _random_like(x, rng):
    """A random tangent with the structure of ``x`` (None where ``x`` has no tangent)."""
    parts = _fields(x)
    if parts is not None and is_plain_object(x):  # an object's tangent is a Tangent record
        return runtime.Tangent(
            **dict(zip(sorted(vars(x)), [_random_like(p, rng) for p in parts], strict=True))
        )
    if parts is not None:
        return _rebuild_like(x, [_random_like(p, rng) for p in parts])
    if isinstance(x, np.ndarray) and x.dtype.kind == "c":
        return rng.standard_normal(x.shape) + 1j * rng.standard_normal(x.shape)
    if isinstance(x, np.ndarray):
        return rng.standard_normal(x.shape).astype(np.result_type(x, float))
    if not kind_of(x).differentiable:
        return None
    if isinstance(x, (complex, np.complexfloating)):
        return complex(rng.standard_normal(), rng.standard_normal())
    return float(rng.standard_normal())


def _leaves(x):
    parts = _fields(x)
    if parts is not None:
        for p in parts:
            yield from _leaves(p)
    elif x is not None and kind_of(x).differentiable:
        yield x


def _numbers(x):
    """``x`` as an array of floats, or of complex numbers if it is complex."""
    x = np.asarray(x)
    return x if x.dtype.kind == "c" else x.astype(float)


def _vdot(a, b):
    """The pairing of a cotangent with a tangent: ``Re(sum(ct * t))`` (no conjugate: the
    convention for complex cotangents)."""
    left, right = list(_places(a)), list(_places(b))
    if len(left) != len(right):  # a list's cotangent of its final length, not its given one
        raise GradientCheckError(
            f"a cotangent and a tangent of one value differ in structure: {a!r} and {b!r}"
        )
    return sum(
        float(np.real(np.sum(_numbers(x) * _numbers(y))))
        for x, y in zip(left, right)
        if x is not None and y is not None  # an int's: None or 0.0, a zero either way
    )


def _places(x):
    """The leaves of ``x``, place by place: None (a zero) where there is no derivative."""
    parts = _fields(x)
    if parts is not None:
        for p in parts:
            yield from _places(p)
    else:
        yield x if x is not None and kind_of(x).differentiable else None


def _add(x, t, h):
    parts = _fields(x)
    if parts is not None:
        return _rebuild_like(x, [_add(p, q, h) for p, q in zip(parts, _fields(t), strict=True)])
    if t is None:
        return x
    if isinstance(x, np.ndarray):
        return x + h * t
    return complex(x + h * t) if isinstance(x + h * t, complex) else float(x + h * t)


def _as_float(x):
    parts = _fields(x)
    if parts is not None:
        return [_as_float(p) for p in parts]
    return _numbers(x)


def _difference(a, b, scale):
    """(a - b) / scale, for results of any structure (numbers where ``a`` has a tangent)."""
    parts = _fields(a)
    if parts is not None:
        return [_difference(p, q, scale) for p, q in zip(parts, _fields(b), strict=True)]
    if not kind_of(a).differentiable:
        return 0.0
    return (_numbers(a) - _numbers(b)) / scale


def _differentiable(args):
    return tuple(i for i, a in enumerate(args) if kind_of(a).differentiable)


def wrt_indices(args, wrt):
    """``wrt`` as a tuple of argument indices: every differentiable argument when None."""
    if wrt is None:
        return _differentiable(args)
    return wrt if isinstance(wrt, tuple) else (wrt,)


def _close(a, b, rtol, atol):
    parts_a, parts_b = _fields(a), _fields(b)
    if parts_a is not None or parts_b is not None:
        if parts_a is None or parts_b is None or len(parts_a) != len(parts_b):
            return False
        return all(
            _close(x, y, rtol, atol)
            for x, y in zip(parts_a, parts_b, strict=True)
            if y is not None and x is not None
        )
    if a is None or b is None:
        return a is None and b is None
    a, b = _numbers(a), _numbers(b)
    if a.shape != b.shape:
        return False
    return bool(np.allclose(a, b, rtol=rtol, atol=atol))


def numerical_jvp(f, args, wrt, tangents, step):
    plus = list(copy.deepcopy(args))
    minus = list(copy.deepcopy(args))
    for i, t in zip(wrt, tangents, strict=True):
        plus[i] = _add(args[i], t, step)
        minus[i] = _add(args[i], t, -step)
    return _difference(f(*plus), f(*minus), 2 * step)


def _check_fd(f, args, wrt, tangents, value, what, rtol, atol):
    errors = []
    for step in _STEPS:
        numeric = numerical_jvp(f, args, wrt, tangents, step)
        if _close(value, numeric, rtol, atol):
            return
        errors.append(
            max(
                (
                    float(np.max(np.abs(x - _numbers(y)), initial=0.0))
                    for x, y in zip(_leaves(value), _leaves(numeric), strict=True)
                    if np.shape(x) == np.shape(y)
                ),
                default=float("inf"),
            )
        )
    raise GradientCheckError(
        f"{what} of {f.__qualname__} disagrees with central finite differences: "
        f"smallest max-abs difference {min(errors):.3g} over steps {_STEPS}; "
        f"derived {np.asarray(value)!r}, numerical {numeric!r}"
    )


def _same_state(before, after, f, what, arrays_before=None, arrays_given=None):
    """``after`` (the arguments after a derived rule's call) is as ``before`` is after
    ``f``'s: the same values at the same places (array items, fields, entries), and each
    array the caller gave at the same place, or changed for a new one at the same places
    (``p.w += v`` writes into the caller's array, ``p.w = p.w + v`` replaces it).
    ``arrays_before``/``arrays_given``: :func:`_arrays_at` of each argument before each
    call."""
    arrays_before = arrays_before or [{} for _ in before]
    arrays_given = arrays_given or [{} for _ in after]
    for i, (b, a) in enumerate(zip(before, after, strict=True)):
        if _state(b, arrays_before[i]) != _state(a, arrays_given[i]):
            raise GradientCheckError(
                f"{what} of {f.__qualname__} left argument {i} in a different state "
                f"than {f.__qualname__} itself"
            )


def _mutated(before, after):
    """Is ``after`` (an argument after a call) changed from ``before`` (a copy of it)?"""
    return _state(before, {}) != _state(after, {})


def _arrays_at(x, path=()):
    """Place (a path of indices, keys and fields) -> the array held there, in ``x``."""
    if isinstance(x, np.ndarray):
        return {path: x}
    parts = _named_parts(x)
    return (
        {}
        if parts is None
        else {
            where: a for key, part in parts for where, a in _arrays_at(part, (*path, key)).items()
        }
    )


def _named_parts(x):
    """``(key, part)`` of a container's or record's parts, in order (None for a leaf)."""
    if is_record(x):
        return [(n, getattr(x, n)) for n in record_fields(x)]
    if is_plain_object(x) or isinstance(x, runtime.Tangent):
        return sorted(vars(x).items())
    if isinstance(x, (tuple, list)):
        return list(enumerate(x))
    if isinstance(x, dict):
        return [(repr(k), x[k]) for k in sorted(x, key=repr)]
    return None


# leaves compared by value; any other object by its type only (a copy is another object)
_VALUES = (np.ndarray, np.generic, int, float, complex, bool, str, bytes, type(None))


class _Same:
    """A value compared as the program's own: arrays by their items (NaN equal to NaN)."""

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        a, b = self.value, other.value
        if not all(isinstance(v, _VALUES) for v in (a, b)):
            return type(a) is type(b)  # an object of its own (a random generator): its kind
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            return (
                isinstance(a, np.ndarray)
                and isinstance(b, np.ndarray)
                and a.shape == b.shape
                and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
            )
        try:
            return bool(a == b) or (a != a and b != b)
        except (TypeError, ValueError):
            return a is b


def _state(x, arrays_given, path=()):
    """``x``'s leaves by place, each array with the place it was given at (None: new)."""
    parts = _named_parts(x)
    if parts is None:
        given = {id(a): where for where, a in arrays_given.items()}
        origin = given.get(id(x)) if isinstance(x, np.ndarray) else None
        return [(path, type(x).__name__, origin, _Same(x))]
    return [
        (path, type(x).__name__, None, _Same(len(parts))),
        *(leaf for key, part in parts for leaf in _state(part, arrays_given, (*path, key))),
    ]


def _final_state(f, i):
    """``f``'s effect on its argument ``i`` as a function: the argument's state after the call."""

    def state_after(*args):
        args = copy.deepcopy(args)
        f(*args)
        return args[i]

    state_after.__qualname__ = f"{f.__qualname__} (argument {i} after the call)"
    return state_after


def _positional(f, form):
    """``f`` called with its arguments as derived rules take them (calling.py)."""

    def call(*values):
        args, kwargs = unbind(f, form, values)
        return f(*args, **kwargs)

    call.__qualname__ = f.__qualname__
    return call


def check_first_order(
    f,
    args,
    modes=(Mode.FORWARD, Mode.REVERSE),
    *,
    kwargs=None,
    wrt=None,
    rtol=1e-4,
    atol=1e-6,
    seed=0,
    cache=None,
    route=None,
    finite_differences=True,
    derive,
    before_each=None,
):
    """The first-order checks of ``check_grads`` (see the module docstring) of the Python
    function ``f`` (``sessions.as_function``'s), whose rules ``derive`` gives (as
    ``tangent_ast.derive``); without ``finite_differences``, only those that need none.
    ``before_each``: called before each run of the function or of a rule (verification
    puts the global random streams back, so that each run draws the same numbers).
    Returns the rules it checked."""
    modes = {Mode.of(m) for m in modes}
    given = tuple(args)
    form, args = flat_arguments(f, given, kwargs or {})
    function, f = f, (f if form == PLAIN and len(args) == len(given) else _positional(f, form))

    wrt = wrt_indices(args, wrt)
    rng = _rng(seed)
    tangents = [_random_like(args[i], rng) for i in wrt]
    primal_args = copy.deepcopy(args)
    arrays_before = [_arrays_at(a) for a in primal_args]
    before_each = before_each or (lambda: None)
    before_each()
    expected = f(*primal_args)
    rules = {}
    jv = None
    if Mode.FORWARD in modes:
        rule = rules[Mode.FORWARD] = derive(
            function, Mode.FORWARD, wrt, args=given, kwargs=kwargs, cache=cache
        )
        call_args, call_tangents = copy.deepcopy(args), copy.deepcopy(tangents)
        held = [_arrays_at(a) for a in call_args]
        before_each()
        out, jv = rule.jvp(*call_args, *call_tangents)
        _same_state(primal_args, call_args, f, "the forward rule", arrays_before, held)
        if not _close(out, expected, 1e-12, 1e-12):
            raise GradientCheckError(
                f"the forward rule of {f.__qualname__} computes {out!r}, "
                f"but the function computes {expected!r}"
            )
        if finite_differences:
            _check_forward_fd(f, args, primal_args, wrt, tangents, jv, call_tangents, rtol, atol)
    if Mode.REVERSE in modes:
        rule = rules[Mode.REVERSE] = derive(
            function, Mode.REVERSE, wrt, args=given, kwargs=kwargs, cache=cache, route=route
        )
        call_args = copy.deepcopy(args)
        held = [_arrays_at(a) for a in call_args]
        before_each()
        out, saved = rule.fwd(*call_args)
        _same_state(primal_args, call_args, f, "the reverse rule", arrays_before, held)
        if not _close(out, expected, 1e-12, 1e-12):
            raise GradientCheckError(
                f"the reverse rule of {f.__qualname__} computes {out!r}, "
                f"but the function computes {expected!r}"
            )
        ct = _random_like(expected, rng)
        before_each()
        cts = rule.bwd(saved, copy.deepcopy(ct))
        _same_state(primal_args, call_args, f, "the reverse sweep", arrays_before, held)
        # a pullback may run again (a Jacobian row by row): the sweep leaves what the
        # forward sweep saved as it found it
        before_each()
        again = rule.bwd(saved, copy.deepcopy(ct))
        if not _close(again, cts, 1e-12, 1e-12):
            raise GradientCheckError(
                f"the reverse sweep of {f.__qualname__} gives {again!r} when it runs again on "
                f"the same residuals, and gave {cts!r} the first time: it changed what the "
                "forward sweep saved"
            )
        cts = cts if len(wrt) > 1 else (cts,)
        for i, c in zip(wrt, cts, strict=True):
            if _fields(args[i]) is None and np.shape(c) != np.shape(args[i]):
                raise GradientCheckError(
                    f"the reverse rule of {f.__qualname__} gives a cotangent of shape "
                    f"{np.shape(c)} "
                    f"for argument {i}, whose shape is {np.shape(args[i])}"
                )
        transposed = sum(_vdot(c, t) for c, t in zip(cts, tangents, strict=True))
        if jv is None and not finite_differences:
            return rules  # nothing to compare the cotangents with
        if jv is None:
            reference = [_vdot(ct, numerical_jvp(f, args, wrt, tangents, s)) for s in _STEPS]
            label = "central finite differences"
        else:
            reference = [_vdot(ct, jv)]
            label = "the forward rule"
        # relative to the products compared, not to 1: a small <ct, J v> (a random ct and v
        # nearly orthogonal) must not hide a reverse rule off by a factor (2.001 for 2)
        if not any(
            abs(transposed - r) <= rtol * max(abs(transposed), abs(r)) + atol for r in reference
        ):
            per_arg = ", ".join(
                f"arg {i}: <J^T ct, v_{i}> = {_vdot(c, t):.6g}"
                for i, c, t in zip(wrt, cts, tangents, strict=True)
            )
            raise GradientCheckError(
                f"dot-product test failed for {f.__qualname__}: <J^T ct, v> = {transposed:.10g} "
                f"from the reverse rule, <ct, J v> = {reference[0]:.10g} from {label} ({per_arg})"
            )
    return rules


def _check_forward_fd(f, args, primal_args, wrt, tangents, jv, call_tangents, rtol, atol):
    """The forward rule's ``J v`` against finite differences, and the tangent it leaves in an
    argument it updates in place against those of the argument's final state."""
    _check_fd(f, args, wrt, tangents, jv, "the forward rule (J v)", rtol, atol)
    for i, t in zip(wrt, call_tangents, strict=True):
        if _mutated(args[i], primal_args[i]):  # its tangent was updated alongside it
            _check_fd(
                _final_state(f, i),
                args,
                wrt,
                tangents,
                t,
                f"the tangent of argument {i} after the forward rule",
                rtol,
                atol,
            )


# rules verified in this process: (module path, route)
_VERIFIED: set = set()


def verify_rules(rule, args, kwargs, cache, derive):
    """On the first call of ``rule`` (derived for ``rule.fn``) in this process, at that call's
    ``args`` and ``kwargs``: check the forward and reverse rules against each other and
    against the function (see the module docstring); an InternalError when they disagree.
    Where the other mode's rule is refused, the rule in use is checked against the function
    alone."""
    key = (str(rule.path), rule.route.value)
    if key in _VERIFIED:
        return
    _VERIFIED.add(key)
    if _edited(rule):
        return  # a rule edited by hand is used as it is, whatever it computes
    wrt = tuple(rule.params.index(w) for w in rule.wrt)
    streams = (np.random.get_state(), random.getstate())  # what the program draws from

    def same_draws():
        np.random.set_state(streams[0])
        random.setstate(streams[1])

    check = dict(
        kwargs=kwargs,
        wrt=wrt,
        cache=cache,
        route=rule.route.value,
        derive=derive,
        before_each=same_draws,
    )
    try:
        try:
            check_first_order(rule.fn, args, finite_differences=False, **check)
        except TangentAstError:  # the other mode is refused: this one against the function
            check_first_order(rule.fn, args, (rule.mode,), finite_differences=False, **check)
        finally:
            same_draws()  # the program's streams as its own call left them
    except GradientCheckError as disagreement:
        if _other_rule_edited(rule, args, kwargs, cache, derive):
            return
        raise InternalError(
            f"verifying the derived rules of {rule.fn.__qualname__} at arguments of kinds "
            f"({describe_signature(rule.signature)}): {disagreement} (the {rule.mode} rule: "
            f"{rule.path})",
            hint="this is a bug of tangent_ast: please report it with the function and its "
            "arguments",
        ) from None


def _edited(rule):
    """Was ``rule``'s module edited by hand (its body no longer the one it was written with)?"""
    text = rule.path.read_text()
    return read_header(text).get("body-hash") != body_hash_of(text)


def _other_rule_edited(rule, args, kwargs, cache, derive):
    other = Mode.REVERSE if rule.mode is Mode.FORWARD else Mode.FORWARD
    wrt = tuple(rule.params.index(w) for w in rule.wrt)
    try:
        return _edited(derive(rule.fn, other, wrt, args=args, kwargs=kwargs, cache=cache))
    except TangentAstError:
        return False
