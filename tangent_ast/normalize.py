"""Stage 3, normalize: desugar to a small core, one operation per statement.

Takes the parsed function and its scope; guarantees a function whose body
contains only

* ``a[index] = atom``: an in-place update of an array created in the function
  or of an array argument (``a[i] += v`` becomes ``t = a[i]; t_1 = t + v; a[i] = t_1``;
  ``x += v`` on an array argument becomes ``t = x + v; x[...] = t``); ``xs[i] = v``
  on a local list becomes the new list ``xs = runtime.list_with(xs, i, v)``;
* ``name = <op>`` where ``<op>`` is an atom (name, constant, global such as
  ``np.pi``) or ONE operation on atoms: a binary/unary operator, a single
  comparison, a call, an attribute read, a subscript;
* ``if atom: ... else: ...`` (``elif``, ``a if c else b``, ``and``/``or``
  and chained comparisons are lowered to it);
* ``for i in range(a, b, c):`` (loops over sequences, ``enumerate``, ``zip``
  and ``reversed`` become index loops with an explicit ``x = xs[i]``) and
  ``while t:`` (the test atom is recomputed at the end of the body);
* inside loops, ``continue`` is gone (what follows it moves into the branch
  that does not continue) and ``break`` only ends a branch; a ``return``
  inside a loop sets a flag and breaks, and the loop is followed by
  ``if flag: return``;
* bare calls kept for their effect (``print(x)``), ``assert``, ``raise``;
* exactly one ``return atom``, as the last statement;
* no local functions: a nested ``def`` or ``g = lambda ...`` that is only called
  is inlined at each call (its names renamed), so closures over the function's
  variables differentiate like the rest of the code.

Early returns become assignments to one result name; statements after an
``if`` that may return move into the branch that does not.

    def f(x, y):                   def f(x, y):
        if x > 0:                      t = x > 0
            return x * np.sin(y)  ->   if t:
        return y                           sin = np.sin(y)
                                           out = x * sin
                                       else:
                                           out = y
                                       return out
"""

import builtins
import copy
from dataclasses import dataclass

import gast

from .calling import Spread
from .errors import UnsupportedSyntaxError
from .kinds import Tag

_MOVE_OUT = "move it outside the differentiated function"
_UNSUPPORTED = {
    gast.AsyncFor: ("an async for loop", "use a plain for loop"),
    gast.ClassDef: ("a class definition inside the function", "define the class at module level"),
    gast.FunctionDef: ("a nested def", "define the helper at module level and call it"),
    gast.AsyncFunctionDef: ("a nested async def", "define the helper at module level"),
    gast.Global: (
        "a global statement",
        "mutable globals are not supported: pass the value as an argument and return the new value",
    ),
    gast.Nonlocal: ("a nonlocal statement", "pass the value as an argument and return it"),
    gast.With: ("a with block", _MOVE_OUT),
    gast.AsyncWith: ("an async with block", _MOVE_OUT),
    gast.Try: ("a try block", "move the try/except outside the differentiated function"),
    gast.Delete: ("del", "drop the del: a name going out of use needs no statement"),
    gast.Import: ("an import inside the function", "import at module level"),
    gast.ImportFrom: ("an import inside the function", "import at module level"),
    gast.Lambda: ("a lambda", "define the helper with def at module level"),
    gast.Yield: ("yield", "generators cannot be differentiated: return a value"),
    gast.YieldFrom: ("yield from", "generators cannot be differentiated: return a value"),
    gast.Await: ("await", "async functions cannot be differentiated"),
    gast.NamedExpr: ("an assignment expression (:=)", "assign on a line of its own"),
    gast.SetComp: ("a set comprehension", "write the loop out"),
    gast.DictComp: ("a dict comprehension", "write the loop out"),
    gast.GeneratorExp: (
        "a generator expression here",
        "use it as sum(...)'s argument, or write a list comprehension",
    ),
    gast.Set: ("a set literal", _MOVE_OUT),
    gast.Starred: (
        "a starred argument (*t) other than the function's own *args parameter",
        "pass the arguments one by one",
    ),
}


def unsupported(parsed, node, what=None, hint=None):
    what_default, hint_default = _UNSUPPORTED.get(type(node), (type(node).__name__, None))
    return UnsupportedSyntaxError(
        f"{what or what_default} is not supported",
        where=parsed.where(node),
        hint=hint or hint_default,
    )


def _at(new, old):
    """Give ``new`` (and its children without a position) the line of ``old``."""
    lineno = getattr(old, "lineno", None)
    for n in gast.walk(new):
        if (
            getattr(n, "lineno", None) is None
            and hasattr(n, "_attributes")
            and "lineno" in n._attributes
        ):
            n.lineno = lineno
            n.col_offset = getattr(old, "col_offset", 0)
    return new


def name(id_, ctx=None):
    return gast.Name(id=id_, ctx=ctx or gast.Load(), annotation=None, type_comment=None)


def assign(target, value, at=None):
    node = gast.Assign(targets=[name(target, gast.Store())], value=value, type_comment=None)
    return _at(node, at) if at is not None else node


def is_atom(expr, scope):
    if isinstance(expr, (gast.Name, gast.Constant)):
        return True
    if isinstance(expr, gast.Attribute) and scope.is_global_chain(expr):
        return True
    if isinstance(expr, (gast.Tuple, gast.List)):  # a constant tuple such as a shape
        return all(
            isinstance(e, gast.Constant)
            or (isinstance(e, (gast.Tuple, gast.List)) and is_atom(e, scope))
            for e in expr.elts
        )
    return False


