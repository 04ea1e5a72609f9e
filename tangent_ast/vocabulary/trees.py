"""Syntax trees copied, walked, dumped and rewritten: what ``copy.deepcopy``,
``gast.walk``, ``gast.dump`` and ``gast.NodeTransformer`` do, faster.

Every stage copies trees (the parsed function before normalizing it, the normalized one
before SSA, each rule template where it is applied) and walks whole functions, many times
over. ``copy.deepcopy`` asks each node how it is copied (``__deepcopy__``, ``copyreg``,
``__reduce_ex__``) and copies its ``__dict__`` as a dict; ``gast.walk`` is a generator
that makes another generator per node for its children. Those costs, not the work, were
most of the time of both.

``copy_tree`` makes the copy ``copy.deepcopy`` makes: each node made by calling its class
with no arguments and given copies of the values it holds, a node or a list the tree holds
twice copied once (the copy holds its copy twice), numbers and strings shared; any other
value (a tuple, a set) copied by ``copy.deepcopy`` itself. ``walk`` lists the nodes
``gast.walk`` yields, in its order (for gast and ``ast`` trees alike).

>>> import gast
>>> tree = gast.parse("y = f(x) + x")
>>> twin = copy_tree(tree)
>>> gast.dump(twin) == gast.dump(tree), twin.body[0] is tree.body[0]
(True, False)
>>> [type(n).__name__ for n in walk(tree.body[0].value)] == [
...     type(n).__name__ for n in gast.walk(tree.body[0].value)]
True
"""

import ast

_AST = ast.AST  # gast's nodes are ast.AST too
# values deepcopy returns as they are, without recording them in its memo
_ATOMIC = frozenset({type(None), bool, int, float, complex, str, bytes})
_NOTHING = object()


def copy_tree(tree):
    """``copy.deepcopy(tree)`` for a gast (or ast) tree, or a list of them."""
    return _copy(tree, {})


def _copy(value, memo):
    cls = type(value)
    if cls in _ATOMIC:
        return value
    known = memo.get(id(value), _NOTHING)
    if known is not _NOTHING:
        return known
    if isinstance(value, _AST):
        # what deepcopy does with a node (ast.AST.__reduce__: its class, no arguments, its
        # __dict__): the class called, recorded, then its state copied into it
        new = cls()
        memo[id(value)] = new
        new.__dict__.update({k: _copy(v, memo) for k, v in value.__dict__.items()})
        return new
    if cls is list:
        new = []
        memo[id(value)] = new
        new.extend(_copy(v, memo) for v in value)
        return new
    import copy  # for values other than nodes and lists only: not on a cache hit's path

    return copy.deepcopy(value, memo)


def walk(tree):
    """Every node of ``tree``, in ``gast.walk``'s order (breadth first, each node's fields
    in order), as a list: read it, do not rewrite the tree while reading it."""
    out = [tree]
    append, extend = out.append, out.extend
    for node in out:  # the list grows as it is read: each node's children join its end
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                extend([v for v in value if isinstance(v, _AST)])
            elif isinstance(value, _AST):
                append(value)
    return out


def dump(node):
    """``gast.dump(node)``, the same text: its options at their defaults (fields named,
    positions left out, on one line), without the branches for the others."""
    if isinstance(node, _AST):
        cls = type(node)
        args = []
        for name in node._fields:
            try:
                value = getattr(node, name)
            except AttributeError:
                continue
            if (value is None and getattr(cls, name, 42) is None) or value == []:
                continue
            args.append(f"{name}={dump(value)}")
        return f"{cls.__name__}({', '.join(args)})"
    if isinstance(node, list):
        return "[" + ", ".join(dump(x) for x in node) + "]"
    return repr(node)


def same(a, b):
    """``dump(a) == dump(b)``, without writing either out: the same classes, the same
    values (a float or complex number to the bit, as its repr: ``-0.0`` is not ``0.0``), a
    field that is missing, None or ``[]`` alike. Half the time of the two dumps.

    >>> same(ast.parse("y = x ** -2"), ast.parse("y = x ** (-2)"))
    True
    >>> same(ast.Constant(0.0), ast.Constant(-0.0)), same(ast.Constant(1), ast.Constant(1.0))
    (False, False)
    """
    pending = [(a, b)]
    pop, push, extend = pending.pop, pending.append, pending.extend
    while pending:
        x, y = pop()
        cls = type(x)
        if cls is not type(y):
            if (x is None or x == []) and (y is None or y == []):
                continue
            return False
        if cls is list:
            if len(x) != len(y):
                return False
            extend(zip(x, y))
        elif isinstance(x, _AST):
            for field in x._fields:
                push((getattr(x, field, None), getattr(y, field, None)))
        elif cls is float or cls is complex:
            if repr(x) != repr(y):
                return False
        elif x != y:
            return False
    return True


class Transformer(ast.NodeTransformer):
    """``gast.NodeTransformer`` (which is ``ast``'s), its ``generic_visit`` reading each
    field as ``ast.iter_fields`` would but without its generator: the same visits, in the
    same order, a quarter faster (stages rewrite expressions through transformers)."""

    def generic_visit(self, node):
        for field in node._fields:
            try:
                old_value = getattr(node, field)
            except AttributeError:
                continue
            if isinstance(old_value, list):
                new_values = []
                for value in old_value:
                    if isinstance(value, _AST):
                        value = self.visit(value)
                        if value is None:
                            continue
                        if not isinstance(value, _AST):
                            new_values.extend(value)
                            continue
                    new_values.append(value)
                old_value[:] = new_values
            elif isinstance(old_value, _AST):
                new_node = self.visit(old_value)
                if new_node is None:
                    delattr(node, field)
                else:
                    setattr(node, field, new_node)
        return node


def unshare(tree, kept=()):
    """Give each node of ``tree`` one place, in place: a node met again is replaced there
    by a copy of itself, except the ``kept`` classes (statements, whose identity stages
    hold on to, and contexts and operators, which hold nothing). A rewrite of a name in
    one statement (``n.id = b``) must not rewrite another statement holding the node."""
    seen = set()
    pending = [tree]
    while pending:
        node = pending.pop()
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                for i, item in enumerate(value):
                    if isinstance(item, _AST):
                        value[i] = item = _owned(item, seen, kept, pending)
            elif isinstance(value, _AST):
                setattr(node, field, _owned(value, seen, kept, pending))


def _owned(node, seen, kept, pending):
    """``node``, or a copy of it where it was met before; what is new is walked later."""
    if id(node) in seen:
        if isinstance(node, kept):
            return node
        node = copy_tree(node)
    seen.add(id(node))
    pending.append(node)
    return node


def twins_by_id(by_id, original, copied, node_type=object):
    """``by_id`` (keyed by ids of nodes of ``original``) keyed by the ids of their twins in
    ``copied``, a deep copy of ``original`` (or ``original`` itself); the nodes are found
    among those of ``node_type``, in the same order in both trees. SSA renames in place and
    keeps statements and loops, so a node noted before it is found after by its twin."""
    if copied is original or not by_id:
        return dict(by_id)

    def nodes(tree):
        return [n for n in walk(tree) if isinstance(n, node_type)]

    return {
        id(twin): by_id[id(node)]
        for node, twin in zip(nodes(original), nodes(copied), strict=True)
        if id(node) in by_id
    }
