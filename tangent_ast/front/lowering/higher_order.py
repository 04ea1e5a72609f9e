"""Functions that take a function: ``map``, ``filter``, ``functools.reduce``, and ``sorted``,
``min``, ``max`` with ``key=`` (and ``min``/``max`` of an iterable or of three or more
values), written out as the loops they run.

Takes a call of one of them whose function is a lambda, a local function, or a function
reached by name (``np.sin``, a module-level def); guarantees comprehensions and loops that
call it directly, a lambda's body written in place of its call. The derivative then follows
each call as it follows any other: ``sorted`` by a key picks items by their positions
(``runtime.sorted_order``, whose result has no derivative), so the cotangent goes back to
the items picked.

>>> from tangent_ast.front.lowering import lower_source
>>> print(lower_source('''
... def f(xs):
...     return functools.reduce(lambda a, b: a * b + 1.0, xs, 0.5)
... '''))
def f(xs):
    accumulated = 0.5
    len_xs = len(xs)
    for i in range(len_xs):
        x = xs[i]
        tmp = accumulated * x
        accumulated = tmp + 1.0
    out = accumulated
    return out
"""

import builtins
import copy
import functools

import gast

from ...vocabulary.syntax import assign, located, name
from ..checks import unsupported

_TAKES_A_FUNCTION = {builtins.map, builtins.filter, functools.reduce}


