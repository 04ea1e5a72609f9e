"""After simplification of a reverse rule: save what its loops' adjoints read.

Takes the forward sweep and the simplified reverse sweep; guarantees that

* every value a reverse loop body reads and the forward loop body assigns is
  saved on a tape named after it (``y_tape``): appended once per iteration
  (iteration-start values of loop headers at the top of the body, other
  values at every exit of the body), restored at the top of each reverse
  iteration by index (``y = y_tape[k]``), so a pullback can run again;
* each reverse loop runs as many times as its forward loop did: from the
  length of a tape at top level, else from a trip counter that the forward
  sweep keeps (itself saved on the enclosing loop's tape when nested);
* nothing else is saved: straight-line values stay plain residuals.

    for i in range(n):            y_tape = []                    for k in reversed(range(len(y_tape))):
        y = y * x          ->     for i in range(n):                 y = y_tape[k]
                                      y_tape.append(y)               ct_x = ct_x + ct_y * y
                                      y = y * x                      ct_y = ct_y * x
"""

import copy

import gast

from .normalize import append_fallthrough, assign, name


def _loops(node):
    """Loops under ``node``, innermost first."""
    out = []
    for child in gast.iter_child_nodes(node):
        out.extend(_loops(child))
    if isinstance(node, (gast.For, gast.While)) and hasattr(node, "loop_id"):
        out.append(node)
    return out


def _stored(stmts):
    return {n.id for s in stmts for n in gast.walk(s)
            if isinstance(n, (gast.Name,)) and isinstance(n.ctx, gast.Store)}


def _loaded(stmts):
    return {n.id for s in stmts for n in gast.walk(s)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def _top_level_loop(node, root):
    """True if no other loop of ``root`` contains ``node``."""
    for other in gast.walk(root):
        if other is not node and isinstance(other, (gast.For, gast.While)):
            if any(n is node for n in gast.walk(other)):
                return False
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
    return [copy.deepcopy(s) for s in stmts]


def _append(tape, value):
    call = gast.Call(func=gast.Attribute(value=name(tape), attr="append", ctx=gast.Load()),
                     args=[name(value)], keywords=[])
    return gast.Expr(value=call)


def install_tapes(fwd, bwd, namer, loop_headers):
    """Fill in the tapes and trip counts of every loop of ``fwd``/``bwd`` (in place)."""
    forward_loops = {loop.loop_id: loop for loop in _loops(fwd)}
    created = []
    for back in _loops(bwd):
        loop = forward_loops[back.loop_id]
        top = _top_level_loop(loop, fwd)
        assigned = _stored(loop.body) | ({loop.target.id} if isinstance(loop, gast.For) else set())
        needed = sorted((_loaded(back.body) - _stored(back.body)) & assigned)
        # The variable of ``for i in range(n)`` is the reverse index itself: no tape.
        counted = isinstance(loop, gast.For) and loop.target.id in needed and _counts_from_zero(loop)
        if counted:
            needed.remove(loop.target.id)
        tapes = {v: namer.fresh(f"{v}_tape") for v in needed}
        created += list(tapes.values())
        # Forward: iteration-start values first, the rest at every exit of the body.
        headers = loop_headers.get(loop.loop_id, set())
        at_start = [v for v in needed if v in headers or (isinstance(loop, gast.For) and v == loop.target.id)]
        at_exit = [v for v in needed if v not in at_start]
        pad = [assign(v, gast.Constant(None, None)) for v in at_exit if v not in _exits_before(loop.body)]
        exit_appends = [_append(tapes[v], v) for v in at_exit]
        _append_before_breaks(loop.body, exit_appends)
        append_fallthrough(loop.body, _copies(exit_appends))
        loop.body[:0] = pad + [_append(tapes[v], v) for v in at_start]
        # Trip count: a top-level loop with a tape knows it; otherwise count.
        if top and tapes:
            trips = gast.Call(func=name("len"), args=[name(tapes[needed[0]])], keywords=[])
        else:
            counter = namer.fresh("trips")
            loop.body.insert(0, assign(counter, gast.BinOp(left=name(counter), op=gast.Add(),
                                                           right=gast.Constant(1, None))))
            _insert_around(fwd, loop, before=[assign(counter, gast.Constant(0, None))])
            trips = name(counter)
        back.iter.args[0].args[0] = trips
        # Reverse: restore by index (a cursor when the loop runs more than once).
        if counted:
            back.body.insert(0, assign(loop.target.id, name(back.target.id)))
        if top:
            restores = [assign(v, gast.Subscript(value=name(t), slice=name(back.target.id), ctx=gast.Load()))
                        for v, t in tapes.items()]
            back.body[:0] = restores
        elif tapes:
            cursor = namer.fresh("pos")
            first = tapes[needed[0]]
            bwd.body.insert(1 if bwd.body and _is_unpack(bwd.body[0]) else 0,
                            assign(cursor, gast.Call(func=name("len"), args=[name(first)], keywords=[])))
            step = assign(cursor, gast.BinOp(left=name(cursor), op=gast.Sub(), right=gast.Constant(1, None)))
            restores = [assign(v, gast.Subscript(value=name(t), slice=name(cursor), ctx=gast.Load()))
                        for v, t in tapes.items()]
            back.body[:0] = [step] + restores
    fwd.body[:0] = [assign(t, gast.List(elts=[], ctx=gast.Load())) for t in created]


def _counts_from_zero(loop):
    """``for i in range(n)``: iteration k has i == k."""
    it = loop.iter
    return (isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and it.func.id == "range"
            and len(it.args) == 1)


def _is_unpack(stmt):
    return isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.Name) and stmt.value.id == "saved"


def _insert_around(root, node, before):
    """Insert ``before`` just before ``node`` in whatever block holds it."""
    for parent in gast.walk(root):
        for field in ("body", "orelse"):
            block = getattr(parent, field, None)
            if isinstance(block, list) and any(s is node for s in block):
                idx = next(i for i, s in enumerate(block) if s is node)
                block[idx:idx] = before
                return
