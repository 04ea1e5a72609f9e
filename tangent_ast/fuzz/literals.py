"""Expressions with negative number literals, wherever people write them.

A negative literal is one number in the tree tangent_ast derives and two tokens in the
text it prints (a minus and a number): where an operator binds tighter than the minus
(``(-2.0) ** 2``, ``(-2.0).real``), the printed text once read as another expression, and
the derivative was wrong with no error (``x * (-2.0) ** 2``; ``np.arctan2(-0.995, a)``,
whose rule squares the constant). The rules' formulas and folding make more of them
(``-1.5 * -1.5``). Here they are the base and the exponent of ``**``, the operands of
arithmetic, an attribute's value, and the arguments of NumPy and ``math`` functions in
each position, positional and by keyword.

    >>> import random
    >>> from tangent_ast.fuzz.lengths import VEC
    >>> w = type("W", (), {"rng": random.Random(3), "helpers": set()})()
    >>> for _ in range(4):
    ...     print(expression(w, VEC, "v1", "v2", None))
    np.power(-1.5, 2) * v1
    np.minimum(-3.0, v2)
    np.minimum(-2.0, v2)
    (-0.25) ** 3 * v1 + v2
"""

from __future__ import annotations

from .lengths import MAT, SCALAR, VEC

_FLOATS = ("-0.5", "-1.5", "-2.0", "-0.995", "-0.25", "-3.0", "-1e-3")
_INTS = ("-1", "-2", "-3")


def negative(rng, integer=False):
    """A negative number literal, as written in source (``-1.5``, ``-2``)."""
    return rng.choice(_INTS if integer else _FLOATS)


def expression(w, shape, a, b, s):
    """An expression of ``shape`` from ``a`` and ``b`` (of that shape) and the scalar ``s``
    (or None), holding negative literals: half the time where an operator binds tighter
    than their minus, in the source or in the formula of a rule."""
    rng = w.rng
    c, d, k = negative(rng), negative(rng), negative(rng, integer=True)
    power = rng.choice([2, 3])
    if rng.random() < 0.5:
        chosen = rng.choice(_tight(shape, a, b, s, c, k, power))
    else:
        chosen = rng.choice(_loose(shape, a, b, s, c, d, k, power))
    if chosen.startswith("scaled("):
        w.helpers.add("scaled")
    return chosen


def _tight(shape, a, b, s, c, k, power):
    """Negative literals as the base of ``**``, the value of an attribute, or an argument
    a rule squares (arctan2's derivative divides by ``x ** 2 + y ** 2``)."""
    choices = [
        f"{a} * ({c}) ** 2",
        f"({k}) ** {power} * {a}",
        f"({c}) ** {power} * {a} + {b}",
        f"{a} * ({c}).real",
        f"{a} * ({k}).real + {b}",
        f"np.arctan2({c}, {a})",
        f"np.arctan2({a} * {a} + 0.5, {c})",
        f"np.power({c}, {power}) * {a}",
        f"np.power({k}.0, 2) * {a}",
    ]
    if s is not None:
        choices += [f"{a} * ({c}) ** 2 * {s}", f"np.arctan2({c}, {s}) * {a}"]
    if shape == SCALAR:
        choices += [f"math.atan2({c}, {a})", f"math.atan2({a} * {a} + 0.5, {c})"]
    return choices


def _loose(shape, a, b, s, c, d, k, power):
    """Negative literals as operands of arithmetic, exponents, and arguments of NumPy and
    ``math`` functions in each position, positional and by keyword."""
    low, high = sorted((float(c), -float(d)))  # a negative bound and a positive one
    choices = [
        f"{a} * {c} + {b}",
        f"{c} * {a} - {b}",
        f"{a} - {c} * {b}",
        f"{a} / {c}",
        f"{c} / ({a} * {a} + 1.0)",
        f"{a} * {c} * {d}",
        f"-{a} * {c}",
        f"{a} * -{c[1:]} ** 2",  # -(c ** 2), as Python reads it
        f"({a} * {a} + 0.5) ** {k}",
        f"({a} * {a} + 0.5) ** {c}",
        f"({a} * {a} + 0.5) ** ({c})",
        f"2.0 ** ({c} * {a})",
        f"np.hypot({c}, {a})",
        f"np.hypot({a}, {c})",
        f"np.maximum({a}, {c})",
        f"np.minimum({c}, {b})",
        f"np.fmax({c}, {a})",
        f"np.clip({a}, {low}, {high})",
        f"np.clip({a}, a_min={low}, a_max={high})",
        f"np.power({a} * {a} + 1.0, {c})",
        f"np.exp({c} * {a} * {a})",
        f"np.logaddexp({a}, {c})",
        f"np.where({a} > {c}, {a}, {b} * {c})",
        f"np.copysign({a}, {c}) + {b}",
        f"scaled({a}, scale={c})",  # a helper's keyword argument
    ]
    if s is not None:
        choices.append(f"{a} * {c} * {s}")
    if shape == SCALAR:
        choices += [
            f"math.pow({a} * {a} + 1.0, {c})",
            f"math.hypot({c}, {a})",
            f"max({a}, {c})",
            f"min({c}, {a})",
            f"math.exp({c} * {a})",
            f"math.copysign({a}, {c})",
            f"abs({c}) * {a}",
        ]
    if shape == VEC:
        choices += [f"np.roll({a}, {k})", f"{a} * {a}[-1]", f"np.cumsum({a})[::-1] * {c}"]
    if shape == MAT:
        choices += [
            f"np.sum({a}, axis=-1, keepdims=True) * {b}",
            f"np.swapaxes({a}, -1, -2) * {c}",
            f"np.tril({a}, k=-1) + {b}",
            f"np.triu({a}, {k}) * {c}",
        ]
    return choices
