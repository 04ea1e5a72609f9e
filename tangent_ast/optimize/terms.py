"""Sums of (co)tangent terms: equal terms added once, structural zeros dropped.

The terms of a sum are the rules' expressions at each use of a value (``dx * x + x * dx``
for ``x * x``); the sum is written the way these helpers shape it.
"""

import gast

from ..vocabulary.trees import dump


def canonical(expr):
    """A key equal for expressions equal up to the order of the factors of ``*``."""
    if isinstance(expr, gast.BinOp) and isinstance(expr.op, gast.Mult):
        factors = sorted((canonical(expr.left), canonical(expr.right)))
        return "Mult(" + ",".join(factors) + ")"
    return dump(expr)


def structural_zero(expr):
    """A rule's term with a literal zero factor is zero whatever the other factors are:
    ``dx * 0 * x ** -1`` (from ``x ** 0``) is ``dx * 0``, not NaN or a ZeroDivisionError
    at ``x == 0``. The (co)tangent factor, first in every rule, keeps the shape."""
    factors = product_factors(expr)
    if len(factors) > 1 and any(
        isinstance(f, gast.Constant) and type(f.value) in (int, float) and f.value == 0
        for f in factors[1:]
    ):
        return gast.BinOp(left=factors[0], op=gast.Mult(), right=gast.Constant(0, None))
    return expr


def _is_zero_term(term):
    return (
        isinstance(term, gast.BinOp)
        and isinstance(term.op, gast.Mult)
        and isinstance(term.right, gast.Constant)
        and type(term.right.value) in (int, float)
        and term.right.value == 0
    )


def product_factors(e):
    """The factors of a product ``a * b * c``, left to right (``[e]`` for another ``e``)."""
    if isinstance(e, gast.BinOp) and isinstance(e.op, gast.Mult):
        return product_factors(e.left) + product_factors(e.right)
    return [e]


def merged(terms):
    """Equal terms added once, times their count (``t + t`` -> ``2 * t``); a structural
    zero (``dx * 0``) is left out when another term gives the shape."""
    if len(terms) > 1 and not all(_is_zero_term(t) for t in terms):
        terms = [t for t in terms if not _is_zero_term(t)]
    counts, first = {}, {}
    for t in terms:
        key = canonical(t)
        counts[key] = counts.get(key, 0) + 1
        first.setdefault(key, t)
    out = []
    for key, t in first.items():
        n = counts[key]
        if n == 1:
            out.append(t)
        elif isinstance(t, gast.BinOp) and isinstance(t.op, gast.Mult):
            # 2 * a * b: doubling is exact, so (2 * a) * b == 2 * (a * b)
            scale = gast.Constant(n, None)
            out.append(
                gast.BinOp(
                    left=gast.BinOp(left=scale, op=gast.Mult(), right=t.left) if n == 2 else scale,
                    op=gast.Mult(),
                    right=t.right if n == 2 else t,
                )
            )
        else:
            out.append(gast.BinOp(left=gast.Constant(n, None), op=gast.Mult(), right=t))
    return out
