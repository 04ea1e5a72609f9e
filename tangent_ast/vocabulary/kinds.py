"""Kinds: what the transformer knows about a value's type, and signatures.

A rule is derived for a function *and the kinds of its arguments*: a Python
float, an int, a bool, an ndarray of known ``ndim`` and dtype kind, ... A kind
is what lets scalar code derive into scalar code with no helper calls for shapes, and
array code call ``unbroadcast`` only where shapes can really differ.
``UNKNOWN`` is always safe: it only costs helper calls. The inference of a
kind for every value of a function is the stage :mod:`tangent_ast.analysis.kind_inference`.

>>> k = kind_of(np.zeros((2, 3)))
>>> k.tag, k.ndim, k.dtype
(<Tag.ARRAY: 'array'>, 2, 'f')
>>> describe_signature(signature_of((1.0, np.zeros(3))))
'float, array1f'
"""

import sys
import types
from dataclasses import dataclass, replace
from enum import Enum

import numpy as np

from ..runtime import is_record, record_fields


class Tag(str, Enum):
    """What sort of value a kind describes."""

    FLOAT = "float"
    COMPLEX = "complex"
    INT = "int"
    BOOL = "bool"
    ARRAY = "array"
    NONE = "none"
    STR = "str"
    TUPLE = "tuple"
    LIST = "list"
    DICT = "dict"
    RECORD = "record"  # a dataclass or namedtuple instance
    OBJECT = "object"  # an instance of another class (its attributes, when known)
    UNKNOWN = "unknown"

    def __str__(self):
        return self.value


@dataclass(frozen=True)
class Kind:
    """What is known of a value's type (with a docstring, @dataclass does not build one
    from the class's signature: ``inspect.signature`` on import, some 0.3 ms)."""

    tag: Tag
    ndim: int | None = None
    dtype: str | None = None  # numpy dtype kind of arrays: f c i u b
    # arrays with the same shape id have the same shape; ("lengths", labels) is an array's
    # shape axis by axis, where equal labels are equal lengths (see signature_of)
    shape: int | tuple | None = None
    elements: tuple | None = None  # kinds of a tuple's/list's elements or a record's fields
    cls: type | None = None  # the class of a record (dataclass or namedtuple)
    fields: tuple | None = None  # field names of a record
    # the kind of every item of a list or tuple whose length is not known (a list grown in a
    # loop, a tape): an item read from it is of this kind
    item: "Kind | None" = None
    # a value of a type not known that may be complex at run time (a callee's parameter,
    # passed a value computed from complex ones): its rules must hold for complex values
    maybe_complex: bool = False

    def __post_init__(self):
        object.__setattr__(self, "tag", Tag(self.tag))  # Kind("array", 1, "f") reads as well

    @property
    def differentiable(self):
        if self.tag in (Tag.FLOAT, Tag.COMPLEX, Tag.UNKNOWN):
            return True
        if self.tag in (Tag.TUPLE, Tag.LIST, Tag.DICT, Tag.RECORD):
            return self.elements is None or any(e.differentiable for e in self.elements)
        if self.tag is Tag.OBJECT and self.elements is not None:
            return any(e.differentiable for e in self.elements)
        return self.tag is Tag.ARRAY and self.dtype in ("f", "c", None)

    @property
    def container(self):
        """Tuples, lists, dicts, records and objects: their tangents add field by field."""
        return self.tag in (Tag.TUPLE, Tag.LIST, Tag.DICT, Tag.RECORD) or (
            self.tag is Tag.OBJECT and self.fields is not None
        )

    @property
    def scalar(self):
        """A number: of shape (), its type known or not (NUMBER)."""
        return self.tag in (Tag.FLOAT, Tag.COMPLEX, Tag.INT, Tag.BOOL) or (
            self.tag is Tag.UNKNOWN and self.ndim == 0
        )

    def describe(self):
        maybe = ", maybe complex" if self.maybe_complex else ""
        if self.tag is Tag.UNKNOWN and self.ndim == 0:
            return "number (real or complex)" + maybe
        if self.tag is Tag.ARRAY:
            return f"ndarray[ndim={self.ndim}, {self.dtype}{maybe}]"
        return self.tag.value + maybe

    def __str__(self):
        if self.maybe_complex:
            return f"{replace(self, maybe_complex=False)}_maybe_complex"
        if self.tag is Tag.ARRAY:
            labels = lengths_of(self)
            return f"array{self.ndim}{self.dtype}" + (
                f"[{','.join(labels)}]" if labels is not None else ""
            )
        if self.tag is Tag.DICT and self.elements is not None:
            return (
                "dict("
                + ",".join(f"{k}={e}" for k, e in zip(self.fields, self.elements, strict=True))
                + ")"
            )
        if self.elements is not None:
            name = self.cls.__name__ if self.cls is not None else self.tag
            return f"{name}({','.join(str(e) for e in self.elements)})"
        if self.item is not None:
            return f"{self.tag.value}_of_{self.item}"
        if self.tag is Tag.UNKNOWN and self.ndim == 0:
            return "number"
        return self.tag.value


