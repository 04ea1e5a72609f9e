"""Checking one program in every mode, and what the outcome was.

``check_program`` writes the program to a real module (tangent_ast reads source), runs
it as plain Python first (a program that raises, gives a non-finite value or runs for
seconds is ``SKIPPED``; one whose checks run for minutes is ``SLOW``), then checks
``check_grads`` in both modes (finite differences at several steps, the dot-product test,
the arguments' state) and the public API: ``grad``, ``value_and_grad`` and ``jvp``
against the function's value, ``vjp`` with its pullback called twice; with
``second_order``, ``check_second_order`` too (``hvp`` against differences of the gradient
and against reverse over reverse). A numeric disagreement is checked again at a nearby
point: one that goes away there was a kink the point happened to sit on (``SKIPPED``),
one that stays is ``WRONG``.
"""

from __future__ import annotations

import contextlib
import copy
import enum
import importlib.util
import itertools
import os
import signal
import sys
import tempfile
import threading
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import tangent_ast as ta
from tangent_ast.errors import InternalError, TangentAstError
from tangent_ast.runtime import is_record, rebuild, record_fields
from tangent_ast.testing import GradientCheckError, check_grads, check_second_order


class Outcome(enum.Enum):
    PASS = "pass"
    REFUSED = "refused"  # a TangentAstError: a clear refusal
    WRONG = "wrong"  # a number that disagrees: the worst bug
    INTERNAL = "internal"  # any other exception from tangent_ast or the code it generated
    SKIPPED = "skipped"  # not a valid test: the program itself fails, or sits on a kink
    SLOW = "slow"  # its checks take longer than DERIVING_SECONDS: rules too large, reported


@dataclass(frozen=True)
class Result:
    outcome: Outcome
    detail: str = ""  # the refusal message, the failing check, or the traceback's last line

    @property
    def failed(self):
        return self.outcome in (Outcome.WRONG, Outcome.INTERNAL)


_COUNTER = itertools.count()
_DIRECTORY = None


def load(program):
    """Write ``program`` to a fresh module file and import it."""
    global _DIRECTORY
    if _DIRECTORY is None:
        _DIRECTORY = Path(tempfile.mkdtemp(prefix="tangent_ast_fuzz_"))
    name = f"fuzz_program_{program.seed}_{next(_COUNTER)}"
    path = _DIRECTORY / f"{name}.py"
    path.write_text(program.source())
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _finite(value):
    try:
        return bool(np.all(np.isfinite(value)))
    except TypeError:
        return False


def _close(a, b):
    if isinstance(a, dict) or is_record(a):
        return (
            type(a) is type(b)
            and _parts(a) == _parts(b)
            and all(_close(_part(a, k), _part(b, k)) for k in _parts(a))
        )
    return np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-6, atol=1e-9)


def _parts(a):
    """The keys of a dict, the fields of a dataclass instance."""
    return list(a) if isinstance(a, dict) else record_fields(a)


def _part(a, key):
    return a[key] if isinstance(a, dict) else getattr(a, key)


def _each_part(a, fn):
    """``a`` (a dict or a dataclass instance) with ``fn`` applied to each entry or field."""
    if isinstance(a, dict):
        return {k: fn(v) for k, v in a.items()}
    return rebuild(a, [fn(getattr(a, k)) for k in record_fields(a)])


def _ones(a):
    """A direction of all ones for the argument ``a``."""
    if isinstance(a, dict) or is_record(a):
        return _each_part(a, _ones)
    return np.ones_like(a) if isinstance(a, np.ndarray) else [1.0] * len(a) if _listed(a) else 1.0


