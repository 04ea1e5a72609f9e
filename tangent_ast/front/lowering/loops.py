"""Loops: every loop becomes ``for i in range(...)`` or ``while atom``.

Takes ``for``/``while`` statements; guarantees that a ``for`` loop iterates over
``range(a, b, c)`` of atoms (a loop over a sequence, ``enumerate``, ``zip`` or ``reversed``
reads ``x = xs[i]`` first in its body) and that a ``while`` loop tests one name, computed
before the loop and again at the end of its body.

>>> from tangent_ast.front.lowering import lower_source
>>> print(lower_source('''
... def f(xs, n):
...     total = 0.0
...     for x in xs:
...         total = total + x * x
...     while total > n:
...         total = total / 2
...     return total
... '''))
def f(xs, n):
    total = 0.0
    len_xs = len(xs)
    for i in range(len_xs):
        x = xs[i]
        x_sq = x * x
        total = total + x_sq
    total_gt_n = total > n
    while total_gt_n:
        total = total / 2
        total_gt_n = total > n
    return total
"""

import copy

import gast

from ...runtime.checkpoints import checkpointed
from ...vocabulary.syntax import assign, call_name, located, name
from ..checks import unsupported
from .jumps import append_fallthrough, loop_level, mark_breaks
from .operations import temp_base


