"""Stage emit: generated FunctionDefs -> the text of a Python module.

Takes the simplified functions, the namespace of globals they read and the
provenance of the rule; guarantees deterministic module text: a header
(what it was derived from, hashes, signature, mode, wrt, tool version),
explicit imports of everything it calls (``import numpy as np``,
``from pkg.mod import helper``), names the loader must bind listed in a
comment, and the functions, each statement that starts a new primal line
commented with that line.

>>> import numpy as np, tangent_ast as ta
>>> def f(x, y):
...     z = x * y
...     return z + np.sin(x)
>>> print(ta.show(f, stage="module", args=(1.5, 2.0)))
\"\"\"Forward rule of f, derived by tangent_ast ...
...
# signature: float, float
# mode: forward
# wrt: x
...
import numpy as np
<BLANKLINE>
<BLANKLINE>
def f_jvp(x, y, dx):
    z = x * y  # line 2
    dz = dx * y
    out = z + np.sin(x)  # line 3
    dout = dz + dx * np.cos(x)
    return out, dout
<BLANKLINE>
"""

import ast
import hashlib
import importlib
import itertools
import marshal
import math
import types
from dataclasses import dataclass

import gast

from ..errors import InternalError
from ..rules import registry
from ..vocabulary.stdlib_ast import as_ast
from ..vocabulary.syntax import unparse
from ..vocabulary.trees import dump, same, walk


@dataclass(frozen=True)
class ModuleReference:
    """A module generated code imports by its dotted name, without the transformer importing
    it (``tangent_ast.function_values`` imports the API, which imports the stages)."""

    name: str


# one object, so that every call of a function value in a module shares one import
FUNCTION_VALUES = ModuleReference("tangent_ast.function_values")


class ModuleNamespace:
    """The globals of a generated module: emitted name -> object."""

    def __init__(self, namer):
        self.namer = namer
        self.objects = {}
        self.relative = {}  # name -> (module name, attribute): derived rules of callees
        # name -> (free name or chain, module name, attribute): rules of closures the function
        # calls, each from its module loaded with that closure's cells (bound by the loader)
        self.closure_rules = {}
        self.homes = {}  # a free name of the user's function -> the module it is a global of
        # the package of the cache directory the module is written to: a function of another
        # module there (a derived rule) is imported relatively, as callees' rules are
        self.package = None

    def bind(self, preferred, obj):
        bound = self.objects.get(preferred, _MISSING)
        if bound is obj or (  # the module the function reads under that name already
            isinstance(obj, ModuleReference) and getattr(bound, "__name__", None) == obj.name
        ):
            return preferred
        if preferred not in self.objects and preferred not in self.namer.taken:
            self.namer.reserve(preferred)
            self.objects[preferred] = obj
            return preferred
        for existing, value in self.objects.items():
            if value is obj and existing.startswith(preferred):
                return existing
        fresh = self.namer.fresh(preferred)
        self.objects[fresh] = obj
        return fresh

    def bind_user(self, name, obj, home=None):
        """A free name of the user's function: it keeps its name. ``home``: the module whose
        global it is (generated code imports it from there), None for a closure cell."""
        self.objects[name] = obj
        if home is not None:
            self.homes[name] = home

    def bind_closure_rule(self, preferred, via, module, attr):
        """The rule function ``attr`` of the closure the function reads as ``via``, whose
        module is ``module``: a name the loader binds."""
        key = (via, module, attr)
        for existing, value in self.closure_rules.items():
            if value == key:
                return existing
        fresh = self.namer.fresh(preferred)
        self.closure_rules[fresh] = key
        return fresh

    def bind_closure_rule_as(self, name, via, module, function):
        """``name`` (the function's own) stands for ``function`` of the rule module ``module``
        of the closure read as ``via``: the loader binds it from that closure's module."""
        self.objects[name] = function
        self.closure_rules[name] = (via, module, function.__name__)

    def bind_relative_module(self, preferred, module):
        """A derived rule's module itself, imported relatively (``from . import mod as m``)."""
        return self.bind_relative(preferred, module, None)

    def bind_relative(self, preferred, module, attr):
        key = (module, attr)
        for existing, value in self.relative.items():
            if value == key:
                return existing
        fresh = preferred if preferred not in self.namer.taken else self.namer.fresh(preferred)
        self.namer.reserve(fresh)
        self.relative[fresh] = key
        return fresh


