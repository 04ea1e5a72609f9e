"""Stage SSA: each name is assigned once on every path.

Takes a normalized function; guarantees

* in straight-line code each name is assigned once: re-assignments of ``y``
  become ``y_1``, ``y_2`` (the first keeps the user's name);
* after ``if``/``else`` a name that differs between the branches is *joined*:
  both branches assign the same join name (the branch's own version is
  renamed to it when it is defined there, else a copy ``y_2 = y`` ends the
  branch), so each path still assigns it once;
* a path that leaves a loop (``break``) runs nothing after it: join copies and
  the copies into a loop's header names end every path that falls through,
  inside the branches of an ``if`` that may break, at any depth;
* a header with no value before its loop (a name first assigned in it and read
  after it), or a ``for`` loop's variable with none (a loop may run zero times),
  that one of these copies reads is ``runtime.UNSET`` before the loop
  (:attr:`SSAInfo.unset`): the copies run on paths where the user's code never
  reads it;
* :class:`SSAInfo` says which user name each version stands for.

>>> import tangent_ast as ta
>>> def f(x, n):
...     y = x
...     for i in range(n):
...         y = y * x
...     if y > 1.0:
...         y = y - 1.0
...     return y
>>> print(ta.show(f, stage="ssa", args=(1.5, 3)))
def f(x, n):
    y = x
    y_1 = y
    for i in range(n):
        y_2 = y_1 * x
        y_1 = y_2
    y_gt_one = y_1 > 1.0
    if y_gt_one:
        y_3 = y_1 - 1.0
    else:
        y_3 = y_1
    return y_3
<BLANKLINE>

:func:`verify` checks these invariants; the tests run it after this stage.
"""

from dataclasses import dataclass, field

import gast

from ..vocabulary.syntax import stored_names
from ..vocabulary.trees import Transformer, walk
from .lowering.jumps import append_fallthrough, may_leave


@dataclass
class SSAInfo:
    origin: dict = field(default_factory=dict)  # SSA name -> user's name
    joins: set = field(default_factory=set)  # names assigned on both sides of an if
    # loop header names (set before a loop and at its exits)
    carried: set = field(default_factory=set)
    loop_headers: dict = field(default_factory=dict)  # id(loop node) -> its own header names
    # headers with no value before their loop, set to UNSET there: SSA's copies read them
    # (into a join, an inner loop's header) on paths where the user's code never does
    unset: set = field(default_factory=set)


class _Rename(Transformer):
    def __init__(self, env):
        self.env = env

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and node.id in self.env:
            node.id = self.env[node.id]
        return node


def _rename_block(stmts, old, new):
    for s in stmts:
        for n in gast.walk(s):
            if isinstance(n, gast.Name) and n.id == old:
                n.id = new


def _copy(target, source, at):
    """A join or loop-header copy: SSA's own statement, so it cites no line of the user's."""
    node = gast.Assign(
        targets=[gast.Name(target, gast.Store(), None, None)],
        value=gast.Name(source, gast.Load(), None, None),
        type_comment=None,
    )
    node.lineno = None
    return node


def _unset(target, value):
    """``target = runtime.UNSET``: a loop header that has no value yet (SSA's own
    statement; ``value`` makes the right-hand side)."""
    node = gast.Assign(
        targets=[gast.Name(target, gast.Store(), None, None)],
        value=value(),
        type_comment=None,
    )
    node.lineno = None
    return node


def is_unset(stmt, unset):
    """``stmt`` is SSA's ``h = runtime.UNSET`` for a header of ``unset``."""
    return (
        isinstance(stmt, gast.Assign)
        and isinstance(stmt.targets[0], gast.Name)
        and stmt.targets[0].id in unset
        and not isinstance(stmt.value, gast.Name)
        and getattr(stmt, "lineno", None) is None
    )


def _loaded(node, skip=None):
    """The names ``node`` (but ``skip``) may read as they were before it. A for loop's body
    reads its own target as the loop binds it: ``for i in range(4): s = s + i`` reads no
    earlier ``i`` (a loop that reuses a name need not have an earlier loop hand it on)."""
    out = set()
    stack = [(node, frozenset())]
    while stack:
        n, bound = stack.pop()
        if n is skip:
            continue
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id not in bound:
            out.add(n.id)
        if isinstance(n, gast.For) and isinstance(n.target, gast.Name):
            inner = bound | {n.target.id}
            stack.append((n.iter, bound))
            stack.extend((c, inner) for c in n.body)
            stack.extend((c, bound) for c in n.orelse)
        else:
            stack.extend((c, bound) for c in gast.iter_child_nodes(n))
    return out


def _exits(stmts):
    """Every path through ``stmts`` ends in break, return or raise."""
    for s in stmts:
        if isinstance(s, (gast.Break, gast.Return, gast.Raise)):
            return True
        if isinstance(s, gast.If) and _exits(s.body) and _exits(s.orelse):
            return True
    return False


