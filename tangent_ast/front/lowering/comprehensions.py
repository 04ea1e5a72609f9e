"""Comprehensions: a list comprehension or ``sum`` of a generator becomes a loop.

Takes a ``ListComp`` (or ``sum(... for ...)``); guarantees an index loop that appends to
a new list (or adds to a total), its loop variables renamed apart from the function's.

>>> from tangent_ast.front.lowering import lower_source
>>> print(lower_source('''
... def f(xs):
...     return sum(x * x for x in xs)
... '''))
def f(xs):
    total = 0
    len_xs = len(xs)
    for i in range(len_xs):
        x_1 = xs[i]
        x_1_sq = x_1 * x_1
        total = total + x_1_sq
    out = total
    return out
"""

import copy

import gast

from ...vocabulary.syntax import assign, located, name
from ..checks import unsupported


class ComprehensionLowering:
    """The lowering of comprehensions to loops."""

    def comprehension(self, comp, at, into_sum=False, called="items"):
        """``[e for x in xs if c]`` -> ``t = []; for x in xs: if c: t = t + [e]``;
        ``sum(e for x in xs)`` -> ``t = 0; for x in xs: t = t + e``."""
        result = self.namer.fresh("total" if into_sum else called)
        renames = {}
        for gen in comp.generators:  # comprehension variables are local to it
            for n in gast.walk(gen.target):
                if isinstance(n, gast.Name):
                    renames[n.id] = self.namer.fresh(n.id)
        comp = copy.deepcopy(comp)
        for n in gast.walk(comp):
            if isinstance(n, gast.Name) and n.id in renames:
                n.id = renames[n.id]
        item = comp.elt if into_sum else gast.List(elts=[comp.elt], ctx=gast.Load())
        inner = [
            located(
                gast.Assign(
                    targets=[name(result, gast.Store())],
                    value=gast.BinOp(left=name(result), op=gast.Add(), right=item),
                    type_comment=None,
                ),
                at,
            )
        ]
        for gen in reversed(comp.generators):
            if gen.is_async:
                raise unsupported(self.parsed, at, "an async comprehension", "use a plain one")
            for cond in reversed(gen.ifs):
                inner = [located(gast.If(test=cond, body=inner, orelse=[]), at)]
            inner = [
                located(
                    gast.For(
                        target=gen.target, iter=gen.iter, body=inner, orelse=[], type_comment=None
                    ),
                    at,
                )
            ]
        start = gast.Constant(0, None) if into_sum else gast.List(elts=[], ctx=gast.Load())
        return [assign(result, start, at)] + self.block(inner), name(result)
