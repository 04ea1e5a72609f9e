"""Stage 8, simplify: make generated code read as if written by hand.

Takes a generated FunctionDef and the set of names it may rewrite freely
(temporaries, tangents, cotangents); guarantees the same function with

* constants folded and trivial arithmetic gone (``x ** 1``, ``1 * e``, ``2 - 1``);
* copies propagated (``ct_z = ct_out`` disappears, its uses read ``ct_out``);
* temporaries used once inlined where they are used
  (``s = np.sin(x); out = z + s`` becomes ``out = z + np.sin(x)``);
* dead assignments removed, empty branches dropped.

It never changes the user's own statements beyond inlining temporaries into
them, and never moves a computation into or out of a branch.

    dsin = dx * np.cos(x)          dout = dz + dx * np.cos(x)
    dout = dz + dsin         ->
"""

import ast
import copy

import gast

from .emit import to_ast

MAX_LINE = 88
PURE_MODULES = ("numpy", "math", "operator", "tangent_ast.runtime", "tangent_ast.rules",
                "builtins")


def _names_loaded(node):
    return [n for n in gast.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)]


def _stores(stmts):
    counts = {}
    for s in stmts:
        for n in gast.walk(s):
            if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Param)):
                counts[n.id] = counts.get(n.id, 0) + 1
    return counts


def _is_const(e, value=None):
    return isinstance(e, gast.Constant) and isinstance(e.value, (int, float)) and not isinstance(e.value, bool) \
        and (value is None or e.value == value)


class _Fold(gast.NodeTransformer):
    def visit_BinOp(self, node):
        self.generic_visit(node)
        left, right, op = node.left, node.right, node.op
        if _is_const(left) and _is_const(right) and isinstance(op, (gast.Add, gast.Sub, gast.Mult)):
            value = {gast.Add: lambda a, b: a + b, gast.Sub: lambda a, b: a - b,
                     gast.Mult: lambda a, b: a * b}[type(op)](left.value, right.value)
            return gast.Constant(value, None)
        if isinstance(op, gast.Pow) and _is_const(right, 1):
            return left
        if isinstance(op, gast.Mult) and _is_const(right, 1) and isinstance(right.value, int):
            return left
        if isinstance(op, gast.Mult) and _is_const(left, 1) and isinstance(left.value, int):
            return right
        if isinstance(op, gast.Div) and _is_const(right, 1) and isinstance(right.value, int):
            return left
        return node

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, gast.USub) and isinstance(node.operand, gast.UnaryOp) \
                and isinstance(node.operand.op, gast.USub):
            return node.operand.operand
        return node


def _pure(expr, namespace):
    """True if evaluating ``expr`` later (once) cannot change what it computes or does."""
    for n in gast.walk(expr):
        if isinstance(n, gast.Call):
            root = n.func
            while isinstance(root, gast.Attribute):
                root = root.value
            if not isinstance(root, gast.Name):
                return False
            obj = namespace.objects.get(root.id)
            module = getattr(obj, "__name__", "") if type(obj).__name__ == "module" else getattr(obj, "__module__", "")
            if isinstance(n.func, gast.Attribute) and obj is None:
                continue  # a method of a local array: x.sum(), x.reshape(...)
            if not (module or "").startswith(PURE_MODULES) and root.id not in ("float", "abs", "slice"):
                return False
    return True


