"""``derive``, the sessions every public function gets its rules from, and what a function
given that is not a plain def becomes.

Takes a function, a mode, ``wrt`` and example arguments; guarantees the rule of the cache
directory's module when it is current there (:meth:`~tangent_ast.cache.cached.RuleCache.find`),
else the rule the pipeline derives. Kept apart from :mod:`tangent_ast.api.api`, which imports
it: a program whose rules are on disk imports this module and what finding them needs,
not the rest of the public functions (some 0.5 ms of a cached rule's start-up).

A primitive given where a function is expected (``grad(np.sin)``, ``partial(np.sum, axis=1)``):
:func:`as_function`.

A NumPy or ``math`` function has no Python source to read, but it has rules. Given
directly, it is differentiated through a one-line def that calls it, written to the
cache like every generated module (so that its source can be read):

    np.linalg.det        ->   def det(a):
                                  return numpy.linalg.det(a)

A ``functools.partial`` is the def that calls its function with the values it binds
(``partial(np.sum, axis=1)`` is ``def sum(a): return numpy.sum(a, axis=axis)``, with
``axis`` bound to 1); a partial of a user function works the same way.

>>> import numpy as np, tangent_ast as ta
>>> float(ta.grad(np.sin)(0.0))
1.0
>>> import functools
>>> out, pullback = ta.vjp(functools.partial(np.sum, axis=1), np.ones((2, 3)))
>>> pullback(np.array([1.0, 2.0]))
array([[1., 1., 1.],
       [2., 2., 2.]])
"""

import functools
import importlib
import inspect
import os

from ..cache.cached import RuleCache
from ..cache.live import user_rules
from ..cache.load import import_module, write_atomic
from ..errors import NoSourceError
from ..modes import Backend, Mode, Route
from ..vocabulary.calling import PLAIN, flat_arguments
from ..vocabulary.code_keys import is_library
from ..vocabulary.kinds import signature_of
from ..vocabulary.naming import digest, sanitize


class _Session(RuleCache):
    """The rules of one cache directory and route: from the cache while they are current
    there, else from the pipeline's :class:`~tangent_ast.pipeline.Session`, which shares
    what this one knows. The transformer (gast, every stage, the rule tables) is imported
    when a rule must be derived, not to find that one need not be."""

    def __init__(self, directory=None, strict=False, route=None, backend=None):
        super().__init__(directory, strict, route, backend)
        self._deriving = None

    def rule(self, fn, mode=Mode.FORWARD, wrt=0, signature=None, form=PLAIN):
        """The rule of ``fn`` for calls of ``form`` with arguments of ``signature``."""
        if self._deriving is None:
            found = self.find(fn, mode, wrt, signature, form)
            if found is not None:
                return found
        return self.deriving().rule(fn, mode, wrt, signature, form)

    def deriving(self):
        """The pipeline's session, holding the rules and program state found so far."""
        if self._deriving is None:
            from ..pipeline import Session

            session = Session(self.directory, self.strict, self.route, self.backend)
            session.rules, session.rule_values = self.rules, self.rule_values
            session._dependencies = self._dependencies
            self._deriving = session
        return self._deriving


_SESSIONS: dict[tuple, _Session] = {}


def _session(cache=None, strict=False, route=None, backend=None):
    """The session deriving rules into ``cache`` by ``route`` (None: ``TANGENT_AST_ROUTE``,
    else the direct route), for ``backend`` (None: NumPy)."""
    route, backend = Route.of(route), Backend.of(backend)
    key = (str(cache) if cache is not None else None, strict, route, backend)
    if key not in _SESSIONS:
        _SESSIONS[key] = _Session(cache, strict, route, backend)
    return _SESSIONS[key]


