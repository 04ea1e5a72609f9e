"""Functions composed of derived rules, each written out as one function.

Takes the text of a generated module; gives the text of one function made of its rules,
with the imports it needs, or ``None`` where writing it out could change what the code
does (the caller then writes calls of the rules instead):

* ``gradient_text``: a reverse rule's forward sweep, then its reverse sweep from a
  cotangent of 1.0 (written in where the sweep reads it), as one function: the gradient,
  which tangent_ast derives again for second derivatives without a call between the
  sweeps that hides what is dead;
* ``tangent_text``: a forward rule's tangent alone: the Hessian-vector product is the
  tangent of the gradient, and the statements only the gradient's value needs go.

What is written is the rules' own text, comments citing the primal lines included (a rule
edited by hand is composed as edited). Statements are removed only where they are dead:
a pure assignment of names nothing kept reads, or a store into an array made here
(arithmetic, ``np.zeros_like``, ``.copy()``) that nothing kept reads.

>>> text = '''import numpy as np
... from tangent_ast import runtime
...
...
... def f_fwd(x):
...     y = np.sin(x)  # line 2
...     out = np.sum(y * y)
...     return out, (x, y)
...
...
... def f_bwd(saved, ct_out):
...     x, y = saved
...     ct_y = 2 * ct_out * y  # line 2
...     return ct_y * np.cos(x)
... '''
>>> import numpy as np
>>> print(gradient_text(text, "f", "f_gradient", {"np": np}))
import numpy as np
<BLANKLINE>
<BLANKLINE>
def f_gradient(x):
    y = np.sin(x)  # line 2
    ct_y = 2 * 1.0 * y  # line 2
    return ct_y * np.cos(x)
<BLANKLINE>
"""

import ast
import builtins
import re
from dataclasses import dataclass

import gast
import numpy as np

from .. import runtime
from ..optimize.folding import is_pure

# functions whose result is a new array (or container): a store into it changes nothing else
_FRESH = (
    np.zeros_like,
    np.zeros,
    np.ones_like,
    np.full_like,
    np.empty_like,
    runtime.getitem_vjp,
    runtime.zeros_like,
)
_LINE_COMMENT = re.compile(r"  # line \d+$")


@dataclass(frozen=True)
class _Namespace:
    """What ``is_pure`` asks of a module: its global names' objects."""

    objects: dict


def gradient_text(module_text, base, name, objects, defaults=None):
    """``name(*params)``: ``{base}_fwd``'s body, then ``{base}_bwd``'s with ``ct_out = 1.0``,
    from the reverse rule module ``module_text`` whose globals are ``objects``. A name each
    sweep binds is renamed in the reverse sweep (each sweep's values keep names of their own).
    ``defaults``: parameter name -> the text of its default value."""
    tree = ast.parse(module_text)
    defs = {d.name: d for d in tree.body if isinstance(d, ast.FunctionDef)}
    fwd, bwd = defs.get(f"{base}_fwd"), defs.get(f"{base}_bwd")
    if fwd is None or bwd is None or not (_plain(fwd) and _plain(bwd)):
        return None
    returned = fwd.body[-1]
    if (
        not module_text.isascii()  # the columns ast gives are bytes
        or sum(isinstance(n, ast.Return) for n in ast.walk(fwd)) != 1
        or not isinstance(returned, ast.Return)
        or not (isinstance(returned.value, ast.Tuple) and len(returned.value.elts) == 2)
        or len(bwd.args.args) != 2
        or _free(bwd) & (_stored(fwd) | _params(fwd))  # a global of bwd, a local of fwd
    ):
        return None
    saved, ct_out = (a.arg for a in bwd.args.args)
    residuals = returned.value.elts[1]
    statements = bwd.body
    kept = _kept_names(residuals, objects)
    if (
        len(statements) > 1
        and kept is not None
        and _unpacks(statements[0], saved, kept)
        and not _stored_in(statements[1:]) & set(kept)
    ):
        statements = statements[1:]  # x, y = saved right after saved = (x, y): both go
        saved = None
    bound = _stored_in(statements) | {ct_out} | ({saved} if saved else set())
    taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | set(objects)
    taken |= {a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments) for a in n.args}
    renames = {}
    for old in sorted(bound & (_stored(fwd) | _params(fwd) | _free(fwd))):
        renames[old] = _fresh(old, taken)
        taken.add(renames[old])
    # the cotangent the reverse sweep starts from is 1.0: written in where it is read (so
    # ct_out * 2.0 folds to 2.0), unless the sweep binds it again
    seeded = ct_out not in _stored_in(statements)
    if seeded:
        renames[ct_out] = "1.0"
    lines = _renamed(module_text.splitlines(), statements, renames)
    body = _lines(lines, fwd.body[:-1])
    if saved:
        body.append(f"    {renames.get(saved, saved)} = {ast.unparse(residuals)}")
    if not seeded:
        body.append(f"    {renames.get(ct_out, ct_out)} = 1.0")
    body += _lines(lines, statements)
    params = [
        f"{a.arg}={defaults[a.arg]}" if a.arg in (defaults or {}) else a.arg for a in fwd.args.args
    ]
    return _module(tree, lines, name, params, body, objects)


