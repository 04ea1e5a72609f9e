"""Which values are new arrays, no other name holding them, and which calls may return an
array they were given.

An array the function makes may be updated in place as it likes; one that another name,
a container or the caller may also hold may not (:mod:`tangent_ast.front.aliasing`).
:func:`fresh_array` says which values surely make a new array: constructors and copies,
arithmetic, ufuncs, the NumPy functions that always make their result, and the user's
helpers every ``return`` of which makes one. :func:`may_return_what_it_is_given` says which
calls may hand back an array they were given, or a part of one.

>>> import gast, numpy as np
>>> from tangent_ast.front.parse import parse
>>> from tangent_ast.front.resolve import resolve
>>> def f(x):
...     return np.where(x > 0.0, x, 0.0) + np.reshape(x, 3) + next(iter([x]))
>>> scope = resolve(parse(f))
>>> written = ("x * 2.0", "np.where(x > 0.0, x, 0.0)", "np.reshape(x, 3)", "next(iter([x]))")
>>> calls = [gast.parse(c).body[0].value for c in written]
>>> [fresh_array(c, scope) for c in calls]
[True, True, False, False]
>>> [may_return_what_it_is_given(c, scope) for c in calls]
[False, False, False, True]
"""

import builtins
import inspect
import weakref

import gast
import numpy as np

from .. import runtime
from ..errors import TangentAstError
from ..vocabulary.code_keys import is_library
from .parse import parse
from .resolve import resolve

FRESH = (
    "zeros",
    "ones",
    "empty",
    "full",
    "zeros_like",
    "ones_like",
    "empty_like",
    "full_like",
    "array",
    "copy",
    "linspace",
    "eye",
    "identity",
    "arange",
    "outer",
    "kron",
    "concatenate",
    "stack",
    "vstack",
    "hstack",
    "column_stack",
    "tile",
    "repeat",
    "cumsum",
    "cumprod",
    "sort",
    "cross",
    "tensordot",
)


# NumPy functions whose result, when it is an array, is always a new one (a scalar for a
# scalar argument: not in FRESH, which also says "an array")
NEW = (
    "where",
    "clip",
    "sum",
    "mean",
    "prod",
    "max",
    "min",
    "amax",
    "amin",
    "std",
    "var",
    "average",
    "median",
    "dot",
    "matmul",
    "inner",
    "round",
    "around",
    "triu",
    "tril",
    "pad",
    "roll",
    "append",
    "insert",
    "delete",
    "nan_to_num",
    "interp",
    "convolve",
    "polyval",
)
# methods that always make their result, with names only NumPy's arrays are likely to have
_NEW_BY_METHOD = {"flatten", "astype"}


_RETURNS_NEW: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # function -> new?


def _returns_new_array(obj):
    """A plain function of the user's program each of whose ``return``s gives an expression
    that makes a new array (``return a * 2.0``, not a name: a name may be kept elsewhere)."""
    module = getattr(obj, "__module__", None) or ""
    if (
        not inspect.isfunction(obj)
        or obj.__name__ == "<lambda>"
        or is_library(module)
        or module.partition(".")[0] == "tangent_ast"  # its runtime: rules say what it makes
    ):
        return False
    if obj not in _RETURNS_NEW:
        _RETURNS_NEW[obj] = False  # (while it is read: a helper calling itself is not new)
        try:
            parsed = parse(obj)
            scope = resolve(parsed)
        except TangentAstError:
            return False
        nodes = list(gast.walk(parsed.node))
        returns = [n for n in nodes if isinstance(n, gast.Return)]
        nested = [n for n in nodes[1:] if isinstance(n, (gast.FunctionDef, gast.Lambda))]
        parents = {id(c): n for n in nodes for c in gast.iter_child_nodes(n)}
        params = {a.id for a in parsed.node.args.args}
        _RETURNS_NEW[obj] = (
            bool(returns)
            and not nested
            and all(
                r.value is not None
                and (
                    fresh_array(r.value, scope)
                    or _made_and_kept_here(r.value, nodes, parents, params, scope)
                )
                for r in returns
            )
        )
    return _RETURNS_NEW[obj]


# what an array a function made may be read by and still be its own at the return: the
# operands of arithmetic and comparisons, its shape, an item written or read in arithmetic
_READS_THAT_KEEP_NOTHING = (gast.BinOp, gast.UnaryOp, gast.Compare, gast.Return)


