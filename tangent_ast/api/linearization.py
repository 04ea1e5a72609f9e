"""``linearize(f, *args) -> (out, f_jvp)``: the forward sweep once, the tangent map many
times.

The forward rule of ``f`` runs once, at ``args``, on *traced* tangents: every NumPy
operation on a traced tangent computes nothing and is written down instead (the function,
its primal operands as they are then, where the tangents go). The control flow, the
primal values and the operands of the tangent statements are fixed at ``args``, so the
list of operations is the linear map ``t -> J t``: ``f_jvp(t)`` replays it on ``t``,
without the primal computation (JAX's linearize by partial evaluation, on the forward
rule's own operations).

What a trace cannot follow falls back to running the forward rule at ``args`` for each
call of ``f_jvp``, with the same numbers: a tangent read as one number (``float(t)``,
``if t``), written into an array that is not a tangent, or updated in place while another
name sees the same memory (a view); a primal array the rule writes into after a tangent
statement read it.

>>> import numpy as np
>>> def f(x):
...     return np.sin(x) * x[::-1]
>>> out, f_jvp = linearize(f, np.array([0.0, 1.0]))
>>> f_jvp(np.array([1.0, 0.0]))
array([1.        , 0.84147098])
"""

import functools

import numpy as np

from ..errors import TangentAstError
from ..modes import Mode
from ..runtime import Tangent, is_record, rebuild, record_fields
from ..runtime.batched import ArrayMethods
from ..vocabulary.api_roles import Role, register, register_made
from ..vocabulary.calling import flat_arguments
from ..vocabulary.kinds import UNKNOWN, signature_of
from ..vocabulary.naming import rule_base
from .api import _session, default_wrt, guarded, source_of
from .companions import companion_function
from .sessions import as_function


class TracingError(TypeError):
    """An operation a traced tangent cannot be written down through."""


class Trace:
    """The operations written down so far: each ``(node, func, args, kwargs)`` computes
    node ``node`` from earlier nodes (:class:`Node` in ``args``/``kwargs``)."""

    def __init__(self):
        self.steps = []
        self.count = 0
        self.frozen = []  # primal arrays read by a step: made read-only while tracing

    def thaw(self):
        """The arrays made read-only writable again, each base before its views (a view
        of a read-only base cannot be made writable)."""
        for array in sorted(self.frozen, key=_depth):
            array.flags.writeable = True
        self.frozen.clear()

    def new_node(self):
        self.count += 1
        return Node(self.count)


class Node:
    """A tangent in a recorded step: filled in on replay."""

    __slots__ = ("id",)

    def __init__(self, id):
        self.id = id


class Traced(ArrayMethods):
    """A tangent whose operations are written down: ``example`` is a zero tangent of its
    shape and dtype (what NumPy needs to answer questions about it), ``node`` where its
    value will be on replay."""

    __slots__ = ("aliased", "example", "node", "trace")

    def __init__(self, trace, node, example):
        self.trace, self.node, self.example = trace, node, example
        self.aliased = False  # another traced value shares its memory

    shape = property(lambda self: np.shape(self.example))
    ndim = property(lambda self: np.ndim(self.example))
    size = property(lambda self: np.size(self.example))
    dtype = property(lambda self: np.result_type(self.example))

    def __array__(self, dtype=None, copy=None):
        raise TracingError("a traced tangent cannot become one array")

    def _refuse(self, *args):
        raise TracingError("a traced tangent has no value yet")

    __float__ = __complex__ = __int__ = __index__ = __bool__ = __len__ = __iter__ = _refuse

    def __getitem__(self, index):
        return _record(_getitem, (self, index), {})

    def __setitem__(self, index, value):
        self._update(_setitem, (self, index, value), {})

    def _update(self, func, args, kwargs):
        """An update in place: the next node holds the new value, under the same name."""
        if self.aliased:
            raise TracingError("a traced tangent updated in place while a view of it lives")
        updated = _record(func, args, kwargs)
        self.node, self.example = updated.node, updated.example

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.pop("out", None)
        if out is not None or method == "at":
            target = out[0] if out is not None else inputs[0]
            if len(out or ()) > 1 or not isinstance(target, Traced):
                raise TracingError("a traced tangent written into an array that is not one")
            call = getattr(ufunc, method)
            if method == "at":
                target._update(functools.partial(_at, call), inputs, kwargs)
                return None
            target._update(functools.partial(_into_copy, call), (target, *inputs), kwargs)
            return target
        return _record(getattr(ufunc, method), inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        if func in (np.shape, np.ndim, np.size, np.result_type, np.iscomplexobj):
            return func(*_examples(args), **_examples(kwargs))
        if func in _IN_PLACE or kwargs.get("out") is not None:
            raise TracingError(f"{func.__name__} writes into an array")
        return _record(func, args, kwargs)

    def copy(self, order="C"):
        return np.copy(self)

    def astype(self, dtype, *args, **kwargs):
        return _record(_astype, (self, dtype, *args), kwargs)


_IN_PLACE = {np.copyto, np.put, np.place, np.putmask, np.fill_diagonal, np.put_along_axis}


def _getitem(x, index):
    return x[index]


def _setitem(x, index, value):
    x = x.copy()
    x[index] = value
    return x


def _at(ufunc_at, x, *rest, **kwargs):
    x = x.copy()
    ufunc_at(x, *rest, **kwargs)
    return x


def _into_copy(call, target, *inputs, **kwargs):
    """``call(*inputs, out=target)`` on a copy of ``target``."""
    written = np.array(target, copy=True)
    call(*inputs, out=written, **kwargs)
    return written


def _astype(x, dtype, *args, **kwargs):
    return np.asarray(x).astype(dtype, *args, **kwargs)


def _traced_in(values):
    for v in values:
        if isinstance(v, Traced):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from _traced_in(v)
        elif isinstance(v, dict):
            yield from _traced_in(v.values())


def _substitute(value, leaf):
    """``value`` with each traced tangent ``t`` replaced by ``leaf(t)``, inside lists,
    tuples and dicts too."""
    if isinstance(value, Traced):
        return leaf(value)
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_substitute(v, leaf) for v in value)
    if isinstance(value, dict):
        return {k: _substitute(v, leaf) for k, v in value.items()}
    return value