class Normalizer:
    def __init__(self, parsed, scope, namer, in_place=frozenset(), lists=frozenset(), spread=None):
        self.parsed = parsed
        self.scope = scope
        self.namer = namer
        self.in_place = in_place  # array arguments updated in place (check_updates)
        self.lists = lists  # local lists updated by item: xs[i] = v is xs = list_with(xs, i, v)
        self.spread = spread or Spread()  # *args/**kwargs parameters, by the names they hold
        self.result = None

    # -- statements ---------------------------------------------------------

    def function(self, node):
        check_supported(self.parsed)
        found = local_functions(node)
        self.local = {fn_name: local for fn_name, (_, local) in found.items()}
        self.inlining = []
        definitions = {id(d) for d, _ in found.values()}
        body = [s for s in node.body if not _is_docstring(s) and id(s) not in definitions]
        tail = body[-1] if body else None
        simple_return = (
            isinstance(tail, gast.Return)
            and isinstance(tail.value, gast.Name)
            and not any(isinstance(n, gast.Return) for s in body[:-1] for n in gast.walk(s))
        )
        if simple_return:
            self.result = tail.value.id
            stmts = self.block(body[:-1])
        else:
            self.result = self.namer.fresh("out")
            stmts = self.block(self.lower_returns(body))
        stmts = self.write_back(node, stmts)
        stmts.append(_at(gast.Return(value=name(self.result)), tail or node))
        new = copy.copy(node)
        new.body = stmts
        new.returns = None
        for arg in new.args.args:
            arg.annotation = None
        return new

    def write_back(self, node, stmts):
        """A list argument changed by item or appended to is a value inside the function: a
        copy, then a new list at each change (``xs = runtime.list_with(xs, i, v)``). At the end
        it is copied into the caller's list (saved values never see that write)::

            xs_given = xs
            xs = list(xs)
            ...
            runtime.write_list(xs_given, xs)
        """
        params = [a.id for a in node.args.args]
        written = [p for p in params if p in self.lists]
        if not written:
            return stmts
        given = {p: self.namer.fresh(f"{p}_given") for p in written}
        prologue = [
            s
            for p in written
            for s in (
                assign(given[p], name(p), node),
                assign(p, gast.Call(func=self.builtin("list"), args=[name(p)], keywords=[]), node),
            )
        ]
        epilogue = [
            _at(gast.Expr(value=self.runtime_call("write_list", [name(given[p]), name(p)])), node)
            for p in written
        ]
        return prologue + stmts + epilogue

    def runtime_call(self, helper, args):
        """``runtime.<helper>(*args)`` (the pipeline binds ``runtime`` when lists need it)."""
        from . import runtime

        module = next(n for n, obj in self.scope.free.items() if obj is runtime)
        return gast.Call(
            func=gast.Attribute(value=name(module), attr=helper, ctx=gast.Load()),
            args=args,
            keywords=[],
        )

    def lower_returns(self, stmts):
        """Replace ``return e`` by ``<result> = e``, moving what follows an ``if``
        that may return into the branches that fall through."""
        out = []
        for i, s in enumerate(stmts):
            if isinstance(s, gast.Return):
                value = s.value if s.value is not None else gast.Constant(None, None)
                if not (isinstance(value, gast.Name) and value.id == self.result):
                    out.append(
                        _at(
                            gast.Assign(
                                targets=[name(self.result, gast.Store())],
                                value=value,
                                type_comment=None,
                            ),
                            s,
                        )
                    )
                return out
            if isinstance(s, (gast.For, gast.While)) and _may_return(s):
                flag = self.namer.fresh("returned")
                loop = copy.copy(s)
                loop.body = self.returns_to_breaks(s.body, flag)
                after = _at(
                    gast.If(
                        test=name(flag),
                        body=[_at(gast.Return(value=name(self.result)), s)],
                        orelse=[],
                    ),
                    s,
                )
                start = assign(flag, gast.Constant(False, None), s)
                return out + self.lower_returns([start, loop, after] + stmts[i + 1 :])
            if isinstance(s, gast.If) and _may_return(s):
                rest = stmts[i + 1 :]
                body = s.body if _always_exits(s.body) else s.body + copy.deepcopy(rest)
                orelse = s.orelse if _always_exits(s.orelse) else s.orelse + copy.deepcopy(rest)
                new = copy.copy(s)
                new.body = self.lower_returns(body)
                new.orelse = self.lower_returns(orelse)
                out.append(new)
                return out
            out.append(s)
        return out

    def check_effect_only(self, s):
        """A call kept only for its effect must not change a local value: that change
        would be invisible to the derivative (a silent zero). print(x) is fine."""
        call = s.value
        if not isinstance(call, gast.Call):
            return
        func = call.func
        locals_in_args = any(
            isinstance(n, gast.Name) and self.scope.is_local(n.id)
            for a in list(call.args) + [k.value for k in call.keywords]
            for n in gast.walk(a)
        )
        if isinstance(func, gast.Attribute) and not self.scope.is_global_chain(func):
            raise unsupported(
                self.parsed,
                s,
                f"calling .{func.attr}() for its effect on a local value",
                "build the value functionally (e.g. collect into a NumPy array with "
                "a[i] = v, or xs = xs + [v]) and assign the result",
            )
        if any(kw.arg == "out" for kw in call.keywords):
            raise unsupported(
                self.parsed,
                s,
                "out= (writing a result into an existing array)",
                "assign the result instead: y = np.add(y, x)",
            )
        target = self.scope.lookup(func)
        import inspect

        import numpy as np

        in_place = {np.copyto, np.put, np.place, np.putmask, np.fill_diagonal}
        if (
            target in in_place
            or (type(target).__name__ == "ufunc" and getattr(func, "attr", "") == "at")
            or (inspect.isfunction(target) and locals_in_args)
        ):
            raise unsupported(
                self.parsed,
                s,
                f"calling {getattr(target, '__name__', 'a function')} "
                "for its effect on a local value",
                "use its result: y = f(x), or update an array with a[i] = v",
            )

    def returns_to_breaks(self, stmts, flag):
        """Inside a loop: ``return e`` -> ``<result> = e; flag = True; break``."""
        out = []
        for s in stmts:
            if isinstance(s, gast.Return):
                value = s.value if s.value is not None else gast.Constant(None, None)
                out += [
                    _at(
                        gast.Assign(
                            targets=[name(self.result, gast.Store())],
                            value=value,
                            type_comment=None,
                        ),
                        s,
                    ),
                    assign(flag, gast.Constant(True, None), s),
                    _at(gast.Break(), s),
                ]
                return out
            if isinstance(s, gast.If) and _may_return(s):
                new = copy.copy(s)
                new.body = self.returns_to_breaks(s.body, flag)
                new.orelse = self.returns_to_breaks(s.orelse, flag)
                out.append(new)
            elif isinstance(s, (gast.For, gast.While)) and _may_return(s):
                loop = copy.copy(s)
                loop.body = self.returns_to_breaks(s.body, flag)
                out += [
                    loop,
                    _at(gast.If(test=name(flag), body=[_at(gast.Break(), s)], orelse=[]), s),
                ]
            else:
                out.append(s)
        return out

    def lower_jumps(self, stmts):
        """In a loop body: drop ``continue`` and make ``break`` end its branch,
        moving what follows an ``if`` that jumps into the branches that fall through."""
        out = []
        for i, s in enumerate(stmts):
            if isinstance(s, gast.Continue):
                return out
            if isinstance(s, gast.Break):
                return out + [s]
            if isinstance(s, gast.If) and _may_jump(s):
                rest = stmts[i + 1 :]
                new = copy.copy(s)
                new.body = self.lower_jumps(
                    s.body if _always_jumps(s.body) else s.body + copy.deepcopy(rest)
                )
                new.orelse = self.lower_jumps(
                    s.orelse if _always_jumps(s.orelse) else s.orelse + copy.deepcopy(rest)
                )
                return out + [new]
            out.append(s)
        return out

    def builtin(self, name_):
        """A builtin the lowering introduces (``range``, ``len``, ``min``)."""
        self.scope.free.setdefault(name_, getattr(builtins, name_))
        return name(name_)

    def loop_body(self, body):
        return self.block(self.lower_jumps(body))

    def while_loop(self, s):
        if s.orelse:
            raise unsupported(
                self.parsed, s, "while ... else", "move the else block after the loop"
            )
        if isinstance(s.test, gast.Name):
            body = self.loop_body(s.body)
            return [_at(gast.While(test=s.test, body=body, orelse=[]), s)]
        pre, op = self.operation(s.test, s)
        test = self.namer.fresh(_temp_base(op) if _temp_base(op) != "tmp" else "keep_going")
        again, op_again = self.operation(copy.deepcopy(s.test), s)
        body = self.loop_body(s.body)
        append_fallthrough(body, again + [assign(test, op_again, s)])
        return pre + [
            assign(test, op, s),
            _at(gast.While(test=name(test), body=body, orelse=[]), s),
        ]

    def for_loop(self, s):
        """``for x in <iterable>`` -> ``for i in range(...)`` with ``x = xs[i]`` first in the body."""
        pre, header, prefix, range_args = self.loop_header(s.target, s.iter, s)
        broke = None
        orelse = []
        if s.orelse:
            if any(isinstance(n, gast.Break) for n in _loop_level(s.body)):
                broke = self.namer.fresh("broke")
                s = copy.copy(s)
                s.body = _mark_breaks(s.body, broke)
                pre.append(assign(broke, gast.Constant(False, None), s))
                orelse = [_at(gast.If(test=name(broke), body=[], orelse=s.orelse), s)]
            else:
                orelse = s.orelse
        body = self.loop_body(prefix + s.body)
        loop = _at(
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
        return pre + range_pre + [loop] + self.block(orelse)

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
        kind = _call_name(iterable, self.scope)
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
        if (
            kind == "zip"
            and isinstance(target, gast.Tuple)
            and len(target.elts) == len(iterable.args)
            and not iterable.keywords
        ):
            pre, seqs = [], []
            for a in iterable.args:
                more, seq = self.atom(a, at)
                pre += more
                seqs.append(seq)
            lengths = [self._len(q) for q in seqs]
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
        return _at(
            gast.Assign(
                targets=[name(target.id, gast.Store())],
                value=gast.Subscript(value=copy.deepcopy(seq), slice=name(index), ctx=gast.Load()),
                type_comment=None,
            ),
            at,
        )

    def block(self, stmts):
        out = []
        for s in stmts:
            out.extend(self.stmt(s))
        return out

    def stmt(self, s):
        if isinstance(s, gast.Assign):
            return self.assign(s)
        if isinstance(s, gast.AugAssign):
            if isinstance(s.target, gast.Subscript):
                return self.update(s.target, s, op=s.op, value=s.value)
            if not isinstance(s.target, gast.Name):
                raise unsupported(
                    self.parsed,
                    s,
                    "augmented assignment to an attribute",
                    "build a new object instead",
                )
            target = name(s.target.id)
            value = gast.BinOp(left=target, op=s.op, right=s.value)
            if s.target.id in self.in_place:  # x += y on an array argument: the caller's x changes
                whole = gast.Subscript(
                    value=name(s.target.id), slice=gast.Constant(Ellipsis, None), ctx=gast.Store()
                )
                return self.update(whole, s, value=value)
            stmts = self.assign(
                _at(
                    gast.Assign(
                        targets=[name(s.target.id, gast.Store())], value=value, type_comment=None
                    ),
                    s,
                )
            )
            stmts[-1].augmented = True  # for check_augmented: on an array, Python updates in place
            return stmts
        if isinstance(s, gast.AnnAssign):
            if s.value is None:
                return []
            return self.assign(
                _at(gast.Assign(targets=[s.target], value=s.value, type_comment=None), s)
            )
        if isinstance(s, gast.If):
            pre, test = self.atom(s.test, s)
            new = _at(gast.If(test=test, body=self.block(s.body), orelse=self.block(s.orelse)), s)
            new.lineno = s.lineno
            return pre + [new]
        if isinstance(s, gast.Expr):
            if isinstance(s.value, gast.Constant):
                return []
            target = _out_target(s.value)
            if target is not None:  # np.add(a, b, out=a) -> a[...] = np.add(a, b)
                call = copy.copy(s.value)
                call.keywords = [k for k in call.keywords if k.arg != "out"]
                whole = gast.Subscript(
                    value=name(target), slice=gast.Constant(Ellipsis, None), ctx=gast.Store()
                )
                return self.update(whole, s, value=call)
            appended = _append_call(s.value, self.scope)
            if appended is not None:  # xs.append(v) -> xs = xs + [v]
                xs, item = appended
                value = gast.BinOp(left=name(xs), op=gast.Add(), right=item)
                return self.assign(
                    _at(
                        gast.Assign(
                            targets=[name(xs, gast.Store())], value=value, type_comment=None
                        ),
                        s,
                    )
                )
            self.check_effect_only(s)
            pre, value = self.operation(s.value, s)
            return pre + [_at(gast.Expr(value=value), s)]
        if isinstance(s, gast.Pass):
            return []
        if isinstance(s, gast.Assert):
            pre, test = self.atom(s.test, s)
            return pre + [_at(gast.Assert(test=test, msg=s.msg), s)]
        if isinstance(s, gast.Raise):
            return [s]
        if isinstance(s, gast.For):
            return self.for_loop(s)
        if isinstance(s, gast.While):
            return self.while_loop(s)
        if isinstance(s, gast.Break):
            return [s]
        raise unsupported(self.parsed, s)

    def assign(self, s):
        value = s.value
        pre = []
        targets = s.targets
        first = targets[-1]
        if isinstance(first, gast.Name):
            more, op = self.operation(value, s)
            pre += more + [assign(first.id, op, s)]
            source = first.id
        elif (
            isinstance(first, (gast.Tuple, gast.List))
            and isinstance(value, (gast.Tuple, gast.List))
            and len(first.elts) == len(value.elts)
            and all(isinstance(t, gast.Name) for t in first.elts)
        ):
            atoms = []
            for v in value.elts:
                more, a = self.atom(v, s)
                pre += more
                atoms.append(a)
            for t, a in zip(first.elts, atoms, strict=True):
                pre.append(assign(t.id, copy.deepcopy(a), s))
            source = None
        elif isinstance(first, (gast.Tuple, gast.List)):
            more, whole = self.atom(value, s)
            pre += more + self.unpack(first, whole, s)
            source = None
        elif isinstance(first, gast.Subscript) and len(targets) == 1:
            return self.update(first, s, value=value)
        else:
            raise unsupported(
                self.parsed,
                s,
                f"assignment to {type(first).__name__.lower()}",
                "assign to plain names (in-place updates of arrays and lists "
                "are not supported yet)",
            )
        for t in targets[:-1]:
            if not isinstance(t, gast.Name) or source is None:
                raise unsupported(self.parsed, s, "this chained assignment")
            pre.append(assign(t.id, name(source), s))
        return pre

    def update(self, target, at, value, op=None):
        """``a[i] = v`` stays an in-place update of ``a``; ``a[i] += v`` reads the slot first."""
        if not isinstance(target.value, gast.Name):
            raise unsupported(
                self.parsed,
                at,
                "an in-place update of an expression",
                "update a named array: a[i] = v",
            )
        pre, index = self.index(target.slice, at)
        more, v = self.atom(value, at)
        pre += more
        if op is not None:
            old = self.namer.fresh(f"{target.value.id}_slot")
            new = self.namer.fresh(f"{target.value.id}_slot")
            pre += [
                assign(
                    old,
                    gast.Subscript(
                        value=name(target.value.id), slice=copy.deepcopy(index), ctx=gast.Load()
                    ),
                    at,
                ),
                assign(new, gast.BinOp(left=name(old), op=op, right=v), at),
            ]
            v = name(new)
        if target.value.id in self.lists:  # a new list with item i replaced: lists are values here
            call = self.runtime_call("list_with", [name(target.value.id), index, v])
            return pre + [assign(target.value.id, call, at)]
        store = gast.Subscript(value=name(target.value.id), slice=index, ctx=gast.Store())
        return pre + [_at(gast.Assign(targets=[store], value=v, type_comment=None), at)]

    def unpack(self, targets, whole, at):
        """``a, (b, *c) = t`` -> ``a = t[0]``, ``u = t[1]``, ``b = u[0]``, ``c = u[1:]``."""
        stmts = []
        starred = [i for i, t in enumerate(targets.elts) if isinstance(t, gast.Starred)]
        after = len(targets.elts) - starred[0] - 1 if starred else 0
        for i, target in enumerate(targets.elts):
            if isinstance(target, gast.Starred):
                upper = gast.Constant(-after, None) if after else None
                index = gast.Slice(lower=gast.Constant(i, None), upper=upper, step=None)
                target = target.value
            else:
                position = i if not starred or i < starred[0] else -(len(targets.elts) - i)
                index = gast.Constant(position, None)
            item = gast.Subscript(value=copy.deepcopy(whole), slice=index, ctx=gast.Load())
            if isinstance(target, gast.Name):
                stmts.append(assign(target.id, item, at))
            elif isinstance(target, (gast.Tuple, gast.List)):
                inner = self.namer.fresh("part")
                stmts.append(assign(inner, item, at))
                stmts += self.unpack(target, name(inner), at)
            else:
                raise unsupported(
                    self.parsed,
                    at,
                    f"unpacking into {type(target).__name__.lower()}",
                    "unpack into plain names",
                )
        return stmts

    # -- expressions --------------------------------------------------------

    def atom(self, expr, at):
        """Statements computing ``expr`` and an atom holding its value."""
        if (
            isinstance(expr, gast.UnaryOp)
            and isinstance(expr.op, gast.USub)
            and isinstance(expr.operand, gast.Constant)
            and isinstance(expr.operand.value, (int, float))
        ):
            return [], gast.Constant(-expr.operand.value, None)
        if is_atom(expr, self.scope):
            return [], expr
        pre, op = self.operation(expr, at)
        if isinstance(op, (gast.Name, gast.Constant)):
            return pre, op
        temp = self.namer.fresh(_temp_base(op))
        return pre + [assign(temp, op, at)], name(temp)

    def operation(self, expr, at):
        """Statements and a single operation on atoms computing ``expr``."""
        if is_atom(expr, self.scope):
            return [], expr
        if isinstance(expr, gast.BinOp):
            pre, left = self.atom(expr.left, at)
            more, right = self.atom(expr.right, at)
            return pre + more, gast.BinOp(left=left, op=expr.op, right=right)
        if isinstance(expr, gast.UnaryOp):
            if isinstance(expr.op, gast.USub) and isinstance(expr.operand, gast.Constant):
                return self.atom(expr, at)
            pre, operand = self.atom(expr.operand, at)
            return pre, gast.UnaryOp(op=expr.op, operand=operand)
        if isinstance(expr, gast.Compare):
            if len(expr.ops) == 1:
                pre, left = self.atom(expr.left, at)
                more, right = self.atom(expr.comparators[0], at)
                return pre + more, gast.Compare(left=left, ops=expr.ops, comparators=[right])
            return self.chained_compare(expr, at)
        if isinstance(expr, gast.BoolOp):
            return self.bool_op(expr, at)
        if isinstance(expr, gast.IfExp):
            temp = self.namer.fresh("choice")
            pre, test = self.atom(expr.test, at)
            body_pre, body = self.operation(expr.body, at)
            else_pre, orelse = self.operation(expr.orelse, at)
            branch = _at(
                gast.If(
                    test=test,
                    body=body_pre + [assign(temp, body, at)],
                    orelse=else_pre + [assign(temp, orelse, at)],
                ),
                at,
            )
            return pre + [branch], name(temp)
        if (
            isinstance(expr, gast.Call)
            and isinstance(expr.func, gast.Name)
            and expr.func.id in self.local
        ):
            return self.inline(expr, at)
        if (
            isinstance(expr, gast.Call)
            and len(expr.args) == 1
            and not expr.keywords
            and isinstance(expr.args[0], (gast.GeneratorExp, gast.ListComp))
            and self.scope.lookup(expr.func) is builtins.sum
        ):
            return self.comprehension(expr.args[0], at, into_sum=True)
        if isinstance(expr, gast.ListComp) or (
            isinstance(expr, gast.Call) and any(isinstance(a, gast.GeneratorExp) for a in expr.args)
        ):
            if isinstance(expr, gast.ListComp):
                return self.comprehension(expr, at)
            expr = copy.copy(expr)  # f(x for x in xs) reads the generator as a list
            expr.args = [
                gast.ListComp(elt=a.elt, generators=a.generators)
                if isinstance(a, gast.GeneratorExp)
                else a
                for a in expr.args
            ]
        if isinstance(expr, gast.Call):
            got = self.known_key(expr, at)
            if got is not None:
                return got
            expr = self.lists_as_arrays(expr)
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
        if isinstance(expr, gast.Attribute):
            pre, value = self.atom(expr.value, at)
            return pre, gast.Attribute(value=value, attr=expr.attr, ctx=gast.Load())
        if isinstance(expr, gast.Subscript):
            pre, value = self.atom(expr.value, at)
            more, index = self.index(expr.slice, at)
            return pre + more, gast.Subscript(value=value, slice=index, ctx=gast.Load())
        if isinstance(expr, (gast.Tuple, gast.List)):
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
        if isinstance(expr, gast.Dict):
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
        if isinstance(expr, gast.JoinedStr):
            return [], expr
        raise unsupported(self.parsed, expr)

    def lists_as_arrays(self, call):
        """``np.sum([a, b * c])`` -> ``np.sum(np.array([a, b * c]))``: NumPy makes an array of
        a list literal passed where it takes an array; written out, the conversion has a
        rule (its cotangent is split back into the list's entries), the implicit one none.
        Only for a NumPy function reached as ``np.f`` whose rule takes arrays there."""
        import numpy as np

        from .rules.binding import CallRefused, Role, bind_call
        from .rules.registry import lookup

        func = call.func
        entry = lookup(self.scope.lookup(func))
        if (
            entry is None
            or entry.sequences
            or not isinstance(func, gast.Attribute)
            or not isinstance(func.value, gast.Name)
            or self.scope.lookup(func.value) is not np
        ):
            return call
        listed = [
            a
            for a in call.args
            if isinstance(a, (gast.List, gast.Tuple))
            and not all(isinstance(e, gast.Constant) for e in a.elts)
        ]
        if not listed:
            return call
        try:
            bound = bind_call(entry, call.args, call.keywords)
        except CallRefused:
            return call
        convert = {id(g.value) for g in bound.given if g.role is Role.DIFFERENTIABLE}
        array = gast.Attribute(
            value=gast.Name(func.value.id, gast.Load(), None, None), attr="array", ctx=gast.Load()
        )
        call = copy.copy(call)
        call.args = [
            gast.Call(func=copy.deepcopy(array), args=[a], keywords=[])
            if id(a) in convert and any(a is b for b in listed)
            else a
            for a in call.args
        ]
        return call

    def spread_items(self, items, what=None, hint=None):
        """``f(x, *rest)`` with ``rest`` a ``*args`` parameter: ``f(x, rest0, rest1)``."""
        out = []
        for a in items:
            if not isinstance(a, gast.Starred):
                out.append(a)
            elif isinstance(a.value, gast.Name) and self.spread.items(a.value.id) is not None:
                out += [name(n) for n in self.spread.items(a.value.id)]
            elif isinstance(a.value, (gast.Tuple, gast.List)):
                out += self.spread_items(a.value.elts, what, hint)
            else:
                raise unsupported(self.parsed, a, what, hint)
        return out

    def spread_keywords(self, call):
        """``f(x, **options)`` with ``options`` a ``**kwargs`` parameter: ``f(x, tol=options_tol)``."""
        out = []
        for kw in call.keywords:
            if kw.arg is not None:
                out.append(kw)
            elif isinstance(kw.value, gast.Name) and self.spread.keys(kw.value.id) is not None:
                out += [
                    gast.keyword(arg=k, value=name(n))
                    for k, n in self.spread.keys(kw.value.id).items()
                ]
            else:
                raise unsupported(
                    self.parsed,
                    call,
                    "**mapping in a call, other than the function's own **kwargs parameter",
                    "pass the keywords one by one",
                )
        if len({kw.arg for kw in out}) != len(out):
            raise unsupported(
                self.parsed,
                call,
                "a keyword passed twice (once through **kwargs)",
                "pass each keyword once",
            )
        return out

    def known_key(self, call, at):
        """``options.get('tol', d)`` on a ``**kwargs`` parameter: the call form says whether
        'tol' was passed, so this is ``options_tol`` or ``d``."""
        func = call.func
        if not (
            isinstance(func, gast.Attribute)
            and func.attr == "get"
            and isinstance(func.value, gast.Name)
            and self.spread.keys(func.value.id) is not None
            and not call.keywords
            and 1 <= len(call.args) <= 2
            and isinstance(call.args[0], gast.Constant)
        ):
            return None
        passed = self.spread.keys(func.value.id)
        if call.args[0].value in passed:
            return [], name(passed[call.args[0].value])
        return self.operation(
            call.args[1] if len(call.args) == 2 else gast.Constant(None, None), at
        )

    def inline(self, call, at):
        """``g(a)`` of a local function ``g``: its body, renamed, then its result."""
        fn_name = call.func.id
        if fn_name in self.inlining:
            raise unsupported(
                self.parsed,
                call,
                f"the local function {fn_name!r} calling itself",
                "define a recursive helper at module level",
            )
        local = self.local[fn_name]
        if (
            call.keywords
            or len(call.args) != len(local.params)
            or any(isinstance(a, gast.Starred) for a in call.args)
        ):
            raise unsupported(
                self.parsed,
                call,
                f"this call of the local function {fn_name!r}",
                "pass exactly its positional parameters",
            )
        pre = []
        renames = {}
        for param, arg in zip(local.params, call.args, strict=True):
            more, atom = self.atom(arg, at)
            pre += more
            renames[param] = self.namer.fresh(param)
            pre.append(assign(renames[param], atom, at))
        body = copy.deepcopy(local.body)
        result = copy.deepcopy(local.result)
        for stored in sorted(
            {
                n.id
                for b in body
                for n in gast.walk(b)
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
            }
        ):
            renames.setdefault(stored, self.namer.fresh(stored))
        for n in [n for b in body + [result] for n in gast.walk(b)]:
            if isinstance(n, gast.Name) and n.id in renames:
                n.id = renames[n.id]
        self.inlining.append(fn_name)
        try:
            pre += self.block(body)
            more, value = self.operation(result, at)
        finally:
            self.inlining.pop()
        return pre + more, value

    def comprehension(self, comp, at, into_sum=False):
        """``[e for x in xs if c]`` -> ``t = []; for x in xs: if c: t = t + [e]``;
        ``sum(e for x in xs)`` -> ``t = 0; for x in xs: t = t + e``."""
        result = self.namer.fresh("total" if into_sum else "items")
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
            _at(
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
                inner = [_at(gast.If(test=cond, body=inner, orelse=[]), at)]
            inner = [
                _at(
                    gast.For(
                        target=gen.target, iter=gen.iter, body=inner, orelse=[], type_comment=None
                    ),
                    at,
                )
            ]
        start = gast.Constant(0, None) if into_sum else gast.List(elts=[], ctx=gast.Load())
        return [assign(result, start, at)] + self.block(inner), name(result)

    def callee(self, func, at):
        if isinstance(func, gast.Name) or (
            isinstance(func, gast.Attribute) and self.scope.is_global_chain(func)
        ):
            return [], func
        if isinstance(func, gast.Attribute):
            pre, receiver = self.atom(func.value, at)
            return pre, gast.Attribute(value=receiver, attr=func.attr, ctx=gast.Load())
        raise unsupported(
            self.parsed,
            func,
            "calling the result of an expression",
            "assign the function to a name first",
        )

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
        pre.append(_at(gast.If(test=test, body=more + [assign(temp, second, at)], orelse=[]), at))
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


def append_fallthrough(stmts, tail):
    """Append ``tail`` where control reaches the end of ``stmts`` (not after a ``break``)."""
    last = stmts[-1] if stmts else None
    if isinstance(last, (gast.Break, gast.Return, gast.Raise)):
        return
    if isinstance(last, gast.If) and (_always_jumps(last.body) or _always_jumps(last.orelse)):
        for block in (last.body, last.orelse):
            if not _always_jumps(block):
                append_fallthrough(block, copy.deepcopy(tail))
        return
    stmts.extend(tail)


def _loop_level(stmts):
    """Nodes of ``stmts`` not inside nested loops (what break/continue there refer to)."""
    for s in stmts:
        yield s
        if isinstance(s, gast.If):
            yield from _loop_level(s.body)
            yield from _loop_level(s.orelse)


def _may_jump(s):
    return any(isinstance(n, (gast.Break, gast.Continue)) for n in _loop_level([s]))


def _always_jumps(stmts):
    """Every path through ``stmts`` ends in break, continue, return or raise."""
    for s in stmts:
        if isinstance(s, (gast.Break, gast.Continue, gast.Return, gast.Raise)):
            return True
        if isinstance(s, gast.If) and _always_jumps(s.body) and _always_jumps(s.orelse):
            return True
    return False


def _mark_breaks(stmts, flag):
    out = []
    for s in stmts:
        if isinstance(s, gast.Break):
            out += [assign(flag, gast.Constant(True, None), s), s]
        elif isinstance(s, gast.If):
            new = copy.copy(s)
            new.body = _mark_breaks(s.body, flag)
            new.orelse = _mark_breaks(s.orelse, flag)
            out.append(new)
        else:
            out.append(s)
    return out


def _call_name(expr, scope):
    """``"range"``/``"enumerate"``/``"zip"``/``"reversed"`` if ``expr`` calls that builtin."""
    if (
        isinstance(expr, gast.Call)
        and isinstance(expr.func, gast.Name)
        and not scope.is_local(expr.func.id)
    ):
        obj = scope.free.get(expr.func.id)
        for candidate in ("range", "enumerate", "zip", "reversed"):
            if obj is getattr(builtins, candidate):
                return candidate
    return None


FRESH = (
    "zeros",
    "ones",
    "empty",
    "full",
    "zeros_like",
    "ones_like",
    "empty_like",
    "full_like",
    "array",
    "copy",
    "linspace",
    "eye",
    "identity",
)


_VIEW_ATTRIBUTES = {"T", "mT", "real", "imag"}
_VIEW_METHODS = {"reshape", "ravel", "view", "transpose", "swapaxes", "squeeze", "diagonal"}
_VIEW_FUNCTIONS = (
    "reshape",
    "ravel",
    "transpose",
    "squeeze",
    "expand_dims",
    "moveaxis",
    "swapaxes",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "broadcast_to",
    "diagonal",
    "asarray",
    "asanyarray",
    "real",
    "imag",
)


def _view_of(value, updated, scope):
    """``a`` when ``value`` may be a view of ``a``, an array in ``updated`` (None: any):
    a slice, ``a.T``, ``a.reshape(...)``, ``np.transpose(a)``, ..."""
    base = None
    if isinstance(value, (gast.Subscript, gast.Attribute)) and isinstance(value.value, gast.Name):
        if isinstance(value, gast.Subscript) or value.attr in _VIEW_ATTRIBUTES:
            base = value.value.id
    elif isinstance(value, gast.Call):
        func = value.func
        if (
            isinstance(func, gast.Attribute)
            and isinstance(func.value, gast.Name)
            and func.attr in _VIEW_METHODS
            and scope.is_local(func.value.id)
        ):
            base = func.value.id
        elif value.args and isinstance(value.args[0], gast.Name):
            import numpy as np

            obj = scope.lookup(func)
            if any(obj is getattr(np, f, None) for f in _VIEW_FUNCTIONS):
                base = value.args[0].id
    return base if updated is None or base in updated else None


def _program_order(stmts, loops=()):
    """The statements of ``stmts``, nested ones included, in program order, each
    with the loops around it."""
    order = []
    for s in stmts:
        order.append((s, loops))
        if isinstance(s, (gast.For, gast.While)):
            order += _program_order(s.body, loops + (id(s),))
        elif isinstance(s, gast.If):
            order += _program_order(s.body, loops) + _program_order(s.orelse, loops)
    return order


def _may_precede(position, first, first_loops, then, then_loops):
    """May ``first`` run before ``then``: earlier in the text, or both in a loop
    (an iteration runs ``then`` after the previous one ran ``first``)."""
    return position[id(first)] < position[id(then)] or bool(set(first_loops) & set(then_loops))


def check_augmented(parsed, fn, origin, kinds, scope):
    """Refuse ``a += b`` on an array that has a second name, is a view or sits in a container.

    On a NumPy array ``a += b`` updates ``a`` in place, and every other reference
    sees the change; the stages treat it as ``a = a + b``, a new value, which is the
    same only while ``a`` is the one reference to its array. Runs on the SSA function
    (``origin``: SSA name -> user name); array arguments updated this way are
    in-place updates (check_updates) and not seen here."""
    order = _program_order(fn.body)
    position = {id(s): i for i, (s, _) in enumerate(order)}
    assigns = [
        (n, loops)
        for n, loops in order
        if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name)
    ]
    copies = [(n.targets[0].id, n.value.id) for n, _ in assigns if isinstance(n.value, gast.Name)]
    for n, loops in assigns:
        if (
            not getattr(n, "augmented", False)
            or not isinstance(n.value, gast.BinOp)
            or not isinstance(n.value.left, gast.Name)
            or kinds.get(n.value.left.id) is None
            or kinds[n.value.left.id].tag not in (Tag.ARRAY, Tag.UNKNOWN)
        ):
            continue  # (a value of unknown kind may be an array: checked like one)
        same = {n.value.left.id}  # names of the array being updated: joined by copies
        while True:
            more = {a for a, b in copies if b in same} | {b for a, b in copies if a in same}
            if more <= same:
                break
            same |= more
        user = origin.get(n.targets[0].id, n.targets[0].id)
        before = [d for d, d_loops in assigns if _may_precede(position, d, d_loops, n, loops)]
        params = {a.id for a in fn.args.args}  # y = x; y += 1 updates the caller's x too
        others = sorted(
            (
                {
                    origin.get(d.targets[0].id, d.targets[0].id)
                    for d in before
                    if (isinstance(d.value, gast.Name) and d.value.id in same)
                    or d.targets[0].id in same
                }
                | {origin.get(p, p) for p in same & params}
            )
            - {user}
        )
        views = [d for d in before if d.targets[0].id in same and _view_of(d.value, None, scope)]
        held = [
            d
            for d in before
            if isinstance(d.value, (gast.Tuple, gast.List, gast.Dict))
            and any(
                isinstance(e, gast.Name) and e.id in same
                for e in (d.value.values if isinstance(d.value, gast.Dict) else d.value.elts)
            )
        ]
        why = (
            f"it is also named {others[0]!r}"
            if others
            else f"it is a view of {_view_of(views[0].value, None, scope)!r}"
            if views
            else "it is also held in a tuple, list or dict"
            if held
            else None
        )
        if why:
            raise unsupported(
                parsed,
                n,
                f"an augmented assignment to the array {user!r}, which Python "
                f"does in place, while {why}",
                f"write {user} = {user} <op> ... for a new array, or keep one name for it",
            )


def copy_views(fn, updated, kinds, namer, scope):
    """``v = a[1:]`` of an array ``a`` that is updated in place -> ``v = a[1:].copy()``
    (also ``a.T``, ``a.reshape(...)`` and the other views).

    Without the copy, the saved value ``v`` would change behind its name when
    ``a`` is updated, and the reverse sweep would read it changed. Where the
    function itself reads a view after an update, that is refused (check_views).
    Scalar reads (``a[i]`` of a vector) are copies already."""

    def block(stmts):
        out = []
        for s in stmts:
            for field in ("body", "orelse"):
                if isinstance(getattr(s, field, None), list) and not isinstance(
                    s, gast.FunctionDef
                ):
                    setattr(s, field, block(getattr(s, field)))
            value = getattr(s, "value", None)
            base = _view_of(value, updated, scope) if isinstance(s, gast.Assign) else None
            if (
                base is not None
                and isinstance(s.targets[0], gast.Name)
                and kinds.get(s.targets[0].id) is not None
                and not kinds[s.targets[0].id].scalar
            ):
                view = namer.fresh(f"{base}_view")
                kinds[view] = kinds[s.targets[0].id]
                out.append(_at(assign(view, value), s))
                s.value = gast.Call(
                    func=gast.Attribute(value=name(view), attr="copy", ctx=gast.Load()),
                    args=[],
                    keywords=[],
                )
            out.append(s)
        return out

    fn.body = block(fn.body)


def check_views(parsed, fn, updated, kinds, scope):
    """Refuse reading a view of an array after the array is updated in place.

    ``v = x[1:]; x[1] = 0.0; ... v ...``: Python's ``v`` sees the new value, but the
    derived rules treat ``v`` as the value it had when it was taken. Runs on the SSA
    function, before copy_views; name copies of a view (``w = v``, loop headers)
    count as the view."""
    order = _program_order(fn.body)
    position = {id(s): i for i, (s, _) in enumerate(order)}

    def reads(s, names):
        own = [getattr(s, f, None) for f in ("value", "test", "iter")]
        own += [t.slice for t in getattr(s, "targets", []) if isinstance(t, gast.Subscript)]
        return any(
            isinstance(n, gast.Name) and n.id in names
            for e in own
            if e is not None
            for n in gast.walk(e)
        )

    for s, def_loops in order:
        value = getattr(s, "value", None)
        array = _view_of(value, updated, scope) if isinstance(s, gast.Assign) else None
        if (
            array is None
            or not isinstance(s.targets[0], gast.Name)
            or kinds.get(s.targets[0].id, None) is None
            or kinds[s.targets[0].id].scalar
        ):
            continue
        aliases = {s.targets[0].id}
        for t, _ in order:
            if (
                isinstance(t, gast.Assign)
                and isinstance(t.value, gast.Name)
                and t.value.id in aliases
                and isinstance(t.targets[0], gast.Name)
            ):
                aliases.add(t.targets[0].id)
        updates = [
            (u, loops)
            for u, loops in order
            if isinstance(u, gast.Assign)
            and isinstance(u.targets[0], gast.Subscript)
            and u.targets[0].value.id == array
        ]
        for use, use_loops in order:
            if (
                use is s
                or not reads(use, aliases)
                or (isinstance(use, gast.Assign) and isinstance(use.value, gast.Name))
            ):
                continue
            for update, update_loops in updates:
                # between the view and its use, or in an earlier iteration of a loop the view was taken outside
                between = position[id(s)] < position[id(update)] < position[id(use)]
                if between or set(use_loops) & set(update_loops) - set(def_loops):
                    raise unsupported(
                        parsed,
                        use,
                        f"reading {s.targets[0].id!r}, a view of {array!r}, "
                        f"after {array!r} is updated in place (line {parsed.line(update)})",
                        f"take a copy ({array}[...].copy()) or read {array} again after the update",
                    )


def check_updates(parsed, scope, array_params=None, list_params=frozenset()):
    """In-place updates ``a[i] = v`` only on arrays this function creates or on
    array arguments, never aliased. Returns the arrays updated in place and the
    lists updated by item or appended to (``xs[i] = v``, which normalize turns into
    a new list; for a list argument, one the function writes back at its end).

    That is what makes them safe to differentiate: the forward sweep saves what an
    update overwrites and the reverse sweep restores it, so no other name may see
    the array change. An argument updated in place is left by the derived rule in
    the state the function leaves it in. ``array_params``: the parameters the
    signature says are arrays (None: no signature); ``x += y`` on one of them
    updates it in place."""
    node = parsed.node
    params = [a.id for a in node.args.args]
    updates = {}  # name -> the update statements, in source order
    appended = {}
    for n in gast.walk(node):
        targets = (
            n.targets
            if isinstance(n, gast.Assign)
            else [n.target]
            if isinstance(n, gast.AugAssign)
            else []
        )
        for t in targets:
            if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name):
                updates.setdefault(t.value.id, []).append(n)
        if (
            isinstance(n, gast.AugAssign)
            and isinstance(n.target, gast.Name)
            and n.target.id in (array_params or ())
        ):
            updates.setdefault(n.target.id, []).append(n)
        if isinstance(n, gast.Expr) and _append_call(n.value, scope) is not None:
            appended.setdefault(_append_call(n.value, scope)[0], n)
        if _extends(n, list_params):  # xs += ys on a list argument extends the caller's list
            appended.setdefault(n.target.id, n)
        if isinstance(n, gast.Expr) and _out_target(n.value) is not None:
            updates.setdefault(_out_target(n.value), []).append(n)
    in_place, lists = set(), set()
    for xs, at in appended.items():
        if xs in params and xs not in list_params:
            raise unsupported(
                parsed,
                at,
                f"appending to the argument {xs!r}, which is not a list",
                f"build a new list: {xs} = {xs} + [v]",
            )
        _check_unaliased(parsed, node, xs, "it is appended to", f"use {xs} itself, or list({xs})")
        definitions = _rebindings(node, xs, list_params)
        if xs in params and not any(d.lineno < at.lineno for d in definitions):
            _check_not_rebound_after(parsed, at, xs, definitions, f"list({xs})")
            lists.add(xs)  # the caller's list: written back at the end
    for array, stmts in updates.items():
        first = min(stmts, key=lambda n: n.lineno)
        # (for an argument, x += y rebinds it too unless the signature says it is an array)
        rebinding = (gast.Assign, gast.AugAssign) if array in params else gast.Assign
        definitions = [
            n
            for n in _rebindings(node, array, list_params)
            if n not in stmts and isinstance(n, rebinding)
        ]
        if array in params and (
            not definitions or first.lineno < min(d.lineno for d in definitions)
        ):
            _check_not_rebound_after(
                parsed,
                first,
                array,
                definitions,
                f"list({array})" if array in list_params else f"{array}.copy()",
            )
            if array in list_params:  # lowered like a local list, then written back
                lists.add(array)
                _check_unaliased(
                    parsed, node, array, "it is updated in place", f"use {array} itself"
                )
                continue
            if array_params is None or array in array_params:
                in_place.add(array)
                _check_unaliased(
                    parsed, node, array, "it is updated in place", f"use {array} itself"
                )
                continue
            raise unsupported(
                parsed,
                first,
                f"updating the argument {array!r}, which is neither an array nor a list, in place",
                f"build a new value: {array} = ...",
            )
        if any(isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name) for n in stmts):
            continue  # ``x += y`` on an argument rebound before: plain arithmetic on the new value
        if definitions and all(_is_list(d.value, scope) for d in definitions):
            _check_unaliased(
                parsed,
                node,
                array,
                "it is updated in place",
                f"use {array} itself, or list({array})",
            )
            lists.add(array)
            continue
        if any(_is_list(d.value, scope) for d in definitions):
            raise unsupported(
                parsed,
                first,
                f"updating the list {array!r} in place, which is not always "
                "a list built in this function",
                f"build {array} once as a list: [...], a comprehension or list(...)",
            )
        if len(definitions) != 1 or not _fresh(definitions[0].value, scope):
            raise unsupported(
                parsed,
                first,
                f"an in-place update of {array!r}, which is not a new array "
                "created once in this function",
                f"create it with np.zeros/np.empty/np.array/.copy() and assign {array} only once",
            )
        _check_unaliased(
            parsed, node, array, "it is updated in place", f"use {array} itself, or {array}.copy()"
        )
        in_place.add(array)
    return in_place, lists


