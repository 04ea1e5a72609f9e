"""``p.w += v``, ``d["k"] += v``, ``xs[0] += v``: an in-place update of an array that a
local record or container holds, followed where no other name can see it.

Python adds into the array the slot holds, so every other name of that array sees the
change. The lowering reads the slot into a name, updates the name and puts it back
(``p_w = p.w``, ``p_w_1 = p_w + v``, ``p_1 = replace(p, w=p_w_1)``), which the stages read
as a new value: right exactly when no name that still holds the old array (another name
of the record or container, a name the slot was read into, the name the array was made
under, a view of any of them) is read after the update. Runs on the SSA function with
kinds known; ``private_slot_update`` says whether an update is such a one, for
:func:`tangent_ast.analysis.shared_updates.check_augmented`, which refuses the others.

What it accepts: the record or container is a local of this function, or a dataclass
argument (whose fields updated this way the lowering copies first and writes into the
caller's arrays at the end: ``runtime.write_fields(p_given, p_2, in_place=("w",))``; a
list's or dict's items are written back whole, so those stay refused), each version of it
is used only as
the base of a field or item read, to make its next version (``replace``,
``runtime.list_with``, ``runtime.dict_with``, a copy) or by ``len``, and it is made by a
dataclass's constructor or a literal naming the slot's value; the array in the updated
slot was made by arithmetic, a ufunc or a constructor (a new array no other name holds)
or is an earlier update's result; every name bound to that array before the update (the
slot read into a name, the name it was made under, a view of either) is not read after.

The other way round, ``xs = [a, y]; a += v`` on a new array ``a`` at the top of the
function: ``rebuild_holders`` builds each container or record holding ``a`` again after
the update (``xs_1 = [a_1, y]``), and later reads read it, where the container is only
read by item (or given to a NumPy function) and no item was read out into a name read
after the update.

>>> import numpy as np, tangent_ast as ta
>>> from dataclasses import dataclass
>>> @dataclass
... class Point:
...     w: np.ndarray
...     c: float
>>> def f(x, y):
...     p = Point(x * 1.0, 0.5)
...     for _ in range(2):
...         p.w += y * p.w
...     return np.sum(p.w)
>>> ta.grad(f)(np.array([1.0, 2.0]), np.array([0.5, 1.0]))
array([2.25, 4.  ])
>>> def g(x):
...     p = Point(x * 1.0, 0.5)
...     before = p.w
...     p.w *= 3.0
...     return np.sum(before)
>>> ta.grad(g)(np.ones(2))
Traceback (most recent call last):
...
tangent_ast.errors.UnsupportedSyntaxError: <doctest ...>:4: an augmented assignment to p.w, an
array Python updates in place, while 'before' holds that array too and is read after the
update (or kept) is not supported
  hint: take a copy where 'before' is made (before = ....copy()), or write the update as a
new value: ... = ... <op> v
"""

import dataclasses

import gast
import numpy as np

from ..front.new_arrays import fresh_array
from ..front.record_updates import assignable_fields
from ..runtime import dict_with, list_with, write_list
from ..vocabulary.kinds import UNKNOWN, Tag
from ..vocabulary.syntax import assign
from ..vocabulary.trees import copy_tree
from .views import view_base

# the calls that make a container's next version with one item set: (c, key, value)
_ITEM_SET = (list_with, dict_with)
# the calls that make a container's next version from it (the first argument)
_NEXT_VERSION = (dataclasses.replace, list, dict, *_ITEM_SET)


