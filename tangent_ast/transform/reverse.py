"""Stage reverse: unzip and transpose.

Takes the SSA function with kinds and activity; guarantees two functions:

* ``f_fwd(*params) -> (out, saved)``: the primal computation (calls to user functions
  replaced by their forward sweeps) returning the residuals the reverse sweep reads;
* ``f_bwd(saved, ct_out) -> cotangents of the wrt parameters``: the adjoint
  of each active statement in reverse order. The cotangents of a value used
  several times are *added*: the first contribution assigns, later ones add.
  A branch is replayed with the condition the forward sweep saved.

>>> import numpy as np, tangent_ast as ta
>>> def f(x, y):
...     z = x * y
...     return z + np.sin(x)
>>> print(ta.show(f, mode="reverse", stage="reverse", wrt=("x", "y"), args=(1.5, 2.0)))
def f_fwd(x, y):
    z = x * y
    sin = np.sin(x)
    out = z + sin
    return out
<BLANKLINE>
def f_bwd(saved, ct_out):
    ct_sin = ct_out
    ct_z = ct_out
    ct_x = ct_sin * np.cos(x) + ct_z * y
    ct_y = ct_z * x
    return (ct_x, ct_y)
<BLANKLINE>

Residuals are found after simplification: they are exactly the primal names
the simplified reverse sweep reads.
"""

import copy
import operator
from dataclasses import dataclass

import gast

from ..analysis.activity import assignments
from ..analysis.integers import may_be_integers
from ..front.aliasing import first_copy
from ..modes import Mode
from ..optimize.line_lengths import longer_than
from ..optimize.simplify import MAX_LINE
from ..rules.template import as_value
from ..runtime.checkpoints import is_checkpointed
from ..vocabulary.calling import positional
from ..vocabulary.kinds import Tag
from ..vocabulary.syntax import assign, name
from ..vocabulary.trees import copy_tree, walk
from .checkpoints import check_recomputable_call
from .derivatives import unsupported_call
from .restores import blocks_holding, drop_statements
from .slots import slot_copy, slot_cotangent


def _at(new, old):
    new.lineno = getattr(old, "lineno", None)
    return new


def _update_targets(stmt):
    return [
        n.targets[0]
        for n in walk(stmt)
        if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Subscript)
    ]


def finish_updates(bwd, restores):
    """Restores of overwritten slots are needed only if the reverse sweep reads the
    array; then it works on its own copy, so the caller's result is left alone and
    the pullback can run again. Otherwise the restores go (and with them the saves)."""
    present = {id(n) for n in walk(bwd)}
    restores = [r for r in restores if id(r.statement) in present]  # simplify kept them
    copied = set()
    for array in sorted({r.array for r in restores}):
        reads = [
            n
            for n in walk(bwd)
            if isinstance(n, gast.Name) and n.id == array and isinstance(n.ctx, gast.Load)
        ]
        in_restores = sum(1 for r in restores if r.array == array)
        if len(reads) == in_restores:
            drop_statements(bwd, {id(r.statement) for r in restores if r.array == array})
        else:
            for block in blocks_holding(bwd, [r for r in restores if r.array == array]):
                at = (
                    1
                    if block is bwd.body
                    and bwd.body
                    and isinstance(bwd.body[0], gast.Assign)
                    and isinstance(bwd.body[0].value, gast.Name)
                    and bwd.body[0].value.id == residuals_parameter(bwd)
                    else 0
                )
                copy_call = gast.Call(
                    func=gast.Attribute(value=name(array), attr="copy", ctx=gast.Load()),
                    args=[],
                    keywords=[],
                )
                block.insert(at, assign(array, copy_call))
            copied.add(array)
    return copied


def _assigned(stmts):
    out = set()
    for s in stmts:
        for n in gast.walk(s):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                out.add(n.id)
    return out


@dataclass
class LoopPair:
    """A loop of the primal as the two sweeps run it: the forward sweep's copy of it and
    the reverse sweep's loop that runs its iterations backwards (tapes.py joins them)."""

    primal: int  # id of the SSA loop statement: the key of SSAInfo.loop_headers
    forward: gast.stmt
    backward: gast.For


@dataclass
class CallSweep:
    """How a call of a user function (or function value) ``v = g(x)`` is swept: the
    forward sweep's statement, the reverse rule's ``bwd`` called with the residuals named
    ``saved``, the arguments that get cotangents, and for a checkpointed function the
    statement that makes ``saved`` again in the reverse sweep."""

    fwd: gast.stmt
    bwd: gast.expr
    saved: str
    active_args: list
    recompute: gast.stmt | None = None


