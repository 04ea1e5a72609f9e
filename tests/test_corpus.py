"""The one generic checker: every corpus case, both modes, via check_grads."""

import numpy as np
import pytest

import tangent_ast as ta
from tangent_ast.testing import check_grads

from .corpus import calls, control_flow, jumps, language, straight_line

CASES = straight_line.CASES + calls.CASES + control_flow.CASES + jumps.CASES + language.CASES


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_both_modes(case):
    check_grads(case.fn, case.args, modes=("forward", "reverse"), kwargs=case.kwargs, wrt=case.wrt)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_reverse_against_finite_differences(case):
    check_grads(case.fn, case.args, modes=("reverse",), kwargs=case.kwargs, wrt=case.wrt)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_the_transpose_route(case):
    """The reverse rule derived by transposing forward rules: against the forward rule (the
    dot-product test) and finite differences, as the direct route's."""
    check_grads(case.fn, case.args, kwargs=case.kwargs, wrt=case.wrt, route="transpose")


def test_zip_strict_raises_as_python_does_on_unequal_lengths():
    xs, ys = np.array([0.3, 0.7, 1.1]), np.array([0.5, -0.4])
    for derived in (ta.grad(control_flow.loop_zip_strict), lambda a, b: ta.jvp(control_flow.loop_zip_strict, (a, b), (a, b))):
        with pytest.raises(ValueError, match="different lengths"):
            derived(xs, ys)


# values updated in place (helpers inlined, dataclass fields, dict entries, an argument
# rebound): their derived rules are derived again
_UPDATED_IN_PLACE = {
    "fills_buffer_by_helpers",
    "helper_in_loop_with_break",
    "appends_by_helper",
    "assigns_fields_of_argument",
    "assigns_fields_in_loop",
    "replaces_dict_entry_by_another_shape",
    "updates_dict_argument",
    "dict_entry_added_in_loop",
    "updates_argument_then_rebinds_it",
    "updates_an_argument_in_a_loop",
    "augments_its_own_array_in_a_loop",
    "names_an_array_then_binds_it_anew",
}


@pytest.mark.parametrize(
    "case", [c for c in language.CASES if c.fn.__name__ in _UPDATED_IN_PLACE], ids=lambda c: c.id
)
def test_updated_in_place_at_second_order(case):
    check_grads(case.fn, case.args, order=2, wrt=(0,))


def test_a_with_block_is_entered_and_left_once_by_each_rule():
    counted, x = language.COUNTED, np.array([0.5, 1.5, 2.5])
    for derived in (ta.grad(language.inside_contexts), lambda v: ta.jvp(language.inside_contexts, (v,), (v,))):
        derived(x)  # derived (and loaded) before counting
        before = counted.entered
        derived(x)
        assert counted.entered == counted.left == before + 1


def test_a_closure_made_and_called_is_derived_twice():
    """Its reverse rule saves nothing with a derivative (``t * a``, ``a`` a cell): derived
    again, that saved value has no derivative to follow, not a refusal."""
    check_grads(language.calls_what_calls_return, (0.5, 3), order=2, wrt=(0,))
    check_grads(language.applies_closure_made_here, (0.5, 3), order=2, wrt=(0,))


def test_a_number_that_starts_as_an_int_is_derived_twice():
    """Its tape holds the int 0 and then floats: derived again, the tape's cotangent has
    None in that place, which is read as a zero."""
    check_grads(language.keeps_a_number_that_starts_as_an_int, (0.7, 1.3), order=2, wrt=(0, 1))