def _extends(stmt, list_params):
    return (
        isinstance(stmt, gast.AugAssign)
        and isinstance(stmt.op, gast.Add)
        and isinstance(stmt.target, gast.Name)
        and stmt.target.id in list_params
    )


def _rebindings(node, xs, list_params):
    """The statements assigning ``xs`` (``xs += ys`` on a list argument extends it instead)."""
    return [
        n
        for n in gast.walk(node)
        if isinstance(n, (gast.Assign, gast.AugAssign))
        and any(
            isinstance(t, gast.Name) and t.id == xs
            for t in getattr(n, "targets", [getattr(n, "target", None)])
        )
        and not _extends(n, list_params)
    ]


def _check_not_rebound_after(parsed, first, xs, definitions, copy):
    """Refuse ``xs = ...`` after the argument ``xs`` is changed in place (first at ``first``)."""
    if any(d.lineno > first.lineno for d in definitions):
        raise unsupported(
            parsed,
            first,
            f"updating the argument {xs!r} in place and rebinding it later",
            f"update it in place only, or copy it first: {xs} = {copy}",
        )


def _check_unaliased(parsed, node, value, why, hint):
    """Refuse ``b = value``, and ``value`` held in a tuple, list or dict built before
    its last change: the other reference would see the changes made through the name."""
    last = max(
        (
            n.lineno
            for n in gast.walk(node)
            if isinstance(n, (gast.Assign, gast.AugAssign, gast.Expr)) and _changes(n, value)
        ),
        default=0,
    )
    for n in gast.walk(node):
        if isinstance(n, gast.Assign) and isinstance(n.value, gast.Name) and n.value.id == value:
            raise unsupported(parsed, n, f"a second name for {value!r} ({why})", hint)
        if (
            isinstance(n, (gast.Tuple, gast.List, gast.Dict))
            and isinstance(getattr(n, "ctx", gast.Load()), gast.Load)
            and getattr(n, "lineno", last + 1) <= last
            and any(
                isinstance(e, gast.Name) and e.id == value
                for e in (n.values if isinstance(n, gast.Dict) else n.elts)
            )
        ):
            raise unsupported(
                parsed, n, f"{value!r} held in a tuple, list or dict ({why} later)", hint
            )