class _SSA:
    def __init__(self, namer, function, unset_value):
        self.namer = namer
        self.function = function
        self.unset_value = unset_value
        self.defined = set()
        self.info = SSAInfo()
        self.loops = []  # carried {user name: header name} of the enclosing loops

    def define(self, user_name):
        if user_name not in self.defined:
            self.defined.add(user_name)
            ssa = user_name
        else:
            ssa = self.namer.version(user_name)
            self.defined.add(ssa)
        self.info.origin[ssa] = user_name
        return ssa

    def block(self, stmts, env):
        out = []
        for s in stmts:
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Subscript):
                s.value = _Rename(env).visit(s.value)
                target = s.targets[0]
                target.slice = _Rename(env).visit(target.slice)
                target.value.id = env.get(target.value.id, target.value.id)
                out.append(s)  # an in-place update: the array keeps its name
            elif isinstance(s, gast.Assign):
                s.value = _Rename(env).visit(s.value)
                target = s.targets[0]
                new = self.define(target.id)
                env[target.id] = new
                target.id = new
                out.append(s)
            elif isinstance(s, gast.If):
                s.test = _Rename(env).visit(s.test)
                body_env, else_env = dict(env), dict(env)
                s.body = self.block(s.body, body_env)
                s.orelse = self.block(s.orelse, else_env)
                if _exits(s.body) and not _exits(s.orelse):
                    env.update(else_env)
                elif _exits(s.orelse) and not _exits(s.body):
                    env.update(body_env)
                else:
                    self.join(s, env, body_env, else_env)
                out.append(s)
            elif isinstance(s, (gast.For, gast.While)):
                out.extend(self.loop(s, env))
            elif isinstance(s, gast.Break):
                out.extend(self.carry(self.loops[-1], env, s))
                out.append(s)
            else:
                out.append(_Rename(env).visit(s))
        return out

    def loop(self, node, env):
        """A loop: names it carries from one iteration to the next get a header
        version, set before the loop and at every exit of the body."""
        assigned = stored_names(node.body)
        outside = _loaded(self.function, skip=node)
        carried = {}
        before = []
        for user in sorted(assigned):
            if (
                user in env
                or user in outside
                or (isinstance(node, gast.While) and user == node.test.id)
            ):
                header = self.define(user)
                if user in env:
                    before.append(_copy(header, env[user], node))
                else:
                    # first assigned in the loop, read after it (a result a return in the
                    # loop sets, a value some iterations set): Python reads it only where
                    # set, SSA's copies (into a join, the next loop's header) wherever
                    # control passes; UNSET stands for no value yet (where they read it:
                    # _drop_unread_unset)
                    before.append(_unset(header, self.unset_value))
                    self.info.unset.add(header)
                carried[user] = header
                env[user] = header
        if isinstance(node, gast.For):
            node.iter = _Rename(env).visit(node.iter)
            user = node.target.id
            target = self.define(user)
            # read after the loop: by the user's code, or by the copies that carry it at the
            # end of an enclosing loop's body
            read_after = (
                user in outside
                or any(user in carried for carried in self.loops)
                or user in self.bound_by_other_loops(node)  # a later loop may carry it
            )
            if user in env and read_after:
                # a loop that runs zero times leaves the name as it was: its version
                # starts as that, for what reads it after the loop
                before.append(_copy(target, env[user], node))
            elif user not in env:
                # and if it had no value, it has none after such a loop (kept where a later
                # copy of SSA's reads it: a loop after this one that carries the name)
                before.append(_unset(target, self.unset_value))
                self.info.unset.add(target)
            env[user] = target
            node.target.id = target
        else:
            node.test = _Rename(env).visit(node.test)
        self.info.carried.update(carried.values())
        self.info.loop_headers[id(node)] = set(carried.values())
        body_env = dict(env)
        self.loops.append(carried)
        node.body = self.block(node.body, body_env)
        self.loops.pop()

        append_fallthrough(node.body, self.carry(carried, body_env, node))
        return before + [node]

    def bound_by_other_loops(self, node):
        """Names bound in the body of a loop of the function outside ``node``: such a loop
        carries the name from its value before it, which SSA's copy reads."""
        inside = {id(n) for n in walk(node)}
        return {
            name
            for loop in walk(self.function)
            if isinstance(loop, (gast.For, gast.While)) and id(loop) not in inside
            for name in stored_names(loop.body)
        }

    def carry(self, carried, env, at):
        """Copies that hand the current versions to the loop's header names."""
        return [
            _copy(header, env[user], at)
            for user, header in carried.items()
            if env.get(user, header) != header
        ]

    def renamed(self, old, new):
        """``old`` is now called ``new``: a loop header of the branch keeps being one (the
        reverse sweep hands its cotangent from iteration to iteration by these names)."""
        if old in self.info.carried:
            self.info.carried.discard(old)
            self.info.carried.add(new)
        for headers in self.info.loop_headers.values():
            if old in headers:
                headers.discard(old)
                headers.add(new)
        if old in self.info.joins:
            self.info.joins.discard(old)
            self.info.joins.add(new)
        if old in self.info.unset:
            self.info.unset.discard(old)
            self.info.unset.add(new)

    def join(self, node, env, body_env, else_env):
        for user in sorted(set(body_env) | set(else_env)):
            b, e = body_env.get(user), else_env.get(user)
            if b == e or b is None or e is None:
                if (b is None) != (e is None) and user not in env:
                    # defined on one path only, as in the user's code; where a copy of SSA's
                    # reads it later (a loop's name handed on), UNSET on the other path
                    one, other = (b, node.orelse) if e is None else (e, node.body)
                    append_fallthrough(other, [_unset(one, self.unset_value)])
                    self.info.unset.add(one)
                    env[user] = one
                continue
            before = env.get(user)
            in_body, in_else = b != before, e != before
            joined = b if in_body else e
            if in_body and in_else:
                _rename_block(node.orelse, e, joined)
                self.renamed(e, joined)
            elif in_body:
                append_fallthrough(node.orelse, [_copy(joined, e, node)])
            else:
                append_fallthrough(node.body, [_copy(joined, b, node)])
            self.info.joins.add(joined)
            env[user] = joined