def derive(
    f,
    mode="forward",
    wrt=0,
    *,
    args=None,
    kwargs=None,
    cache=None,
    strict=False,
    route=None,
    verify=None,
    backend=None,
):
    """The derived rule of ``f``: a module written to the cache and imported.

    ``wrt``: a parameter index or name, or a tuple of them. ``args`` (and
    ``kwargs``): example arguments; the rule is then specialised to their kinds
    (Python float, ndarray of given ndim, ...) and, for a function with
    ``*args``/``**kwargs``, to how many and which extra arguments they pass.
    Without them a generic rule is derived. The rule takes every parameter
    positionally, defaults included (see ``DerivedRule.params``).
    ``route``: how a reverse rule is derived, ``"direct"`` (each statement's adjoint from
    its reverse rule) or ``"transpose"`` (its forward rule transposed); the default is
    ``TANGENT_AST_ROUTE``, else direct.
    ``verify``: check the forward and reverse rules against each other and against ``f``
    at ``args`` the first time (the dot-product test, the primal value, the arguments'
    state; see :mod:`tangent_ast.api.gradient_checks`); the default is ``TANGENT_AST_VERIFY``.
    ``backend``: what runs the rule, ``"numpy"`` (the default) or ``"numba"`` (the same module,
    its functions compiled by ``numba.njit``; see docs/numba.md).
    Returns a :class:`~tangent_ast.cache.cached.DerivedRule` with ``.source``,
    ``.path`` and the generated functions (``.jvp``, or ``.fwd``/``.bwd``).
    """
    session = _session(cache, strict, route, backend)
    f = as_function(f, session.directory)
    if args is None and kwargs is None:
        return session.rule(f, mode, wrt, None)
    form, flat = flat_arguments(f, tuple(args or ()), kwargs or {})
    rule = session.rule(f, mode, wrt, signature_of(flat), form)
    if session.backend is Backend.NUMBA:
        from .compiled import compile_for

        compile_for(rule, flat)
    verify_first_call(rule, tuple(args or ()), kwargs, cache, verify)
    return rule


def verifying(verify):
    """Are rules verified on their first call: ``verify``, or, when it is None, whether the
    environment sets ``TANGENT_AST_VERIFY`` (to anything but 0)."""
    if verify is not None:
        return bool(verify)
    return os.environ.get("TANGENT_AST_VERIFY", "0") not in ("", "0")


def verify_first_call(rule, args, kwargs, cache, verify):
    """Verify ``rule`` at ``args`` (the arguments as they were before the call) on its first
    call when :func:`verifying`."""
    if not verifying(verify):
        return
    from .gradient_checks import verify_rules  # the checks: only when verifying

    def derive_unverified(*a, **k):
        return derive(*a, **k, verify=False)

    verify_rules(rule, args, kwargs, cache, derive_unverified)


# The rule tables are imported when a function given is not the user's own Python function
# (a primitive, a partial, a function with rules): a program that differentiates its own
# functions, their rules on disk, never imports them (see tangent_ast.cache.cached).

_WRAPPERS: dict = {}  # (function, bound positions, bound keywords) -> its def


def as_function(f, directory, arity=None, fixed=None):
    """``f`` itself when it is a Python function to differentiate from its source; else a
    def calling it (a primitive with rules, or a ``functools.partial``); ``f`` unchanged
    when neither applies (the pipeline then says why it cannot be differentiated).
    ``arity``: how many positional arguments the def is called with, where known (a
    primitive taking ``*operands`` or optional ones: a def of that many), else its required
    parameters; ``fixed``: of those, the positions given a constant, written in the def
    (``{1: (0, 1)}``: ``np.einsum(x, (0, 1))``)."""
    if isinstance(f, functools.partial):
        total = None if arity is None else arity + len(f.args)
        return _wrapper(f.func, f.args, f.keywords, directory, total, fixed)
    if inspect.isfunction(f) and not is_library(f.__module__):
        # A function of the user's with registered rules: differentiated through a call, so
        # that its rules are used, as they are where other code calls it (its body may be
        # what the rules are there to avoid: overflow, a non-differentiable point).
        return f if user_rules(f) is None else _rules_wrapper(f, directory)
    from ..rules.registry import lookup

    if lookup(f) is not None and not isinstance(f, tuple):
        return _wrapper(f, (), {}, directory, arity, fixed)
    return f


