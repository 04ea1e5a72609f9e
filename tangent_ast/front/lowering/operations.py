"""Operations: one operation on atoms per statement, temporaries named for what they hold.

Takes an expression; guarantees statements each computing one operator, call, attribute
read or subscript of atoms (names, constants, globals such as ``np.pi``), the last one the
expression's value. Temporaries are named after their operation (``x_times_y``, ``sin``),
so the derived code reads like the user's.

>>> from tangent_ast.front.lowering import lower_source
>>> print(lower_source('''
... def f(x, w):
...     h = np.tanh(w @ x)
...     return np.sum(h ** 2)
... '''))
def f(x, w):
    w_at_x = w @ x
    h = np.tanh(w_at_x)
    h_sq = h ** 2
    out = np.sum(h_sq)
    return out
"""

import builtins
import copy

import gast

from ...vocabulary.syntax import is_atom, located, name
from ..checks import unsupported


class OperationLowering:
    """The lowering of expressions to one operation on atoms each."""

    def operation(self, expr, at):
        """Statements and a single operation on atoms computing ``expr``."""
        if is_atom(expr, self.scope) or isinstance(expr, gast.JoinedStr):
            return [], expr
        if isinstance(expr, gast.BinOp):
            pre, left = self.atom(expr.left, at)
            more, right = self.atom(expr.right, at)
            return pre + more, gast.BinOp(left=left, op=expr.op, right=right)
        if isinstance(expr, gast.UnaryOp):
            if (
                isinstance(expr.op, gast.USub)
                and isinstance(expr.operand, gast.Constant)
                and type(expr.operand.value) in (int, float, complex)
            ):
                return self.atom(expr, at)  # -2, -2j: a constant
            pre, operand = self.atom(expr.operand, at)
            return pre, gast.UnaryOp(op=expr.op, operand=operand)
        if isinstance(expr, gast.Compare) and len(expr.ops) == 1:
            pre, left = self.atom(expr.left, at)
            more, right = self.atom(expr.comparators[0], at)
            return pre + more, gast.Compare(left=left, ops=expr.ops, comparators=[right])
        if isinstance(expr, gast.Compare):
            return self.chained_compare(expr, at)
        if isinstance(expr, gast.BoolOp):
            return self.bool_op(expr, at)
        if isinstance(expr, gast.IfExp):
            return self.ternary(expr, at)
        if isinstance(expr, gast.NamedExpr):  # (y := e): y = e first, then y
            assigned = gast.Assign(
                targets=[name(expr.target.id, gast.Store())], value=expr.value, type_comment=None
            )
            return self.assign(located(assigned, at)), name(expr.target.id)
        if isinstance(expr, (gast.Set, gast.SetComp)):  # {a, b} -> set([a, b])
            items = (
                gast.List(elts=expr.elts, ctx=gast.Load())
                if isinstance(expr, gast.Set)
                else gast.ListComp(elt=expr.elt, generators=expr.generators)
            )
            expr = gast.Call(func=self.builtin("set"), args=[items], keywords=[])
        if isinstance(expr, (gast.Call, gast.ListComp)):
            return self.call_operation(expr, at)
        if isinstance(expr, gast.Lambda):  # a function value: made here, called elsewhere
            return [], self.function_value(expr, at)
        if isinstance(expr, gast.Attribute):
            pre, value = self.atom(expr.value, at)
            return pre, gast.Attribute(value=value, attr=expr.attr, ctx=gast.Load())
        if isinstance(expr, gast.Subscript):
            pre, value = self.atom(expr.value, at)
            more, index = self.index(expr.slice, at)
            return pre + more, gast.Subscript(value=value, slice=index, ctx=gast.Load())
        if isinstance(expr, (gast.Tuple, gast.List)):
            return self.sequence_literal(expr, at)
        if isinstance(expr, gast.Dict):
            return self.dict_literal(expr, at)
        raise unsupported(self.parsed, expr)

    def function_value(self, fn, at):
        """A lambda passed or stored as a value (``apply(lambda t: t * y, x)``): kept as
        written, to be called through its own derived rule where it is called. What it
        captures must be a name assigned once (a closure reads it when called, so a
        later assignment would change it) and carries no derivative (checked once
        activity is known)."""
        params = {a.id for a in fn.args.args}
        for n in gast.walk(fn.body):
            if isinstance(n, (gast.Lambda, gast.NamedExpr)) or (
                isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
            ):
                raise unsupported(
                    self.parsed, at, "a nested lambda or := inside a lambda passed as a value"
                )
        captured = {
            n.id
            for n in gast.walk(fn.body)
            if isinstance(n, gast.Name) and n.id not in params and self.scope.is_local(n.id)
        }
        for c in sorted(captured):
            if self.assignments_of(c) != 1:
                raise unsupported(
                    self.parsed,
                    at,
                    f"a lambda passed as a value that reads {c!r}, which is assigned more than "
                    "once (the lambda would read its value when called)",
                    f"pass {c} to the lambda as an argument",
                )
        return fn

    def assignments_of(self, variable):
        """How many values ``variable`` takes in the function: its assignments (a parameter
        counts as one), one in a loop counting as many."""
        node = self.parsed.node
        count = int(variable in {a.id for a in node.args.args})
        for loop in [node, *(n for n in gast.walk(node) if isinstance(n, (gast.For, gast.While)))]:
            stores = [
                n
                for s in (loop.body if loop is not node else [])
                for n in gast.walk(s)
                if isinstance(n, gast.Name) and n.id == variable and isinstance(n.ctx, gast.Store)
            ]
            count += 2 * len(stores)
        stores = [
            n
            for n in gast.walk(node)
            if isinstance(n, gast.Name) and n.id == variable and isinstance(n.ctx, gast.Store)
        ]
        return count + len(stores)

    def call_operation(self, expr, at):
        """A call on atoms; a local function's call inlined; ``sum`` of a comprehension a loop;
        a generator argument read as a list."""
        if isinstance(expr, gast.ListComp):
            return self.comprehension(expr, at)
        if isinstance(expr.func, gast.Name) and expr.func.id in self.local:
            return self.inline(expr, at)
        if (
            len(expr.args) == 1
            and not expr.keywords
            and isinstance(expr.args[0], (gast.GeneratorExp, gast.ListComp))
            and self.scope.lookup(expr.func) is builtins.sum
        ):
            return self.comprehension(expr.args[0], at, into_sum=True)
        if any(isinstance(a, gast.GeneratorExp) for a in expr.args):
            expr = copy.copy(expr)  # f(x for x in xs) reads the generator as a list
            expr.args = [
                gast.ListComp(elt=a.elt, generators=a.generators)
                if isinstance(a, gast.GeneratorExp)
                else a
                for a in expr.args
            ]
        changed = self.list_method(expr, at)
        if changed is not None:  # v = xs.pop()
            return changed
        written_out = self.higher_order(expr, at)
        if written_out is not None:
            return written_out
        got = self.known_key(expr, at)
        if got is not None:
            return got
        literal = self.dict_literal_of(expr)
        if literal is not None:  # dict([("a", x)], b=y) -> {"a": x, "b": y}
            return self.dict_literal(literal, at)
        expr = self.lists_as_arrays(self.einsum_subscripts(self.api_call(expr, at)))
        pre, func = self.callee(expr.func, at)
        args = []
        for a in self.spread_items(expr.args):
            more, atom = self.atom(a, at)
            pre += more
            args.append(atom)
        keywords = []
        for kw in self.spread_keywords(expr):
            more, atom = self.atom(kw.value, at)
            pre += more
            keywords.append(gast.keyword(arg=kw.arg, value=atom))
        return pre, gast.Call(func=func, args=args, keywords=keywords)

    def sequence_literal(self, expr, at):
        """``(a, b + c)`` -> ``(a, t)`` with ``t = b + c`` first."""
        pre, elts = [], []
        for e in self.spread_items(
            expr.elts,
            "a starred element in a tuple or list literal",
            "build the container from its elements one by one",
        ):
            more, a = self.atom(e, at)
            pre += more
            elts.append(a)
        return pre, type(expr)(elts=elts, ctx=gast.Load())

    def dict_literal_of(self, call):
        """``dict(pairs, **keywords)`` written as the dict literal it builds, where ``pairs``
        (if given) is a literal list or tuple of ``(constant key, value)`` pairs or a dict
        literal; else None."""
        if self.scope.lookup(call.func) is not builtins.dict or len(call.args) > 1:
            return None
        keys, values = [], []
        for item in call.args:
            if isinstance(item, gast.Dict):
                keys, values = list(item.keys), list(item.values)
            elif isinstance(item, (gast.List, gast.Tuple)) and all(
                isinstance(p, gast.Tuple) and len(p.elts) == 2 for p in item.elts
            ):
                keys = [p.elts[0] for p in item.elts]
                values = [p.elts[1] for p in item.elts]
            else:
                return None
        if any(kw.arg is None for kw in call.keywords):
            return None
        keys += [gast.Constant(kw.arg, None) for kw in call.keywords]
        values += [kw.value for kw in call.keywords]
        if not all(isinstance(k, gast.Constant) for k in keys):
            return None
        merged = dict(zip((k.value for k in keys), values))  # a later entry wins, as dict's
        return gast.Dict(
            keys=[gast.Constant(k, None) for k in merged], values=list(merged.values())
        )

    def dict_literal(self, expr, at):
        """``{"w": a * b}`` -> ``{"w": t}`` with ``t = a * b`` first (constant keys only)."""
        if not all(
            isinstance(k, gast.Constant) and isinstance(k.value, (str, int)) for k in expr.keys
        ):
            raise unsupported(
                self.parsed,
                expr,
                "a dict literal whose keys are not constants",
                "use constant string or int keys",
            )
        pre, values = [], []
        for v in expr.values:
            more, a = self.atom(v, at)
            pre += more
            values.append(a)
        return pre, gast.Dict(keys=[copy.deepcopy(k) for k in expr.keys], values=values)

    def index(self, index, at):
        if isinstance(index, gast.Slice):
            pre, parts = [], []
            for part in (index.lower, index.upper, index.step):
                if part is None:
                    parts.append(None)
                    continue
                more, a = self.atom(part, at)
                pre += more
                parts.append(a)
            return pre, gast.Slice(lower=parts[0], upper=parts[1], step=parts[2])
        if isinstance(index, gast.Tuple):
            pre, elts = [], []
            for e in index.elts:
                more, a = self.index(e, at)
                pre += more
                elts.append(a)
            return pre, gast.Tuple(elts=elts, ctx=gast.Load())
        return self.atom(index, at)


