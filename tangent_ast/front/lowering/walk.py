"""The walk: visits each statement once and hands each construct to its lowering.

Takes the function's gast ``FunctionDef``; guarantees the normal form described in
:mod:`tangent_ast.front.lowering`. Assignments, tuple unpacking and augmented assignments are
lowered here (``a, b = x, y * 2`` assigns each name; ``a += b`` is ``a = a + b``, recorded
so that the checks after SSA can refuse it where Python would update an array in place).

>>> from tangent_ast.front.lowering import lower_source
>>> print(lower_source('''
... def f(x, y):
...     a, b = x, y * 2
...     a += b
...     return a
... '''))
def f(x, y):
    y_times_two = y * 2
    a = x
    b = y_times_two
    a = a + b
    return a
"""

import copy
import dataclasses

import gast

from ...vocabulary.calling import Spread
from ...vocabulary.syntax import assign, is_atom, is_docstring, located, name
from ..aliasing import append_call, out_target
from ..checks import check_supported, unsupported
from ..local_functions import local_functions
from ..record_updates import field_of_local
from .api_calls import ApiCallLowering
from .calls import CallLowering
from .comprehensions import ComprehensionLowering
from .conditionals import ConditionalLowering
from .contexts import ContextLowering
from .higher_order import HigherOrderLowering
from .inlining import InliningLowering
from .jumps import JumpLowering
from .loops import LoopLowering
from .operations import OperationLowering, temp_base


