"""After simplification of a reverse rule: save what its loops' adjoints read.

Takes the forward sweep and the simplified reverse sweep; guarantees that

* every value a reverse loop body reads and the forward loop body assigns is
  saved on a tape named after it (``y_tape``): appended once per iteration
  (iteration-start values of loop headers at the top of the body, other
  values at every exit of the body), restored at the top of each reverse
  iteration by index (``y = y_tape[k]``), so a pullback can run again;
* except what the reverse loop gets otherwise, always bit for bit the value the
  forward loop had (the same statement on the same operands): a value the body
  ends by copying into a header is handed down from the next reverse iteration;
  a statement of values that do not change in the loop runs once before it; a
  cheap statement (see ``_cheap``: arithmetic on numbers, elementwise ``+ - *``
  on arrays, an item of an unchanged container by the loop index) of those, the
  index and restored headers runs again in each reverse iteration, written into
  its only use there (``math.cos(a * x)``); a header is taped in place of what
  such statements compute from it only when that saves tapes;
* each reverse loop runs as many times as its forward loop did: a loop over
  ``range(n)`` or ``range(a, b)`` that never breaks runs down the same range (its
  index is computed again, not taped; a tape at top level is read at ``i - a``),
  another from the length of a tape at top level, else from a trip counter that
  the forward sweep keeps (itself saved on the enclosing loop's tape when nested);
* nothing else is saved: straight-line values stay plain residuals.

    for i in range(n):        forward sweep:             reverse sweep:
        y = y * x      ->     y_tape = []                for k in reversed(range(len(y_tape))):
                              for i in range(n):             y = y_tape[k]
                                  y_tape.append(y)           ct_x = ct_x + ct_y * y
                                  y = y * x                  ct_y = ct_y * x

>>> import tangent_ast as ta
>>> def f(x, n):
...     y = x
...     for i in range(n):
...         y = y * x
...     return y
>>> print(ta.show(f, mode="reverse", stage="simplify", args=(1.5, 3)))
def f_fwd(x, n):
    y_1_tape = []
    y = x
    for i in range(n):
        y_1_tape.append(y)
        y = y * x
    return (y, (x, n, y_1_tape))
<BLANKLINE>
def f_bwd(saved, ct_y):
    x, n, y_1_tape = saved
    ct_x = 0.0
    for i in reversed(range(n)):
        y = y_1_tape[i]
        ct_x = ct_x + ct_y * y
        ct_y = ct_y * x
    ct_x = ct_x + ct_y
    return ct_x
<BLANKLINE>
"""

import gast

from ..front.lowering.jumps import append_fallthrough
from ..vocabulary.syntax import (
    assign,
    name,
    read_before_assigned,
    replace_node,
    stored_names,
    updated_arrays,
)
from ..vocabulary.trees import copy_tree


def _loops(node, wanted):
    """The loops under ``node`` whose ids are in ``wanted``, innermost first."""
    out = []
    for child in gast.iter_child_nodes(node):
        out.extend(_loops(child, wanted))
    if isinstance(node, (gast.For, gast.While)) and id(node) in wanted:
        out.append(node)
    return out


def _top_level_loop(node, root):
    """True if no other loop of ``root`` contains ``node``."""
    stack = [(root, False)]  # (a node, whether a loop holds it)
    while stack:
        n, in_a_loop = stack.pop()
        if n is node:
            return not in_a_loop
        in_a_loop = in_a_loop or isinstance(n, (gast.For, gast.While))
        stack.extend((c, in_a_loop) for c in gast.iter_child_nodes(n))
    return True


def _exits_before(stmts):
    """Names assigned at the top of ``stmts`` before anything that may break."""
    safe = set()
    for s in stmts:
        if any(isinstance(n, gast.Break) for n in gast.walk(s)) or not isinstance(s, gast.Assign):
            if isinstance(s, gast.Expr):
                continue
            break
        safe |= {n.id for n in gast.walk(s.targets[0]) if isinstance(n, gast.Name)}
    return safe


