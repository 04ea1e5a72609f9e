"""Golden sources: what the generated code looks like, exactly."""

import textwrap

import numpy as np
import pytest

import tangent_ast as ta

from .corpus import calls, straight_line

pytestmark = pytest.mark.usefixtures("direct_route")  # its text, names, docs


def body(source):
    """Module text without header, imports and line comments."""
    lines = source.split("\n\n\n", 1)[-1].splitlines()
    return "\n".join(line.split("  # line")[0] for line in lines).strip() + "\n"


def test_forward_rule_of_design_example():
    source = ta.derive(straight_line.design_example, "forward", wrt=("x", "y"), args=(1.0, 2.0)).source
    assert body(source) == textwrap.dedent("""\
        def design_example_jvp(x, y, dx, dy):
            z = x * y
            dz = dx * y + x * dy
            out = z + np.sin(x)
            dout = dz + dx * np.cos(x)
            return out, dout
        """)
    assert "import numpy as np" in source


def test_reverse_rule_of_design_example():
    source = ta.derive(straight_line.design_example, "reverse", wrt=("x", "y"), args=(1.0, 2.0)).source
    assert body(source) == textwrap.dedent("""\
        def design_example_fwd(x, y):
            z = x * y
            out = z + np.sin(x)
            return out, (x, y)


        def design_example_bwd(saved, ct_out):
            x, y = saved
            ct_x = ct_out * np.cos(x) + ct_out * y
            ct_y = ct_out * x
            return ct_x, ct_y
        """)
    assert "runtime" not in source  # scalar arguments: no helper calls


def test_reverse_rule_of_a_branch():
    source = ta.derive(calls.relu_like, "reverse", args=(1.0,)).source
    assert body(source) == textwrap.dedent("""\
        def relu_like_fwd(x):
            x_gt_zero = x > 0
            if x_gt_zero:
                y = x * x
            else:
                y = -0.5 * x
            out = y + x
            return out, (x, x_gt_zero)


        def relu_like_bwd(saved, ct_out):
            x, x_gt_zero = saved
            ct_x = ct_out
            if x_gt_zero:
                ct_x = ct_x + 2.0 * ct_out * x
            else:
                ct_x = ct_x - ct_out * 0.5
            return ct_x
        """)


def test_ssa_of_reassignment():
    assert ta.show(straight_line.reassign, stage="ssa") == textwrap.dedent("""\
        def reassign(x):
            y = x * 2
            y_1 = y * y
            y_2 = y_1 + x
            return y_2
        """)


def test_ssa_of_branch_join():
    assert ta.show(calls.relu_like, stage="ssa") == textwrap.dedent("""\
        def relu_like(x):
            x_gt_zero = x > 0
            if x_gt_zero:
                y = x * x
            else:
                y = -0.5 * x
            out = y + x
            return out
        """)


def test_matrix_code_gets_inline_transposes_not_helpers():
    def_source = ta.derive(straight_line.np_matmat, "reverse", wrt=("A", "B"),
                           args=(np.ones((2, 3)), np.ones((3, 2)))).source
    assert ".T @" in def_source and "@ B.T" in def_source
    assert "matmul_vjp" not in def_source


def test_reverse_rule_of_a_loop():
    from .corpus import control_flow
    source = ta.derive(control_flow.recurrence, "reverse", args=(control_flow.X, 0.2)).source
    assert body(source) == textwrap.dedent("""\
        def recurrence_fwd(x, h0):
            h_2_tape = []
            h_1 = h0
            for t in range(len(x)):
                h_2 = np.tanh(0.5 * h_1 + x[t])
                h_1 = h_2
                h_2_tape.append(h_2)
            return h_1, (x, h_2_tape)


        def recurrence_bwd(saved, ct_h):
            x, h_2_tape = saved
            ct_x = np.zeros_like(x)
            for t in reversed(range(len(x))):
                h = h_2_tape[t]
                ct_tmp = ct_h * (1 - h ** 2)
                ct_x[t] += ct_tmp
                ct_h = ct_tmp * 0.5
            return ct_x
        """)


