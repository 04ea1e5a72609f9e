"""Forms whose meaning depends on what their arguments are, written out once kinds are known.

Runs on the SSA function with kinds known; guarantees that

* ``np.r_[...]`` and ``np.c_[...]`` (with or without a leading directive such as ``"0,2"``)
  are ``np.concatenate`` of their items, each made an array of the concatenator's rank the
  way NumPy does (a number ``c`` is ``np.atleast_1d(c)``, a vector in ``np.c_`` a column
  ``np.expand_dims(x, 1)``, a slice ``1:7`` is ``np.arange(1, 7)``, ``0:1:5j`` is
  ``np.linspace(0, 1, num=5)``): those calls have rules, while an index into ``np.r_`` is
  not an operation a rule could differentiate;
* a loop over a dict runs over its keys (``for k in d``, ``enumerate(d)``, ``zip(d, ...)``,
  ``reversed(d)``): the loop's item read ``k = d[i]`` is ``k = d_keys[i]`` with
  ``d_keys = list(d)``;
* ``d.items()``, ``d.values()``, ``d.keys()`` of a dict whose keys the kinds know: the
  list of its entries, ``[("a", d_a), ("b", d_b)]``;
* ``np.gradient(f)`` of an array of several dimensions (no ``axis=``, or a tuple of axes),
  which returns one array per axis, is the tuple of one ``np.gradient(f, axis=i)`` per axis,
  each with its step.

Where a kind is not known well enough to say what NumPy would do (``np.c_`` of a value of
unknown rank), the form is left as written: as a constant it still runs, and a derivative
through it is refused at derivation.

>>> import numpy as np, tangent_ast as ta
>>> def f(x, c):
...     return np.sum(np.r_[x, c, 1:3] ** 2)
>>> print(ta.show(f, mode="forward", wrt=(0,), stage="simplify", args=(np.ones(2), 0.5)))
def f_jvp(x, c, dx):
    c_1d = np.atleast_1d(c)
    arange = np.arange(1, 3)
    dtmp_parts = [dx, runtime.zero_tangent(c_1d), runtime.zero_tangent(arange)]
    tmp = np.concatenate([x, c_1d, arange])
    out = np.sum(tmp ** 2)
    dout = np.sum(np.concatenate(dtmp_parts) * 2 * tmp)
    return (out, dout)
<BLANKLINE>
>>> def total(prices, x):
...     s = 0.0
...     for item in prices:
...         s = s + prices[item] * x
...     return s
>>> prices = {"tea": 2.0, "bun": 1.5}
>>> print(ta.show(total, "forward", wrt=(1,), stage="simplify", args=(prices, 2.0)))
def total_jvp(prices, x, dx):
    s = 0.0
    ds = 0.0
    prices_keys = list(prices)
    for i in range(len(prices)):
        item = prices_keys[i]
        prices_item = prices[item]
        s = s + prices_item * x
        ds = ds + prices_item * dx
    return (s, ds)
<BLANKLINE>
"""

import ast
from collections.abc import Callable
from dataclasses import dataclass, field

import gast
import numpy as np

from ..front.checks import unsupported
from ..vocabulary.kinds import Tag, is_complex, is_real_or_int
from ..vocabulary.syntax import (
    assign,
    attribute,
    expand_statements,
    name,
    stored_names,
    unparse,
)
from ..vocabulary.trees import walk
from .kind_inference import KindInference

# what each concatenator does by default: (axis, ndmin, trans1d), as NumPy's AxisConcatenator
_CONCATENATORS = ((np.r_, (0, 1, -1)), (np.c_, (-1, 2, 0)))


def drop_decided_branches(fn, scope, kinds):
    """``if t:`` where ``t = np.iscomplexobj(x)`` (or ``np.isrealobj(x)``) and the kinds
    know whether ``x`` is complex: the branch taken, the other dropped. A helper written for
    both real and complex values (``np.conj(a) if np.iscomplexobj(a) else a``) is then
    derived for the one it is given, with no join of a real and a complex value. Returns
    whether a branch was dropped (kinds are inferred again).

    >>> import numpy as np, tangent_ast as ta
    >>> def f(a):
    ...     return np.conj(a) if np.iscomplexobj(a) else a
    >>> print(ta.show(f, "forward", stage="simplify", args=(np.ones(2),)))
    def f_jvp(a, da):
        return (a, da)
    <BLANKLINE>
    """
    stores = {}
    for n in walk(fn):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            stores[n.id] = stores.get(n.id, 0) + 1
    of = KindInference(scope, kinds).of
    decided = {}
    for s in walk(fn):
        if (
            isinstance(s, gast.Assign)
            and isinstance(s.targets[0], gast.Name)
            and stores.get(s.targets[0].id) == 1
            and (answer := _complex_test(s.value, scope, of)) is not None
        ):
            decided[s.targets[0].id] = answer
    dropped = []

    def each(s):
        if isinstance(s, gast.If) and isinstance(s.test, gast.Name) and s.test.id in decided:
            dropped.append(s)
            return s.body if decided[s.test.id] else s.orelse
        return [s]

    fn.body = expand_statements(fn.body, each)
    return bool(dropped)


