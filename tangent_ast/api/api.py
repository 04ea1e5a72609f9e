"""The public functions: derive (defined in :mod:`tangent_ast.api.sessions`, with the sessions
they all get their rules from), jvp, grad, value_and_grad, vjp, show."""

import functools
import inspect

import numpy as np

from .. import runtime
from ..cache.cached import DerivedRule
from ..cache.live import generated_test
from ..emit.display import SourceText
from ..errors import (
    InternalError,
    NonScalarOutputError,
    NotDifferentiableError,
    TangentAstError,
    UnsupportedSyntaxError,
)
from ..modes import Backend, Mode, Route
from ..runtime.checkpoints import checkpoint
from ..vocabulary.api_roles import Role, register
from ..vocabulary.calling import PLAIN, flat_arguments, plain_arity
from ..vocabulary.kinds import _SCALAR_TYPES, KEYS_KEPT, signature_key, signature_of
from .companions import (
    check_scalar_output,
    companion_function,
    gradient_function,
    gradient_module_text,
)
from .compiled import compiled_value_and_gradient, gradient_computed, numba_refusal
from .sessions import _session, as_function, verifying
from .sessions import derive as derive  # a name of this module too, as before sessions.py
from .sessions import verify_first_call as _verify


def jvp(f, primals, tangents, *, batched=False, cache=None, verify=None, backend=None):
    """``(f(*primals), J @ tangents)``; a ``None`` tangent means "not differentiated".

    ``batched=True``: each tangent holds ``n`` directions along a leading axis, and so does
    the tangent returned (``J @ t`` for each ``t``), computed in one pass of the forward
    rule where its operations take a batch (see :mod:`tangent_ast.runtime.jacobians`).
    ``verify`` and ``backend``: as for :func:`derive`."""
    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise TangentAstError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    wrt = tuple(i for i, t in enumerate(tangents) if t is not None)
    session = _session(cache, backend=backend)
    f = as_function(f, session.directory)
    if not wrt:
        out = f(*primals)
        return out, np.zeros_like(out, dtype=float) if np.ndim(out) else 0.0
    form, flat = flat_arguments(f, primals, {})  # the given arguments come first
    signature = signature_of(flat)
    rule = session.rule(source_of(f, signature), Mode.FORWARD, wrt, signature, form)
    rule.check_arguments(flat)
    point = _copied(primals) if verifying(verify) else None  # as they were before the call
    given = [tangents[i] for i in wrt]
    if not batched:
        result = guarded(f, flat, rule, lambda: rule.jvp(*flat, *given))
    else:
        refuse_batch_of_updates(rule, "jvp(..., batched=True)")
        from ..runtime.jacobians import jvp_of_batch  # a batch of directions only

        result = guarded(f, flat, rule, lambda: jvp_of_batch(rule.jvp, flat, *given))
    if point is not None:
        _verify(rule, point, None, cache, True)
    return result


def refuse_batch_of_updates(rule, what):
    """A batch of directions runs a rule once, or once per direction where one of its
    operations cannot take a batch: the arguments a function updates in place would then be
    updated again by each direction (a wrong point for the next)."""
    if rule.updates:
        names = ", ".join(repr(p) for _, p in rule.updates)
        raise TangentAstError(
            f"{what} of {rule.fn.__qualname__}, which updates its argument {names} in place",
            hint="take one direction at a time, each call given its own copy of the arguments",
        )


def _copied(args):
    import copy  # costs a millisecond: only when verifying

    return copy.deepcopy(args)


def _jvp_function(g, wrt, arity, cache=None):
    """``jvp(g, primals, tangents)`` as a function of ``(*primals, *tangents of wrt)``,
    returning the same pair: what a call of ``jvp`` in differentiated code becomes, derived
    again through ``g``'s forward rule (whose source is on disk)."""

    def jvp_of(*args):
        tangents = [None] * arity
        for i, t in zip(wrt, args[arity:], strict=True):
            tangents[i] = t
        return jvp(g, args[:arity], tangents, cache=cache)

    def as_source(kinds):
        plain = _derived_again(g, _session(cache).directory, kinds[:arity], "jvp")
        rule = _session(cache).rule(plain, Mode.FORWARD, wrt, tuple(kinds[:arity]))
        return rule.jvp

    jvp_of.tangent_ast_source_for = as_source
    return jvp_of


