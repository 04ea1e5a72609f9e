"""Stage for_numba (``backend="numba"``): a derived rule written in the subset Numba compiles.

Takes the generated functions after every other stage (names still those of the SSA form,
whose kinds are known) and the tapes the forward sweep keeps; guarantees the same
computation, in code ``numba.njit`` compiles to machine code:

* each function is decorated ``@numba.njit(cache=True)`` (compiled on its first call,
  kept on disk beside the module);
* a reverse loop runs down a range, ``range(n - 1, -1, -1)``, not ``reversed(range(n))``;
* a tape of numbers is an array of their dtype: allocated before its loop and written by
  the loop's index (``y_tape[i] = y``) when the loop is ``for i in range(n)`` with no
  ``break`` (it runs ``n`` times), else a list the forward sweep hands over as an array
  (``np.asarray``); a tape of arrays is a ``numba.typed.List``. Never a list holding None;
* a value a path leaves unset, which a tape still keeps, starts as a value of its type
  (``0.0``, ``0``, ``False``, an empty array of its dimensions) instead of
  ``runtime.UNSET``;
* what Numba cannot compile is refused here, naming the primal line: a call of
  tangent_ast's runtime helpers (the NumPy backend's), or a value whose type is not known.

    for i in range(n):          forward sweep:                    reverse sweep:
        y = y * x        ->     y_1_tape = np.empty(max(n, 0))    for i in range(n - 1, -1, -1):
                                for i in range(n):                    y = y_1_tape[i]
                                    y_1_tape[i] = y                   ...
                                    y = y * x

>>> import tangent_ast as ta
>>> def f(x, n):
...     y = x
...     for i in range(n):
...         y = y * x
...     return y
>>> print(ta.show(f, mode="reverse", args=(1.5, 3), backend="numba"))
\"\"\"Reverse rule of f, derived by tangent_ast ...
...
# backend: numba
...
import numba
import numpy as np
<BLANKLINE>
<BLANKLINE>
@numba.njit(cache=True)
def f_fwd(x, n):
    y = x  # line 2
    y_1_tape = np.empty(max(n, 0))
    for i in range(n):  # line 3
        y_1_tape[i] = y
        y = y * x  # line 4
    return y, (x, n, y_1_tape)  # line 5
<BLANKLINE>
<BLANKLINE>
@numba.njit(cache=True)
def f_bwd(saved, ct_y):
    x, n, y_1_tape = saved
    ct_x = 0.0  # line 3
    for i in range(n - 1, -1, -1):
        y = y_1_tape[i]
        ct_x = ct_x + ct_y * y  # line 4
        ct_y = ct_y * x
    ct_x = ct_x + ct_y  # line 2
    return ct_x
<BLANKLINE>
"""

from dataclasses import dataclass

import gast
import numpy as np

from .. import runtime
from ..emit.emit import ModuleReference
from ..errors import TangentAstError
from ..vocabulary.kinds import UNKNOWN, Kind, Tag
from ..vocabulary.syntax import assign, attribute, name, replace_node, stored_names
from ..vocabulary.trees import copy_tree, walk
from .tapes import breaks_early

NUMBA = ModuleReference("numba")
COMPILED_RUNTIME = ModuleReference("tangent_ast.runtime.compiled")
# the runtime helpers tangent_ast.runtime.compiled gives Numba a version of (read without
# importing it: it imports Numba)
COMPILED_HELPERS = frozenset(
    {
        *("broadcast_like", "extremum_vjp", "getitem_vjp", "mean_vjp", "only_shape"),
        *("power_derivative", "real_like", "safe_divide", "sum_vjp", "unbroadcast", "xlogy"),
        *("zero_tangent", "zeros_like"),
    }
)
# the dtype of a tape of numbers of each kind (None: np.empty's own, float64)
_TAPE_DTYPES = {Tag.FLOAT: None, Tag.INT: "int64", Tag.BOOL: "bool_", Tag.COMPLEX: "complex128"}
_PLACEHOLDERS = {Tag.FLOAT: 0.0, Tag.INT: 0, Tag.BOOL: False, Tag.COMPLEX: 0j}


