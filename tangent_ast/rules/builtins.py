"""Rules for Python builtins used on numbers, and for updating an item of a list."""

import builtins
import copy

import numpy as np

from .. import runtime
from ..modes import Mode
from ..vocabulary.kinds import FLOAT, UNKNOWN, Kind, Tag
from .binding import CallRefused
from .operators import def_power
from .registry import (
    broadcasting,
    def_jointly_linear,
    def_linear,
    defjvp,
    defvjp,
    effectful,
    handles,
    holds_for_complex,
    nondifferentiable,
    primitive,
    pure,
    specialize,
)

defjvp(builtins.abs, lambda dx, ans, x: dx * np.sign(x))
defvjp(builtins.abs, lambda ct, ans, x: ct * np.sign(x))
broadcasting(builtins.abs)

def_power(builtins.pow)

defjvp(builtins.float, lambda dx, ans, x: dx)
defvjp(builtins.float, lambda ct, ans, x: ct)

# complex(re, im) = re + 1j * im: holomorphic in each part (the real part of a cotangent
# is taken where it reaches a real value)
defjvp(builtins.complex, lambda dx, ans, real, imag=0.0: dx, lambda dy, ans, real, imag: 1j * dy)
defvjp(builtins.complex, lambda ct, ans, real, imag=0.0: ct, lambda ct, ans, real, imag: 1j * ct)
holds_for_complex(builtins.complex)

# max(x, y) returns x unless y > x; min(x, y) returns x unless y < x.
defjvp(
    builtins.max,
    lambda dx, ans, x, y: dx if x >= y else 0.0,
    lambda dy, ans, x, y: dy if y > x else 0.0,
)
defvjp(
    builtins.max,
    lambda ct, ans, x, y: ct if x >= y else 0.0,
    lambda ct, ans, x, y: ct if y > x else 0.0,
)
defjvp(
    builtins.min,
    lambda dx, ans, x, y: dx if x <= y else 0.0,
    lambda dy, ans, x, y: dy if y < x else 0.0,
)
defvjp(
    builtins.min,
    lambda ct, ans, x, y: ct if x <= y else 0.0,
    lambda ct, ans, x, y: ct if y < x else 0.0,
)


def _one_of_kind(x, y):
    """``max(x, y)`` is ``x`` or ``y``: of their kind where they have the same one, a number
    (never an array: an update ``m += v`` of it is not in place) where both are numbers."""
    if x == y:
        return x
    return Kind(Tag.UNKNOWN, ndim=0) if x.scalar and y.scalar else UNKNOWN


primitive(builtins.max).kind = _one_of_kind
primitive(builtins.min).kind = _one_of_kind

# x.field on a dataclass, namedtuple or object: the tangent is the same kind of object.
defjvp(builtins.getattr, lambda dx, ans, x, name: getattr(dx, name), None)
defvjp(builtins.getattr, lambda ct, ans, x, name: runtime.getattr_vjp(ct, x, name), None)
holds_for_complex(builtins.getattr)  # a field: linear, complex or not

# sum(xs) of a list or tuple of numbers or arrays
# (a constant start adds no derivative; a differentiable one is refused by the binding)
defjvp(builtins.sum, lambda dx, ans, x, start=0: sum(dx))
defvjp(builtins.sum, lambda ct, ans, x, start=0: runtime.TangentTuple([ct] * len(x)))
# sum(a) of an array adds its rows: each row's cotangent is ct, an array of a's shape; of a
# value of a kind not known, the items' cotangents are an array where it is one (list_vjp)
specialize(
    builtins.sum,
    Mode.REVERSE,
    lambda x, start=None: x.tag is Tag.ARRAY,
    lambda ct, ans, x, start=0: runtime.broadcast_like(ct, x),
)
specialize(
    builtins.sum,
    Mode.REVERSE,
    lambda x, start=None: x.tag is Tag.UNKNOWN,
    lambda ct, ans, x, start=0: runtime.list_vjp(runtime.TangentTuple([ct] * len(x)), x),
)

# copy.copy(v): a copy of an array, a number as it is (what forward rules write where a
# tangent may be an array another tangent shares); linear, its own transpose
def_linear(copy.copy)
defvjp(copy.copy, lambda ct, ans, x: ct)
holds_for_complex(copy.copy)

# xs[i] = v on a local list is xs = list_with(xs, i, v): item i of the cotangent goes to v,
# and the item v replaced gets a zero of its own shape (v's may differ: xs[0] = xs[0][None])
def_jointly_linear(runtime.list_with, 0, 2)
defvjp(
    runtime.list_with,
    lambda ct, ans, xs, i, v: runtime.list_with(ct, i, runtime.zero_tangent(xs[i])),
    None,
    lambda ct, ans, xs, i, v: ct[i],
)