jvp.as_function = _jvp_function  # type: ignore[attr-defined]


def guarded(f, args, rule, call):
    """``call()``, a call of generated code. An exception from it is the user's when ``f``
    itself raises for these arguments (it is re-raised as it is); otherwise it is a bug of
    tangent_ast, raised as an InternalError showing the generated line. Costs nothing
    unless something is raised."""
    try:
        return call()
    except TangentAstError:
        raise
    except Exception as exc:
        _raise_for(f, args, rule, exc)


def _raise_for(f, args, rule, exc):
    """Raise what :func:`guarded` raises for ``exc``, raised by ``rule``'s generated code."""
    import copy  # costs a millisecond: on a rule's error only

    refusal = numba_refusal(rule, exc)  # a rule of the Numba backend that does not compile
    if refusal is not None:
        raise refusal from None
    try:
        f(*copy.deepcopy(args))
    except Exception:
        raise exc from None  # the program's own error, raised by its own code
    if getattr(rule, "handler_lines", ""):
        raise TangentAstError(
            f"{rule.fn.__qualname__} catches {type(exc).__name__} ({exc}) with the except "
            f"clause at line {rule.handler_lines}: the derivative follows the try block only",
            where=f"{rule.fn.__code__.co_filename}:{rule.handler_lines.split(',')[0]}",
            hint="test for the case with an if before it raises, so that both paths are derived",
        ) from exc
    raise internal_error(rule, exc) from exc


def real_cotangents(rule, cts, args):
    """A real input always gets a real cotangent: the derivation takes the real part where
    real and complex values meet, and this is the net for values whose kind was unknown.
    Each cotangent has its input's type (:func:`_in_input_type`)."""
    inputs = [args[rule.params.index(w)] for w in rule.wrt]
    several = len(inputs) > 1
    typed = []
    for ct, x in zip(cts if several else (cts,), inputs, strict=True):
        if _is_complex(ct) and not _is_complex(x):
            raise UnsupportedSyntaxError(
                f"a complex value reached the gradient of the real input of "
                f"{rule.fn.__qualname__}: a value of unknown kind met complex values",
                hint="convert it with np.real(...) where it becomes real, or give every "
                "argument as an example",
            )
        typed.append(_in_input_type(ct, x))
    if not several:
        return typed[0]
    return cts if all(a is b for a, b in zip(typed, cts)) else type(cts)(typed)


def _in_input_type(ct, x):
    """``ct`` in the type of its input ``x``: complex for a complex number (np.real's
    cotangent is a real number), ``x``'s dtype for an array (a float32 array's gradient is
    float32, as in JAX and autograd, however the function computed in between)."""
    if isinstance(x, complex) and not isinstance(ct, complex):
        return complex(ct)
    retyped = type(x) is np.ndarray and type(ct) is np.ndarray and ct.dtype != x.dtype
    if retyped and (x.dtype.kind == "c" or (x.dtype.kind == "f" and ct.dtype.kind == "f")):
        return ct.astype(x.dtype)
    return ct


def _typed_input(x):
    """Whether the cotangent of the input ``x`` may need :func:`_in_input_type`."""
    return isinstance(x, complex) or (type(x) is np.ndarray and x.dtype.kind in "fc")


def _is_complex(x):
    return type(x) is complex or (type(x) is np.ndarray and x.dtype.kind == "c")


def internal_error(rule, exc):
    import traceback  # costs a millisecond: on a rule's error only

    frames = [fr for fr in traceback.extract_tb(exc.__traceback__) if fr.filename == str(rule.path)]
    line = (
        f"{frames[-1].filename}:{frames[-1].lineno}: {frames[-1].line}"
        if frames
        else str(rule.path)
    )
    return InternalError(
        f"the {rule.mode} rule of {rule.fn.__qualname__} raised {type(exc).__name__}: {exc}, which "
        f"{rule.fn.__qualname__} itself does not raise for these arguments (at {line})",
        hint="this is a bug of tangent_ast: please report it with the function and its arguments",
    )


