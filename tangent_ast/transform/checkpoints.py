"""After the tapes of a reverse rule: checkpointed loops keep snapshots, not tapes.

Takes the two sweeps with their tapes installed (tapes.py) and the loops the user marked
``for t in checkpointed(range(n), snapshots=k)``; guarantees, for each such loop, that

* the schedule is Griewank's binomial checkpointing (revolve): at most ``k`` snapshots of
  the loop's state (the values a step reads from the one before) are kept at once, and
  if ``n <= C(k + r, r)`` each step runs at most ``r`` times forward and once more with
  its tapes, the fewest any schedule with ``k`` snapshots needs;
* the forward sweep runs the loop without tapes and keeps a snapshot at the steps
  ``runtime.binomial_split`` gives (a number: where the next snapshot goes),
  and the state the last step starts from;
* the reverse sweep goes back one step at a time, from the last: it takes the latest
  snapshot at or before the step (dropping later ones: their steps are done), runs
  forward to the step keeping snapshots where the same rule puts them, then runs the
  step again with its tapes (one value each: plain names) and backwards. Cotangents
  accumulate across steps as in the loop without the marker, which gives the same
  numbers to the last bit;
* a loop whose steps cannot be run again to the same values is refused: one that calls
  a function with effects (``rng.normal()``, ``print``), updates an array in place, holds
  another loop or is inside one, or may leave early.

    for t in range(n):          forward sweep:                 reverse sweep, last step first:
        h = np.sin(h) * x  ->   for t in range(n):             for step in reversed(range(n)):
                                    if t == keep_at:               (drop snapshots after step)
                                        (keep h, next keep_at)     h = (the latest snapshot)
                                    h = np.sin(h) * x              for t in range(start, step):
                                                                       (keep h at keep_at)
                                                                       h = np.sin(h) * x
                                                                   (step, taped; backwards)

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
    snapshot_steps = []
    h_snapshots = []
    keep_at = 0
    for t in range(n):
        if t == keep_at:
            snapshot_steps.append(t)
            h_snapshots.append(h)
            keep_at = runtime.binomial_split(t, n, 4 - len(snapshot_steps))
        h = np.sin(h) * x
    return (h, (x, n, snapshot_steps, h_snapshots))
<BLANKLINE>
def f_bwd(saved, ct_h):
    x, n, snapshot_steps, h_snapshots = saved
    ct_x = 0.0
    kept_steps = list(snapshot_steps)
    h_kept = list(h_snapshots)
    for step in reversed(range(n)):
        while kept_steps[-1] > step:
            kept_steps.pop()
            h_kept.pop()
        start = kept_steps[-1]
        h = h_kept[-1]
        keep_at = runtime.binomial_split(start, step + 1, 4 - len(kept_steps))
        for t in range(start, step):
            if t == keep_at:
                kept_steps.append(t)
                h_kept.append(h)
                keep_at = runtime.binomial_split(t, step + 1, 4 - len(kept_steps))
            h = np.sin(h) * x
        ct_x = ct_x + ct_h * np.sin(h)
        ct_h = ct_h * x * np.cos(h)
    ct_x = ct_x + ct_h
    return ct_x
<BLANKLINE>
"""

import inspect
from dataclasses import dataclass

import gast
import numpy as np

from .. import runtime
from ..front.checks import unsupported
from ..front.parse import parse
from ..front.resolve import resolve
from ..rules.registry import is_pure_function
from ..runtime import EFFECTFUL
from ..runtime.checkpoints import checkpointed
from ..vocabulary.syntax import assign, attribute, loaded_names, name, stored_names, updated_arrays
from ..vocabulary.trees import copy_tree, walk
from .derivatives import unsupported_call
from .tapes import unset_before

_LIBRARIES = ("numpy", "builtins", "math")