def _changes(stmt, value):
    """Does ``stmt`` update ``value`` in place (``value[i] = v``, ``value.append(v)``, ``out=value``)?"""
    targets = stmt.targets if isinstance(stmt, gast.Assign) else [getattr(stmt, "target", None)]
    if any(
        isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name) and t.value.id == value
        for t in targets
    ):
        return True
    call = getattr(stmt, "value", None) if isinstance(stmt, gast.Expr) else None
    return isinstance(call, gast.Call) and (
        _out_target(call) == value
        or (
            isinstance(call.func, gast.Attribute)
            and isinstance(call.func.value, gast.Name)
            and call.func.value.id == value
        )
    )


def _is_list(value, scope):
    """``[...]``, a list comprehension, ``[0.0] * n`` or ``list(...)``: a new list."""
    if isinstance(value, (gast.List, gast.ListComp)):
        return True
    if isinstance(value, gast.BinOp) and isinstance(value.op, (gast.Mult, gast.Add)):
        return _is_list(value.left, scope) or _is_list(value.right, scope)
    return isinstance(value, gast.Call) and scope.lookup(value.func) is list


def _out_target(value):
    """``a`` for a call ``f(..., out=a)`` kept for its effect."""
    if isinstance(value, gast.Call):
        outs = [k.value for k in value.keywords if k.arg == "out"]
        if len(outs) == 1 and isinstance(outs[0], gast.Name):
            return outs[0].id
    return None


