"""Checking derivatives: finite differences and the dot-product test.

``check_grads(f, args)`` checks the derived rules of ``f`` at ``args``:

* forward mode: ``J v`` from the forward rule against central finite
  differences of ``f`` along ``v`` (several step sizes; one must agree);
* reverse mode: the dot-product test ``<ct, J v> == <J^T ct, v>`` between the
  reverse rule and the forward rule (or finite differences when only
  reverse mode is checked);
* both: the primal output of the rule equals ``f(*args)``, and the
  arguments are left as ``f`` leaves them;

Only ``order=1`` is implemented: ``order=2`` raises a clear error.

It reports which argument failed and by how much. Users run it on their own
functions and on rules they edited.
"""

import copy

import numpy as np

from .api import derive
from .errors import TangentAstError
from .kinds import kind_of

_STEPS = (1e-3, 1e-4, 1e-5, 1e-6, 1e-7)


class GradientCheckError(AssertionError):
    """A derived rule disagrees with finite differences or with the other mode."""


def _rng(seed):
    return np.random.default_rng(seed)


def _random_like(x, rng):
    if isinstance(x, np.ndarray):
        return rng.standard_normal(x.shape).astype(np.result_type(x, float))
    return float(rng.standard_normal())


def _vdot(a, b):
    return float(np.sum(np.asarray(a, dtype=float) * np.asarray(b, dtype=float)))


def _add(x, t, h):
    return x + h * t if isinstance(x, np.ndarray) else float(x + h * t)


def _differentiable(args):
    return tuple(i for i, a in enumerate(args) if kind_of(a).differentiable)


def _close(a, b, rtol, atol):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        return False
    return bool(np.allclose(a, b, rtol=rtol, atol=atol))


def numerical_jvp(f, args, wrt, tangents, step):
    plus = list(copy.deepcopy(args))
    minus = list(copy.deepcopy(args))
    for i, t in zip(wrt, tangents, strict=True):
        plus[i] = _add(args[i], t, step)
        minus[i] = _add(args[i], t, -step)
    return (np.asarray(f(*plus), dtype=float) - np.asarray(f(*minus), dtype=float)) / (2 * step)


def _check_fd(f, args, wrt, tangents, value, what, rtol, atol):
    errors = []
    for step in _STEPS:
        numeric = numerical_jvp(f, args, wrt, tangents, step)
        if _close(value, numeric, rtol, atol):
            return
        errors.append(float(np.max(np.abs(np.asarray(value, dtype=float) - numeric)))
                      if np.shape(value) == np.shape(numeric) else float("inf"))
    raise GradientCheckError(
        f"{what} of {f.__qualname__} disagrees with central finite differences: "
        f"smallest max-abs difference {min(errors):.3g} over steps {_STEPS}; "
        f"derived {np.asarray(value)!r}, numerical {numeric!r}")


def _same_state(before, after, f, what):
    for i, (b, a) in enumerate(zip(before, after, strict=True)):
        if isinstance(b, np.ndarray) and not np.array_equal(a, b, equal_nan=True):
            raise GradientCheckError(f"{what} of {f.__qualname__} left argument {i} in a different state "
                                     f"than {f.__qualname__} itself")


def check_grads(f, args, modes=("fwd", "rev"), order=1, *, wrt=None, rtol=1e-4, atol=1e-6,
                seed=0, cache=None):
    """Check the derived rules of ``f`` at ``args``; raise GradientCheckError on disagreement.

    Returns the rules it checked (``{"fwd": rule, "rev": rule}``), so tests can
    ask which primitives they used.
    """
    if order != 1:
        raise TangentAstError(f"check_grads(order={order}): only first derivatives are checked so far "
                              "(higher order needs rules for the runtime helpers; see docs/limitations.md)")
    args = tuple(args)
    wrt = _differentiable(args) if wrt is None else (wrt if isinstance(wrt, tuple) else (wrt,))
    rng = _rng(seed)
    tangents = [_random_like(args[i], rng) for i in wrt]
    primal_args = copy.deepcopy(args)
    expected = f(*primal_args)
    rules = {}
    jv = None
    if "fwd" in modes:
        rule = rules["fwd"] = derive(f, "forward", wrt, args=args, cache=cache)
        call_args = copy.deepcopy(args)
        out, jv = rule.jvp(*call_args, *tangents)
        _same_state(primal_args, call_args, f, "the forward rule")
        if not _close(out, expected, 1e-12, 1e-12):
            raise GradientCheckError(f"the forward rule of {f.__qualname__} computes {out!r}, "
                                     f"but the function computes {expected!r}")
        _check_fd(f, args, wrt, tangents, jv, "the forward rule (J v)", rtol, atol)
    if "rev" in modes:
        rule = rules["rev"] = derive(f, "reverse", wrt, args=args, cache=cache)
        call_args = copy.deepcopy(args)
        out, saved = rule.fwd(*call_args)
        _same_state(primal_args, call_args, f, "the reverse rule")
        if not _close(out, expected, 1e-12, 1e-12):
            raise GradientCheckError(f"the reverse rule of {f.__qualname__} computes {out!r}, "
                                     f"but the function computes {expected!r}")
        ct = _random_like(expected, rng) if isinstance(expected, np.ndarray) else float(rng.standard_normal())
        cts = rule.bwd(saved, ct)
        cts = cts if len(wrt) > 1 else (cts,)
        for i, c in zip(wrt, cts, strict=True):
            if np.shape(c) != np.shape(args[i]):
                raise GradientCheckError(
                    f"the reverse rule of {f.__qualname__} gives a cotangent of shape {np.shape(c)} "
                    f"for argument {i}, whose shape is {np.shape(args[i])}")
        transposed = sum(_vdot(c, t) for c, t in zip(cts, tangents, strict=True))
        if jv is None:
            reference = [_vdot(ct, numerical_jvp(f, args, wrt, tangents, s)) for s in _STEPS]
            label = "central finite differences"
        else:
            reference = [_vdot(ct, jv)]
            label = "the forward rule"
        scale = max(1.0, abs(transposed))
        if not any(abs(transposed - r) <= rtol * scale + atol for r in reference):
            per_arg = ", ".join(f"arg {i}: <J^T ct, v_{i}> = {_vdot(c, t):.6g}"
                                for i, c, t in zip(wrt, cts, tangents, strict=True))
            raise GradientCheckError(
                f"dot-product test failed for {f.__qualname__}: <J^T ct, v> = {transposed:.10g} "
                f"from the reverse rule, <ct, J v> = {reference[0]:.10g} from {label} ({per_arg})")
    return rules