UNKNOWN = Kind(Tag.UNKNOWN)
# a number whose type is not known, real or complex (``np.sum`` of a value of a kind not
# known): its shape is (), which is what its derivatives need to know of it
NUMBER = Kind(Tag.UNKNOWN, ndim=0)
FLOAT = Kind(Tag.FLOAT)
INT = Kind(Tag.INT)
BOOL = Kind(Tag.BOOL)


def kind_of(value):
    """The kind of a runtime value (shape ids are not part of a signature)."""
    if isinstance(value, (bool, np.bool_)):
        return BOOL
    if isinstance(value, (int, np.integer)):
        return INT
    if isinstance(value, (float, np.floating)):
        return FLOAT
    if isinstance(value, (complex, np.complexfloating)):
        return Kind(Tag.COMPLEX)
    # numpy.ma is imported on first use (some 9 ms): where nothing has, no masked array exists
    masked = sys.modules.get("numpy.ma")
    if masked is not None and isinstance(value, masked.MaskedArray):
        return Kind(Tag.OBJECT)  # masked values have no rules: never differentiated as an array
    if isinstance(value, np.ndarray):
        return Kind(Tag.ARRAY, value.ndim, value.dtype.kind)
    if value is None:
        return Kind(Tag.NONE)
    if isinstance(value, str):
        return Kind(Tag.STR)
    if is_record(value):
        names = record_fields(value)
        return Kind(
            Tag.RECORD,
            elements=tuple(kind_of(getattr(value, n)) for n in names),
            cls=type(value),
            fields=tuple(names),
        )
    if isinstance(value, (tuple, list)):
        return Kind(
            Tag.TUPLE if isinstance(value, tuple) else Tag.LIST,
            elements=tuple(kind_of(v) for v in value),
        )
    if isinstance(value, dict) and all(isinstance(k, (str, int)) for k in value):
        return Kind(
            Tag.DICT, elements=tuple(kind_of(v) for v in value.values()), fields=tuple(value)
        )
    if is_plain_object(value):  # an instance of a user class: its attributes
        attrs = vars(value)
        return Kind(
            "object",
            elements=tuple(kind_of(v) for v in attrs.values()),
            cls=type(value),
            fields=tuple(attrs),
        )
    return Kind(Tag.OBJECT)


def is_plain_object(value):
    """An instance of a user-defined class with attributes (not a module, function or class)."""
    return (
        hasattr(value, "__dict__")
        and not isinstance(
            value,
            (
                type,
                types.ModuleType,
                types.FunctionType,
                types.BuiltinFunctionType,
                types.MethodType,
                tuple,
                list,
                dict,
                np.ndarray,
            ),
        )
        and type(value).__module__ not in ("builtins", "numpy")
        and not is_record(value)
    )


def is_complex(kind):
    """A complex scalar or a complex array."""
    return kind.tag is Tag.COMPLEX or (kind.tag is Tag.ARRAY and kind.dtype == "c")