def _derived_again(f, directory, kinds, maker):
    """The function to derive for ``maker(f)`` differentiated again, at arguments of
    ``kinds``; one taking ``*args`` or ``**kwargs`` (a decorator's wrapper) is refused: the
    function made of its rule takes plain parameters only."""
    plain = source_of(as_function(f, directory), tuple(kinds))
    try:
        params = inspect.signature(plain, follow_wrapped=False).parameters.values()
    except (TypeError, ValueError):
        return plain
    spread = [p for p in params if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if spread:
        name = getattr(plain, "__qualname__", repr(plain))
        raise TangentAstError(
            f"{maker}({name}) differentiated again: {name} takes "
            f"{', '.join(str(p) for p in spread)}, which is not supported yet",
            hint=f"ta.hvp({name}) gives its second derivatives; or wrap it in a def with "
            "plain parameters",
        )
    return plain


def source_of(f, signature):
    """The function to derive for ``f`` at arguments of ``signature``: ``f`` itself, or for a
    function made by ``grad`` the gradient of its reverse rule, whose source is on disk (so
    ``grad(grad(f))`` differentiates generated code, not tangent_ast's own)."""
    again = getattr(f, "tangent_ast_source_for", None)
    return f if again is None else again(signature)


def _check_scalar(f, out):
    """The cotangent the reverse sweep of ``grad`` starts from, for ``f``'s output ``out``:
    1.0 for a real number, ones for a real array of one element (the gradient of that
    element, as autograd's ``grad`` gives); else the refusal."""
    if (
        type(out) is float
        or isinstance(out, np.floating)
        or (isinstance(out, np.ndarray) and out.ndim == 0 and out.dtype.kind == "f")
    ):
        return 1.0
    if isinstance(out, np.ndarray) and out.size == 1 and out.dtype.kind == "f":
        return np.ones_like(out)
    if isinstance(out, (complex, np.complexfloating)) or (
        isinstance(out, np.ndarray) and out.ndim == 0 and out.dtype.kind == "c"
    ):
        raise NotDifferentiableError(
            f"grad needs a real output, but {getattr(f, '__qualname__', f)} returned a complex "
            "number",
            hint="return np.real(...), np.imag(...) or np.abs(...) of it; jvp and vjp take "
            "complex outputs",
        )
    if isinstance(out, (bool, int, str, bytes, np.integer, np.bool_)) or out is None:
        raise NotDifferentiableError(
            f"grad needs a float output, but {getattr(f, '__qualname__', f)} returned "
            f"{type(out).__name__}: it has no derivative",
            hint="return a float, e.g. float(value)",
        )
    raise NonScalarOutputError(
        f"grad needs a scalar output, but {getattr(f, '__qualname__', f)} returned "
        f"{type(out).__name__} of shape {np.shape(out)}",
        hint="reduce it to a scalar (e.g. np.sum), or use tangent_ast.vjp for any output",
    )


# The types of the cotangents that can be complex (an array: if its dtype says so).
_COMPLEX_OR_ARRAY = frozenset((complex, np.ndarray))
# Outputs that _check_scalar passes by their type alone.
_REAL_SCALARS = frozenset((float, np.float64, np.float32, np.float16, np.longdouble))


class _Reverse:
    """What a call of ``grad(f)`` uses of one reverse rule, looked up once when the rule is
    cached rather than on every call."""

    __slots__ = (
        "bwd",
        "check",
        "count",
        "current",
        "fwd",
        "pending",
        "ready",
        "real",
        "rule",
        "typed",
    )

    def __init__(self, rule, args):
        self.rule = rule
        self.pending = None  # (args, kwargs) of its first call, to verify after it
        self.current = rule.dependencies.current
        self.ready = same_kinds(args, rule.dependencies)
        self.fwd, self.bwd = rule.fwd, rule.bwd
        if rule.backend is Backend.NUMBA:  # both sweeps in one compiled call
            self.fwd, self.bwd = compiled_value_and_gradient(rule), gradient_computed
        # check_arguments does nothing for a rule that updates no argument in place
        self.check = rule.check_arguments if rule.updates else None
        positions = [rule.params.index(w) for w in rule.wrt]
        self.count = len(positions)
        # The cotangents real_cotangents tests: those of real inputs. Whether an input is
        # complex follows from its type and dtype, which the cache key of the rule fixes.
        self.real = tuple(i for i, p in enumerate(positions) if not _is_complex(args[p]))
        # inputs whose cotangents may need their type (a complex number, an array's dtype)
        self.typed = tuple(positions) if any(_typed_input(args[p]) for p in positions) else ()

    def retyped(self, cts, args):
        """The cotangents in their inputs' types (:func:`_in_input_type`), for a rule whose
        inputs may need it: one test of types per input on each call."""
        if self.count == 1:
            return _in_input_type(cts, args[self.typed[0]])
        typed = tuple(_in_input_type(c, args[p]) for c, p in zip(cts, self.typed, strict=True))
        return cts if all(a is b for a, b in zip(typed, cts)) else typed

    def cotangents(self, cts, args):
        """``real_cotangents(rule, cts, args)``, which runs (to raise its error) only when
        one of the cotangents it tests is complex or their number is not the expected one:
        a test of arrays' dtypes, without the work of finding the inputs again."""
        if self.count > 1:
            if type(cts) is not tuple or len(cts) != self.count:
                return real_cotangents(self.rule, cts, args)
            for i in self.real:
                ct = cts[i]
                if type(ct) is complex or (type(ct) is np.ndarray and ct.dtype.kind == "c"):
                    return real_cotangents(self.rule, cts, args)
        elif self.real and _is_complex(cts):
            return real_cotangents(self.rule, cts, args)
        return cts


def same_kinds(args, dependencies=None):
    """A function of a tuple of arguments: True only if they have the ``signature_key`` of
    ``args`` (a call of their rule then) and, given ``dependencies``, those are current
    (``dependencies.current()``); False when it cannot tell cheaply.

    The last rule a ``grad`` ran is tried first with it, in place of building the key and
    looking it up. It is one expression generated for ``args``, with their types, shapes
    and dtypes bound as its globals: a Python scalar by its type, an ndarray by its type,
    shape and dtype object (the same object is the same dtype, so the same ``dtype.char``
    of the key). Arguments of any other kind (containers, records, subclasses of ndarray)
    get no such test: their key is more than their type and shape. The lookups of
    ``current()`` follow in the same expression (a call less on every call of ``grad``)."""
    names = {"ndarray": np.ndarray}
    terms = [f"len(args) == {len(args)}"]
    for i, a in enumerate(args):
        if type(a) in _SCALAR_TYPES:
            names[f"t{i}"] = type(a)
            terms.append(f"type(args[{i}]) is t{i}")
        elif type(a) is np.ndarray:
            names[f"s{i}"], names[f"d{i}"] = a.shape, a.dtype
            terms.append(f"type(args[{i}]) is ndarray")
            terms.append(f"args[{i}].shape == s{i} and args[{i}].dtype is d{i}")
        else:
            return _never
    if dependencies is not None:
        identity_names, expression = dependencies.identity
        names.update(identity_names)  # named apart: _MISSING, m0, k0, o0, w0, v0, a0, ...
        terms.append(f"({expression})")
    return generated_test("args", " and ".join(terms), names, "<tangent_ast.api.api same_kinds>")


def _never(args):
    return False


class _NoRule:
    """The last rule of a ``grad`` not called yet: matches no call."""

    ready = staticmethod(_never)


class Made:
    """A function made by the API from a user's function (``grad(f)``, ``hvp(f)``, ...). It
    looks like ``f`` (name, docstring, signature; not ``f``'s attributes, which say how
    *``f``* was made) and pickles as how it was made, by reference: ``(grad, f, wrt)``, so
    another process makes it again, its rules loaded from the cache or derived. ``call``
    is what it calls (None for a subclass with a ``__call__`` of its own)."""

    def __init__(self, call, how, f, *args, **kwargs):
        functools.update_wrapper(self, f, updated=())
        if not hasattr(self, "__name__"):  # a functools.partial: named as the function it binds
            inner = getattr(f, "func", f)
            self.__name__ = getattr(inner, "__name__", type(inner).__name__)
        if not hasattr(self, "__qualname__"):  # a ufunc has a name only
            inner = getattr(f, "func", f)
            self.__qualname__ = getattr(inner, "__qualname__", self.__name__)
        self._call = call
        self._how = (how, f, args, kwargs)

    def __call__(self, *args, **kwargs):
        return self._call(*args, **kwargs)

    def __repr__(self):
        how, f, args, _ = self._how
        return f"<{how.__name__}({getattr(f, '__qualname__', f)}, {', '.join(map(repr, args))})>"

    def __reduce__(self):
        how, f, args, kwargs = self._how
        return (functools.partial(how, **kwargs), (f, *args))


class _Gradient(Made):
    """``grad(f, wrt)`` (with ``value``: ``value_and_grad(f, wrt)``).

    Its ``__call__`` is the path of every call, so it keeps to what a call must do, with
    no function between it and the rule that it can do without: find the rule for the
    kinds of the arguments in a dict (under ``signature_key``, which determines the
    signature the rule was derived for, so one key never stands for two signatures), check
    that it was derived against the program as it is now (``Dependencies.current``: a
    callee redefined or a global rebound derives it again), run it, check its output and
    cotangents."""

    def __init__(self, how, f, wrt, cache, value, route=None, verify=None, backend=None):
        super().__init__(None, how, f, wrt, cache=cache, route=route, backend=backend)
        self._verify = verify
        self._session = _session(cache, route=route, backend=backend)
        self._f = as_function(f, self._session.directory)
        self._arity = plain_arity(getattr(self._f, "__func__", self._f))
        self._wrt, self._cache, self._value = wrt, cache, value
        self._one = one_in_tuple(wrt)  # wrt=(0,): a tuple of one gradient, as JAX gives
        self._rules = {}  # signature key (with the call form unless plain) -> _Reverse
        # the rule of the latest plain call, tried first (its ``ready`` test on the arguments
        # stands for their key's lookup)
        self._last = _NoRule
        # Whether the rule derived last was for Python scalars only: calls are then looked
        # up by the types of their arguments first (cheaper than signature_key), else by
        # signature_key at once (an array's types alone would miss)
        self._by_type = True

    def __call__(self, *args, **kwargs):
        reverse = self._last
        # the arguments of the latest call's kinds (ready() holds only for the arity of a
        # plain call) and the program unchanged (its current(), in the same expression):
        # its rule, as the lookup would find it
        if kwargs or not reverse.ready(args):
            reverse, args = self._find(args, kwargs)
        if reverse.check is not None:
            reverse.check(args)
        # guarded(), written out: no closure to make on each call
        try:
            result = reverse.fwd(*args)
        except TangentAstError:
            raise
        except Exception as exc:
            _raise_for(self._f, args, reverse.rule, exc)
        out, saved = result
        seed = 1.0 if type(out) in _REAL_SCALARS else _check_scalar(self._f, out)
        try:
            cts = reverse.bwd(saved, seed)
        except TangentAstError:
            raise
        except Exception as exc:
            _raise_for(self._f, args, reverse.rule, exc)
        # real_cotangents' test, made only when a cotangent's type leaves it open (a complex
        # number, or an array, whose dtype tells) or when there are not as many as the rule
        # has inputs to differentiate: its error is then raised as it was
        if reverse.count == 1:
            # _is_complex written out (a call less); the cotangent of a complex input may be
            # complex, so the test is made only for a real one
            if reverse.real and (
                type(cts) is complex or (type(cts) is np.ndarray and cts.dtype.kind == "c")
            ):
                cts = real_cotangents(reverse.rule, cts, args)
        elif (
            type(cts) is not tuple
            or len(cts) != reverse.count
            or not _COMPLEX_OR_ARRAY.isdisjoint(map(type, cts))
        ):
            cts = reverse.cotangents(cts, args)
        if reverse.typed:
            cts = reverse.retyped(cts, args)
        if reverse.pending is not None:  # its first call, verified (a derivation, only then)
            (given, given_kwargs), reverse.pending = reverse.pending, None
            _verify(reverse.rule, given, given_kwargs, self._cache, True)
        if self._one:
            cts = (cts,)
        return (out, cts) if self._value else cts

    def _find(self, args, kwargs):
        """The rule for ``args`` and ``kwargs``, looked up by their key (derived if it is not
        there, or not current), and the arguments flattened as it takes them."""
        rules = self._rules
        given = args
        if kwargs or len(args) != self._arity:
            form, args = flat_arguments(self._f, args, kwargs)
            key = signature_key(args) if form is PLAIN else (form, signature_key(args))
            reverse = rules.get(key)
        else:
            form = PLAIN
            if self._by_type:
                # signature_key of Python scalars is the tuple of their types, and no other
                # key is a tuple of types only: a rule found under it is the one for these
                # kinds, and other arguments miss it and are looked up by signature_key
                key = tuple(map(type, args))
                reverse = rules.get(key)
                if reverse is None:
                    key = signature_key(args)
                    reverse = rules.get(key)
            else:
                key = signature_key(args)
                reverse = rules.get(key)
        if reverse is None or not reverse.current():
            reverse = self._derive(key, args, form)
            if verifying(self._verify):
                reverse.pending = _copied((given, kwargs))
        # a plain call's rule is tried first next time (another form's arguments are
        # flattened first: ready() never holds for them as given)
        self._last = reverse if form is PLAIN else _NoRule
        return reverse, args

    def _derive(self, key, args, form):
        """The rule for ``args`` (of call ``form``) from the session, which derives it, loads
        it from the cache or has it already; cached under ``key``."""
        signature = signature_of(args)
        rule = self._session.rule(
            source_of(self._f, signature), Mode.REVERSE, self._wrt, signature, form
        )
        if len(self._rules) >= KEYS_KEPT:
            self._rules.clear()
        self._rules[key] = _Reverse(rule, args)
        self._by_type = form is PLAIN and all(isinstance(k, type) for k in key)
        return self._rules[key]


def value_and_grad(f, wrt=0, *, cache=None, route=None, verify=None, backend=None):
    """A function returning ``(f(*args), gradient)``; a tuple ``wrt`` gives a tuple of gradients.
    ``route``, ``verify`` and ``backend``: as for :func:`derive`."""
    value_and_gradient = _Gradient(
        value_and_grad, f, wrt, cache, value=True, route=route, verify=verify, backend=backend
    )

    def as_source(kinds):
        """Differentiated again: the value and gradient of ``f``'s reverse rule for arguments
        of ``kinds``, as a function whose source is on disk."""
        _refuse_one_in_tuple(wrt, "value_and_grad")
        session = _session(cache, route=route)
        plain = _derived_again(f, session.directory, kinds, "value_and_grad")
        rule = session.rule(plain, Mode.REVERSE, wrt, tuple(kinds))
        check_scalar_output(rule)
        return companion_function(
            rule, "value_and_gradient", gradient_module_text(rule, value=True)
        )

    value_and_gradient.tangent_ast_source_for = as_source
    return value_and_gradient


def grad(f, wrt=0, *, cache=None, route=None, verify=None, backend=None):
    """A function returning the gradient of scalar-valued ``f`` with respect to ``wrt``.
    ``route``, ``verify`` and ``backend``: as for :func:`derive`."""
    gradient = _Gradient(
        grad, f, wrt, cache, value=False, route=route, verify=verify, backend=backend
    )

    def as_source(kinds):
        """Differentiated again (``grad(grad(f))``, a call of ``grad(f)`` in differentiated
        code): the gradient of ``f``'s reverse rule for arguments of ``kinds``, as a function
        whose source is on disk."""
        _refuse_one_in_tuple(wrt, "grad")
        session = _session(cache, route=route)
        plain = _derived_again(f, session.directory, kinds, "grad")
        return gradient_function(session.rule(plain, Mode.REVERSE, wrt, tuple(kinds)))

    gradient.tangent_ast_source_for = as_source
    return gradient


def one_in_tuple(wrt):
    """``wrt`` is a tuple (or list) of one argument: the gradient a tuple of one, as JAX's
    ``argnums=(0,)`` and autograd's ``argnum=[0]`` give (``grad(f, wrt=(0,))(x, y)[0]`` is
    the gradient, not its first entry)."""
    return isinstance(wrt, (tuple, list)) and len(wrt) == 1


def _refuse_one_in_tuple(wrt, what, where=None):
    if one_in_tuple(wrt):
        raise TangentAstError(
            f"{what} with wrt a tuple of one argument ({wrt!r}) in a function being "
            "differentiated, or differentiated again",
            hint=f"give wrt={wrt[0]!r}: the gradient itself rather than a tuple of one",
            where=where,
        )


def default_wrt(wrt, kinds, caller):
    """``wrt`` as given, or every float or float-array argument (of ``kinds``)."""
    if wrt is not None:
        return wrt
    wrt = tuple(i for i, k in enumerate(kinds) if k.differentiable)
    if not wrt:
        raise TangentAstError(f"{caller}: no argument is a float or a float array")
    return wrt


def vjp(f, *args, wrt=None, cache=None, route=None, verify=None, backend=None):
    """``(f(*args), pullback)``; ``pullback(ct)`` gives the cotangents of the ``wrt``
    arguments (default: every float or float-array argument), a tuple when there are
    several. The pullback may be called any number of times; ``pullback(cts,
    batched=True)`` takes cotangents along a leading axis and gives the cotangents of
    each, computed in one pass of the reverse rule where its operations take a batch.
    ``route``, ``verify`` and ``backend``: as for :func:`derive`."""
    given = f
    session = _session(cache, route=route, backend=backend)
    f = as_function(f, session.directory)
    form, flat = flat_arguments(f, args, {})
    signature = signature_of(flat)
    one = one_in_tuple(wrt)
    wrt = default_wrt(wrt, signature[: len(args)], "vjp")
    source = source_of(f, signature)
    if source is not f:  # a function made by the API: its source's parameters, defaults filled
        form, flat = flat_arguments(source, args, {})
        signature = signature_of(flat)
    rule = session.rule(source, Mode.REVERSE, wrt, signature, form)
    rule.check_arguments(flat)
    checking = verifying(verify)
    point = _copied(args) if rule.updates or checking else args  # as before the call
    out, saved = guarded(f, flat, rule, lambda: rule.fwd(*flat))
    if checking:
        _verify(rule, point, None, cache, True)

    def pullback(ct, *, batched=False):
        if batched:  # ct holds cotangents along a leading axis
            from ..runtime.jacobians import run_batched

            inputs = tuple(flat[rule.params.index(w)] for w in rule.wrt)
            cts = guarded(
                f,
                flat,
                rule,
                lambda: run_batched(
                    lambda c: rule.bwd(saved, c),
                    [ct],
                    lambda: inputs if len(inputs) > 1 else inputs[0],
                ),
            )
            cts = real_cotangents(rule, cts, flat)
            return (cts,) if one else cts
        if isinstance(out, (tuple, list)):  # None in a structured cotangent means zero
            entries = [
                runtime.zero_tangent(o) if c is None else c for c, o in zip(ct, out, strict=True)
            ]
            # a namedtuple's cotangent is the same record (its rule reads ct.field)
            ct = (
                runtime.rebuild(out, entries)
                if runtime.is_record(out)
                else runtime.TangentTuple(entries)
            )
        cts = real_cotangents(rule, guarded(f, flat, rule, lambda: rule.bwd(saved, ct)), flat)
        return (cts,) if one else cts

    made_at = (given, point, wrt, cache, session.route.value, session.backend.value)
    return out, Pullback(pullback, made_at)


class Pullback:
    """The pullback ``vjp`` returns. It pickles as the point it was made at (the function
    by reference, the arguments, ``wrt``): another process runs the forward sweep there
    again, and its rule comes from the cache or is derived."""

    def __init__(self, call, made_at):
        self._call, self._made_at = call, made_at

    def __call__(self, ct, *, batched=False):
        return self._call(ct, batched=batched)

    def __reduce__(self):
        return (_pullback_at, self._made_at)


def _pullback_at(f, args, wrt, cache, route=None, backend=None):
    return vjp(f, *args, wrt=wrt, cache=cache, route=route, backend=backend)[1]


def _vjp_functions(f, arity, *, wrt=None, cache=None, route=None, where=None):
    """``out, pullback = vjp(f, *args)`` (``arity`` arguments) in differentiated code, as two
    functions whose sources are on disk once the kinds of the arguments are known: ``f``'s
    forward sweep, ``f_fwd(*args) -> (out, saved)``, and its reverse sweep,
    ``f_bwd(saved, ct)``, which each call of the pullback becomes (the pullback being
    ``saved``, the residuals). Derived again, they give the derivatives of the pullback's
    results. ``where``: the call's place, for refusals."""
    _refuse_one_in_tuple(wrt, "vjp", where)
    rules = []  # the reverse rule for the kinds of the call's arguments, once known

    def rule_for(kinds):
        session = _session(cache, route=route)
        plain = source_of(as_function(f, session.directory), kinds)
        rule = session.rule(plain, Mode.REVERSE, default_wrt(wrt, kinds, "vjp"), kinds)
        if len(rule.params) != arity:
            raise TangentAstError(
                f"vjp of {getattr(f, '__qualname__', f)} in a function being differentiated, "
                f"given {arity} of its {len(rule.params)} parameters",
                where=where,
                hint="pass every argument, the defaults too",
            )
        from ..pipeline import result_kind  # deriving already: the pipeline is imported

        if result_kind(plain, kinds).container:
            raise TangentAstError(
                f"vjp of {getattr(f, '__qualname__', f)}, which returns a tuple, list, dict or "
                "record, in a function being differentiated",
                where=where,
                hint="differentiate a function returning one array or number",
            )
        rules[:] = [rule]
        return rule

    def forward_sweep(*args):
        return rule_for(signature_of(args)).fwd(*args)

    def reverse_sweep(saved, ct):
        return reverse_source(())(saved, ct)

    def reverse_source(kinds):
        if not rules:
            raise InternalError("the pullback of vjp was called before vjp", where=where)
        return rules[-1].bwd

    forward_sweep.tangent_ast_source_for = lambda kinds: rule_for(tuple(kinds[:arity])).fwd
    reverse_sweep.tangent_ast_source_for = reverse_source
    return forward_sweep, reverse_sweep


vjp.as_functions = _vjp_functions  # type: ignore[attr-defined]


def show(f, mode="forward", wrt=0, *, stage="module", args=None, route=None, backend=None):
    """The source of one stage of the derivation of ``f``.

    ``stage`` is one of ``parse``, ``normalize``, ``ssa``, ``forward`` or
    ``reverse`` (the raw transform), ``simplify``, ``module`` (the file). For a function
    made by ``hvp``, the module of its forward rule over the reverse rule (``args``: the
    arguments and the direction).
    """
    composed = getattr(f, "tangent_ast_source", None)
    if composed is not None:
        if stage != "module" or args is None:
            raise TangentAstError(
                "show(hvp(f), args=(*args, v)) shows the module of its forward rule",
                hint="give args, and leave stage at 'module'",
            )
        return SourceText(composed(*args))
    signature = signature_of(args) if args is not None else None
    fn = getattr(f, "__func__", f)
    return SourceText(stage_source(fn, mode, wrt, signature, stage, route, backend))


# The transpose route's stages, as (mode, snapshot): the linearization is the forward
# transform, its unzip a view of that; the transpose is the reverse transform of the route
_ROUTE_STAGES = {
    "linearize": (Mode.FORWARD, "forward"),
    "unzip": (Mode.FORWARD, "unzip"),
    "transpose": (Mode.REVERSE, "reverse"),
}


def stage_source(fn, mode, wrt, signature, stage, route=None, backend=None):
    """The text of ``stage`` of the derivation of ``fn`` (``show``, ``tangent-ast show``)."""
    from ..pipeline import MODES, STAGE_NAMES, derive_module

    if stage not in STAGE_NAMES:
        raise TangentAstError(f"stage must be one of {', '.join(STAGE_NAMES)}, not {stage!r}")
    if stage in MODES:  # the raw transform of that mode
        mode = stage
    if stage == "transpose":
        route = Route.TRANSPOSE
    if stage in _ROUTE_STAGES:
        mode, stage = _ROUTE_STAGES[stage]
    session = _session(route=route, backend=backend).deriving()
    generated = derive_module(fn, mode, wrt, signature, session, trace=True)
    return generated.snapshots[stage]


# tangent_ast's API in differentiated code (lowering/api_calls.py), by identity
register(Role.VJP, vjp)
register(Role.JVP, jvp)
register(Role.MAKER, grad, value_and_grad, checkpoint)
register(Role.DERIVE, derive)
register(Role.OTHER, show)
register(Role.PULLBACK, Pullback)
register(Role.RULE, DerivedRule)
register(Role.MADE, Made)