def _append_before_breaks(stmts, tail):
    """Put a copy of ``tail`` before every ``break`` of this loop level."""
    for s in list(stmts):
        if isinstance(s, gast.Break):
            idx = next(i for i, x in enumerate(stmts) if x is s)
            stmts[idx:idx] = _copies(tail)
        elif isinstance(s, gast.If):
            _append_before_breaks(s.body, tail)
            _append_before_breaks(s.orelse, tail)


def _copies(stmts):
    return [copy_tree(s) for s in stmts]


def _copy_what_is_restored(reads, back):
    """``b = b_tape[k].copy()`` for an array the reverse loop ``back`` restores slot by slot
    (``b[i] = b_old``): the tape holds the forward sweep's object, which the pullback must
    leave as it found it, so that it gives the same cotangents when it runs again."""
    restored = updated_arrays(back.body)
    for read in reads:
        if isinstance(read.targets[0], gast.Name) and read.targets[0].id in restored:
            read.value = gast.Call(
                func=gast.Attribute(value=read.value, attr="copy", ctx=gast.Load()),
                args=[],
                keywords=[],
            )


def _with_copies(names, fn):
    """``names`` and every name a plain copy (``v = v_2``) joins to one of them: one array."""
    copies = [
        (n.targets[0].id, n.value.id)
        for n in gast.walk(fn)
        if isinstance(n, gast.Assign)
        and isinstance(n.targets[0], gast.Name)
        and isinstance(n.value, gast.Name)
    ]
    names = set(names)
    while True:
        more = {b for a, b in copies if a in names} | {a for a, b in copies if b in names}
        if more <= names:
            return names
        names |= more


def _append(tape, value, copied=False):
    item = name(value)
    if copied:
        item = gast.Call(
            func=gast.Attribute(value=item, attr="copy", ctx=gast.Load()), args=[], keywords=[]
        )
    call = gast.Call(
        func=gast.Attribute(value=name(tape), attr="append", ctx=gast.Load()),
        args=[item],
        keywords=[],
    )
    return gast.Expr(value=call)