class LoopLowering:
    """The lowering of ``for`` and ``while`` statements."""

    def loop_body(self, body):
        return self.block(self.lower_jumps(body))

    def while_loop(self, s):
        pre, s, orelse = self.loop_else(s)
        if isinstance(s.test, gast.Name):
            body = self.loop_body(s.body)
            return pre + [located(gast.While(test=s.test, body=body, orelse=[]), s)]
        more, op = self.operation(s.test, s)
        test = self.namer.fresh(temp_base(op) if temp_base(op) != "tmp" else "keep_going")
        again, op_again = self.operation(copy.deepcopy(s.test), s)
        body = self.loop_body(s.body)
        append_fallthrough(body, again + [assign(test, op_again, s)])
        loop = located(gast.While(test=name(test), body=body, orelse=[]), s)
        return pre + more + [assign(test, op, s), loop] + self.block(orelse)

    def loop_else(self, s):
        """A loop's ``else`` block runs when the loop ends without ``break``: after the loop,
        under a flag that each ``break`` sets. ``(statements before the loop, the loop
        without its else, the statements after it)``."""
        if not s.orelse:
            return [], s, []
        if not any(isinstance(n, gast.Break) for n in loop_level(s.body)):
            return [], s, s.orelse
        broke = self.namer.fresh("broke")
        loop = copy.copy(s)
        loop.body = mark_breaks(s.body, broke)
        after = [located(gast.If(test=name(broke), body=[], orelse=s.orelse), s)]
        return [assign(broke, gast.Constant(False, None), s)], loop, after

    def for_loop(self, s):
        """``for x in <iterable>`` -> ``for i in range(...)`` with ``x = xs[i]`` first in the
        body. ``for t in checkpointed(range(T), snapshots=k)`` is ``for t in range(T)``,
        its loop noted in ``self.checkpoints`` with ``k``."""
        iterable, snapshots = self.checkpoint_marker(s.iter, s)
        pre, header, prefix, range_args = self.loop_header(s.target, iterable, s)
        before, s, orelse = self.loop_else(s)
        pre += before
        body = self.loop_body(prefix + s.body)
        loop = located(
            gast.For(
                target=name(header, gast.Store()),
                iter=None,
                body=body,
                orelse=[],
                type_comment=None,
            ),
            s,
        )
        range_pre, loop.iter = self.range_call(range_args, s)
        if snapshots is not None:
            self.checkpoints[id(loop)] = snapshots
        return pre + range_pre + [loop] + self.block(orelse)

    def checkpoint_marker(self, iterable, at):
        """``(the iterable, the number of snapshots)`` of ``checkpointed(iterable, k)``;
        ``(iterable, None)`` for any other iterable."""
        if not (
            isinstance(iterable, gast.Call) and self.scope.lookup(iterable.func) is checkpointed
        ):
            return iterable, None
        hint = "write for t in tangent_ast.checkpointed(range(T), snapshots=16)"
        keywords = {kw.arg: kw.value for kw in iterable.keywords}
        arguments = list(iterable.args)
        if "snapshots" in keywords:
            arguments.append(keywords.pop("snapshots"))
        if keywords or len(arguments) != 2:
            raise unsupported(self.parsed, at, "this call of checkpointed", hint)
        inner, count = arguments
        if isinstance(count, gast.Constant):
            value = count.value
        elif isinstance(count, (gast.Name, gast.Attribute)) and self.scope.is_global_chain(count):
            value = self.scope.lookup(count)
        else:
            raise unsupported(
                self.parsed,
                at,
                "a number of snapshots computed in the function",
                "give it as a literal or a module-level constant",
            )
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise unsupported(self.parsed, at, f"checkpointed with snapshots={value!r}", hint)
        if call_name(inner, self.scope) != "range":
            raise unsupported(self.parsed, at, "checkpointed over anything but a range", hint)
        return inner, value

    def range_call(self, args, at):
        pre, atoms = [], []
        for a in args:
            more, atom = self.atom(a, at)
            pre += more
            atoms.append(atom)
        return pre, gast.Call(func=self.builtin("range"), args=atoms, keywords=[])

    def loop_header(self, target, iterable, at):
        """(statements before the loop, loop variable, statements starting the body,
        arguments of the ``range`` it runs over)."""
        kind = call_name(iterable, self.scope)
        if kind == "range":
            if not isinstance(target, gast.Name):
                raise unsupported(self.parsed, at, "unpacking the variable of a range loop")
            return [], target.id, [], list(iterable.args)
        index = self.namer.fresh("i")
        if (
            kind == "enumerate"
            and len(iterable.args) == 1
            and not iterable.keywords
            and isinstance(target, gast.Tuple)
            and len(target.elts) == 2
            and isinstance(target.elts[0], gast.Name)
        ):
            pre, seq = self.atom(iterable.args[0], at)
            index = target.elts[0].id
            return pre, index, [self._item(target.elts[1], seq, index, at)], [self._len(seq)]
        strict = _zip_strict(iterable.keywords) if kind == "zip" else None
        if (
            kind == "zip"
            and isinstance(target, gast.Tuple)
            and len(target.elts) == len(iterable.args)
            and strict is not None
        ):
            pre, seqs = [], []
            for a in iterable.args:
                more, seq = self.atom(a, at)
                pre += more
                seqs.append(seq)
            lengths = [self._len(q) for q in seqs]
            if strict and len(seqs) > 1:
                lengths_again = [self._len(q) for q in seqs]
                check = _unequal_lengths_raise(lengths_again, self.builtin("ValueError"))
                pre.append(located(check, at))
            count = (
                lengths[0]
                if len(lengths) == 1
                else gast.Call(func=self.builtin("min"), args=lengths, keywords=[])
            )
            items = [self._item(t, q, index, at) for t, q in zip(target.elts, seqs, strict=True)]
            return pre, index, items, [count]
        if kind == "reversed" and len(iterable.args) == 1:
            pre, seq = self.atom(iterable.args[0], at)
            last = gast.BinOp(left=self._len(seq), op=gast.Sub(), right=gast.Constant(1, None))
            return (
                pre,
                index,
                [self._item(target, seq, index, at)],
                [last, gast.Constant(-1, None), gast.Constant(-1, None)],
            )
        if kind in ("enumerate", "zip", "reversed"):
            raise unsupported(
                self.parsed,
                at,
                f"this use of {kind} in a for loop",
                "loop over range(len(...)) and index explicitly",
            )
        pre, seq = self.atom(iterable, at)
        return pre, index, [self._item(target, seq, index, at)], [self._len(seq)]

    def _len(self, seq):
        return gast.Call(func=self.builtin("len"), args=[copy.deepcopy(seq)], keywords=[])

    def _item(self, target, seq, index, at):
        if not isinstance(target, gast.Name):
            raise unsupported(
                self.parsed,
                at,
                "unpacking the loop variable",
                "assign the element to a name and index it in the body",
            )
        return located(
            gast.Assign(
                targets=[name(target.id, gast.Store())],
                value=gast.Subscript(value=copy.deepcopy(seq), slice=name(index), ctx=gast.Load()),
                type_comment=None,
            ),
            at,
        )


def _zip_strict(keywords):
    """``zip``'s ``strict=`` as a bool (False when not given), or None for other keywords
    or a value that is not a constant."""
    if not keywords:
        return False
    if len(keywords) == 1 and keywords[0].arg == "strict":
        value = keywords[0].value
        if isinstance(value, gast.Constant) and isinstance(value.value, bool):
            return value.value
    return None


def _unequal_lengths_raise(lengths, value_error):
    """``if not len(a) == len(b) == ...: raise ValueError(...)``: zip(..., strict=True)'s
    check, made before the loop that replaces it runs over the common length."""
    same = gast.Compare(
        left=lengths[0], ops=[gast.Eq() for _ in lengths[1:]], comparators=lengths[1:]
    )
    message = gast.Constant("zip() arguments have different lengths", None)
    error = gast.Call(func=name("ValueError"), args=[message], keywords=[])
    return gast.If(
        test=gast.UnaryOp(op=gast.Not(), operand=same),
        body=[gast.Raise(exc=error, cause=None)],
        orelse=[],
    )