_MISSING = object()


@dataclass
class Provenance:
    qualname: str
    module: str
    filename: str
    line: int
    source_hash: str
    rules_hash: str
    signature: str
    mode: str
    wrt: tuple
    version: str
    depends: str = "-"  # "module:qualname=fingerprint" of every user function reached (live.py)
    reads: str | None = None  # "name=kind" of the module-level values and cells the function reads
    calls: str | None = None  # "name=key" of the code it reads by a name that does not say which
    updates: tuple = ()  # arguments the function updates in place
    packed: str = ""  # how *args/**kwargs were flattened for this call form (calling.py)
    route: str = "direct"  # how a reverse rule was derived (modes.Route)
    backend: str = "numpy"  # what runs it (modes.Backend)


def _importable(obj, name):
    """``import`` line for ``obj`` under ``name``, or None if it must be bound by the loader."""
    if isinstance(obj, (types.ModuleType, ModuleReference)):
        full = obj.name if isinstance(obj, ModuleReference) else obj.__name__
        if "." not in full:
            return f"import {full}" if full == name else f"import {full} as {name}"
        parent, _, last = full.rpartition(".")
        return f"from {parent} import {last}" if last == name else f"import {full} as {name}"
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if type(obj).__name__ == "ufunc":
        module = "numpy"
    if (
        obj is getattr(__builtins__, name, None)
        if not isinstance(__builtins__, dict)
        else obj is __builtins__.get(name)
    ):
        return ""
    if module == "builtins" and qualname == name:
        return ""
    if not module or not qualname or "<" in qualname or "." in qualname or module == "__main__":
        return None
    try:
        if getattr(importlib.import_module(module), qualname) is not obj:
            return None
    except (ImportError, AttributeError):
        return None
    return (
        f"from {module} import {qualname}"
        if qualname == name
        else f"from {module} import {qualname} as {name}"
    )


def imports_and_bindings(namespace, used):
    """Import lines for the names the code uses, and the names the loader must bind."""
    lines, loader = [], []
    for name in sorted(used):
        if name in namespace.relative:
            module, attr = namespace.relative[name]
            lines.append(
                f"from . import {module} as {name}"
                if attr is None
                else f"from .{module} import {attr}"
                if attr == name
                else f"from .{module} import {attr} as {name}"
            )
            continue
        if name in namespace.closure_rules:
            loader.append(name)
            continue
        if name not in namespace.objects:
            continue
        line = _importable(namespace.objects[name], name)
        if line is None and name in namespace.homes:  # a module-level value of the user's
            line = f"from {namespace.homes[name]} import {name}"
        own = f"from {namespace.package}." if namespace.package else None
        if line and own and line.startswith(own):
            line = "from ." + line[len(own) :]
        if line is None:
            loader.append(name)
        elif line:
            lines.append(line)
    plain = sorted(line for line in lines if line.startswith("import "))
    froms = sorted(
        line for line in lines if line.startswith("from ") and not line.startswith("from .")
    )
    relative = sorted(line for line in lines if line.startswith("from ."))
    return plain + froms + relative, loader


def _used_globals(functions):
    defined = {f.name for f in functions}
    used = set()
    for f in functions:
        names = [n for n in walk(f) if isinstance(n, gast.Name)]
        local = {n.id for n in names if isinstance(n.ctx, (gast.Store, gast.Param))}
        used |= {
            n.id
            for n in names
            if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Load)
            and n.id not in local
            and n.id not in defined
        }
    return used