def test_forward_rule_of_a_loop_reads_like_the_loop():
    """``x ** i`` with ``i`` a variable: its derivative is guarded for ``i == 0`` at
    ``x == 0`` (``0 * 0.0 ** -1`` raises), with one helper call."""
    from .corpus import control_flow
    source = ta.derive(control_flow.range_loop, "forward", args=(0.7, 5)).source
    assert body(source) == textwrap.dedent("""\
        def range_loop_jvp(x, n, dx):
            s = 0.0
            ds = 0.0
            for i in range(n):
                i_plus_one = i + 1
                s = s + x ** i / i_plus_one
                ds = ds + dx * runtime.power_derivative(x, i) / i_plus_one
            return s, ds
        """)


def test_reverse_rule_of_a_loop_filling_a_preallocated_array():
    """Save the old slot and write; backwards: read the slot's cotangent, zero it, restore."""
    from .corpus import language
    source = ta.derive(language.fill_preallocated, "reverse", args=(language.V,)).source
    assert body(source) == textwrap.dedent("""\
        def fill_preallocated_fwd(x):
            out_old_tape = []
            out = np.zeros(len(x))
            for i in range(len(x)):
                out_old = out[i]
                out[i] = np.sin(x[i]) * 2.0
                out_old_tape.append(out_old)
            out_1 = np.sum(out * out)
            return out_1, (x, out_old_tape, out)


        def fill_preallocated_bwd(saved, ct_out_1):
            x, out_old_tape, out = saved
            out = out.copy()
            ct_out = 2 * ct_out_1 * out
            ct_x = np.zeros_like(x)
            for i in reversed(range(len(x))):
                out_old = out_old_tape[i]
                ct_sin_times_two = ct_out[i]
                ct_out[i] = 0.0
                out[i] = out_old
                ct_x[i] += ct_sin_times_two * 2.0 * np.cos(x[i])
            return ct_x
        """)


def test_unsafe_in_place_updates_and_aliases_are_refused():
    import pytest
    from tangent_ast.errors import UnsupportedSyntaxError
    from .corpus import bad
    with pytest.raises(UnsupportedSyntaxError, match="updating the argument 'x' in place and rebinding"):
        ta.derive(bad.updates_then_rebinds_argument)
    with pytest.raises(UnsupportedSyntaxError, match="reading 'tail', a view of 'x', after 'x' is updated"):
        ta.grad(bad.reads_view_after_update)(np.ones(3))
    with pytest.raises(UnsupportedSyntaxError, match="updating the argument 'params', which is not an array, "
                       "a list or a dict, in place"):
        ta.grad(bad.updates_tuple_argument, 1)((1.0, 2.0), 3.0)
    v = np.array([0.5, -1.0, 2.0])
    with pytest.raises(UnsupportedSyntaxError, match="augmented assignment to the array 'z', .* also named 'y'"):
        ta.grad(bad.augments_aliased_array)(v)
    with pytest.raises(UnsupportedSyntaxError, match="to the array 'tail', .* a view of 'y'"):
        ta.grad(bad.augments_view)(v)
    with pytest.raises(UnsupportedSyntaxError, match="to the array 'y', .* held in a tuple, list or dict"):
        ta.grad(bad.augments_array_held_in_list)(v)


def test_a_closure_made_from_a_differentiable_value_is_refused_not_zero():
    import pytest
    from tangent_ast.errors import UnsupportedSyntaxError
    from .corpus import bad
    with pytest.raises(UnsupportedSyntaxError, match="calling 'g', a function value made from differentiable"):
        ta.grad(bad.calls_closure_of_differentiable_value, (0, 1))(0.5, 2.0)
    # with respect to x alone, the closure is data
    assert np.isclose(ta.grad(bad.calls_closure_of_differentiable_value)(0.5, 2.0), 2.0)
    # called on a constant, the closure's result still varies with s: refused, not zero
    for route in ("direct", "transpose"):
        with pytest.raises(UnsupportedSyntaxError, match="calling 'g', a function value made from"):
            ta.grad(bad.calls_closure_of_differentiable_value_on_a_constant, 1, route=route)(0.5, 2.0)
    with pytest.raises(UnsupportedSyntaxError, match="calling 'g', a function value made from"):
        ta.jvp(bad.calls_closure_of_differentiable_value_on_a_constant, (0.5, 2.0), (None, 1.0))
    assert np.isclose(ta.grad(bad.calls_closure_of_differentiable_value_on_a_constant)(0.5, 2.0), 4.0)
    with pytest.raises(UnsupportedSyntaxError, match="a second name for 'a'"):
        ta.derive(bad.aliases_updated_array)
    with pytest.raises(UnsupportedSyntaxError, match="'xs' held in a tuple, list or dict"):
        ta.derive(bad.updates_list_held_in_tuple)