def _append_call(value, scope):
    """``(xs, [v])`` for ``xs.append(v)`` (and ``(xs, ys)`` for ``xs.extend(ys)``) on a local list."""
    if (
        isinstance(value, gast.Call)
        and isinstance(value.func, gast.Attribute)
        and isinstance(value.func.value, gast.Name)
        and scope.is_local(value.func.value.id)
        and len(value.args) == 1
        and not value.keywords
    ):
        if value.func.attr == "append":
            return value.func.value.id, gast.List(elts=[value.args[0]], ctx=gast.Load())
        if value.func.attr == "extend":
            return value.func.value.id, value.args[0]
    return None


def _fresh(value, scope):
    """A value that is a new array no other name refers to: a constructor, a copy, the
    result of arithmetic (``x * 1.0``, ``-x``, ``a @ b``) or of a ufunc (``np.sin(x)``)."""
    if isinstance(value, (gast.List, gast.BinOp, gast.UnaryOp)):
        return True
    if not isinstance(value, gast.Call):
        return False
    func = value.func
    if isinstance(func, gast.Attribute) and func.attr == "copy":
        return True
    obj = scope.lookup(func)
    import numpy as np

    if isinstance(obj, np.ufunc) and not value.keywords and len(value.args) == obj.nin:
        return True
    return any(obj is getattr(np, f, None) for f in FRESH)