def _api_checks(f, args):
    """The public entry points agree with the function and with each other."""
    expected = f(*copy.deepcopy(args))
    wrt = tuple(range(len(args)))
    value, grads = ta.value_and_grad(f, wrt=wrt)(*copy.deepcopy(args))  # a tuple: wrt is
    if not _close(value, expected):
        raise GradientCheckError(f"value_and_grad gives the value {value!r}, f gives {expected!r}")
    again = ta.grad(f, wrt=wrt)(*copy.deepcopy(args))
    for g, h in zip(grads, again, strict=True):
        if not _close(g, h):
            raise GradientCheckError("grad and value_and_grad disagree")
    out, pullback = ta.vjp(f, *copy.deepcopy(args), wrt=wrt)
    if not _close(out, expected):
        raise GradientCheckError(f"vjp gives the value {out!r}, f gives {expected!r}")
    first, second = pullback(1.0), pullback(1.0)
    for g, h, k in zip(first, second, grads, strict=True):
        if not (_close(g, h) and _close(g, k)):
            raise GradientCheckError("the vjp pullback called twice, and grad, disagree")
    tangents = tuple(_ones(a) for a in args)
    out, _ = ta.jvp(f, copy.deepcopy(args), tangents)
    if not _close(out, expected):
        raise GradientCheckError(f"jvp gives the value {out!r}, f gives {expected!r}")


def _listed(a):
    return isinstance(a, list)


def _direction(a, rng):
    """A random direction for the argument ``a`` (an array, a float, a list of floats, or a
    dict or dataclass instance of those)."""
    if isinstance(a, dict) or is_record(a):
        return _each_part(a, lambda v: _direction(v, rng))
    if isinstance(a, np.ndarray):
        return rng.standard_normal(np.shape(a))
    if _listed(a):
        return [float(rng.standard_normal()) for _ in a]
    return float(rng.standard_normal())


def _step(a, d, step):
    """``a + step * d`` for an argument and a direction of it."""
    if isinstance(a, dict):
        return {k: _step(v, d[k], step) for k, v in a.items()}
    if is_record(a):
        return rebuild(a, [_step(getattr(a, k), getattr(d, k), step) for k in record_fields(a)])
    if _listed(a):
        return [x + step * t for x, t in zip(a, d, strict=True)]
    return a + step * d


def _perturbed(args, seed):
    rng = np.random.default_rng(seed + 1)
    return tuple(_step(a, _direction(a, rng), 1e-3) for a in args)


def _backend_checks(f, args, backend):
    """The rules of another backend (``"numba"``) give the NumPy backend's values: the value
    and gradient, and a tangent in every direction of ones."""
    wrt = tuple(range(len(args)))
    want = ta.value_and_grad(f, wrt=wrt)(*copy.deepcopy(args))
    got = ta.value_and_grad(f, wrt=wrt, backend=backend)(*copy.deepcopy(args))
    if not all(_close(g, w) for g, w in zip((got[0], *got[1]), (want[0], *want[1]), strict=True)):
        raise GradientCheckError(f"backend={backend!r}: value_and_grad differs from NumPy's")
    tangents = tuple(_ones(a) for a in args)
    want = ta.jvp(f, copy.deepcopy(args), copy.deepcopy(tangents))
    got = ta.jvp(f, copy.deepcopy(args), copy.deepcopy(tangents), backend=backend)
    if not (_close(got[0], want[0]) and _close(got[1], want[1])):
        raise GradientCheckError(f"backend={backend!r}: jvp differs from NumPy's")


def _check_at(f, args, second_order=False, backend=None):
    check_grads(f, copy.deepcopy(args), modes=("forward", "reverse"), rtol=1e-4, atol=1e-6)
    # the other route to reverse mode: the forward rules transposed
    other = "direct" if os.environ.get("TANGENT_AST_ROUTE") == "transpose" else "transpose"
    check_grads(f, copy.deepcopy(args), modes=("reverse",), rtol=1e-4, atol=1e-6, route=other)
    if len(args) > 1:  # with respect to one argument only: the others carry no derivative
        check_grads(
            f,
            copy.deepcopy(args),
            modes=("forward", "reverse"),
            wrt=(len(args) - 1,),
            rtol=1e-4,
            atol=1e-6,
        )
    _api_checks(f, args)
    if second_order:
        # forward over reverse against differences of the gradient, and reverse over reverse
        check_second_order(f, copy.deepcopy(args), rtol=1e-3, atol=1e-5)
    if backend not in (None, "numpy"):
        _backend_checks(f, args, backend)


PLAIN_SECONDS = 5  # a program runs as plain Python in far less
DERIVING_SECONDS = 300  # a program's checks take seconds; minutes mean rules grown too large


class _TooLong(BaseException):
    """Time is up (not an Exception: the checks' handlers must not take it for a result)."""


