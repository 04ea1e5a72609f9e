"""Number literals of generated code written as floats where they meet a float.

Takes a finished generated function (simplified, before its names are restored), the names
known to hold floats, and the module's globals; guarantees that every ``int`` literal that
is an operand of ``+ - * /`` whose other operand is surely a float is a float literal of
the same value, and that nothing else changes.

Surely a float: a float literal, a ``math`` function's result, arithmetic of floats (and
int literals), a name given as a float, and a local name each of whose assignments is one
of those. The names given are those :func:`float_names` finds in the primal function from
its float parameters (the signature's kinds come from the arguments' values, so they are
sure; a kind *inferred* as float is not: ``np.sum`` of a bool array is called a float and
is an ``np.int64``), and the derivatives of floats (a tangent or cotangent parameter).

Why: the rules write ``2 * x`` and ``1 - y * y`` as mathematics is written, and CPython
adds and multiplies two floats on a fast path (its instructions specialised for float
operands), while an ``int`` operand takes the generic path and is converted first: some
15 ns an operation, a tenth of a scalar reverse sweep. The value is the same to the bit:
Python converts the int to the float it denotes (exactly, up to 2**53) before it computes,
complex arithmetic converts either to the same complex, and NumPy 2 converts a Python
number of either type to the dtype of the scalar or the (batched) array it meets.

>>> import gast
>>> from tangent_ast.vocabulary.syntax import unparse
>>> from tangent_ast.emit.emit import to_ast
>>> fn = gast.parse('''
... def f_bwd(saved, ct_out):
...     x, n = saved
...     ct_y = 2 * ct_out * x
...     ct_x = ct_y * (1 - x * x) + ct_y * n ** 2
...     return ct_x
... ''').body[0]
>>> write_float_literals(fn, {"x", "ct_out"}, namespace={})
>>> print(unparse(to_ast(fn)).split(chr(10), 1)[1])
    x, n = saved
    ct_y = 2.0 * ct_out * x
    ct_x = ct_y * (1.0 - x * x) + ct_y * n ** 2
    return ct_x
"""

import math

import gast

from ..vocabulary.trees import walk

# the math functions whose result is always a float
_FLOAT_MATH = frozenset(
    (math.sin, math.cos, math.tan, math.asin, math.acos, math.atan, math.atan2)
    + (math.sinh, math.cosh, math.tanh, math.asinh, math.acosh, math.atanh)
    + (math.exp, math.expm1, math.log, math.log1p, math.log2, math.log10, math.sqrt)
    + (math.pow, math.fabs, math.hypot, math.erf, math.erfc, math.gamma, math.lgamma)
    + (math.degrees, math.radians, math.copysign, math.fmod)
)
_ARITHMETIC = (gast.Add, gast.Sub, gast.Mult, gast.Div)
_EXACT = 2**53  # every int up to this converts to the float of its value


def write_float_literals(fn, floats, namespace):
    """Rewrite ``fn`` in place (see the module's docstring). ``floats``: names known to hold
    floats; ``namespace``: the generated module's globals, name -> object (``math``)."""
    nodes = walk(fn)
    namespace = _globals(nodes, namespace)
    floats = _float_names(nodes, floats, namespace)
    for node in nodes:
        if isinstance(node, gast.BinOp) and isinstance(node.op, _ARITHMETIC):
            if _is_int(node.left) and _is_float(node.right, floats, namespace):
                node.left = gast.Constant(float(node.left.value), None)
            elif _is_int(node.right) and _is_float(node.left, floats, namespace):
                node.right = gast.Constant(float(node.right.value), None)
        elif (
            isinstance(node, gast.AugAssign)
            and isinstance(node.op, _ARITHMETIC)
            and _is_int(node.value)
            and _is_float(node.target, floats, namespace)
        ):
            node.value = gast.Constant(float(node.value.value), None)


def float_names(fn, floats, namespace):
    """The names of ``fn`` that surely hold floats, given that ``floats`` do (its float
    parameters); ``namespace``: its globals, name -> object."""
    nodes = walk(fn)
    return _float_names(nodes, set(floats), _globals(nodes, namespace))


def _globals(nodes, namespace):
    """``namespace`` without the names the function binds itself."""
    local = {n.id for n in nodes if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)}
    return {k: v for k, v in namespace.items() if k not in local}


def _float_names(nodes, known, namespace):
    """The names of the function of ``nodes`` that surely hold floats: ``known``, and local
    names each of whose assignments assigns a float (the largest such set: a sum
    ``ct_x = ct_x + t`` started by a float stays a float)."""
    values = {}  # local name -> the values assigned to it
    assigned = set()  # the ids of the target nodes of those assignments
    for node in nodes:
        if isinstance(node, gast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, gast.AugAssign):  # x += v assigns x + v
            target, value = node.target, gast.BinOp(left=node.target, op=node.op, right=node.value)
        else:
            continue
        if isinstance(target, gast.Name):
            values.setdefault(target.id, []).append(value)
            assigned.add(id(target))
    # bound some other way (unpacked, a loop's target, a parameter): not known
    opaque = {
        n.id
        for n in nodes
        if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load) and id(n) not in assigned
    }
    candidates = {n for n in values if n not in known and n not in opaque}
    while True:
        floats = known | candidates
        dropped = {
            n for n in candidates if not all(_is_float(v, floats, namespace) for v in values[n])
        }
        if not dropped:
            return floats
        candidates -= dropped


def _is_int(e):
    return (
        isinstance(e, gast.Constant)
        and type(e.value) is int  # not a bool
        and abs(e.value) <= _EXACT
    )


def _is_float(e, floats, namespace):
    """Is ``e`` surely a float (Python's or NumPy's)."""
    if isinstance(e, gast.Name):
        return e.id in floats
    if isinstance(e, gast.Constant):
        return type(e.value) is float
    if isinstance(e, gast.UnaryOp):
        return isinstance(e.op, (gast.USub, gast.UAdd)) and _is_float(e.operand, floats, namespace)
    if isinstance(e, gast.BinOp):
        if not isinstance(e.op, _ARITHMETIC):
            return False  # float ** float may be complex; % and // are left alone
        left, right = (_is_float(s, floats, namespace) for s in (e.left, e.right))
        return (left and (right or _is_int(e.right))) or (right and _is_int(e.left))
    if isinstance(e, gast.Call):
        return _function_of(e.func, namespace) in _FLOAT_MATH
    return False


def _function_of(func, namespace):
    """The object a call's function denotes when it is a global (``math.sin``, ``sin``)."""
    if isinstance(func, gast.Name):
        return namespace.get(func.id)
    if (
        isinstance(func, gast.Attribute)
        and isinstance(func.value, gast.Name)
        and namespace.get(func.value.id) is math
    ):
        return getattr(math, func.attr, None)
    return None
