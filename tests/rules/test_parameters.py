"""Every registered rule, every documented parameter: a parameter a rule does not
declare (rules/binding.py) is refused when a call gives it, in both modes.

The calls are generated from the primitives' own signatures, written to a module and
derived; a rule that silently accepted a parameter it does not handle would pass
``out=``, ``where=`` or an unknown keyword into its formula and give a wrong number.
"""

import importlib.util
import inspect
import math
import operator

import numpy as np
import pytest

from tangent_ast.rules.binding import signature_of as binding_signature

import tangent_ast as ta
from tangent_ast.rules.binding import Role, _rule_positions, signature_of
from tangent_ast.rules.registry import all_primitives

try:  # SciPy is optional: its rules are checked when it is installed
    import scipy.special as SPECIAL
except ImportError:
    SPECIAL = None


def _spelling(fn):
    """How source code names ``fn`` (``np.linalg.norm``), or ``.name`` for an ndarray method."""
    if isinstance(fn, tuple):
        return None
    name = getattr(fn, "__name__", None)
    if name is None:
        return None
    if getattr(np.ndarray, name, None) is fn:
        return "." + name
    modules = [("np.", np), ("np.linalg.", np.linalg), ("math.", math)]
    if SPECIAL is not None:
        modules.append(("sp.", SPECIAL))
    for prefix, module in modules:
        if getattr(module, name, None) is fn:
            return prefix + name
    return None


def _cases():
    """(primitive name, parameter, source of a function calling it with that parameter)."""
    for entry in all_primitives():
        if entry.nondiff or not (entry.jvps or entry.vjps) or entry.fn in (operator.getitem,):
            continue
        spelling, signature = _spelling(entry.fn), signature_of(entry)
        if spelling is None or signature is None:
            continue
        differentiable, none = _rule_positions(entry)
        required, position = [], 0
        parameters = list(signature.parameters.values())
        for p in parameters:
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                if p.default is p.empty:
                    required.append("x" if position in differentiable else "float" if p.name == "dtype" else "C")
                position += 1
            elif p.kind == p.VAR_POSITIONAL and not required:
                required.append("'ij->ij'" if entry.fn is np.einsum else "x")
                if entry.fn is np.einsum:
                    required.append("x")
        for p in parameters:
            if p.kind in (p.VAR_POSITIONAL, p.POSITIONAL_ONLY) or p.name in entry.static:
                continue
            index = [q.name for q in parameters if q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD)]
            if p.name in index and (index.index(p.name) in differentiable or index.index(p.name) in none):
                continue
            keyword = "unknown_keyword" if p.kind == p.VAR_KEYWORD else p.name
            if spelling.startswith("."):
                call = f"x{spelling}({', '.join(required[1:] + [f'{keyword}=OTHER'])})"
            else:
                call = f"{spelling}({', '.join(required + [f'{keyword}=OTHER'])})"
            yield entry.name, keyword, call


CASES = list(_cases())
SOURCE = "import math\nimport numpy as np\n" + ("import scipy.special as sp\n" if SPECIAL else "") + "\nC = np.ones(3)\nOTHER = object()\n\n" + "".join(
    f"\ndef case_{i}(x):\n    return {call}\n" for i, (_, _, call) in enumerate(CASES))


def _module(tmp_path_factory, name, source):
    """``source`` written to a real file (tangent_ast reads source) and imported."""
    path = tmp_path_factory.mktemp(name) / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    return _module(tmp_path_factory, "parameter_calls", SOURCE)


def _signatures_readable():
    """NumPy 2.3+ gives its C functions signatures; older ones only document them."""
    try:
        inspect.signature(np.ndarray.sum)
    except (TypeError, ValueError):
        return False
    return True


def test_the_table_covers_every_rule_with_a_readable_signature():
    covered = {name for name, _, _ in CASES}
    least = (500, 120) if _signatures_readable() else (150, 60)
    assert len(CASES) > least[0] and len(covered) > least[1], (len(CASES), len(covered))