# d[key] = v on a local dict is d = dict_with(d, key, v): the cotangent's entry at key goes
# to v, and d gets a zero there (or none, where it had no such key)
def_jointly_linear(runtime.dict_with, 0, 2)
defvjp(
    runtime.dict_with,
    lambda ct, ans, d, key, v: runtime.dict_with_vjp(ct, d, key),
    None,
    lambda ct, ans, d, key, v: ct[key],
)

# xs.insert(i, v) on a local list is xs = list_inserted(xs, i, v); v = xs.pop(i) is
# v = xs[i]; xs = without(xs, i) (and d.pop(k) on a dict the same).
def_jointly_linear(runtime.list_inserted, 0, 2)
defvjp(
    runtime.list_inserted,
    lambda ct, ans, xs, i, v: runtime.without(ct, runtime.inserted_at(xs, i)),
    None,
    lambda ct, ans, xs, i, v: ct[runtime.inserted_at(xs, i)],
)
def_linear(runtime.without)
pure(runtime.inserted_at)
handles([runtime.list_inserted, runtime.without, runtime.dict_with], sequences=True)
defvjp(runtime.without, lambda ct, ans, xs, key=-1: runtime.without_vjp(ct, xs, key), None)


# A set keeps no order and merges equal values: its items have no derivative to follow.
def _set_of_differentiable_values(args, argnum, resolve):
    raise CallRefused(
        "a set of differentiable values (a set keeps no order and merges equal items, so "
        "their derivatives cannot be followed)",
        "keep them in a list, or make the set of indices or keys rather than values",
    )


defjvp(builtins.set, None)
defvjp(builtins.set, None)
handles(builtins.set, validate=_set_of_differentiable_values, sequences=True)

# d.get(key, default): the item, or the default where the key is missing
defjvp(
    dict.get,
    lambda dd, ans, d, key, default=None: dd[key] if key in d else runtime.zero_tangent(ans),
    None,
    lambda dv, ans, d, key, default=None: runtime.zero_tangent(ans) if key in d else dv,
)
defvjp(
    dict.get,
    lambda ct, ans, d, key, default=None: (
        runtime.getitem_vjp(ct, d, key) if key in d else runtime.zero_tangent(d)
    ),
    None,
    lambda ct, ans, d, key, default=None: runtime.zero_tangent(default) if key in d else ct,
)
handles(dict.get, sequences=True)
# list(x), tuple(x): a copy of a list or tuple (a list argument the function changes is copied
# first), or the rows of an array.
for _copy in (builtins.list, builtins.tuple):
    defjvp(_copy, lambda dx, ans, x: runtime.TangentTuple(dx))
    defvjp(_copy, lambda ct, ans, x: runtime.list_vjp(ct, x))
    specialize(_copy, Mode.REVERSE, lambda x: x.tag in (Tag.LIST, Tag.TUPLE), lambda ct, ans, x: ct)
holds_for_complex(builtins.list, builtins.tuple)  # copies: linear, complex or not

# dict(d): a copy of a dict (a dict argument the function updates by key is copied first,
# so that what the reverse sweep reads of it is the dict as given); another form of dict(...)
# (pairs, keywords) has no rule
specialize(builtins.dict, Mode.FORWARD, lambda x: x.tag is Tag.DICT, lambda dx, ans, x: dict(dx))
specialize(builtins.dict, Mode.REVERSE, lambda x: x.tag is Tag.DICT, lambda ct, ans, x: dict(ct))
handles(builtins.dict, sequences=True)

# divmod(x, y) = (x // y, x % y): the quotient is locally constant
defjvp(
    builtins.divmod,
    lambda dx, ans, x, y: runtime.divmod_jvp(dx, ans, x, y),
    lambda dy, ans, x, y: runtime.divmod_jvp(dy, ans, x, y, of_y=True),
)
defvjp(
    builtins.divmod,
    lambda ct, ans, x, y: runtime.divmod_vjp(ct, ans, x, y),
    lambda ct, ans, x, y: runtime.divmod_vjp(ct, ans, x, y, of_y=True),
)
primitive(builtins.divmod).kind = lambda x, y: (
    Kind(Tag.TUPLE, elements=(FLOAT, FLOAT)) if x.scalar and y.scalar else UNKNOWN
)

nondifferentiable(
    builtins.len,
    builtins.int,
    builtins.round,
    builtins.bool,
    builtins.isinstance,
    builtins.range,
    builtins.print,
    builtins.str,
)

# Containers: getattr of records, sum and list of lists/tuples, list_with of lists.
handles(
    [builtins.getattr, builtins.sum, builtins.list, builtins.tuple, runtime.list_with],
    sequences=True,
)
handles(builtins.sum, "start")
effectful(builtins.print)
# a with block entered and left (lowering/contexts.py): effects, no derivative
nondifferentiable(runtime.enter_context, runtime.exit_context)
effectful(runtime.enter_context, runtime.exit_context)

# the order sorted(xs, key=f), min(xs, key=f) and max(xs, key=f) are lowered to: positions
nondifferentiable(runtime.sorted_order)