def _examples(value):
    return _substitute(value, lambda t: t.example)


def _record(func, args, kwargs):
    """Write down ``func(*args, **kwargs)`` and return the traced result."""
    traced = list(_traced_in([args, kwargs]))
    trace = traced[0].trace
    example = func(*_examples(args), **_examples(kwargs))
    if not isinstance(example, (np.ndarray, np.generic, int, float, complex)):
        raise TracingError(f"{getattr(func, '__name__', func)} gives a {type(example).__name__}")
    for t in traced:  # a view of a traced tangent: both see an update of either
        if isinstance(example, np.ndarray) and np.shares_memory(example, t.example):
            t.aliased = True
    _freeze(trace, [args, kwargs])
    node = trace.new_node()
    trace.steps.append(
        (node, func, _substitute(args, lambda t: t.node), _substitute(kwargs, lambda t: t.node))
    )
    result = Traced(trace, node, example)
    result.aliased = any(t.aliased for t in traced if np.shares_memory(example, t.example))
    return result


def _depth(array):
    depth = 0
    while isinstance(array.base, np.ndarray):
        array, depth = array.base, depth + 1
    return depth


def _freeze(trace, values):
    """Primal arrays a step reads must keep their values until the map is replayed: they
    are made read-only while tracing, so a write into one is an error, not a wrong map."""
    for v in values:
        if isinstance(v, np.ndarray):
            while v is not None and isinstance(v, np.ndarray):
                if v.flags.writeable:
                    v.flags.writeable = False
                    trace.frozen.append(v)
                v = v.base
        elif isinstance(v, (list, tuple)):
            _freeze(trace, v)
        elif isinstance(v, dict):
            _freeze(trace, v.values())


def replay(steps, inputs, given):
    """The recorded steps run on tangents ``given`` for the input nodes ``inputs``."""
    env = {node.id: np.asarray(t) for node, t in zip(inputs, given, strict=True)}

    def leaf(node):
        return env[node.id]

    for node, func, args, kwargs in steps:
        env[node.id] = func(*_nodes(args, leaf), **_nodes(kwargs, leaf))
    return env


def _nodes(value, leaf):
    if isinstance(value, Node):
        return leaf(value)
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_nodes(v, leaf) for v in value)
    if isinstance(value, dict):
        return {k: _nodes(v, leaf) for k, v in value.items()}
    return value


def _output_template(result):
    """The tangent a rule returned, with traced tangents as their nodes and constants as
    they are (a tangent that does not depend on the input)."""
    if isinstance(result, Traced):
        return result.node
    if isinstance(result, (tuple, list)) and not is_record(result):
        return tuple(_output_template(r) for r in result)
    if is_record(result):
        return rebuild(
            result, [_output_template(getattr(result, n)) for n in record_fields(result)]
        )
    if isinstance(result, Tangent):
        return Tangent(**{k: _output_template(v) for k, v in vars(result).items()})
    if result is None or isinstance(result, (int, float, complex, np.number, np.ndarray)):
        return result
    raise TracingError(f"a tangent of a {type(result).__name__}")


def _filled(template, env):
    if isinstance(template, Node):
        return env[template.id]
    if isinstance(template, tuple) and not is_record(template):
        return tuple(_filled(t, env) for t in template)
    if is_record(template):
        return rebuild(
            template, [_filled(getattr(template, n), env) for n in record_fields(template)]
        )
    if isinstance(template, Tangent):
        return Tangent(**{k: _filled(v, env) for k, v in vars(template).items()})
    return template