@dataclass
class NumbaLowering:
    """What the stage needs of the derivation: the kinds of the SSA names, the namespace
    generated code reads its globals from, where a primal line is (for refusals)."""

    kinds: dict
    namespace: object  # emit.ModuleNamespace
    where: object  # line number -> "file:line"
    qualname: str
    result: Kind = UNKNOWN  # the kind of the function's output

    def lower(self, functions, tapes=()):
        """Rewrite ``functions`` (in place); ``tapes``: the names of the forward sweep's
        tapes and, for each, the name of the value it keeps."""
        numba = self.namespace.bind("numba", NUMBA)
        self.np = self.namespace.bind("np", np)
        for fn in functions:
            _reverse_ranges(fn)
            self._placeholders(fn)
            self._tapes(fn, dict(tapes))
            self._refuse_runtime(fn)
        for bound, obj in self.namespace.objects.items():
            if obj is runtime:
                self.namespace.objects[bound] = COMPILED_RUNTIME
        for fn in functions:
            njit = gast.Call(
                func=attribute(numba, "njit"),
                args=[],
                keywords=[gast.keyword(arg="cache", value=gast.Constant(True, None))],
            )
            fn.decorator_list = [njit]

    def _placeholders(self, fn):
        """``v = runtime.UNSET`` -> ``v = 0.0`` (a value of ``v``'s type); so is ``v = None``
        for a residual set on other paths (what a function of Numba's returns must have one
        type)."""
        for st in walk(fn):
            if not isinstance(st, gast.Assign) or not isinstance(st.targets[0], gast.Name):
                continue
            v = st.targets[0].id
            if self._is_runtime(st.value, "UNSET"):
                st.value = self._placeholder(v, st, self._kind_of_name(fn, v))
            elif isinstance(st.value, gast.Constant) and st.value.value is None:
                kind = self._kind_of_name(fn, v)
                if kind.tag is not Tag.UNKNOWN:
                    st.value = self._placeholder(v, st, kind)

    def _kind_of_name(self, fn, v):
        """The kind of ``v``, or of a name it is copied to or from (the versions of one
        variable that meet at a join must have one type): known, the output's (the first
        value ``fn`` returns), or that of a value assigned to one of them."""
        returned = fn.body[-1].value if isinstance(fn.body[-1], gast.Return) else None
        output = (
            returned.elts[0].id
            if isinstance(returned, gast.Tuple) and isinstance(returned.elts[0], gast.Name)
            else None
        )
        versions = _copies_of(fn, v)
        for w in versions:
            if self.kinds.get(w, UNKNOWN).tag is not Tag.UNKNOWN:
                return self.kinds[w]
            if w == output and self.result.tag is not Tag.UNKNOWN:
                return self.result
        for st in walk(fn):
            if isinstance(st, gast.Assign) and any(_assigns(st, w) for w in versions):
                kind = self._kind_of(st.value)
                if kind.tag is not Tag.UNKNOWN:
                    return kind
        return UNKNOWN

    def _kind_of(self, expr):
        """The kind of a name, of an element of an array (``y[0]``, ``y[i, j]``), or of
        arithmetic of numbers of known kinds."""
        if isinstance(expr, gast.Name):
            return self.kinds.get(expr.id, UNKNOWN)
        if isinstance(expr, gast.Constant) and type(expr.value) in (float, int, bool):
            return Kind({float: Tag.FLOAT, int: Tag.INT, bool: Tag.BOOL}[type(expr.value)])
        if isinstance(expr, gast.BinOp):
            tags = {self._kind_of(expr.left).tag, self._kind_of(expr.right).tag}
            if tags <= {Tag.FLOAT, Tag.INT, Tag.BOOL} and Tag.FLOAT in tags:
                return Kind(Tag.FLOAT)
            return UNKNOWN
        if not isinstance(expr, gast.Subscript) or not isinstance(expr.value, gast.Name):
            return UNKNOWN
        array = self.kinds.get(expr.value.id, UNKNOWN)
        index = expr.slice.elts if isinstance(expr.slice, gast.Tuple) else [expr.slice]
        whole = all(
            (isinstance(i, gast.Constant) and type(i.value) is int)
            or (isinstance(i, gast.Name) and self.kinds.get(i.id, UNKNOWN).tag is Tag.INT)
            for i in index
        )
        if array.tag is not Tag.ARRAY or not whole or len(index) != array.ndim:
            return UNKNOWN
        return Kind({"f": Tag.FLOAT, "c": Tag.COMPLEX}.get(array.dtype, Tag.UNKNOWN))

    def _placeholder(self, v, st, kind):
        if kind.tag in _PLACEHOLDERS:
            return gast.Constant(_PLACEHOLDERS[kind.tag], None)
        if kind.tag is Tag.ARRAY and kind.ndim is not None and kind.dtype in ("f", "c"):
            shape = gast.Tuple(elts=[gast.Constant(0, None)] * kind.ndim, ctx=gast.Load())
            dtype = attribute(self.np, "complex128" if kind.dtype == "c" else "float64")
            return gast.Call(
                func=attribute(self.np, "empty"),
                args=[shape, dtype],
                keywords=[],
            )
        raise self._refusal(
            st,
            f"'{v}' is set on some paths of a loop only, and it is {kind.describe()}",
            "Numba needs a value of its type on every path: set it before the branch",
        )

    def _tapes(self, fn, tapes):
        made = {
            st.targets[0].id: st
            for st in fn.body
            if isinstance(st, gast.Assign)
            and isinstance(st.targets[0], gast.Name)
            and st.targets[0].id in tapes
            and isinstance(st.value, gast.List)
        }
        for tape, creation in made.items():
            kind = self.kinds.get(tapes[tape]) or _counter_kind(fn, tapes[tape])
            appends = _appends(fn, tape)
            loop = _counted_loop(fn, appends)
            if kind.tag in _TAPE_DTYPES and loop is not None:
                self._preallocate(fn, creation, loop, appends, _TAPE_DTYPES[kind.tag])
            elif kind.tag in _TAPE_DTYPES:
                _hand_over_as_array(fn, tape, self.np)
            else:
                numba = attribute(self.namespace.bind("numba", NUMBA), "typed")
                typed_list = gast.Attribute(value=numba, attr="List", ctx=gast.Load())
                creation.value = gast.Call(func=typed_list, args=[], keywords=[])

    def _preallocate(self, fn, creation, loop, appends, dtype):
        tape = creation.targets[0].id
        fn.body.remove(creation)
        start = _start_of(loop)
        count = loop.iter.args[-1]
        if start is not None:  # range(a, b) runs b - a times
            count = gast.BinOp(left=count, op=gast.Sub(), right=copy_tree(start))
        length = count
        if not _surely_not_negative(count):
            length = gast.Call(func=name("max"), args=[count, gast.Constant(0, None)], keywords=[])
        keywords = (
            [] if dtype is None else [gast.keyword(arg="dtype", value=attribute(self.np, dtype))]
        )
        allocation = assign(
            tape, gast.Call(func=attribute(self.np, "empty"), args=[length], keywords=keywords)
        )
        fn.body.insert(fn.body.index(loop), allocation)
        for st in appends:
            index = name(loop.target.id)
            if start is not None:  # iteration k of range(a, b) has i == a + k
                index = gast.BinOp(left=index, op=gast.Sub(), right=copy_tree(start))
            write = gast.Assign(
                targets=[gast.Subscript(value=name(tape), slice=index, ctx=gast.Store())],
                value=st.value.args[0],
                type_comment=None,
            )
            gast.copy_location(write, st)
            replace_node(fn, st, write)

    def _refuse_runtime(self, fn):
        """Refuse a runtime helper with no compiled version; read the others from
        ``tangent_ast.runtime.compiled``."""
        for st in _statements(fn):
            for n in _own_expressions(st):
                if (
                    isinstance(n, gast.Attribute)
                    and self._is_runtime(n, None)
                    and n.attr not in COMPILED_HELPERS
                ):
                    raise self._refusal(
                        st,
                        f"the derivative calls runtime.{n.attr}, which Numba cannot compile",
                        "write that line another way (a float64[d] signature with named axes "
                        "often makes shapes known and such helpers unnecessary), or derive "
                        "with backend='numpy'",
                    )

    def _is_runtime(self, expr, attr):
        return (
            isinstance(expr, gast.Attribute)
            and isinstance(expr.value, gast.Name)
            and self.namespace.objects.get(expr.value.id) is runtime
            and (attr is None or expr.attr == attr)
        )

    def _refusal(self, st, what, hint):
        line = getattr(st, "lineno", None)
        return TangentAstError(
            f"backend='numba': {what} (in the rule of {self.qualname})",
            where=self.where(line),
            hint=hint,
        )