def _complex_test(value, scope, of):
    """What ``np.iscomplexobj(x)`` or ``np.isrealobj(x)`` gives, where the kind of ``x``
    decides it; else None."""
    if not (isinstance(value, gast.Call) and len(value.args) == 1 and not value.keywords):
        return None
    test = scope.lookup(value.func)
    if test is not np.iscomplexobj and test is not np.isrealobj:
        return None
    kind = of(value.args[0])
    if is_complex(kind):
        is_complex_value = True
    elif is_real_or_int(kind):
        is_complex_value = False
    else:
        return None
    return is_complex_value if test is np.iscomplexobj else not is_complex_value


def write_out(parsed, fn, scope, kinds, namer, item_reads=None):
    """Write out the forms of the module docstring. ``item_reads``: the ids of the
    statements reading a loop's item (``x = xs[i]``, front/lowering/loops.py), each with
    whether its loop was over ``d.items()``, ``.values()`` or ``.keys()``. Returns the
    names made (the caller infers kinds again; a form whose items' kinds were not yet known
    may then be written out by another call)."""
    constants = {
        s.targets[0].id: value
        for s in walk(fn)
        if isinstance(s, gast.Assign)
        and isinstance(s.targets[0], gast.Name)
        and (value := _literal(s.value)) is not _NOT_CONSTANT
    }
    writer = _Writer(parsed, scope, namer, KindInference(scope, kinds).of, constants)

    def each(s):
        if isinstance(s, gast.For):
            return writer.keys_of_dicts(s, item_reads or {})  # the names it makes: in writer.made
        if not isinstance(s, gast.Assign) or not isinstance(s.targets[0], gast.Name):
            return [s]
        written = writer.concatenation(s) or writer.gradients(s) or writer.dict_view(s)
        if written is None:
            return [s]
        writer.made.extend(t.targets[0].id for t in written[:-1])
        return written

    fn.body = expand_statements(fn.body, each)
    return writer.made