@contextlib.contextmanager
def _time_limit(seconds):
    """Raise ``_TooLong`` in the block after ``seconds`` (where a timer signal can: the main
    thread of a POSIX process; elsewhere, no limit)."""
    if (
        not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        yield
        return

    def expire(signum, frame):
        raise _TooLong

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def check_program(program, second_order=False, backend=None):
    """The :class:`Result` of ``program`` in every mode (and, with ``second_order``, its
    Hessian-vector products by forward over reverse and by reverse over reverse; with
    ``backend``, that backend's rules against the NumPy backend's)."""
    try:
        module = load(program)
    except SyntaxError as exc:
        return Result(Outcome.SKIPPED, f"not valid Python: {exc}")
    f = module.f
    args = program.args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with _time_limit(PLAIN_SECONDS):
                value = f(*copy.deepcopy(args))
        except _TooLong:  # a while loop whose counter a shrunk program lost
            return Result(Outcome.SKIPPED, f"the program runs longer than {PLAIN_SECONDS} s")
        except Exception as exc:  # the program itself fails: not a test of tangent_ast
            return Result(Outcome.SKIPPED, f"the program raises {type(exc).__name__}")
        if not _finite(value) or np.ndim(value) != 0:
            return Result(Outcome.SKIPPED, "the program's value is not a finite scalar")
        if abs(float(value)) > 1e4:  # sin of a huge value: finite differences cannot resolve it
            return Result(
                Outcome.SKIPPED, "the program's value is too large to check by differences"
            )
        try:
            with _time_limit(DERIVING_SECONDS):
                return _classify(f, args, program.seed, second_order, backend)
        except _TooLong:
            return Result(Outcome.SLOW, f"its checks ran longer than {DERIVING_SECONDS} s")


def _classify(f, args, seed, second_order=False, backend=None):
    try:
        _check_at(f, args, second_order, backend)
        return Result(Outcome.PASS)
    except InternalError as exc:
        if str(exc).startswith("verifying"):  # the modes disagree: a bug, or a kink
            return _numeric(f, args, seed, exc, second_order, backend)
        return Result(Outcome.INTERNAL, str(exc).splitlines()[0])
    except TangentAstError as exc:
        return Result(Outcome.REFUSED, str(exc).splitlines()[0])
    except GradientCheckError as exc:
        return _numeric(f, args, seed, exc, second_order, backend)
    except Exception as exc:
        frames = traceback.extract_tb(exc.__traceback__)
        where = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "?"
        return Result(Outcome.INTERNAL, f"{type(exc).__name__} at {where}: {exc}")


def _too_steep(f, args, seed):
    """Along a random direction, the derived slope and the differences both beyond 1e6:
    float64 differences cannot check such a slope (a loop that multiplies by 40 each
    step), while a derived slope that is huge where the differences are not stays a bug."""
    rng = np.random.default_rng(seed + 2)
    direction = tuple(_direction(a, rng) for a in args)
    _, derived = ta.jvp(f, copy.deepcopy(args), copy.deepcopy(direction))
    numeric = 0.0
    for step in (1e-3, 1e-5, 1e-7):
        plus = tuple(_step(a, d, step) for a, d in zip(args, direction, strict=True))
        minus = tuple(_step(a, d, -step) for a, d in zip(args, direction, strict=True))
        numeric = max(numeric, abs(float(f(*plus) - f(*minus))) / (2 * step))
    return abs(float(derived)) > 1e6 and numeric > 1e6


def _numeric(f, args, seed, exc, second_order=False, backend=None):
    """A disagreement that disappears a little way off was a kink, not a bug; one where
    the function is too steep for differences is not a test."""
    try:
        if _too_steep(f, args, seed):
            return Result(Outcome.SKIPPED, "too steep to check by differences")
    except Exception:
        pass  # the checks below say what is wrong
    nearby = _perturbed(args, seed)
    try:
        value = f(*copy.deepcopy(nearby))
        if not _finite(value):
            return Result(Outcome.SKIPPED, "not finite nearby")
        _check_at(f, nearby, second_order, backend)
    except (GradientCheckError, AssertionError):
        return Result(Outcome.WRONG, str(exc).splitlines()[0])
    except Exception:
        return Result(Outcome.WRONG, str(exc).splitlines()[0])
    return Result(Outcome.SKIPPED, "a kink at the point checked")
