"""Golden sources: what the generated code looks like, exactly."""

import textwrap

import numpy as np

import tangent_ast as ta

from .corpus import calls, straight_line


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
            t = x > 0
            if t:
                y = x * x
            else:
                y = -0.5 * x
            out = y + x
            return out, (x, t)


        def relu_like_bwd(saved, ct_out):
            x, t = saved
            ct_x = ct_out
            if t:
                ct_x = ct_x + ct_out * x + ct_out * x
            else:
                ct_x = ct_x + ct_out * -0.5
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
            t = x > 0
            if t:
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
            ct_x_buffer = np.zeros_like(x)
            for k in reversed(range(len(h_2_tape))):
                h = h_2_tape[k]
                t = k
                ct_t = ct_h * (1 - h ** 2)
                ct_x_buffer[t] += ct_t
                ct_h = ct_t * 0.5
            ct_x = ct_x + ct_x_buffer
            return ct_x
        """)


def test_forward_rule_of_a_loop_reads_like_the_loop():
    from .corpus import control_flow
    source = ta.derive(control_flow.range_loop, "forward", args=(0.7, 5)).source
    assert body(source) == textwrap.dedent("""\
        def range_loop_jvp(x, n, dx):
            s = 0.0
            ds = 0.0
            for i in range(n):
                t = i + 1
                s = s + x ** i / t
                ds = ds + dx * i * x ** (i - 1) / t
            return s, ds
        """)


def test_reverse_rule_of_a_loop_filling_a_preallocated_array():
    """Save the old slot and write; backwards: read the slot's cotangent, zero it, restore."""
    from .corpus import language
    source = ta.derive(language.fill_preallocated, "reverse", args=(language.V,)).source
    assert body(source) == textwrap.dedent("""\
        def fill_preallocated_fwd(x):
            out_old_tape = []
            t_tape = []
            out = np.zeros(len(x))
            for i in range(len(x)):
                t = x[i]
                out_old = out[i]
                out[i] = np.sin(t) * 2.0
                out_old_tape.append(out_old)
                t_tape.append(t)
            t_2 = out * out
            out_1 = np.sum(t_2)
            return out_1, (x, out_old_tape, t_tape, out, t_2)


        def fill_preallocated_bwd(saved, ct_out_1):
            x, out_old_tape, t_tape, out, t_2 = saved
            out = out.copy()
            ct_t_2 = np.full_like(t_2, ct_out_1)
            ct_out = ct_t_2 * out + ct_t_2 * out
            ct_x = np.zeros_like(x)
            ct_x_buffer = np.zeros_like(x)
            for k in reversed(range(len(out_old_tape))):
                out_old = out_old_tape[k]
                t = t_tape[k]
                i = k
                ct_t_1 = ct_out[i]
                ct_out[i] = 0.0
                out[i] = out_old
                ct_t = ct_t_1 * 2.0 * np.cos(t)
                ct_x_buffer[i] += ct_t
            ct_x = ct_x + ct_x_buffer
            return ct_x
        """)


def test_in_place_updates_of_arguments_and_aliases_are_refused():
    import pytest
    from tangent_ast.errors import UnsupportedSyntaxError
    from .corpus import bad
    with pytest.raises(UnsupportedSyntaxError, match="updating the argument 'x' in place"):
        ta.derive(bad.updates_argument)
    with pytest.raises(UnsupportedSyntaxError, match="a second name for 'a'"):
        ta.derive(bad.aliases_updated_array)
    with pytest.raises(UnsupportedSyntaxError, match="updating the list 'xs' in place"):
        ta.derive(bad.updates_list)