class HigherOrderLowering:
    """The lowering of ``map``, ``filter``, ``functools.reduce`` and ``key=`` orderings."""

    def higher_order(self, call, at):
        """``(statements, operation)`` for a call that takes a function, or None."""
        fn = self.scope.lookup(call.func)
        keys = {kw.arg: kw.value for kw in call.keywords}
        if fn in _TAKES_A_FUNCTION and len(call.args) >= 2 and not call.keywords:
            if fn is functools.reduce:
                return self.reduce(call.args[0], call.args[1], call.args[2:], at)
            items = [self.namer.fresh("item") for _ in call.args[1:]]
            source = (
                call.args[1]
                if len(call.args) == 2
                else gast.Call(func=self.builtin("zip"), args=call.args[1:], keywords=[])
            )
            target = (
                name(items[0], gast.Store())
                if len(items) == 1
                else gast.Tuple(elts=[name(i, gast.Store()) for i in items], ctx=gast.Store())
            )
            applied = self.applied(call.args[0], [name(i) for i in items], at)
            element, condition = (
                (name(items[0]), [applied]) if fn is builtins.filter else (applied, [])
            )
            comp = gast.ListComp(
                elt=element,
                generators=[
                    gast.comprehension(target=target, iter=source, ifs=condition, is_async=0)
                ],
            )
            return self.comprehension(comp, at)
        if fn in (builtins.sorted, builtins.min, builtins.max) and "key" in keys:
            return self.ordered(fn, call, keys, at)
        if fn is builtins.sorted:  # sorted(xs): by the items themselves
            return self.ordered(fn, call, keys, at)
        if fn in (builtins.min, builtins.max) and len(call.args) != 2:
            return self.ordered(fn, call, keys, at)  # max(xs), max(a, b, c): the first of the
        return None  # greatest (the rules of max(a, b) take two numbers)

    def applied(self, func, args, at):
        """``func(*args)``: a lambda's body with its parameters replaced by ``args`` (names),
        any other function called."""
        if not isinstance(func, gast.Lambda):
            return gast.Call(func=func, args=args, keywords=[])
        params = func.args
        if params.vararg or params.kwarg or params.kwonlyargs or params.defaults:
            raise unsupported(
                self.parsed,
                at,
                "a lambda with *args, **kwargs, keyword-only parameters or defaults here",
                "give it plain parameters",
            )
        if len(params.args) != len(args):
            raise unsupported(
                self.parsed,
                at,
                f"a lambda of {len(params.args)} parameters called with {len(args)} arguments",
                "check the lambda against the call",
            )
        replacing = {p.id: a for p, a in zip(params.args, args, strict=True)}
        body = copy.deepcopy(func.body)
        for n in gast.walk(body):
            for field, value in gast.iter_fields(n):
                if isinstance(value, gast.Name) and value.id in replacing:
                    setattr(n, field, copy.deepcopy(replacing[value.id]))
                elif isinstance(value, list):
                    value[:] = [
                        copy.deepcopy(replacing[v.id])
                        if isinstance(v, gast.Name) and v.id in replacing
                        else v
                        for v in value
                    ]
        if isinstance(body, gast.Name) and body.id in replacing:
            return copy.deepcopy(replacing[body.id])
        return body

    def reduce(self, func, items, initial, at):
        """``functools.reduce(f, xs[, start])`` -> a loop folding ``f`` over ``xs``."""
        accumulated = self.namer.fresh("accumulated")
        sequence = self.namer.fresh("sequence") if not isinstance(items, gast.Name) else None
        stmts = [assign(sequence, items, at)] if sequence else []
        xs = name(sequence) if sequence else items
        index, item = self.namer.fresh("i"), self.namer.fresh("x")
        if initial:
            stmts.append(assign(accumulated, initial[0], at))
            start = gast.Constant(0, None)
        else:  # the first item starts the fold
            first = gast.Subscript(
                value=copy.deepcopy(xs), slice=gast.Constant(0, None), ctx=gast.Load()
            )
            stmts.append(assign(accumulated, first, at))
            start = gast.Constant(1, None)
        length = gast.Call(func=self.builtin("len"), args=[copy.deepcopy(xs)], keywords=[])
        bounds = [length] if initial else [start, length]
        step = self.applied(func, [name(accumulated), name(item)], at)
        read = gast.Subscript(value=copy.deepcopy(xs), slice=name(index), ctx=gast.Load())
        loop = gast.For(
            target=name(index, gast.Store()),
            iter=gast.Call(func=self.builtin("range"), args=bounds, keywords=[]),
            body=[assign(item, read, at), assign(accumulated, step, at)],
            orelse=[],
            type_comment=None,
        )
        return self.block([*stmts, located(loop, at)]), name(accumulated)

    def ordered(self, fn, call, keys, at):
        """``sorted(xs, key=f)`` -> the items at the positions ``runtime.sorted_order`` gives
        for ``[f(x) for x in xs]`` (``[x for x in xs]`` without ``key``); ``min``/``max(xs,
        key=f)`` the first of those positions. The items are ``list(xs)``, what iterating
        ``xs`` gives: the keys of a dict."""
        if fn is builtins.sorted and len(call.args) != 1:
            return None
        if set(keys) - ({"key", "reverse"} if fn is builtins.sorted else {"key"}):
            return None
        items = (
            gast.Call(func=self.builtin("list"), args=[call.args[0]], keywords=[])
            if len(call.args) == 1
            else gast.List(elts=list(call.args), ctx=gast.Load())
        )
        xs = self.namer.fresh("items")
        item = self.namer.fresh("item")
        stmts = self.assign(
            located(
                gast.Assign(targets=[name(xs, gast.Store())], value=items, type_comment=None), at
            )
        )
        key_of = gast.ListComp(
            elt=self.applied(keys["key"], [name(item)], at) if "key" in keys else name(item),
            generators=[
                gast.comprehension(
                    target=name(item, gast.Store()), iter=name(xs), ifs=[], is_async=0
                )
            ],
        )
        reverse = keys.get("reverse", gast.Constant(fn is builtins.max, None))
        stmts_keys, key_list = self.comprehension(key_of, at, called="keys")
        stmts += stmts_keys
        order = self.runtime_call("sorted_order", [key_list, reverse])
        positions = self.namer.fresh("order")
        stmts += self.assign(
            located(
                gast.Assign(
                    targets=[name(positions, gast.Store())], value=order, type_comment=None
                ),
                at,
            )
        )
        if fn is not builtins.sorted:
            first = gast.Subscript(
                value=name(positions), slice=gast.Constant(0, None), ctx=gast.Load()
            )
            more, op = self.operation(
                gast.Subscript(value=name(xs), slice=first, ctx=gast.Load()), at
            )
            return stmts + more, op
        index = self.namer.fresh("i")
        picked = gast.ListComp(
            elt=gast.Subscript(value=name(xs), slice=name(index), ctx=gast.Load()),
            generators=[
                gast.comprehension(
                    target=name(index, gast.Store()), iter=name(positions), ifs=[], is_async=0
                )
            ],
        )
        more, op = self.comprehension(picked, at)
        return stmts + more, op
