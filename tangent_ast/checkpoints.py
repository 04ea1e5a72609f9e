"""After the tapes of a reverse rule: checkpointed loops keep snapshots, not tapes.

Takes the two sweeps with their tapes installed (tapes.py) and the loops the user marked
``for t in checkpointed(range(n), snapshots=k)``; guarantees, for each such loop, that

* the forward sweep runs the loop without tapes and keeps a snapshot of the loop's state
  (the values an iteration reads from the one before) every ``ceil(n / k)`` iterations:
  at most ``k`` snapshots instead of ``n`` iterations' residuals;
* the reverse sweep takes the segments between snapshots last to first: it starts from
  the segment's snapshot, runs the segment's iterations again to tape them (the forward
  sweep's loop body as tapes.py made it), then runs them backwards as before. Each
  iteration is computed twice; the tapes hold one segment at a time;
* a loop whose iterations cannot be run again to the same values is refused: one that
  calls a function with effects (``rng.normal()``, ``print``), updates an array in place,
  holds another loop or is inside one, or may leave early.

    for t in range(n):          forward sweep:                   reverse sweep, last segment first:
        h = np.sin(h) * x  ->   for t in range(n):               h = h_snapshots[segment]
                                    if t % length == 0:          for t in range(start, stop):
                                        h_snapshots.append(h)        (taped, again)
                                    h = np.sin(h) * x            for t in reversed(range(...)):
                                                                     (backwards, from the tapes)

>>> import numpy as np
>>> import tangent_ast as ta
>>> def f(x, n):
...     h = x
...     for t in ta.checkpointed(range(n), snapshots=4):
...         h = np.sin(h) * x
...     return h
>>> print(ta.show(f, mode="reverse", stage="simplify", args=(0.5, 10)))
def f_fwd(x, n):
    h = x
    segment_length = (n + 3) // 4
    h_snapshots = []
    for t in range(n):
        if t % segment_length == 0:
            h_snapshots.append(h)
        h = np.sin(h) * x
    return (h, (x, n, segment_length, h_snapshots))
<BLANKLINE>
def f_bwd(saved, ct_h):
    x, n, segment_length, h_snapshots = saved
    ct_x = 0.0
    for segment in reversed(range(len(h_snapshots))):
        h = h_snapshots[segment]
        start = segment * segment_length
        stop = min(start + segment_length, n)
        h_1_tape = []
        sin_tape = []
        for t in range(start, stop):
            h_1_tape.append(h)
            sin = np.sin(h)
            h = sin * x
            sin_tape.append(sin)
        for t in reversed(range(start, stop)):
            h = h_1_tape[t - start]
            sin = sin_tape[t - start]
            ct_x = ct_x + ct_h * sin
            ct_h = ct_h * x * np.cos(h)
    ct_x = ct_x + ct_h
    return ct_x
<BLANKLINE>
"""

import copy
import inspect

import gast
import numpy as np

from .checks import unsupported
from .derivatives import unsupported_call
from .parse import parse
from .resolve import resolve
from .rules.registry import is_pure_function
from .runtime import EFFECTFUL
from .runtime.checkpoints import checkpointed
from .syntax import assign, loaded_names, name, stored_names, updated_arrays
from .tapes import unset_before

_LIBRARIES = ("numpy", "builtins", "math")


def checkpoint_loops(fwd, bwd, loops, tapes_of, primal):
    """Rewrite (in place) each loop pair of ``loops`` whose primal loop is checkpointed;
    ``tapes_of``: what install_tapes returned; ``primal``: the pipeline's ``Front`` of the
    function (its loops in SSA form, their snapshots, its scope and namer). True if it
    rewrote one."""
    loops_by_id = {id(n): n for n in gast.walk(primal.function) if isinstance(n, gast.For)}
    rewritten = False
    for pair in loops:
        if pair.primal in primal.checkpoints:
            loop = loops_by_id[pair.primal]
            if not _place(bwd, pair.backward):
                continue  # nothing flows back through the loop: it keeps nothing anyway
            _check_recomputable(primal.parsed, loop, primal.scope)
            tapes, carried = tapes_of.get(pair.primal, ({}, {}))
            segments = _Segments(fwd, bwd, pair, tapes, carried, primal.namer)
            segments.rewrite(
                primal.checkpoints[pair.primal],
                primal.ssa_info.origin,
                lambda what, hint, at=loop: _refuse(primal, at, what, hint),
            )
            rewritten = True
    return rewritten


def _refuse(primal, at, what, hint):
    raise unsupported(primal.parsed, at, f"checkpointing a loop that {what}", hint)


