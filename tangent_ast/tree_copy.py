"""``copy.deepcopy`` of a syntax tree, made without ``deepcopy``'s general machinery.

Every stage copies trees: the parsed function before normalizing it, the normalized one
before SSA, each rule template where it is applied. ``copy.deepcopy`` asks each node how it
is copied (``__deepcopy__``, ``copyreg``, ``__reduce_ex__``) and copies its ``__dict__`` as
a dict: most of the time of a copy. ``copy_tree`` makes the same copy: each node made by
calling its class with no arguments and given copies of the values it holds, a node or a
list the tree holds twice copied once (the copy holds its copy twice), numbers and strings
shared; any other value (a tuple, a set) is copied by ``copy.deepcopy`` itself.

>>> import gast
>>> tree = gast.parse("y = f(x) + x")
>>> twin = copy_tree(tree)
>>> gast.dump(twin) == gast.dump(tree), twin.body[0] is tree.body[0]
(True, False)
"""

import ast
import copy

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
    if isinstance(value, ast.AST):
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
    return copy.deepcopy(value, memo)