def _wrapper(fn, bound_args, bound_keywords, directory, arity=None, fixed=None):
    # a bound constant (axis=(0, 1)) is written in the def, so that its rules are derived
    # for it (each value a def of its own); any other value is a global the def reads
    written = {k: repr(v) for k, v in bound_keywords.items() if _literal(v)}
    written |= {f"bound_{i}": repr(v) for i, v in enumerate(bound_args) if _literal(v)}
    fixed = {j: repr(v) for j, v in (fixed or {}).items()}
    key = (fn, len(bound_args), tuple(bound_keywords), tuple(sorted(written.items())), arity)
    key += (tuple(sorted(fixed.items())),)
    values = {f"bound_{i}": v for i, v in enumerate(bound_args)} | dict(bound_keywords)
    values = {n: v for n, v in values.items() if n not in written}
    known = _WRAPPERS.get(key)
    if known is not None and all(
        getattr(known, "__globals__", {}).get(n, _NONE) is v for n, v in values.items()
    ):
        return known
    free = _free_parameters(fn, len(bound_args), bound_keywords, arity)
    params = [p for j, p in enumerate(free) if j not in fixed]
    callee = _reference(fn)
    name = sanitize(getattr(fn, "__name__", "primitive"))
    arguments = [written.get(f"bound_{i}", f"bound_{i}") for i in range(len(bound_args))]
    arguments += [fixed.get(j, p) for j, p in enumerate(free)]
    arguments += [f"{k}={written.get(k, k)}" for k in bound_keywords]
    bindings = values | ({} if callee.module else {callee.text: fn})
    source = (
        f'"""{name}: a def around {callee.text}, written by tangent_ast to derive its rule."""\n'
        + _bound_line(bindings)
        + (callee.import_line + "\n" if callee.module else "")
        + f"\n\ndef {name}({', '.join(params)}):\n"
        + f"    return {callee.text}({', '.join(arguments)})\n"
    )
    wrapper = _load(directory, source, bindings, name)
    _WRAPPERS[key] = wrapper
    return wrapper


_NONE = object()


def paired(fn, weights, arity, directory):
    """A def of ``arity`` parameters returning ``Re sum(w * out)`` summed over the parts of
    ``out = fn(...)``: ``weights`` is a list of ``(path, w)``, ``path`` the text reading one
    part (``""`` for ``out`` itself, ``"[0]['a']"``). A real number whose derivatives are
    those of every output of ``fn``, weighted (how second derivatives of a function
    returning arrays are checked)."""
    params = ", ".join(f"x{i}" for i in range(arity))
    terms = " + ".join(
        f"np.real(np.sum(w[{i}] * out{path}))" for i, (path, _) in enumerate(weights)
    )
    w = [weight for _, weight in weights]
    source = (
        '"""<w, f>: f\'s outputs weighed by w, written by tangent_ast to check its second\n'
        'derivatives."""\n'
        + _bound_line({"f": fn, "w": w})
        + "import numpy as np\n"
        + f"\n\ndef paired_with_w({params}):\n"
        + f"    out = f({params})\n"
        + f"    return {terms}\n"
    )
    return _load(directory, source, {"f": fn, "w": w}, "paired_with_w")


def _literal(value):
    """Whether ``value`` is a constant its ``repr`` writes exactly (numbers, strings, None,
    tuples of them)."""
    if isinstance(value, tuple):
        return all(_literal(v) for v in value)
    return value is None or value is Ellipsis or type(value) in (bool, int, float, str)


def _rules_wrapper(fn, directory):
    """The def around user function ``fn``, which has registered rules: its parameters, but
    the optional ones its rules do not take (a value other than the default would be refused
    in every call), forwarded as given."""
    from ..rules.binding import takes as entry_takes
    from ..rules.registry import lookup, qualified_name, version

    key = (fn, "rules", version())
    known = _WRAPPERS.get(key)
    if known is not None:
        return known
    entry = lookup(fn)
    callee = _reference(fn)
    params, arguments, defaults = [], [], {}
    position, keyword_only = 0, False
    for p in inspect.signature(fn).parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            raise NoSourceError(
                f"{qualified_name(fn)} has rules and takes *{p.name}: given directly, it cannot "
                "be called with its rules",
                hint=f"differentiate a def that calls it: def f(x): return {fn.__name__}(x)",
            )
        if p.kind is p.VAR_KEYWORD:
            continue  # keywords it takes beyond its parameters: none is passed
        positional = p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        at = position if positional else None
        position += positional
        if p.default is not p.empty and not entry_takes(entry, at, p.name):
            if p.kind is p.POSITIONAL_ONLY:
                break  # a later positional one would land here
            continue  # left at its default: its rules refuse any other value
        text = p.name
        if p.default is not p.empty:
            defaults[f"default_{p.name}"] = p.default
            text += f"=default_{p.name}"
        if p.kind is p.KEYWORD_ONLY and not keyword_only:
            params.append("*")
            keyword_only = True
        params.append(text)
        arguments.append(p.name if p.kind is p.POSITIONAL_ONLY else f"{p.name}={p.name}")
    taken = {p.partition("=")[0] for p in params}
    called = callee.text
    while called.partition(".")[0] in taken:  # a parameter would hide it: the loader binds it
        called = f"{called.partition('.')[0]}_"
    name = sanitize(fn.__name__)
    bindings = defaults | ({} if called == callee.text and callee.module else {called: fn})
    source = (
        f'"""{name}: a def around {called}, written by tangent_ast to derive its rule with the '
        'rules registered for it."""\n'
        + _bound_line(bindings)
        + (callee.import_line + "\n" if called == callee.text and callee.module else "")
        + f"\n\ndef {name}({', '.join(params)}):\n"
        + f"    return {called}({', '.join(arguments)})\n"
    )
    wrapper = _load(directory, source, bindings, name)
    _WRAPPERS[key] = wrapper
    return wrapper


