"""Folding one expression of generated code: what ``simplify`` rewrites inside a statement.

``_Fold`` folds number constants (``2 - 1``, ``x ** 1``, ``1 * e``), merges the number
factors of a product into one, turns ``a + -b`` into ``a - b``, reads ``getattr(p, 'W')`` as
``p.W`` and a spread scalar's product as the scalar's (``np.full_like(a, s) * b`` -> ``s * b``
when ``b`` has ``a``'s shape). ``is_pure`` says whether an expression may be evaluated
later, again or not at all: what lets simplify move or drop it.

>>> import gast
>>> from tangent_ast.vocabulary.syntax import unparse
>>> from tangent_ast.emit.emit import to_ast
>>> expr = gast.parse("a * 100.0 * 2 * b + -c", mode="eval").body
>>> unparse(to_ast(_Fold().visit(expr)))
'a * 200.0 * b - c'
"""

import math

import gast
import numpy as np

from .. import runtime
from ..rules.registry import is_pure_function
from ..vocabulary.trees import Transformer, copy_tree, walk
from .terms import product_factors


def _is_const(e, value=None):
    return (
        isinstance(e, gast.Constant)
        and isinstance(e.value, (int, float))
        and not isinstance(e.value, bool)
        and (value is None or e.value == value)
    )


class _Fold(Transformer):
    def __init__(self, namespace=None, same_shape=None, spreads=None):
        self.namespace = namespace
        self.same_shape = same_shape
        # names bound once to a spread scalar, ``ct = np.full_like(a, s)``: ``(a, s)``
        self.spreads = spreads or {}
        self.changed = False  # a visit returned another node: the expression was rewritten
        self.unnested = set()  # ids of products a product they are a factor of may flatten

    def visit(self, node):
        # every rewrite below returns a new node (or a child) in place of the one visited,
        # and changes no node in place
        new = super().visit(node)
        if new is not node:
            self.changed = True
        return new

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, gast.Mult) and id(node.right) in self.unnested:
            node = _product(product_factors(node))
        if isinstance(node.op, gast.Mult) and self.same_shape is not None:
            node = self.unspread(node)
        if isinstance(node.op, gast.Mult):
            node = _merge_constant_factors(node)
        elif isinstance(node.op, (gast.Add, gast.Sub)):
            node = self.subtract_negation(node)
        if not isinstance(node, gast.BinOp):
            return node  # a product of numbers only, merged into one (-1.5 * -1.5 -> 2.25)
        left, right, op = node.left, node.right, node.op
        if _is_const(left) and _is_const(right) and isinstance(op, (gast.Add, gast.Sub, gast.Mult)):
            value = {
                gast.Add: lambda a, b: a + b,
                gast.Sub: lambda a, b: a - b,
                gast.Mult: lambda a, b: a * b,
            }[type(op)](left.value, right.value)
            return gast.Constant(value, None)
        if isinstance(op, gast.Pow) and _is_const(right, 1):
            return left
        if isinstance(op, gast.Mult) and _is_const(right, 1) and isinstance(right.value, int):
            return left
        if isinstance(op, gast.Mult) and _is_const(left, 1) and isinstance(left.value, int):
            return right
        if isinstance(op, gast.Div) and _is_const(right, 1) and isinstance(right.value, int):
            return left
        return node

    def subtract_negation(self, node):
        """``a + -b`` -> ``a - b``, ``a - -b`` -> ``a + b``, ``-a + b`` -> ``b - a``: one
        pass over an array instead of two (IEEE addition is commutative, and ``-``
        rounds as ``+`` of the negation does, so the value is the same to the bit)."""
        right = _strip_negation(node.right)
        if right is not None:
            op = gast.Sub() if isinstance(node.op, gast.Add) else gast.Add()
            return gast.BinOp(left=node.left, op=op, right=right)
        left = _strip_negation(node.left)
        if (
            left is not None
            and isinstance(node.op, gast.Add)
            and self.namespace is not None
            and is_pure(node.left, self.namespace)
            and is_pure(node.right, self.namespace)
        ):
            return gast.BinOp(left=node.right, op=gast.Sub(), right=left)
        return node

    def unspread(self, product):
        """``np.full_like(a, s) * b`` -> ``s * b`` when ``b`` has ``a``'s shape: the product
        broadcasts ``s`` to that shape anyway (also ``runtime.sum_vjp(s, a)``, the
        cotangent of a whole-array sum)."""
        factors = product_factors(product)
        names = [f.id for f in factors if isinstance(f, gast.Name)]
        for i, f in enumerate(factors):
            spread = self.spread_of(f)
            like = next(
                (b for b in names if spread is not None and self.same_shape(spread[0], b)), None
            )
            value = None if like is None else _shape_reads_moved(spread[1], spread[0], like)
            if value is not None:
                factors[i : i + 1] = product_factors(value)
                return _product(factors)
        return product

    def spread_of(self, call):
        """``(a, s)`` for ``np.full_like(a, s)`` or ``runtime.sum_vjp(s, a)`` (or a name
        bound once to one), else None."""
        if isinstance(call, gast.Name):
            return self.spreads.get(call.id)
        if not (
            isinstance(call, gast.Call)
            and isinstance(call.func, gast.Attribute)
            and len(call.args) == 2
            and not call.keywords
            and isinstance(call.func.value, gast.Name)
        ):
            return None
        module = getattr(self.namespace.objects.get(call.func.value.id), "__name__", None)
        if (
            module == "numpy"
            and call.func.attr == "full_like"
            and isinstance(call.args[0], gast.Name)
        ):
            return call.args[0].id, call.args[1]
        if (
            module == "tangent_ast.runtime"
            and call.func.attr == "sum_vjp"
            and isinstance(call.args[1], gast.Name)
        ):
            return call.args[1].id, call.args[0]
        return None

    def visit_Call(self, node):
        self.generic_visit(node)
        # getattr(dp, 'W') reads as dp.W
        if (
            isinstance(node.func, gast.Name)
            and node.func.id == "getattr"
            and len(node.args) == 2
            and isinstance(node.args[1], gast.Constant)
            and isinstance(node.args[1].value, str)
            and node.args[1].value.isidentifier()
        ):
            return gast.Attribute(value=node.args[0], attr=node.args[1].value, ctx=gast.Load())
        derivative = power_derivative_formula(node, self.namespace)
        if derivative is not None:
            derivative = self.visit(derivative)
            self.unnested.add(id(derivative))  # ct * (3 * x ** 2) reads ct * 3 * x ** 2
            return derivative
        return node

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, gast.USub):
            inner = _strip_negation(node.operand)
            if inner is not None:
                return inner  # -(-e) and -(-a * b / c) read as e and a * b / c
        return node


