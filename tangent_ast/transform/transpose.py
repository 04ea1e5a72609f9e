"""Stage transpose (the transpose route): a statement's adjoint from its forward rule.

Takes one active argument of one primitive call in the SSA function (``y = np.sin(x)``,
argument ``x``); guarantees the expression of that argument's cotangent, read off the
*forward* rule: the forward rule writes the tangent of ``y`` as an expression linear in
the tangent of ``x`` (``dx * np.cos(x)``), and the cotangent of ``x`` is that linear
map transposed and applied to the cotangent of ``y``. The expression is walked from the
top, the cotangent handed down:

=====================  ==================================  ============================
linear expression      cotangent of its operand            (``c``: the expression's)
=====================  ==================================  ============================
``a + b``, ``a - b``   ``c`` to ``a``; ``c``, ``-c`` to ``b``
``-a``                 ``-c``
``a * k``, ``a / k``   ``c * k``, ``c / k``                 (``k`` free of tangents)
``L(a, ...)``          ``L``'s reverse rule at ``c``        ``L`` linear in ``a``: its
                                                            transpose is its reverse rule
=====================  ==================================  ============================

So a primitive needs a forward rule, plus a reverse rule only if it is linear (``np.sum``,
``@``, indexing, ``np.reshape``): a function given ``defjvp`` alone gets reverse mode.

Shapes: an elementwise operation may broadcast its operand up (``dx * w`` with ``x`` a
row, ``w`` a matrix). Such a cotangent is *inexact*: it has the shape of what the
operand was broadcast to, and is summed down to the argument's shape at the end
(``runtime.unbroadcast``, left out where kinds show the shapes equal). A linear
operation needs its exact cotangent and the shape of its operand: the operand must be
the tangent itself, or elementwise in it with factors of its shape (``x * dx``), whose
shape is the argument's. What falls outside this is not transposed here: the statement
uses the reverse rule of the primitive if it has one (:class:`Transposed` says which),
and is refused otherwise, with where and why.

>>> import numpy as np, tangent_ast as ta
>>> def f(x, w):
...     return np.sum(np.sin(x) * w)
>>> print(ta.show(f, "reverse", wrt="x", stage="transpose", args=(np.ones(3), np.ones((2, 3)))))
def f_fwd(x, w):
    sin = np.sin(x)
    sin_times_w = sin * w
    out = np.sum(sin_times_w)
    return out
<BLANKLINE>
def f_bwd(saved, ct_out):
    ct_sin_times_w = np.full_like(sin_times_w, ct_out)
    ct_sin = np.sum(ct_sin_times_w * w, axis=0)
    ct_x = ct_sin * np.cos(x)
    return ct_x
<BLANKLINE>

``np.sin``'s forward rule ``dx * np.cos(x)`` gave ``ct_sin * np.cos(x)``; the product's
``dsin * w`` gave ``ct * w``, summed down to ``sin``'s shape (over the rows of ``w``: the
signature ``array1f[a], array2f[b,a]`` says ``x`` has ``w``'s row length); the
sum's forward rule is the sum itself, whose transpose is its reverse rule (``full_like``).
"""

import builtins
from dataclasses import dataclass

import gast
import numpy as np

from .. import runtime
from ..emit.emit import to_ast
from ..errors import TangentAstError
from ..front.resolve import Pack, Scope, callee
from ..modes import Mode
from ..optimize.folding import with_number_exponents
from ..rules.binding import CallRefused, bind_call
from ..rules.registry import ZERO, SameCall, lookup
from ..vocabulary.kinds import Tag, is_complex, type_unknown
from ..vocabulary.syntax import name, unparse
from ..vocabulary.trees import copy_tree

TANGENT = "tangent__"  # the tangent of the argument being transposed, in the forward rule
RESULT = "result__"  # the primal result of a linear operation in it: not known
# besides ufuncs, the linear functions whose result has their argument's shape
_SHAPE_KEEPING = (np.real, np.imag)


class NotTransposable(Exception):
    """A forward rule this stage cannot transpose: ``str(exc)`` says why."""


@dataclass(frozen=True)
class Cotangent:
    """The cotangent of a sub-expression of a forward rule, as it is handed down."""

    expr: gast.expr
    exact: bool  # has the sub-expression's shape (else: that of what it was broadcast to)
    like: str | None  # a name of the same shape as ``expr``, where one is known