def test_calls_that_do_not_bind_statically_are_refused():
    import pytest
    from tangent_ast.errors import UnsupportedSyntaxError
    from .corpus import bad
    with pytest.raises(UnsupportedSyntaxError, match=r"a starred argument \(\*t\) other than the function's own "
                       r"\*args parameter is not supported") as info:
        ta.grad(bad.spreads_local_tuple)(0.5)
    assert "bad.py:" in str(info.value)
    with pytest.raises(UnsupportedSyntaxError, match="this call of two_parameters .*missing a required argument"):
        ta.grad(bad.misses_an_argument)(0.5)


def test_a_wrapper_with_args_and_kwargs_shows_how_it_was_flattened():
    from .corpus import language
    source = ta.derive(language.calls_through_wrapper, "reverse", args=(0.7, 1.3)).source
    assert "forwards_everything_fwd(x, y, y * y, x, 2.0)" in source  # gain=x, scale=2.0: sorted
    directory = ta.derive(language.calls_through_wrapper, "reverse", args=(0.7, 1.3)).path.parent
    # the reverse rule itself (the cache may also hold a forward rule of its bwd, whose name
    # starts alike, when a test of second derivatives ran first)
    text = next(text for p in directory.glob("*forwards_everything__reverse__args0_kwargs_gain__*")
                if (text := p.read_text()).startswith('"""Reverse rule of forwards_everything,'))
    assert "# parameters: *args -> args0, args1, args2; **kwargs -> kwargs_gain, kwargs_scale" in text
    assert "def forwards_everything_fwd(args0, args1, args2, kwargs_gain, kwargs_scale):" in text
    assert "weighted_sum_fwd(args0, args1, args2, kwargs_scale, kwargs_gain)" in text


def test_reverse_rule_of_a_loop_saves_nothing_it_can_recompute():
    """The forward sweep is the user's code: r * r does not change in the loop, so the
    reverse sweep computes it once; i + 1.0 is recomputed from the loop index."""
    from .corpus import control_flow
    case = next(c for c in control_flow.CASES if c.fn is control_flow.weighted_loss)
    source = ta.derive(control_flow.weighted_loss, "reverse", wrt="w", args=case.args).source
    assert body(source) == textwrap.dedent("""\
        def weighted_loss_fwd(w, x, y):
            z = np.tanh(x @ w)
            r = z - y
            total = 0.0
            for i in range(3):
                total = total + np.sum(r * r) * (i + 1.0)
            out = total / 6.0
            return out, (x, z, r)


        def weighted_loss_bwd(saved, ct_out):
            x, z, r = saved
            ct_total = ct_out / 6.0
            ct_r = np.zeros_like(r)
            for i in reversed(range(3)):
                ct_r = ct_r + 2 * ct_total * (i + 1.0) * r
            ct_w = x.T @ (ct_r * (1 - z ** 2))
            return ct_w
        """)
    generic = ta.derive(control_flow.weighted_loss, "reverse", wrt="w").source
    assert "_tape" not in generic and "unbroadcast(ct_r_sq" not in generic
    # sum's cotangent is a number spread over r * r's shape; times r, the spreading is implied
    assert "r_sq" not in generic and "sum_vjp" not in generic and "2 * ct_total * (i + 1.0) * r" in generic


def test_comments_cite_the_line_each_statement_comes_from():
    from .corpus import control_flow
    case = next(c for c in control_flow.CASES if c.fn is control_flow.weighted_loss)
    lines = ta.derive(control_flow.weighted_loss, "reverse", wrt="w", args=case.args).source.splitlines()
    import inspect
    first = inspect.getsourcelines(control_flow.weighted_loss)[1]
    cited = {line.split("  # line ")[0].strip(): int(line.split("  # line ")[1])
             for line in lines if "  # line " in line}
    assert cited["ct_total = ct_out / 6.0"] == first + 6          # from `return total / 6.0`
    # recomputes line 6's i + 1.0 where it is read
    assert cited["ct_r = ct_r + 2 * ct_total * (i + 1.0) * r"] == first + 5
    assert cited["ct_r = np.zeros_like(r)"] == first + 4           # r's cotangent, summed by the loop
