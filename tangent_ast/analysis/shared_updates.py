"""``a += b`` on an array with a second name or on a view: written as the update it is, or
refused.

On a NumPy array ``a += b`` changes the array in place, so every name for it sees the new
values; the stages read ``a = a + b``, a new value, which is only right while ``a`` is the
array's one name. Runs on the SSA function with kinds known: ``follow_shared_updates``
takes the augmented assignments (``(line, column, name)``) the lowering recorded and
guarantees, for each one at the top of the function that it can follow:

* a second name (``al = a; al += 1.0``): every later read of either name reads the new
  value;
* a view (``v = a[1:]; v *= 2.0``): the base gets the new values in that part
  (``a_1 = a * 1.0; a_1[1:] = v_1``), and every later read of the base reads ``a_1``.

* an array a container or record holds (``xs = [a, y]; a += 1.0``): the container is built
  again from the new value (:func:`~tangent_ast.analysis.held_updates.rebuild_holders`).

The update is then dropped from ``augmented``. It is left to the refusal,
``check_augmented``, when the array is an argument (the caller's array would change), sits
in a container, has another view read later, is updated in place later, or the update is
inside a loop or branch; it refuses ``a += b`` on an array that has a second name, is a
view, sits in a container or is an object's field, or whose view is read later. (Array
arguments updated this way are in-place updates, which :mod:`tangent_ast.front.aliasing` checks
before normalization.)

>>> import numpy as np, tangent_ast as ta
>>> def f(x):
...     a = x * 2.0
...     tail = a[1:]
...     tail *= 3.0
...     return np.sum(a * a)
>>> print(ta.show(f, mode="forward", stage="simplify", args=(np.ones(3),)))
def f_jvp(x, dx):
    a = x * 2.0
    da = dx * 2.0
    tail = a[1:]
    dtail = da[1:]
    tail_1 = tail * 3.0
    dtail_1 = dtail * 3.0
    a_1 = a * 1.0
    da_1 = da * 1.0
    a_1[1:] = tail_1
    da_1[1:] = dtail_1
    out = np.sum(a_1 * a_1)
    dout = np.sum(2 * da_1 * a_1)
    return (out, dout)
<BLANKLINE>
>>> ta.grad(f)(np.ones(3))
array([ 8., 72., 72.])
>>> def g(x):
...     y = x * 2.0
...     pair = [y, x]
...     first = pair[0]
...     y += 1.0
...     return np.sum(first)
>>> ta.grad(g)(np.ones(2))
Traceback (most recent call last):
...
tangent_ast.errors.UnsupportedSyntaxError: <doctest ...>:5: an augmented assignment to the
array 'y', which Python does in place, while it is also held in a tuple, list or dict (one
that is read other than by item, sits in another, or whose item read out before is read
after; or the update is in a loop or branch) is not supported
  hint: write y = y <op> ... for a new array, or keep one name for it
"""

import gast
import numpy as np

from ..front.checks import unsupported
from ..front.new_arrays import fresh_array, may_return_what_it_is_given
from ..vocabulary.kinds import UNKNOWN, Kind, Tag
from ..vocabulary.syntax import located, name
from ..vocabulary.trees import copy_tree, walk
from .held_updates import private_slot_update, read_instead, rebuild_holders
from .indexing import Indexing, indexing
from .views import VIEW_ATTRIBUTES, may_precede, program_order, view_base, views_read_after


def follow_shared_updates(fn, origin, kinds, scope, augmented, namer):
    """Rewrite the augmented assignments of ``fn`` (SSA) on shared arrays that can be
    followed, and drop them from ``augmented`` (see the module docstring)."""
    k = 0
    while k < len(fn.body):
        s = fn.body[k]
        key = _augmented_key(s, origin)
        if key in augmented and _is_array(kinds, s.value.left.id):
            inserted = _follow(fn, k, s, kinds, scope, namer)
            if inserted is None:  # xs = [a, y]; a += v: xs built again from the new a
                inserted = rebuild_holders(fn, k, scope, kinds, namer)
            if inserted is not None:
                augmented.discard(key)
                k += inserted
        k += 1


