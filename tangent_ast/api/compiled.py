"""Rules of the Numba backend: compiled when derived, and Numba's errors told as refusals.

A rule derived with ``backend="numba"`` is a module whose functions are decorated
``@numba.njit(cache=True)`` (transform/for_numba.py). Numba compiles a function for the
types of the arguments it is called with. ``derive(..., args=...)`` compiles the rule for
its example arguments at once (:func:`compile_for`), so that what Numba cannot compile is
refused there; ``grad`` and the other functions derive a rule on its first call, which
compiles it. Either way a Numba error is raised as a :class:`TangentAstError` naming the
generated line, the primal line it derives from and what Numba could not type
(:func:`numba_refusal`), not as Numba's traceback.
"""

import re
import sys
from pathlib import Path

from ..errors import TangentAstError
from ..modes import Backend, Mode

# where a Numba error points: "at /path/mod.py (17)" (typing) or 'File "mod.py", line 17:'
_AT = re.compile(r"at (\S+\.py) \((\d+)\)")
_FILE = re.compile(r'File "([^"]+\.py)", line (\d+)')
_PRIMAL_LINE = re.compile(r"# line (\d+)\s*$")


def compile_for(rule, args):
    """Compile ``rule`` (of the Numba backend) for ``args``, its flattened arguments: its jvp
    for them and tangents of the same types, or its forward sweep and then its reverse sweep
    for what the forward sweep returns. Raises what :func:`numba_refusal` gives."""
    if rule.backend is not Backend.NUMBA:
        return
    import numba

    types = tuple(_numba_type(numba, rule, p, a) for p, a in zip(rule.params, args, strict=False))
    try:
        if rule.mode is Mode.FORWARD:
            tangents = tuple(types[rule.params.index(w)] for w in rule.wrt)
            rule.jvp.compile(types + tangents)
        else:
            rule.fwd.compile(types)
            out, saved = rule.fwd.overloads[types].signature.return_type.types
            rule.bwd.compile((saved, out))
    except Exception as exc:
        refusal = numba_refusal(rule, exc)
        if refusal is None:
            raise
        raise refusal from None


def _numba_type(numba, rule, param, value):
    try:
        return numba.typeof(value)
    except ValueError:
        raise TangentAstError(
            f"backend='numba': argument {param!r} of {rule.fn.__qualname__} is a "
            f"{type(value).__name__}, which Numba cannot compile",
            where=f"{rule.fn.__code__.co_filename}:{rule.fn.__code__.co_firstlineno}",
            hint="Numba compiles numbers, arrays and tuples of them: pass those, or derive "
            "with backend='numpy'",
        ) from None


def numba_refusal(rule, exc):
    """The TangentAstError that tells Numba's error ``exc``, raised compiling ``rule``'s
    module (or a module it calls); None if ``exc`` is not Numba's."""
    errors = sys.modules.get("numba.core.errors")
    if errors is None or not isinstance(exc, errors.NumbaError):
        return None
    text = str(exc)
    what = _what_failed(text)
    generated, primal = _lines_of(text, rule.path.parent)
    where = None
    if primal is not None:
        where = f"{rule.fn.__code__.co_filename}:{primal}"
    at = f" at `{generated}`" if generated else ""
    return TangentAstError(
        f"backend='numba': Numba cannot compile the rule of {rule.fn.__qualname__}{at}: {what}",
        where=where,
        hint=_hint_for(what),
    )


_PYTHON_FUNCTION = re.compile(r"Untyped global name '(\w+)'.*<class 'function'>")


def _hint_for(what):
    """What to do about the failure Numba's message ``what`` tells."""
    called = _PYTHON_FUNCTION.search(what)
    if called:  # a user function whose value the rule needs, called as it is
        return (
            f"{called.group(1)} is a Python function the rule calls for its value alone (no "
            "derivative flows through that call), and Numba compiles only compiled functions: "
            "derive with backend='numpy', or differentiate with respect to what it is given"
        )
    return (
        "write that line with what Numba compiles (docs/numba.md), or derive with backend='numpy'"
    )


def _what_failed(text):
    """The first lines of Numba's message that say what failed, without its pipeline's
    step names and source excerpts."""
    said = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("Failed in ", "During:", "File ", "<source")):
            if said and (not line or line.startswith(("File ", "During:"))):
                break
            continue
        said.append(line)
        if len(said) == 2:
            break
    what = " ".join(said)
    # Numba colours its messages on a terminal
    what = re.sub(r"\x1b\[[0-9;]*m", "", what)
    return what if len(what) <= 300 else what[:297] + "..."


def _lines_of(text, directory):
    """The generated line Numba points at, and the primal line it derives from (the comment
    ``# line N`` on it or on the nearest line above it in its function): a line of a module
    in ``directory`` (the rules' own) first, where Numba names several."""
    found = _FILE.findall(text) + _AT.findall(text)  # Numba names the innermost file first
    found.sort(key=lambda place: Path(place[0]).resolve().parent != directory.resolve())
    for path, number in found:
        file = Path(path)
        if not file.is_file():
            continue
        lines = file.read_text().splitlines()
        index = int(number) - 1
        if not 0 <= index < len(lines):
            continue
        generated = lines[index].split("  # line")[0].strip()
        for line in reversed(lines[: index + 1]):
            mark = _PRIMAL_LINE.search(line)
            if mark:
                return generated, int(mark.group(1))
            if line.startswith("def "):
                break
        return generated, None
    return None, None


def compiled_value_and_gradient(rule):
    """``{base}_value_and_gradient(*params) -> (out, gradient)`` of a reverse ``rule`` of the
    Numba backend, compiled as one function: its forward sweep, then its reverse sweep from a
    cotangent of 1.0, with no return to Python between them (the residuals stay native)."""
    from .companions import check_scalar_output, companion_function, gradient_module_text

    check_scalar_output(rule)  # a cotangent of 1.0 only for a scalar output

    def text():
        plain = gradient_module_text(rule, value=True)
        header, _, function = plain.partition("\n\n\ndef ")
        return f"import numba\n{header}\n\n\n@numba.njit(cache=True)\ndef {function}"

    return companion_function(rule, "compiled_value_and_gradient", text, _name(rule))


def _name(rule):
    from ..vocabulary.naming import rule_base

    return f"{rule_base(rule.fn)}_value_and_gradient"


def gradient_computed(gradient, one):
    """The reverse sweep of a rule whose forward sweep computed the gradient already
    (:func:`compiled_value_and_gradient`): what it handed on."""
    return gradient