def _stored_in(statements):
    return {
        n.id
        for s in statements
        for n in ast.walk(s)
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))
    }


def _fresh(name, taken):
    k = 1
    while f"{name}_{k}" in taken:
        k += 1
    return f"{name}_{k}"


def _renamed(lines, statements, renames):
    """``lines`` with each name of ``renames`` read or bound in ``statements`` renamed."""
    lines = list(lines)
    places = sorted(
        (n.lineno, n.col_offset, n.end_col_offset, renames[n.id])
        for s in statements
        for n in ast.walk(s)
        if isinstance(n, ast.Name) and n.id in renames
    )
    for row, start, end, new in reversed(places):
        lines[row - 1] = lines[row - 1][:start] + new + lines[row - 1][end:]
    return lines


def tangent_text(module_text, jvp_name, name, objects):
    """``name(*params, *tangents)``: the forward rule ``jvp_name`` of ``module_text`` giving
    its tangent alone, without what only its value needs."""
    tree = ast.parse(module_text)
    jvp = next(
        (d for d in tree.body if isinstance(d, ast.FunctionDef) and d.name == jvp_name), None
    )
    if jvp is None or not _plain(jvp):
        return None
    returned = jvp.body[-1]
    if (
        sum(isinstance(n, ast.Return) for n in ast.walk(jvp)) != 1
        or not isinstance(returned, ast.Return)
        or not (isinstance(returned.value, ast.Tuple) and len(returned.value.elts) == 2)
    ):
        return None
    lines = module_text.splitlines()
    body = _lines(lines, jvp.body[:-1])
    body.append(f"    return {ast.unparse(returned.value.elts[1])}")
    return _module(tree, lines, name, [a.arg for a in jvp.args.args], body, objects)


def _module(tree, lines, name, params, body, objects):
    """The text of ``def name(params)`` with ``body`` (its lines, dead statements removed)
    after the imports of ``tree`` (a module of ``lines``) it reads; ``None`` where it reads
    a global no import gives (a value the module's loader binds)."""
    text = "\n".join([f"def {name}({', '.join(params)}):", *body])
    text = _accumulated(_without_dead_code(text, objects), objects)
    fn = ast.parse(text).body[0]
    # a builtin's name bound in the module (a closure's cell named ord) is not the builtin
    imports = _imports(tree, lines, _free(fn) - {b for b in dir(builtins) if b not in objects})
    if imports is None:
        return None
    return "\n".join(imports) + "\n\n\n" + text + "\n"


def _plain(fn):
    """Positional parameters only, no nested scopes to reason about."""
    args = fn.args
    nested = (
        *(ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda),
        *(ast.Global, ast.Nonlocal),
    )
    return (
        not (args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or args.defaults)
        and not fn.decorator_list
        and not any(isinstance(n, nested) for s in fn.body for n in ast.walk(s))
    )


def _params(fn):
    return {a.arg for a in fn.args.args}


def _stored(fn):
    return _stored_in(fn.body)


def _free(fn):
    """The names ``fn`` reads and never binds: its globals."""
    loaded = {n.id for s in fn.body for n in ast.walk(s) if isinstance(n, ast.Name)}
    return loaded - _stored(fn) - _params(fn)


