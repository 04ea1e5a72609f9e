"""An argument updated in place, then rebound: the names from the rebinding on are new.

Takes the parsed function and the signature's kind of each parameter; guarantees that an
array or list argument updated in place (``x[0] = v``, ``x *= 2.0`` on an array,
``xs.append(v)``) and then rebound by a statement at the top of the function
(``x = x * 2.0``) is two values: the argument, which the updates before the rebinding
change and the derived rule leaves in the caller's array as the function does, and a new
local value, named apart (``x_1``) from the rebinding on. Only a rebinding after every
in-place update of the argument, with none before it, is followed; the others are refused
later (:mod:`tangent_ast.front.aliasing`), as before.

>>> import numpy as np, tangent_ast as ta
>>> def f(x):
...     x[0] = x[1] * 3.0
...     x = x * 2.0
...     return np.sum(x * x)
>>> x = np.array([1.0, 2.0])
>>> ta.grad(f)(x), x
(array([  0., 160.]), array([6., 2.]))
"""

from dataclasses import replace

import gast

from ..vocabulary.kinds import Tag
from ..vocabulary.syntax import written_targets
from ..vocabulary.trees import copy_tree, walk

# methods that change a list or an array in place
_CHANGING = {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "fill"}


def rename_rebound_arguments(parsed, scope, namer, param_kinds):
    """``parsed`` with each argument rebound after its in-place updates renamed from the
    rebinding on (see the module docstring), or ``parsed`` itself. ``x = x`` of an argument
    binds nothing new (an update after it changes the caller's array): it is dropped."""
    parsed = _without_self_assignments(parsed)
    node = parsed.node
    new = None
    for param in [a.id for a in node.args.args]:
        kind = param_kinds.get(param)
        if kind is None or kind.tag not in (Tag.ARRAY, Tag.LIST):
            continue
        body = (new or node).body
        k = _rebinding(body, param)
        if k is None or not any(_updates(s, param) for s in body[:k]):
            continue
        if new is None:
            new = copy_tree(node)
            body = new.body
        fresh = namer.fresh(param)
        scope.locals.add(fresh)
        for target in body[k].targets:
            for n in walk(target):
                if isinstance(n, gast.Name) and n.id == param:
                    n.id = fresh
        for s in body[k + 1 :]:
            for n in walk(s):
                if isinstance(n, gast.Name) and n.id == param:
                    n.id = fresh
    return parsed if new is None else replace(parsed, node=new)


def _without_self_assignments(parsed):
    """``parsed`` without the statements ``x = x`` of a parameter ``x``, at any depth."""
    params = {a.id for a in parsed.node.args.args}

    def is_self_assignment(s):
        return (
            isinstance(s, gast.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name)
            and isinstance(s.value, gast.Name)
            and s.targets[0].id == s.value.id
            and s.value.id in params
        )

    if not any(is_self_assignment(n) for n in walk(parsed.node)):
        return parsed
    node = copy_tree(parsed.node)
    for n in walk(node):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(n, field, None)
            if isinstance(block, list) and any(is_self_assignment(s) for s in block):
                kept = [s for s in block if not is_self_assignment(s)]
                setattr(n, field, kept or [gast.Pass()])
    return replace(parsed, node=node)


def _rebinding(body, param):
    """The position of the first statement at the top of ``body`` that binds ``param``
    (``param = ...``), if no statement before binds it at any depth; else None."""
    for k, s in enumerate(body):
        # ``x += v`` on an array or a list argument updates it in place: not a binding
        augmented = {id(n.target) for n in walk(s) if isinstance(n, gast.AugAssign)}
        stores = [
            n
            for n in walk(s)
            if isinstance(n, gast.Name)
            and n.id == param
            and isinstance(n.ctx, gast.Store)
            and id(n) not in augmented
        ]
        if not stores:
            continue
        plain = (
            isinstance(s, gast.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name)
            and s.targets[0].id == param
        )
        return k if plain else None
    return None


def _updates(stmt, param):
    """Whether ``stmt`` changes the argument ``param`` in place (at any depth)."""
    for n in walk(stmt):
        for t in written_targets(n):
            if (
                isinstance(t, gast.Subscript)
                and isinstance(t.value, gast.Name)
                and t.value.id == param
            ):
                return True
            if isinstance(t, gast.Name) and t.id == param and isinstance(n, gast.AugAssign):
                return True  # x += v on an array or a list argument: in place
        if (
            isinstance(n, gast.Call)
            and isinstance(n.func, gast.Attribute)
            and isinstance(n.func.value, gast.Name)
            and n.func.value.id == param
            and n.func.attr in _CHANGING
        ):
            return True
        if isinstance(n, gast.Call) and any(
            k.arg == "out" and isinstance(k.value, gast.Name) and k.value.id == param
            for k in n.keywords
        ):
            return True
    return False