def power_derivative_formula(call, namespace):
    """``runtime.power_derivative(x, 3)`` as ``3 * x ** (3 - 1)``: with a number for exponent the
    guard for a zero exponent is decided here (``0 * x ** -1`` is a structural zero to
    the rules' terms). None for another expression."""
    if not (
        namespace is not None
        and isinstance(call, gast.Call)
        and isinstance(call.func, gast.Attribute)
        and isinstance(call.func.value, gast.Name)
        and namespace.objects.get(call.func.value.id) is runtime
        and getattr(runtime, call.func.attr, None) is runtime.power_derivative
        and len(call.args) == 2
        and not call.keywords
        and _is_const(call.args[1])
    ):
        return None
    x, y = call.args
    exponent = gast.BinOp(left=y, op=gast.Sub(), right=gast.Constant(1, None))  # folded later
    power = gast.BinOp(left=x, op=gast.Pow(), right=exponent)
    return gast.BinOp(left=copy_tree(y), op=gast.Mult(), right=power)


def with_number_exponents(expr, namespace):
    """``expr`` with each ``runtime.power_derivative`` of a number exponent written out
    as its formula, as a product's factors (``ct * runtime.power_derivative(x, 0)`` ->
    ``ct * 0 * x ** -1``)."""
    factors = product_factors(expr)
    written = [power_derivative_formula(f, namespace) for f in factors]
    if all(w is None for w in written):
        return expr
    return _product([g for f, w in zip(factors, written) for g in product_factors(w or f)])


def _shape_reads_moved(expr, a, b):
    """``expr`` with ``a.size``/``a.shape``/``a.ndim`` read from ``b`` (of the same shape),
    or None if ``expr`` reads ``a`` otherwise (``ct / r_sq.size`` -> ``ct / r.size``)."""
    expr = copy_tree(expr)
    for n in gast.walk(expr):
        if (
            isinstance(n, gast.Attribute)
            and isinstance(n.value, gast.Name)
            and n.value.id == a
            and n.attr in ("size", "shape", "ndim")
        ):
            n.value = gast.Name(b, gast.Load(), None, None)
    if any(isinstance(n, gast.Name) and n.id == a for n in gast.walk(expr)):
        return None
    return expr