def has_complex(kind):
    """A complex value, or a container holding one."""
    return is_complex(kind) or (
        kind.elements is not None and any(has_complex(e) for e in kind.elements)
    )


def possibly_complex(kind):
    """``kind`` with each part whose type is not known marked as maybe complex."""
    if type_unknown(kind):
        return replace(kind, maybe_complex=True)
    if kind.elements is not None:
        return replace(kind, elements=tuple(map(possibly_complex, kind.elements)))
    if kind.item is not None:
        return replace(kind, item=possibly_complex(kind.item))
    return kind


def holds_maybe_complex(kind):
    """A kind marked maybe complex, or a container holding one."""
    parts = (kind.elements or ()) + ((kind.item,) if kind.item is not None else ())
    return kind.maybe_complex or any(map(holds_maybe_complex, parts))


def is_real(kind):
    """A real float or a real float array: a value whose cotangent must be real."""
    return kind.tag is Tag.FLOAT or (kind.tag is Tag.ARRAY and kind.dtype == "f")


def element_kind(dtype):
    """The kind of one element of an array of dtype kind ``dtype`` (UNKNOWN if not a number
    tangent_ast can tell)."""
    return {"f": FLOAT, "c": Kind(Tag.COMPLEX)}.get(dtype, UNKNOWN)


def real_kind(x, *rest):
    """``np.abs(z)``, ``np.real(z)``, ``np.angle(z)``: real, of the shape of ``z``."""
    if x.tag is Tag.ARRAY:
        return replace(x, dtype="f" if x.dtype in ("f", "c") else x.dtype, shape=None)
    return FLOAT if x.tag in (Tag.FLOAT, Tag.COMPLEX) or x == NUMBER else UNKNOWN


def scalar_dtype(kind):
    """The dtype kind of an array of numbers of ``kind`` (None for a NUMBER)."""
    return {Tag.FLOAT: "f", Tag.COMPLEX: "c", Tag.INT: "i", Tag.BOOL: "b"}.get(kind.tag)


def is_real_or_int(kind):
    """A real number or an array of real numbers (float, int, unsigned or bool)."""
    return kind.tag in (Tag.FLOAT, Tag.INT, Tag.BOOL) or (
        kind.tag is Tag.ARRAY and kind.dtype in ("f", "i", "u", "b")
    )


def reduction_kind(x, *rest):
    """``np.sum(x)`` and friends without an axis: a float (complex for a complex array)."""
    if rest or x.tag not in (Tag.ARRAY, Tag.FLOAT, Tag.COMPLEX, Tag.UNKNOWN):
        return UNKNOWN
    if is_complex(x):
        return Kind(Tag.COMPLEX)
    if type_unknown(x):
        # of a value whose kind is not known (a list, or what a callee returns for arguments
        # of kinds not known), the sum may be complex: taken as a float, np.imag of it would
        # be zero
        return NUMBER
    return FLOAT if is_real_or_int(x) else UNKNOWN


def real_reduction_kind(x, *rest):
    """``np.var(x)``, ``np.std(x)`` without an axis: a float, for complex ``x`` too."""
    if rest or x.tag not in (Tag.ARRAY, Tag.FLOAT, Tag.COMPLEX, Tag.UNKNOWN):
        return UNKNOWN
    return FLOAT


# the kind functions of calls whose result is real whatever their arguments
ALWAYS_REAL = (real_kind, real_reduction_kind)


def matmul_kind(x, y):
    if x.tag is not Tag.ARRAY or y.tag is not Tag.ARRAY:
        return UNKNOWN
    ndim = {(1, 1): 0, (2, 1): 1, (1, 2): 1, (2, 2): 2}.get((x.ndim, y.ndim))
    if ndim is None:
        return UNKNOWN
    dtypes = {x.dtype, y.dtype}
    single = x.dtype if len(dtypes) == 1 else None
    dtype = "c" if "c" in dtypes else "f" if "f" in dtypes else single
    if ndim == 0:
        return element_kind(dtype)
    xs, ys = lengths_of(x), lengths_of(y)
    if xs is None or ys is None:
        return Kind(Tag.ARRAY, ndim, dtype)
    # (m, k) @ (k, n) is (m, n); a vector drops its axis
    labels = ys[1:] if x.ndim == 1 else xs[:1] if y.ndim == 1 else (xs[0], ys[1])
    return with_lengths(Kind(Tag.ARRAY, ndim, dtype), labels)