def _kept_names(residuals, objects):
    """The names a forward sweep's residuals ``(a, runtime.only_shape(b))`` keep, ``[a, b]``
    (the reverse sweep reads only the shape of ``b``: ``b`` itself serves as well), or None."""
    if not isinstance(residuals, ast.Tuple):
        return None
    names = []
    for e in residuals.elts:
        if (
            isinstance(e, ast.Call)
            and len(e.args) == 1
            and not e.keywords
            and _denotes(e.func, _Namespace(objects)) is runtime.only_shape
        ):
            e = e.args[0]
        if not isinstance(e, ast.Name):
            return None
        names.append(e.id)
    return names


def _unpacks(stmt, saved, kept):
    """``stmt`` is ``a, b = saved`` where the residuals keep ``[a, b]``."""
    return (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.value, ast.Name)
        and stmt.value.id == saved
        and isinstance(stmt.targets[0], ast.Tuple)
        and all(isinstance(t, ast.Name) for t in stmt.targets[0].elts)
        and [t.id for t in stmt.targets[0].elts] == kept
    )


def _lines(lines, statements):
    """The text lines of ``statements`` (consecutive ones of one block), comments between
    them included."""
    if not statements:
        return []
    return lines[statements[0].lineno - 1 : statements[-1].end_lineno]


def _imports(tree, lines, needed):
    """The import lines of ``tree`` binding ``needed``, each name once; ``None`` where a
    name is not bound by an import."""
    found = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for alias in stmt.names:
                bound = alias.asname or alias.name.partition(".")[0]
                if bound in needed and bound not in found:
                    found[bound] = (stmt, alias)
    if set(found) != needed:
        return None
    kept = []
    for stmt in tree.body:
        aliases = [a for b, (s, a) in found.items() if s is stmt]
        if aliases:
            kept.append(ast.unparse(ast.fix_missing_locations(_with_names(stmt, aliases))))
    return kept


def _with_names(stmt, aliases):
    if isinstance(stmt, ast.Import):
        return ast.Import(names=aliases)
    return ast.ImportFrom(module=stmt.module, names=aliases, level=stmt.level)


def _without_dead_code(text, objects):
    """``text`` (one function, its statements one to a line range) without the top-level
    statements that are dead: pure assignments of names no kept statement reads, and
    stores into arrays made here that no kept statement reads. A ``# line N`` comment of a
    removed statement moves to the next kept one that has none."""
    fn = ast.parse(text).body[0]
    namespace = _Namespace({**vars(builtins), **objects})
    fresh = _fresh_arrays(fn, namespace)
    defines = {id(s): _defined(s, fresh, namespace) for s in fn.body}
    deleted = {id(s) for s in fn.body if defines[id(s)]}
    while True:
        live = set()
        for s in fn.body:
            if id(s) not in deleted:
                live |= _reads(s)
        revived = {i for i in deleted if defines[i] & live}
        if not revived:
            break
        deleted -= revived
    if not deleted:
        return text
    lines = text.splitlines()
    drop, comment = set(), None
    for s in fn.body:
        span = range(s.lineno - 1, s.end_lineno)
        if id(s) in deleted:
            drop.update(span)
            found = _LINE_COMMENT.search(lines[s.lineno - 1])
            comment = found.group(0) if found else comment
        else:
            if comment and not _LINE_COMMENT.search(lines[s.end_lineno - 1]):
                lines[s.end_lineno - 1] += comment
            comment = None
    return "\n".join(line for i, line in enumerate(lines) if i not in drop)