def private_slot_update(fn, update, origin, kinds, scope, order, position, blame=None):
    """Whether ``update`` (``held_1 = held <op> v``, ``held = c.f`` or ``c[k]``, put back
    by the statement after it) changes an array no name read after it still holds (see the
    module docstring). ``order``: :func:`~tangent_ast.analysis.views.program_order` of
    ``fn``'s body; ``position``: each statement's place in it; ``blame``: a list given the
    name that still holds the array, where that is why not."""
    held, new = update.value.left.id, update.targets[0].id
    read = _definition(order, held)
    if read is None:
        return False
    container, slot = _slot_of(read.value)
    if slot is None or not _put_back(order, position, update, container, slot, scope):
        return False
    user = origin.get(container, container)
    versions = {v for v, u in origin.items() if u == user} | {user, container}
    arguments = versions & {a.id for a in fn.args.args}
    if not all(
        kinds.get(v, UNKNOWN).tag in (Tag.RECORD, Tag.LIST, Tag.DICT)
        for v in versions
        if v in kinds or v == container
    ):
        return False  # a value of unknown kind may be shared
    given = _given_copies(order, arguments, scope)
    if not _argument_read_first(order, position, update, versions, slot, arguments, scope):
        return False
    sources = _slot_sources(order, versions, slot, scope, given)
    if sources is None:
        return False
    holders = _with_names_of(order, sources | _slot_reads(order, versions, slot), scope, kinds)
    loops_of = {id(s): loops for s, loops in order}
    for h in sorted(holders - {held, new}):
        if (
            _definition(order, h) is None
            or _stale_read(order, position, loops_of, h, update)
            or not _only_consumed(order, h, versions, scope)
        ):
            if blame is not None:  # the name that still holds the array, for the refusal
                blame.append(h)
            return False
    return True


def _definition(order, variable):
    """The one assignment of ``variable`` (None if it has none or several)."""
    found = [s for s, _ in order if isinstance(s, gast.Assign) and _binds(s, {variable})]
    return found[0] if len(found) == 1 else None


def _binds(s, names):
    return isinstance(s.targets[0], gast.Name) and s.targets[0].id in names


def _name_of(e):
    return e.id if isinstance(e, gast.Name) else None


def _key(e):
    """A constant index or key as a slot (a 1-tuple), else None."""
    return (e.value,) if isinstance(e, gast.Constant) else None


def _slot_of(value):
    """``(container, slot)`` of a read ``c.f`` (slot ``"f"``) or ``c[k]`` (slot ``(k,)``
    for a constant ``k``, else None)."""
    if isinstance(value, gast.Attribute) and isinstance(value.value, gast.Name):
        return value.value.id, value.attr
    if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name):
        return value.value.id, _key(value.slice)
    return None, None


def _may_be_slot(key, slot):
    """May the item ``key`` be ``slot``? (``xs[-1]`` may be ``xs[2]``.)"""
    if key is None:
        return True
    negative = [k[0] < 0 for k in (key, slot) if isinstance(k[0], int)]
    return key == slot or (len(negative) == 2 and negative[0] != negative[1])


def _put_back(order, position, update, container, slot, scope):
    """Whether the statement after ``update`` puts its result back in the slot it read
    (``c_1 = replace(c, f=held_1)``, ``c_1 = runtime.list_with(c, k, held_1)``)."""
    after = [s for s, _ in order if position[id(s)] == position[id(update)] + 1]
    if not after or not isinstance(after[0], gast.Assign):
        return False
    call, new = after[0].value, update.targets[0].id
    if not isinstance(call, gast.Call) or [_name_of(a) for a in call.args[:1]] != [container]:
        return False
    obj = scope.lookup(call.func)
    if isinstance(slot, str):
        return (
            obj is dataclasses.replace
            and len(call.args) == 1
            and [(k.arg, _name_of(k.value)) for k in call.keywords] == [(slot, new)]
        )
    return (
        obj in _ITEM_SET
        and len(call.args) == 3
        and _key(call.args[1]) == slot
        and _name_of(call.args[2]) == new
    )


def _given_copies(order, arguments, scope):
    """The statements ``p_given = p`` keeping a dataclass argument as given, for the
    write-back (``runtime.write_fields(p_given, p_2, in_place=("w",))``) alone to read."""
    copies = set()
    for s, _ in order:
        if isinstance(s, gast.Assign) and _name_of(s.value) in arguments:
            kept = s.targets[0].id if isinstance(s.targets[0], gast.Name) else None
            uses = [(t, n) for t, _ in order for n in _own_nodes(t) if kept and _loads(n, kept)]
            if uses and all(
                isinstance(t, gast.Expr)
                and isinstance(t.value, gast.Call)
                and scope.lookup(t.value.func) is write_list
                and t.value.args[0] is n
                for t, n in uses
            ):
                copies.add(id(s))
    return copies