def _reverse_ranges(fn):
    """``for k in reversed(range(a, b))`` -> ``for k in range(b - 1, a - 1, -1)``."""
    for loop in walk(fn):
        if not isinstance(loop, gast.For):
            continue
        inner = _call_of(loop.iter, "reversed")
        ranged = inner is not None and _call_of(inner.args[0], "range")
        if not ranged or len(ranged.args) > 2:
            continue
        start = ranged.args[0] if len(ranged.args) == 2 else gast.Constant(0, None)
        stop = ranged.args[-1]
        loop.iter = gast.Call(
            func=name("range"),
            args=[_minus_one(stop), _minus_one(start), _integer(-1)],
            keywords=[],
        )


def _minus_one(expr):
    if isinstance(expr, gast.Constant) and type(expr.value) is int:
        return _integer(expr.value - 1)
    return gast.BinOp(left=expr, op=gast.Sub(), right=gast.Constant(1, None))


def _integer(value):
    """An int as Python reads it back: ``-1`` is a minus applied to 1."""
    if value < 0:
        return gast.UnaryOp(op=gast.USub(), operand=gast.Constant(-value, None))
    return gast.Constant(value, None)


def _call_of(expr, builtin):
    if (
        isinstance(expr, gast.Call)
        and isinstance(expr.func, gast.Name)
        and expr.func.id == builtin
        and len(expr.args) >= 1
        and not expr.keywords
    ):
        return expr
    return None


