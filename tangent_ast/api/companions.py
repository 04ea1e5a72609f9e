"""Functions built on derived rules, each written as a module next to its rule's: the gradient
as one function (``g(*params) = f_bwd(f_fwd(*params)[1], 1.0)``, its two sweeps written out
where they can be), the value and the gradient, and the modules higher_order and linearization
make (Hessian-vector products, linear maps). They are what a second derivative differentiates:
source on disk, derived like any other function. A module made on a closure's rule is that
closure's own (named by its values, loaded with its rule's functions).
"""

import ast
import inspect
import re
import weakref

from ..cache.load import bound_by_loader, has_own_values, import_module, write_atomic
from ..errors import NonScalarOutputError, NotDifferentiableError
from ..vocabulary.code_keys import values_key
from ..vocabulary.kinds import Tag, is_complex
from ..vocabulary.naming import rule_base

_COMPANIONS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # rule -> {kind: fn}


def companion_function(rule, kind, text, name=None):
    """The function ``name`` (default ``{base}_{kind}``) of the module ``text`` (or of what
    ``text()`` gives, asked once), written next to ``rule``'s module (``{stem}__{kind}.py``,
    importing from it) and imported: a function built on a derived rule, whose source is on
    disk like the rule's."""
    made = _COMPANIONS.setdefault(rule, {})
    if kind not in made:
        text = text() if callable(text) else text  # made once a rule
        bindings = _rule_bindings(rule, text)
        module_name = f"{rule.path.stem}__{kind}"
        key = _values_key(rule) if bindings is not None else ""
        if key:  # a closure's over data: the module, and rules derived from it, its own
            module_name += f"_{key}"
        path = rule.path.parent / f"{module_name}.py"
        if not path.exists() or path.read_text() != text:
            write_atomic(path, text)
        module = import_module(rule.path.parent, module_name, bindings, reload=True)
        made[kind] = getattr(module, name or f"{rule_base(rule.fn)}_{kind}")
    return made[kind]


def _rule_bindings(rule, text):
    """What a module built on ``rule`` imports from the rule's module, bound to the rule's
    own functions where the rule reads values of its own (a closure's: each closure's rule
    module is loaded with its cells, and one built on it must call that one); else None."""
    own = rule.fwd if hasattr(rule, "fwd") else rule.jvp
    if not has_own_values(own):
        return None
    own = getattr(own, "py_func", own)  # a rule of the Numba backend: its Python function
    imports = re.search(rf"^from \.{re.escape(rule.path.stem)} import (.+)$", text, re.MULTILINE)
    names = [] if imports is None else [n.strip() for n in imports.group(1).split(",")]
    return {n: own.__globals__[n] for n in names if n in own.__globals__}


def _values_key(rule):
    """What sets apart the values ``rule``'s module was loaded with (a closure's cells)."""
    own = rule.fwd if hasattr(rule, "fwd") else rule.jvp
    namespace = getattr(own, "py_func", own).__globals__
    return values_key({n: namespace[n] for n in bound_by_loader(rule.path) if n in namespace})


def gradient_function(rule):
    """The gradient of ``rule``'s function as a function of its own, in a module next to the
    rule's: ``g(*params) = f_bwd(f_fwd(*params)[1], 1.0)``, whose source is on disk."""
    check_scalar_output(rule)
    return companion_function(rule, "gradient", lambda: gradient_module_text(rule, value=False))


def check_scalar_output(rule):
    """The refusal ``grad`` gives a call returning an array, a container or a complex
    number, made where the gradient is built for a second derivative (hvp, hessian,
    jacfwd(grad(f))), by the kind ``rule``'s function returns: its sweep starts from a
    cotangent of 1.0, which would otherwise broadcast into the gradient of a sum."""
    from ..pipeline import result_kind  # deriving already: the pipeline is imported

    kind = result_kind(rule.fn, rule.signature, rule.form)
    name = getattr(rule.fn, "__qualname__", rule.fn)
    if kind.container or (kind.tag is Tag.ARRAY and kind.ndim != 0):
        raise NonScalarOutputError(
            f"grad needs a scalar output, but {name} returns {kind} for arguments of kinds "
            f"({', '.join(map(str, rule.signature))})",
            hint="reduce it to a scalar (e.g. np.sum), or use tangent_ast.jacfwd / jacrev",
        )
    if is_complex(kind):
        raise NotDifferentiableError(
            f"grad needs a real output, but {name} returns a complex value",
            hint="return np.real(...), np.imag(...) or np.abs(...) of it",
        )


def gradient_module_text(rule, value):
    """The module of ``{base}_gradient`` (or with ``value``, ``{base}_value_and_gradient``)
    over reverse ``rule``: its two sweeps written out as one function where they can be
    (``composed.gradient_text``), else a call of each."""
    # second derivatives only: not on a cache hit's path
    from ..transform.composed import gradient_text

    base = rule_base(rule.fn)
    defaults = _trailing_defaults(rule)
    inlined = (
        None
        if value
        else gradient_text(rule.source, base, f"{base}_gradient", rule.fwd.__globals__, defaults)
    )
    if inlined is not None:
        return (
            '"""The gradient of a derived reverse rule, as one function: its forward sweep, then '
            "its\nreverse sweep from a cotangent of 1.0; differentiated again for second "
            'derivatives\n(tangent_ast.hvp)."""\n\n' + inlined
        )
    params = ", ".join(rule.params)
    signature = ", ".join(f"{p}={defaults[p]}" if p in defaults else p for p in rule.params)
    name, result = (
        (f"{base}_value_and_gradient", f"out, {base}_bwd(saved, 1.0)")
        if value
        else (f"{base}_gradient", f"{base}_bwd(saved, 1.0)")
    )
    return (
        '"""The gradient of a derived reverse rule, as a function: differentiated again for\n'
        'second derivatives (tangent_ast.hvp)."""\n\n'
        f"from .{rule.path.stem} import {base}_bwd, {base}_fwd\n\n\n"
        f"def {name}({signature}):\n"
        f"    out, saved = {base}_fwd({params})\n"
        f"    return {result}\n"
    )


def _trailing_defaults(rule):
    """Parameter -> the text of its default, for the last parameters of ``rule``'s function
    whose defaults are literals: a gradient made of the rule takes the arguments a call of
    the function may leave out (``f(w, x)`` of ``def f(w, x, *, l2=0.1)``)."""
    try:
        given = inspect.signature(rule.fn).parameters
    except (TypeError, ValueError):
        return {}
    defaults = {}
    for p in reversed(rule.params):
        default = given[p].default if p in given else inspect.Parameter.empty
        if not _is_literal(default):
            break
        defaults[p] = repr(default)
    return defaults


def _is_literal(value):
    if not isinstance(value, (bool, int, float, complex, str, type(None))):
        return False
    try:
        return ast.literal_eval(repr(value)) == value
    except (ValueError, SyntaxError):
        return False