def _argument_read_first(order, position, update, versions, slot, arguments, scope):
    """A dataclass argument among ``versions`` holds the caller's array in ``slot``, as do
    the versions made of it that do not set ``slot`` (``p_1 = replace(p)``): each is read
    only at the top of the function, before ``update`` (the write-back's prologue copies
    the array, ``p_2 = replace(p_1, w=p_w.copy())``, and writes the caller's at the end)."""
    holding = set(arguments)
    for s, _ in order:
        if (
            isinstance(s, gast.Assign)
            and _binds(s, versions)
            and _continued_argument(s.value, holding) is not None
            and not _sets_slot(s.value, slot, scope)
        ):
            holding.add(s.targets[0].id)
    return all(
        not loops and position[id(s)] < position[id(update)]
        for s, loops in order
        if any(_loads(n, v) for n in _own_nodes(s) for v in holding)
    )


def _slot_sources(order, versions, slot, scope, given=frozenset()):
    """The names of the arrays a version of the container may hold in ``slot``, or None
    when a version is made or used in a way not followed, or such an array is not new
    (``given``: the statements keeping an argument as given, for its write-back)."""
    names = set()
    assigned = {id(s.targets[0]) for s, _ in order if isinstance(s, gast.Assign)}
    for s, _ in order:
        if id(s) in given:
            continue
        if any(
            isinstance(n, gast.Name)
            and n.id in versions
            and isinstance(n.ctx, gast.Store)
            and id(n) not in assigned
            for n in _own_nodes(s)
        ):
            return None  # a loop's target, an unpacking: what it holds is not followed
        if not _uses_followed(s, versions, scope):
            return None
        if isinstance(s, gast.Assign) and _binds(s, versions):
            given = _given_to_slot(s.value, slot, versions, scope)
            if given is None:
                return None
            names |= given
    for n in names:
        definition = _definition(order, n)
        if definition is None or not fresh_array(definition.value, scope):
            return None
    return names


def _uses_followed(s, versions, scope):
    """``s`` reads a version of the container only as a field's or item's base, to make its
    next version, or by ``len``."""
    uses = [
        n
        for n in _own_nodes(s)
        if isinstance(n, gast.Name) and n.id in versions and isinstance(n.ctx, gast.Load)
    ]
    if not uses:
        return True
    if isinstance(s, gast.Assign) and _binds(s, versions):
        value = s.value
        if isinstance(value, gast.Name):
            return True
        if (
            isinstance(value, gast.Call)
            and scope.lookup(value.func) in _NEXT_VERSION
            and value.args[0] is uses[0]
        ):
            return len(uses) == 1
    if (
        isinstance(s, gast.Expr)
        and isinstance(s.value, gast.Call)
        and scope.lookup(s.value.func) is write_list
        and [id(u) for u in uses] == [id(a) for a in s.value.args[1:2]]
    ):
        return True  # the write-back of an argument: its last version, after every update
    followed = set()
    for n in _own_nodes(s):
        if isinstance(n, (gast.Attribute, gast.Subscript)) and isinstance(n.value, gast.Name):
            followed.add(id(n.value))
        if isinstance(n, gast.Call) and scope.lookup(n.func) is len and len(n.args) == 1:
            followed.add(id(n.args[0]))
    return all(id(u) in followed for u in uses)


def _sets_slot(value, slot, scope):
    """``replace(c, f=v)``, ``runtime.list_with(c, k, v)``: a next version setting ``slot``."""
    if not isinstance(value, gast.Call):
        return False
    obj = scope.lookup(value.func)
    if obj is dataclasses.replace:
        return any(k.arg == slot for k in value.keywords)
    return obj in _ITEM_SET and len(value.args) == 3 and _key(value.args[1]) == slot