def checkpoint_loops(fwd, bwd, loops, tapes_of, primal, namespace):
    """Rewrite (in place) each loop pair of ``loops`` whose primal loop is checkpointed;
    ``tapes_of``: what install_tapes returned; ``primal``: the pipeline's ``Front`` of the
    function (its loops in SSA form, their snapshots, its scope and namer); ``namespace``:
    the generated module's globals (it imports the runtime). True if it rewrote one."""
    loops_by_id = {id(n): n for n in walk(primal.function) if isinstance(n, gast.For)}
    rewritten = False
    for pair in loops:
        if pair.primal in primal.checkpoints:
            loop = loops_by_id[pair.primal]
            if not _place(bwd, pair.backward):
                continue  # nothing flows back through the loop: it keeps nothing anyway
            _check_recomputable(primal.parsed, loop, primal.scope)
            tapes, carried = tapes_of.get(pair.primal, ({}, {}))
            runtime_name = namespace.bind("runtime", runtime)
            checkpointed_loop = _CheckpointedLoop(
                fwd, bwd, pair, tapes, carried, primal.namer, runtime_name
            )
            checkpointed_loop.rewrite(
                primal.checkpoints[pair.primal],
                primal.ssa_info.origin,
                lambda what, hint, at=loop: _refuse(primal, at, what, hint),
            )
            rewritten = True
    return rewritten


def _refuse(primal, at, what, hint):
    raise unsupported(primal.parsed, at, f"checkpointing a loop that {what}", hint)


@dataclass
class _Kept:
    """Snapshots: the steps they were taken at, and for each value of the loop's state a
    list of its values there (one list per value, as one tape per value: each holds values
    of one kind), at most ``snapshots`` kept at once."""

    steps: str
    lists: dict  # a value of the state -> the list of its snapshots
    snapshots: int

    def all_lists(self):
        return [self.steps, *self.lists.values()]

    def free(self):
        """How many more snapshots may be kept: ``k - len(steps)``."""
        return gast.BinOp(
            left=_int(self.snapshots), op=gast.Sub(), right=_call("len", [name(self.steps)])
        )