def statement_lines(stmt, indent, line_of, last_line):
    """Source lines of one statement; a comment cites a primal line when it changes."""
    pad = "    " * indent
    lineno = line_of(stmt)
    comment = f"  # line {lineno}" if lineno is not None and lineno != last_line[0] else ""
    if lineno is not None:
        last_line[0] = lineno
    if isinstance(stmt, (ast.For, ast.While)):
        head = (
            f"for {unparse(stmt.target)} in {unparse(stmt.iter)}:"
            if isinstance(stmt, ast.For)
            else f"while {unparse(stmt.test)}:"
        )
        lines = [f"{pad}{head}{comment}"]
        for s in stmt.body:
            lines += statement_lines(s, indent + 1, line_of, last_line)
        return lines
    if isinstance(stmt, ast.If):
        lines = [f"{pad}if {unparse(stmt.test)}:{comment}"]
        for s in stmt.body:
            lines += statement_lines(s, indent + 1, line_of, last_line)
        if stmt.orelse:
            lines.append(f"{pad}else:")
            for s in stmt.orelse:
                lines += statement_lines(s, indent + 1, line_of, last_line)
        return lines
    if isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Tuple) and stmt.value.elts:
        text = ["return " + ", ".join(unparse(e) for e in stmt.value.elts)]
    else:
        text = unparse(stmt).splitlines()
    return [pad + text[0] + comment] + [pad + t for t in text[1:]]


def to_ast(fn):
    """A stdlib ``ast`` copy of a gast node, ready to unparse: each number constant whose
    printed text is not a single token (``-2.0``, ``(1+2j)``, a NaN) is the tree that text
    parses to, so ``ast.unparse`` puts around it the parentheses its place needs.

    ``ast.unparse`` prints ``Constant(-2.0)`` as ``-2.0`` wherever it is, and Python reads
    ``-2.0 ** 2`` as ``-(2.0 ** 2)``: a constant is printed as one token, and ``-2.0`` is
    two, a minus and a number. As ``-(2.0)`` it is an operation, which the printer
    parenthesises by its precedence, as it would a name's:

    >>> import gast
    >>> expr = gast.parse("x * (-2.0) ** 2 + y ** -1 + (-2).real", mode="eval").body
    >>> unparse(to_ast(expr))
    'x * (-2.0) ** 2 + y ** (-1) + (-2).real'
    >>> expr.left.left.right.left = gast.Constant(-2.0, None)  # as folding leaves it
    >>> unparse(to_ast(expr))
    'x * (-2.0) ** 2 + y ** (-1) + (-2).real'
    """
    tree = as_ast(fn)
    spelled = False
    for node in walk(tree):  # listed first: a ``pass`` put in below is placed here too
        if isinstance(node, (ast.If, ast.For, ast.While)) and not node.body:
            node.body = [_at_line_one(ast.Pass())]  # a branch a stage emptied shows as ``pass``
        if "lineno" in node._attributes:
            _at_line_one(node)
        if type(node) is ast.Constant and prints_as_operation(node.value):
            spelled = True
    if spelled:
        if type(tree) is ast.Constant:
            return _spelled(tree)
        _spell_constants(tree)
    return tree


def prints_as_operation(value):
    """True if ``ast.unparse`` may print the number ``value`` as more than one token: a
    negative number (``-2``, ``-0.0``, ``-inf`` as ``-1e309``), a NaN (``(1e309-1e309)``),
    a complex number (``(1-2j)``, ``-2j``)."""
    cls = type(value)
    if cls is float:
        return math.copysign(1.0, value) < 0 or value != value
    return (cls is int and value < 0) or cls is complex


def _spell_constants(tree):
    """Replace, in place, each constant of several tokens under ``tree`` by its tree."""
    for node in walk(tree):
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                for i, item in enumerate(value):
                    if type(item) is ast.Constant and prints_as_operation(item.value):
                        value[i] = _spelled(item)
            elif type(value) is ast.Constant and prints_as_operation(value.value):
                setattr(node, field, _spelled(value))


def _spelled(constant):
    """The tree of the text ``ast.unparse`` prints for ``constant`` (``-2.0`` ->
    ``-(2.0)``, ``(1-2j)`` -> ``1 - 2j``), or ``constant`` itself where that text is one
    token (``2j``) or does not parse (the check of the printed module reports it)."""
    try:
        tree = ast.parse(unparse(constant), mode="eval").body
    except SyntaxError:
        return constant
    if type(tree) is ast.Constant:
        return constant
    for node in walk(tree):
        _at_line_one(node)
    return tree


