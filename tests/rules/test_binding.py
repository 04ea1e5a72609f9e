"""Rules bind what they are called with (tangent_ast/rules/binding.py).

Every call of a primitive is bound against the primal's whole signature: the
forms a rule handles are differentiated right in both modes, and every other
form is refused at derivation time with an error naming the parameter.
"""

import gast
import numpy as np
import pytest

import tangent_ast as ta
from tangent_ast.rules.binding import CallRefused, Role, bind_call
from tangent_ast.rules.registry import lookup
from tangent_ast.testing import check_grads

from . import binding_cases as cases

X = cases.X


@pytest.mark.parametrize("fn, args", [
    (cases.clip_keyword_bounds, (X,)),
    (cases.clip_bounds_in_other_order, (X, -0.5, 0.4)),
    (cases.mean_by_keyword, (X,)),
    (cases.sum_positional_axis, (X,)),
    (cases.defaults_written_out, (X,)),
    (cases.array_of_scalars, (0.3, 0.5, 0.7)),
    (cases.float_conversions, (X,)),
    (cases.reshape_method_forms, (X,)),
    (cases.sum_with_start, (0.5, 0.7)),
    (cases.sum_of_list, (0.3, 0.5, 0.7)),
    (cases.sum_of_named_list, (0.3, 0.5, 0.7)),  # np.asarray of the list first, as NumPy does
    (cases.tanh_of_list, (0.3, 0.5)),
    (cases.arange_of_ints, (0.5,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_handled_forms_are_right_in_both_modes(fn, args):
    check_grads(fn, args, modes=("forward", "reverse"))


@pytest.mark.parametrize("fn, args, named", cases.REFUSED, ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_unhandled_forms_are_refused_at_derivation(fn, args, named, mode):
    with pytest.raises(ta.TangentAstError) as info:
        ta.derive(fn, mode, wrt=tuple(range(len(args))), args=args)
    message = str(info.value)
    assert named in message
    assert "binding_cases.py:" in message and "hint:" in message


def test_clip_bounds_given_by_keyword_were_ignored_before():
    """The bounds reach the rule: the derivative is zero where x is clipped."""
    g = ta.grad(cases.clip_keyword_bounds)(X)
    assert np.all(g[np.abs(X) > 0.5] == 0.0)
    assert np.allclose(g[np.abs(X) <= 0.5], 2 * X[np.abs(X) <= 0.5])


def _names(*ids):
    return [gast.Name(i, gast.Load(), None, None) for i in ids]


def test_canonical_form_puts_differentiable_arguments_by_position_and_the_rest_by_keyword():
    x, lo, hi = _names("x", "lo", "hi")
    bound = bind_call(lookup(np.clip), [x], [gast.keyword(arg="a_max", value=hi),
                                             gast.keyword(arg="a_min", value=lo)])
    assert [a.id for a in bound.args] == ["x", "lo", "hi"]
    assert [g.role for g in bound.given] == [Role.DIFFERENTIABLE] * 3

    axis = gast.Constant(1, None)
    bound = bind_call(lookup(np.sum), [x, axis], [])
    assert [a.id for a in bound.args] == ["x"]
    assert [(k.arg, k.value.value) for k in bound.keywords] == [("axis", 1)]


def test_a_parameter_at_its_default_is_as_if_not_given():
    x = _names("x")[0]
    bound = bind_call(lookup(np.sum), [x], [gast.keyword(arg="keepdims", value=gast.Constant(False, None)),
                                           gast.keyword(arg="out", value=gast.Constant(None, None))])
    assert [k.arg for k in bound.keywords] == ["keepdims"]  # np.sum's keepdims has no literal default


def test_a_call_that_does_not_fit_the_signature_is_refused():
    x = _names("x")[0]
    with pytest.raises(CallRefused) as info:
        bind_call(lookup(np.sum), [x], [gast.keyword(arg="axes", value=gast.Constant(1, None))])
    assert "does not fit" in info.value.what


def test_a_users_rule_handles_the_parameters_it_declares():
    """A rule declared to handle ``scale`` takes it; ``where``, undeclared, is refused."""
    from tangent_ast.rules import registry
    x, three = _names("x")[0], gast.Constant(3.0, None)
    ta.defjvp(cases.scaled, lambda dx, ans, x, scale=1.0: scale * dx)
    try:
        entry = lookup(cases.scaled)
        with pytest.raises(CallRefused):
            bind_call(entry, [x], [gast.keyword(arg="scale", value=three)])
        ta.handles(cases.scaled, "scale")
        bound = bind_call(entry, [x], [gast.keyword(arg="scale", value=three)])
        assert [k.arg for k in bound.keywords] == ["scale"]
        with pytest.raises(CallRefused) as info:
            bind_call(entry, [x], [gast.keyword(arg="where", value=gast.Constant(1, None))])
        assert "where" in info.value.what
    finally:
        del registry._TABLE[registry._key(cases.scaled)]
        registry._changed()