def _accumulated(text, objects):
    """``text`` (one function) with each ``s = a[i].copy()`` followed by ``a[i] = s + e``,
    where nothing else reads ``s``, written ``a[i] += e``: the slot added into in place, as
    a person writes it, without the copy (forward mode's tangent of ``a[i] += e``)."""
    fn = ast.parse(text).body[0]
    namespace = _Namespace({**vars(builtins), **objects})
    reads = [n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    lines, edits = text.splitlines(), []
    for first, second in zip(fn.body, fn.body[1:]):
        slot = _slot_copy(first)
        if slot is None or not isinstance(second, ast.Assign) or len(second.targets) != 1:
            continue
        name, place = slot
        target, value = second.targets[0], second.value
        if (
            reads.count(name) == 1
            and _same_place(target, place)
            and isinstance(value, ast.BinOp)
            and isinstance(value.op, ast.Add)
            and isinstance(value.left, ast.Name)
            and value.left.id == name
            and _pure(value.right, namespace)
            and _pure(place.slice, namespace)
        ):
            found = _LINE_COMMENT.search(lines[first.lineno - 1])
            line = f"    {ast.unparse(target)} += {ast.unparse(value.right)}"
            edits.append(
                (first.lineno, second.end_lineno, line + (found.group(0) if found else ""))
            )
    for start, end, line in reversed(edits):
        lines[start - 1 : end] = [line]
    return "\n".join(lines)


def _slot_copy(stmt):
    """``(s, a[i])`` for ``s = a[i].copy()``."""
    if not (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and isinstance(stmt.value, ast.Call)
        and _is_copy(stmt.value)
        and isinstance(stmt.value.func.value, ast.Subscript)
        and isinstance(stmt.value.func.value.value, ast.Name)
    ):
        return None
    return stmt.targets[0].id, stmt.value.func.value


def _same_place(target, place):
    """``target`` is the slot ``place`` (``a[i]``) names, written the same way."""
    return (
        isinstance(target, ast.Subscript)
        and ast.dump(target.value) == ast.dump(place.value)
        and ast.dump(target.slice) == ast.dump(place.slice)
    )


def _reads(stmt):
    names = {
        n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
        names.add(stmt.target.id)
    return names


def _defined(stmt, fresh, namespace):
    """The names whose being read keeps ``stmt``: the names it assigns, or the array made
    here it stores into; empty where ``stmt`` is kept whatever (it may do something else:
    ``t += e`` updates an array in place, ``obj.x = v`` an object)."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target, value = stmt.targets[0], stmt.value
    elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Subscript):
        target, value = stmt.target, stmt.value  # a[i] += e: a store into a, as a[i] = ...
    else:
        return set()
    if not _pure(value, namespace):
        return set()
    if isinstance(target, ast.Subscript):
        base = target.value
        if isinstance(base, ast.Name) and base.id in fresh and _pure(target.slice, namespace):
            return {base.id}
        return set()
    names = list(ast.walk(target))
    if not all(
        isinstance(n, (ast.Tuple, ast.List, ast.Store))
        or (isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
        for n in names
    ):
        return set()
    return {n.id for n in names if isinstance(n, ast.Name)}


def _pure(node, namespace):
    """Evaluating ``node`` does nothing but compute its value: each call in it is one the
    rule table marks pure, a copy (``x.copy()``) or a ``slice``."""
    calls = [n for n in ast.walk(node) if isinstance(n, ast.Call)]
    return all(
        (_is_copy(c) or _denotes(c.func, namespace) is slice)
        or is_pure(gast.ast_to_gast(c), namespace)
        for c in calls
    )


def _is_copy(call):
    func = call.func
    return (
        isinstance(func, ast.Attribute) and func.attr == "copy" and not (call.args or call.keywords)
    )


def _fresh_arrays(fn, namespace):
    """Names every binding of which, in ``fn``, is a top-level ``name = value`` whose value
    is made there: arithmetic, a copy, or a call of ``_FRESH``."""
    bindings = {}
    for stmt in fn.body:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
                bindings.setdefault(n.id, []).append(stmt)
    fresh = set()
    for name, stmts in bindings.items():
        if name not in _params(fn) and all(_makes(s, name, namespace) for s in stmts):
            fresh.add(name)
    return fresh


def _makes(stmt, name, namespace):
    if not (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and stmt.targets[0].id == name
    ):
        return False
    value = stmt.value
    if isinstance(value, (ast.BinOp, ast.UnaryOp)):
        return True
    if not isinstance(value, ast.Call):
        return False
    return _is_copy(value) or any(_denotes(value.func, namespace) is made for made in _FRESH)


def _denotes(node, namespace):
    """The object a name or attribute chain denotes in ``namespace`` (``None`` if none)."""
    if isinstance(node, ast.Name):
        return namespace.objects.get(node.id)
    if isinstance(node, ast.Attribute):
        return getattr(_denotes(node.value, namespace), node.attr, None)
    return None