def linearize(f, *args, wrt=None, cache=None):
    """``(f(*args), f_jvp)``: ``f_jvp(*tangents)`` is ``J @ tangents`` at ``args``, one
    tangent per ``wrt`` argument (default: every float or float-array argument), computed
    by replaying the tangent operations of one run of the forward rule."""
    session = _session(cache)
    f = as_function(f, session.directory)
    form, flat = flat_arguments(f, args, {})
    signature = signature_of(flat)
    wrt = default_wrt(wrt, signature[: len(args)], "linearize")
    wrt = (wrt,) if isinstance(wrt, int) else tuple(wrt)
    rule = session.rule(source_of(f, signature), Mode.FORWARD, wrt, signature, form)
    rule.check_arguments(flat)
    inputs = [flat[i] for i in wrt]

    def copies():  # the rule may update its arguments in place: each run gets its own
        return [a.copy() if isinstance(a, np.ndarray) else a for a in flat]

    def run_rule(*tangents):
        return guarded(f, flat, rule, lambda: rule.jvp(*copies(), *tangents))

    trace = Trace()
    nodes = [trace.new_node() for _ in inputs]
    traced = [
        Traced(trace, node, np.zeros_like(x, dtype=np.result_type(x, float)))
        for node, x in zip(nodes, inputs, strict=True)
    ]
    try:
        out, tangent = rule.jvp(*copies(), *traced)
        template = _output_template(tangent)
    except (TracingError, TypeError, ValueError):
        out, template = None, None
    finally:
        trace.thaw()
    if template is None:  # the trace could not follow the rule: run it on each call
        out = run_rule(*(np.zeros_like(x, dtype=np.result_type(x, float)) for x in inputs))[0]

        def f_jvp(*tangents):
            return run_rule(*tangents)[1]

        register_made(f_jvp, Role.PULLBACK)
        return out, f_jvp

    steps = tuple(trace.steps)

    def f_jvp(*tangents):
        if len(tangents) != len(nodes):
            raise TangentAstError(f"f_jvp takes {len(nodes)} tangents, got {len(tangents)}")
        return _filled(template, replay(steps, nodes, tangents))

    register_made(f_jvp, Role.PULLBACK)
    return out, f_jvp


def _linear_map_function(f, arity, *, wrt=None, cache=None, where=None):
    """``out, f_jvp = linearize(f, *args)`` (``arity`` arguments) in differentiated code:
    ``f_jvp`` is the point ``args`` (a tuple), and each call ``f_jvp(*tangents)`` a call of
    this function, ``linear_map(point, *tangents)``, whose source for the kinds of the point
    is a module next to ``f``'s forward rule (``f_linear_map``): the tangent that rule gives
    at the point. ``where``: the call's place, for refusals."""

    def rule_for(point):
        session = _session(cache)
        plain = source_of(as_function(f, session.directory), point)
        chosen = default_wrt(wrt, point, "linearize")
        chosen = (chosen,) if isinstance(chosen, int) else tuple(chosen)
        rule = session.rule(plain, Mode.FORWARD, chosen, point)
        if len(rule.params) != arity or rule.updates:
            raise TangentAstError(
                f"linearize of {getattr(f, '__qualname__', f)} in a function being "
                + (
                    "differentiated: it updates its arguments in place"
                    if rule.updates
                    else f"differentiated, given {arity} of its {len(rule.params)} parameters"
                ),
                where=where,
                hint="pass every argument, the defaults too, to a function that returns "
                "what it computes",
            )
        return rule

    def linear_map(point, *tangents):
        return rule_for(signature_of(point)).jvp(*point, *tangents)[1]

    def as_source(kinds):
        elements = kinds[0].elements if kinds and kinds[0].elements is not None else None
        rule = rule_for(tuple(elements) if elements is not None else (UNKNOWN,) * arity)
        base = rule_base(rule.fn)
        params = list(rule.params)
        taken = set(params)
        point, out, tangent = (_fresh(n, taken) for n in ("point", "out", "tangent"))
        tangents = [_fresh(f"d{w}", taken) for w in rule.wrt]
        text = (
            f'"""The tangent of {rule.fn.__qualname__} at a point: the linear map linearize '
            'gives,\nas a function of the point and the tangents."""\n\n'
            f"from .{rule.path.stem} import {base}_jvp\n\n\n"
            f"def {base}_linear_map({', '.join([point, *tangents])}):\n"
            f"    {', '.join(params)}{',' if len(params) == 1 else ''} = {point}\n"
            f"    {out}, {tangent} = {base}_jvp({', '.join([*params, *tangents])})\n"
            f"    return {tangent}\n"
        )
        return companion_function(rule, "linear_map", text)

    linear_map.tangent_ast_source_for = as_source
    return linear_map


def _fresh(name, taken):
    while name in taken:
        name += "_"
    taken.add(name)
    return name


linearize.as_function = _linear_map_function  # type: ignore[attr-defined]
register(Role.LINEARIZE, linearize)
