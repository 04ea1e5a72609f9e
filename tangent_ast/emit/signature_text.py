"""Signatures written out: the argument kinds a rule is specialised for, as the command
line's ``--args`` gives them.

    w: float64[:], X: float64[:, :], y: float64[:], scale: float, p: model.Params
    w: float64[d], X: float64[n, d], y: float64[n]

A scalar type (``float``, ``int``, ``bool``, ``complex``), an array (a NumPy dtype name
and one ``:`` or name per axis: axes of one name have one length, which lets the rule
leave out ``unbroadcast`` where shapes are equal), or a dataclass or namedtuple by import
path (its fields' kinds from their annotations: ``float``, ``int``, ``bool``,
``complex``; any other field, an array for instance, is of unknown kind, which is always
safe).

>>> describe_signature(parse_signature("w: float64[:], X: float64[:, :], n: int", ["w", "X", "n"]))
'array1f, array2f, int'
>>> describe_signature(parse_signature("X: float64[n, d], y: float64[n]", ["X", "y"]))
'array2f[a,b], array1f[a]'
"""

import dataclasses
import importlib
import re

import numpy as np

from ..errors import TangentAstError
from ..vocabulary.kinds import BOOL, FLOAT, INT, UNKNOWN, Kind, Tag, describe_signature, labelled

__all__ = ["describe_signature", "parse_signature"]

_SCALARS = {"float": FLOAT, "int": INT, "bool": BOOL, "complex": Kind(Tag.COMPLEX)}
_AXIS = r"(?::|[A-Za-z_]\w*)"
_ARRAY = re.compile(rf"^(\w+)\[\s*({_AXIS}(?:\s*,\s*{_AXIS})*)?\s*\]$")


def parse_signature(text, params):
    """The kinds of ``params`` (a function's parameter names, in order) from ``text``."""
    given = {}
    for item in _split(text):
        name, colon, kind = item.partition(":")
        if not colon or not name.strip().isidentifier():
            raise TangentAstError(
                f"--args: {item.strip()!r} is not NAME: KIND", hint="w: float64[:], n: int"
            )
        given[name.strip()] = _parse_kind(kind.strip())
    unknown = sorted(set(given) - set(params))
    missing = [p for p in params if p not in given]
    if unknown or missing:
        raise TangentAstError(
            f"--args names {', '.join(unknown) or 'no unknown parameter'}; the function's "
            f"parameters are {', '.join(params)}"
            + (f" (missing: {', '.join(missing)})" if missing else ""),
            hint="give every parameter, by name, in any order",
        )
    kinds = tuple(given[p][0] for p in params)
    return labelled(kinds, [given[p][1] for p in params])


def parse_kind(text):
    """One kind: ``float``, ``float64[:, :]``, ``float64[n, d]``, ``module.Record``."""
    return _parse_kind(text)[0]


def _parse_kind(text):
    """The kind of ``text`` and its axes' keys (a name, or an object of its own for ``:``),
    or None for a kind that is not an array."""
    if text in _SCALARS:
        return _SCALARS[text], None
    array = _ARRAY.match(text)
    if array:
        try:
            dtype = np.dtype(array.group(1))
        except TypeError:
            raise TangentAstError(f"--args: {array.group(1)!r} is not a NumPy dtype") from None
        axes = [] if array.group(2) is None else [a.strip() for a in array.group(2).split(",")]
        keys = tuple(object() if a == ":" else a for a in axes)
        return Kind(Tag.ARRAY, len(axes), dtype.kind), keys or None
    module_name, dot, attr = text.rpartition(".")
    if dot:
        return _record_kind(module_name, attr), None
    raise TangentAstError(
        f"--args: {text!r} is not a kind",
        hint=(
            "float, int, bool, complex, float64[:] (one ':' or name per axis: float64[n, d]), "
            "or module.DataClass"
        ),
    )


def _record_kind(module_name, attr):
    try:
        cls = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError):
        raise TangentAstError(f"--args: cannot import {module_name}.{attr}") from None
    if dataclasses.is_dataclass(cls):
        fields = [(f.name, f.type) for f in dataclasses.fields(cls)]
    elif isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields"):
        notes = getattr(cls, "__annotations__", {})
        fields = [(name, notes.get(name)) for name in cls._fields]
    else:
        raise TangentAstError(f"--args: {module_name}.{attr} is not a dataclass or namedtuple")
    elements = tuple(_SCALARS.get(_type_name(t), UNKNOWN) for _, t in fields)
    return Kind(Tag.RECORD, elements=elements, cls=cls, fields=tuple(n for n, _ in fields))


def _type_name(annotation):
    return annotation if isinstance(annotation, str) else getattr(annotation, "__name__", None)


def _split(text):
    """``text`` split at the commas outside brackets."""
    items, depth, current = [], 0, ""
    for ch in text:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            items.append(current)
            current = ""
        else:
            current += ch
    return [i for i in [*items, current] if i.strip()]