class _Segments:
    """One checkpointed loop: its forward sweep keeps snapshots, its reverse sweep segments."""

    def __init__(self, fwd, bwd, pair, tapes, carried, namer):
        self.fwd, self.bwd, self.namer = fwd, bwd, namer
        self.loop, self.back = pair.forward, pair.backward
        self.tapes = set(tapes.values())
        self.carried = carried  # value -> the header it is the next iteration's value of

    def rewrite(self, snapshots, origin, refuse):
        loop, back = self.loop, self.back
        self._check_shape(refuse)
        trips = back.iter.args[0].args[0]
        taped_body = copy.deepcopy(loop.body)
        loop.body = [s for s in loop.body if not self._is_tape_append(s)]
        plain_body = copy.deepcopy(loop.body)
        state = _read_before_written(loop.body) & stored_names(loop.body)
        self._check_nothing_else_clobbered(taped_body, refuse)
        self.snapshots_base = (
            f"{origin.get(min(state), min(state))}_snapshots" if len(state) == 1 else "snapshots"
        )
        levels = _levels(snapshots)
        # Forward sweep: the loop without tapes, a snapshot every `segment_length` iterations.
        self.fwd.body = [s for s in self.fwd.body if not self._is_new_tape(s)]
        length, kept = self._keep_snapshots(loop, None, state)
        block, at = _place(self.fwd, loop)[-1]
        block[at:at] = [
            *unset_before(self.fwd, loop, sorted(state)),
            assign(length, _ceil_div(copy.deepcopy(trips), levels[0])),
            assign(kept, gast.List(elts=[], ctx=gast.Load())),
        ]
        # A value handed down from the next iteration starts, for a segment's last
        # iteration, as the value the segment run again ends with (tapes.py put it before
        # the reverse loop, which now runs once per segment).
        back_block, back_at = _place(self.bwd, back)[-1]
        handed_down = [
            s
            for s in back_block[:back_at]
            if isinstance(s, gast.Assign)
            and isinstance(s.targets[0], gast.Name)
            and isinstance(s.value, gast.Name)
            and self.carried.get(s.targets[0].id) == s.value.id
        ]
        back_block[:] = [s for s in back_block if not any(s is h for h in handed_down)]
        innermost = (taped_body, handed_down)
        segments = self._segments(
            levels[1:], kept, length, None, trips, state, plain_body, innermost
        )
        for n in gast.walk(segments):
            if getattr(n, "lineno", None) is None and "lineno" in getattr(n, "_attributes", ()):
                n.lineno = getattr(loop, "lineno", None)
        back_block[_index(back_block, back)] = segments

    def _keep_snapshots(self, loop, first, state):
        """Make ``loop`` append its state to a new list every ``length`` iterations counted
        from ``first`` (from zero if None); ``(length, the list)``."""
        length = self.namer.fresh("segment_length")
        kept = self.namer.fresh(self.snapshots_base)
        step = name(loop.target.id)
        if first is not None:
            step = gast.BinOp(left=step, op=gast.Sub(), right=name(first))
        keep = gast.If(
            test=gast.Compare(
                left=gast.BinOp(left=step, op=gast.Mod(), right=name(length)),
                ops=[gast.Eq()],
                comparators=[gast.Constant(0, None)],
            ),
            body=[_append(kept, _state_value(state))],
            orelse=[],
        )
        loop.body.insert(0, keep)
        return length, kept

    def _segments(self, levels, kept, length, first, last, state, plain_body, innermost):
        """The loop over the segments of ``kept`` (snapshots every ``length`` iterations from
        ``first``, up to ``last``), last segment first. Inside a segment, ``levels`` more
        levels of snapshots; at the last level, the segment runs again with its tapes
        and then backwards."""
        segment, start, stop = (self.namer.fresh(n) for n in ("segment", "start", "stop"))
        offset = gast.BinOp(left=name(segment), op=gast.Mult(), right=name(length))
        if first is not None:
            offset = gast.BinOp(left=name(first), op=gast.Add(), right=offset)
        end = gast.BinOp(left=name(start), op=gast.Add(), right=name(length))
        body = [
            gast.Assign(
                targets=[_state_target(state)],
                value=gast.Subscript(value=name(kept), slice=name(segment), ctx=gast.Load()),
                type_comment=None,
            ),
            assign(start, offset),
            assign(stop, gast.Call(func=name("min"), args=[end, copy.deepcopy(last)], keywords=[])),
        ]
        bounds = [name(start), name(stop)]
        again = gast.For(
            target=name(self.loop.target.id, gast.Store()),
            iter=gast.Call(func=name("range"), args=copy.deepcopy(bounds), keywords=[]),
            body=copy.deepcopy(plain_body),
            orelse=[],
            type_comment=None,
        )
        if levels:
            inner_length, inner_kept = self._keep_snapshots(again, start, state)
            count = gast.BinOp(left=name(stop), op=gast.Sub(), right=name(start))
            body += [
                assign(inner_length, _ceil_div(count, levels[0])),
                assign(inner_kept, gast.List(elts=[], ctx=gast.Load())),
                again,
                self._segments(
                    levels[1:],
                    inner_kept,
                    inner_length,
                    start,
                    name(stop),
                    state,
                    plain_body,
                    innermost,
                ),
            ]
        else:
            taped_body, handed_down = innermost
            again.body = taped_body
            for st in self.back.body:
                _shift_restore(st, self.tapes, self.back.target.id, start)
            self.back.iter.args[0].args = copy.deepcopy(bounds)
            body += [
                *[assign(t, gast.List(elts=[], ctx=gast.Load())) for t in sorted(self.tapes)],
                again,
                *handed_down,
                self.back,
            ]
        return gast.For(
            target=name(segment, gast.Store()),
            iter=_reversed_range(gast.Call(func=name("len"), args=[name(kept)], keywords=[])),
            body=body,
            orelse=[],
            type_comment=None,
        )

    def _check_shape(self, refuse):
        loop, back = self.loop, self.back
        if any(isinstance(n, (gast.Break, gast.Continue, gast.Return)) for n in gast.walk(loop)):
            refuse("may leave early (break, return)", "checkpoint a loop that runs to its end")
        if any(isinstance(n, (gast.For, gast.While)) for s in loop.body for n in gast.walk(s)):
            refuse("holds another loop", "checkpoint the inner loop, or unroll it")
        if not (
            _place(self.fwd, loop)
            and _place(self.bwd, back)
            and isinstance(loop.iter, gast.Call)
            and len(loop.iter.args) == 1
            and back.target.id == loop.target.id
        ):
            refuse(
                "is inside another loop or counts from other than zero",
                "checkpoint a loop for t in range(n) outside other loops",
            )
        if updated_arrays(loop.body):
            refuse(
                "updates an array in place",
                "build the new array instead (x = np.where(...), np.concatenate)",
            )

    def _check_nothing_else_clobbered(self, taped_body, refuse):
        """Running the loop again leaves its names at some segment's values: nothing the
        reverse sweep reads after the loop may be one of them (tapes.py gives the names
        the reverse loop itself reads their values back)."""
        after = [s for block, at in _place(self.bwd, self.back) for s in block[at + 1 :]]
        clobbered = (stored_names(taped_body) | {self.loop.target.id}) - stored_names(
            self.back.body
        )
        if clobbered & loaded_names(after):
            refuse(
                "sets values the reverse sweep reads after it",
                "move the computation of those values out of the loop",
            )

    def _is_tape_append(self, s):
        return (
            isinstance(s, gast.Expr)
            and isinstance(s.value, gast.Call)
            and isinstance(s.value.func, gast.Attribute)
            and s.value.func.attr == "append"
            and isinstance(s.value.func.value, gast.Name)
            and s.value.func.value.id in self.tapes
        )

    def _is_new_tape(self, s):
        return (
            isinstance(s, gast.Assign)
            and isinstance(s.targets[0], gast.Name)
            and s.targets[0].id in self.tapes
            and isinstance(s.value, gast.List)
        )