@dataclass
class Restore:
    """A statement of the reverse sweep that undoes an in-place update of ``array``."""

    statement: gast.Assign
    array: str


@dataclass
class Sweeps:
    """What the reverse stage produces: the two functions (residuals not yet filled in),
    the loops the tapes stage completes, and the restores ``finish_updates`` keeps or drops."""

    fwd: gast.FunctionDef
    bwd: gast.FunctionDef
    loops: list[LoopPair]
    restores: list[Restore]


class Reverse:
    def __init__(self, derivation):
        self.d = derivation
        self.forward_loops = {}  # id(SSA loop) -> its copy in the forward sweep
        self.reverse_loops = {}  # id(SSA loop) -> the loop running it backwards
        self.restores = []
        self.ct_names = {}
        self.primal_of_ct = {}  # the other way round: one lookup per sum, not a search
        self.loops = []  # per enclosing reverse loop: {"outer": names, "buffers": {name: buffer}}
        # arrays whose ct_ variable is an array this rule owns (updated in place)
        self.owned = set()
        # id(term) -> (the primal line whose adjoint produced it, the term): the term is
        # kept so that its id is not reused by a later node (a name made for a sum)
        self.term_lines = {}
        self.line = None  # the primal line being transposed
        self.calls = {}  # id(statement) -> how a call to a user function is swept (or None)
        self.old_values = {}  # id(update statement) -> name of the saved overwritten slot
        # arrays an active statement reads: their in-place updates are undone in the reverse
        # sweep even when the array itself carries no derivative (its old value is a residual)
        self.read_by_active = set()
        self.integers = set()  # numbers that may be ints when the function runs

    def restored(self, array):
        return self.d.activity.active(array) or array in self.read_by_active

    def ct(self, primal):
        if primal not in self.ct_names:
            self.ct_names[primal] = self.d.namer.cotangent(primal)
            self.primal_of_ct.setdefault(self.ct_names[primal], primal)
        return self.ct_names[primal]

    # -- forward sweep --------------------------------------------------------

    def forward_sweep(self, stmts):
        out = []
        for s in stmts:
            if isinstance(s, gast.If):
                new = copy.copy(s)
                new.body = self.forward_sweep(s.body)
                new.orelse = self.forward_sweep(s.orelse)
                out.append(new)
            elif isinstance(s, (gast.For, gast.While)):
                new = copy.copy(s)
                new.body = self.forward_sweep(s.body)
                self.forward_loops[id(s)] = new
                out.append(new)
            elif isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Subscript):
                out.extend(self.save_slot(s))
            elif (
                isinstance(s, gast.Assign)
                and self.d.activity.active(s.targets[0].id)
                and self._user_call(s) is not None
            ):
                out.append(self._user_call(s).fwd)
            else:
                out.append(s)
        return out

    def save_slot(self, s):
        """Before ``a[i] = v``: save what it overwrites (``a_old = a[i]``)."""
        target = s.targets[0]
        array = target.value.id
        if not self.restored(array):
            return [s]
        old = self.d.namer.fresh(f"{array}_old")
        self.old_values[id(s)] = old
        return [_at(assign(old, slot_copy(self.d, array, target)), s), s]

    def adjoint_update(self, s, pending, accumulated):
        """``a[i] = v`` backwards: the slot's cotangent goes to ``v``, the slot's
        cotangent is zeroed (its old value was overwritten), the old value is restored."""
        target = s.targets[0]
        array = target.value.id
        if not self.d.activity.active(array):
            return (
                self.restore_only(s, array, pending, accumulated)
                if array in self.read_by_active
                else []
            )
        ct = self.ct(array)
        out = self.own(array, pending, accumulated, s)
        if self.d.is_active(s.value):
            slot = slot_cotangent(self.d, ct, target, s.value)
            ct_value = self.d.namer.fresh(f"ct_{array}_slot")
            out.append(_at(assign(ct_value, slot), s))
            self.add_term(s.value.id, name(ct_value), pending)
        zero = gast.Subscript(value=name(ct), slice=copy_tree(target.slice), ctx=gast.Store())
        out.append(
            _at(gast.Assign(targets=[zero], value=gast.Constant(0.0, None), type_comment=None), s)
        )
        out.extend(self.restore_only(s, array, pending, accumulated))
        accumulated.add(array)
        return out

    def add_up_terms_reading(self, names, pending, accumulated, at):
        """The sums of the pending cotangents with a term that reads one of ``names``: what
        must be added up before a restore changes one of them."""
        out = []
        for v in sorted(pending):
            if any(isinstance(n, gast.Name) and n.id in names for t in pending[v] for n in walk(t)):
                out.extend(self.assign_sum(self.ct(v), self.take(v, pending, accumulated), at))
                accumulated.add(v)
        return out

    def restore_only(self, s, array, pending, accumulated):
        """Undo ``a[i] = v`` in the reverse sweep (on the sweep's own copy of ``a``), so that
        adjoints of earlier statements read ``a`` as it was; terms still waiting to be added
        that read ``a`` are added up first, with its value after the update."""
        out = self.add_up_terms_reading({array}, pending, accumulated, s)
        restore = gast.Subscript(
            value=name(array), slice=copy_tree(s.targets[0].slice), ctx=gast.Store()
        )
        restored = gast.Assign(
            targets=[restore], value=name(self.old_values[id(s)]), type_comment=None
        )
        self.restores.append(Restore(restored, array))
        out.append(_at(restored, s))
        return out

    def own(self, array, pending, accumulated, at):
        """Make ``ct_array`` an array this rule owns, so it may be updated in place."""
        ct = self.ct(array)
        terms = self.take(array, pending, accumulated)
        if terms == [name(ct)] or (
            len(terms) == 1 and isinstance(terms[0], gast.Name) and terms[0].id == ct
        ):
            if array in self.owned:
                return []
            terms = [name(ct)]
        self.owned.add(array)
        if not terms:
            return [_at(assign(ct, self.d.zero(array)), at)]
        total = self.d.total(array, terms)
        np_name = self.d.bind("np", __import__("numpy"))
        fresh = (
            isinstance(total, gast.Call)
            and isinstance(total.func, gast.Attribute)
            and isinstance(total.func.value, gast.Name)
            and total.func.value.id == np_name
            and total.func.attr in ("zeros_like", "ones_like", "full_like", "zeros", "ones", "full")
        )
        if not isinstance(total, (gast.BinOp, gast.UnaryOp)) and not fresh:
            total = gast.Call(
                func=gast.Attribute(value=name(np_name), attr="copy", ctx=gast.Load()),
                args=[total],
                keywords=[],
            )
        return [_at(assign(ct, total), at)]

    def _user_call(self, s):
        """For ``v = g(...)`` with g a user function and active arguments:
        the forward-sweep statement and how to call its reverse sweep."""
        if id(s) in self.calls:
            return self.calls[id(s)]
        site = self.d.site(s.value)
        result = None
        if (
            site is not None and site.fn is None
        ):  # g(x), g a function value: its rule is found when it runs
            self.d.check_function_value(s, site)
            active = self.d.active_args(site)
            if active:
                call = self.d.call_function_value(s, site, "call_fwd")
                bwd = self.d.function_values_helper("call_bwd")
                result = self._forward_call(s, call, bwd, [site.args[i] for i in active])
        elif site is not None and self.d.is_user_function(site.fn):
            site = copy.copy(site)
            form, site.args = self.d.bind_user_call(s, site)
            site.keywords = []
            active = self.d.active_args(site)
            if active:
                kinds = self.d.callee_kinds(site.args)
                rule = self.d.derive_callee(
                    site.fn, Mode.REVERSE, tuple(active), kinds, self.d.where(s), form, site.func
                )
                self.d.callees.append(rule)
                call = gast.Call(
                    func=rule.reference("fwd", self.d.namespace),
                    args=[copy_tree(a) for a in site.args],
                    keywords=[],
                )
                bwd = rule.reference("bwd", self.d.namespace)
                args = [site.args[i] for i in active]
                if is_checkpointed(site.fn):
                    check_recomputable_call(self.d, s, site.fn)
                    result = self._checkpointed_call(s, call, bwd, args)
                else:
                    result = self._forward_call(s, call, bwd, args)
        self.calls[id(s)] = result
        return result

    def _forward_call(self, s, call, bwd, active_args):
        """``v, v_saved = <call>`` and what the reverse sweep needs to call ``bwd``."""
        target = s.targets[0].id
        saved = self.d.namer.fresh(f"{target}_saved")
        targets = gast.Tuple(
            elts=[name(target, gast.Store()), name(saved, gast.Store())], ctx=gast.Store()
        )
        fwd = _at(gast.Assign(targets=[targets], value=call, type_comment=None), s)
        return CallSweep(fwd, bwd, saved, active_args)

    def _checkpointed_call(self, s, call, bwd, active_args):
        """A call of a function marked ``checkpoint``: the forward sweep makes the primal
        call and keeps nothing of it; the reverse sweep runs the function's forward sweep
        again (``v_saved = g_fwd(x)[1]``) just before its reverse sweep."""
        saved = self.d.namer.fresh(f"{s.targets[0].id}_saved")
        again = gast.Subscript(value=call, slice=gast.Constant(1, None), ctx=gast.Load())
        return CallSweep(copy_tree(s), bwd, saved, active_args, _at(assign(saved, again, s), s))

    # -- reverse sweep --------------------------------------------------------

    def reverse_block(self, stmts, pending, accumulated):
        """Adjoint statements of ``stmts`` in reverse order.

        ``pending[v]``: cotangent terms of ``v`` not yet added up;
        ``accumulated``: names whose ``ct_`` variable already holds a running sum.
        """
        out = []
        for s in reversed(stmts):
            self.line = getattr(s, "lineno", None)
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Subscript):
                out.extend(self.adjoint_update(s, pending, accumulated))
            elif isinstance(s, gast.Assign):
                out.extend(self.adjoint(s, pending, accumulated))
            elif isinstance(s, gast.If):
                out.extend(self.adjoint_if(s, pending, accumulated))
            elif isinstance(s, (gast.For, gast.While)):
                out.extend(self.adjoint_loop(s, pending, accumulated))
        return out

    def take(self, v, pending, accumulated):
        """The terms of ``v``'s cotangent (its running sum first), now added up."""
        terms = pending.pop(v, [])
        if v in accumulated:
            terms = [name(self.ct(v))] + terms
            accumulated.discard(v)
        return terms

    def assign_sum(self, ct, terms, at=None):
        """``ct = t1 + t2``; when that line gets long, the first contribution
        assigns and each later one adds (``ct = ct + t2``)."""
        if len(terms) == 1 and isinstance(terms[0], gast.Name) and terms[0].id == ct:
            return []
        primal = self.primal_of_ct.get(ct)
        if len(terms) == 1 and isinstance(terms[0], gast.Name):
            self.owned.discard(primal)  # ct is now another name for someone else's array
        whole = assign(ct, self.d.total(primal, terms))
        if len(terms) == 1 or not longer_than(whole, MAX_LINE):
            return [self._cite(whole, terms, at)]
        first, *rest = self.d.summands(primal, terms)  # a term twice is added once, doubled
        out = (
            []
            if isinstance(first, gast.Name) and first.id == ct
            else [self._cite(assign(ct, first), [first], at)]
        )
        for term in rest:
            out.append(self._cite(assign(ct, self.d.total(primal, [name(ct), term])), [term], at))
        return out

    def sum_in_loop(self, v, terms, updated, at):
        """``ct_x += t`` at the end of a reverse loop's body where ``ct_x`` is an array this
        rule owns and updates in place each iteration (``x`` a real float array updated in
        the loop): the same numbers as ``ct_x = ct_x + t``, and a name bound once, which a
        rule derived from this one may update in place again."""
        ct = self.ct(v)
        kind = self.d.kinds.get(v)
        if (
            v not in updated
            or v not in self.owned
            or len(terms) < 2
            or not (isinstance(terms[0], gast.Name) and terms[0].id == ct)
            or kind is None
            or kind.tag is not Tag.ARRAY
            or kind.dtype != "f"
        ):
            return self.assign_sum(ct, terms, at)
        update = gast.AugAssign(
            target=name(ct, gast.Store()), op=gast.Add(), value=self.d.total(v, terms[1:])
        )
        return [self._cite(update, terms[1:], at)]

    def add_term(self, v, expr, pending):
        self.term_lines[id(expr)] = (self.line, expr)
        pending.setdefault(v, []).append(expr)

    def _cite(self, stmt, terms, at):
        """Cite the user's line a sum comes from (its first term's), not where it is added up."""
        lines = (self.term_lines.get(id(t), (None, None))[0] for t in terms)
        line = next((n for n in lines if n), None)
        stmt.lineno = line if line is not None else getattr(at, "lineno", None)
        return stmt

    def adjoint(self, s, pending, accumulated):
        target = s.targets[0].id
        if not self.d.activity.active(target):
            return []
        terms = self.take(target, pending, accumulated)
        if not terms:
            return []
        if target in self.d.carried:
            # A loop header is assigned again and again: its cotangent variable is
            # reused across iterations, so this use of it is copied out first.
            ct = self.d.namer.fresh(f"ct_{target}")
            out = [_at(assign(ct, self.d.total(target, terms)), s)]
        else:
            ct = self.ct(target)
            out = self.assign_sum(ct, terms, s)
        value = s.value
        site = self.d.site(value)
        if site is None:
            if self.d.is_active(value):
                self.add_term(value.id, name(ct), pending)
            return out
        call = self._user_call(s)
        if call is not None:
            bwd_func, saved, args = call.bwd, call.saved, call.active_args
            if call.recompute is not None:
                out.append(copy_tree(call.recompute))
            cts = [self.d.namer.fresh(f"ct_{a.id}") for a in args]
            bwd = gast.Call(func=copy_tree(bwd_func), args=[name(saved), name(ct)], keywords=[])
            targets = (
                name(cts[0], gast.Store())
                if len(cts) == 1
                else gast.Tuple(elts=[name(c, gast.Store()) for c in cts], ctx=gast.Store())
            )
            out.append(_at(gast.Assign(targets=[targets], value=bwd, type_comment=None), s))
            for a, c in zip(args, cts, strict=True):
                self.add_term(a.id, name(c), pending)
            return out
        buffered = self.buffered_getitem(s, site, ct)
        if buffered is not None:
            return out + buffered
        if self.d.is_pack(site):  # (a, b): each element's cotangent is ct[i]; {"k": a}: ct["k"]
            keys = site.fn.keys or range(len(site.args))
            if site.fn.replaces:  # replace(p, W=v): v gets ct.W, p gets ct with W zeroed
                for i in self.d.active_args(site):
                    if i == 0:
                        item = self.d.call_runtime(
                            "replace_vjp",
                            [
                                name(ct),
                                gast.Tuple(
                                    elts=[gast.Constant(k, None) for k in keys], ctx=gast.Load()
                                ),
                            ],
                        )
                    else:
                        item = gast.Attribute(value=name(ct), attr=keys[i - 1], ctx=gast.Load())
                    self.add_term(site.args[i].id, item, pending)
                return out
            for i in self.d.active_args(site):
                if site.fn.kind is Tag.RECORD:  # Params(W, b): ct.W, ct.b
                    item = gast.Attribute(value=name(ct), attr=keys[i], ctx=gast.Load())
                elif site.args[i].id in self.integers:
                    # a number that may be an int when it runs (``t = 0`` before ``t = t + x``
                    # in a loop): its place in the container's cotangent then holds None
                    item = self.d.call_runtime(
                        "item_tangent", [name(ct), gast.Constant(keys[i], None)]
                    )
                else:
                    item = gast.Subscript(
                        value=name(ct), slice=gast.Constant(keys[i], None), ctx=gast.Load()
                    )
                self.add_term(site.args[i].id, item, pending)
            return out
        for i, expr in self.d.contributions(s, site, target, name(ct)):
            arg = site.args[i]
            if not isinstance(arg, gast.Name):
                raise unsupported_call(
                    self.d,
                    s,
                    "a differentiable value inside a tuple or list argument",
                    "containers of differentiable values are not supported yet",
                )
            self.add_term(arg.id, expr, pending)
        return out

    def buffered_getitem(self, s, site, ct):
        """``v = x[i]`` in a loop, ``x`` from before it: add ``ct_v`` into a buffer
        owned by the reverse loop, in place, instead of a new zeros array per iteration."""
        if (
            not self.loops
            or site.fn is not operator.getitem
            or not isinstance(site.args[0], gast.Name)
        ):
            return None
        x, index = site.args
        loop = self.loops[-1]
        if x.id not in loop["outer"] or self.d.kind(x).tag is not Tag.ARRAY:
            return None
        self.d.rules_used.add("operator.getitem")
        if x.id in loop["updated"]:
            # Its slots' cotangents are read in this loop: add into ct_x itself (owned).
            buffer = self.ct(x.id)
        else:
            buffer = loop["buffers"].get(x.id)
            if buffer is None:
                buffer = loop["buffers"][x.id] = self.d.namer.fresh(f"ct_{x.id}_buffer")
        parts = index.elts if isinstance(index, gast.Tuple) else [index]
        basic = all(isinstance(p, gast.Slice) or self.d.kind(p).tag is Tag.INT for p in parts)
        if basic:  # basic indexing never repeats an element: += is exact
            target = gast.Subscript(value=name(buffer), slice=copy_tree(index), ctx=gast.Store())
            stmt = gast.AugAssign(target=target, op=gast.Add(), value=name(ct))
        else:
            np_name = self.d.bind("np", __import__("numpy"))
            add_at = gast.Attribute(
                value=gast.Attribute(value=name(np_name), attr="add", ctx=gast.Load()),
                attr="at",
                ctx=gast.Load(),
            )
            stmt = gast.Expr(
                value=gast.Call(
                    func=add_at,
                    args=[name(buffer), as_value(copy_tree(index)), name(ct)],
                    keywords=[],
                )
            )
        return [_at(stmt, s)]

    def adjoint_if(self, s, pending, accumulated):
        inside = _assigned(s.body) | _assigned(s.orelse)
        read = set()
        for block in (s.body, s.orelse):
            for st in block:
                for n in gast.walk(st):
                    if (
                        isinstance(n, gast.Name)
                        and isinstance(n.ctx, gast.Load)
                        and self.d.activity.active(n.id)
                    ):
                        read.add(n.id)
        # Loop headers are defined before the if even when a branch reassigns them, those
        # of loops around it; a loop inside a branch defines its headers there.
        nested = {
            header
            for st in s.body + s.orelse
            for n in walk(st)
            if isinstance(n, (gast.For, gast.While))
            for header in self.d.loop_headers.get(id(n), ())
        }
        outer = sorted(read - (inside - (self.d.carried - nested)))
        out = []
        # Everything flowing into the branches or out of them is added up first, and every
        # term reading an array a branch updates in place (the branch restores its slots).
        for v in sorted(inside & set(pending)) + [v for v in outer if v in pending]:
            out.extend(self.assign_sum(self.ct(v), self.take(v, pending, accumulated), s))
            accumulated.add(v)
        updated = {t.value.id for st in s.body + s.orelse for t in _update_targets(st)}
        out.extend(self.add_up_terms_reading(updated, pending, accumulated, s))
        # After the if a running sum stands on both paths or neither: a branch that took one
        # the other keeps (``s_1 = s_2; break``), or never started it, sets it to zero.
        local = inside - (self.d.carried - nested)
        branches = []
        for block in (s.body, s.orelse):
            branch_pending = {}
            branch_acc = set(accumulated)
            stmts = self.reverse_block(block, branch_pending, branch_acc)
            for v in outer:
                terms = self.take(v, branch_pending, branch_acc)
                if terms:
                    stmts.extend(self.assign_sum(self.ct(v), terms, s))
                    branch_acc.add(v)
            branches.append((stmts, branch_acc - local))
        held = set().union(*(kept for _, kept in branches))
        bodies = []
        for stmts, kept in branches:
            for v in sorted(held - kept):
                stmts.append(_at(assign(self.ct(v), self.d.zero(v)), s))
            bodies.append(stmts)
        accumulated.clear()
        accumulated |= held
        if any(bodies):
            out.append(_at(gast.If(test=copy_tree(s.test), body=bodies[0], orelse=bodies[1]), s))
        return out

    def adjoint_loop(self, s, pending, accumulated):
        """The loop run backwards: ``for k in reversed(range(trips))``.

        The cotangents of loop headers and of values from before the loop are
        accumulators across iterations; the values the body's adjoint reads are
        restored from tapes at the top of each reverse iteration (filled in by
        :func:`install_tapes` once it is known what the adjoint really reads).
        """
        inside = _assigned(s.body) | ({s.target.id} if isinstance(s, gast.For) else set())
        read = {
            n.id
            for st in s.body
            for n in gast.walk(st)
            if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Load)
            and self.d.activity.active(n.id)
        }
        carried = sorted(v for v in self.d.loop_headers.get(id(s), ()) if self.d.activity.active(v))
        outer = sorted(read - inside)
        updated = {t.value.id for st in s.body for t in _update_targets(st)}
        out = []
        for v in carried + outer:
            if v in updated:  # updated in place each iteration: own its cotangent once, here
                out.extend(self.own(v, pending, accumulated, s))
            else:
                terms = self.take(v, pending, accumulated)
                out.extend(
                    self.assign_sum(self.ct(v), terms, s)
                    if terms
                    else [_at(assign(self.ct(v), self.d.zero(v)), s)]
                )
            accumulated.add(v)
        # A pending term reading a name the loop assigns must be added up here, before
        # the reverse loop restores that name to its value in earlier iterations; so must
        # one reading an array the loop updates in place (its slots are restored too).
        restored = inside | set(self.d.loop_headers.get(id(s), ())) | updated
        out.extend(self.add_up_terms_reading(restored, pending, accumulated, s))
        body_pending = {}
        body_acc = set(accumulated)
        self.loops.append({"outer": set(outer), "buffers": {}, "updated": updated})
        body = self.reverse_block(s.body, body_pending, body_acc)
        buffers = self.loops.pop()["buffers"]
        for v in outer:
            terms = self.take(v, body_pending, body_acc)
            if terms:
                body.extend(self.sum_in_loop(v, terms, updated, s))
        for v in carried:
            terms = self.take(v, body_pending, body_acc)
            body.extend(
                self.assign_sum(self.ct(v), terms, s)
                if terms
                else [_at(assign(self.ct(v), self.d.zero(v)), s)]
            )
        trips = self.d.namer.fresh("trips")
        index = self.d.namer.fresh("k")
        loop = gast.For(
            target=name(index, gast.Store()),
            iter=gast.Call(
                func=name("reversed"),
                args=[gast.Call(func=name("range"), args=[name(trips)], keywords=[])],
                keywords=[],
            ),
            body=body or [gast.Pass()],
            orelse=[],
            type_comment=None,
        )
        self.reverse_loops[id(s)] = loop
        for v, buffer in sorted(buffers.items()):
            out.append(_at(assign(buffer, self.d.zero(v)), s))
        out.append(_at(loop, s))
        for v in carried + outer:
            accumulated.add(v)
        for v, buffer in sorted(buffers.items()):
            self.add_term(v, name(buffer), pending)
        return out