def install_tapes(
    fwd, bwd, loops, namer, loop_headers, recomputable, is_scalar, unset, changed=frozenset()
):
    """Fill in the tapes and trip counts of every loop of ``fwd``/``bwd`` (in place);
    ``loops``: the :class:`~tangent_ast.transform.reverse.LoopPair` of each. Returns the tapes of
    each loop and the values its reverse loop hands down instead:
    ``{pair.primal: ({value: its tape}, {value: header})}`` (checkpoints.py reads them).

    ``recomputable(stmt)``: whether a statement may be evaluated again in the reverse
    sweep (a pure operation, no call with effects); ``is_scalar(name)``: whether a
    value is a number (cheap to recompute every iteration); ``unset()``: the expression of a
    value not set yet (``runtime.UNSET``), what a tape keeps where the loop has not set a
    value it saves; ``changed``: arrays the forward sweep updates in place that the reverse
    sweep does not restore (it sees their last state), which a value computed again in a
    reverse loop must not read."""
    pair_of = {id(pair.backward): pair for pair in loops}
    # an array updated in place (after a loop, or in a later iteration it is carried to) is
    # taped as a copy at the loop body's exit: the tape keeps it as that iteration left it
    changing = _with_copies(updated_arrays(fwd.body), fwd)
    created = []
    tapes_of = {}
    for back in _loops(bwd, pair_of):
        pair = pair_of[id(back)]
        loop = pair.forward
        top = _top_level_loop(loop, fwd)
        target = loop.target.id if isinstance(loop, gast.For) else None
        headers = loop_headers.get(pair.primal, set())
        assigned = stored_names(loop.body) | ({target} if target else set())
        # what the reverse body reads before it assigns it (an inner reverse loop restores
        # its header only after the outer body has read the inner loop's last value)
        needed = sorted(read_before_assigned(back.body) & assigned)
        # What the reverse sweep can compute again is not saved: values that do not
        # change in the loop once, before it; scalars of the loop index in each iteration.
        # A header read by a recomputation is restored in its stead (one tape for another),
        # and may then hand down the value the body ends by copying into it. A value handed
        # down from the next reverse iteration costs nothing: never recomputed.
        # Only when that saves tapes: two values recomputed from one header, not one for one.
        restorable = set(headers)
        _, first = _recomputations(
            loop, needed, headers, restorable, recomputable, is_scalar, set(), changed
        )
        added = _reads(first) & (set(headers) - set(needed))
        if len({st.targets[0].id for st in first} & set(needed)) <= len(added):
            restorable, added = set(headers) & set(needed), set()
        needed += sorted(added)
        carried = _carried_from_next_iteration(fwd, bwd, loop, back, needed, headers)
        hoisted, again = _recomputations(
            loop, needed, headers, restorable, recomputable, is_scalar, set(carried), changed
        )
        needed += sorted(_reads(again) & (set(headers) - set(needed)))
        needed = [v for v in needed if v not in {st.targets[0].id for st in hoisted + again}]
        if (
            target
            and target not in needed
            and any(
                n.id == target
                for st in again
                for n in gast.walk(st.value)
                if isinstance(n, gast.Name)
            )
        ):
            needed.append(target)
        _insert_around(bwd, back, before=[copy_tree(st) for st in hoisted])
        # ``for i in range(a, b)`` without break runs backwards as ``for i in
        # reversed(range(a, b))``: its index is computed again, not taped
        counted = (
            isinstance(loop, gast.For)
            and _counts_by_one(loop)
            and not breaks_early(loop)
            and not {n.id for n in gast.walk(loop.iter) if isinstance(n, gast.Name)} & assigned
        )
        if counted:
            back.target.id = target
            if target in needed:
                needed.remove(target)
        needed = [v for v in needed if v not in carried]
        tapes = {v: namer.fresh(f"{v}_tape") for v in needed}
        created += list(tapes.values())
        tapes_of[pair.primal] = (tapes, carried)
        # Forward: iteration-start values first, the rest at every exit of the body.
        at_start = [v for v in needed if v in headers or v == target]
        at_exit = [v for v in needed if v not in at_start]
        pad = [assign(v, unset()) for v in at_exit if v not in _exits_before(loop.body)]
        exit_appends = [_append(tapes[v], v, copied=v in changing) for v in at_exit]
        _append_before_breaks(loop.body, exit_appends)
        append_fallthrough(loop.body, _copies(exit_appends))
        loop.body[:0] = pad + [_append(tapes[v], v) for v in at_start]
        # A header the body assigns before it reads it (``if t == 0: y = x else: y = y * x``)
        # may have no value yet when the first iteration tapes it: None, never read back.
        _insert_around(fwd, loop, before=unset_before(fwd, loop, at_start, unset))
        # Trip count: the range itself, the length of a tape, or a counter.
        start = None  # what the index of iteration 0 is, when not 0
        if counted and len(loop.iter.args) == 2:
            back.iter.args[0] = copy_tree(loop.iter)
            start = loop.iter.args[0]
        elif counted:
            back.iter.args[0].args[0] = copy_tree(loop.iter.args[0])
        elif top and tapes:
            trips = gast.Call(func=name("len"), args=[name(tapes[needed[0]])], keywords=[])
        else:
            counter = namer.fresh("trips")
            loop.body.insert(
                0,
                assign(
                    counter,
                    gast.BinOp(left=name(counter), op=gast.Add(), right=gast.Constant(1, None)),
                ),
            )
            _insert_around(fwd, loop, before=[assign(counter, gast.Constant(0, None))])
            trips = name(counter)
        if not counted:
            back.iter.args[0].args[0] = trips
        # Reverse: restore by index (a cursor when the loop runs more than once), then recompute.
        if top:  # the reverse index is the iteration's index (tapes of nested loops use a cursor)
            index = name(back.target.id)
            if start is not None:
                index = gast.BinOp(left=index, op=gast.Sub(), right=copy_tree(start))
            restores = [
                assign(v, gast.Subscript(value=name(t), slice=copy_tree(index), ctx=gast.Load()))
                for v, t in tapes.items()
            ]
        elif tapes:
            cursor = namer.fresh("pos")
            first = tapes[needed[0]]
            bwd.body.insert(
                1 if bwd.body and _is_unpack(bwd.body[0], bwd) else 0,
                assign(cursor, gast.Call(func=name("len"), args=[name(first)], keywords=[])),
            )
            step = assign(
                cursor, gast.BinOp(left=name(cursor), op=gast.Sub(), right=gast.Constant(1, None))
            )
            restores = [step] + [
                assign(v, gast.Subscript(value=name(t), slice=name(cursor), ctx=gast.Load()))
                for v, t in tapes.items()
            ]
        else:
            restores = []
        _copy_what_is_restored(restores, back)
        recomputed = [copy_tree(st) for st in again]
        back.body[:0] = restores + recomputed
        _keep_across(bwd, back, [v for v in tapes if not top], namer)
        _fold_single_uses(back.body, recomputed)
        # A value the body ends by copying into a loop header is that header's value at
        # the start of the next iteration: the reverse loop hands it down instead of a tape.
        _insert_around(bwd, back, before=[assign(v, name(h)) for v, h in carried.items()])
        back.body.extend(assign(v, name(h)) for v, h in carried.items())
    fwd.body[:0] = [assign(t, gast.List(elts=[], ctx=gast.Load())) for t in created]
    _drop_copies_tapes_replace(bwd, _loops(bwd, pair_of))
    return tapes_of


