"""Running a derived rule on a batch of directions at once: Jacobians and Hessians.

The directions are stacked along a leading axis and handed to the rule as one
:class:`~tangent_ast.runtime.batched.Batched` tangent (or cotangent): one pass of the
generated code computes all of them. Where an operation of the rule cannot take a batch
(:class:`~tangent_ast.runtime.batched.BatchingError`), the rule runs once per direction
instead: slower, the same numbers.

>>> import numpy as np
>>> def rule(t):  # a linear map, as derived code writes one
...     return np.sum(t * np.array([1.0, 2.0, 3.0]))
>>> run_batched(rule, [np.eye(3)], like=lambda: 0.0)
array([1., 2., 3.])
"""

import numpy as np

from .batched import Batched, BatchingError
from .tangents import Tangent, is_record, rebuild, record_fields

# Why batches went one direction at a time, most recent last (read by the tests, to keep
# the operations that take a batch in view).
FALLBACKS: list = []


def run_batched(rule, stacks, like, *, fallback=True):
    """``rule(*directions)`` for each direction ``k`` (``stacks[i][k]`` the ``i``-th
    argument's), the results stacked along a leading axis. ``like()`` gives a value (or a
    tuple of them) of the structure and shape of one result: a result the rule gives as
    ``None`` or a constant (a zero, the same for every direction) takes that shape."""
    n = len(stacks[0])
    try:
        return unbatched(rule(*(Batched(s) for s in stacks)), n, like())
    except (BatchingError, TypeError, ValueError) as exc:  # NumPy's errors for a batch met
        # where one value is expected (``a[i] = batch``: "setting an array element ...")
        if not fallback:
            raise
        del FALLBACKS[:-99]
        FALLBACKS.append(f"{type(exc).__name__}: {exc} ({_where(exc)})")
    return stacked([rule(*(s[k] for s in stacks)) for k in range(n)])


def _where(exc):
    """The line of code (not NumPy's, not the batch's) that met the batch."""
    where, tb = "?", exc.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if "numpy" not in name and not name.endswith("batched.py"):
            where = f"{name}:{tb.tb_lineno}"
        tb = tb.tb_next
    return where


def unit_directions(x):
    """The unit directions of ``x`` (a float or an array) in C order, stacked along a
    leading axis: ``unit_directions(x)[j]`` is the ``j``-th."""
    size = int(np.size(x))
    return np.eye(size, dtype=np.result_type(x, float)).reshape((size, *np.shape(x)))


def jvp_of_batch(jvp, args, *directions):
    """``(out, tangents)`` of the forward rule ``jvp(*args, *tangents)`` for a batch of
    directions (each along a leading axis): ``tangents[k]`` is the tangent for the ``k``-th
    directions, computed in one pass where the rule's operations take a batch."""
    outs = []

    def tangent(*one):
        out, t = jvp(*args, *one)
        outs.append(out)
        return t

    stack = run_batched(tangent, list(directions), lambda: outs[-1])
    return outs[-1], stack


def unbatched(result, n, like):
    """A rule's result for a batch, as arrays with the batch axis first, in the structure
    of ``like``: a tuple of them for a tuple, the same record class for a record."""
    if isinstance(result, Batched):
        return result.stack
    if result is None or isinstance(result, (int, float, complex, np.number, np.ndarray)):
        zero = 0.0 if result is None else result  # the same for every direction
        return np.broadcast_to(zero, (n, *(np.shape(zero) or np.shape(like)))).copy()
    return _each_part(lambda part, x: unbatched(part, n, x), result, like)


def stacked(results):
    """The results of one call per direction, stacked along a leading axis."""
    first = results[0]
    if first is None or isinstance(first, (int, float, complex, np.number, np.ndarray)):
        return np.stack([np.asarray(0.0 if r is None else r) for r in results])
    parts = [_parts(r) for r in results]
    stacks = [stacked(list(p)) for p in zip(*parts, strict=True)]
    return _rebuilt(first, stacks)


def _each_part(convert, value, like):
    """``value`` (a tuple, list or record) rebuilt with ``convert(part, like_part)``: the
    parts of ``like`` by position for a sequence, by name for a record or an object."""
    if isinstance(value, (tuple, list)) and not is_record(value):
        likes = list(like) if isinstance(like, (tuple, list)) else [None] * len(value)
    else:
        likes = [getattr(like, name, None) for name in _names(value)]
    converted = [convert(p, x) for p, x in zip(_parts(value), likes, strict=True)]
    return _rebuilt(value, converted)


def _names(value):
    return record_fields(value) if is_record(value) else list(_attributes(value))


def _attributes(value):
    if not isinstance(value, Tangent):
        raise BatchingError(f"a batch of tangents of a {type(value).__name__}")
    return vars(value)


def _parts(value):
    if isinstance(value, (tuple, list)) and not is_record(value):
        return list(value)
    return [getattr(value, name) for name in _names(value)]


def _rebuilt(value, parts):
    if isinstance(value, (tuple, list)) and not is_record(value):
        return tuple(parts)
    if is_record(value):
        return rebuild(value, parts)
    return Tangent(**dict(zip(_names(value), parts, strict=True)))