@dataclass
class LocalFunction:
    """A nested ``def`` or a ``lambda`` bound to a name, inlined where it is called."""

    params: list
    body: list  # statements before the return
    result: object  # the returned expression


def local_functions(node):
    """The nested functions of ``node`` that can be inlined at their calls.

    A nested ``def`` qualifies when its only ``return`` is its last statement and
    it has plain positional parameters; ``g = lambda ...:`` always does. Either
    must be bound once and only ever called (never passed around)."""
    found = {}
    for s in node.body:
        if isinstance(s, gast.FunctionDef) and not s.decorator_list and _plain_params(s.args):
            body = [b for b in s.body if not _is_docstring(b)]
            returns = [n for n in gast.walk(s) if isinstance(n, gast.Return)]
            if (
                body
                and isinstance(body[-1], gast.Return)
                and len(returns) == 1
                and body[-1].value is not None
                and not any(
                    isinstance(n, (gast.FunctionDef, gast.Lambda))
                    for b in body
                    for n in gast.walk(b)
                )
            ):
                found[s.name] = (
                    s,
                    LocalFunction([a.id for a in s.args.args], body[:-1], body[-1].value),
                )
        elif (
            isinstance(s, gast.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name)
            and isinstance(s.value, gast.Lambda)
            and _plain_params(s.value.args)
        ):
            found[s.targets[0].id] = (
                s,
                LocalFunction([a.id for a in s.value.args.args], [], s.value.body),
            )
    for fn_name in list(found):
        uses = [n for n in gast.walk(node) if isinstance(n, gast.Name) and n.id == fn_name]
        calls = [
            n
            for n in gast.walk(node)
            if isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id == fn_name
        ]
        stores = [n for n in uses if isinstance(n.ctx, gast.Store)]
        loads = [n for n in uses if isinstance(n.ctx, gast.Load)]
        if len(loads) != len(calls) or len(stores) > (
            1 if isinstance(found[fn_name][0], gast.Assign) else 0
        ):
            del found[fn_name]
    return found