def constructor_kind(shape, *rest):
    """``np.zeros(n)``, ``np.zeros((2, 3))``: a float array of that rank."""
    if shape.tag is Tag.INT:
        return Kind(Tag.ARRAY, 1, "f")
    if shape.tag is Tag.TUPLE and shape.elements is not None:
        return Kind(Tag.ARRAY, len(shape.elements), "f")
    return UNKNOWN


def full_kind(shape, fill_value, *rest):
    """``np.full(n, v)``, ``np.full((2, 3), v)``: an array of that rank, of ``v``'s type."""
    if rest or not fill_value.scalar:
        return UNKNOWN  # a dtype given, or an array of fill values (broadcast)
    kind = constructor_kind(shape)
    return replace(kind, dtype=scalar_dtype(fill_value)) if kind.tag is Tag.ARRAY else UNKNOWN


def shape_kind(x):
    """``np.shape(x)``, ``x.shape``: a tuple of as many ints as ``x`` has axes."""
    if x.tag is Tag.ARRAY and x.ndim is not None:
        return Kind(Tag.TUPLE, elements=(INT,) * x.ndim)
    return (
        Kind(Tag.TUPLE, elements=()) if x.scalar and x.tag is not Tag.UNKNOWN else Kind(Tag.TUPLE)
    )


def array_kind(x, *rest):
    """``np.array([a, b])``, ``np.asarray(x)`` with no dtype: an array of the numbers or
    arrays given, nested lists adding axes; UNKNOWN where an entry's kind is not known or
    entries differ in rank (NumPy would refuse or make an object array)."""
    if rest:
        return UNKNOWN  # a dtype given positionally
    if x.tag is Tag.ARRAY:
        return replace(x, shape=None)
    if x.scalar:
        return Kind(Tag.ARRAY, 0, scalar_dtype(x))
    if x.tag not in (Tag.LIST, Tag.TUPLE) or not x.elements:
        return UNKNOWN
    entries = [array_kind(e) for e in x.elements]
    if any(e.tag is not Tag.ARRAY or e.ndim != entries[0].ndim for e in entries):
        return UNKNOWN
    found = {e.dtype for e in entries}
    if None in found:
        dtype = None
    elif "c" in found or "f" in found:
        dtype = "c" if "c" in found else "f"
    else:  # ints, bools: one dtype if they share it
        dtype = found.pop() if len(found) == 1 else None
    return Kind(Tag.ARRAY, entries[0].ndim + 1, dtype)


def like_kind(x, *rest):
    """``np.zeros_like(x)``: the same kind and shape as ``x``."""
    return x if x.tag is Tag.ARRAY else UNKNOWN


def transpose_kind(x, *rest):
    """``x.T``, ``np.transpose(x)``: axes reversed (a vector is itself)."""
    if x.tag is not Tag.ARRAY:
        return UNKNOWN
    if x.ndim == 1 and not rest:
        return x
    labels = lengths_of(x)
    if labels is not None and not rest:
        return with_lengths(Kind(Tag.ARRAY, x.ndim, x.dtype), labels[::-1])
    return Kind(Tag.ARRAY, x.ndim, x.dtype)


def lengths_of(kind):
    """The labels of an array kind's axis lengths (equal labels: equal lengths), or None
    where they are not known."""
    shape = kind.shape
    return shape[1] if type(shape) is tuple and shape[0] == "lengths" else None


def with_lengths(kind, labels):
    return replace(kind, shape=("lengths", tuple(labels)))


