"""How long a statement or expression prints as one line of a function body, told without
printing it where the answer is clear.

Simplify weighs a line before inlining into it (a line over 88 characters is not made
longer), and the reverse transform weighs a sum before writing it on one line. Printing (a
copy as ``ast``, then ``ast.unparse``) was most of what simplify cost. ``longer_than``
bounds the length instead: each token as ``ast.unparse`` writes it, without and with the
parentheses it may put around an operation. It prints only when the limit lies between
the bounds, or for a node the bounds do not know; the answer is the printed one either way.
"""

import sys

import gast

from ..emit.emit import prints_as_operation, to_ast
from ..vocabulary.syntax import unparse

INDENT = 4  # a line of a function body
_PARENS = 2  # "(" and ")" around an operation its context binds tighter
_INF = "1e" + repr(sys.float_info.max_10_exp + 1)  # how ast.unparse writes an infinity

_BINOPS = {
    gast.Add: "+",
    gast.Sub: "-",
    gast.Mult: "*",
    gast.MatMult: "@",
    gast.Div: "/",
    gast.Mod: "%",
    gast.Pow: "**",
    gast.LShift: "<<",
    gast.RShift: ">>",
    gast.BitOr: "|",
    gast.BitXor: "^",
    gast.BitAnd: "&",
    gast.FloorDiv: "//",
}
_UNARYOPS = {gast.Invert: "~", gast.Not: "not ", gast.UAdd: "+", gast.USub: "-"}
_CMPOPS = {
    gast.Eq: "==",
    gast.NotEq: "!=",
    gast.Lt: "<",
    gast.LtE: "<=",
    gast.Gt: ">",
    gast.GtE: ">=",
    gast.Is: "is",
    gast.IsNot: "is not",
    gast.In: "in",
    gast.NotIn: "not in",
}
_BOOLOPS = {gast.And: " and ", gast.Or: " or "}


def line_length(node):
    """Length of ``node`` printed as one line of a function body."""
    return len(unparse(to_ast(node))) + INDENT  # to_ast makes a copy: node is left as it is


def longer_than(node, limit):
    """``line_length(node) > limit``, printing ``node`` only if its bounds do not tell."""
    bounds = _bounds(node)
    if bounds is not None:
        low, high = bounds
        if high + INDENT <= limit:
            return False
        if low + INDENT > limit:
            return True
    return line_length(node) > limit


def _bounds(node):
    """``(low, high)``: the fewest and most characters ``node`` prints as; None for a node
    not known here."""
    parts = _parts(node)
    if parts is None:
        return None
    low = high = 0
    for part in parts:
        if type(part) is str:
            low, high = low + len(part), high + len(part)
            continue
        inner = _bounds(part)
        if inner is None:
            return None
        low, high = low + inner[0], high + inner[1]
    if isinstance(node, _OPERATIONS) and not (isinstance(node, gast.Tuple) and not node.elts):
        high += _PARENS
    elif type(node) is gast.Constant and prints_as_operation(node.value):
        high += _PARENS  # a negative number, printed as the operation it is: (-2.0) ** 2
    return low, high


_OPERATIONS = (gast.BinOp, gast.UnaryOp, gast.Compare, gast.BoolOp, gast.IfExp, gast.Tuple)


def _parts(node):
    """What ``ast.unparse`` writes for ``node``, in order: text, and the nodes it holds
    (without the parentheses around ``node`` itself); None for a node not known here."""
    cls = type(node)
    if cls is gast.Name:
        return [node.id]
    if cls is gast.Constant:
        return _constant(node)
    if cls is gast.BinOp:
        return [node.left, f" {_BINOPS[type(node.op)]} ", node.right]
    if cls is gast.UnaryOp:
        return [_UNARYOPS[type(node.op)], node.operand]
    if cls is gast.Compare:
        parts = [node.left]
        for op, right in zip(node.ops, node.comparators, strict=True):
            parts += [f" {_CMPOPS[type(op)]} ", right]
        return parts
    if cls is gast.BoolOp:
        return _joined(node.values, _BOOLOPS[type(node.op)])
    if cls is gast.IfExp:
        return [node.body, " if ", node.test, " else ", node.orelse]
    if cls is gast.Call:
        return [node.func, "(", *_joined(node.args + node.keywords, ", "), ")"]
    if cls is gast.keyword:
        return ["**" if node.arg is None else node.arg + "=", node.value]
    if cls is gast.Starred:
        return ["*", node.value]
    if cls is gast.Attribute:
        # an int is followed by a space (``1 .real``): ``1.real`` would read as a float
        after_int = isinstance(node.value, gast.Constant) and isinstance(node.value.value, int)
        return [node.value, " ." if after_int else ".", node.attr]
    if cls is gast.Subscript:
        index = _index(node.slice)
        return None if index is None else [node.value, "[", *index, "]"]
    if cls is gast.Slice:
        return _slice(node)
    if cls is gast.Tuple:
        return _items(node.elts) if node.elts else ["()"]
    if cls is gast.List:
        return ["[", *_joined(node.elts, ", "), "]"]
    return _statement_parts(node)


def _statement_parts(node):
    cls = type(node)
    if cls is gast.Assign and node.type_comment is None:
        return [part for t in node.targets for part in (t, " = ")] + [node.value]
    if cls is gast.AugAssign:
        return [node.target, f" {_BINOPS[type(node.op)]}= ", node.value]
    if cls is gast.Expr:
        return [node.value]
    return None


def _constant(node):
    value = node.value
    if isinstance(value, tuple) or value is ... or type(value) is complex or value != value:
        return None  # a complex number or a NaN prints as a sum (``emit.to_ast``)
    if isinstance(value, float):
        text = repr(value).replace("inf", _INF)
    else:
        text = repr(value)
    return ["u" + text if node.kind == "u" else text]


def _joined(nodes, separator):
    parts = []
    for i, n in enumerate(nodes):
        parts += [separator, n] if i else [n]
    return parts


def _items(nodes):
    """A tuple's items: one is followed by a comma (``x,``)."""
    return _joined(nodes, ", ") + ([","] if len(nodes) == 1 else [])


def _index(index):
    """A subscript's index: a tuple's items without their parentheses (``a[i, j]``); None
    for one with a starred item (Python 3.10 writes those parentheses)."""
    if isinstance(index, gast.Tuple) and index.elts:
        if any(isinstance(e, gast.Starred) for e in index.elts):
            return None
        return _items(index.elts)
    return [index]


def _slice(node):
    parts = [node.lower] if node.lower is not None else []
    parts.append(":")
    if node.upper is not None:
        parts.append(node.upper)
    if node.step is not None:
        parts += [":", node.step]
    return parts