def to_ssa(fn, namer, unset_value):
    """Rename ``fn`` (normalized) in place into SSA form; returns :class:`SSAInfo`.
    ``unset_value()``: the value of a header that has none yet (``runtime.UNSET``, bound in
    the function's scope)."""
    ssa = _SSA(namer, fn, unset_value)
    env = {}
    for arg in fn.args.args:
        ssa.defined.add(arg.id)
        ssa.info.origin[arg.id] = arg.id
        env[arg.id] = arg.id
    fn.body = ssa.block(fn.body, env)
    _drop_unread_unset(fn, ssa.info)
    return ssa.info


def _drop_unread_unset(fn, info):
    """Keep ``h = runtime.UNSET`` only for headers one of SSA's copies reads (those cite no line):
    where only the user's code reads ``h``, it has a value there, and a loop that never
    sets it leaves it unbound, as Python does."""
    read = {
        s.value.id
        for s in walk(fn)
        if isinstance(s, gast.Assign)
        and isinstance(s.value, gast.Name)
        and getattr(s, "lineno", None) is None
    }
    unread = info.unset - read
    for node in list(walk(fn)):
        for field_name in ("body", "orelse"):
            block = getattr(node, field_name, None)
            if isinstance(block, list):
                block[:] = [s for s in block if not is_unset(s, unread)]
    info.unset -= unread


def verify(fn, carried=None):
    """Raise AssertionError unless ``fn`` is in SSA form (see module docstring).

    ``carried``: the loop header names (SSAInfo.carried), which are assigned
    before their loop and again at the exits of its body."""
    params = {a.id for a in fn.args.args}

    def block(stmts, defined, again=frozenset()):
        """``again``: loop headers this path may assign once more (at the loop's exits)."""
        for s in stmts:
            header = (
                s.test
                if isinstance(s, (gast.If, gast.While))
                else s.iter
                if isinstance(s, gast.For)
                else s
            )
            for n in gast.walk(header):
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
                    assert n.id in defined or n.id not in assigned, (
                        f"line {getattr(s, 'lineno', '?')}: {n.id} used before it is assigned"
                    )
            # the reverse sweep replays a loop's last iteration up to its break
            assert not (
                isinstance(s, gast.If) and may_leave(s, (gast.Break,)) and s is not stmts[-1]
            ), f"line {getattr(s, 'lineno', '?')}: a statement follows an if that may break"
            if isinstance(s, gast.Assign):
                for t in s.targets:
                    for n in gast.walk(t):
                        # a[i] = v updates a in place: it assigns no name (a is read)
                        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                            assert n.id not in defined or n.id in again, (
                                f"line {getattr(s, 'lineno', '?')}: {n.id} assigned twice on one "
                                "path"
                            )
                            defined = defined | {n.id}
                            again = again - {n.id}
            elif isinstance(s, gast.If):
                defined = block(s.body, defined, again) | block(s.orelse, defined, again)
            elif isinstance(s, (gast.For, gast.While)):
                # One iteration is one path; loop headers are assigned before the loop and
                # once more at an exit of the body, the loop variable by the loop itself.
                inner = defined | ({s.target.id} if isinstance(s, gast.For) else set())
                headers = frozenset(carried & stored_names(s.body))
                block(s.body, inner | headers, headers)
                defined = defined | inner | stored_names(s.body)
        return defined

    assigned = {
        n.id for n in walk(fn) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
    }
    carried = carried or set()
    block(fn.body, set(params))
    returns = [s for s in fn.body if isinstance(s, gast.Return)]
    assert len(returns) == 1 and fn.body[-1] is returns[0], "exactly one return, at the end"