def _continued_argument(value, arguments):
    """The argument a version is made from (``v = p``, ``v = replace(p, ...)``), or None."""
    if _name_of(value) in arguments:
        return value.id
    if isinstance(value, gast.Call) and value.args and _name_of(value.args[0]) in arguments:
        return value.args[0].id
    return None


def _given_to_slot(value, slot, versions, scope):
    """The names a version's definition ``value`` may put in ``slot`` (none when it keeps
    the previous version's), None when not known."""
    if isinstance(value, gast.Name):
        return set() if value.id in versions else None
    if isinstance(value, gast.List) and isinstance(slot[0], int):
        n = len(value.elts)
        if any(isinstance(e, gast.Starred) for e in value.elts) or not -n <= slot[0] < n:
            return None
        return _names([value.elts[slot[0]]])
    if isinstance(value, gast.Dict):
        keys = [_key(k) if k is not None else None for k in value.keys]
        return _names([v for k, v in zip(keys, value.values, strict=True) if _may_be_slot(k, slot)])
    if not isinstance(value, gast.Call) or any(k.arg is None for k in value.keywords):
        return None
    obj = scope.lookup(value.func)
    if obj is dataclasses.replace and len(value.args) == 1:
        return _names([k.value for k in value.keywords if k.arg == slot])
    if obj in (list, dict) and len(value.args) == 1 and not value.keywords:
        return set() if _name_of(value.args[0]) in versions else None  # a copy: the same items
    if obj in _ITEM_SET and len(value.args) == 3:
        return _names([value.args[2]] if _may_be_slot(_key(value.args[1]), slot) else [])
    if isinstance(slot, str) and assignable_fields(obj):
        fields = [f.name for f in dataclasses.fields(obj)]
        given = dict(zip(fields, value.args, strict=False)) | {
            k.arg: k.value for k in value.keywords
        }
        return _names([given[slot]]) if slot in given else None  # a default may be shared
    return None


def _names(values):
    """The names among ``values`` (a constant holds no array), None for another expression."""
    if any(not isinstance(v, (gast.Name, gast.Constant)) for v in values):
        return None
    return {v.id for v in values if isinstance(v, gast.Name)}


def _slot_reads(order, versions, slot):
    """The names the slot is read into (``w = p_1.w``, ``item = xs[0]``; ``xs[i]`` of an
    index not known reads any item)."""
    reads = set()
    for s, _ in order:
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            container, key = _slot_of(s.value)
            if container in versions and (
                key == slot or (not isinstance(slot, str) and _may_be_slot(key, slot))
            ):
                reads.add(s.targets[0].id)
    return reads


def _with_names_of(order, names, scope, kinds):
    """``names`` and the names bound to one of them, or to a view of one, transitively."""
    names = set(names)
    grown = True
    while grown:
        grown = False
        for s, _ in order:
            if not isinstance(s, gast.Assign) or not isinstance(s.targets[0], gast.Name):
                continue
            if s.targets[0].id not in names and (
                _name_of(s.value) in names or view_base(s.value, names, scope, kinds) is not None
            ):
                names.add(s.targets[0].id)
                grown = True
    return names


# NumPy functions whose result keeps no reference to their arguments
_CONSUMING = ("sum", "mean", "prod", "dot", "vdot", "inner", "matmul", "trace", "max", "min")


def _only_consumed(order, variable, versions, scope):
    """Whether every read of ``variable`` uses its values without keeping the array (an
    operand, an item read, a ufunc's or a reduction's argument, a copy or view bound to a
    name, which is then checked too), except the one read that makes a version of the
    container hold it. ``[a, a]`` or ``q = P(a)`` would give the array another holder."""
    kept = 0
    for s, _ in order:
        own = _own_nodes(s)
        parents = {id(c): n for n in [s, *own] for c in gast.iter_child_nodes(n)}
        for n in own:
            if not (isinstance(n, gast.Name) and n.id == variable and isinstance(n.ctx, gast.Load)):
                continue
            parent = parents.get(id(n))
            if isinstance(s, gast.Assign) and _binds(s, versions) and parent is not s:
                kept += 1
            elif not _consumes(s, n, parent, scope):
                return False
    return kept <= 1