# modules the wrapper's source names as people write them (a class attribute's ClassVar
# annotation would cost its evaluation at import, on a cache hit's path)
_ALIASES = {"numpy": "np"}


class _Reference:
    """How the wrapper's source names the function it calls."""

    def __init__(self, module, dotted):
        self.module = module
        alias = _ALIASES.get(module) if module else None
        self.text = f"{alias}{dotted[len(module) :]}" if alias else dotted
        self.import_line = f"import {module} as {alias}" if alias else f"import {module}"


def _reference(fn):
    """``numpy.linalg.det`` when that dotted name is ``fn``; else a name the loader binds."""
    from ..rules.registry import qualified_name

    dotted = qualified_name(fn)
    module, _, rest = dotted.partition(".")
    try:
        obj = importlib.import_module(module)
        for part in rest.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        obj = None
    if obj is fn and rest and "<" not in dotted:
        return _Reference(module, dotted)
    return _Reference(None, "wrapped")


def _free_parameters(fn, n_bound, bound_keywords, arity=None):
    """The parameters a call must still give: required ones, after the bound positions and
    without the bound keywords; with ``arity``, that many positions in all (optional ones
    named as the signature names them, those of ``*operands`` ``operands_1``, ...)."""
    from ..rules.binding import signature_of
    from ..rules.registry import lookup, qualified_name

    entry = lookup(fn)
    signature = signature_of(entry) if entry is not None else _signature(fn)
    if signature is None:
        n_inputs = getattr(fn, "nin", None)  # a ufunc whose signature cannot be read
        if n_inputs is None:
            raise NoSourceError(
                f"{qualified_name(fn)} has no source and no readable signature",
                hint="wrap it in a def: def f(x): return ...(x)",
            )
        names = ["x"] if n_inputs == 1 else [f"x{i + 1}" for i in range(n_inputs)]
        return names[n_bound:]
    positional = [
        p
        for p in signature.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    if arity is not None and arity > n_bound:
        names = [p.name for p in positional]
        rest = next(
            (p.name for p in signature.parameters.values() if p.kind is p.VAR_POSITIONAL), None
        )
        if rest is not None:
            names += [f"{rest}_{i + 1}" for i in range(arity - len(names))]
        if len(names) >= arity and not set(names[n_bound:arity]) & set(bound_keywords):
            return names[n_bound:arity]
    required = [p.name for p in positional if p.default is p.empty]
    return [p for p in required[n_bound:] if p not in bound_keywords]


def _signature(fn):
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _bound_line(bindings):
    """The header line naming what the loader binds in a wrapper module (a partial's bound
    arguments, the function it calls): the rules derived from two partials of one function
    are set apart by these values, as those of two closures of one def are by their cells."""
    if not bindings:
        return ""
    return f"# bound-by-loader: {' '.join(sorted(bindings))}  (set when the module is loaded)\n"


def _load(directory, source, bindings, name):
    """The function ``name`` of a wrapper module of ``source``, written to ``directory`` under
    a name its text decides (unless there already) and imported with ``bindings``."""
    module_name = "wrapper__" + digest(source, 12)
    path = directory / f"{module_name}.py"
    if not path.exists() or path.read_text() != source:
        write_atomic(path, source)
    return getattr(import_module(directory, module_name, bindings), name)
