"""Which numbers may be Python or NumPy integers when the function runs, whatever their kind.

Takes the SSA function and its kinds; gives the names of numbers that may hold an integer
on some run although their kind is a number with a derivative. A kind is a join over paths:
``t = 0`` before a loop whose body does ``t = t + x`` makes ``t`` a float, yet it is the
integer 0 in the first iteration. An integer has no tangent, so in a container's cotangent
its place holds None (``runtime.zero_tangent``); the reverse sweep reads such a place as a
zero (``runtime.item_tangent``) only for these names, and keeps the plain ``ct[i]`` for the
rest.

The answer errs on the side of "may": a number is known not to be an integer only when
every definition of it is a float by construction: a float constant, a true division, a
call of a NumPy or math function of such numbers or of float arrays, an item of a float
array. An argument that is a number may be an integer (a callee's rule is derived for the
kinds its caller knows, and a caller's float may be the int of a first iteration).

>>> import gast
>>> from tangent_ast.vocabulary.kinds import FLOAT, INT
>>> fn = gast.parse('''
... def f(x):
...     t = 0
...     for i in range(3):
...         u = t * 2
...         t = u + x
...     return t / 2.0
... ''').body[0]
>>> sorted(may_be_integers(fn, {"x": FLOAT, "t": FLOAT, "u": FLOAT, "i": INT}))
['i', 't', 'u', 'x']
"""

import gast

from ..vocabulary.kinds import Tag
from ..vocabulary.trees import walk

# modules whose functions of floats give floats (np.sum of a list of ints is an int: the
# arguments are asked too)
_FLOAT_MODULES = ("np", "numpy", "math", "cmath")
# functions of those that give a float for integers too
# fmt: off
_FLOAT_RESULTS = frozenset([
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh",
    "arcsinh", "arccosh", "arctanh", "asin", "acos", "atan", "atan2", "asinh", "acosh",
    "atanh", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "cbrt", "hypot",
    "mean", "average", "std", "var", "divide", "true_divide", "float_power", "deg2rad",
    "rad2deg", "radians", "degrees", "sinc", "erf", "erfc", "gamma", "lgamma",
])
# fmt: on


def may_be_integers(fn, kinds):
    """Names of ``fn`` (SSA) that may hold an integer when it runs."""
    definitions = {}
    for node in walk(fn):
        if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name):
            definitions.setdefault(node.targets[0].id, []).append(node.value)
    integers = {n for n, k in kinds.items() if _number_not_known_real(k)}
    # a number argument: a callee's is what its caller passes, which may be an int where the
    # caller's kind is a float (``t = 0`` before ``t = t + x`` in the caller's loop)
    integers |= {a.id for a in fn.args.args if a.id not in kinds or kinds[a.id].scalar}
    changed = True
    while changed:
        changed = False
        for target, values in definitions.items():
            if (
                target not in integers
                and _a_number(kinds.get(target))
                and any(_may_be_integer(v, kinds, integers, target) for v in values)
            ):
                integers.add(target)
                changed = True
    return integers


def _a_number(kind, known=False):
    """A number, or (unless ``known``) a value of a kind not known (an array is never an
    integer: an integer array's tangent is an array of zeros)."""
    if kind is None or (kind.tag is Tag.UNKNOWN and kind.ndim is None):
        return not known
    return kind.scalar


def _number_not_known_real(kind):
    """An integer, a bool, or a number of a type not known."""
    return kind.scalar and kind.tag not in (Tag.FLOAT, Tag.COMPLEX)


def _may_be_integer(value, kinds, integers, target=None):
    if isinstance(value, gast.Constant):
        return isinstance(value.value, int)
    if isinstance(value, gast.Name):
        kind = kinds.get(value.id)
        return value.id in integers or kind is None
    if isinstance(value, gast.BinOp):
        if isinstance(value.op, gast.Div):
            return False
        return all(_may_be_integer(v, kinds, integers) for v in (value.left, value.right))
    if isinstance(value, gast.UnaryOp):
        return _may_be_integer(value.operand, kinds, integers)
    if isinstance(value, gast.IfExp):
        return any(_may_be_integer(v, kinds, integers) for v in (value.body, value.orelse))
    if isinstance(value, gast.Subscript):
        of = value.value
        return not (
            isinstance(of, gast.Name)
            and kinds.get(of.id) is not None
            and kinds[of.id].tag is Tag.ARRAY
            and kinds[of.id].dtype in ("f", "c")
        )
    if isinstance(value, gast.Call) and _in_float_module(value.func):
        if value.func.attr in _FLOAT_RESULTS or not _a_number(kinds.get(target), known=True):
            return False  # a NumPy function of a kind not known makes an array
        return any(_may_be_integer(a, kinds, integers) for a in value.args)
    return True  # a call of another function, an attribute: anything it returns


def _in_float_module(func):
    return (
        isinstance(func, gast.Attribute)
        and isinstance(func.value, gast.Name)
        and func.value.id in _FLOAT_MODULES
    )
