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
central differences of the gradient, and the symmetry of the Hessian; ``order=3`` the
second derivatives of the gradient too.

It reports which argument failed and by how much. Users run it on their own
functions and on rules they edited.
"""

import copy
import functools
import inspect

import numpy as np

from .api.api import grad, source_of, vjp
from .api.gradient_checks import (
    _STEPS,
    GradientCheckError,
    _add,
    _close,
    _difference,
    _random_like,
    _rng,
    _same_state,
    _vdot,
    check_first_order,
    numerical_jvp,
    wrt_indices,
)
from .api.higher_order import hvp
from .api.sessions import as_function, derive, paired
from .cache.load import cache_dir
from .errors import TangentAstError
from .modes import Mode
from .pipeline import Session
from .vocabulary.api_roles import Role, register
from .vocabulary.kinds import signature_of

__all__ = [
    "GradientCheckError",
    "check_first_order",
    "check_grads",
    "check_second_order",
    "numerical_jvp",
]


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
    if order not in (1, 2, 3):
        raise TangentAstError(
            f"check_grads(order={order}): derivatives up to the third are checked",
            hint="order=1, 2 or 3",
        )
    if kwargs and (order > 1 or not inspect.isfunction(f)):
        # a primitive's keywords, or a second derivative's: bound (f of the arguments alone)
        f, kwargs = functools.partial(f, **kwargs), None
    directory = Session().directory if cache is None else cache_dir(cache)
    fixed = None
    if not inspect.isfunction(f):  # a primitive: its constant arguments written in its def
        f, args, wrt, fixed = _constants_bound(f, tuple(args), wrt)
    f = as_function(f, directory, arity=len(args) + len(fixed or ()), fixed=fixed)
    tolerances = {"rtol": rtol, "atol": atol, "seed": seed, "cache": cache}
    checked = f
    if not kwargs and hasattr(f, "tangent_ast_source_for"):  # grad(g): its gradient's source
        checked = source_of(f, signature_of(tuple(args)))
    rules = check_first_order(
        checked, args, modes, kwargs=kwargs, wrt=wrt, route=route, derive=derive, **tolerances
    )
    if order == 1:
        return rules
    products = check_second_order(f, args, wrt=wrt, **tolerances)  # the first ones too
    if order == 3:  # the second derivatives of the gradient (of <w, f> for an array f)
        _check_third_order(f, args, wrt, tolerances)
    return products


def _check_third_order(f, args, wrt, tolerances):
    """Third derivatives: the gradient of ``f`` (paired with a random ``w`` where ``f``
    returns an array) checked at second order, a function calling ``grad`` differentiated
    twice."""
    args = tuple(args)
    wrt = wrt_indices(args, wrt)
    rng = _rng(tolerances["seed"] + 1)
    scalar = _real_number_valued(f, f(*copy.deepcopy(args)), rng, len(args), tolerances["cache"])
    gradient = grad(scalar, wrt=wrt if len(wrt) > 1 else wrt[0], cache=tolerances["cache"])
    check_second_order(gradient, args, wrt=wrt, **tolerances)


def _constants_bound(f, args, wrt):
    """A primitive ``f`` given directly and called with ``args``: the constants among them
    (strings, numbers, tuples of them; no derivative taken) bound, so that its def writes
    them as values (``np.einsum('ii->i', x)``, ``np.pad(x, 2, 'edge')``, whose rules take
    constants there): the leading ones by position, the trailing ones by their parameter's
    name, the others where they are (``fixed``). Returns ``(f or a partial, the arguments the
    def takes, wrt among them, {position among those given: constant})``."""
    wrt_given = wrt
    if wrt is None:
        wrt = tuple(i for i, a in enumerate(args) if not _constant(a))
    wrt = wrt if isinstance(wrt, tuple) else (wrt,)
    constant = [i not in wrt and _constant(a) for i, a in enumerate(args)]
    lead = next((i for i, c in enumerate(constant) if not c), len(args))
    try:
        params = [
            p
            for p in inspect.signature(f).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        params = []
    tail = len(args)
    while (
        tail > lead
        and constant[tail - 1]
        and tail - 1 < len(params)
        and params[tail - 1].kind is not params[tail - 1].POSITIONAL_ONLY
    ):
        tail -= 1
    between = range(lead, tail)
    fixed = {i - lead: args[i] for i in between if constant[i]}
    if lead == 0 and tail == len(args) and not fixed:
        return f, args, wrt_given, None
    keywords = {params[i].name: args[i] for i in range(tail, len(args))}
    bound = functools.partial(f, *args[:lead], **keywords) if lead or keywords else f
    kept = [i for i in between if not constant[i]]
    return bound, tuple(args[i] for i in kept), tuple(kept.index(i) for i in wrt), fixed


def _constant(value):
    """A value with no derivative that a def can write: a string, an int, a bool, None,
    ``...``, or a tuple of them."""
    if isinstance(value, tuple):
        return all(_constant(v) for v in value)
    return value is None or value is Ellipsis or type(value) in (bool, int, str)


def check_second_order(f, args, *, wrt=None, rtol=1e-4, atol=1e-6, seed=0, cache=None):
    """Check ``hvp(f)`` at ``args``: ``H v`` against central differences of the gradient
    along ``v`` (several step sizes; one must agree), against reverse over reverse (the
    pullback of ``grad(f)`` along ``v``), and the symmetry of the Hessian, ``<u, H v> ==
    <v, H u>``. An ``f`` returning an array (or a complex number) is checked through
    ``<w, f>`` for a random ``w`` of its output's shape: every second derivative of every
    output takes part. Returns the two products checked."""
    args = tuple(args)
    wrt = wrt_indices(args, wrt)
    rng = _rng(seed)
    f = _real_number_valued(f, f(*copy.deepcopy(args)), rng, len(args), cache)
    v = tuple(_random_like(args[i], rng) for i in wrt)
    u = tuple(_random_like(args[i], rng) for i in wrt)
    # one argument by its index: the gradient itself, which can be differentiated again
    given = wrt if len(wrt) > 1 else wrt[0]
    product = hvp(f, wrt=given, cache=cache)
    directions = (v, u) if len(wrt) > 1 else (v[0], u[0])
    given_directions = copy.deepcopy(directions)
    hv, hu = (product(*copy.deepcopy(args), d) for d in directions)
    # the directions are inputs: hvp leaves them as they were given
    _same_state(given_directions, directions, f, "hvp (the directions it was given)")
    gradient = grad(f, wrt=given, cache=cache)

    def along(step):
        plus, minus = list(copy.deepcopy(args)), list(copy.deepcopy(args))
        for i, t in zip(wrt, v, strict=True):
            plus[i], minus[i] = _add(args[i], t, step), _add(args[i], t, -step)
        return _difference(gradient(*plus), gradient(*minus), 2 * step)

    if not any(_close(hv, along(step), rtol, atol) for step in _STEPS):
        raise GradientCheckError(
            f"the Hessian-vector product of {getattr(f, '__qualname__', f)} disagrees with "
            f"central differences of its gradient: derived {hv!r}, numerical {along(1e-4)!r}"
        )
    # reverse over reverse: the pullback of the gradient along v is H^T v = H v
    _, pullback = vjp(gradient, *copy.deepcopy(args), wrt=given, cache=cache)
    twice_reverse = pullback(directions[0])
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


def _real_number_valued(f, out, rng, arity, cache):
    """``f`` if it returns a real number; else ``x -> <w, f(x)>`` for a random ``w`` of the
    structure of ``f``'s output ``out`` (the pairing of cotangents and tangents), summed
    over its parts where it is a tuple, list or dict."""
    if isinstance(out, (float, int, np.floating, np.integer)) or (
        isinstance(out, np.ndarray) and out.ndim == 0 and out.dtype.kind in "fiu"
    ):
        return f
    weights = [(path, _random_like(part, rng)) for path, part in _differentiable_parts(out)]
    if not weights:
        raise TangentAstError(
            f"check_grads(order=2): {getattr(f, '__qualname__', f)} returns no number or "
            f"array of floats ({type(out).__name__})",
            hint="check a function returning floats",
        )
    directory = Session().directory if cache is None else cache_dir(cache)
    return paired(f, weights, arity, directory)


def _differentiable_parts(out, path=""):
    """``(path, part)`` of each float or complex number or array in ``out``, ``path`` the
    text that reads it (``"[0]['a']"``)."""
    if isinstance(out, dict):
        return [p for k, v in out.items() for p in _differentiable_parts(v, f"{path}[{k!r}]")]
    if isinstance(out, (tuple, list)):
        return [p for i, v in enumerate(out) for p in _differentiable_parts(v, f"{path}[{i}]")]
    if np.result_type(out).kind in "fc" and not isinstance(out, (bool, str)):
        return [(path, np.asarray(out) if np.ndim(out) else out)]
    return []


# the checks, called in a function being differentiated, are refused (lowering/api_calls.py)
register(Role.CHECK, check_grads, check_first_order, check_second_order, numerical_jvp)