def _augmented_key(s, origin):
    if not (
        isinstance(s, gast.Assign)
        and isinstance(s.targets[0], gast.Name)
        and isinstance(s.value, gast.BinOp)
        and isinstance(s.value.left, gast.Name)
    ):
        return None
    target = s.targets[0].id
    return (getattr(s, "lineno", None), getattr(s, "col_offset", None), origin.get(target, target))


def _is_array(kinds, variable):
    kind = kinds.get(variable)
    return kind is not None and kind.tag is Tag.ARRAY


def _follow(fn, k, s, kinds, scope, namer):
    """Rewrite the update ``s = fn.body[k]``; the number of statements inserted after it,
    or None when it is left alone (to the refusal)."""
    before, after = fn.body[:k], fn.body[k + 1 :]
    updated, new = s.value.left.id, s.targets[0].id
    definitions = {d.targets[0].id: d for d in before if _plain_assign(d)}
    names = _copies_of(updated, before)
    if not _defined_once_at_top(fn, names, definitions):
        return None
    made = [v for v in names if not isinstance(definitions[v].value, gast.Name)]
    if len(made) != 1:
        return None
    value = definitions[made[0]].value
    if fresh_array(value, scope) and names != {updated}:  # a second name: reads read the new value
        if _shared(fn, names, scope, kinds, k):
            return None
        read_instead(after, names, new)
        return 0
    if names != {updated} or not isinstance(value, gast.Subscript):
        return None  # a copy of a view, a view by a method, or an array of unknown origin
    base = value.value.id  # a view of a part of ``base``: the base gets the new part
    base_names = _copies_of(base, before)
    made_base = [
        v
        for v in base_names
        if v in definitions and not isinstance(definitions[v].value, gast.Name)
    ]
    if (
        not _is_array(kinds, base)
        or not _defined_once_at_top(fn, base_names, definitions)
        or len(made_base) != 1
        or not fresh_array(definitions[made_base[0]].value, scope)
        or _shared(fn, base_names, scope, kinds, k, view=updated)
        or indexing(value.slice, kinds[base].ndim, kinds.get) is not Indexing.VIEW
    ):
        return None
    base_new = namer.fresh(base)
    kinds[base_new] = kinds[base]
    scope.locals.add(base_new)
    copied = gast.BinOp(left=name(base), op=gast.Mult(), right=gast.Constant(1.0, None))
    part = gast.Subscript(value=name(base_new), slice=copy_tree(value.slice), ctx=gast.Store())
    inserted = [
        located(
            gast.Assign(targets=[name(base_new, gast.Store())], value=copied, type_comment=None),
            s,
        ),
        located(gast.Assign(targets=[part], value=name(new), type_comment=None), s),
    ]
    read_instead(after, base_names, base_new)
    fn.body[k + 1 : k + 1] = inserted
    return len(inserted)


def _plain_assign(s):
    return isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)


def _copies_of(variable, statements):
    """``variable`` and the names joined to it by plain copies (``b = a``) in ``statements``."""
    copies = [
        (s.targets[0].id, s.value.id)
        for s in statements
        if _plain_assign(s) and isinstance(s.value, gast.Name)
    ]
    same = {variable}
    while True:
        more = {a for a, b in copies if b in same} | {b for a, b in copies if a in same}
        if more <= same:
            return same
        same |= more


def _defined_once_at_top(fn, names, definitions):
    """Each of ``names`` is assigned exactly once in ``fn``, by a statement at its top (not
    in a loop or branch), before the update: not a parameter, not a join of paths."""
    stores = {}
    for n in walk(fn):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and n.id in names:
            stores[n.id] = stores.get(n.id, 0) + 1
    return all(v in definitions and stores.get(v) == 1 for v in names)


def _shared(fn, names, scope, kinds, k, view=None):
    """Whether the array named ``names`` is reachable in a way the rewrite cannot follow:
    updated in place, or held in a container or viewed by another name than ``view``
    before the update at ``fn.body[k]`` (one made after it holds the new value)."""
    before = {id(n) for s in fn.body[:k] for n in walk(s)}
    for n in walk(fn):
        if (
            id(n) in before
            and isinstance(n, (gast.Tuple, gast.List, gast.Dict))
            and any(
                isinstance(e, gast.Name) and e.id in names
                for e in (n.values if isinstance(n, gast.Dict) else n.elts)
            )
        ):
            return True
        if not isinstance(n, gast.Assign):
            continue
        target = n.targets[0]
        if isinstance(target, gast.Subscript) and getattr(target.value, "id", None) in names:
            return True
        if (
            id(n) in before
            and isinstance(target, gast.Name)
            and target.id != view
            and view_base(n.value, names, scope, kinds) is not None
        ):
            return True
    return False