def _why_not_inlined(node, definition):
    """What keeps a nested ``def`` from being inlined at its calls, in words."""
    name = definition.name
    defined = [n for n in gast.walk(node) if isinstance(n, gast.FunctionDef) and n.name == name]
    if len(defined) > 1:
        return f"the local function {name!r} defined more than once"
    if definition not in node.body:
        return f"the local function {name!r} defined inside a loop, branch or another function"
    if definition.decorator_list or not _plain_params(definition.args):
        return f"the local function {name!r} with decorators, *args, keyword-only parameters or defaults"
    if any(isinstance(n, (gast.Nonlocal, gast.Global)) for n in gast.walk(definition)):
        return f"nonlocal or global in the local function {name!r}"
    body = [b for b in definition.body if not _is_docstring(b)]
    if (
        not body
        or not isinstance(body[-1], gast.Return)
        or body[-1].value is None
        or len([n for n in gast.walk(definition) if isinstance(n, gast.Return)]) != 1
    ):
        return f"the local function {name!r}, whose only return is not its last statement"
    return (
        f"the local function {name!r} used other than by calling it (passed or stored as a value)"
    )


def _plain_params(args):
    return not (args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or args.defaults)


def check_supported(parsed):
    """Raise UnsupportedSyntaxError at the first construct outside what the stages handle."""
    node = parsed.node
    inlined = {id(definition) for definition, _ in local_functions(node).values()}
    inlined |= {
        id(d.value) for d, _ in local_functions(node).values() if isinstance(d, gast.Assign)
    }
    # f(x for x in xs): a generator as a call's argument is read as a list comprehension
    inlined |= {
        id(a)
        for n in gast.walk(node)
        if isinstance(n, gast.Call)
        for a in n.args
        if isinstance(a, gast.GeneratorExp)
    }
    for n in gast.walk(node):
        if (
            n is not node
            and type(n) in _UNSUPPORTED
            and not isinstance(n, gast.Starred)
            and id(n) not in inlined
        ):
            if isinstance(n, gast.FunctionDef):
                raise unsupported(
                    parsed,
                    n,
                    _why_not_inlined(node, n),
                    "define the helper at module level and call it",
                )
            raise unsupported(parsed, n)
    args = node.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
        raise unsupported(
            parsed,
            node,
            "*args, **kwargs, keyword-only or positional-only "
            "parameters in the differentiated function",
            "give the differentiated function plain positional parameters",
        )