def _drop_copies_tapes_replace(bwd, backs):
    """Drop ``v = v.copy()`` (the reverse sweep's own copy of an array it restores) where
    every other read of ``v`` is in a reverse loop that reads ``v`` from its tape first: the
    copy was of a last value nothing reads (which a branch not taken never binds)."""
    taped = {}  # v -> the ids of the nodes of the loops that read it from a tape first
    for back in backs:
        assigned, read_before = set(), set()
        for st in back.body:
            if not (isinstance(st, gast.Assign) and isinstance(st.targets[0], gast.Name)):
                break
            read_before |= {
                n.id for n in gast.walk(st.value) if isinstance(n, gast.Name)
            } - assigned
            assigned.add(st.targets[0].id)
        for v in assigned - read_before:
            taped.setdefault(v, set()).update(id(n) for n in gast.walk(back))
    for block in _blocks(bwd):
        for st in list(block):
            v = _copied_name(st)
            if v is None or v not in taped:
                continue
            elsewhere = [
                n
                for n in gast.walk(bwd)
                if isinstance(n, gast.Name)
                and n.id == v
                and isinstance(n.ctx, gast.Load)
                and id(n) not in taped[v]
            ]
            if all(id(n) in {id(m) for m in gast.walk(st)} for n in elsewhere):
                block.remove(st)


def _copied_name(st):
    """``v`` for ``v = v.copy()``, else None."""
    if (
        isinstance(st, gast.Assign)
        and isinstance(st.targets[0], gast.Name)
        and isinstance(st.value, gast.Call)
        and isinstance(st.value.func, gast.Attribute)
        and st.value.func.attr == "copy"
        and isinstance(st.value.func.value, gast.Name)
        and st.value.func.value.id == st.targets[0].id
        and not st.value.args
    ):
        return st.targets[0].id
    return None


def _blocks(tree):
    """Every statement list of ``tree``."""
    for n in gast.walk(tree):
        for field in ("body", "orelse"):
            block = getattr(n, field, None)
            if isinstance(block, list) and block and isinstance(block[0], gast.stmt):
                yield block


