"""Where the reverse sweep works on its own copy of an array whose overwritten slots it
restores, and how restores nothing reads are dropped (transform/reverse.py's
``finish_updates``).

A reverse sweep that restores ``v[0] = v_old`` copies ``v`` first, so that the forward
sweep's result is left alone and the pullback can run again. The copy goes where ``v``
exists: the innermost branch holding every restore, or each branch holding some where the
code after an early return is written once per path:

    if returned:                          if returned:
        ct_x = ct_out                         ct_x = ct_out
    else:                          ->     else:
        ...                                   v = v.copy()
        v[0] = v_old                          ...
                                              v[0] = v_old
"""

import gast


def blocks_holding(bwd, restores):
    """Where the reverse sweep copies an array it restores: the innermost branch holding
    every restore; or, where the restores sit in branches none of which holds another (the
    code after an early return, written once per path), each of those branches (on a path
    that returned, the array was never made)."""
    every = _branch_holding(bwd.body, {id(r.statement) for r in restores})
    each = {}
    for r in restores:
        block = _branch_holding(bwd.body, {id(r.statement)})
        each[id(block)] = block
    blocks = list(each.values())
    inside = [{id(n) for st in b for n in gast.walk(st)} for b in blocks]
    nested = any(
        id(b[0]) in inside[i] for i in range(len(blocks)) for b in blocks if b is not blocks[i]
    )
    if every is not bwd.body or len(blocks) < 2 or nested or any(b is bwd.body for b in blocks):
        return [every]
    return blocks


def _branch_holding(block, ids):
    """The innermost branch of an ``if`` (following branches only, never into a loop) that
    holds every statement of ``ids``: an array defined in one branch only (None in the
    other) is copied where it exists."""
    while True:
        inner = None
        for s in block:
            if isinstance(s, gast.If):
                for branch in (s.body, s.orelse):
                    if ids <= {id(n) for st in branch for n in gast.walk(st)}:
                        inner = branch
        if inner is None:
            return block
        block = inner


def drop_statements(node, ids):
    for parent in gast.walk(node):
        for field in ("body", "orelse"):
            block = getattr(parent, field, None)
            if isinstance(block, list):
                block[:] = [s for s in block if id(s) not in ids] or (
                    [gast.Pass()]
                    if field == "body" and not isinstance(parent, gast.FunctionDef)
                    else []
                )
