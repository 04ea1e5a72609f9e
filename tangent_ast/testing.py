"""Checking derivatives: finite differences and the dot-product test.

``check_grads(f, args)`` checks the derived rules of ``f`` at ``args``:

* forward mode: ``J v`` from the forward rule against central finite
  differences of ``f`` along ``v`` (several step sizes; one must agree);
* reverse mode: the dot-product test ``<ct, J v> == <J^T ct, v>`` between the
  reverse rule and the forward rule (or finite differences when only
  reverse mode is checked);
* both: the primal output of the rule equals ``f(*args)``, and the
  arguments are left as ``f`` leaves them;

``order=2`` checks second derivatives: the Hessian-vector product (``hvp``) against
central differences of the gradient, and the symmetry of the Hessian.

It reports which argument failed and by how much. Users run it on their own
functions and on rules they edited.
"""

import copy

import numpy as np

from . import runtime
from .api import derive, grad, vjp
from .calling import PLAIN, flat_arguments, unbind
from .errors import TangentAstError
from .higher_order import hvp
from .kinds import is_plain_object, is_record, kind_of, record_fields
from .load import cache_dir
from .modes import Mode
from .pipeline import Session
from .sessions import as_function

_STEPS = (1e-3, 1e-4, 1e-5, 1e-6, 1e-7)


class GradientCheckError(AssertionError):
    """A derived rule disagrees with finite differences or with the other mode."""


def _rng(seed):
    return np.random.default_rng(seed)


def _fields(x):
    """The parts of a container or record, in order (None for a leaf)."""
    if is_record(x):
        return [getattr(x, n) for n in record_fields(x)]
    if is_plain_object(x) or isinstance(x, runtime.Tangent):
        return [vars(x)[k] for k in sorted(vars(x))]
    if isinstance(x, (tuple, list)):
        return list(x)
    if isinstance(x, dict):
        return [x[k] for k in sorted(x, key=repr)]
    return None


def _rebuild_like(x, parts):
    if is_record(x):
        return runtime.rebuild(x, parts)
    if is_plain_object(x) or isinstance(x, runtime.Tangent):
        new = copy.copy(x)
        new.__dict__.update(zip(sorted(vars(x)), parts, strict=True))
        return new
    if isinstance(x, dict):
        return dict(zip(sorted(x, key=repr), parts, strict=True))
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
    return sum(
        float(np.real(np.sum(_numbers(x) * _numbers(y))))
        for x, y in zip(_leaves(a), _leaves(b), strict=True)
    )


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


def _same_state(before, after, f, what):
    for i, (b, a) in enumerate(zip(before, after, strict=True)):
        if _mutated(b, a):
            raise GradientCheckError(
                f"{what} of {f.__qualname__} left argument {i} in a different state "
                f"than {f.__qualname__} itself"
            )


def _mutated(before, after):
    """Is ``after`` (an argument after a call) changed from ``before``: an array's values,
    a list's items?"""
    if isinstance(before, list):
        return len(before) != len(after) or any(
            _mutated(b, a) or (not isinstance(b, np.ndarray) and b != a)
            for b, a in zip(before, after)
        )
    return isinstance(before, np.ndarray) and not np.array_equal(before, after, equal_nan=True)


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


