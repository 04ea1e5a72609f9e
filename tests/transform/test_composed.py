"""Composed functions (tangent_ast/transform/composed.py): a reverse rule's two sweeps written out as
one gradient function, a forward rule's tangent alone. Each composed text is run against
the rules it was made of; what is not dead stays; what cannot be written out is None."""

import numpy as np
import pytest

import tangent_ast as ta
from tangent_ast import runtime
from tangent_ast.transform.composed import gradient_text, tangent_text

OBJECTS = {"np": np, "runtime": runtime}

# the reverse sweep binds v again, and a name the forward sweep reads as a global (runtime)
SWEEPS_SHARING_NAMES = """import numpy as np
from tangent_ast import runtime


def f_fwd(x, w):
    v = x * w  # line 2
    out = np.sum(np.sin(v))
    return out, (x, w, v)


def f_bwd(saved, ct_out):
    x, w, v = saved
    ct_v = ct_out * np.cos(v)  # line 2
    v = runtime.zeros_like(x)
    v[0] = 1.0
    return ct_v * w + v
"""

LOOPS_REUSING_A_NAME = """import numpy as np


def f_fwd(x):
    tape = []
    for i in range(3):
        tape.append(x)
        x = np.sin(x)
    return x, (tape,)


def f_bwd(saved, ct_out):
    tape, = saved
    for i in reversed(range(3)):
        x = tape[i]
        ct_out = ct_out * np.cos(x)
    return ct_out
"""


def _module(text):
    namespace = {}
    exec(compile(text, "<generated>", "exec"), namespace)
    return namespace


@pytest.mark.parametrize("text", [SWEEPS_SHARING_NAMES, LOOPS_REUSING_A_NAME])
def test_the_gradient_written_out_computes_what_the_sweeps_compute(text):
    composed = gradient_text(text, "f", "f_gradient", OBJECTS)
    rule, gradient = _module(text), _module(composed)
    params = rule["f_fwd"].__code__.co_varnames[: rule["f_fwd"].__code__.co_argcount]
    args = [np.array([0.3, -0.7, 1.1]) * (k + 1) for k in range(len(params))]
    expected = rule["f_bwd"](rule["f_fwd"](*[a.copy() for a in args])[1], 1.0)
    np.testing.assert_allclose(gradient["f_gradient"](*args), expected)
    # the starting cotangent is written in where it is read, unless the sweep binds it again
    assert ("ct_out = 1.0" in composed) == ("    ct_out = ct_out" in text)
    assert "out = np.sum" not in composed  # the value: dead in the gradient


def test_each_sweep_keeps_its_own_names():
    composed = gradient_text(SWEEPS_SHARING_NAMES, "f", "f_gradient", OBJECTS)
    # v is bound again after the unpacking: the reverse sweep's names are its own
    assert "    saved = (x, w, v)\n    x_1, w_1, v_1 = saved\n" in composed
    assert "    v_1 = runtime.zeros_like(x_1)\n    v_1[0] = 1.0\n" in composed


def test_residuals_unpacked_as_saved_are_not_packed_again():
    text = SWEEPS_SHARING_NAMES.replace("    v = runtime.zeros_like(x)\n    v[0] = 1.0\n", "")
    text = text.replace("ct_v * w + v", "ct_v * w")
    composed = gradient_text(text, "f", "f_gradient", OBJECTS)
    assert "saved" not in composed
    assert composed.endswith(
        "def f_gradient(x, w):\n    v = x * w  # line 2\n"
        "    ct_v = 1.0 * np.cos(v)  # line 2\n    return ct_v * w\n"
    )


FORWARD_RULE = """import numpy as np


def f_jvp(x, dx):
    y = dx
    y[0] = 2.0
    noise = np.random.normal()
    made = np.zeros_like(x)
    made[0] = 1.0
    out = np.sum(x * made)
    dmade = np.zeros_like(x)
    dmade[1] = 3.0  # line 4
    dout = np.sum(dx * dmade)
    return out, dout
"""


def test_the_tangent_alone_keeps_what_is_not_dead():
    composed = tangent_text(FORWARD_RULE, "f_jvp", "f_hvp", OBJECTS)
    # a store into an argument's array and a draw are effects; the value's code is dead
    assert "y[0] = 2.0" in composed and "noise = np.random.normal()" in composed
    assert "made[0]" not in composed and "out = np.sum(x" not in composed
    assert "dmade[1] = 3.0  # line 4" in composed and composed.endswith("return dout\n")
    x, dx = np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.25, 0.125])
    np.testing.assert_allclose(_module(composed)["f_hvp"](x, dx.copy()), 0.75)


def test_a_global_no_import_binds_is_not_written_out():
    text = SWEEPS_SHARING_NAMES.replace("np.sum(np.sin(v))", "np.sum(np.sin(v)) * SCALE")
    text = text.replace("ct_out * np.cos(v)", "ct_out * SCALE * np.cos(v)")
    assert gradient_text(text, "f", "f_gradient", OBJECTS | {"SCALE": 2.0}) is None


def test_a_forward_sweep_that_returns_early_is_not_written_out():
    text = LOOPS_REUSING_A_NAME.replace(
        "        x = np.sin(x)\n",
        "        x = np.sin(x)\n        if x > 3:\n            return x, (tape,)\n",
    )
    assert gradient_text(text, "f", "f_gradient", OBJECTS) is None


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def test_hvp_is_one_module_computing_the_tangent_alone():
    x, v = np.array([0.5, -1.2, 2.0, 0.3]), np.array([1.0, 0.5, -0.25, 2.0])
    product = ta.hvp(rosenbrock)
    source = ta.show(product, args=(x, v))
    assert "def rosenbrock_hvp(x, dx):" in source and "from ." not in source
    assert "ct_x" not in source.replace("dct_x", "")  # the gradient itself is not computed
    from scipy.optimize import rosen_hess_prod

    np.testing.assert_allclose(product(x, v), rosen_hess_prod(x, v))


def test_updates_of_what_may_be_shared_are_kept():
    text = FORWARD_RULE.replace(
        "    dout = np.sum(dx * dmade)\n",
        "    t = dx\n    t += 1.0\n    holder = runtime\n    holder.seen = t\n"
        "    made2 = np.zeros_like(x)\n    made2[0] += 1.0\n    dout = np.sum(dx * dmade)\n",
    )
    text = text.replace(
        "import numpy as np\n", "import numpy as np\nfrom tangent_ast import runtime\n"
    )
    composed = tangent_text(text, "f_jvp", "f_hvp", OBJECTS)
    assert "t += 1.0" in composed and "holder.seen = t" in composed  # dx, a module: shared
    assert "made2" not in composed  # made here, read by nothing kept


ADDS_INTO_SLOTS = """import numpy as np


def f_jvp(x, dx):
    t = np.zeros_like(x)
    kept = t[1:].copy()  # line 3
    t[1:] = kept + dx[1:]
    slot = t[:-1].copy()  # line 4
    t[:-1] = slot + dx[:-1] * 2.0
    return x, t[1:] + kept
"""


def test_a_slot_copied_then_added_into_is_added_into_in_place():
    composed = tangent_text(ADDS_INTO_SLOTS, "f_jvp", "f_hvp", OBJECTS)
    assert "    t[:-1] += dx[:-1] * 2.0  # line 4\n" in composed and "slot" not in composed
    assert "kept = t[1:].copy()" in composed  # read again after: the copy is needed
    x, dx = np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.25, 0.125])
    expected = _module(ADDS_INTO_SLOTS)["f_jvp"](x, dx)[1]
    np.testing.assert_allclose(_module(composed)["f_hvp"](x, dx), expected)