_OP_WORDS = {
    gast.Add: "plus",
    gast.Sub: "minus",
    gast.Div: "over",
    gast.Mult: "times",
    gast.MatMult: "at",
}


_COMPARE_WORDS = {
    gast.Lt: "lt",
    gast.LtE: "le",
    gast.Gt: "gt",
    gast.GtE: "ge",
    gast.Eq: "eq",
    gast.NotEq: "ne",
}


def temp_base(op):
    """A name saying what a temporary holds: ``r * r`` -> ``r_sq``, ``i + 1`` ->
    ``i_plus_one``, ``x[i]`` -> ``x_i``, ``x > 0`` -> ``x_gt_zero``, ``np.sin(x)`` ->
    ``sin``; ``tmp`` when that would not be short."""
    if isinstance(op, gast.Call):
        func = op.func
        base = func.attr if isinstance(func, gast.Attribute) else getattr(func, "id", "tmp")
        if hasattr(builtins, base) and len(op.args) == 1 and _word(op.args[0]):
            return f"{base}_{_word(op.args[0])}"  # len(x) -> len_x: a builtin's name is taken
        return base
    if isinstance(op, gast.Attribute):
        return op.attr
    if isinstance(op, gast.BinOp) and type(op.op) in _OP_WORDS | {gast.Pow: ""}:
        left, right = _word(op.left), _word(op.right)
        if left and right:
            if (isinstance(op.op, gast.Mult) and left == right) or (
                isinstance(op.op, gast.Pow) and right == "two"
            ):
                base = f"{left}_sq"
            elif isinstance(op.op, gast.Pow):
                base = f"{left}_pow_{right}"
            else:
                base = "_".join(w for w in (left, _OP_WORDS[type(op.op)], right) if w)
            if len(base) <= 16:
                return base
    if isinstance(op, gast.UnaryOp) and isinstance(op.op, gast.USub) and _word(op.operand):
        return f"neg_{_word(op.operand)}"
    if isinstance(op, gast.Compare) and type(op.ops[0]) in _COMPARE_WORDS:
        left, right = _word(op.left), _word(op.comparators[0])
        if left and right and len(left) + len(right) < 14:
            return f"{left}_{_COMPARE_WORDS[type(op.ops[0])]}_{right}"
    if isinstance(op, gast.Subscript) and _word(op.value):
        index = op.slice.elts if isinstance(op.slice, gast.Tuple) else [op.slice]
        words = [_word(i) for i in index]
        if all(words) and sum(map(len, words)) < 10:
            return "_".join([_word(op.value)] + words)  # x[i] -> x_i
    return "tmp"


def _word(atom):
    """A short word for an atom in a temporary's name, or None."""
    if isinstance(atom, gast.Name):
        return atom.id.lstrip("_")
    if (
        isinstance(atom, gast.Constant)
        and isinstance(atom.value, (int, float))
        and not isinstance(atom.value, bool)
        and float(atom.value).is_integer()
        and 0 <= atom.value < len(_NUMBERS)
    ):
        return _NUMBERS[int(atom.value)]  # a word: a trailing _1 would read as an SSA version
    return None


_NUMBERS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