def _at_line_one(node):
    node.lineno = node.end_lineno = 1
    node.col_offset = node.end_col_offset = 0
    return node


def function_source(fn, line_of):
    """Source of one generated gast FunctionDef, with primal-line comments: ``line_of`` maps
    a statement's primal line (or None) to the comment's text (or None)."""
    return _printed(fn, line_of)[0]


def _printed(fn, line_of):
    """The source of ``fn`` (as :func:`function_source`) and the ``ast`` tree it prints."""
    tree = to_ast(fn)
    primal = _primal_lines(fn, tree)
    header = unparse(
        ast.FunctionDef(
            name=tree.name,
            args=tree.args,
            body=[ast.Pass()],
            decorator_list=[],
            returns=None,
            type_params=[],
            lineno=1,
            col_offset=0,
        )
    ).splitlines()[0]
    # a compiled backend's decorator (``@numba.njit(cache=True)``)
    decorators = [f"@{ast.unparse(d)}" for d in tree.decorator_list]
    last_line = [None]
    body = []
    for s in tree.body:
        body += statement_lines(s, 1, lambda a: line_of(primal.get(id(a))), last_line)
    return "\n".join([*decorators, header, *body]) + "\n", tree


def _primal_lines(gast_node, ast_node):
    """id of each statement of ``ast_node`` -> the primal line of its gast original
    (gast_to_ast drops the line numbers of generated nodes). The statements of both trees
    are paired body by body; a body the ``ast`` tree holds a ``pass`` in is empty in the
    gast tree (``to_ast``)."""
    lines = {}
    pairs = [(gast_node, ast_node)]
    for g, a in pairs:
        if hasattr(g, "lineno"):
            lines[id(a)] = g.lineno
        for field in ("body", "orelse"):
            inner = getattr(g, field, None)
            if type(inner) is list:
                pairs.extend(zip(inner, getattr(a, field), strict=False))
    return lines


def module_source(functions, namespace, provenance, line_of, *, notes=()):
    """The full text of a generated module."""
    used = _used_globals(functions)
    imports, loader = imports_and_bindings(namespace, used)
    printed = [_printed(f, line_of) for f in functions]
    bodies = "\n\n".join(text for text, _ in printed)
    body_hash = hashlib.sha256(bodies.rstrip("\n").encode() + b"\n").hexdigest()[:16]
    p = provenance
    header = [
        f'"""{p.mode.capitalize()} rule of {p.qualname}, derived by tangent_ast {p.version}.',
        "",
        "Generated code: edit it if you like; tangent_ast will then use your edit",
        "as it is and never overwrite it.",
        '"""',
        f"# source: {p.module}:{p.qualname} ({p.filename}:{p.line})",
        f"# source-hash: {p.source_hash}",
        f"# rules-hash: {p.rules_hash}",
        f"# signature: {p.signature}",
        f"# mode: {p.mode}",
    ]
    if p.route != "direct":  # the transpose route (the direct one is the default)
        header.append(f"# route: {p.route}")
    if p.backend != "numpy":  # compiled (NumPy's is the default)
        header.append(f"# backend: {p.backend}")
    header += [
        f"# wrt: {', '.join(p.wrt)}",
        f"# depends: {p.depends}",
    ]
    if p.reads:
        header.append(f"# reads: {p.reads}")
    if p.calls:
        header.append(f"# calls: {p.calls}")
    header += [
        f"# tangent-ast-version: {p.version}",
        f"# body-hash: {body_hash}",
    ]
    if p.packed:
        header.append(f"# parameters: {p.packed}")
    if p.updates:
        header.append(
            f"# updates-in-place: {' '.join(p.updates)}  (arguments left as {p.qualname} leaves "
            "them; they must not share memory with other arguments)"
        )
    if loader:
        header.append(
            f"# bound-by-loader: {' '.join(loader)}  (closure cells or values that "
            "cannot be imported; the loader sets them before running this module)"
        )
    closures = [
        f"{n}={':'.join(namespace.closure_rules[n])}"
        for n in loader
        if n in namespace.closure_rules
    ]
    if closures:
        header.append(
            f"# closure-rules: {' '.join(closures)}  (name=closure:module:function, the rules "
            "of the closures it calls, each loaded with that closure's cells)"
        )
    for note in notes:
        header.append(f"# {note}")
    text = "\n".join(header) + "\n"
    if imports:
        text += "\n" + "\n".join(imports) + "\n"
    text += "\n\n" + bodies
    text = text.rstrip() + "\n"
    check_reads_back(text, [tree for _, tree in printed], p)
    return text, loader


