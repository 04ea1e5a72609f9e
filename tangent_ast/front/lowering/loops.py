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
from ...vocabulary.syntax import assign, call_name, located, name, stored_names
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
        s, viewed = self.over_dict_view(s)
        iterable, snapshots = self.checkpoint_marker(s.iter, s)
        pre, header, prefix, range_args = self.loop_header(s.target, iterable, s)
        before, s, orelse = self.loop_else(s)
        pre += before
        body = self.loop_body(prefix + s.body)
        reads = _items_read(body, prefix)
        self.item_reads += reads
        if viewed:
            self.dict_view_reads += reads
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

    def over_dict_view(self, s):
        """``for k, v in d.items()`` -> ``for k in d: v = d[k]``; ``for v in d.values()`` ->
        ``for key in d: v = d[key]``; ``for k in d.keys()`` -> ``for k in d`` (a loop over a
        dict runs over its keys: analysis/written_out.py). ``(the loop, whether it was
        over a view)``; that ``d`` is a dict is checked once kinds are known."""
        it = s.iter
        if not (
            isinstance(it, gast.Call)
            and isinstance(it.func, gast.Attribute)
            and it.func.attr in ("items", "values", "keys")
            and not it.args
            and not it.keywords
        ):
            return s, False
        view, owner = it.func.attr, it.func.value
        if isinstance(owner, gast.Name) and owner.id in stored_names(s.body):
            raise unsupported(
                self.parsed,
                s,
                f"assigning {owner.id} in a loop over {owner.id}.{view}()",
                f"loop over a copy: for ... in dict({owner.id}).{view}()",
            )
        target, first = s.target, []
        if view == "items":
            if not (isinstance(target, gast.Tuple) and len(target.elts) == 2):
                raise unsupported(
                    self.parsed,
                    s,
                    "a loop over d.items() whose variable is not a pair (k, v)",
                    "write for k, v in d.items():",
                )
            target, value = target.elts
            if not isinstance(target, gast.Name):
                key = self.namer.fresh("key")
                first.append(
                    located(gast.Assign(targets=[target], value=name(key), type_comment=None), s)
                )
                target = name(key, gast.Store())
            read = gast.Subscript(
                value=copy.deepcopy(owner), slice=name(target.id), ctx=gast.Load()
            )
            first.insert(0, located(gast.Assign(targets=[value], value=read, type_comment=None), s))
        elif view == "values":
            key = self.namer.fresh("key")
            read = gast.Subscript(value=copy.deepcopy(owner), slice=name(key), ctx=gast.Load())
            first.append(located(gast.Assign(targets=[target], value=read, type_comment=None), s))
            target = name(key, gast.Store())
        loop = copy.copy(s)
        loop.target, loop.iter, loop.body = target, owner, first + s.body
        return loop, True

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
        if (
            kind == "enumerate"
            and len(iterable.args) == 1
            and not iterable.keywords
            and isinstance(target, gast.Tuple)
            and len(target.elts) == 2
            and isinstance(target.elts[0], gast.Name)
        ):  # the loop's own counter is the index: ``for i in range(len_xs): x = xs[i]``
            pre, count, read = self.sequence(iterable.args[0], at)
            index = target.elts[0].id
            return pre, index, self._item(target.elts[1], read(name(index)), at), [count]
        index = self.namer.fresh("i")
        if kind == "zip" and isinstance(target, gast.Tuple):
            pre, count, reads = self.zipped(iterable, at)
            if reads is not None and len(reads) == len(target.elts):  # ``a = xs[i]; b = ys[i]``
                items = [
                    s
                    for t, read in zip(target.elts, reads, strict=True)
                    for s in self._item(t, read(name(index)), at)
                ]
                return pre, index, items, [count]
        if kind == "reversed" and len(iterable.args) == 1 and not iterable.keywords:
            pre, count, read = self.sequence(iterable.args[0], at)
            last = gast.BinOp(left=count, op=gast.Sub(), right=_one())
            down = [last, gast.Constant(-1, None), gast.Constant(-1, None)]
            return pre, index, self._item(target, read(name(index)), at), down
        pre, count, read = self.sequence(iterable, at)
        return pre, index, self._item(target, read(name(index)), at), [count]

    def sequence(self, iterable, at):
        """(statements, how many items, the item at an index) of what a for loop iterates
        over: ``enumerate``, ``zip`` and ``reversed`` of such sequences, nested as they come
        (``enumerate(zip(xs, ys))``: ``(i, (xs[i], ys[i]))``), or any other value, indexed."""
        kind = call_name(iterable, self.scope)
        start = _enumerate_start(iterable) if kind == "enumerate" else None
        if start is not None:
            pre, count, read = self.sequence(iterable.args[0], at)
            return pre, count, lambda i: _tuple([_plus(i, start), read(i)])
        if kind == "zip":
            pre, count, reads = self.zipped(iterable, at)
            if reads is not None:
                return pre, count, lambda i: _tuple([read(i) for read in reads])
        if kind == "reversed" and len(iterable.args) == 1 and not iterable.keywords:
            pre, count, read = self.sequence(iterable.args[0], at)
            more, last = self.atom(gast.BinOp(copy.deepcopy(count), gast.Sub(), _one()), at)
            return pre + more, count, lambda i: read(gast.BinOp(copy.deepcopy(last), gast.Sub(), i))
        if kind in ("enumerate", "zip", "reversed"):
            raise unsupported(
                self.parsed,
                at,
                f"this use of {kind} in a for loop",
                "loop over range(len(...)) and index explicitly",
            )
        pre, seq = self.iterated(iterable, at)
        return pre, self._len(seq), lambda i: _index(seq, i)

    def zipped(self, iterable, at):
        """(statements, how many items, the reads of each zipped sequence) of
        ``zip(...)``; the reads are None for keywords other than a constant ``strict=``."""
        strict = _zip_strict(iterable.keywords)
        if strict is None:
            return [], None, None
        pre, counts, reads = [], [], []
        for a in iterable.args:
            more, count, read = self.sequence(a, at)
            pre += more
            counts.append(count)
            reads.append(read)
        if strict and len(counts) > 1:
            check = _unequal_lengths_raise(
                [copy.deepcopy(c) for c in counts], self.builtin("ValueError")
            )
            pre.append(located(check, at))
        count = (
            counts[0]
            if len(counts) == 1
            else gast.Call(func=self.builtin("min"), args=counts, keywords=[])
        )
        return pre, count, reads

    def iterated(self, iterable, loop):
        """(statements, atom) for what ``loop`` iterates over: the object the iterable is
        when the loop starts, as Python's ``for`` takes it, under a name of its own where
        the loop assigns the name it is read from (``for x in xs: ... xs = ...``)."""
        pre, seq = self.atom(iterable, loop)
        if isinstance(seq, gast.Name) and seq.id in stored_names(loop.body):
            kept = self.namer.fresh(f"{seq.id}_iterated")
            pre.append(located(assign(kept, name(seq.id)), loop))
            seq = name(kept)
        return pre, seq

    def _len(self, seq):
        return gast.Call(func=self.builtin("len"), args=[copy.deepcopy(seq)], keywords=[])

    def _item(self, target, read, at):
        """The statements starting the loop's body: ``x = xs[i]``; for a target that
        unpacks (``for k, (a, b) in ...``), ``item = xs[i]`` and then ``k, (a, b) = item``,
        which the assignment's lowering unpacks."""
        if isinstance(target, gast.Name):
            return [located(assign(target.id, read), at)]
        if (
            isinstance(target, (gast.Tuple, gast.List))
            and isinstance(read, gast.Tuple)
            and len(target.elts) == len(read.elts)
        ):  # ``a, b = xs[i], ys[i]``: each its own read
            return [
                s for t, r in zip(target.elts, read.elts, strict=True) for s in self._item(t, r, at)
            ]
        if not isinstance(target, (gast.Tuple, gast.List)):
            raise unsupported(
                self.parsed,
                at,
                "a loop variable that is not a name or a tuple of names",
                "assign the element to a name and index it in the body",
            )
        item = self.namer.fresh("item")
        unpacked = gast.Assign(targets=[target], value=name(item), type_comment=None)
        return [located(assign(item, read), at), located(unpacked, at)]