@dataclass
class _Writer:
    parsed: object
    scope: object
    namer: object
    of: Callable
    constants: dict  # the names assigned a literal (a tuple of axes), and its value
    made: list = field(default_factory=list)

    def concatenation(self, s):
        """``t = np.r_[items]`` written as ``t_parts = [...]; t = np.concatenate(t_parts)``,
        after the statements making its items arrays; None where ``s`` is not such a
        statement or an item's rank is not known."""
        value = s.value
        if not isinstance(value, gast.Subscript):
            return None
        base = self.scope.lookup(value.value)
        form = next((f for c, f in _CONCATENATORS if base is c), None)
        if form is None:
            return None
        items = list(value.slice.elts) if isinstance(value.slice, gast.Tuple) else [value.slice]
        axis, ndmin, trans1d = form
        if _directive(items[:1]) is not None:
            axis, ndmin, trans1d = self.directive(s, _directive(items[:1]), form)
            items = items[1:]
        if any(_directive([i]) is not None for i in items):
            raise unsupported(
                self.parsed, s, "a directive string after the first item of np.r_/np.c_"
            )
        before, parts = [], []
        for item in items:
            ndim = None
            if isinstance(item, gast.Slice):  # a range: a 1-d array, then as any other
                item = self.assigned(before, self.range(item), "arange", s)
                ndim = 1
            piece = self.piece(item, ndim, ndmin, trans1d)
            if piece is False:
                return None
            parts.append(item if piece is None else self.assigned(before, *piece, s))
        target = s.targets[0].id
        listed = self.assigned(before, gast.List(elts=parts, ctx=gast.Load()), f"{target}_parts", s)
        keywords = [] if axis == 0 else [gast.keyword(arg="axis", value=gast.Constant(axis, None))]
        return [*before, assign(target, self.np_call("concatenate", [listed], keywords), s)]

    def assigned(self, before, value, base, at):
        """A fresh name, assigned ``value`` by a statement put in ``before``."""
        made = self.namer.fresh(base)
        before.append(assign(made, value, at))
        return name(made)

    def directive(self, s, text, form):
        """(axis, ndmin, trans1d) of a directive string, as NumPy reads it."""
        axis, ndmin, trans1d = form
        try:
            if "," in text:
                numbers = [int(p) for p in text.split(",")]
                axis, ndmin = numbers[:2]
                trans1d = numbers[2] if len(numbers) == 3 else trans1d
            else:
                axis = int(text)
        except ValueError:
            raise unsupported(
                self.parsed,
                s,
                f"np.r_/np.c_ with the directive {text!r} (a matrix, or not a directive)",
                "join the arrays with np.concatenate([...], axis=...)",
            ) from None
        return axis, ndmin, trans1d

    def piece(self, item, ndim, ndmin, trans1d):
        """(call, name) making ``item`` an array of rank at least ``ndmin`` as NumPy's
        concatenators do; None for an item that is one already; False where its rank is
        not known."""
        if ndim is None:
            kind = self.of(item)
            ndim = 0 if kind.scalar else kind.ndim if kind.tag is Tag.ARRAY else None
        if ndim is None:
            if ndmin == 1:  # NumPy makes any array-like at least 1-d: the same call here
                return self.np_call("atleast_1d", [item]), _named(item, "1d")
            return False
        if ndim >= ndmin:
            return None
        if ndim == 0 and ndmin == 1:
            return self.np_call("atleast_1d", [item]), _named(item, "1d")
        if ndim == 0:
            shape = _constant_tuple([1] * ndmin)
            return self.np_call("reshape", [item, shape]), _named(item, f"{ndmin}d")
        # NumPy's array(item, ndmin=ndmin) puts the new axes first; a trans1d other than -1
        # then moves the item's own axes to start at axis trans1d
        new = ndmin - ndim
        start = new if trans1d == -1 else (trans1d + new + 1 if trans1d < 0 else trans1d)
        axes = [a for a in range(ndmin) if not start <= a < start + ndim]
        axis = gast.Constant(axes[0], None) if len(axes) == 1 else _constant_tuple(axes)
        word = "column" if (ndim, ndmin, axes) == (1, 2, [1]) else f"{ndmin}d"
        return self.np_call("expand_dims", [item, axis]), _named(item, word)

    def range(self, item):
        """A slice in np.r_: ``np.arange`` of its bounds, or ``np.linspace`` for a complex
        step (a number of points)."""
        start = item.lower if item.lower is not None else gast.Constant(0, None)
        step = item.step
        if isinstance(step, gast.Constant) and isinstance(step.value, complex):
            points = gast.keyword(arg="num", value=gast.Constant(int(abs(step.value)), None))
            return self.np_call("linspace", [start, item.upper], [points])
        bounds = [start, item.upper] if item.lower is not None or step is not None else [item.upper]
        return self.np_call("arange", [*bounds, *([step] if step is not None else [])])

    def keys_of_dicts(self, loop, item_reads):
        """A loop over a dict runs over its keys: each item read ``k = d[i]`` of a dict
        ``d`` is ``k = d_keys[i]``, with ``d_keys = list(d)`` before the loop (inside it,
        where ``d`` is assigned in the loop)."""
        before, body = [], []
        for s in loop.body:
            read = s.value if id(s) in item_reads else None
            if read is not None and item_reads[id(s)] and self.of(read.value).tag is not Tag.DICT:
                raise unsupported(
                    self.parsed,
                    s,
                    f"a loop over .items(), .values() or .keys() of {unparse(read.value)}, "
                    f"which is not known to be a dict ({self.of(read.value).describe()})",
                    "loop over a dict, or over the keys as a list",
                )
            if read is not None and self.of(read.value).tag is Tag.DICT:
                listed = gast.Call(func=self.builtin(list), args=[read.value], keywords=[])
                inside = read.value.id in stored_names(loop.body)
                keys = self.assigned(body if inside else before, listed, f"{read.value.id}_keys", s)
                self.made.append(keys.id)
                s.value = gast.Subscript(value=keys, slice=read.slice, ctx=gast.Load())
                del item_reads[id(s)]  # written out: a key of the list of keys from here
            body.append(s)
        loop.body = body
        return [*before, loop]

    def dict_view(self, s):
        """``t = d.items()`` (``.values()``, ``.keys()``) of a dict whose keys the kinds
        know: the list it holds, ``t = [("a", d_a), ("b", d_b)]`` with ``d_a = d["a"]``;
        None where ``s`` is not such a statement."""
        call = s.value
        if not (
            isinstance(call, gast.Call)
            and isinstance(call.func, gast.Attribute)
            and call.func.attr in ("items", "values", "keys")
            and isinstance(call.func.value, gast.Name)
            and not call.args
            and not call.keywords
        ):
            return None
        owner = call.func.value
        kind = self.of(owner)
        if kind.tag is not Tag.DICT or kind.fields is None:
            return None
        before, entries = [], []
        for key in kind.fields:
            if call.func.attr != "keys":
                read = gast.Subscript(
                    value=name(owner.id), slice=gast.Constant(key, None), ctx=gast.Load()
                )
                value = self.assigned(before, read, f"{owner.id}_{key}", s)
            if call.func.attr == "items":
                pair = gast.Tuple(elts=[gast.Constant(key, None), value], ctx=gast.Load())
                value = self.assigned(before, pair, "pair", s)
            entries.append(gast.Constant(key, None) if call.func.attr == "keys" else value)
        listed = gast.List(elts=entries, ctx=gast.Load())
        return [*before, assign(s.targets[0].id, listed, s)]

    def builtin(self, fn):
        """A builtin by its own name (never shadowed: see vocabulary.naming.Namer)."""
        self.scope.free.setdefault(fn.__name__, fn)
        self.scope.locals.discard(fn.__name__)  # the namer's reservation of it is no local
        return name(fn.__name__)

    def gradients(self, s):
        """``g = np.gradient(f)`` of an n-d ``f``: ``g = (g_axis0, ..., g_axisN)``, each one
        ``np.gradient`` along an axis with its step; None where ``s`` is not such a
        statement."""
        call = s.value
        if not isinstance(call, gast.Call) or self.scope.lookup(call.func) is not np.gradient:
            return None
        if not call.args or any(isinstance(a, gast.Starred) for a in call.args):
            return None
        kind = self.of(call.args[0])
        given = next((k.value for k in call.keywords if k.arg == "axis"), None)
        axis = None if given is None else self.constant(given)
        if axis is _NOT_CONSTANT:
            return None  # computed: refused by the rule unless it is one axis
        axes = _gradient_axes(axis, kind.ndim if kind.tag is Tag.ARRAY else None)
        spacing = call.args[1:]
        if axes is None or len(spacing) not in (0, 1, len(axes)):
            return None  # one array, or NumPy's own error when it runs
        rest = [k for k in call.keywords if k.arg != "axis"]
        before, parts = [], []
        for i, axis in enumerate(axes):
            step = spacing[i : i + 1] if len(spacing) > 1 else spacing
            along = gast.keyword(arg="axis", value=gast.Constant(axis, None))
            one = gast.Call(func=call.func, args=[call.args[0], *step], keywords=[*rest, along])
            parts.append(self.assigned(before, one, f"{s.targets[0].id}_axis{axis}", s))
        return [*before, assign(s.targets[0].id, gast.Tuple(elts=parts, ctx=gast.Load()), s)]

    def constant(self, atom):
        """The value of a literal or of a local name assigned one; else ``_NOT_CONSTANT``
        (a global's value is not folded into a rule: the rule follows it as it changes)."""
        if isinstance(atom, gast.Name):
            return self.constants.get(atom.id, _NOT_CONSTANT)
        return _literal(atom)

    def np_call(self, function, args, keywords=()):
        numpy = self.scope.bind(np, self.namer, "np")
        return gast.Call(func=attribute(numpy, function), args=list(args), keywords=list(keywords))


