"""Bad input gives a TangentAstError naming file, line and construct, and what to do."""

import os

import numpy as np
import pytest

import tangent_ast as ta
from tangent_ast.errors import (MissingRuleError, NonScalarOutputError, NoSourceError,
                                NotDifferentiableError, TangentAstError, UnsupportedSyntaxError)

from .corpus import bad, language

BAD_FILE = os.path.basename(bad.__file__)


def line_of(fn, text):
    import inspect
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("fn, construct, text", [
    (bad.has_class, "a class definition", "class Local"),
    (bad.has_global, "a global statement", "global COUNTER"),
    (bad.has_yield, "yield", "yield x"),
    (bad.leaves_a_with_block_early, "a with block left by return", "with open"),
    (bad.raises_on_float_errors, "np.errstate with a setting other than", "with np.errstate"),
    (bad.has_try, "a return, break or continue inside try ... finally", "try:"),
    (bad.set_of_values, "a set of differentiable values", "return sum"),
    (bad.lambda_captures_a_derivative, "a lambda passed or stored as a value that reads", "return np.sum(_apply"),
    (bad.puts_along_an_axis, "calling put_along_axis for its effect", "np.put_along_axis(g"),
    (bad.shuffles_in_place, "calling shuffle for its effect", "np.random.shuffle(y)"),
    (bad.adds_into_list_item_with_second_name, "an augmented assignment to xs[...], an array Python updates in place, while 'w' holds", "xs[0] += x"),
    (bad.multiplies_a_list_holding_an_array_updated_later, "'z' held in a tuple, list or dict", "m = np.linalg.multi_dot"),
    (bad.assigns_a_slice_of_a_list, "assigning to a slice of the list 'xs'", "xs[0:2] = "),
    (bad.counts_its_calls, "updating 'CALLS', a value of the module, in place", 'CALLS["n"] += 1'),
    (bad.appends_through_a_second_name, "changing 'm' in place (append, extend, insert, pop) where it may be a list another name holds too", "m.append(x * 3.0)"),
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


@pytest.mark.parametrize("fn", [bad.returns_nothing, bad.returns_text])
def test_nothing_to_differentiate_is_refused_in_every_mode(fn):
    with pytest.raises(NotDifferentiableError) as info:
        ta.grad(fn)(1.5)
    assert "nothing to differentiate" in str(info.value) and BAD_FILE in str(info.value)
    with pytest.raises(NotDifferentiableError):
        ta.jvp(fn, (1.5,), (1.0,))


def test_grad_of_an_integer_output_is_refused():
    with pytest.raises(NotDifferentiableError) as info:
        ta.grad(bad.returns_int)(1.5)
    assert "int" in str(info.value)


@pytest.mark.parametrize("fn, text", [(bad.evaluates_text, "eval("), (bad.reads_locals, "locals()[")])
def test_code_known_only_when_it_runs_is_refused(fn, text):
    with pytest.raises(UnsupportedSyntaxError) as info:
        ta.grad(fn)(1.5)
    assert f"{BAD_FILE}:{line_of(fn, text)}" in str(info.value)


def test_the_programs_own_error_is_raised_as_it_is():
    with pytest.raises(ZeroDivisionError):
        ta.grad(bad.divides)(1.0, 0.0)


def test_a_bug_in_generated_code_is_an_internal_error_showing_the_line():
    from tangent_ast.errors import InternalError
    from tangent_ast.rules import registry

    ta.defvjp(bad._broken_helper, bad.broken_rule)
    try:
        with pytest.raises(InternalError) as info:
            ta.grad(bad.calls_broken_rule)(1.5)
        message = str(info.value)
        assert "ValueError: a broken rule" in message and "bug of tangent_ast" in message
        assert "calls_broken_rule" in message and ".py:" in message
    finally:
        del registry._TABLE[registry._key(bad._broken_helper)]
        registry._changed()


def test_a_failure_inside_the_transformer_is_an_internal_error(monkeypatch, tmp_path):
    from tangent_ast import pipeline
    from tangent_ast.errors import InternalError

    def broken(*args, **kwargs):
        raise KeyError("a stage bug")

    monkeypatch.setattr(pipeline, "analyze", broken)
    with pytest.raises(InternalError) as info:
        ta.derive(bad.divides, "reverse", args=(1.0, 2.0), cache=tmp_path)
    assert "KeyError" in str(info.value) and "divides" in str(info.value)
    assert f"{BAD_FILE}:" in str(info.value)


def test_a_call_that_runs_an_exception_handler_is_refused():
    from .corpus.language import log_or_zero

    with pytest.raises(TangentAstError, match="catches ValueError") as info:
        ta.grad(log_or_zero)(-1.0)
    assert "the derivative follows the try block only" in str(info.value)
    assert f"{log_or_zero.__code__.co_filename}:" in str(info.value)


@pytest.mark.parametrize("fn, construct, text", [
    (bad.assigns_field_of_record_with_second_name, "a second name for 'layer'", "other = layer"),
    (bad.assigns_field_of_frozen_record, "assigning a field of the argument 'frozen'", "frozen.b = 2.0"),
])
def test_field_assignment_refused_where_it_cannot_be_followed(fn, construct, text):
    import dataclasses

    @dataclasses.dataclass(frozen=True)
    class Frozen:
        w: object
        b: float

    record = Frozen(np.ones(3), 0.5) if "frozen" in fn.__name__ else language.Layer(np.ones(3), 0.5)
    with pytest.raises(UnsupportedSyntaxError) as info:
        ta.grad(fn)(np.ones(3), record)
    assert f"{BAD_FILE}:{line_of(fn, text)}" in str(info.value)
    assert construct in str(info.value)
