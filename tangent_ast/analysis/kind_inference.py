"""Stage kinds: what each value of the SSA function is, from the signature.

Takes the SSA function, its resolved scope and the signature (the kinds of the
arguments); guarantees a kind for every SSA name, ``UNKNOWN`` where it cannot
tell (which is always safe: it only costs helper calls in the derived code).
Calls of primitives take the kind their rule declares; calls of user functions
the kind their own derivation infers (``result_kind``).

>>> import numpy as np
>>> from tangent_ast.vocabulary.kinds import signature_of
>>> from tangent_ast.pipeline import front
>>> def f(x, n):
...     s = np.sum(x * 2.0)
...     k = n + 1
...     return s * k
>>> kinds = front(f, signature_of((np.ones(3), 2))).kinds
>>> {name: str(kind) for name, kind in sorted(kinds.items())}
{'k': 'int', 'n': 'int', 'out': 'float', 's': 'float', 'x': 'array1f', 'x_times_two': 'array1f'}
"""

import functools
import inspect
import itertools
import operator
from dataclasses import replace

import gast
import numpy as np

from ..front.resolve import Pack, callee
from ..front.ssa import is_unset
from ..rules.registry import lookup
from ..runtime import dict_with, list_inserted, list_with, without
from ..vocabulary.calling import CallMismatch, bind
from ..vocabulary.code_keys import is_library
from ..vocabulary.kinds import (
    BOOL,
    FLOAT,
    INT,
    NUMBER,
    UNKNOWN,
    Kind,
    Tag,
    element_kind,
    kind_of,
    lengths_of,
    like_kind,
    matmul_kind,
    scalar_dtype,
    shape_kind,
    transpose_kind,
    type_unknown,
    with_lengths,
)
from ..vocabulary.trees import walk

_ARITHMETIC = {
    operator.add,
    operator.sub,
    operator.mul,
    operator.truediv,
    operator.pow,
    operator.mod,
    operator.floordiv,
    operator.neg,
    operator.pos,
}
_LIKE = {np.zeros_like, np.ones_like, np.empty_like, np.full_like, np.copy, np.ndarray.copy}
# kind functions whose arrays' axis lengths are those of their arguments' (matmul_kind:
# (m, k) @ (k, n) is (m, n)); any other kind function's array gets a shape of its own
_KNOW_LENGTHS = {matmul_kind, transpose_kind}
_COMPARISONS = {operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne}


def _is_user_function(fn):
    return inspect.isfunction(fn) and lookup(fn) is None and not is_library(fn.__module__)


def _list_with_kind(xs, index, item):
    """``list_with(xs, i, v)``: xs with item i's kind that of v (every item's, joined, if i is not
    constant)."""
    if xs.elements is None:
        return xs
    elements = list(xs.elements)
    if (
        isinstance(index, gast.Constant)
        and type(index.value) is int
        and -len(elements) <= index.value < len(elements)
    ):
        elements[index.value] = item
    else:
        elements = [join(e, item) for e in elements]
    return replace(xs, elements=tuple(elements))


def _dict_with_kind(d, key, item):
    """``dict_with(d, k, v)``: d with entry k's kind that of v (an entry added if k is new);
    a dict of entries not known when k is not a constant."""
    if d.fields is None or d.elements is None or not isinstance(key, gast.Constant):
        return Kind(Tag.DICT)
    fields, elements = list(d.fields), list(d.elements)
    if key.value in fields:
        elements[fields.index(key.value)] = item
    else:
        fields.append(key.value)
        elements.append(item)
    return replace(d, fields=tuple(fields), elements=tuple(elements))


def _sequence_kind(fn, kinds, atoms):
    """``xs + ys`` (concatenation) and ``xs * n`` (repetition) of lists and tuples."""
    first = kinds[0]
    if first.tag not in (Tag.LIST, Tag.TUPLE):
        # unknown + [v] (a list grown in a loop), n * xs: a sequence of the other's tag
        second = kinds[1]
        return Kind(second.tag) if second.tag in (Tag.LIST, Tag.TUPLE) else UNKNOWN
    if fn is operator.add:
        second = kinds[1]
        if second.tag == first.tag and first.elements is not None and second.elements is not None:
            return Kind(first.tag, elements=first.elements + second.elements)
        return of_items(first.tag, first, second)
    times = atoms[1]
    if (
        isinstance(times, gast.Constant)
        and isinstance(times.value, int)
        and first.elements is not None
    ):
        return Kind(first.tag, elements=first.elements * times.value)
    return of_items(first.tag, first)