@dataclass(frozen=True)
class Transposed:
    """The cotangent of an argument, or None where the forward rule was not transposed
    (``why``), and the reverse rule is used instead."""

    expr: gast.expr | None
    why: str | None = None


def transposed(d, node, site, entry, i, target, ct, kinds):
    """The cotangent of ``site``'s argument ``i`` from ``entry``'s forward rule, at the
    cotangent ``ct`` of ``target``."""
    arg = site.args[i]
    try:
        at = (site.args, d.constant_value)
        rule = entry.rule(Mode.FORWARD, i, kinds, complex_argument=is_complex(d.kind(arg)), at=at)
    except CallRefused as refusal:
        return Transposed(None, refusal.what)
    if rule is None or rule is ZERO:
        return Transposed(None, "no forward rule")
    if not isinstance(arg, gast.Name):
        return Transposed(None, "the argument is not a name")
    tangent = name(TANGENT)
    try:
        if isinstance(rule, SameCall):
            linear = d.same_call(rule, site, i, tangent)
        else:
            linear = rule.instantiate([tangent, name(target)], site.args, site.keywords, d.bind)
        linear = with_number_exponents(linear, d.namespace)
    except TangentAstError as exc:
        return Transposed(None, exc.message)
    try:
        # an elementwise function's rule has the result's shape, which may be larger than
        # the argument's, unless it has one argument or the two shapes are known equal
        walk = _Walk(d, arg, target, entry.broadcasts and len(site.args) == 1)
        exact = not entry.broadcasts or walk.same_shape(name(target), arg)
        top = Cotangent(ct, exact=exact, like=target)
        terms = [walk.at_argument(c) for c in walk.transpose(linear, top)]
    except NotTransposable as exc:
        return Transposed(None, str(exc))
    if not terms:
        return Transposed(None, "the forward rule does not read the tangent")
    return Transposed(_sum(terms))


def transpose_refusal(d, node, entry, i, why):
    """The error for an argument whose forward rule cannot be transposed and whose primitive
    has no reverse rule."""
    return TangentAstError(
        f"cannot transpose the forward rule of {entry.name} for argument {i + 1} ({why}), "
        "and it has no reverse rule",
        where=d.where(node),
        hint=f"give {entry.name} a reverse rule (defvjp), or derive with route='direct'",
    )