def residuals_parameter(bwd):
    """The name of the reverse sweep's first parameter: the residuals of the forward sweep."""
    return bwd.args.args[0].id


def reverse(derivation, fn, wrt):
    """The reverse rule of ``fn`` (SSA): :class:`Sweeps`, residuals not yet filled in."""
    transform = Reverse(derivation)
    transform.read_by_active = {
        n.id
        for s in assignments(fn.body)
        if isinstance(s.targets[0], gast.Name) and derivation.activity.active(s.targets[0].id)
        for n in walk(s.value)
        if isinstance(n, gast.Name)
    }
    transform.integers = may_be_integers(fn, derivation.kinds)
    result = fn.body[-1].value.id
    ct_result = transform.ct(result)
    pending = {result: [name(ct_result)]} if derivation.activity.active(result) else {}
    accumulated = set()
    forward_body = transform.forward_sweep(fn.body[:-1])
    body = transform.reverse_block(fn.body[:-1], pending, accumulated)
    results = []
    for w in wrt:
        terms = transform.take(w, pending, accumulated)
        ct = transform.ct(w)
        if not terms:
            body.append(assign(ct, derivation.zero(first_copy(fn, derivation.scope, w))))
        else:
            body.extend(transform.assign_sum(ct, terms))
        results.append(name(ct))
    ret = gast.Return(
        value=results[0] if len(results) == 1 else gast.Tuple(elts=results, ctx=gast.Load())
    )
    body.append(ret)

    fwd = copy.copy(fn)
    fwd.name = f"{fn.name}_fwd"
    fwd.args = copy_tree(fn.args)
    fwd.body = forward_body + [fn.body[-1]]  # the return gets its residuals later

    bwd = copy.copy(fn)
    bwd.name = f"{fn.name}_bwd"
    # "saved", unless the function has a name of its own so called
    saved = transform.d.namer.fresh("saved")
    bwd.args = positional([name(saved, gast.Param()), name(ct_result, gast.Param())])
    bwd.body = body
    loops = [
        LoopPair(key, transform.forward_loops[key], backward)
        for key, backward in transform.reverse_loops.items()
    ]
    return Sweeps(fwd, bwd, loops, transform.restores)