def _made_and_kept_here(value, nodes, parents, params, scope):
    """``return out`` where ``out`` is a name of the function's own, bound only to new
    arrays (``out = t * 2.0``, ``out += v``, ``out[i] = v``) and read only where nothing
    keeps it (arithmetic, its shape, an item): the array returned is new."""
    if not isinstance(value, gast.Name) or value.id in params:
        return False
    uses = [n for n in nodes if isinstance(n, gast.Name) and n.id == value.id]
    for use in uses:
        parent = parents.get(id(use))
        if isinstance(use.ctx, gast.Store):
            bound_new = isinstance(parent, gast.AugAssign) or (
                isinstance(parent, gast.Assign)
                and len(parent.targets) == 1
                and parent.targets[0] is use
                and fresh_array(parent.value, scope)
            )
            if not bound_new:
                return False
        elif isinstance(parent, gast.Attribute) and parent.attr in ("shape", "ndim", "size"):
            continue
        elif isinstance(parent, gast.Subscript) and parent.value is use:
            if not (
                isinstance(parent.ctx, gast.Store)
                or isinstance(parents.get(id(parent)), _READS_THAT_KEEP_NOTHING[:3])
            ):
                return False
        elif not isinstance(parent, (*_READS_THAT_KEEP_NOTHING, gast.AugAssign)):
            return False
    return True


def _copies_by_default(keywords):
    """No ``out=`` (the result is that array), no ``copy=`` other than True, no ``**``."""
    return all(
        k.arg not in ("out", None)
        and not (
            k.arg == "copy" and not (isinstance(k.value, gast.Constant) and k.value.value is True)
        )
        for k in keywords
    )


def new_array_call(call, obj):
    """Whether ``call``, a call of ``obj``, surely returns a new array: a NumPy function of
    :data:`FRESH` given no ``out=`` (the result is that array) and no ``copy=`` other than
    True (``np.array(x, copy=False)`` is ``x`` itself when no copy is needed)."""
    return any(obj is getattr(np, f, None) for f in FRESH) and _copies_by_default(call.keywords)


def fresh_array(value, scope):
    """A value that is a new array no other name refers to: a constructor, a copy, the
    result of arithmetic (``x * 1.0``, ``-x``, ``a @ b``), of a ufunc (``np.sin(x)``) or of
    a NumPy function or method that always makes its result (``np.where(c, x, y)``,
    ``np.sum(m, axis=0)``, ``x.flatten()``), either of two such (``a if c else b``), the
    cotangent of a slice (``runtime.getitem_vjp``: reverse rules add into it)."""
    if isinstance(value, (gast.List, gast.BinOp, gast.UnaryOp)):
        return True
    if isinstance(value, gast.IfExp):
        return fresh_array(value.body, scope) and fresh_array(value.orelse, scope)
    if not isinstance(value, gast.Call):
        return False
    func = value.func
    if isinstance(func, gast.Attribute) and func.attr == "copy":
        return True
    if _copies_by_default(value.keywords) and (
        (
            isinstance(func, gast.Attribute)
            and func.attr in _NEW_BY_METHOD
            and not scope.is_global_chain(func)
        )
        or any(scope.lookup(func) is getattr(np, f) for f in NEW)
    ):
        return True
    obj = scope.lookup(func)
    if obj is runtime.getitem_vjp:  # zeros with a cotangent placed: what reverse rules add into
        return True
    if _returns_new_array(obj):  # a helper of the user's: return a * 2.0
        return True
    if isinstance(obj, np.ufunc) and not value.keywords and len(value.args) == obj.nin:
        return True
    return new_array_call(value, obj)


def may_return_what_it_is_given(value, scope, receiver_class=None):
    """Whether ``value`` is a call that may return an array it was given, a view of one, or
    a part of a container or object it was given (``def ident(t): return t``, ``d.get(k)``,
    ``next(iter(xs))``, a method returning ``self.w``): a function of the user's program
    not known to make every array it returns (:func:`fresh_array`), a function value not
    known at all, a builtin that picks one of its arguments' parts, or a method of a value
    that is not an array (``receiver_class``: the class of the value whose method it is,
    when known). An update in place of what it returned may change that array."""
    if not isinstance(value, gast.Call) or fresh_array(value, scope):
        return False
    func = value.func
    if isinstance(func, gast.Name) and scope.is_local(func.id):
        return True  # a function value: what it returns is not known
    if isinstance(func, gast.Attribute) and not scope.is_global_chain(func):
        if receiver_class is np.ndarray:
            return False  # NumPy's methods: new arrays, or views (which are checked as such)
        method = getattr(receiver_class, func.attr, None)
        return method is None or not _returns_new_array(method)
    obj = scope.lookup(func)
    if any(obj is picker for picker in _PICKERS):
        return True
    module = getattr(obj, "__module__", None) or ""
    return (
        inspect.isfunction(obj)
        and not is_library(module)
        and module.partition(".")[0] != "tangent_ast"
    )


# builtins that return one of their arguments, or a part of one
_PICKERS = (builtins.next, builtins.getattr, builtins.max, builtins.min, builtins.iter)