def follow_argument_aliases(node, param_kinds):
    """``al = x; al += 1.0`` and ``v = x[1:]; v *= 2.0`` on an array argument ``x`` (the
    signature says it is one), at the top of the function: the update is written on ``x``
    itself (``x += 1.0``, ``x[1:] *= 2.0; v = x[1:]``), an in-place update of an argument,
    which the derived rule leaves in the caller's array as the function does. Only a view
    is followed: ``s = x[2]`` of a vector is a new scalar, and ``s += 1.0`` leaves ``x``
    alone (:mod:`tangent_ast.analysis.indexing`). ``param_kinds``: the signature's kind of each
    parameter (None: no signature). Returns the rewritten function (a copy), or ``node``
    when there is nothing to rewrite."""
    # only a name updated by ``+=`` (...) at the top of the function is followed (the names
    # of those updates, kept as rewrites change them: a name not among them has none later)
    augmented = {
        t.target.id
        for t in node.body
        if isinstance(t, gast.AugAssign) and isinstance(t.target, gast.Name)
    }
    array_params = {p for p, k in (param_kinds or {}).items() if k.tag is Tag.ARRAY}
    if not array_params or not augmented:
        return node
    new = copy_tree(node)
    stores = _plain_stores(new)
    kind_of = _known_ints(new, param_kinds, stores)
    changed = False
    for s in list(new.body):
        if not (
            isinstance(s, gast.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name)
            and stores.get(s.targets[0].id) == 1
            and s.targets[0].id in augmented
        ):
            continue
        k = next(i for i, t in enumerate(new.body) if t is s)
        alias, value = s.targets[0].id, s.value
        later = new.body[k + 1 :]
        if not any(_augments(t, alias) for t in later):
            continue
        if isinstance(value, gast.Name) and value.id in array_params and value.id not in stores:
            _rename(later, alias, value.id)  # one array, one name: the argument's
            new.body[k] = located(gast.Pass(), s)
            changed = True
        elif (
            isinstance(value, gast.Subscript)
            and isinstance(value.value, gast.Name)
            and value.value.id in array_params
            and value.value.id not in stores
            and indexing(value.slice, param_kinds[value.value.id].ndim, kind_of) is Indexing.VIEW
        ):
            body = new.body[: k + 1]
            for t in later:
                body.append(t)
                if _augments(t, alias):  # v *= 2.0 -> x[1:] *= 2.0; v = x[1:]
                    part = copy_tree(value)
                    part.ctx = gast.Store()
                    t.target = part
                    again = gast.Assign(
                        targets=[name(alias, gast.Store())],
                        value=copy_tree(value),
                        type_comment=None,
                    )
                    body.append(located(again, t))
            new.body = body
            changed = True
    return new if changed else node


def _known_ints(node, param_kinds, stores):
    """The kinds of a function's names known before kind inference: its parameters' (from
    the signature) and ints bound once, at the top, by an int literal (``i = 1``)."""
    augmented = {
        n.target.id
        for n in walk(node)
        if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name)
    }
    known = {p: k for p, k in param_kinds.items() if p not in stores and p not in augmented}
    for s in node.body:
        if (
            isinstance(s, gast.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name)
            and stores.get(s.targets[0].id) == 1
            and s.targets[0].id not in augmented
            and isinstance(s.value, gast.Constant)
            and type(s.value.value) is int
        ):
            known[s.targets[0].id] = Kind(Tag.INT)
    return known.get