def check_reads_back(text, trees, provenance):
    """Raise an InternalError unless the module ``text`` parses to the functions ``trees``
    it was printed from, node for node (positions aside).

    A printer that drops a needed parenthesis writes code that runs and computes something
    else (``-2.0 ** 2`` is ``-(2.0 ** 2)``): a wrong derivative with no error. Reading the
    module back makes every such slip, of any construct, an error naming the function and
    the first statement that reads otherwise. It costs a parse of the module and a walk
    of each function: some 4% of a derivation."""
    p = provenance
    try:
        module = ast.parse(text)
    except SyntaxError as exc:
        raise _misprinted(
            p, f"its line {exc.lineno} does not parse ({exc.msg}): {exc.text}"
        ) from exc
    read = [s for s in module.body if isinstance(s, ast.FunctionDef)]
    if len(read) != len(trees):
        raise _misprinted(p, f"it defines {len(read)} functions, not {len(trees)}")
    lines = text.splitlines()
    for tree, back in zip(trees, read, strict=True):
        if same(tree, back):
            continue
        meant, found = _first_difference(tree.body, back.body) or (tree, back)
        if found is None:
            raise _misprinted(p, f"in {tree.name}, `{unparse(meant)}` is missing")
        printed = lines[found.lineno - 1].strip()
        if meant is None:
            raise _misprinted(p, f"in {tree.name}, `{printed}` was printed from nothing")
        raise _misprinted(
            p,
            f"in {tree.name}, `{printed}` reads as {_short(dump(found))}, but it was printed "
            f"from {_short(dump(meant))}",
        )


def _first_difference(mine, theirs):
    """The first pair of statements (innermost) that differ between two bodies, or None."""
    for a, b in itertools.zip_longest(mine, theirs):
        if a is None or b is None:
            return a, b
        if same(a, b):
            continue
        if type(a) is type(b):
            for field in ("body", "orelse"):
                inner = getattr(a, field, None)
                if type(inner) is list:
                    found = _first_difference(inner, getattr(b, field))
                    if found is not None:
                        return found
        return a, b
    return None


def _short(text, limit=240):
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _misprinted(p, what):
    return InternalError(
        f"the generated {p.mode} rule of {p.qualname} does not read back as the code it was "
        f"printed from: {what}",
        where=f"{p.filename}:{p.line}",
        hint="this is a bug of tangent_ast's printer (emit): please report it with this function",
    )


_RULES_HASH: dict[int, str] = {}


def rule_source_hash():
    """One hash of every registered rule's source (rules change -> rules re-derive).

    Reading every rule's source takes tens of milliseconds, so it is done once per
    version of the rule table, not on every derivation and cache check."""
    if registry.version() not in _RULES_HASH:
        _RULES_HASH.clear()
        _RULES_HASH[registry.version()] = _hash_rules(registry)
    return _RULES_HASH[registry.version()]


def _hash_rules(registry):
    h = hashlib.sha256()
    for entry in registry.all_primitives():
        h.update(entry.name.encode() + (b"" if entry.pure else b":effectful"))
        for table in (entry.jvps, entry.vjps):
            for argnum, rule in sorted(table.items()):
                h.update(f"{argnum}:{type(rule).__name__}:".encode())
                fn = getattr(rule, "fn", None)
                code = getattr(fn, "__code__", None)
                # Compiled code, or the name of a builtin: never a repr, which carries
                # memory addresses. (Reading every rule's source would cost ~50 ms.)
                h.update(
                    marshal.dumps(code)
                    if code is not None
                    else registry.qualified_name(fn).encode()
                    if fn is not None
                    else b"-"
                )
    return h.hexdigest()[:16]