class Simplifier:
    def __init__(self, fn, rewritable, namespace, keep=()):
        self.fn = fn
        self.rewritable = rewritable
        self.keep = set(keep)
        self.namespace = namespace

    def run(self):
        for _ in range(50):
            before = gast.dump(self.fn)
            self.fn.body = self.fold(self.fn.body)
            self.propagate_copies()
            self.inline_block(self.fn.body)
            self.remove_dead()
            if gast.dump(self.fn) == before:
                break
        return self.fn

    def fold(self, stmts):
        out = []
        for s in stmts:
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) \
                    and s.targets[0].id in self.rewritable:
                s.value = _Fold().visit(s.value)
            elif isinstance(s, gast.If):
                s.body = self.fold(s.body)
                s.orelse = self.fold(s.orelse)
            out.append(s)
        return out

    def propagate_copies(self):
        stores = _stores([self.fn])
        copies = {}
        for s in gast.walk(self.fn):
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) \
                    and isinstance(s.value, gast.Name):
                target, source = s.targets[0].id, s.value.id
                if target in self.rewritable and stores.get(target) == 1 and stores.get(source, 0) <= 1:
                    copies[target] = source
        if not copies:
            return

        def resolve(n):
            seen = set()
            while n in copies and n not in seen:
                seen.add(n)
                n = copies[n]
            return n

        for n in _names_loaded(self.fn):
            n.id = resolve(n.id)
        self.fn.body = self._drop(self.fn.body, lambda s: isinstance(s, gast.Assign)
                                  and isinstance(s.targets[0], gast.Name) and s.targets[0].id in copies)

    def _drop(self, stmts, predicate):
        out = []
        for s in stmts:
            if predicate(s):
                continue
            if isinstance(s, gast.If):
                s.body = self._drop(s.body, predicate)
                s.orelse = self._drop(s.orelse, predicate)
                if not s.body and not s.orelse:
                    continue
                if not s.body:
                    s.test = gast.UnaryOp(op=gast.Not(), operand=s.test)
                    s.body, s.orelse = s.orelse, []
            out.append(s)
        return out

    def inline_block(self, stmts):
        uses = {}
        for n in _names_loaded(self.fn):
            uses[n.id] = uses.get(n.id, 0) + 1
        stores = _stores([self.fn])
        i = 0
        while i < len(stmts):
            s = stmts[i]
            if isinstance(s, gast.If):
                self.inline_block(s.body)
                self.inline_block(s.orelse)
            elif self._inlinable(s, uses, stores):
                target = s.targets[0].id
                if self._inline_into(stmts, i, target, s.value):
                    del stmts[i]
                    uses = {}
                    for n in _names_loaded(self.fn):
                        uses[n.id] = uses.get(n.id, 0) + 1
                    continue
            i += 1

    def _inlinable(self, s, uses, stores):
        if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)):
            return False
        target = s.targets[0].id
        return (target in self.rewritable and target not in self.keep and uses.get(target) == 1 and stores.get(target) == 1
                and _pure(s.value, self.namespace))

    def _inline_into(self, stmts, i, target, value):
        depends = {n.id for n in _names_loaded(value)}
        for later in stmts[i + 1:]:
            uses_here = [n for n in _names_loaded(later) if n.id == target]
            if uses_here:
                if not isinstance(later, (gast.Assign, gast.Expr)) or \
                        (isinstance(later, gast.Assign) and not isinstance(later.targets[0], gast.Name)
                         and not isinstance(later.value, gast.Call)):
                    return False
                candidate = _Replace(target, value).visit(copy.deepcopy(later))
                if line_length(candidate) > MAX_LINE and line_length(value) > 28:
                    return False  # one operation per line reads better than a long one
                _Replace(target, value).visit(later)
                return True
            if _stores([later]).keys() & depends:
                return False
        return False

    def remove_dead(self):
        while True:
            used = {n.id for n in _names_loaded(self.fn)}
            dead = lambda s: (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)
                              and s.targets[0].id not in used and _pure(s.value, self.namespace))
            before = gast.dump(self.fn)
            self.fn.body = self._drop(self.fn.body, dead)
            if gast.dump(self.fn) == before:
                return


def line_length(node):
    """Length of ``node`` printed as one line of a function body."""
    return len(ast.unparse(to_ast(copy.deepcopy(node)))) + 4


class _Replace(gast.NodeTransformer):
    def __init__(self, target, value):
        self.target = target
        self.value = value

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and node.id == self.target:
            return copy.deepcopy(self.value)
        return node


def simplify(fn, rewritable, namespace, keep=()):
    """Simplify ``fn`` in place. Names in ``rewritable`` may be propagated, inlined
    or removed; names in ``keep`` (tangents of the user's variables) are never
    inlined, so the derivative code mirrors the user's statements."""
    return Simplifier(fn, rewritable, namespace, keep).run()