def _plain_stores(node):
    """How many times each name is assigned by ``=`` (a function parameter is not)."""
    stores = {}
    for n in walk(node):
        if isinstance(n, gast.Assign):
            for t in n.targets:
                for m in gast.walk(t):
                    if isinstance(m, gast.Name) and isinstance(m.ctx, gast.Store):
                        stores[m.id] = stores.get(m.id, 0) + 1
        elif isinstance(n, (gast.For, gast.NamedExpr)):
            for m in gast.walk(n.target):
                if isinstance(m, gast.Name):
                    stores[m.id] = stores.get(m.id, 0) + 2
    return stores


def _augments(statement, variable):
    return (
        isinstance(statement, gast.AugAssign)
        and isinstance(statement.target, gast.Name)
        and statement.target.id == variable
    )


def _rename(statements, old, new):
    for s in statements:
        for n in gast.walk(s):
            if isinstance(n, gast.Name) and n.id == old:
                n.id = new


def check_augmented(parsed, fn, origin, kinds, scope, augmented):
    """Refuse ``a += b`` on an array that has a second name, is a view or sits in a container.

    On a NumPy array ``a += b`` updates ``a`` in place, and every other reference
    sees the change; the stages treat it as ``a = a + b``, a new value, which is the
    same only while ``a`` is the one reference to its array. Runs on the SSA function
    (``origin``: SSA name -> user name); array arguments updated this way are
    in-place updates (aliasing.check_updates) and not seen here."""
    order = program_order(fn.body)
    position = {id(s): i for i, (s, _) in enumerate(order)}
    assigns = [
        (n, loops)
        for n, loops in order
        if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name)
    ]
    copies = [(n.targets[0].id, n.value.id) for n, _ in assigns if isinstance(n.value, gast.Name)]
    for n, loops in assigns:
        if (
            (
                getattr(n, "lineno", None),
                getattr(n, "col_offset", None),
                origin.get(n.targets[0].id, n.targets[0].id),
            )
            not in augmented
            or not isinstance(n.value, gast.BinOp)
            or not isinstance(n.value.left, gast.Name)
            or kinds.get(n.value.left.id) is None
            or kinds[n.value.left.id].tag not in (Tag.ARRAY, Tag.LIST, Tag.UNKNOWN)
        ):
            continue  # (a value of unknown kind may be an array: checked like one)
        same = {n.value.left.id}  # names of the array being updated: joined by copies
        while True:
            more = {a for a, b in copies if b in same} | {b for a, b in copies if a in same}
            if more <= same:
                break
            same |= more
        user = origin.get(n.targets[0].id, n.targets[0].id)
        before = [d for d, d_loops in assigns if may_precede(position, d, d_loops, n, loops)]
        params = {a.id for a in fn.args.args}  # y = x; y += 1 updates the caller's x too
        others = sorted(
            (
                {
                    origin.get(d.targets[0].id, d.targets[0].id)
                    for d in before
                    if (isinstance(d.value, gast.Name) and d.value.id in same)
                    or d.targets[0].id in same
                }
                | {origin.get(p, p) for p in same & params}
            )
            - {user}
        )
        views = [
            d for d in before if d.targets[0].id in same and view_base(d.value, None, scope, kinds)
        ]
        held = [
            d
            for d in before
            if isinstance(d.value, (gast.Tuple, gast.List, gast.Dict))
            and any(
                isinstance(e, gast.Name) and e.id in same
                for e in (d.value.values if isinstance(d.value, gast.Dict) else d.value.elts)
            )
        ]
        viewed = views_read_after(n, loops, same, assigns, order, position, scope, kinds)
        # v = p.w: the array is also p's field (a record's, an object's), which sees the update
        fields = [
            d.value
            for d in before
            if d.targets[0].id in same
            and isinstance(d.value, gast.Attribute)
            and isinstance(d.value.value, gast.Name)
            and d.value.attr not in VIEW_ATTRIBUTES
        ]
        # d_item = d[k]; d_item += v (d[k] += v on a dict or list of this function): the
        # array is the container's item, which any other name of it shares
        items = [
            origin.get(v.value.value.id, v.value.value.id)
            for v in views
            if isinstance(v.value, gast.Subscript)
            and isinstance(v.value.value, gast.Name)
            and kinds.get(v.value.value.id, UNKNOWN).tag in (Tag.LIST, Tag.DICT)
        ]
        blame: list[str] = []
        if (
            (items or fields)
            and not others
            and private_slot_update(fn, n, origin, kinds, scope, order, position, blame)
        ):
            continue  # p.w += v of a local record no other name of whose array is read later
        if blame:
            holder = origin.get(blame[0], blame[0])
            slot = (
                f"{origin.get(fields[0].value.id, fields[0].value.id)}.{fields[0].attr}"
                if fields
                else f"{items[0]}[...]"
            )
            raise unsupported(
                parsed,
                n,
                f"an augmented assignment to {slot}, an array Python updates in place, while "
                f"{holder!r} holds that array too and is read after the update (or kept)",
                f"take a copy where {holder!r} is made ({holder} = ....copy()), or write "
                f"the update as a new value: ... = ... <op> v",
            )
        if items and not others and not fields:
            raise unsupported(
                parsed,
                n,
                f"an augmented assignment to an item of {items[0]!r} that may be an array "
                "(Python adds into that array in place, and any other name of it sees the "
                "change)",
                f"write {items[0]}[key] = {items[0]}[key] <op> ..., a new value",
            )
        # the argument's own array, reached through a copy of its name that the in-place
        # checks of arguments did not follow: the caller's array would change
        own_argument = user in {origin.get(p, p) for p in same & params}
        # y = helper(x): the helper may have returned x itself, or a view of it
        returned = [
            d.value
            for d in before
            if d.targets[0].id in same
            and may_return_what_it_is_given(d.value, scope, _receiver_class(d.value, kinds))
        ]
        why = (
            f"it is also named {others[0]!r}"
            if others
            else f"it is the argument {user!r} itself, the caller's array"
            if own_argument
            else f"it is what {_called(returned[0])} returned, which may be an array it was "
            "given, or a view of one"
            if returned
            else f"it is also {origin.get(fields[0].value.id, fields[0].value.id)}.{fields[0].attr}"
            if fields
            else _view_reason(views[0].value, scope, kinds)
            if views
            else "it is also held in a tuple, list or dict (one that is read other than by "
            "item, sits in another, or whose item read out before is read after; or the "
            "update is in a loop or branch)"
            if held
            else f"{origin.get(viewed, viewed)!r}, a view of it, is read later"
            if viewed
            else None
        )
        if why:
            unknown = "may be a view" in why
            what = "list" if kinds[n.value.left.id].tag is Tag.LIST else "array"
            raise unsupported(
                parsed,
                n,
                f"an augmented assignment to the {what} {user!r}, which Python "
                f"does in place, while {why}",
                f"derive with example arguments (args=...) so that the kinds are known, or "
                f"write {user} = {user} <op> ..."
                if unknown
                else f"write {user} = {user} <op> ... for a new {what}, or keep one name for it",
            )