def _label(i):
    letters = "abcdefghijklmnopqrstuvwxyz"
    return letters[i % 26] + (str(i // 26) if i >= 26 else "")


def labelled(kinds, lengths):
    """``kinds`` with the arrays' axis lengths as labels: ``lengths[i]`` is a tuple of keys for
    array ``i`` (None for other kinds), equal keys being equal lengths. Labels are given in order
    of first appearance (``a``, ``b``, ...), so two signatures with the same equalities have the
    same labels. Where no length occurs twice there is nothing to tell, and no labels are kept
    (the kinds are as without lengths): a rule is specialised for lengths that are equal, never
    for lengths themselves."""
    labels = {}
    for keys in lengths:
        for key in keys or ():
            labels.setdefault(key, _label(len(labels)))
    if sum(len(keys or ()) for keys in lengths) == len(labels):
        return tuple(replace(k, shape=None) for k in kinds)
    return tuple(
        with_lengths(k, (labels[key] for key in keys))
        if keys is not None
        else replace(k, shape=None)
        for k, keys in zip(kinds, lengths, strict=True)
    )


def signature_of(args):
    """The kinds of ``args``, with which of their arrays' axes have equal lengths (the facts
    that let a rule leave out ``unbroadcast`` where shapes are equal: ``y`` and ``X @ w``)."""
    kinds = tuple(kind_of(a) for a in args)
    return labelled(
        kinds,
        [
            a.shape if k.tag is Tag.ARRAY and k.ndim else None
            for a, k in zip(args, kinds, strict=True)
        ],
    )


def canonical(signature):
    """``signature`` as a rule is derived for: inference's shape ids dropped, axis-length
    labels renamed in order of first appearance (a callee called with ``(y, X @ w)`` gets the
    rule of ``(a, a)``)."""
    if signature is None:
        return None
    return labelled(signature, [lengths_of(k) for k in signature])


# signature_key holds arrays' shapes, so a function called with ever new shapes would make
# ever new keys (each for a rule derived once per signature): a dict of them is emptied
# when it holds this many
KEYS_KEPT = 256

_SCALAR_TYPES = frozenset((float, int, bool, complex, type(None), str))


def signature_key(args):
    """A cheap key that determines ``signature_of(args)`` (it is on the call path of
    ``grad``): type, shape/dtype for arrays, the full kind for containers and records.

    For arguments that are all Python scalars (of ``_SCALAR_TYPES``) it is the tuple of
    their types, and only for them: of any other argument it holds a tuple or a Kind."""
    # a list comprehension: cheaper than a generator expression for a few arguments
    return tuple(
        [
            (a.shape, a.dtype.char)
            if type(a) is np.ndarray
            else type(a)
            if type(a) in _SCALAR_TYPES
            # a subclass of ndarray: its shape too, since signature_of labels its lengths
            else (kind_of(a), a.shape)
            if isinstance(a, np.ndarray)
            else kind_of(a)
            for a in args
        ]
    )


def describe_signature(signature):
    if signature is None:
        return "any"
    return ", ".join(str(k) for k in signature)


def type_unknown(kind):
    """Nothing says whether a value of this kind is real or complex."""
    return kind.tag is Tag.UNKNOWN or (kind.tag is Tag.ARRAY and kind.dtype is None)


def same_shape(a, b):
    """Values of kinds ``a`` and ``b`` are known to have one shape."""
    if a.scalar and b.scalar:  # a float and a complex number: both of shape ()
        return True
    # a shape id is a shape whatever the dtype (an int array y and X @ w of y's length)
    return (
        a.tag in (Tag.ARRAY, Tag.UNKNOWN)
        and a.tag == b.tag
        and a.ndim == b.ndim
        and a.shape is not None
        and a.shape == b.shape
    )


def leading_axes(arg, result):
    """The axes a broadcast added in front of an argument whose axis lengths are the
    result's last ones (``(h,)`` in ``(n, h)``: ``(0,)``); None where not known so."""
    labels, result_labels = lengths_of(arg), lengths_of(result)
    if labels is None or result_labels is None or len(labels) >= len(result_labels):
        return None
    extra = len(result_labels) - len(labels)
    if result_labels[extra:] != labels:
        return None
    return tuple(range(extra))