def check_grads(
    f,
    args,
    modes=(Mode.FORWARD, Mode.REVERSE),
    order=1,
    *,
    kwargs=None,
    wrt=None,
    rtol=1e-4,
    atol=1e-6,
    seed=0,
    cache=None,
    route=None,
):
    """Check the derived rules of ``f`` at ``f(*args, **kwargs)``; raise GradientCheckError
    on disagreement. ``wrt``: indices of the arguments as the rules take them (every
    parameter positionally, in order; the given positional arguments first).

    ``modes``: which rules to check, ``"forward"`` and/or ``"reverse"``. Returns the rules
    it checked (``{Mode.FORWARD: rule, Mode.REVERSE: rule}``; ``Mode`` is a ``str`` enum, so
    ``rules["forward"]`` works too), so tests can ask which primitives they used. ``route``: how
    the reverse rule is derived (as for ``derive``).
    """
    modes = {Mode.of(m) for m in modes}
    if order not in (1, 2):
        raise TangentAstError(
            f"check_grads(order={order}): first and second derivatives are checked",
            hint="order=1 or order=2",
        )
    if order == 2:
        return check_second_order(f, args, wrt=wrt, rtol=rtol, atol=atol, seed=seed, cache=cache)
    f = as_function(f, Session().directory if cache is None else cache_dir(cache))
    given = tuple(args)
    form, args = flat_arguments(f, given, kwargs or {})
    function, f = f, (f if form == PLAIN and len(args) == len(given) else _positional(f, form))

    wrt = _differentiable(args) if wrt is None else (wrt if isinstance(wrt, tuple) else (wrt,))
    rng = _rng(seed)
    tangents = [_random_like(args[i], rng) for i in wrt]
    primal_args = copy.deepcopy(args)
    expected = f(*primal_args)
    rules = {}
    jv = None
    if Mode.FORWARD in modes:
        rule = rules[Mode.FORWARD] = derive(
            function, Mode.FORWARD, wrt, args=given, kwargs=kwargs, cache=cache
        )
        call_args, call_tangents = copy.deepcopy(args), copy.deepcopy(tangents)
        out, jv = rule.jvp(*call_args, *call_tangents)
        _same_state(primal_args, call_args, f, "the forward rule")
        if not _close(out, expected, 1e-12, 1e-12):
            raise GradientCheckError(
                f"the forward rule of {f.__qualname__} computes {out!r}, "
                f"but the function computes {expected!r}"
            )
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
    if Mode.REVERSE in modes:
        rule = rules[Mode.REVERSE] = derive(
            function, Mode.REVERSE, wrt, args=given, kwargs=kwargs, cache=cache, route=route
        )
        call_args = copy.deepcopy(args)
        out, saved = rule.fwd(*call_args)
        _same_state(primal_args, call_args, f, "the reverse rule")
        if not _close(out, expected, 1e-12, 1e-12):
            raise GradientCheckError(
                f"the reverse rule of {f.__qualname__} computes {out!r}, "
                f"but the function computes {expected!r}"
            )
        ct = _random_like(expected, rng)
        cts = rule.bwd(saved, ct)
        _same_state(primal_args, call_args, f, "the reverse sweep")
        cts = cts if len(wrt) > 1 else (cts,)
        for i, c in zip(wrt, cts, strict=True):
            if _fields(args[i]) is None and np.shape(c) != np.shape(args[i]):
                raise GradientCheckError(
                    f"the reverse rule of {f.__qualname__} gives a cotangent of shape "
                    f"{np.shape(c)} "
                    f"for argument {i}, whose shape is {np.shape(args[i])}"
                )
        transposed = sum(_vdot(c, t) for c, t in zip(cts, tangents, strict=True))
        if jv is None:
            reference = [_vdot(ct, numerical_jvp(f, args, wrt, tangents, s)) for s in _STEPS]
            label = "central finite differences"
        else:
            reference = [_vdot(ct, jv)]
            label = "the forward rule"
        scale = max(1.0, abs(transposed))
        if not any(abs(transposed - r) <= rtol * scale + atol for r in reference):
            per_arg = ", ".join(
                f"arg {i}: <J^T ct, v_{i}> = {_vdot(c, t):.6g}"
                for i, c, t in zip(wrt, cts, tangents, strict=True)
            )
            raise GradientCheckError(
                f"dot-product test failed for {f.__qualname__}: <J^T ct, v> = {transposed:.10g} "
                f"from the reverse rule, <ct, J v> = {reference[0]:.10g} from {label} ({per_arg})"
            )
    return rules


def check_second_order(f, args, *, wrt=None, rtol=1e-4, atol=1e-6, seed=0, cache=None):
    """Check ``hvp(f)`` of a scalar-valued ``f`` at ``args``: ``H v`` against central
    differences of the gradient along ``v`` (several step sizes; one must agree), against
    reverse over reverse (the pullback of ``grad(f)`` along ``v``), and the symmetry of the
    Hessian, ``<u, H v> == <v, H u>``. Returns the two products checked."""
    args = tuple(args)
    wrt = _differentiable(args) if wrt is None else (wrt if isinstance(wrt, tuple) else (wrt,))
    rng = _rng(seed)
    v = tuple(_random_like(args[i], rng) for i in wrt)
    u = tuple(_random_like(args[i], rng) for i in wrt)
    product = hvp(f, wrt=wrt, cache=cache)
    hv, hu = product(*copy.deepcopy(args), v), product(*copy.deepcopy(args), u)
    gradient = grad(f, wrt=wrt, cache=cache)

    def along(step):
        plus, minus = list(copy.deepcopy(args)), list(copy.deepcopy(args))
        for i, t in zip(wrt, v, strict=True):
            plus[i], minus[i] = _add(args[i], t, step), _add(args[i], t, -step)
        return _difference(gradient(*plus), gradient(*minus), 2 * step)

    if not any(_close(hv, along(step), rtol, atol) for step in _STEPS[:4]):
        raise GradientCheckError(
            f"the Hessian-vector product of {getattr(f, '__qualname__', f)} disagrees with "
            f"central differences of its gradient: derived {hv!r}, numerical {along(1e-4)!r}"
        )
    # reverse over reverse: the pullback of the gradient along v is H^T v = H v
    _, pullback = vjp(gradient, *copy.deepcopy(args), wrt=wrt, cache=cache)
    twice_reverse = pullback(v if len(wrt) > 1 else v[0])
    if not _close(twice_reverse, hv, rtol, atol):
        raise GradientCheckError(
            f"the Hessian-vector products of {getattr(f, '__qualname__', f)} by reverse over "
            f"reverse and forward over reverse disagree: {twice_reverse!r} and {hv!r}"
        )
    left, right = _vdot(u, hv), _vdot(v, hu)
    if not np.isclose(left, right, rtol=rtol, atol=atol):
        raise GradientCheckError(
            f"the Hessian of {getattr(f, '__qualname__', f)} is not symmetric: "
            f"<u, H v> = {left:.6g}, <v, H u> = {right:.6g}"
        )
    return hv, hu
