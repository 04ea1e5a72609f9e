"""Jumps: one ``return`` at the end; ``continue`` gone; ``break`` only ending a branch.

Takes the function's statements; guarantees exactly one ``return atom``, last. An early
``return`` assigns the result name and the statements after the ``if`` that may return
move into the branch that does not; inside a loop it sets a flag and breaks, and the loop
is followed by ``if flag:``. What follows a ``continue`` moves into the branch that does
not continue.

>>> from tangent_ast.front.lowering import lower_source
>>> print(lower_source('''
... def f(xs):
...     total = 0.0
...     for x in xs:
...         if x > 10:
...             return x
...         total = total + x
...     return total
... '''))
def f(xs):
    total = 0.0
    returned = False
    len_xs = len(xs)
    for i in range(len_xs):
        x = xs[i]
        x_gt_ten = x > 10
        if x_gt_ten:
            out = x
            returned = True
            break
        else:
            total = total + x
    if returned:
        pass
    else:
        out = total
    return out
"""

import copy

import gast

from ...vocabulary.syntax import assign, located, name
from ...vocabulary.trees import copy_tree


class JumpLowering:
    """The lowering of ``return``, ``break`` and ``continue``."""

    def lower_returns(self, stmts):
        """Replace ``return e`` by ``<result> = e``, moving what follows an ``if``
        that may return into the branches that fall through."""
        out = []
        for i, s in enumerate(stmts):
            if isinstance(s, gast.Return):
                value = s.value if s.value is not None else gast.Constant(None, None)
                if not (isinstance(value, gast.Name) and value.id == self.result):
                    out.append(
                        located(
                            gast.Assign(
                                targets=[name(self.result, gast.Store())],
                                value=value,
                                type_comment=None,
                            ),
                            s,
                        )
                    )
                return out
            if isinstance(s, (gast.For, gast.While)) and any(map(_may_return, s.orelse)):
                # the else block runs after the loop: its return is not one from inside it
                before, loop, after = self.loop_else(s)
                loop = copy.copy(loop)
                loop.orelse = []
                return out + self.lower_returns(before + [loop] + after + stmts[i + 1 :])
            if isinstance(s, (gast.For, gast.While)) and _may_return(s):
                flag = self.namer.fresh("returned")
                loop = copy.copy(s)
                loop.body = self.returns_to_breaks(s.body, flag)
                after = located(
                    gast.If(
                        test=name(flag),
                        body=[located(gast.Return(value=name(self.result)), s)],
                        orelse=[],
                    ),
                    s,
                )
                start = assign(flag, gast.Constant(False, None), s)
                return out + self.lower_returns([start, loop, after] + stmts[i + 1 :])
            if isinstance(s, gast.If) and _may_return(s):
                rest = stmts[i + 1 :]
                body = s.body if _always_exits(s.body) else s.body + copy_tree(rest)
                orelse = s.orelse if _always_exits(s.orelse) else s.orelse + copy_tree(rest)
                new = copy.copy(s)
                new.body = self.lower_returns(body)
                new.orelse = self.lower_returns(orelse)
                out.append(new)
                return out
            out.append(s)
        return out

    def returns_to_breaks(self, stmts, flag):
        """Inside a loop: ``return e`` -> ``<result> = e; flag = True; break``."""
        out = []
        for s in stmts:
            if isinstance(s, gast.Return):
                value = s.value if s.value is not None else gast.Constant(None, None)
                out += [
                    located(
                        gast.Assign(
                            targets=[name(self.result, gast.Store())],
                            value=value,
                            type_comment=None,
                        ),
                        s,
                    ),
                    assign(flag, gast.Constant(True, None), s),
                    located(gast.Break(), s),
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
                # its else block runs in the loop around it: its break leaves that one
                loop.orelse = self.returns_to_breaks(s.orelse, flag)
                out += [
                    loop,
                    located(
                        gast.If(test=name(flag), body=[located(gast.Break(), s)], orelse=[]), s
                    ),
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
            if isinstance(s, (gast.For, gast.While)) and any(
                may_leave(o, (gast.Break, gast.Continue)) for o in s.orelse
            ):  # for ... else: continue: the else block, after the loop, jumps in this one
                before, loop, after = self.loop_else(s)
                loop = copy.copy(loop)
                loop.orelse = []
                return out + self.lower_jumps(before + [loop] + after + stmts[i + 1 :])
            if isinstance(s, gast.If) and may_leave(s, (gast.Break, gast.Continue)):
                rest = stmts[i + 1 :]
                new = copy.copy(s)
                new.body = self.lower_jumps(
                    s.body if _always_jumps(s.body) else s.body + copy_tree(rest)
                )
                new.orelse = self.lower_jumps(
                    s.orelse if _always_jumps(s.orelse) else s.orelse + copy_tree(rest)
                )
                return out + [new]
            out.append(s)
        return out


def append_fallthrough(stmts, tail):
    """Append ``tail`` at the end of every path through ``stmts`` that falls through: into
    the branches of a last ``if`` that may jump, at any depth, never after a ``break``.

    So a path that breaks runs nothing after it (the reverse sweep replays a loop's last
    iteration as its body's statements on the path it took, up to the ``break``); the
    jumps are lowered so that an ``if`` that may jump is the last statement of its block."""
    last = stmts[-1] if stmts else None
    if isinstance(last, (gast.Break, gast.Continue, gast.Return, gast.Raise)):
        return
    if isinstance(last, gast.If) and may_leave(last):
        for block in (last.body, last.orelse):
            append_fallthrough(block, copy_tree(tail))
        return
    stmts.extend(tail)


def loop_level(stmts):
    """Nodes of ``stmts`` not inside nested loops (what break/continue there refer to); a
    nested loop's ``else`` block runs after it, at this level."""
    for s in stmts:
        yield s
        if isinstance(s, gast.If):
            yield from loop_level(s.body)
            yield from loop_level(s.orelse)
        elif isinstance(s, (gast.For, gast.While)):
            yield from loop_level(s.orelse)


def may_leave(s, leaves=(gast.Break, gast.Continue, gast.Return, gast.Raise)):
    """Some path through ``s`` leaves the block by one of ``leaves`` (of its own loop)."""
    return any(isinstance(n, leaves) for n in loop_level([s]))


def _always_jumps(stmts):
    """Every path through ``stmts`` ends in break, continue, return or raise."""
    for s in stmts:
        if isinstance(s, (gast.Break, gast.Continue, gast.Return, gast.Raise)):
            return True
        if isinstance(s, gast.If) and _always_jumps(s.body) and _always_jumps(s.orelse):
            return True
    return False


def mark_breaks(stmts, flag):
    out = []
    for s in stmts:
        if isinstance(s, gast.Break):
            out += [assign(flag, gast.Constant(True, None), s), s]
        elif isinstance(s, gast.If):
            new = copy.copy(s)
            new.body = mark_breaks(s.body, flag)
            new.orelse = mark_breaks(s.orelse, flag)
            out.append(new)
        elif isinstance(s, (gast.For, gast.While)) and s.orelse:  # see loop_level
            new = copy.copy(s)
            new.orelse = mark_breaks(s.orelse, flag)
            out.append(new)
        else:
            out.append(s)
    return out


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