def _merge_constant_factors(product):
    """``a * 100.0 * 2 * b`` -> ``a * 200.0 * b``, ``-a * 2 * b`` -> ``a * -2 * b``: the
    number factors of a product multiplied into one, where the first of them was, and a
    negated factor's sign moved into it, so an array is multiplied once, not once per
    number. Products of ints only are merged while the result stays small (an int8 array
    times 300 is an error that ``x * 20 * 15`` is not)."""
    factors = product_factors(product)
    cancelled = _cancel_halving(factors)
    if cancelled is not None:
        return _product(cancelled)
    numbers = [i for i, f in enumerate(factors) if _is_const(f)]
    if not numbers:
        return product
    negated = [i for i, f in enumerate(factors) if _negation(f) is not None]
    if len(numbers) + len(negated) < 2:
        return product
    value = 1
    for i in numbers:
        value *= factors[i].value
    value *= (-1) ** len(negated)
    if isinstance(value, int) and abs(value) > 127:
        return product
    merged = []
    for i, f in enumerate(factors):
        if i == numbers[0]:
            merged.append(gast.Constant(value, None))
        elif i in negated:
            merged.extend(product_factors(_negation(f)))  # -(a * b) * 2 -> a * b * -2
        elif i not in numbers:
            merged.append(f)
    return _product(merged)


def _cancel_halving(factors):
    """``2 * (a / (2.0 * b)) * c`` -> ``a / b * c`` (as factors), or None: a product's one
    number cancelled against the same number in a quotient's denominator (the derivative
    of ``sqrt`` divides by ``2.0 * sqrt``, the derivative of ``x * x`` multiplies by ``2``).
    Only a power of two, multiplying a denominator as a float (so ``2.0 * b`` is a float
    whatever ``b`` is: no integer wraps around): multiplying and dividing by it is exact,
    so the value is the same to the bit unless ``2.0 * b`` overflows or the quotient
    underflows, where the result is the nearer one."""
    numbers = [i for i, f in enumerate(factors) if _is_const(f)]
    if len(numbers) != 1:
        return None
    number = factors[numbers[0]].value
    if not (number > 0 and math.frexp(number)[0] == 0.5):
        return None
    for i, f in enumerate(factors):
        if not (isinstance(f, gast.BinOp) and isinstance(f.op, gast.Div)):
            continue
        below = product_factors(f.right)
        at = next(
            (j for j, g in enumerate(below) if _is_const(g, number) and type(g.value) is float),
            None,
        )
        if at is not None and len(below) > 1:
            quotient = gast.BinOp(
                left=f.left, op=gast.Div(), right=_product(below[:at] + below[at + 1 :])
            )
            return [quotient if j == i else g for j, g in enumerate(factors) if j != numbers[0]]
    return None


def _product(factors):
    """``a * b * c`` from its factors, left to right."""
    out = factors[0]
    for g in factors[1:]:
        out = gast.BinOp(left=out, op=gast.Mult(), right=g)
    return out


def _negation(e):
    """``a`` for ``-a``, else None."""
    if isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.USub):
        return e.operand
    return None


def _strip_negation(e):
    """``e`` without a minus of one of its factors (``-a``, ``-a * b / c``, ``a * -b``,
    ``-2.0 * a``), or None if it has none. A product or quotient with one factor negated is
    the negation of the product to the bit: IEEE rounding is symmetric in the sign."""
    if isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.USub):
        return e.operand
    if (
        isinstance(e, gast.Constant)
        and type(e.value) in (int, float)
        and math.copysign(1, e.value) < 0
    ):
        return gast.Constant(-e.value, None)  # -2.0 is the negation of 2.0
    if isinstance(e, gast.BinOp) and isinstance(e.op, (gast.Mult, gast.Div)):
        left = _strip_negation(e.left)
        if left is not None:
            return gast.BinOp(left=left, op=e.op, right=e.right)
        right = _strip_negation(e.right)
        if right is not None:
            return gast.BinOp(left=e.left, op=e.op, right=right)
    return None


def is_pure(expr, namespace):
    """True if evaluating ``expr`` later, again, or not at all cannot change what it
    computes or does: every call in it is one the rule table marks pure
    (``registry.is_pure_function``). A call of anything else (``np.random.random()``,
    ``rng.normal()``, a user function, ``print``) keeps its place and runs once."""
    return all(_pure_call(n, namespace) for n in walk(expr) if isinstance(n, gast.Call))


def _pure_call(call, namespace):
    chain, root = [], call.func
    while isinstance(root, gast.Attribute):
        chain.append(root.attr)
        root = root.value
    if not isinstance(root, gast.Name):
        return False
    obj = namespace.objects.get(root.id, _LOCAL)
    if obj is _LOCAL:
        # A method of a local value (x.sum(), x.reshape(...)): pure if it is an array
        # method the table marks pure; a generator's rng.normal() is not one.
        return len(chain) == 1 and is_pure_function(getattr(np.ndarray, chain[0], None))
    for attr in reversed(chain):
        obj = getattr(obj, attr, None)
    if getattr(obj, "__module__", "").startswith(runtime.__name__ + "."):
        return obj not in runtime.EFFECTFUL  # the rules' own helpers
    return is_pure_function(obj)


_LOCAL = object()