def _check_recomputable(parsed, loop, scope):
    """Every call the loop makes gives the same values when made again."""
    for call in (n for n in gast.walk(loop) if isinstance(n, gast.Call)):
        if not _recomputable_call(call, scope, set()):
            raise unsupported(
                parsed,
                call,
                f"checkpointing a loop that calls {_dotted(call.func)} "
                "(which may give other values when called again)",
                "draw random numbers before the loop, or checkpoint a loop of NumPy calls "
                "and functions of yours that only compute",
            )


def check_recomputable_call(derivation, stmt, fn):
    """Refuse to checkpoint a call of ``fn`` (marked ``checkpoint``) that may give other
    values when the reverse sweep makes it again."""
    if not recomputable_function(fn):
        raise unsupported_call(
            derivation,
            stmt,
            f"checkpointing {fn.__qualname__}, which calls a function that may give other "
            "values when called again (random numbers, I/O)",
            "draw random numbers outside it and pass them in",
        )


def recomputable_function(fn):
    """Calling ``fn`` again with the same arguments gives the same values: every call it
    makes is to a pure function (see :func:`_recomputable_call`)."""
    return _recomputable_body(fn, set())


def _recomputable_body(fn, seen):
    if fn in seen:  # recursion: the other calls decide
        return True
    seen.add(fn)
    parsed = parse(fn)
    own_scope = resolve(parsed)
    return all(
        _recomputable_call(n, own_scope, seen)
        for n in gast.walk(parsed.node)
        if isinstance(n, gast.Call)
    )


