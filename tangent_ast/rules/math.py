"""Rules for the standard library's ``math`` module (Python scalars)."""

import math

from .. import runtime
from ..modes import Mode
from ..vocabulary.kinds import FLOAT
from .operators import def_power
from .registry import (
    ZERO,
    all_primitives,
    defjvp,
    defvjp,
    elementwise,
    nondifferentiable,
    specialize,
)


def _unary(table):
    for fn, derivative in table:
        elementwise(fn, derivative, broadcasts=False)


_unary(
    [
        (math.sin, lambda ans, x: math.cos(x)),
        (math.cos, lambda ans, x: -math.sin(x)),
        (math.tan, lambda ans, x: 1 / math.cos(x) ** 2),
        (math.asin, lambda ans, x: runtime.safe_divide(1, math.sqrt(1 - x * x))),
        (math.acos, lambda ans, x: -runtime.safe_divide(1, math.sqrt(1 - x * x))),
        (math.atan, lambda ans, x: 1 / (1 + x * x)),
        (math.sinh, lambda ans, x: math.cosh(x)),
        (math.cosh, lambda ans, x: math.sinh(x)),
        (math.tanh, lambda ans, x: 1 - ans * ans),
        (math.asinh, lambda ans, x: 1 / math.sqrt(x * x + 1)),
        (math.acosh, lambda ans, x: runtime.safe_divide(1, math.sqrt(x * x - 1))),
        (math.atanh, lambda ans, x: 1 / (1 - x * x)),
        (math.exp, lambda ans, x: ans),
        (math.expm1, lambda ans, x: ans + 1),
        (math.log1p, lambda ans, x: 1 / (1 + x)),
        (math.log2, lambda ans, x: 1 / (x * math.log(2))),
        (math.log10, lambda ans, x: 1 / (x * math.log(10))),
        (math.sqrt, lambda ans, x: runtime.safe_divide(1, 2.0 * ans)),
        (math.fabs, lambda ans, x: math.copysign(1.0, x)),
        (math.erf, lambda ans, x: 2 / math.sqrt(math.pi) * math.exp(-x * x)),
        (math.erfc, lambda ans, x: -2 / math.sqrt(math.pi) * math.exp(-x * x)),
        (math.degrees, lambda ans, x: 180 / math.pi),
        (math.radians, lambda ans, x: math.pi / 180),
    ]
)

# math.log(x) or math.log(x, base)
defjvp(
    math.log,
    lambda dx, ans, x, base: dx / (x * math.log(base)),
    lambda dbase, ans, x, base: -dbase * ans / (base * math.log(base)),
)
defvjp(
    math.log,
    lambda ct, ans, x, base: ct / (x * math.log(base)),
    lambda ct, ans, x, base: -ct * ans / (base * math.log(base)),
)
specialize(math.log, Mode.FORWARD, lambda x: True, lambda dx, ans, x: dx / x)
specialize(math.log, Mode.REVERSE, lambda x: True, lambda ct, ans, x: ct / x)

def_power(math.pow)

defjvp(
    math.atan2,
    lambda dy, ans, y, x: runtime.safe_divide(dy * x, x * x + y * y),
    lambda dx, ans, y, x: runtime.safe_divide(-dx * y, x * x + y * y),
)
defvjp(
    math.atan2,
    lambda ct, ans, y, x: runtime.safe_divide(ct * x, x * x + y * y),
    lambda ct, ans, y, x: runtime.safe_divide(-ct * y, x * x + y * y),
)

defjvp(
    math.hypot,
    lambda dx, ans, x, y: runtime.safe_divide(dx * x, ans),
    lambda dy, ans, x, y: runtime.safe_divide(dy * y, ans),
)
defvjp(
    math.hypot,
    lambda ct, ans, x, y: runtime.safe_divide(ct * x, ans),
    lambda ct, ans, x, y: runtime.safe_divide(ct * y, ans),
)

defjvp(math.fmod, lambda dx, ans, x, y: dx, lambda dy, ans, x, y: -dy * math.trunc(x / y))
defvjp(math.fmod, lambda ct, ans, x, y: ct, lambda ct, ans, x, y: -ct * math.trunc(x / y))

defjvp(
    math.copysign, lambda dx, ans, x, y: dx * math.copysign(1.0, x) * math.copysign(1.0, y), ZERO
)
defvjp(
    math.copysign, lambda ct, ans, x, y: ct * math.copysign(1.0, x) * math.copysign(1.0, y), ZERO
)

nondifferentiable(
    math.floor,
    math.ceil,
    math.trunc,
    math.isfinite,
    math.isinf,
    math.isnan,
    math.isclose,
    math.factorial,
    math.gcd,
    math.comb,
    math.perm,
)

# Every differentiable math function returns a float.
for _entry in all_primitives():
    if getattr(_entry.fn, "__module__", None) == "math" and not _entry.nondiff:
        _entry.kind = lambda *args: FLOAT