class Normalizer(
    ApiCallLowering,
    CallLowering,
    ComprehensionLowering,
    ConditionalLowering,
    ContextLowering,
    HigherOrderLowering,
    InliningLowering,
    JumpLowering,
    LoopLowering,
    OperationLowering,
):
    """The lowering of one function: the state every construct's lowering shares."""

    def __init__(
        self,
        parsed,
        scope,
        namer,
        in_place=frozenset(),
        lists=frozenset(),
        spread=None,
        records=None,
        dicts=frozenset(),
    ):
        self.parsed = parsed
        self.scope = scope
        self.namer = namer
        self.in_place = in_place  # array arguments updated in place (check_updates)
        self.lists = lists  # local lists updated by item: xs[i] = v is xs = list_with(xs, i, v)
        # dataclass arguments a field of which is assigned, written back, and list and dict
        # arguments -> the fields (items) whose array p.f += v (p[k] += v) updates in place
        self.records = records or {}
        self.dicts = dicts  # dicts updated by key: d[k] = v is d = dict_with(d, k, v)
        # list arguments a derived rule writes back itself (runtime.write_list, derived again)
        self.written_back: set[str] = set()
        self.spread = spread or Spread()  # *args/**kwargs parameters, by the names they hold
        self.result = None
        # (line, column, name) of each ``name += ...``: the checks after SSA look for them
        self.augmented: set[tuple[int, int, str]] = set()
        self.handlers: list[int] = []  # lines of the except clauses left to the primal
        self.checkpoints: dict[int, int] = {}  # id of a checkpointed loop -> its snapshots
        # the statements reading a loop's item (x = xs[i]): a dict's item is a key, known
        # once kinds are (analysis/written_out.py)
        self.item_reads: list[gast.Assign] = []
        self.dict_view_reads: list[gast.Assign] = []  # of a loop over d.items() and the like
        # names made for calls of tangent_ast's API -> what they stand for (api_calls.py), and
        # the pullbacks (linear maps) of vjp (linearize) -> the name their calls call
        self.made: dict[str, object] = {}
        self.made_calls: dict[str, str] = {}

    def function(self, node):
        check_supported(self.parsed)
        # a local function's definition binds its name from there on (calls are inlined)
        # (by place: returns inside the function copy statements into branches)
        self.definitions = {
            (d.lineno, d.col_offset): (fn_name, local)
            for fn_name, found in local_functions(node).items()
            for d, local in found
        }
        self.local = {}
        self.inlining = []
        body = [s for s in node.body if not is_docstring(s)]
        body = self.try_bodies(body)
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
        stmts.append(located(gast.Return(value=name(self.result)), tail or node))
        new = copy.copy(node)
        new.body = stmts
        new.returns = None
        for arg in new.args.args:
            arg.annotation = None
        return new

    def block(self, stmts):
        out = []
        for s in stmts:
            if self.defines_local_function(s):
                continue
            out.extend(self.stmt(s))
        return out

    def defines_local_function(self, s):
        """Whether ``s`` defines a local function (then its name is bound to it from here)."""
        if not isinstance(s, (gast.FunctionDef, gast.Assign)):
            return False
        found = self.definitions.get((getattr(s, "lineno", None), getattr(s, "col_offset", None)))
        if found is None or (isinstance(s, gast.Assign) and not isinstance(s.value, gast.Lambda)):
            return False
        fn_name, local = found
        self.local[fn_name] = local
        return True

    def stmt(self, s):
        if isinstance(s, gast.Assign):
            return self.assign(s)
        if isinstance(s, gast.AugAssign):
            if isinstance(s.target, gast.Subscript):
                return self.update(s.target, s, op=s.op, value=s.value)
            if field_of_local(s.target, self.scope):
                return self.field_augmented(s)
            if not isinstance(s.target, gast.Name):
                raise unsupported(
                    self.parsed,
                    s,
                    "augmented assignment to an attribute of a value not of this function",
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
                located(
                    gast.Assign(
                        targets=[name(s.target.id, gast.Store())], value=value, type_comment=None
                    ),
                    s,
                )
            )
            # for check_augmented: on an array, Python updates in place
            self.augmented.add((s.lineno, s.col_offset, s.target.id))
            return stmts
        if isinstance(s, gast.AnnAssign):
            if s.value is None:
                return []
            return self.assign(
                located(gast.Assign(targets=[s.target], value=s.value, type_comment=None), s)
            )
        if isinstance(s, gast.If):
            pre, test = self.atom(s.test, s)
            new = located(
                gast.If(test=test, body=self.block(s.body), orelse=self.block(s.orelse)), s
            )
            new.lineno = s.lineno
            return pre + [new]
        if isinstance(s, gast.Expr):
            if isinstance(s.value, gast.Constant):
                return []
            target = out_target(s.value)
            if target is not None:  # np.add(a, b, out=a) -> a[...] = np.add(a, b)
                call = copy.copy(s.value)
                call.keywords = [k for k in call.keywords if k.arg != "out"]
                whole = gast.Subscript(
                    value=name(target), slice=gast.Constant(Ellipsis, None), ctx=gast.Store()
                )
                return self.update(whole, s, value=call)
            changed = self.list_method(s.value, s)
            if changed is not None:  # xs.insert(i, v), xs.pop(i)
                return changed[0]
            appended = append_call(s.value, self.scope)
            if appended is not None:  # xs.append(v) -> xs = xs + [v]
                xs, item = appended
                value = gast.BinOp(left=name(xs), op=gast.Add(), right=item)
                return self.assign(
                    located(
                        gast.Assign(
                            targets=[name(xs, gast.Store())], value=value, type_comment=None
                        ),
                        s,
                    )
                )
            self.check_effect_only(s)
            pre, value = self.operation(s.value, s)
            return pre + [located(gast.Expr(value=value), s)]
        return self.compound(s)

    def try_bodies(self, stmts):
        """``try: body except ...: handler else: more finally: last`` -> ``body; more; last``,
        in every block.

        A handler runs only after an exception, which the derived code raises as well (it
        runs the same statements): the call is then refused (api.guarded), so the derived
        code is the try body's. The handlers' lines go into the module header. Without an
        exception the finally block runs after the body (checks.py refuses a jump out of a
        try block that has one)."""
        out = []
        for s in stmts:
            if isinstance(s, gast.Try):
                self.handlers += [self.parsed.line(h) for h in s.handlers]
                out += self.try_bodies(s.body + s.orelse + s.finalbody)
                continue
            if isinstance(s, (gast.If, gast.For, gast.While)):
                s = copy.copy(s)
                s.body, s.orelse = self.try_bodies(s.body), self.try_bodies(s.orelse)
            elif isinstance(s, gast.With):
                s = copy.copy(s)
                s.body = self.try_bodies(s.body)
            out.append(s)
        return out

    def compound(self, s):
        """Statements that are not assignments or expressions: blocks, loops, jumps."""
        if isinstance(s, (gast.Pass, gast.Delete)):  # del of names (checks.py): nothing to do
            return []
        if isinstance(s, gast.With):
            return self.with_block(s)
        if isinstance(s, gast.Assert):
            pre, test = self.atom(s.test, s)
            return pre + [located(gast.Assert(test=test, msg=s.msg), s)]
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
        lowered = self.api_assignment(s)  # out, pullback = ta.vjp(f, x)
        if lowered is not None:
            return lowered
        value = s.value
        pre = []
        targets = s.targets
        first = targets[-1]
        if isinstance(first, gast.Name) and isinstance(value, gast.IfExp) and len(targets) == 1:
            pre, _ = self.ternary(value, s, target=first.id)
            source = first.id
        elif isinstance(first, gast.Name):
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
            # x, y = y, x: every value is read before any name is assigned, so a value that
            # is a name assigned earlier in the line is read into a copy first
            written = [t.id for t in first.elts]
            for j, a in enumerate(atoms):
                if isinstance(a, gast.Name) and a.id in written[:j]:
                    held = self.namer.fresh(f"{a.id}_before")
                    pre.append(assign(held, a, s))
                    atoms[j] = name(held)
            for t, a in zip(first.elts, atoms, strict=True):
                pre.append(assign(t.id, copy.deepcopy(a), s))
            source = None
        elif isinstance(first, (gast.Tuple, gast.List)):
            more, whole = self.atom(value, s)
            pre += more + self.unpack(first, whole, s)
            source = None
        elif isinstance(first, gast.Subscript) and len(targets) == 1:
            return self.update(first, s, value=value)
        elif field_of_local(first, self.scope) and len(targets) == 1:
            return self.field_update(first.value.id, first.attr, value, s)
        else:
            raise unsupported(
                self.parsed,
                s,
                f"assignment to {type(first).__name__.lower()}",
                "assign to plain names, items of arrays and lists, or fields of a "
                "dataclass instance of this function",
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
        container = target.value.id in self.lists or target.value.id in self.dicts
        if op is not None and container:
            # xs[i] += v on an item that is an array adds into that array (a second name of
            # it sees the change): the item read into a name, updated as a name is, put back
            item = self.namer.fresh(f"{target.value.id}_item")
            read = gast.Subscript(
                value=name(target.value.id), slice=copy.deepcopy(index), ctx=gast.Load()
            )
            pre.append(assign(item, read, at))
            pre += self.stmt(
                located(gast.AugAssign(target=name(item, gast.Store()), op=op, value=v), at)
            )
            v = name(item)
        elif op is not None:
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
        if target.value.id in self.lists and isinstance(index, gast.Slice):
            raise unsupported(
                self.parsed,
                at,
                f"assigning to a slice of the list {target.value.id!r}",
                f"build the new list: {target.value.id} = [...] + {target.value.id}[2:]",
            )
        if target.value.id in self.dicts:  # a new dict with entry k set: dicts are values here
            call = self.runtime_call("dict_with", [name(target.value.id), index, v])
            return pre + [assign(target.value.id, call, at)]
        if target.value.id in self.lists:  # a new list with item i replaced: lists are values here
            call = self.runtime_call("list_with", [name(target.value.id), index, v])
            return pre + [assign(target.value.id, call, at)]
        store = gast.Subscript(value=name(target.value.id), slice=index, ctx=gast.Store())
        return pre + [located(gast.Assign(targets=[store], value=v, type_comment=None), at)]

    def field_update(self, record, field, value, at):
        """``r.f = v`` on a dataclass instance (aliasing.check_field_updates says which):
        ``r = replace(r, f=v)``, a new value, as lists are values here."""
        replace = self.scope.bind(dataclasses.replace, self.namer, "replace")
        call = gast.Call(
            func=name(replace),
            args=[name(record)],
            keywords=[gast.keyword(arg=field, value=value)],
        )
        return self.assign(
            located(
                gast.Assign(targets=[name(record, gast.Store())], value=call, type_comment=None),
                at,
            )
        )

    def field_augmented(self, s):
        """``r.f += v``: the field read into a name, updated as a name is (in place when it
        holds an array, which the field then sees), and set again."""
        record, field = s.target.value.id, s.target.attr
        held = self.namer.fresh(f"{record}_{field}")
        read = gast.Attribute(value=name(record), attr=field, ctx=gast.Load())
        stmts = self.assign(
            located(
                gast.Assign(targets=[name(held, gast.Store())], value=read, type_comment=None), s
            )
        )
        stmts += self.stmt(
            located(gast.AugAssign(target=name(held, gast.Store()), op=s.op, value=s.value), s)
        )
        return stmts + self.field_update(record, field, name(held), s)

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

    def atom(self, expr, at):
        """Statements computing ``expr`` and an atom holding its value."""
        if (
            isinstance(expr, gast.UnaryOp)
            and isinstance(expr.op, gast.USub)
            and isinstance(expr.operand, gast.Constant)
            and type(expr.operand.value) in (int, float, complex)
        ):
            value = -expr.operand.value
            if type(value) is complex:  # -(2j) has a real part -0.0, written (-0-2j)
                value = complex(value.real + 0.0, value.imag)
            return [], gast.Constant(value, None)
        if is_atom(expr, self.scope):
            return [], expr
        pre, op = self.operation(expr, at)
        if isinstance(op, (gast.Name, gast.Constant)):
            return pre, op
        temp = self.namer.fresh(temp_base(op))
        return pre + [assign(temp, op, at)], name(temp)