def _recomputable_call(call, scope, seen):
    """The call cannot give other values when made again: a function the rule table marks
    pure, an array method it marks pure, or a function of the user's all of whose own
    calls are such calls."""
    obj = scope.lookup(call.func)
    if obj is None:
        root, chain = call.func, []
        while isinstance(root, gast.Attribute):
            chain.append(root.attr)
            root = root.value
        if isinstance(root, gast.Name) and scope.is_local(root.id) and len(chain) == 1:
            # an array method: x.sum(), x.reshape(...)
            return is_pure_function(getattr(np.ndarray, chain[0], None))
        return False
    if obj is checkpointed:
        return True
    if getattr(obj, "__module__", "").startswith("tangent_ast.runtime"):
        return obj not in EFFECTFUL
    if is_pure_function(obj) or obj in (range, len, min, max, abs, float, int):
        return True
    module = (getattr(obj, "__module__", None) or "").partition(".")[0]
    if not inspect.isfunction(obj) or module in _LIBRARIES:
        return False
    return _recomputable_body(obj, seen)


def _dotted(expr):
    if isinstance(expr, gast.Attribute):
        return f"{_dotted(expr.value)}.{expr.attr}"
    return expr.id if isinstance(expr, gast.Name) else "a function"


def _read_before_written(stmts, written=frozenset()):
    """Names ``stmts`` may read before assigning them (in order; a branch assigns what
    both of its arms assign)."""
    read, written = set(), set(written)
    for s in stmts:
        if isinstance(s, gast.If):
            read |= loaded_names([s.test]) - written
            in_body = _read_before_written(s.body, written)
            in_else = _read_before_written(s.orelse, written)
            read |= in_body | in_else
            written |= stored_names(s.body) & stored_names(s.orelse)
        else:
            read |= loaded_names([s]) - written
            written |= stored_names([s])
    return read


def _levels(snapshots):
    """How many snapshots each level keeps. One level of k snapshots tapes n / k iterations
    at a time; two levels of k1 + k2 = k tape n / (k1 k2), for one more run of the loop:
    worth it from k = 6 on (k1 k2 > k + 2)."""
    if snapshots < 6:
        return [snapshots]
    return [snapshots // 2, snapshots - snapshots // 2]


def _state_value(state):
    names = [name(v) for v in sorted(state)]
    return names[0] if len(names) == 1 else gast.Tuple(elts=names, ctx=gast.Load())


def _state_target(state):
    names = [name(v, gast.Store()) for v in sorted(state)]
    return names[0] if len(names) == 1 else gast.Tuple(elts=names, ctx=gast.Store())


def _ceil_div(count, parts):
    """``(count + parts - 1) // parts``, as a person writes it for a literal ``parts``."""
    if parts == 1:
        return count
    if isinstance(count, gast.Constant) and isinstance(count.value, int):
        return gast.Constant(-(-count.value // parts), None)
    total = gast.BinOp(left=count, op=gast.Add(), right=gast.Constant(parts - 1, None))
    return gast.BinOp(left=total, op=gast.FloorDiv(), right=gast.Constant(parts, None))


def _reversed_range(count):
    return gast.Call(
        func=name("reversed"),
        args=[gast.Call(func=name("range"), args=[count], keywords=[])],
        keywords=[],
    )


def _append(target, value):
    call = gast.Call(
        func=gast.Attribute(value=name(target), attr="append", ctx=gast.Load()),
        args=[value],
        keywords=[],
    )
    return gast.Expr(value=call)


def _shift_restore(stmt, tapes, index, start):
    """``v = v_tape[t]`` -> ``v = v_tape[t - start]``: a tape holds one segment."""
    if (
        isinstance(stmt, gast.Assign)
        and isinstance(stmt.value, gast.Subscript)
        and isinstance(stmt.value.value, gast.Name)
        and stmt.value.value.id in tapes
        and isinstance(stmt.value.slice, gast.Name)
        and stmt.value.slice.id == index
    ):
        stmt.value.slice = gast.BinOp(left=name(index), op=gast.Sub(), right=name(start))


def _place(fn, node):
    """Where ``node`` is: ``[(block, index)]`` from the function's body down through the
    branches that hold it; empty if a loop holds it (or it is not there)."""

    def search(block):
        for i, s in enumerate(block):
            if s is node:
                return [(block, i)]
            if isinstance(s, gast.If):
                for inner in (s.body, s.orelse):
                    found = search(inner)
                    if found:
                        return [(block, i), *found]
        return []

    return search(fn.body)


def _index(block, node):
    return next(i for i, s in enumerate(block) if s is node)