_DYNAMIC = {
    "eval",
    "exec",
    "compile",
    "globals",
    "locals",
    "vars",
    "__import__",
    "setattr",
    "delattr",
}


def check_dynamic(parsed, scope):
    """Refuse code whose meaning is only known when it runs (``eval("x * 2")``, ``locals()``,
    ``getattr(m, name)`` with a computed name): its derivative cannot be read from the source,
    and treating it as a constant would give a silent zero."""
    import builtins

    for n in gast.walk(parsed.node):
        if not isinstance(n, gast.Call) or not isinstance(n.func, gast.Name):
            continue
        target = scope.lookup(n.func)
        if (
            target is not None
            and getattr(builtins, n.func.id, None) is target
            and n.func.id in _DYNAMIC
        ):
            raise unsupported(
                parsed,
                n,
                f"{n.func.id}(...), whose code is only known when it runs",
                "write the expression itself in the function",
            )
        if target is getattr and (len(n.args) < 2 or not isinstance(n.args[1], gast.Constant)):
            raise unsupported(
                parsed,
                n,
                "getattr with a name computed when it runs",
                "write the attribute itself: obj.name",
            )


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


def _temp_base(op):
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


def _is_docstring(s):
    return (
        isinstance(s, gast.Expr)
        and isinstance(s.value, gast.Constant)
        and isinstance(s.value.value, str)
    )


def _may_return(s):
    return any(isinstance(n, gast.Return) for n in gast.walk(s))


def _always_exits(stmts):
    """Every path through ``stmts`` ends in return or raise."""
    for s in stmts:
        if isinstance(s, (gast.Return, gast.Raise)):
            return True
        if isinstance(s, gast.If) and _always_exits(s.body) and _always_exits(s.orelse):
            return True
    return False


def normalize(parsed, scope, namer, in_place=frozenset()):
    """The normalized copy of ``parsed.node``; ``namer`` supplies temporaries."""
    normalizer = Normalizer(parsed, scope, namer, in_place)
    return normalizer.function(copy.deepcopy(parsed.node))