@pytest.mark.parametrize("i", range(len(CASES)), ids=[f"{n}-{k}" for n, k, _ in CASES])
@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_an_undeclared_parameter_is_refused(generated, i, mode):
    name, keyword, call = CASES[i]
    with pytest.raises(ta.TangentAstError) as info:
        ta.derive(getattr(generated, f"case_{i}"), mode, args=(np.ones((3, 3)),))
    assert keyword in str(info.value), f"{call}: {info.value}"


def test_roles_of_a_known_signature():
    """np.sum: a differentiable, axis/keepdims handled, the rest only at their defaults."""
    from tangent_ast.rules.binding import _role
    from tangent_ast.rules.registry import lookup
    entry = lookup(np.sum)
    differentiable, none = _rule_positions(entry)
    roles = {p: _role(entry, i if i < 1 else None, p, differentiable, none)
             for i, p in enumerate(inspect.signature(np.sum).parameters)}
    assert roles["a"] is Role.DIFFERENTIABLE
    assert roles["axis"] is roles["keepdims"] is Role.STATIC
    assert roles["out"] is roles["where"] is roles["initial"] is roles["dtype"] is Role.DEFAULT_ONLY


# --- every handled parameter, at a non-default value, right in both modes ------------

from tangent_ast.testing import check_grads  # noqa: E402

from tangent_ast.rules.runtime_helpers import COTANGENT_HELPERS  # noqa: E402

from .handled_cases import CASES as HANDLED  # noqa: E402

HANDLED_SOURCE = (
    "import numpy as np\nfrom tangent_ast import runtime\n"
    "try:\n    import scipy.special as sp\nexcept ImportError:  # optional: no cases then\n    pass\n"
) + "".join(
    f"\ndef handled_{i}(x):\n    return {expr}\n" for i, (_, expr, _) in enumerate(HANDLED))


@pytest.fixture(scope="module")
def handled(tmp_path_factory):
    return _module(tmp_path_factory, "handled_calls", HANDLED_SOURCE)


@pytest.mark.parametrize("i", range(len(HANDLED)), ids=[name for name, _, _ in HANDLED])
def test_a_handled_parameter_is_right_in_both_modes(handled, i):
    name, expr, x = HANDLED[i]
    try:
        getattr(handled, f"handled_{i}")(x.copy())
    except TypeError as exc:  # a parameter this NumPy does not have
        pytest.skip(f"NumPy {np.__version__}: {exc}")
    try:
        rules = check_grads(
            getattr(handled, f"handled_{i}"), (x.copy(), ), modes=("forward", "reverse")
        )
    except ta.TangentAstError as exc:
        if "does not fit" in str(exc) and not _signatures_readable():
            pytest.skip(f"NumPy {np.__version__} documents a signature without it: {exc}")
        raise
    assert name in rules["reverse"].rules_used | rules["forward"].rules_used


def _is_star_parameter(entry, name):
    """A *args parameter is given positionally: any case of the function exercises it."""
    signature = binding_signature(entry)
    parameter = signature.parameters.get(name) if signature is not None else None
    return parameter is not None and parameter.kind is parameter.VAR_POSITIONAL


def test_every_handled_parameter_has_a_case():
    written = {}
    for name, expr, _ in HANDLED:
        written.setdefault(name, []).append(expr)
    # (the cotangent helpers of generated code take the primal call's own parameters: they
    # are exercised by the rule table at second order, tests/api/test_higher_order.py)
    missing = [(entry.name, p) for entry in all_primitives() for p in sorted(entry.static)
               if entry.fn not in COTANGENT_HELPERS
               and not any(f"{p}=" in e for e in written.get(entry.name, []))
               and not any(p == "shape" and ".reshape(" in e for e in written.get(entry.name, []))
               and not any(p == "axes" and ".transpose(" in e for e in written.get(entry.name, []))
               and not (entry.name in ("ndarray.swapaxes", "ndarray.repeat") and written.get(entry.name))
               and not (_is_star_parameter(entry, p) and written.get(entry.name))]
    assert not missing, f"handled parameters without a case in tests/rules/handled_cases.py: {missing}"