def _counter_kind(fn, v):
    """The kind of a value of the derivation's own (a trip counter, ``trips = trips + 1``):
    INT when every assignment of it is an int constant or adds one to it; else unknown."""
    values = [st.value for st in walk(fn) if isinstance(st, gast.Assign) and _assigns(st, v)]

    def counts(value):
        if isinstance(value, gast.Constant):
            return type(value.value) is int
        return (
            isinstance(value, gast.BinOp)
            and isinstance(value.left, gast.Name)
            and value.left.id == v
            and counts(value.right)
        )

    return Kind(Tag.INT) if values and all(map(counts, values)) else UNKNOWN


def _copies_of(fn, v):
    """``v`` and the names copied to or from it in ``fn`` (``w = v``, ``v = w``), and theirs."""
    edges = {}
    for st in walk(fn):
        if (
            isinstance(st, gast.Assign)
            and len(st.targets) == 1
            and isinstance(st.targets[0], gast.Name)
            and isinstance(st.value, gast.Name)
        ):
            a, b = st.targets[0].id, st.value.id
            edges.setdefault(a, set()).add(b)
            edges.setdefault(b, set()).add(a)
    found, todo = {v}, [v]
    while todo:
        for w in edges.get(todo.pop(), ()):
            if w not in found:
                found.add(w)
                todo.append(w)
    return [v, *sorted(found - {v})]


def _assigns(st, v):
    return len(st.targets) == 1 and isinstance(st.targets[0], gast.Name) and st.targets[0].id == v


def _appends(fn, tape):
    return [
        st
        for st in walk(fn)
        if isinstance(st, gast.Expr)
        and isinstance(st.value, gast.Call)
        and isinstance(st.value.func, gast.Attribute)
        and st.value.func.attr == "append"
        and isinstance(st.value.func.value, gast.Name)
        and st.value.func.value.id == tape
    ]


def _counted_loop(fn, appends):
    """The loop of ``fn``'s body that runs ``for i in range(n)`` (or ``range(a, b)``) to its
    end (no break, no return) and holds every append directly (no loop between): then
    iteration ``i`` appends once, as ``tape[i]`` (``tape[i - a]``). None otherwise."""
    for loop in fn.body:
        if not isinstance(loop, gast.For) or not any(a is n for a in appends for n in walk(loop)):
            continue
        ranged = _call_of(loop.iter, "range")
        counts_by_one = ranged is not None and len(ranged.args) in (1, 2)
        if not counts_by_one or not isinstance(loop.target, gast.Name):
            return None
        inner = [n for n in walk(loop) if n is not loop]
        nested = [n for n in inner if isinstance(n, (gast.For, gast.While))]
        if any(isinstance(n, gast.Return) for n in inner) or breaks_early(loop):
            return None
        if any(a is n for loop_ in nested for a in appends for n in walk(loop_)):
            return None
        count_names = {n.id for a in ranged.args for n in walk(a) if isinstance(n, gast.Name)}
        if count_names & (stored_names(loop.body) | {loop.target.id}):
            return None
        return loop
    return None


def _start_of(loop):
    """The first index of ``for i in range(a, b)``: ``a``; None for ``range(n)`` and
    ``range(0, n)``."""
    if len(loop.iter.args) == 1:
        return None
    start = loop.iter.args[0]
    return None if isinstance(start, gast.Constant) and start.value == 0 else start


def _surely_not_negative(expr):
    """A count that cannot be negative: a constant, ``len(...)``, a shape's entry."""
    if isinstance(expr, gast.Constant):
        return isinstance(expr.value, int) and expr.value >= 0
    if isinstance(expr, gast.Call):
        return isinstance(expr.func, gast.Name) and expr.func.id == "len"
    return (
        isinstance(expr, gast.Subscript)
        and isinstance(expr.value, gast.Attribute)
        and expr.value.attr == "shape"
    )


def _hand_over_as_array(fn, tape, np_name):
    """The forward sweep returns the tape ``np.asarray(tape)``: an array, not a list Numba
    would convert element by element when it hands it to Python."""
    returned = fn.body[-1]
    for n in walk(returned):
        if isinstance(n, gast.Tuple):
            n.elts = [
                gast.Call(func=attribute(np_name, "asarray"), args=[e], keywords=[])
                if isinstance(e, gast.Name) and e.id == tape
                else e
                for e in n.elts
            ]


def _statements(fn):
    return [n for n in walk(fn) if isinstance(n, gast.stmt) and n is not fn]


def _own_expressions(st):
    """The expressions of statement ``st``, not those of the statements it holds."""
    for child in gast.iter_child_nodes(st):
        if isinstance(child, gast.stmt):
            continue
        yield from walk(child)