class _CheckpointedLoop:
    """One checkpointed loop: its forward sweep keeps snapshots, its reverse sweep goes back
    from them one step at a time."""

    def __init__(self, fwd, bwd, pair, tapes, carried, namer, runtime_name):
        self.fwd, self.bwd, self.namer = fwd, bwd, namer
        self.runtime = runtime_name  # what generated code calls the runtime
        self.loop, self.back = pair.forward, pair.backward
        self.tapes = set(tapes.values())
        self.tape_of = dict(tapes)  # value -> its tape
        self.carried = carried  # value -> the header it is the next iteration's value of

    def rewrite(self, snapshots, origin, refuse):
        loop, back = self.loop, self.back
        self._check_shape(refuse)
        trips = back.iter.args[0].args[0]
        taped_body = copy_tree(loop.body)
        loop.body = [s for s in loop.body if not self._is_tape_append(s)]
        plain_body = copy_tree(loop.body)
        state = sorted(_read_before_written(loop.body) & stored_names(loop.body))
        self._check_nothing_else_clobbered(taped_body, refuse)
        fresh = self.namer.fresh
        kept = _Kept(
            fresh("snapshot_steps"),
            {v: fresh(f"{origin.get(v, v)}_snapshots") for v in state},
            snapshots,
        )
        keep_at = fresh("keep_at")
        # Forward sweep: the loop without tapes, keeping a snapshot where the binomial rule
        # puts one.
        self.fwd.body = [s for s in self.fwd.body if not self._is_new_tape(s)]
        loop.body.insert(0, self._keep(kept, keep_at, copy_tree(trips)))
        block, at = _place(self.fwd, loop)[-1]
        block[at:at] = [
            *unset_before(self.fwd, loop, state, lambda: attribute(self.runtime, "UNSET")),
            *[assign(each, gast.List(elts=[], ctx=gast.Load())) for each in kept.all_lists()],
            assign(keep_at, _int(0)),
        ]
        # A value handed down from the next iteration starts, for the step run backwards, as
        # the value that step ends with (tapes.py put it before the reverse loop).
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
        # The reverse sweep keeps its snapshots in lists of its own: the forward sweep's are
        # residuals, and a pullback may run again.
        own = _Kept(
            fresh("kept_steps"), {v: fresh(f"{origin.get(v, v)}_kept") for v in state}, snapshots
        )
        steps = [
            *[
                assign(mine, _call("list", [name(theirs)]))
                for mine, theirs in zip(own.all_lists(), kept.all_lists(), strict=True)
            ],
            self._steps_backwards(own, keep_at, trips, plain_body, taped_body, handed_down),
        ]
        for n in (n for s in steps for n in gast.walk(s)):
            if getattr(n, "lineno", None) is None and "lineno" in getattr(n, "_attributes", ()):
                n.lineno = getattr(loop, "lineno", None)
        at = _index(back_block, back)
        back_block[at : at + 1] = steps

    def _keep(self, kept, keep_at, stop):
        """``if t == keep_at:`` keep a snapshot and find the step to keep the next one at, in
        a run towards ``stop``."""
        t = self.loop.target.id
        split = [name(t), stop, kept.free()]
        return gast.If(
            test=gast.Compare(left=name(t), ops=[gast.Eq()], comparators=[name(keep_at)]),
            body=[
                _call_method(kept.steps, "append", [name(t)]),
                *[_call_method(each, "append", [name(v)]) for v, each in kept.lists.items()],
                assign(keep_at, _runtime_call(self.runtime, "binomial_split", split)),
            ],
            orelse=[],
        )

    def _steps_backwards(self, kept, keep_at, trips, plain_body, taped_body, handed_down):
        """The reverse sweep, one step at a time from the last: from the latest snapshot at
        or before the step, run forward to it (keeping snapshots on the way, as the forward
        sweep did), then run the step again with its tapes and backwards."""
        t = self.loop.target.id
        step, start = self.namer.fresh("step"), self.namer.fresh("start")
        stop = gast.BinOp(left=name(step), op=gast.Add(), right=_int(1))
        forward = gast.For(
            target=name(t, gast.Store()),
            iter=_call("range", [name(start), name(step)]),
            body=[self._keep(kept, keep_at, copy_tree(stop)), *plain_body],
            orelse=[],
            type_comment=None,
        )
        one_step = self._one_step(taped_body, handed_down, set(kept.lists))
        split = [name(start), stop, kept.free()]
        body = [
            gast.While(  # drop the snapshots after this step: their steps are done
                test=gast.Compare(
                    left=_subscript(name(kept.steps), -1), ops=[gast.Gt()], comparators=[name(step)]
                ),
                body=[_call_method(each, "pop", []) for each in kept.all_lists()],
                orelse=[],
            ),
            assign(start, _subscript(name(kept.steps), -1)),
            *[assign(v, _subscript(name(each), -1)) for v, each in kept.lists.items()],
            assign(keep_at, _runtime_call(self.runtime, "binomial_split", split)),
            forward,
            *_without_unread([assign(t, name(step))], one_step),
        ]
        return gast.For(
            target=name(step, gast.Store()),
            iter=_reversed_range(copy_tree(trips)),
            body=body,
            orelse=[],
            type_comment=None,
        )

    def _one_step(self, taped_body, handed_down, state):
        """Step ``t`` again, then backwards: the forward sweep's loop body, then the reverse
        loop's. A value of the loop's ``state`` that only the body's last copy sets (the
        next step's value) keeps its value through the step: the copy goes, and with it
        its tape and the value handed down. The other tapes would hold one value each:
        they are plain names."""
        kept, ahead = set(), []
        for i, s in enumerate(taped_body):
            copied = _copied_into(s)
            others = taped_body[:i] + taped_body[i + 1 :]
            if (
                copied in state
                and copied not in loaded_names(taped_body[i + 1 :])
                and copied not in stored_names(others)
            ):
                kept.add(copied)
            else:
                ahead.append(s)
        dropped = {self.tape_of[h] for h in kept if h in self.tape_of}
        back = [s for s in self.back.body if _restored_from(s) not in dropped]
        while back and self._hands_down(back[-1], kept):  # to a next step there is none of
            back.pop()
        ahead = [s for s in ahead if not (self._is_tape_append(s) and _appended_to(s) in dropped)]
        handed = [s for s in handed_down if not self._hands_down(s, kept)]
        tapes = self.tapes - dropped
        return _without_unread(_untaped(ahead, tapes) + handed, _untaped(back, tapes))

    def _hands_down(self, s, headers):
        """``s`` is ``v = h``: the header ``h`` (of ``headers``) as the value ``v`` that
        the step before it ends with."""
        return (
            isinstance(s, gast.Assign)
            and isinstance(s.targets[0], gast.Name)
            and isinstance(s.value, gast.Name)
            and self.carried.get(s.targets[0].id) == s.value.id
            and s.value.id in headers
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
        return _is_append_to(s, self.tapes)

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


def _reversed_range(count):
    return gast.Call(
        func=name("reversed"),
        args=[gast.Call(func=name("range"), args=[count], keywords=[])],
        keywords=[],
    )


def _call_method(target, method, args):
    call = gast.Call(
        func=gast.Attribute(value=name(target), attr=method, ctx=gast.Load()),
        args=args,
        keywords=[],
    )
    return gast.Expr(value=call)


def _call(function, args):
    return gast.Call(func=name(function), args=args, keywords=[])


def _int(value):
    return gast.Constant(value, None)


def _subscript(value, index):
    index = _int(index) if isinstance(index, int) else index
    return gast.Subscript(value=value, slice=index, ctx=gast.Load())


def _runtime_call(runtime_name, helper, args):
    func = gast.Attribute(value=name(runtime_name), attr=helper, ctx=gast.Load())
    return gast.Call(func=func, args=args, keywords=[])


def _untaped(stmts, tapes):
    """``stmts`` of one step: ``v_tape.append(v)`` -> ``v_tape = v`` and ``v = v_tape[t]``
    -> ``v = v_tape`` (a tape of one value is the value)."""
    out = []
    for s in copy_tree(stmts):
        for n in gast.walk(s):
            for field, value in gast.iter_fields(n):
                if (
                    isinstance(value, gast.Subscript)
                    and isinstance(value.value, gast.Name)
                    and value.value.id in tapes
                ):
                    setattr(n, field, name(value.value.id))
        out.append(s)
    return [_untape_append(s, tapes) for s in out]


def _without_unread(ahead, back):
    """``ahead + back`` without the assignments of ``ahead`` that nothing after them reads
    (what the next step would have read: every call of a checkpointed loop is pure)."""
    kept = list(back)
    for s in reversed(ahead):
        if isinstance(s, gast.Assign) and not stored_names([s]) & loaded_names(kept):
            continue
        kept.insert(0, s)
    return kept


def _copied_into(s):
    """``h`` for ``h = v`` (names), else None."""
    if (
        isinstance(s, gast.Assign)
        and isinstance(s.targets[0], gast.Name)
        and isinstance(s.value, gast.Name)
    ):
        return s.targets[0].id
    return None


def _restored_from(s):
    """``tape`` for ``v = tape[i]``, else None."""
    if (
        isinstance(s, gast.Assign)
        and isinstance(s.value, gast.Subscript)
        and isinstance(s.value.value, gast.Name)
    ):
        return s.value.value.id
    return None


def _appended_to(s):
    return s.value.func.value.id


def _is_append_to(s, tapes):
    """``s`` is ``tape.append(value)`` for one of ``tapes``."""
    return (
        isinstance(s, gast.Expr)
        and isinstance(s.value, gast.Call)
        and isinstance(s.value.func, gast.Attribute)
        and s.value.func.attr == "append"
        and isinstance(s.value.func.value, gast.Name)
        and s.value.func.value.id in tapes
    )


def _untape_append(s, tapes):
    if _is_append_to(s, tapes):
        return assign(s.value.func.value.id, s.value.args[0])
    for field in ("body", "orelse"):
        if isinstance(getattr(s, field, None), list):
            setattr(s, field, [_untape_append(x, tapes) for x in getattr(s, field)])
    return s


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
