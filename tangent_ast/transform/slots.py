"""The slot ``a[index]`` of an update ``a[index] = v`` in the reverse sweep: its old value,
saved before the update, and the cotangent that reaches ``v``.

The cotangent of ``v`` is the slot's, ``ct_a[index]``: summed where ``v`` is a number
spread over the slot, unbroadcast where ``v`` broadcasts to it. Where the index may name
one place twice (``a[[0, 0, 2]] = v``: an advanced index, or one whose kinds are not known),
NumPy keeps only one of those writes, so ``runtime.written_slots`` gives the others zero.

>>> import numpy as np, tangent_ast as ta
>>> def f(x):
...     y = np.zeros(3)
...     y[[0, 0, 2]] = x * x
...     return np.sum(y)
>>> ta.grad(f)(np.array([1.0, 2.0, 3.0]))
array([0., 4., 6.])
"""

import gast
import numpy as np

from ..analysis.indexing import Indexing, indexing
from ..analysis.kind_inference import KindInference
from ..vocabulary.kinds import Tag
from ..vocabulary.syntax import name
from ..vocabulary.trees import copy_tree


def slot_copy(d, array, target):
    """``array[index]`` of derivation ``d``, copied if it is a view (``a[i]`` of a vector is
    a number; ``a[...]`` is ``a.copy()``)."""
    index = target.slice
    if isinstance(index, gast.Constant) and index.value is Ellipsis:
        slot = name(array)
    else:
        slot = gast.Subscript(value=name(array), slice=copy_tree(index), ctx=gast.Load())
        if slot_kind(d, target).tag is Tag.FLOAT:
            return slot
    return gast.Call(
        func=gast.Attribute(value=slot, attr="copy", ctx=gast.Load()), args=[], keywords=[]
    )


def slot_cotangent(d, ct, target, value):
    """The cotangent of ``value`` written by ``target = value`` (``a[index] = v``), from the
    cotangent ``ct`` of ``a``."""
    value_kind, kind = d.kind(value), slot_kind(d, target)
    spread = value_kind.tag is Tag.FLOAT and kind.tag is not Tag.FLOAT
    if may_name_twice(d, target):
        slot = d.call_runtime("written_slots", [name(ct), index_value(d, target)])
    else:
        slot = slot_copy(d, ct, target)
        if spread and isinstance(slot, gast.Call):
            slot = slot.func.value  # summed at once: no copy needed
    if spread:  # a number spread over the slot
        np_sum = gast.Attribute(value=name(d.bind("np", np)), attr="sum", ctx=gast.Load())
        return gast.Call(func=np_sum, args=[slot], keywords=[])
    same_rank = value_kind.tag == kind.tag is Tag.ARRAY and value_kind.ndim == kind.ndim
    if not same_rank and kind.tag is not Tag.FLOAT:
        return d.call_runtime("unbroadcast", [slot, name(value.id)])
    return slot


def index_value(d, target):
    """The index of ``a[index]`` as a value to pass: ``np.s_[:, i]`` where it has a slice."""
    index = copy_tree(target.slice)
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    if not any(isinstance(p, gast.Slice) for p in parts):
        return index
    np_s = gast.Attribute(value=name(d.bind("np", np)), attr="s_", ctx=gast.Load())
    return gast.Subscript(value=np_s, slice=index, ctx=gast.Load())


def may_name_twice(d, target):
    """Whether ``a[index]`` may name one place twice: an advanced index (``a[[0, 0]]``), or
    one whose kinds are not known."""
    kind = d.kind(target.value)
    if kind.tag not in (Tag.ARRAY, Tag.UNKNOWN):  # (a value of unknown kind may be an array)
        return False
    return indexing(target.slice, kind.ndim, d.kinds.get) in (Indexing.COPY, Indexing.UNKNOWN)


def slot_kind(d, target):
    return KindInference(d.scope, d.kinds).getitem(d.kind(target.value), target.slice)
