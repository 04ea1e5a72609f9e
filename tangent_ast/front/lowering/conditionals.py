"""Conditionals: ``a if c else b``, ``and``/``or`` and chained comparisons become ``if``.

Takes those expressions; guarantees ``if name:`` statements assigning one name in each
branch, evaluated as Python does (the right operand of ``and`` only when the left holds).

>>> from tangent_ast.front.lowering import lower_source
>>> print(lower_source('''
... def f(x, y):
...     z = x if x > 0 and y < 1 else y
...     return z
... '''))
def f(x, y):
    both = x > 0
    if both:
        both = y < 1
    if both:
        z = x
    else:
        z = y
    return z
"""

import copy

import gast

from ...vocabulary.syntax import assign, located, name


class ConditionalLowering:
    """The lowering of conditional expressions to ``if`` statements."""

    def ternary(self, expr, at, target=None):
        """``a if c else b`` -> an ``if`` assigning one name in each branch: ``target`` (of
        ``target = a if c else b``: the name itself, not a copy of a temporary, so that an
        array updated through it later is the one each branch's rule reads), else a new one."""
        temp = target or self.namer.fresh("choice")
        pre, test = self.atom(expr.test, at)
        body_pre, body = self.operation(expr.body, at)
        else_pre, orelse = self.operation(expr.orelse, at)
        branch = located(
            gast.If(
                test=test,
                body=body_pre + [assign(temp, body, at)],
                orelse=else_pre + [assign(temp, orelse, at)],
            ),
            at,
        )
        return pre + [branch], name(temp)

    def bool_op(self, expr, at):
        """``a and b`` -> ``both = a; if both: both = b`` (short-circuit kept)."""
        temp = self.namer.fresh("both" if isinstance(expr.op, gast.And) else "either")
        pre, first = self.operation(expr.values[0], at)
        pre = pre + [assign(temp, first, at)]
        rest = (
            gast.BoolOp(op=expr.op, values=expr.values[1:])
            if len(expr.values) > 2
            else expr.values[1]
        )
        more, second = self.operation(rest, at)
        test = (
            name(temp)
            if isinstance(expr.op, gast.And)
            else gast.UnaryOp(op=gast.Not(), operand=name(temp))
        )
        if isinstance(test, gast.UnaryOp):
            negated = self.namer.fresh(f"not_{temp}")
            pre.append(assign(negated, test, at))
            test = name(negated)
        pre.append(
            located(gast.If(test=test, body=more + [assign(temp, second, at)], orelse=[]), at)
        )
        return pre, name(temp)

    def chained_compare(self, expr, at):
        """``a < b < c`` -> ``a < b and b < c`` with ``b`` evaluated once."""
        pre, left = self.atom(expr.left, at)
        atoms = [left]
        for c in expr.comparators:
            more, a = self.atom(c, at)
            pre += more
            atoms.append(a)
        pairs = [
            gast.Compare(
                left=copy.deepcopy(atoms[i]), ops=[op], comparators=[copy.deepcopy(atoms[i + 1])]
            )
            for i, op in enumerate(expr.ops)
        ]
        more, result = self.bool_op(gast.BoolOp(op=gast.And(), values=pairs), at)
        return pre + more, result