_NOT_CONSTANT = object()


def _directive(items):
    """The directive string ``items`` starts with (``"0,2"``), or None."""
    first = items[0] if items else None
    if isinstance(first, gast.Constant) and isinstance(first.value, str):
        return first.value
    return None


def _gradient_axes(axis, ndim):
    """The axes ``np.gradient`` returns one array for, when that is more than one: all of
    an n-d array's without ``axis=`` (None), or those of a tuple; else None."""
    if ndim is None:
        return None
    if axis is None:
        return list(range(ndim)) if ndim > 1 else None
    if isinstance(axis, tuple) and len(axis) > 1 and all(isinstance(a, int) for a in axis):
        return [a % ndim for a in axis]
    return None


def _literal(expr):
    """The value of a literal expression (``(-1, 0)``), or ``_NOT_CONSTANT``."""
    try:
        return ast.literal_eval(gast.gast_to_ast(expr))
    except (ValueError, TypeError, SyntaxError, AttributeError):
        return _NOT_CONSTANT


def _named(item, word):
    """A name for an item made an array: ``c_1d``, ``x_column``; ``word`` for a constant."""
    return f"{item.id}_{word}" if isinstance(item, gast.Name) else word


def _constant_tuple(values):
    return gast.Tuple(elts=[gast.Constant(v, None) for v in values], ctx=gast.Load())
