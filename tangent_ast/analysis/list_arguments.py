"""A list (or tuple) of differentiable values given to a NumPy function: an array first.

NumPy turns a list argument into an array (``np.sum([1.0, a * a, 2.0])`` sums the array of
those values), and the rules of NumPy's functions take arrays. Runs on the SSA function
with kinds known; guarantees that each such argument of a call of a NumPy function whose
rules do not take sequences themselves is written ``b_array = np.asarray(b)`` before the
call, which reads ``b_array``: ``np.asarray`` of a list has rules (each item's cotangent
is its entry of the array's). Lists of integers (a shape, axes) are left as they are.

>>> import numpy as np, tangent_ast as ta
>>> def f(a):
...     b = [1.0, a * a, 2.0]
...     return np.sum(np.sin(b))
>>> print(ta.show(f, mode="forward", stage="simplify", args=(0.5,)))
def f_jvp(a, da):
    b = [1.0, a * a, 2.0]
    db = [0.0, 2.0 * da * a, 0.0]
    b_array = np.asarray(b)
    out = np.sum(np.sin(b_array))
    dout = np.sum(np.asarray(db) * np.cos(b_array))
    return (out, dout)
<BLANKLINE>
"""

import gast
import numpy as np

from ..rules.registry import lookup
from ..vocabulary.code_keys import is_library
from ..vocabulary.kinds import Tag
from ..vocabulary.syntax import assign, expand_statements, name


def arrays_from_lists(fn, scope, kinds, namer):
    """Write each list argument of differentiable values of a NumPy function as an array
    (see the module docstring). Returns the names made (the caller infers kinds again)."""
    made = []
    fn.body = expand_statements(fn.body, lambda s: _converted(s, scope, kinds, namer, made))
    return made


def _converted(s, scope, kinds, namer, made):
    """``s``, after the assignments of the arrays its call's list arguments become."""
    call = s.value if isinstance(s, (gast.Assign, gast.Expr)) else None
    if not isinstance(call, gast.Call) or not _takes_arrays(scope.lookup(call.func)):
        return [s]
    before = []
    places = [(call.args, i) for i in range(len(call.args))]
    places += [(call.keywords, i) for i in range(len(call.keywords))]
    for holder, i in places:
        arg = holder[i].value if holder is call.keywords else holder[i]
        if not (isinstance(arg, gast.Name) and _differentiable_sequence(kinds.get(arg.id))):
            continue
        array = namer.fresh(f"{arg.id}_array")
        asarray = gast.Attribute(
            value=name(scope.bind(np, namer, "np")), attr="asarray", ctx=gast.Load()
        )
        before.append(assign(array, gast.Call(func=asarray, args=[name(arg.id)], keywords=[]), s))
        made.append(array)
        if holder is call.keywords:
            holder[i].value = name(array)
        else:
            holder[i] = name(array)
    return [*before, s]


def _takes_arrays(fn):
    """A NumPy function with rules that take arrays (not lists: ``np.concatenate``'s do)."""
    entry = lookup(fn)
    module = getattr(fn, "__module__", None) or ("numpy" if isinstance(fn, np.ufunc) else "")
    return (
        entry is not None
        and not entry.sequences
        and not entry.nondiff
        and module.partition(".")[0] == "numpy"
        and is_library(module)
    )


def _differentiable_sequence(kind):
    """A list or tuple with a float (or complex) item somewhere."""
    if kind is None or kind.tag not in (Tag.LIST, Tag.TUPLE):
        return False
    items = list(kind.elements or ()) + ([kind.item] if kind.item is not None else [])
    return any(
        item.tag in (Tag.FLOAT, Tag.COMPLEX, Tag.ARRAY, Tag.UNKNOWN)
        or (item.tag in (Tag.LIST, Tag.TUPLE) and _differentiable_sequence(item))
        for item in items
    )