def _fold_single_uses(block, recomputed):
    """A recomputed value read once, by a later statement of ``block`` that is no loop,
    with nothing in between rebinding what it is computed from, is written into that
    read (``ct * math.cos(a * x)``): the same expression of the same operands, evaluated
    at most once per iteration as before."""
    for st in reversed(recomputed):
        v = st.targets[0].id
        operands = {n.id for n in gast.walk(st.value) if isinstance(n, gast.Name)} | {v}
        at = next(i for i, s in enumerate(block) if s is st)
        reads = [
            (i, n)
            for i, s in enumerate(block)
            for n in gast.walk(s)
            if isinstance(n, gast.Name) and n.id == v and isinstance(n.ctx, gast.Load)
        ]
        if len(reads) != 1:
            continue
        i, use = reads[0]
        user = block[i]
        between = block[at + 1 : i] + ([] if isinstance(user, gast.Assign) else [user])
        if (
            i <= at
            or isinstance(user, (gast.For, gast.While))
            or any(isinstance(n, gast.Lambda) for n in gast.walk(user))
            or stored_names(between) & operands
            or updated_arrays(between) & operands
        ):
            continue
        replace_node(user, use, st.value)
        del block[at]


def unset_before(fn, node, names, unset):
    """``v = runtime.UNSET`` (``unset()``) for each of ``names`` that no statement before
    ``node`` in ``fn`` assigns (nor a loop around it as its variable): a value ``node`` may
    read unset. Its zero tangent is 0.0, so cotangents that pass through it add up."""
    assigned = set()

    def search(block):
        for s in block:
            if s is node:
                return True
            if any(n is node for n in gast.walk(s)):  # in a branch or loop: look inside it
                if isinstance(s, gast.For) and isinstance(s.target, gast.Name):
                    assigned.add(s.target.id)
                for field in ("body", "orelse"):
                    inner = getattr(s, field, None) or []
                    if any(n is node for st in inner for n in gast.walk(st)):
                        return search(inner)
                return True
            assigned.update(stored_names([s]))
        return False

    search(fn.body)
    return [assign(v, unset()) for v in names if v not in assigned]


def _carried_from_next_iteration(fwd, bwd, loop, back, needed, headers):
    """``{value: header}`` for the values the reverse loop reads that the forward body
    ends by copying into a header it also restores (``h = v`` last): iteration k's ``v``
    is iteration k + 1's ``h``, and the last one is ``h`` after the loop.

    Only for a loop at the top of both sweeps that runs every iteration to its end (no
    ``break`` or ``continue``), whose header is not assigned after it in the forward
    sweep nor before it in the reverse sweep (so ``h`` there is the loop's last value)."""
    if not (
        any(s is loop for s in fwd.body)
        and any(s is back for s in bwd.body)
        and not any(isinstance(n, (gast.Break, gast.Continue)) for n in gast.walk(loop))
    ):
        return {}
    after_loop = fwd.body[next(i for i, s in enumerate(fwd.body) if s is loop) + 1 :]
    before_back = bwd.body[: next(i for i, s in enumerate(bwd.body) if s is back)]
    clobbered = stored_names(after_loop) | stored_names(before_back) | updated_arrays(loop.body)
    assignments = {}
    for n in gast.walk(loop):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            assignments[n.id] = assignments.get(n.id, 0) + 1
    carried = {}
    for st in reversed(loop.body):
        if not (
            isinstance(st, gast.Assign)
            and isinstance(st.targets[0], gast.Name)
            and isinstance(st.value, gast.Name)
            and st.targets[0].id in headers
        ):
            break
        header, value = st.targets[0].id, st.value.id
        if (
            value in needed
            and header in needed
            and value not in headers
            and value not in carried
            and assignments.get(value) == 1
            and assignments.get(header) == 1
            and not {value, header} & clobbered
        ):
            carried[value] = header
    return carried


def _reads(stmts):
    return {n.id for st in stmts for n in gast.walk(st.value) if isinstance(n, gast.Name)}


