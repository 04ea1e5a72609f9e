"""Calls: arguments as atoms, spread arguments resolved, lists given to NumPy as arrays.

Takes a call; guarantees a call of atoms with ``*args``/``**kwargs`` of the function's own
spread parameters written out, ``options.get("k", d)`` resolved, a list literal given to a
NumPy function read as ``np.array([...])`` (whose rule splits the cotangent back), and a
bare call kept for its effect only where that cannot change a differentiated value.

>>> from tangent_ast.front.lowering import lower_source
>>> print(lower_source('''
... def f(x):
...     print(x)
...     return np.sum([x, x * 2])
... '''))
def f(x):
    print(x)
    x_times_two = x * 2
    tmp = [x, x_times_two]
    array = np.array(tmp)
    out = np.sum(array)
    return out
"""

import builtins
import copy
import dataclasses
import inspect

import gast
import numpy as np

from ... import runtime
from ...rules.binding import CallRefused, Role, bind_call
from ...rules.registry import is_pure_function, lookup
from ...vocabulary.syntax import assign, located, name
from ..aliasing import changed_list
from ..checks import unsupported


class CallLowering:
    """The lowering of calls and of statements that are calls."""

    def write_back(self, node, stmts):
        """A list argument changed by item or appended to is a value inside the function: a
        copy, then a new list at each change (``xs = runtime.list_with(xs, i, v)``). At the end
        it is copied into the caller's list (saved values never see that write)::

            xs_given = xs
            xs = list(xs)
            ...
            runtime.write_list(xs_given, xs)

        A dict argument updated by key is written back the same way (``d = dict(d)`` first,
        ``runtime.write_items(d_given, d)`` at the end), and a dataclass argument a field of
        which is assigned too (``p = replace(p)``, ``runtime.write_fields(p_given, p)``): what
        the reverse sweep reads of the argument is then the value as given, not the one
        written back. An array such an argument holds that ``p.w += v`` (``xs[0] += v``)
        updates in place is copied after it (:meth:`copied_in_place`), and the write-back
        writes the caller's array (``in_place=("w",)``), as Python's update does.
        """
        params = [a.id for a in node.args.args]
        written = [p for p in params if p in self.lists or p in self.records or p in self.dicts]
        if not written:
            return stmts
        given = {p: self.namer.fresh(f"{p}_given") for p in written}
        prologue = []
        for p in written:
            prologue.append(assign(given[p], name(p), node))
            if p in self.lists or p in self.dicts:
                kind = "list" if p in self.lists else "dict"
                copied = gast.Call(func=self.builtin(kind), args=[name(p)], keywords=[])
            else:  # a dataclass instance: the residuals keep the one given, not written
                copied = gast.Call(func=self.replace(), args=[name(p)], keywords=[])
            prologue.append(assign(p, copied, node))
            prologue += self.copied_in_place(p, node)
        epilogue = []
        for p in written:
            helper = (
                "write_list"
                if p in self.lists
                else "write_items"
                if p in self.dicts
                else "write_fields"
            )
            call = self.runtime_call(helper, [name(given[p]), name(p)])
            if self.records.get(p):  # the arrays Python's p.w += v (xs[0] += v) writes into
                parts = [gast.Constant(f, None) for f in sorted(self.records[p], key=repr)]
                call.keywords = [
                    gast.keyword(arg="in_place", value=gast.Tuple(elts=parts, ctx=gast.Load()))
                ]
            epilogue.append(located(gast.Expr(value=call), node))
        return prologue + stmts + epilogue

    def replace(self):
        return name(self.scope.bind(dataclasses.replace, self.namer, "replace"))

    def copied_in_place(self, p, node):
        """Each array of the argument ``p`` that ``p.f += v`` (``p[k] += v``) updates in
        place, copied (``p_f = p.f``, ``p_f_1 = p_f.copy()``, ``p = replace(p, f=p_f_1)``;
        ``p = runtime.list_with(p, k, p_k_1)``): the caller's array is written once, at the
        end, and nothing saved shares it."""
        stmts = []
        for part in sorted(self.records.get(p, ()), key=repr):
            base = f"{p}_{part}" if isinstance(part, str) and part.isidentifier() else f"{p}_item"
            held, copied = self.namer.fresh(base), self.namer.fresh(base)
            if p in self.lists or p in self.dicts:
                key = gast.Constant(part, None)
                read = gast.Subscript(value=name(p), slice=key, ctx=gast.Load())
                helper = "list_with" if p in self.lists else "dict_with"
                again = self.runtime_call(helper, [name(p), copy.deepcopy(key), name(copied)])
            else:
                read = gast.Attribute(value=name(p), attr=part, ctx=gast.Load())
                keyword = gast.keyword(arg=part, value=name(copied))
                again = gast.Call(func=self.replace(), args=[name(p)], keywords=[keyword])
            method = gast.Attribute(value=name(held), attr="copy", ctx=gast.Load())
            stmts.append(assign(held, read, node))
            stmts.append(assign(copied, gast.Call(func=method, args=[], keywords=[]), node))
            stmts.append(assign(p, again, node))
        return stmts

    def runtime_call(self, helper, args):
        """``runtime.<helper>(*args)``, ``runtime`` bound as a global of the function if it is
        not yet."""
        module = self.scope.bind(runtime, self.namer, "runtime")
        return gast.Call(
            func=gast.Attribute(value=name(module), attr=helper, ctx=gast.Load()),
            args=args,
            keywords=[],
        )

    def check_effect_only(self, s):
        """A call kept only for its effect must not change a local value: that change
        would be invisible to the derivative (a silent zero). print(x) is fine."""
        call = s.value
        if not isinstance(call, gast.Call):
            return
        func = call.func
        if self.api_role(func) is not None:
            self.api_call(call, s)  # tangent_ast's own API: refused, naming it, or lowered
            return
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
        entry = lookup(target)
        if (entry is not None and entry.checks_only) or target in _CONTEXTS:
            return
        if target is runtime.write_list and self.writes_back_an_argument(call):
            self.written_back.add(call.args[0].id)
            return

        if _numpy_effect(target, func, locals_in_args) or (
            inspect.isfunction(target) and locals_in_args
        ):
            raise unsupported(
                self.parsed,
                s,
                f"calling {getattr(target, '__name__', 'a function')} "
                "for its effect on a local value",
                "use its result: y = f(x), or update an array with a[i] = v",
            )

    def writes_back_an_argument(self, call):
        """``runtime.write_list(xs, xs_2)`` as a derived rule writes a list argument back
        (:meth:`write_back`): ``xs`` a parameter nothing reads or binds after the call, its
        last use, and ``xs_2`` a local name. Derived again, it is what this lowering would
        make of the updates themselves."""
        node = self.parsed.node
        if not (
            len(call.args) == 2
            and all(k.arg == "in_place" for k in call.keywords)
            and all(isinstance(a, gast.Name) for a in call.args)
            and call.args[0].id in {a.id for a in node.args.args}
        ):
            return False
        given = call.args[0].id
        uses = [n for n in gast.walk(node) if isinstance(n, gast.Name) and n.id == given]
        last = max((n.lineno, n.col_offset) for n in uses if hasattr(n, "lineno"))
        return (call.args[0].lineno, call.args[0].col_offset) == last

    def list_method(self, call, at):
        """``xs.insert(i, v)`` -> ``xs = runtime.list_inserted(xs, i, v)``; ``xs.pop(i)`` ->
        ``popped = xs[i]; xs = runtime.without(xs, i)`` (a dict's ``d.pop(k)`` the same):
        a local list changed by a method is a new list, like ``xs.append(v)``. Returns the
        statements and the call's value, or None for another call."""
        xs = changed_list(call, self.scope)
        if xs is None or call.func.attr not in ("insert", "pop"):
            return None
        pre = []
        args = []
        for a in call.args:
            more, atom = self.atom(a, at)
            pre += more
            args.append(atom)

        def rebind(target, value):
            return self.assign(
                located(
                    gast.Assign(
                        targets=[name(target, gast.Store())], value=value, type_comment=None
                    ),
                    at,
                )
            )

        if call.func.attr == "insert":
            new = self.runtime_call("list_inserted", [name(xs), *args])
            return pre + rebind(xs, new), gast.Constant(None, None)
        key = args[0] if args else gast.Constant(-1, None)
        popped = self.namer.fresh("popped")
        read = gast.Subscript(value=name(xs), slice=copy.deepcopy(key), ctx=gast.Load())
        new = self.runtime_call("without", [name(xs), copy.deepcopy(key)])
        return pre + rebind(popped, read) + rebind(xs, new), name(popped)

    def builtin(self, name_):
        """A builtin the lowering introduces (``range``, ``len``, ``min``)."""
        self.scope.free.setdefault(name_, getattr(builtins, name_))
        return name(name_)

    def einsum_subscripts(self, call):
        """``np.einsum(a, [0, 1], b, [1, 2], [0, 2])`` -> ``np.einsum('ab,bc->ac', a, b)``:
        the sublist form, its lists written out, as the subscripts a person writes (whose
        rules hold). Any other call is returned as it is."""
        if (
            self.scope.lookup(call.func) is not np.einsum
            or not call.args
            or (isinstance(call.args[0], gast.Constant) and isinstance(call.args[0].value, str))
            or call.keywords
        ):
            return call
        pairs = len(call.args) // 2
        lists = [call.args[2 * i + 1] for i in range(pairs)]
        if len(call.args) % 2:
            lists.append(call.args[-1])
        spelled = [_sublist_letters(s, self.scope.lookup) for s in lists]
        if any(s is None for s in spelled):
            return call  # refused where it is derived, with a hint
        subscripts = ",".join(spelled[:pairs])
        if len(call.args) % 2:
            subscripts += "->" + spelled[-1]
        return gast.Call(
            func=call.func,
            args=[gast.Constant(subscripts, None), *(call.args[2 * i] for i in range(pairs))],
            keywords=[],
        )

    def lists_as_arrays(self, call):
        """``np.sum([a, b * c])`` -> ``np.sum(np.array([a, b * c]))``: NumPy makes an array of
        a list literal passed where it takes an array; written out, the conversion has a
        rule (its cotangent is split back into the list's entries), the implicit one none.
        Only for a NumPy function reached as ``np.f`` (or ``np.linalg.f``) whose rule takes
        arrays there."""

        func = call.func
        entry = lookup(self.scope.lookup(func))
        root = func
        while isinstance(root, gast.Attribute):  # np.sum, np.linalg.norm: the np they start at
            root = root.value
        if (
            entry is None
            or entry.sequences
            or not isinstance(func, gast.Attribute)
            or not isinstance(root, gast.Name)
            or self.scope.lookup(root) is not np
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
            value=gast.Name(root.id, gast.Load(), None, None), attr="array", ctx=gast.Load()
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
        """``f(x, *rest)`` with ``rest`` a ``*args`` parameter: ``f(x, rest0, rest1)``; a
        constant slice of it, ``f(*rest[1:])``, the names it holds."""
        out = []
        for a in items:
            if not isinstance(a, gast.Starred):
                out.append(a)
            elif isinstance(a.value, gast.Name) and self.spread.items(a.value.id) is not None:
                out += [name(n) for n in self.spread.items(a.value.id)]
            elif (sliced := self.spread_slice(a.value)) is not None:
                out += [name(n) for n in sliced]
            elif isinstance(a.value, (gast.Tuple, gast.List)):
                out += self.spread_items(a.value.elts, what, hint)
            else:
                raise unsupported(self.parsed, a, what, hint)
        return out

    def spread_slice(self, value):
        """The names of ``rest[a:b:c]``, a slice of constant bounds of a ``*args``
        parameter ``rest``; else None."""
        if not (
            isinstance(value, gast.Subscript)
            and isinstance(value.value, gast.Name)
            and isinstance(value.slice, gast.Slice)
        ):
            return None
        names = self.spread.items(value.value.id)
        bounds = [_int_literal(b) for b in (value.slice.lower, value.slice.upper, value.slice.step)]
        if names is None or False in bounds:
            return None
        return names[slice(*bounds)]

    def spread_keywords(self, call):
        """``f(x, **options)`` with ``options`` a ``**kwargs`` parameter: ``f(x,
        tol=options_tol)``."""
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

    def callee(self, func, at):
        if (  # getattr(np, "sin")(x) is np.sin(x)
            isinstance(func, gast.Call)
            and self.scope.lookup(func.func) is builtins.getattr
            and len(func.args) == 2
            and not func.keywords
            and isinstance(func.args[1], gast.Constant)
            and isinstance(func.args[1].value, str)
            and func.args[1].value.isidentifier()
        ):
            func = gast.Attribute(value=func.args[0], attr=func.args[1].value, ctx=gast.Load())
        made = self.made_by_api(func)
        if made is not None:  # ta.grad(g)(x): the gradient, made once, called by a name
            return [], made
        if isinstance(func, gast.Name) or (
            isinstance(func, gast.Attribute) and self.scope.is_global_chain(func)
        ):
            return [], func
        if isinstance(func, gast.Attribute):
            pre, receiver = self.atom(func.value, at)
            return pre, gast.Attribute(value=receiver, attr=func.attr, ctx=gast.Load())
        if isinstance(func, (gast.Call, gast.Subscript)):
            # make_f(a)(x), fs[0](x): the function value named first, then called as one
            return self.atom(func, at)
        raise unsupported(
            self.parsed,
            func,
            "calling the result of an expression",
            "assign the function to a name first",
        )


def _sublist_letters(sublist, lookup):
    """The letters of an einsum sublist written out (``[0, 1]``, ``[Ellipsis, 0]``), or None."""
    if not isinstance(sublist, (gast.List, gast.Tuple)):
        return None
    letters = ""
    for e in sublist.elts:
        if (isinstance(e, gast.Constant) and e.value is Ellipsis) or (
            isinstance(e, gast.Name) and lookup(e) is Ellipsis
        ):
            letters += "..."
        elif isinstance(e, gast.Constant) and type(e.value) is int and 0 <= e.value < 52:
            letters += "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[e.value]
        else:
            return None
    return letters


_IN_PLACE = (np.copyto, np.put, np.put_along_axis, np.place, np.putmask, np.fill_diagonal)


def _numpy_effect(target, func, locals_in_args):
    """A NumPy call that may change an array it is given (``np.put_along_axis(g, i, v)``,
    ``np.add.at``, ``rng.shuffle(x)``): anything of NumPy's called for nothing but its effect,
    on local values, but what the rule table knows is pure and numpy.testing's checks."""
    if target in _IN_PLACE or (
        type(target).__name__ == "ufunc" and getattr(func, "attr", "") == "at"
    ):
        return True
    module = getattr(target, "__module__", None) or getattr(
        type(getattr(target, "__self__", None)), "__module__", ""
    )
    return (
        locals_in_args
        and (module or "").partition(".")[0] == "numpy"
        and not (module or "").startswith("numpy.testing")
        and not is_pure_function(target)
    )


# a with block's enter and exit (contexts.py): kept for their effect, on a manager object
_CONTEXTS = (runtime.enter_context, runtime.exit_context)


def _int_literal(bound):
    """A slice bound written as an int (``1``, ``-1``) or left out (None); else False."""
    if bound is None:
        return None
    negated = isinstance(bound, gast.UnaryOp) and isinstance(bound.op, gast.USub)
    number = bound.operand if negated else bound
    if not (isinstance(number, gast.Constant) and type(number.value) is int):
        return False
    return -number.value if negated else number.value