def _enumerate_start(call):
    """The ``start`` of ``enumerate(xs)``, ``enumerate(xs, k)`` or ``enumerate(xs, start=k)``
    (0 by default), or None for another form."""
    given = list(call.args[1:]) + [k.value for k in call.keywords if k.arg == "start"]
    if len(call.args) + len(call.keywords) != 1 + len(given) or len(given) > 1:
        return None
    return given[0] if given else gast.Constant(0, None)


def _plus(i, start):
    if isinstance(start, gast.Constant) and start.value == 0:
        return i
    return gast.BinOp(left=i, op=gast.Add(), right=copy.deepcopy(start))


def _index(seq, i):
    return gast.Subscript(value=copy.deepcopy(seq), slice=i, ctx=gast.Load())


def _tuple(elts):
    return gast.Tuple(elts=elts, ctx=gast.Load())


def _one():
    return gast.Constant(1, None)


def _items_read(body, prefix):
    """The statements of the lowered ``body`` that read the loop's items: the lowering of
    each read of ``prefix`` (``x = xs[i]``), found by its target among the statements the
    prefix lowers to, which start the body."""
    reads = [
        p.targets[0].id
        for p in prefix
        if isinstance(p.targets[0], gast.Name) and isinstance(p.value, gast.Subscript)
    ]
    found = [
        s
        for s in body
        if isinstance(s, gast.Assign)
        and isinstance(s.targets[0], gast.Name)
        and s.targets[0].id in reads
        and isinstance(s.value, gast.Subscript)
    ][: len(reads)]
    assert [s.targets[0].id for s in found] == reads, "a loop's item reads start its body"
    return found


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