def _recomputations(
    loop, needed, headers, restorable, recomputable, is_scalar, carried, changed=frozenset()
):
    """(statements to run once before the reverse loop, statements to run in each
    reverse iteration) that give the ``needed`` values without a tape: a statement
    whose operands the reverse iteration has anyway (values that do not change in the
    loop, the loop index, restored headers not yet assigned again, ``carried`` values
    handed down, other recomputed values), and that is :func:`_cheap`. An array in
    ``changed`` holds another value in the reverse sweep: what reads it is taped."""
    target = loop.target.id if isinstance(loop, gast.For) else None
    updated = updated_arrays(loop.body)
    written = stored_names(loop.body) | updated | ({target} if target else set()) | set(changed)
    safe = _exits_before(loop.body)
    assignments = {}
    for n in gast.walk(loop):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            assignments[n.id] = assignments.get(n.id, 0) + 1
    invariant, by_index = {}, {}
    # ``restorable`` headers the reverse loop restores as they are at the start of the
    # iteration: a statement may read them until the body assigns them again. Not an array
    # the body updates in place: its tape holds the object the forward iteration went on
    # changing, as it was at the end of the iteration, until the reverse body restores it
    restored = set(restorable) - updated
    for st in loop.body:
        if not (isinstance(st, gast.Assign) and isinstance(st.targets[0], gast.Name)):
            restored -= stored_names([st])
            continue
        v = st.targets[0].id
        if (
            v in headers
            or v in carried
            or v not in safe
            or assignments.get(v) != 1
            or not recomputable(st)
        ):
            restored.discard(v)
            continue
        operands = {n.id for n in gast.walk(st.value) if isinstance(n, gast.Name)}
        if v not in updated and all(o not in written or o in invariant for o in operands):
            invariant[v] = st
        elif (
            target
            and v not in updated
            and all(
                o not in written
                or o in invariant
                or o in by_index
                or o == target
                or o in restored
                or o in carried
                for o in operands
            )
            and _cheap(st.value, is_scalar)
        ):
            by_index[v] = st
    used = set()

    def use(v):
        if v in used or (v not in invariant and v not in by_index):
            return
        used.add(v)
        st = invariant.get(v) or by_index[v]
        for n in gast.walk(st.value):
            if isinstance(n, gast.Name):
                use(n.id)

    for v in needed:
        use(v)
    return (
        [st for v, st in invariant.items() if v in used],
        [st for v, st in by_index.items() if v in used],
    )


# elementwise operators an array expression may be recomputed with: about as fast as
# reading a tape, which would keep a whole array per iteration alive
_ELEMENTWISE = (gast.Add, gast.Sub, gast.Mult, gast.USub, gast.UAdd)


def _cheap(expr, is_scalar):
    """Recomputing ``expr`` in every reverse iteration costs about what reading it from a
    tape does: arithmetic and pure calls on numbers; elementwise ``+ - *`` on arrays; an
    item or basic slice of a container (a view, nothing copied). Not a matmul, a
    reduction or a call on an array (each costs like the forward step itself)."""
    if isinstance(expr, gast.Constant):
        return True
    if isinstance(expr, gast.Name):
        return True
    if isinstance(expr, gast.Attribute):  # ``x.T``, ``x.shape``: no copy
        return isinstance(expr.value, gast.Name)
    if isinstance(expr, gast.Subscript):
        return isinstance(expr.value, gast.Name) and _scalar_index(expr.slice, is_scalar)
    numbers = all(is_scalar(n.id) for n in _operand_names(expr))
    if isinstance(expr, gast.BinOp):
        return (
            not isinstance(expr.op, gast.MatMult)
            and (numbers or isinstance(expr.op, _ELEMENTWISE))
            and _cheap(expr.left, is_scalar)
            and _cheap(expr.right, is_scalar)
        )
    if isinstance(expr, gast.UnaryOp):
        return (numbers or isinstance(expr.op, _ELEMENTWISE)) and _cheap(expr.operand, is_scalar)
    if isinstance(expr, gast.Call):
        return (
            numbers
            and not expr.keywords
            and all(_cheap(a, is_scalar) for a in expr.args)
            and isinstance(expr.func, (gast.Name, gast.Attribute))
        )
    return False


