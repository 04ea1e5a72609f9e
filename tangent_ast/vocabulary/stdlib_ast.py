"""gast trees as the standard library's ``ast`` trees, to print them: ``gast.gast_to_ast``, faster.

Generated code is printed with ``ast.unparse``, whole functions by ``emit`` and single
statements many times over (simplify and the reverse stage weigh a line's length before
writing it). gast's converter is a ``NodeTransformer`` that calls a method per node and
builds each node from a dict of its fields: most of the time of printing a statement.

``as_ast`` makes the tree ``gast.gast_to_ast`` makes. A node gast converts field for field
(its converter's ``generic_visit``: an expression, an operator, most statements) is
converted here the same way, by one function; a ``Name`` or an ``Assign`` as gast's own
methods do; a function or class definition by gast but for its body; any other node
(arguments, handlers, whose conversion depends on the Python version) by gast itself.

>>> import ast, gast
>>> tree = gast.parse("y[1:] = np.sin(x) * -2.0 if x > 0 else f(*a, k=1)")
>>> ast.dump(as_ast(tree), include_attributes=True) == ast.dump(
...     gast.gast_to_ast(tree), include_attributes=True)
True
"""

import ast
import copy

import gast


def _field_for_field(converter_name):
    """gast class -> ast class, for the classes gast's converter (``GAstToAst3`` or
    ``Ast3ToGAst``) converts field for field (those it has no method of its own for, on
    this Python)."""
    converter = getattr(getattr(gast, "ast3", None), converter_name, None)
    if converter is None:  # another gast: leave every node to it
        return {}
    generic = (ast.NodeTransformer, ast.NodeVisitor, object)
    own = {
        attr[len("visit_") :]
        for cls in converter.__mro__
        if cls not in generic
        for attr in vars(cls)
        if attr.startswith("visit_")
    }
    classes = {}
    for name in dir(gast):
        cls = getattr(gast, name)
        if (
            isinstance(cls, type)
            and issubclass(cls, gast.AST)
            and cls.__module__ == gast.gast.__name__
            and name not in own
            and isinstance(getattr(ast, name, None), type)
        ):
            classes[cls] = getattr(ast, name)
    return classes


_FIELD_FOR_FIELD = _field_for_field("GAstToAst3")
_FROM_AST = {a: g for g, a in _field_for_field("Ast3ToGAst").items()}  # ast class -> gast
_MISSING = object()


def as_ast(node):
    """``gast.gast_to_ast(node)``: the same tree, node for node, positions included."""
    cls = type(node)
    target = _FIELD_FOR_FIELD.get(cls)
    if target is not None:
        return _converted(node, target, as_ast)
    if cls is gast.Name:
        return ast.copy_location(ast.Name(node.id, as_ast(node.ctx)), node)
    if cls is gast.Assign:
        return ast.copy_location(ast.Assign(_value(node.targets), _value(node.value)), node)
    if cls.__name__ in _DEFINITIONS:
        return _body_apart(node, as_ast, gast.gast_to_ast)
    return gast.gast_to_ast(node)


def as_gast(node):
    """``gast.ast_to_gast(node)``: the same tree, node for node, positions included (a rule
    table's lambdas are converted as they are first used)."""
    cls = type(node)
    target = _FROM_AST.get(cls)
    if target is not None:
        return _converted(node, target, as_gast)
    if cls is ast.Name:
        return ast.copy_location(gast.Name(node.id, as_gast(node.ctx), None, None), node)
    if cls.__name__ in _DEFINITIONS:
        return _body_apart(node, as_gast, gast.ast_to_gast)
    return gast.ast_to_gast(node)


_DEFINITIONS = ("FunctionDef", "AsyncFunctionDef", "ClassDef")  # converted by gast's methods


def _body_apart(node, convert, by_gast):
    """``by_gast(node)``, its body converted by ``convert``: gast converts a definition by a
    method of its own, and its body statement by statement, as ``convert`` does (the body
    is most of a function parsed, or printed by emit)."""
    bare = copy.copy(node)
    bare.body = []
    new = by_gast(bare)
    new.body = _value(node.body, convert)
    return new


def parse_gast(source):
    """``gast.parse(source)``: parsed by ``ast``, converted by :func:`as_gast`."""
    return as_gast(ast.parse(source))


def _converted(node, target, convert):
    """As gast's ``generic_visit``: the fields the node has, converted, then its positions."""
    cls = type(node)
    fields = {}
    for f in cls._fields:
        value = getattr(node, f, _MISSING)
        if value is not _MISSING:
            fields[f] = _value(value, convert)
    new = target(**fields)
    for attr in cls._attributes:
        value = getattr(node, attr, _MISSING)  # end_lineno: None on the class
        if value is not _MISSING:
            setattr(new, attr, value)
    return new


def _value(value, convert=as_ast):
    if isinstance(value, ast.AST):
        return convert(value)
    if type(value) is list:
        return [_value(v, convert) for v in value]
    return value