def _trimmed_shape(base_shape, parts):
    """A shape id for ``x[a:-b, ...]`` (slices only) shared by every slice of ``x`` that
    drops as many elements on each axis: ``x[1:]`` and ``x[:-1]`` have one shape.

    On an axis of length ``n``, ``x[a:-b]`` with ``a, b >= 0`` has ``max(0, n - a - b)``
    elements whatever ``n`` is; other slices (``x[2:5]``, ``x[-3:]``, steps) have lengths
    that depend on ``n`` otherwise, and get a shape of their own (None here)."""
    if base_shape is None:
        return None
    dropped = []
    for part in parts:
        if not isinstance(part, gast.Slice):
            return None
        lower, upper, step = (_int_constant(p) for p in (part.lower, part.upper, part.step))
        if (
            lower is False
            or upper is False
            or (part.step is not None and step != 1)
            or (lower or 0) < 0
            or (upper or 0) > 0
            or (part.upper is not None and upper == 0)  # x[:0] is empty
        ):
            return None
        dropped.append((lower or 0) - (upper or 0))
    return ("trimmed", base_shape, tuple(dropped))


def _item_lengths(labels, parts, kind_of_atom):
    """The axis-length labels of ``x[i]``, ``x[i, :]``, ``x[:, j]`` (ints and whole slices) of
    an array whose axes have ``labels``; None for any other index."""
    if labels is None or len(parts) > len(labels):
        return None
    kept = []
    for label, part in zip(labels, parts, strict=False):
        if isinstance(part, gast.Slice):
            if part.lower is not None or part.upper is not None or part.step is not None:
                return None
            kept.append(label)
        elif kind_of_atom(part).tag is not Tag.INT:
            return None
    return (*kept, *labels[len(parts) :])