def _consumes(s, use, parent, scope):
    if isinstance(parent, (gast.BinOp, gast.UnaryOp, gast.Compare)):
        return True
    if (
        isinstance(parent, gast.Attribute)
        and parent.attr == "copy"
        and isinstance(s, gast.Assign)
        and isinstance(s.value, gast.Call)
        and s.value.func is parent
        and not s.value.args
    ):
        return True  # a copy: a new array
    if (
        isinstance(s, gast.Assign)
        and isinstance(s.targets[0], gast.Name)
        and (parent is s or (isinstance(parent, gast.Subscript) and parent is s.value))
    ):
        return True  # bound to a name: a copy, an item or a view, followed as a holder
    if isinstance(parent, gast.Call) and use in parent.args:
        obj = scope.lookup(parent.func)
        return (
            isinstance(obj, np.ufunc)
            or obj is len
            or any(obj is getattr(np, f) for f in _CONSUMING)
        )
    return False


def _stale_read(order, position, loops_of, variable, update):
    """Whether a statement may read ``variable`` (bound once) while it still holds what it
    held before ``update`` ran: after the update with no binding between (the binding
    before the update and the read after it in the text), or in a later turn of a loop
    around the update and the read that does not bind it again."""
    definition = _definition(order, variable)
    here, loops = position[id(update)], set(loops_of[id(update)])
    bound_in = set(loops_of[id(definition)])
    for s, s_loops in order:
        if s is update or not _reads(s, variable):
            continue
        if position[id(definition)] < here < position[id(s)]:
            return True
        if (loops & set(s_loops)) - bound_in:
            return True
    return False


def _reads(s, variable):
    """Does statement ``s`` itself (not a statement nested in it) read ``variable``?"""
    return any(
        isinstance(n, gast.Name) and n.id == variable and isinstance(n.ctx, gast.Load)
        for n in _own_nodes(s)
    )


def _own_nodes(s):
    """The nodes of statement ``s`` itself, not of the statements nested in it."""
    parts = [getattr(s, f, None) for f in ("value", "test", "iter", "target", "targets", "args")]
    exprs = [e for p in parts if p is not None for e in (p if isinstance(p, list) else [p])]
    return [n for e in exprs if isinstance(e, gast.AST) for n in gast.walk(e)]


def rebuild_holders(fn, k, scope, kinds, namer):
    """``xs = [a, y]; a += v`` at the top of ``fn`` (SSA), ``a`` a new array: the containers
    built before the update that hold ``a`` itself (a list, tuple or dict literal, a
    dataclass's constructor) are built again after it from the updated value (``xs_1 =
    [a_1, y]``), and later reads read them: Python's containers hold the array the update
    changed. Returns the number of statements inserted after ``fn.body[k]``, or None when
    the update is not such a one (the array has another name, a container is used other
    than by reading its items, an item was read out into a name read after the update)."""
    update = fn.body[k]
    updated, new = update.value.left.id, update.targets[0].id
    order = [(s, ()) for s in fn.body[:k]]
    definition = _definition(order, updated)
    if definition is None or not fresh_array(definition.value, scope) or _stores(fn, updated) != 1:
        return None
    holders = []
    for s in fn.body[:k]:
        loads = [n for n in _own_nodes(s) if _loads(n, updated)]
        if not loads:
            continue
        if _holds(s, loads, scope):
            holders.append(s)
        elif not all(_consumes(s, n, _parent(s, n), scope) for n in loads):
            return None
    if not holders or not all(_followed_holder(fn, k, h, scope) for h in holders):
        return None
    items = _item_names(fn, k, holders, scope, kinds)
    if any(_read_later(fn, k, item) for item in items):
        return None
    inserted = []
    for h in holders:
        old = h.targets[0].id
        rebuilt = namer.fresh(old)
        kinds[rebuilt] = kinds.get(old, UNKNOWN)
        scope.locals.add(rebuilt)
        value = copy_tree(h.value)
        for n in gast.walk(value):
            if _loads(n, updated):
                n.id = new
        inserted.append(assign(rebuilt, value, update))
        read_instead(fn.body[k + 1 :], {old}, rebuilt)
    fn.body[k + 1 : k + 1] = inserted
    return len(inserted)