class _Walk:
    """Transposition of one forward rule: ``arg`` is the argument, ``target`` the result."""

    def __init__(self, d, arg, target, result_has_argument_shape=False):
        self.d = d
        self.arg = arg
        self.target = target
        self.result_has_argument_shape = result_has_argument_shape  # np.sin(x), no kinds
        # names in a forward rule: the user's locals, and the generated module's globals
        self.scope = Scope(
            set(d.kinds) | d.scope.locals | {TANGENT}, {**vars(builtins), **d.namespace.objects}
        )

    def kind(self, atom):
        if isinstance(atom, gast.Name) and atom.id == TANGENT:
            return self.d.kind(self.arg)
        return self.d.kind(atom)

    def transpose(self, e, c):
        """The cotangents ``c`` gives the tangent through ``e``, one per path."""
        if not _reads_tangent(e):
            return []  # a term without the tangent: zero, in a linear expression
        if isinstance(e, gast.Name):
            return [c]
        if isinstance(e, gast.UnaryOp) and isinstance(e.op, (gast.USub, gast.UAdd)):
            negated = isinstance(e.op, gast.USub)
            return self.transpose(e.operand, _negated(c) if negated else c)
        if isinstance(e, gast.BinOp) and isinstance(e.op, (gast.Add, gast.Sub)):
            right = _negated(c) if isinstance(e.op, gast.Sub) else c
            return self.transpose(e.left, c) + self.transpose(e.right, right)
        if isinstance(e, gast.BinOp) and isinstance(e.op, (gast.Mult, gast.Div)):
            return self.scaled(e, c)
        if isinstance(e, gast.IfExp) and not _reads_tangent(e.test):
            return [self.chosen(e, c)]
        if self.is_broadcast(e):
            # runtime.broadcast_like(t, y): t's cotangent is c, summed down at the end
            return self.transpose(e.args[0], Cotangent(c.expr, False, c.like))
        return self.linear_operation(e, c)

    def scaled(self, e, c):
        """``a * k``, ``k * a``, ``a / k``: the cotangent of ``a`` is ``c * k``, ``c / k``; the
        factors of a chain (``dx * 2 * h``) in the order the forward rule writes them."""
        operand, factors = self.factors_of(e)
        if any(_is_zero(factor) for _, factor in factors):
            # ``dx * 0 * x ** -1`` (from ``x ** 0``) is zero, not NaN at ``x == 0``: keep the
            # zero, drop the other factors (as the direct route does)
            factors = [(gast.Mult(), gast.Constant(0, None))]
        expr, exact = c.expr, c.exact
        for op, factor in factors:
            if self.kind(factor).container:
                raise NotTransposable("a tangent multiplied by a container")
            expr = gast.BinOp(left=expr, op=op, right=copy_tree(factor))
            # the product has c's shape; the operand keeps it if no factor can broadcast it
            exact = exact and (
                self.is_scalar(factor)
                or (self.has_argument_shape(operand) and self.same_shape(factor, self.arg))
            )
        return self.transpose(operand, Cotangent(expr, exact, c.like))

    def factors_of(self, e):
        """A product or quotient with the tangent in one operand: the innermost operand that
        is not one, and the factors around it, left to right, each with its operator."""
        if not (isinstance(e, gast.BinOp) and isinstance(e.op, (gast.Mult, gast.Div))):
            return e, []
        left, right = _reads_tangent(e.left), _reads_tangent(e.right)
        if left and right:
            raise NotTransposable("a product of two tangents is not linear")
        if isinstance(e.op, gast.Div) and right:
            raise NotTransposable("a tangent in a denominator is not linear")
        if left:
            core, factors = self.factors_of(e.left)
            return core, factors + [(type(e.op)(), e.right)]
        core, factors = self.factors_of(e.right)
        return core, [(gast.Mult(), e.left)] + factors

    def chosen(self, e, c):
        """``a if test else b``: the cotangent of whichever branch the test chose."""
        branches = [self.transpose(branch, c) for branch in (e.body, e.orelse)]
        body, orelse = (
            _sum([self.at_argument(t) for t in terms]) if terms else self.d.zero(self.arg.id)
            for terms in branches
        )
        return Cotangent(gast.IfExp(copy_tree(e.test), body, orelse), True, self.arg.id)

    def linear_operation(self, e, c):
        """``L(..., a, ...)`` linear in ``a``: ``a``'s cotangent is ``L``'s reverse rule."""
        site = callee(e, self.scope, self.kind)
        if site is None or site.fn is None or isinstance(site.fn, Pack):
            raise NotTransposable(f"no transpose for `{_text(e)}`")
        entry = lookup(site.fn)
        if entry is None or not entry.vjps:
            raise NotTransposable(f"`{_text(e)}` has no reverse rule to transpose it by")
        if any(_reads_tangent(kw.value) for kw in site.keywords):
            raise NotTransposable(f"a tangent passed by keyword in `{_text(e)}`")
        positions = [j for j, a in enumerate(site.args) if _reads_tangent(a)]
        if len(positions) != 1:
            raise NotTransposable(f"`{_text(e)}` reads the tangent in several arguments")
        operand = site.args[positions[0]]
        if not self.has_argument_shape(operand):
            raise NotTransposable(f"the shape of the operand of `{_text(e)}` is unknown")
        if not (c.exact or entry.broadcasts):
            raise NotTransposable(f"`{_text(e)}` is broadcast before it is used")
        witness = name(self.arg.id)  # the operand has the argument's shape (and dtype)
        args = [witness if a is operand else a for a in site.args]
        try:
            bound = bind_call(entry, args, site.keywords, self.d.constant_value)
        except CallRefused as refusal:
            raise NotTransposable(refusal.what) from None
        j = next(k for k, a in enumerate(bound.args) if a is witness)
        kinds = None if bound.keywords else [self.kind(a) for a in bound.args]
        try:
            at = (bound.args, self.d.constant_value)
            complex_witness = is_complex(self.kind(witness))
            rule = entry.rule(Mode.REVERSE, j, kinds, complex_argument=complex_witness, at=at)
        except CallRefused as refusal:
            raise NotTransposable(refusal.what) from None
        if rule is None or rule is ZERO or not rule.inlinable:
            raise NotTransposable(f"the reverse rule of {entry.name} cannot be applied here")
        try:
            expr = rule.instantiate([c.expr, name(RESULT)], bound.args, bound.keywords, self.d.bind)
        except TangentAstError as exc:
            raise NotTransposable(exc.message) from None
        if any(isinstance(n, gast.Name) and n.id == RESULT for n in gast.walk(expr)):
            raise NotTransposable(f"the reverse rule of {entry.name} reads its result")
        if entry.broadcasts:  # elementwise: its reverse rule leaves c's (broadcast) shape
            return self.transpose(operand, Cotangent(expr, False, c.like))
        return self.transpose(operand, Cotangent(expr, True, self.arg.id))

    def at_argument(self, c):
        """The cotangent at the argument: summed down to its shape where it is not exact."""
        if c.exact:
            return c.expr
        if c.like is None:
            return self.d.call_runtime("unbroadcast", [c.expr, name(self.arg.id)])
        return self.d.unbroadcast(c.expr, self.arg, c.like)

    def has_argument_shape(self, e):
        """``e`` is the tangent, or elementwise in it with factors of the argument's shape."""
        if isinstance(e, gast.Name):
            return e.id == TANGENT
        if isinstance(e, gast.Call):  # np.real(dz * w), np.conj(dz)
            site = callee(e, self.scope, self.kind)
            return (
                site is not None
                and (isinstance(site.fn, np.ufunc) or site.fn in _SHAPE_KEEPING)
                and not site.keywords
                and all(
                    self.has_argument_shape(a)
                    if _reads_tangent(a)
                    else self.same_shape(a, self.arg)
                    for a in site.args
                )
            )
        if isinstance(e, gast.UnaryOp):
            return self.has_argument_shape(e.operand)
        if isinstance(e, gast.BinOp) and isinstance(
            e.op, (gast.Add, gast.Sub, gast.Mult, gast.Div)
        ):
            return all(
                self.has_argument_shape(side)
                if _reads_tangent(side)
                else (self.is_scalar(side) and not self.may_be_complex(side))
                or self.same_shape(side, self.arg)
                for side in (e.left, e.right)
            )
        return False

    def is_scalar(self, e):
        if isinstance(e, gast.Constant):
            return isinstance(e.value, (int, float, complex)) and not isinstance(e.value, bool)
        kind = self.kind(e) if isinstance(e, (gast.Name, gast.Attribute)) else None
        return kind is not None and kind.scalar

    def may_be_complex(self, e):
        """A complex number, or a number whose type is not known (NUMBER)."""
        if isinstance(e, gast.Constant):
            return isinstance(e.value, complex)
        return is_complex(self.kind(e)) or type_unknown(self.kind(e))

    def same_shape(self, e, arg):
        """``e`` has ``arg``'s shape: it is ``arg``, of its shape by kinds, or an elementwise
        function of such values (``np.conj(z)``)."""
        if isinstance(e, gast.Call):
            site = callee(e, self.scope, self.kind)
            entry = lookup(site.fn) if site is not None and site.fn is not None else None
            elementwise = isinstance(site.fn, np.ufunc) if site is not None else False
            return (
                (elementwise or (entry is not None and entry.broadcasts))
                and not site.keywords
                and all(self.is_scalar(a) or self.same_shape(a, arg) for a in site.args)
                and any(self.same_shape(a, arg) for a in site.args)
            )
        if not isinstance(e, gast.Name):
            return False
        if e.id == arg.id or (e.id == self.target and self.result_has_argument_shape):
            return True
        a, b = self.kind(e), self.kind(arg)
        return a.tag is Tag.ARRAY and a.shape is not None and a.shape == b.shape

    def is_broadcast(self, e):
        return (
            isinstance(e, gast.Call)
            and len(e.args) == 2
            and not e.keywords
            and self.scope.lookup(e.func) is runtime.broadcast_like
        )


def _reads_tangent(e):
    return any(isinstance(n, gast.Name) and n.id == TANGENT for n in gast.walk(e))


def _is_zero(e):
    return isinstance(e, gast.Constant) and type(e.value) in (int, float) and e.value == 0


def _sum(terms):
    total = terms[0]
    for term in terms[1:]:
        total = gast.BinOp(left=total, op=gast.Add(), right=term)
    return total


def _negated(c):
    return Cotangent(_minus(c.expr), c.exact, c.like)


def _minus(e):
    """``-e``, the sign on the first factor (``-ct * y``, as one writes it), ``--a`` is ``a``."""
    if isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.USub):
        return e.operand
    if isinstance(e, gast.BinOp) and isinstance(e.op, (gast.Mult, gast.Div)):
        return gast.BinOp(left=_minus(e.left), op=e.op, right=e.right)
    return gast.UnaryOp(op=gast.USub(), operand=e)


def _text(e):
    return unparse(to_ast(e)).replace(TANGENT, "dx")