def _int_constant(node):
    """The value of an int constant, None for no node, False for anything else."""
    if node is None:
        return None
    if isinstance(node, gast.Constant) and type(node.value) is int:
        return node.value
    if (
        isinstance(node, gast.UnaryOp)
        and isinstance(node.op, gast.USub)
        and isinstance(node.operand, gast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    return False


def _keys_kind(tag, d):
    """``list(d)`` of a dict: its keys (constants, so no derivative), in order where known."""
    if d.fields is None:
        return Kind(tag)
    return Kind(tag, elements=tuple(kind_of(key) for key in d.fields))


def _item_kind(base, index):
    if base.tag is Tag.DICT:
        if (
            isinstance(index, gast.Constant)
            and base.fields is not None
            and index.value in base.fields
        ):
            return base.elements[base.fields.index(index.value)]
        if base.elements:  # a key not known: any entry's (a loop over the dict's keys)
            return functools.reduce(join, base.elements)
        return UNKNOWN
    if isinstance(index, gast.Constant) and isinstance(index.value, int):
        try:
            return base.elements[index.value]
        except IndexError:
            return UNKNOWN
    if isinstance(index, gast.Slice) and all(
        p is None or isinstance(p, gast.Constant) for p in (index.lower, index.upper, index.step)
    ):
        bounds = slice(
            *(p.value if p is not None else None for p in (index.lower, index.upper, index.step))
        )
        return Kind(
            Tag.TUPLE if base.tag is Tag.RECORD else base.tag, elements=base.elements[bounds]
        )
    return UNKNOWN


def _comparison_kind(args):
    """``a < b``: a bool of scalars, a bool array of the largest rank among arrays."""
    if all(a.scalar for a in args):
        return BOOL
    if any(a.tag is Tag.ARRAY for a in args):
        return Kind(Tag.ARRAY, max(a.ndim or 0 for a in args if a.tag is Tag.ARRAY), "b")
    return UNKNOWN


def _builtin_kind(fn, args):
    """``len``/``int``/``round``/``float`` and the ``shape``/``ndim``/``size`` attributes."""
    if fn is len or fn is int or fn is round:
        return INT
    if fn is float:
        return FLOAT
    if fn is range:  # its items are ints: r[i] of a loop run backwards is an index
        return Kind(Tag.OBJECT, cls=range)
    if (isinstance(fn, tuple) and fn[1] == "shape") or fn is np.shape:
        return shape_kind(args[0]) if args else Kind(Tag.TUPLE)
    if isinstance(fn, tuple) and fn[1] in ("ndim", "size"):
        return INT
    return UNKNOWN


class KindInference:
    def __init__(self, scope, kinds, result_kind=None):
        self.scope = scope
        self.kinds = kinds
        self.result_kind = result_kind
        self.shape_ids = itertools.count(1)

    def of(self, atom):
        if isinstance(atom, gast.Name):
            if self.scope.is_local(atom.id):
                return self.kinds.get(atom.id, UNKNOWN)
            return kind_of(self.scope.free.get(atom.id))
        if isinstance(atom, gast.Constant):
            return kind_of(atom.value)
        if isinstance(atom, gast.Attribute) and self.scope.is_global_chain(atom):
            return kind_of(self.scope.lookup(atom))
        if isinstance(atom, (gast.Tuple, gast.List)):  # a constant container
            return Kind(
                Tag.TUPLE if isinstance(atom, gast.Tuple) else Tag.LIST,
                elements=tuple(self.of(e) for e in atom.elts),
            )
        return UNKNOWN

    def new_shape(self, kind):
        return (
            replace(kind, shape=next(self.shape_ids))
            if kind.tag in (Tag.ARRAY, Tag.UNKNOWN)
            else kind
        )

    def expr(self, value):
        site = callee(value, self.scope, self.of)
        if site is None:
            return self.of(value)
        args = [self.of(a) for a in site.args]
        fn = site.fn
        if isinstance(fn, Pack) or (
            fn is getattr and args[0].tag in (Tag.RECORD, Tag.OBJECT) and args[0].fields is not None
        ):
            return self.record(fn, site, args)
        if self.result_kind is not None and fn is not None and _is_user_function(fn):
            try:
                form, flat = bind(
                    fn,
                    args,
                    {kw.arg: self.of(kw.value) for kw in site.keywords},
                    lambda p: kind_of(p.default),
                )
            except CallMismatch:
                return UNKNOWN
            return self.result_kind(fn, tuple(flat), form)
        return self.primitive(fn, site, args)

    def record(self, fn, site, args):
        """A record built (``Pack``), rebuilt (``dataclasses.replace``) or read (``getattr``)."""
        if isinstance(fn, Pack) and fn.replaces:
            record = args[0]
            if record.tag is Tag.RECORD and record.fields is not None:
                elements = list(record.elements)
                for key, kind in zip(fn.keys, args[1:], strict=True):
                    if key in record.fields:
                        elements[record.fields.index(key)] = kind
                return replace(record, elements=tuple(elements))
            return UNKNOWN
        if isinstance(fn, Pack):
            return Kind(fn.kind, elements=tuple(args), fields=fn.keys, cls=fn.cls)
        attr = site.args[1].value
        if attr in args[0].fields:
            return args[0].elements[args[0].fields.index(attr)]
        return UNKNOWN

    def primitive(self, fn, site, args):
        """A call of an operator, a builtin or a function of the rule table."""
        entry = lookup(fn)
        if fn is operator.getitem:
            return self.getitem(args[0], site.args[1])
        if fn in _LIKE and not site.keywords:
            return like_kind(*args)  # same shape id as its argument
        if fn in (list, tuple) and len(args) == 1 and args[0].tag in (Tag.LIST, Tag.TUPLE):
            return replace(args[0], tag=Tag.LIST if fn is list else Tag.TUPLE)
        if fn in (list, tuple) and len(args) == 1 and args[0].tag is Tag.DICT:
            return _keys_kind(Tag.LIST if fn is list else Tag.TUPLE, args[0])
        if fn in (list, tuple) and len(args) == 1 and args[0].tag is Tag.ARRAY:
            return Kind(Tag.LIST if fn is list else Tag.TUPLE)  # the rows of an array
        if fn is list_with and args[0].tag is Tag.LIST:
            return _list_with_kind(args[0], site.args[1], args[2])
        if fn is dict_with and args[0].tag is Tag.DICT:
            return _dict_with_kind(args[0], site.args[1], args[2])
        if fn is dict and len(args) == 1 and not site.keywords and args[0].tag is Tag.DICT:
            return args[0]  # dict(d): a copy
        if fn is without and args[0].tag is Tag.LIST:
            return of_items(Tag.LIST, args[0])  # xs.pop(k): a list of its items still
        if fn is list_inserted and args[0].tag is Tag.LIST:
            return of_items(Tag.LIST, args[0], Kind(Tag.LIST, elements=(args[2],)))
        if entry is not None and entry.kind is not None:
            kind = self.result_of(entry, site, args)
            if entry.kind in _KNOW_LENGTHS and lengths_of(kind) is not None:
                return kind
            return self.new_shape(kind)
        if fn in _COMPARISONS:
            return _comparison_kind(args)
        if fn in (operator.add, operator.mul) and any(a.tag in (Tag.LIST, Tag.TUPLE) for a in args):
            return _sequence_kind(fn, args, site.args)
        if fn is operator.matmul:
            kind = matmul_kind(*args)
            return kind if lengths_of(kind) is not None else self.new_shape(kind)
        if fn in _ARITHMETIC or (entry is not None and entry.broadcasts):
            return self.broadcast(fn, [a for a in args if a.tag is not Tag.NONE])
        return _builtin_kind(fn, args)

    def result_of(self, entry, site, args):
        """The kind ``entry.kind`` gives; a call with keywords only where the kind function
        takes them (``np.sum(x, axis=0)`` is not a float, ``np.fft.fft(x, axis=0)`` is complex)."""
        keywords = {kw.arg: self.of(kw.value) for kw in site.keywords}
        try:
            return entry.kind(*args, **keywords)
        except TypeError:  # a kind function that takes no keywords: what it gives is not known
            return UNKNOWN

    def getitem(self, base, index):
        """``x[i]``, ``x[a:b]``, ``x[i, :]`` on an array: the rank is known, the shape is new.
        ``t[0]``, ``t[1:]`` on a tuple of known elements: those elements."""
        if base.container and base.elements is not None:
            return _item_kind(base, index)
        if base.item is not None:  # an item of a list of items of one kind, or a slice
            if isinstance(index, gast.Slice):
                return base
            return base.item if self.of(index).tag in (Tag.INT, Tag.BOOL) else UNKNOWN
        if base.cls is range:  # an item an int, a slice a range
            if isinstance(index, gast.Slice):
                return base
            return INT if self.of(index).tag is Tag.INT else UNKNOWN
        if base.tag is not Tag.ARRAY:
            return UNKNOWN
        parts = index.elts if isinstance(index, gast.Tuple) else [index]
        ellipses = [p for p in parts if isinstance(p, gast.Constant) and p.value is Ellipsis]
        if ellipses:
            return self._getitem_ellipsis(base, [p for p in parts if p not in ellipses], ellipses)
        ndim = base.ndim
        listed = [p for p in parts if self._flat_index_list(p)]
        for part in parts:
            if isinstance(part, gast.Slice) or part in listed:
                continue  # a list of ints keeps its axis (a new length)
            if isinstance(part, gast.Constant) and part.value is None:
                ndim += 1
            elif self.of(part).tag is Tag.INT:
                ndim -= 1
            else:
                return UNKNOWN
        if ndim < 0:
            return UNKNOWN
        if listed:  # x[[0, 2, 1]], x[:, [1, 1]]: one advanced index, the other parts slices
            if len(listed) > 1 or len(listed) != len(parts) - sum(
                isinstance(p, gast.Slice) for p in parts
            ):
                return UNKNOWN
            return self.new_shape(Kind(Tag.ARRAY, ndim, base.dtype))
        if ndim == 0:
            return element_kind(base.dtype)
        labels = _item_lengths(lengths_of(base), parts, self.of)
        if labels is not None:
            return with_lengths(Kind(Tag.ARRAY, ndim, base.dtype), labels)
        trimmed = _trimmed_shape(base.shape, parts)
        if trimmed is not None:
            return Kind(Tag.ARRAY, ndim, base.dtype, shape=trimmed)
        return self.new_shape(Kind(Tag.ARRAY, ndim, base.dtype))

    def _flat_index_list(self, part):
        """A list of ints (an index naming places along one axis), written or named."""
        if isinstance(part, gast.List):
            return bool(part.elts) and all(self.of(e).tag is Tag.INT for e in part.elts)
        kind = self.of(part)
        return (
            kind.tag is Tag.LIST
            and bool(kind.elements)
            and all(e.tag is Tag.INT for e in kind.elements)
        )

    def _getitem_ellipsis(self, base, parts, ellipses):
        """``x[..., i]``, ``x[1, ...]``: ``...`` stands for the axes the other parts leave,
        and the result is an array (a view), never a scalar: ``x[..., 0]`` of a vector is a
        0-d array."""
        ndim = base.ndim
        for part in parts:
            if isinstance(part, gast.Constant) and part.value is None:
                ndim += 1
            elif isinstance(part, gast.Slice):
                continue
            elif self.of(part).tag is Tag.INT:
                ndim -= 1
            else:
                return UNKNOWN
        consumed = sum(not (isinstance(p, gast.Constant) and p.value is None) for p in parts)
        if len(ellipses) > 1 or consumed > base.ndim:
            return UNKNOWN  # (an IndexError when run)
        return self.new_shape(Kind(Tag.ARRAY, ndim, base.dtype))

    def broadcast(self, fn, args):
        shaped = [a for a in args if not a.scalar]
        if (
            shaped
            and all(a == shaped[0] for a in shaped)
            and shaped[0].shape is not None
            and shaped[0].tag in (Tag.ARRAY, Tag.UNKNOWN)
        ):
            first = shaped[0]
            if first.tag is Tag.ARRAY and any(a.tag is Tag.COMPLEX for a in args):
                return replace(first, dtype="c")  # x * 1j
            if (
                first.tag is Tag.ARRAY
                and first.dtype not in ("f", "c")
                and any(a.tag is Tag.FLOAT for a in args)
            ):
                return replace(first, dtype="f")
            return first  # a scalar does not change the shape of what it meets
        if args and all(a.scalar for a in args) and any(map(type_unknown, args)):
            return NUMBER  # numbers, one of a type not known: a number, real or complex
        if not args or any(
            a.tag in (Tag.UNKNOWN, Tag.OBJECT, Tag.STR, Tag.NONE) or a.container for a in args
        ):
            return (
                UNKNOWN  # np.tanh([a, b]): NumPy makes an array of the list, of unknown kind here
            )
        arrays = [a for a in args if a.tag is Tag.ARRAY]
        if not arrays:
            if any(a.tag is Tag.COMPLEX for a in args):
                return Kind(Tag.COMPLEX)
            if fn is operator.truediv or any(a.tag is Tag.FLOAT for a in args):
                return FLOAT
            if fn is operator.pow:
                return UNKNOWN  # 2 ** -1 is a float
            return INT if fn is not operator.not_ else BOOL
        ndim = max(a.ndim for a in arrays)
        dtypes = {a.dtype for a in arrays} | {scalar_dtype(a) for a in args if a.scalar}
        dtype = "c" if "c" in dtypes else "f" if ("f" in dtypes or fn is operator.truediv) else None
        shapes = {a.shape for a in arrays if a.ndim == ndim}
        same = len(shapes) == 1 and None not in shapes and all(a.ndim == ndim for a in arrays)
        kind = Kind(Tag.ARRAY, ndim, dtype)
        if same:
            return replace(kind, shape=shapes.pop())
        labels = _broadcast_lengths([lengths_of(a) for a in arrays], ndim)
        return with_lengths(kind, labels) if labels is not None else self.new_shape(kind)


def _broadcast_lengths(operands, ndim):
    """The axis-length labels of a broadcast of arrays with labels ``operands``, aligned at
    their last axes, where every axis has one label among the operands that have it (equal
    lengths broadcast to that length); None where lengths could differ (one of them may be
    1 and stretch) or are not known."""
    if any(labels is None for labels in operands):
        return None
    result = []
    for axis in range(-ndim, 0):
        found = {labels[axis] for labels in operands if len(labels) >= -axis}
        if len(found) != 1:
            return None
        result.append(found.pop())
    return tuple(result)


def of_items(tag, *sequences):
    """A list or tuple (``tag``) of a length not known, holding the items of ``sequences``
    (lists or tuples): ``item`` is their one kind where every item's is known to be it.

    >>> empty, one_int = Kind(Tag.LIST, elements=()), Kind(Tag.LIST, elements=(INT,))
    >>> str(of_items(Tag.LIST, empty, one_int))  # a tape of loop indices
    'list_of_int'
    >>> str(of_items(Tag.LIST, one_int, Kind(Tag.LIST)))  # one list of unknown items
    'list'
    """
    kinds = []
    for k in sequences:
        if k.elements is not None:
            kinds += k.elements
        elif k.item is not None:
            kinds.append(k.item)
        else:
            return Kind(tag)
    if not kinds:
        return Kind(tag)
    item = functools.reduce(join, kinds)
    return Kind(tag, item=item) if item.tag is not Tag.UNKNOWN else Kind(tag)


def join(a, b):
    """The kind of a name assigned ``a`` on one path and ``b`` on another."""
    if a == b:
        return a
    if (
        a.tag == b.tag
        and a.container
        and a.elements is not None
        and b.elements is not None
        and len(a.elements) == len(b.elements)
        and a.cls is b.cls
    ):
        return replace(
            a, elements=tuple(join(x, y) for x, y in zip(a.elements, b.elements, strict=True))
        )
    if a.tag == b.tag and a.tag in (Tag.LIST, Tag.TUPLE):
        # a list that grows in a loop: of a length not known, of items of one kind if known
        return of_items(a.tag, a, b)
    if a.tag == b.tag is Tag.DICT:
        return Kind(Tag.DICT)  # one gains an entry on one path (d[k] = v): entries not known
    if Tag.NONE in (a.tag, b.tag) and range in (a.cls, b.cls):
        return a if a.cls is range else b  # a range on the path that makes it, as below
    if Tag.NONE in (a.tag, b.tag) and (a.container or b.container):
        # None on a path that does not make it (a derived rule's residual): its cotangents
        # are the container's where it has any, added up as such (None adds as zero)
        return a if a.container else b
    numbers = {Tag.BOOL: 0, Tag.INT: 1, Tag.FLOAT: 2, Tag.COMPLEX: 3}
    if a.scalar and b.scalar and type_unknown(a) | type_unknown(b):
        return NUMBER  # a number on every path, of a type not known on one
    if {a.tag, b.tag} == {Tag.FLOAT, Tag.COMPLEX}:
        # real on one path, complex on another: its cotangent would be complex where the
        # real value needs a real one, so the kind is left unknown (and such a value refused)
        return UNKNOWN
    if a.tag in numbers and b.tag in numbers:
        return a if numbers[a.tag] >= numbers[b.tag] else b
    if a.tag == b.tag is Tag.ARRAY and a.ndim == b.ndim:
        return Kind(Tag.ARRAY, a.ndim, a.dtype if a.dtype == b.dtype else None)
    return UNKNOWN


def infer(fn, scope, signature, result_kind=None, unset=frozenset()):
    """Kinds of every SSA name of ``fn`` given the ``signature`` (None: all unknown).

    Names assigned more than once (branch joins, loop headers) get the join of
    their kinds; loops are iterated until nothing changes, so ``s = 0`` followed
    by ``s = s + x`` in a loop is a float, not an int. ``unset``: loop headers whose
    ``h = runtime.UNSET`` before the loop stands for no value yet (SSAInfo.unset), not
    a kind.
    """
    kinds = {}
    inference = KindInference(scope, kinds, result_kind)
    for i, arg in enumerate(fn.args.args):
        kind = signature[i] if signature is not None and i < len(signature) else UNKNOWN
        # an argument's axis lengths (from the signature) are its shape; else a shape of its own
        kinds[arg.id] = kind if lengths_of(kind) is not None else inference.new_shape(kind)
    params = set(kinds)

    def block(stmts, seen):
        for s in stmts:
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Subscript):
                continue  # an in-place update does not change the array's kind
            if isinstance(s, gast.Assign):
                target = s.targets[0].id
                if is_unset(s, unset):
                    continue  # no value yet: the header's kind is that of what it is given
                if isinstance(s.value, gast.Name) and s.value.id in unset - kinds.keys():
                    continue  # a copy of it, before it has a kind: adds nothing
                kind = inference.expr(s.value)
                if target in seen:
                    kind = join(kinds[target], kind)
                if kind.tag is Tag.UNKNOWN and kind.shape is None:
                    # Not known, but it is the shape of this value: x * x has it too.
                    kind = replace(kind, shape=("of", target))
                seen.add(target)
                kinds[target] = kind
            elif isinstance(s, gast.If):
                block(s.body, seen)
                block(s.orelse, seen)
            elif isinstance(s, gast.For):
                kinds[s.target.id] = INT
                block(s.body, seen)
            elif isinstance(s, gast.While):
                block(s.body, seen)

    stores = {}
    for n in walk(fn):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            stores[n.id] = stores.get(n.id, 0) + 1
    assigned_again = {n for n, count in stores.items() if count > 1}  # joins and loop headers
    for _ in range(10):
        before = dict(kinds)
        block(fn.body, set(params) | (assigned_again & set(before)))
        if kinds == before:
            break
    return kinds