def _stores(fn, variable):
    return sum(
        isinstance(n, gast.Name) and n.id == variable and isinstance(n.ctx, gast.Store)
        for n in gast.walk(fn)
    )


def _loads(n, variable):
    return isinstance(n, gast.Name) and n.id == variable and isinstance(n.ctx, gast.Load)


def _parent(s, node):
    return next(
        (p for p in [s, *_own_nodes(s)] for c in gast.iter_child_nodes(p) if c is node), None
    )


def _holds(s, loads, scope):
    """``s`` builds a container or record holding the loaded array itself: ``xs = [a, y]``,
    ``t = (a, 1.0)``, ``d = {"k": a}``, ``p = P(a, c)`` of a plain dataclass."""
    if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)):
        return False
    value = s.value
    if isinstance(value, (gast.List, gast.Tuple)):
        direct = value.elts
    elif isinstance(value, gast.Dict):
        direct = value.values
    elif isinstance(value, gast.Call) and assignable_fields(scope.lookup(value.func)):
        direct = [*value.args, *(k.value for k in value.keywords)]
    else:
        return False
    return all(any(n is d for d in direct) for n in loads)


def _followed_holder(fn, k, holder, scope):
    """The container ``holder`` builds is bound once and only has its items or fields read
    (or ``len`` taken): before the update at ``fn.body[k]``, and after it, where it may
    also make a next version (which is built from the rebuilt one)."""
    container = holder.targets[0].id
    if _stores(fn, container) != 1:
        return False
    for j, top in enumerate(fn.body):
        for s in (n for n in gast.walk(top) if isinstance(n, gast.stmt)):
            uses = [n for n in _own_nodes(s) if _loads(n, container)]
            if not uses:
                continue
            if j > k and isinstance(s, gast.Assign) and _next_version(s.value, uses, scope):
                continue
            if not _uses_followed(s, {container}, scope) and not _given_to_numpy(s, uses, scope):
                return False
    return True


def _given_to_numpy(s, uses, scope):
    """Each use is a list's or tuple's place among a NumPy function's positional arguments
    (``np.stack(xs)``): a new array is made of its items, and nothing keeps the list."""
    for use in uses:
        call = _parent(s, use)
        if not (isinstance(call, gast.Call) and any(a is use for a in call.args)):
            return False
        module = getattr(scope.lookup(call.func), "__module__", None) or ""
        if module.partition(".")[0] != "numpy":
            return False
    return True


def _next_version(value, uses, scope):
    return (
        isinstance(value, gast.Call)
        and scope.lookup(value.func) in _NEXT_VERSION
        and len(uses) == 1
        and value.args[0] is uses[0]
    )


def _item_names(fn, k, holders, scope, kinds):
    """The names bound before the update to an item or field of a container in
    ``holders`` (each may be the updated array), with their copies and views."""
    containers = {h.targets[0].id for h in holders}
    order = [(s, ()) for s in fn.body[:k]]
    read = {
        s.targets[0].id
        for s, _ in order
        if isinstance(s, gast.Assign)
        and isinstance(s.targets[0], gast.Name)
        and _slot_of(s.value)[0] in containers
    }
    return _with_names_of(order, read, scope, kinds)


def _read_later(fn, k, variable):
    return any(_loads(n, variable) for s in fn.body[k + 1 :] for n in gast.walk(s))


def read_instead(statements, names, replacement):
    """Every read of one of ``names`` in ``statements`` reads ``replacement``."""
    for s in statements:
        for n in gast.walk(s):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id in names:
                n.id = replacement
