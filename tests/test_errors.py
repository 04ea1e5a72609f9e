"""Bad input gives a TangentAstError naming file, line and construct, and what to do."""

import os

import numpy as np
import pytest

import tangent_ast as ta
from tangent_ast.errors import (MissingRuleError, NonScalarOutputError, NoSourceError,
                                NotDifferentiableError, UnsupportedSyntaxError)

from .corpus import bad

BAD_FILE = os.path.basename(bad.__file__)


def line_of(fn, text):
    import inspect
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("fn, construct, text", [
    (bad.has_class, "a class definition", "class Local"),
    (bad.has_global, "a global statement", "global COUNTER"),
    (bad.has_yield, "yield", "yield x"),
    (bad.has_with, "a with block", "with np.errstate"),
    (bad.has_try, "a try block", "try:"),
])
@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_unsupported_syntax_names_file_line_and_construct(fn, construct, text, mode):
    with pytest.raises(UnsupportedSyntaxError) as info:
        ta.derive(fn, mode)
    message = str(info.value)
    assert f"{BAD_FILE}:{line_of(fn, text)}" in message
    assert construct in message
    assert "hint:" in message


def test_function_defined_in_a_string_has_no_source():
    with pytest.raises(NoSourceError) as info:
        ta.derive(bad.from_string)
    assert "<string>" in str(info.value) and "hint:" in str(info.value)


def test_builtin_has_no_source_and_suggests_a_rule():
    with pytest.raises(NoSourceError) as info:
        ta.derive(np.frexp)
    assert "defjvp" in str(info.value)


@pytest.mark.parametrize("mode, decorator", [("forward", "defjvp"), ("reverse", "defvjp")])
def test_missing_rule_names_function_mode_and_fix(mode, decorator):
    with pytest.raises(MissingRuleError) as info:
        ta.derive(bad.calls_no_rule, mode, args=(np.ones(3),))
    message = str(info.value)
    assert "numpy.frexp" in message and mode in message
    assert f"{BAD_FILE}:{line_of(bad.calls_no_rule, 'frexp')}" in message
    assert f"tangent_ast.{decorator}(numpy.frexp)" in message


def test_int_argument_is_not_differentiable():
    with pytest.raises(NotDifferentiableError) as info:
        ta.grad(bad.int_argument, wrt=0)(3, 2.0)
    assert "'n'" in str(info.value)


def test_grad_of_vector_output_is_a_clear_error():
    with pytest.raises(NonScalarOutputError) as info:
        ta.grad(bad.vector_output)(np.ones(3))
    assert "vjp" in str(info.value)


def test_unknown_wrt_lists_parameters():
    with pytest.raises(ta.TangentAstError) as info:
        ta.derive(bad.int_argument, wrt="z")
    assert "n, x" in str(info.value)


def test_rule_without_source_is_a_clear_error():
    namespace = {}
    exec("def rule(dx, ans, x):\n    return dx\n", namespace)
    with pytest.raises(NoSourceError) as info:
        ta.defjvp(np.frexp)(namespace["rule"])
    assert "rule" in str(info.value) and "hint:" in str(info.value)
