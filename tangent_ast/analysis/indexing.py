"""What ``a[index]`` gives, by NumPy's rules: an element, a view of ``a``, or a copy.

Whether a name made by indexing shares memory with the array it was read from decides
what an update through it does: ``v = a[1:]; v += 1.0`` changes ``a``, while
``s = a[2]; s += 1.0`` on a vector rebinds ``s`` to a new scalar and leaves ``a`` alone.
NumPy's rules (the indexing guide's "basic" and "advanced" indexing):

* an integer for every axis (and no slice, ``...`` or ``None``) gives a scalar, a new
  value (``a[2]`` of a vector, ``a[1, 0]`` of a matrix);
* basic indexing otherwise (integers, slices, ``...``, ``None``) gives a view
  (``a[1]`` of a matrix, ``a[1:]``, ``a[..., 0]``, ``a[1, None]``, ``a[()]``);
* any advanced index (a list, an array, a boolean) gives a copy (``a[[0, 2]]``,
  ``a[mask]``, ``a[1, [0]]``).

Which of these an index is follows from the kinds: the array's ``ndim`` and what each
part of the index is. Where a kind is not known, the answer is :attr:`Indexing.UNKNOWN`
and callers treat the result as a possible view (refusing what they cannot follow),
never as a new value.

>>> import gast
>>> def index(text):
...     return gast.parse(f"a[{text}]").body[0].value.slice
>>> kinds = {"i": Kind(Tag.INT)}.get
>>> [indexing(index(t), 1, kinds).name for t in ("2", "1:", "..., 0", "[0, 2]", "i")]
['ELEMENT', 'VIEW', 'VIEW', 'COPY', 'ELEMENT']
>>> indexing(index("i"), 2, kinds).name, indexing(index("i"), None, kinds).name
('VIEW', 'UNKNOWN')
"""

from collections.abc import Callable
from enum import Enum

import gast

from ..vocabulary.kinds import Kind, Tag


class Indexing(Enum):
    """What indexing an array gives."""

    ELEMENT = "element"  # a scalar: a new value
    VIEW = "view"  # shares the array's memory
    COPY = "copy"  # advanced indexing: a new array
    UNKNOWN = "unknown"  # not known from the kinds: may be a view


class _Part(Enum):
    INT = "int"
    SLICE = "slice"  # a slice, ``...`` or ``None``: basic, and the result is an array
    ADVANCED = "advanced"
    UNKNOWN = "unknown"


def indexing(index, ndim: int | None, kind_of: Callable[[str], Kind | None]) -> Indexing:
    """What ``a[index]`` gives for an array ``a`` of ``ndim`` axes (None: not known).
    ``index`` is the subscript's slice (a gast node); ``kind_of`` gives the kind of a
    name used in it (None: not known)."""
    parts = [_part(p, kind_of) for p in (index.elts if isinstance(index, gast.Tuple) else [index])]
    if _Part.ADVANCED in parts:
        return Indexing.COPY  # one advanced index makes the whole index advanced
    if _Part.UNKNOWN in parts:
        return Indexing.UNKNOWN
    if _Part.SLICE in parts:
        return Indexing.VIEW
    if ndim is None or len(parts) > ndim:
        return Indexing.UNKNOWN  # (more integers than axes: an IndexError when run)
    return Indexing.ELEMENT if len(parts) == ndim else Indexing.VIEW


def _part(node, kind_of) -> _Part:
    if isinstance(node, gast.Slice):
        return _Part.SLICE
    if isinstance(node, gast.Constant):
        if node.value is None or node.value is Ellipsis:
            return _Part.SLICE
        if type(node.value) is int:
            return _Part.INT
        return _Part.ADVANCED if type(node.value) is bool else _Part.UNKNOWN
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        inner = _part(node.operand, kind_of)
        return inner if inner is _Part.INT else _Part.UNKNOWN
    if isinstance(node, (gast.List, gast.ListComp)):
        return _Part.ADVANCED
    if isinstance(node, gast.Name):
        kind = kind_of(node.id)
        if kind is None:
            return _Part.UNKNOWN
        if kind.tag is Tag.INT:
            return _Part.INT
        if kind.tag in (Tag.BOOL, Tag.ARRAY, Tag.LIST):
            return _Part.ADVANCED
    return _Part.UNKNOWN