def _operand_names(expr):
    """The names ``expr`` reads as values (not the module or function a call names)."""
    if isinstance(expr, gast.Call):
        return [n for a in expr.args for n in _operand_names(a)]
    if isinstance(expr, gast.Name):
        return [expr]
    return [n for c in gast.iter_child_nodes(expr) for n in _operand_names(c)]


def _scalar_index(index, is_scalar):
    """An index that picks items or a basic slice: numbers only, no index array."""
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    for part in parts:
        if isinstance(part, gast.Slice):
            bounds = [b for b in (part.lower, part.upper, part.step) if b is not None]
        else:
            bounds = [part]
        for b in bounds:
            if not (isinstance(b, gast.Constant) and isinstance(b.value, int)) and not (
                all(is_scalar(n.id) for n in _operand_names(b)) and _cheap(b, is_scalar)
            ):
                return False
    return True


def breaks_early(loop):
    """The loop has a break of its own (not one of a nested loop)."""

    def block(stmts):
        for s in stmts:
            if isinstance(s, gast.Break):
                return True
            if isinstance(s, gast.If) and (block(s.body) or block(s.orelse)):
                return True
        return False

    return block(loop.body)


def _counts_by_one(loop):
    """``for i in range(n)`` or ``range(a, b)``: iteration k has i == a + k."""
    it = loop.iter
    return (
        isinstance(it, gast.Call)
        and isinstance(it.func, gast.Name)
        and it.func.id == "range"
        and len(it.args) in (1, 2)
        and not it.keywords
        and not any(isinstance(a, gast.Starred) for a in it.args)
    )


def _keep_across(bwd, back, restored, namer):
    """A nested reverse loop restores its values by their own names: one that the reverse
    sweep reads again after it (a cotangent accumulated after the branch holding the loop,
    from the inner loop's last value) is kept under a fresh name before the loop and put
    back after it, so that what follows reads the value it had before, not the first
    iteration's."""
    after = read_before_assigned(_after(bwd, back))
    for v in restored:
        if v in after:
            kept = namer.fresh(f"{v}_after_loop")
            _insert_around(bwd, back, before=[assign(kept, name(v))])
            _insert_after(bwd, back, [assign(v, name(kept))])


def _after(root, node):
    """The statements that run after ``node`` up to the end of ``root``'s body: those after
    it in its block, then those after each block's enclosing statement."""
    path = _path_to(root, node)
    return [s for block, i in reversed(path or []) for s in block[i + 1 :]]


def _path_to(parent, node):
    """``[(block, index), ...]`` from ``parent``'s body down to ``node``; None if absent."""
    for field in ("body", "orelse"):
        block = getattr(parent, field, None)
        if not isinstance(block, list):
            continue
        for i, s in enumerate(block):
            if s is node:
                return [(block, i)]
            below = _path_to(s, node)
            if below is not None:
                return [(block, i), *below]
    return None


def _insert_after(root, node, after):
    """Insert ``after`` just after ``node`` in whatever block holds it."""
    block, i = _path_to(root, node)[-1]
    block[i + 1 : i + 1] = after


def _is_unpack(stmt, bwd):
    return (
        isinstance(stmt, gast.Assign)
        and isinstance(stmt.value, gast.Name)
        and stmt.value.id == bwd.args.args[0].id
    )


def _insert_around(root, node, before):
    """Insert ``before`` just before ``node`` in whatever block holds it."""
    for parent in gast.walk(root):
        for field in ("body", "orelse"):
            block = getattr(parent, field, None)
            if isinstance(block, list) and any(s is node for s in block):
                idx = next(i for i, s in enumerate(block) if s is node)
                block[idx:idx] = before
                return