def _receiver_class(call, kinds):
    """The class of the value whose method ``call`` calls (``p.get_w()``: ``p``'s) where the
    kinds know it is not an array; else ``np.ndarray`` (an array's methods are NumPy's,
    whose views view_base finds; a value of unknown kind is checked as an array)."""
    func = call.func if isinstance(call, gast.Call) else None
    if not (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name)):
        return None
    kind = kinds.get(func.value.id, UNKNOWN)
    return kind.cls if kind.tag in (Tag.RECORD, Tag.OBJECT, Tag.DICT, Tag.LIST) else np.ndarray


def _called(call):
    """``f(...)`` for a call of ``f``, as the user wrote its name."""
    func = call.func
    return f"{func.id if isinstance(func, gast.Name) else getattr(func, 'attr', 'a call')}(...)"


def _view_reason(value, scope, kinds):
    """Why ``value`` counts as a view: it is one, or, for an index of an array whose number
    of axes is not known, it may be one (``w[2]`` is an element of a vector, a row of a
    matrix)."""
    base = view_base(value, None, scope, kinds)
    if (
        isinstance(value, gast.Subscript)
        and indexing(value.slice, getattr(kinds.get(base), "ndim", None), kinds.get)
        is Indexing.UNKNOWN
    ):
        return (
            f"it may be a view of {base!r} (an element or a view, by NumPy's rules, "
            "depending on kinds not known here)"
        )
    return f"it is a view of {base!r}"
