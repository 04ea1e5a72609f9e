"""Building gast nodes: names, assignments, positions, and what counts as an atom.

The stages build code as gast trees; these are the few constructors every stage needs.

>>> import ast, gast
>>> from tangent_ast.emit.emit import to_ast
>>> ast.unparse(to_ast(assign("y", gast.BinOp(name("x"), gast.Mult(), name("x")))))
'y = x * x'
"""

import ast
import builtins
import sys
from typing import Any

import gast

from .trees import walk


def located(new, old):
    """Give ``new`` (and its children without a position) the line of ``old``."""
    lineno = getattr(old, "lineno", None)
    for n in walk(new):
        if (
            getattr(n, "lineno", None) is None
            and hasattr(n, "_attributes")
            and "lineno" in n._attributes
        ):
            n.lineno = lineno
            n.col_offset = getattr(old, "col_offset", 0)
    return new


def name(id_, ctx=None):
    return gast.Name(id=id_, ctx=ctx or gast.Load(), annotation=None, type_comment=None)


def attribute(owner, attr):
    """``owner.attr`` of the name ``owner`` (``runtime.UNSET``)."""
    return gast.Attribute(value=name(owner), attr=attr, ctx=gast.Load())


def assign(target, value, at=None):
    node = gast.Assign(targets=[name(target, gast.Store())], value=value, type_comment=None)
    return located(node, at) if at is not None else node


def expand_statements(stmts, each):
    """``stmts`` with each statement, at any depth of ``if`` and loop bodies, replaced by the
    statements ``each`` gives for it (after its own bodies are expanded)."""
    out = []
    for s in stmts:
        for field in ("body", "orelse"):
            if isinstance(getattr(s, field, None), list):
                setattr(s, field, expand_statements(getattr(s, field), each))
        out += each(s)
    return out


def is_atom(expr, scope):
    if isinstance(expr, (gast.Name, gast.Constant)):
        return True
    if isinstance(expr, gast.Attribute) and scope.is_global_chain(expr):
        return True
    if isinstance(expr, (gast.Tuple, gast.List)):  # a constant tuple such as a shape
        return all(
            isinstance(e, gast.Constant)
            or (isinstance(e, (gast.Tuple, gast.List)) and is_atom(e, scope))
            for e in expr.elts
        )
    return False


def call_name(expr, scope):
    """``"range"``/``"enumerate"``/``"zip"``/``"reversed"`` if ``expr`` calls that builtin."""
    if (
        isinstance(expr, gast.Call)
        and isinstance(expr.func, gast.Name)
        and not scope.is_local(expr.func.id)
    ):
        obj = scope.free.get(expr.func.id)
        for candidate in ("range", "enumerate", "zip", "reversed"):
            if obj is getattr(builtins, candidate):
                return candidate
    return None


def is_docstring(s):
    return (
        isinstance(s, gast.Expr)
        and isinstance(s.value, gast.Constant)
        and isinstance(s.value.value, str)
    )


def unparse(node):
    """``ast.unparse``, the same text on every supported Python: 3.10 puts parentheses
    around every tuple (``(x, y) = saved``), 3.11+ only where they are needed."""
    if sys.version_info >= (3, 11):
        return ast.unparse(node)
    return _Unparser().visit(node)


# the unparser's own classes (not public, not typed): Python 3.10's, given 3.11's tuples
_BaseUnparser: Any = vars(ast)["_Unparser"]
_TUPLE: Any = getattr(vars(ast).get("_Precedence"), "TUPLE", None)


class _Unparser(_BaseUnparser):
    """Python 3.10's unparser, with the tuples of 3.11's: no parentheses around a tuple
    assigned to or iterated into (``x, y = saved``, ``for i, v in ...``)."""

    def visit_Tuple(self, node):
        needed = len(node.elts) == 0 or self.get_precedence(node) > _TUPLE
        with self.delimit_if("(", ")", needed):
            self.items_view(self.traverse, node.elts)

    def visit_Assign(self, node):
        for target in node.targets:
            self.set_precedence(_TUPLE, target)
        super().visit_Assign(node)

    def visit_For(self, node):
        self.set_precedence(_TUPLE, node.target)
        super().visit_For(node)

    def visit_comprehension(self, node):
        self.set_precedence(_TUPLE, node.target)
        super().visit_comprehension(node)


def stored_names(stmts):
    """The names ``stmts`` assign, at any depth."""
    return _names(stmts, gast.Store)


def loaded_names(stmts):
    """The names ``stmts`` read, at any depth."""
    return _names(stmts, gast.Load)


def replace_node(root, old, new):
    """Put ``new`` where the node ``old`` is under ``root`` (its first place)."""
    for parent in gast.walk(root):
        for field, value in gast.iter_fields(parent):
            if value is old:
                setattr(parent, field, new)
                return
            if isinstance(value, list):
                for k, item in enumerate(value):
                    if item is old:
                        value[k] = new
                        return


def read_before_assigned(stmts, assigned=frozenset()):
    """The names ``stmts`` may read before they assign them, in the order they run. What
    a loop or a branch assigns counts as assigned after it only where it is assigned on
    every path: never for a loop (it may run no iteration)."""
    assigned, read = set(assigned), set()
    for s in stmts:
        if isinstance(s, (gast.For, gast.While)):
            head = s.iter if isinstance(s, gast.For) else s.test
            read |= _names([head], gast.Load) - assigned
            inner = assigned | (
                _names([s.target], gast.Store) if isinstance(s, gast.For) else set()
            )
            read |= read_before_assigned(s.body, inner)
        elif isinstance(s, gast.If):
            read |= _names([s.test], gast.Load) - assigned
            read |= read_before_assigned(s.body, assigned) | read_before_assigned(
                s.orelse, assigned
            )
            assigned |= _assigned_at_top(s.body) & _assigned_at_top(s.orelse)
        else:
            read |= loaded_names([s]) - assigned
            assigned |= _names([s], gast.Store)
    return read


def _assigned_at_top(stmts):
    return {
        n
        for s in stmts
        if not isinstance(s, (gast.For, gast.While, gast.If))
        for n in _names([s], gast.Store)
    }


def _names(stmts, context):
    return {
        n.id
        for s in stmts
        for n in gast.walk(s)
        if isinstance(n, gast.Name) and isinstance(n.ctx, context)
    }


def written_targets(node):
    """The targets an assignment writes (``a[i]`` of ``a[i] = v``, ``x`` of ``x += v``);
    none for another node."""
    if isinstance(node, gast.Assign):
        return node.targets
    if isinstance(node, (gast.AugAssign, gast.AnnAssign)):
        return [node.target]
    return []


def updated_arrays(stmts):
    """The names ``stmts`` update by item (``a[i] = v``), at any depth."""
    return {
        t.value.id
        for s in stmts
        for n in gast.walk(s)
        if isinstance(n, gast.Assign)
        for t in n.targets
        if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name)
    }
