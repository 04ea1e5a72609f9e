"""Rules for Python's operators (``+ - * / ** @``, unary ``-``, comparisons).

The transformer maps syntax to these functions: ``x * y`` is
``operator.mul(x, y)``, ``-x`` is ``operator.neg(x)``, ``x[i]`` is
``operator.getitem(x, i)``.
"""

import operator

import numpy as np

from .. import runtime
from ..modes import Mode
from ..vocabulary.kinds import Tag
from .registry import broadcasting, defjvp, defvjp, handles, nondifferentiable, specialize

broadcasting(operator.add, operator.sub, operator.mul, operator.truediv, operator.pow, operator.mod)

defjvp(operator.add, lambda dx, ans, x, y: dx, lambda dy, ans, x, y: dy)
defvjp(operator.add, lambda ct, ans, x, y: ct, lambda ct, ans, x, y: ct)

defjvp(operator.sub, lambda dx, ans, x, y: dx, lambda dy, ans, x, y: -dy)
defvjp(operator.sub, lambda ct, ans, x, y: ct, lambda ct, ans, x, y: -ct)

defjvp(operator.mul, lambda dx, ans, x, y: dx * y, lambda dy, ans, x, y: x * dy)
defvjp(operator.mul, lambda ct, ans, x, y: ct * y, lambda ct, ans, x, y: ct * x)

defjvp(operator.truediv, lambda dx, ans, x, y: dx / y, lambda dy, ans, x, y: -dy * ans / y)
defvjp(operator.truediv, lambda ct, ans, x, y: ct / y, lambda ct, ans, x, y: -ct * ans / y)


def def_power(*fns):
    """Rules of ``x ** y``: ``dx * y * x ** (y - 1)`` (0 at ``0 ** 0``), and in the exponent
    ``dy * x ** y * log(x)`` (``runtime.xlogy``: ``log(|x|)`` for a negative real base, where
    the log's NaN times a constant exponent's zero tangent was NaN)."""
    for fn in fns:
        defjvp(
            fn,
            lambda dx, ans, x, y: dx * runtime.power_derivative(x, y),
            lambda dy, ans, x, y: dy * runtime.xlogy(ans, x),
        )
        defvjp(
            fn,
            lambda ct, ans, x, y: ct * runtime.power_derivative(x, y),
            lambda ct, ans, x, y: ct * runtime.xlogy(ans, x),
        )


def_power(operator.pow)

# x % y == x - floor(x / y) * y
defjvp(operator.mod, lambda dx, ans, x, y: dx, lambda dy, ans, x, y: -dy * np.floor(x / y))
defvjp(operator.mod, lambda ct, ans, x, y: ct, lambda ct, ans, x, y: -ct * np.floor(x / y))

defjvp(operator.neg, lambda dx, ans, x: -dx)
defvjp(operator.neg, lambda ct, ans, x: -ct)
defjvp(operator.pos, lambda dx, ans, x: dx)
defvjp(operator.pos, lambda ct, ans, x: ct)

defjvp(operator.matmul, lambda dx, ans, x, y: dx @ y, lambda dy, ans, x, y: x @ dy)
defvjp(
    operator.matmul,
    lambda ct, ans, x, y: runtime.matmul_vjp_left(ct, x, y),
    lambda ct, ans, x, y: runtime.matmul_vjp_right(ct, x, y),
)
specialize(
    operator.matmul,
    Mode.REVERSE,
    lambda x, y: x.ndim == 2 and y.ndim == 2,
    lambda ct, ans, x, y: ct @ y.T,
    lambda ct, ans, x, y: x.T @ ct,
)
specialize(
    operator.matmul,
    Mode.REVERSE,
    lambda x, y: x.ndim == 2 and y.ndim == 1,
    lambda ct, ans, x, y: np.outer(ct, y),
    lambda ct, ans, x, y: x.T @ ct,
)
specialize(
    operator.matmul,
    Mode.REVERSE,
    lambda x, y: x.ndim == 1 and y.ndim == 2,
    lambda ct, ans, x, y: y @ ct,
    lambda ct, ans, x, y: np.outer(x, ct),
)
specialize(
    operator.matmul,
    Mode.REVERSE,
    lambda x, y: x.ndim == 1 and y.ndim == 1,
    lambda ct, ans, x, y: ct * y,
    lambda ct, ans, x, y: ct * x,
)

defjvp(operator.getitem, lambda dx, ans, x, index: dx[index], None)
defvjp(operator.getitem, lambda ct, ans, x, index: runtime.getitem_vjp(ct, x, index), None)

nondifferentiable(
    operator.lt,
    operator.le,
    operator.gt,
    operator.ge,
    operator.eq,
    operator.ne,
    operator.not_,
    operator.floordiv,
    operator.invert,
    operator.and_,
    operator.or_,
    operator.xor,
    operator.is_,
    operator.is_not,
    operator.contains,
)


# Lists and tuples: + concatenates, * repeats (specialised on the operands' kinds).
def _sequence(kind):
    return kind.tag in (Tag.LIST, Tag.TUPLE)


specialize(
    operator.add,
    Mode.FORWARD,
    lambda x, y: _sequence(x) or _sequence(y),
    lambda dx, ans, x, y: runtime.concat_tangent(dx, x, y, first=True),
    lambda dy, ans, x, y: runtime.concat_tangent(dy, x, y, first=False),
)
specialize(
    operator.add,
    Mode.REVERSE,
    lambda x, y: _sequence(x) or _sequence(y),
    lambda ct, ans, x, y: runtime.TangentTuple(ct[: len(x)]),
    lambda ct, ans, x, y: runtime.TangentTuple(ct[len(x) :]),
)
specialize(
    operator.mul,
    Mode.FORWARD,
    lambda x, y: _sequence(x),
    lambda dx, ans, x, y: runtime.TangentTuple(list(dx) * y),
    None,
)
specialize(
    operator.mul,
    Mode.REVERSE,
    lambda x, y: _sequence(x),
    lambda ct, ans, x, y: runtime.sequence_repeat_vjp(ct, x, y),
    None,
)

# an item of a list or tuple: its tangent may be missing (an integer's, or one of an item
# of unknown kind that is an integer when it runs: ``3 ** 2``), read as a zero
specialize(
    operator.getitem,
    Mode.FORWARD,
    lambda x, index: (
        x.tag in (Tag.LIST, Tag.TUPLE)
        and (
            x.elements is None
            or not all(e.differentiable and e.tag is not Tag.UNKNOWN for e in x.elements)
        )
    ),
    lambda dx, ans, x, index: runtime.item_tangent(dx, index, ans),
    None,
)
# x[i] of tuples, lists, dicts and records; + and * of lists and tuples (the variants above).
handles([operator.getitem, operator.add, operator.mul], sequences=True)
