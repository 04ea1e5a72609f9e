"""Residuals the reverse sweep computes again instead of receiving them.

Takes a reverse rule's two sweeps after simplification and tapes, the residuals
(:func:`~tangent_ast.transform.residuals.residuals_of`), the kinds of the values and the arrays
updated in place. A residual that costs at most one pass over an array to compute from
other residuals is computed in the reverse sweep, where it is read, and is no longer
returned; the forward sweep then folds it into its own use (its last simplification
runs after this):

* a size: int arithmetic on ints and on the sizes of arrays (``n = xs.shape[0]``,
  ``len(xs) - 1``), read once by the reverse sweep;
* a view (``x[1:]``, ``xs[k]``: an item or basic slice by ints), or one elementwise
  ``+ - *`` of residual arrays, their views and numbers (``1.0 - y``), read once by the
  reverse sweep once its shape reads (``r.size``, ``r.shape``, ``r.ndim``) are reads of
  an operand of the same shape.

Every name the expression reads is a residual kept or an argument, assigned once in each sweep (the
reverse sweep does not restore it in a loop) and never updated in place, so the
expression computes the same value in both sweeps. What is gained: an array the forward
sweep need not keep alive until the reverse sweep runs, and a line of each sweep.

    def f_fwd(y, p):                           def f_fwd(y, p):
        one_minus_y = 1.0 - y                      out = np.sum((1.0 - y) * np.log(p))
        out = np.sum(one_minus_y * np.log(p))      return (out, (y, p))
        return (out, (p, one_minus_y))   ->
                                               def f_bwd(saved, ct_out):
    def f_bwd(saved, ct_out):                      y, p = saved
        p, one_minus_y = saved                     ct_p = ct_out * (1.0 - y) / p
        ct_p = ct_out * one_minus_y / p            return ct_p
        return ct_p

>>> import numpy as np, tangent_ast as ta
>>> def f(y, p):
...     return np.sum((1.0 - y) * np.log(p))
>>> print(ta.show(f, mode="reverse", wrt="p", stage="simplify", args=(np.ones(3), np.ones(3))))
def f_fwd(y, p):
    out = np.sum((1.0 - y) * np.log(p))
    return (out, (y, p))
<BLANKLINE>
def f_bwd(saved, ct_out):
    y, p = saved
    ct_p = ct_out * (1.0 - y) / p
    return ct_p
<BLANKLINE>
"""

import gast

from ..vocabulary.kinds import UNKNOWN, Tag
from ..vocabulary.trees import Transformer, copy_tree, walk
from .residuals import shape_only_reads

# the operators of an elementwise pass over arrays computed again
_ELEMENTWISE = (gast.Add, gast.Sub, gast.Mult)
_SIZES = ("shape", "ndim", "size")


def recompute_residuals(fwd, bwd, residuals, kinds, updated):
    """Write residuals cheap to compute into the reverse sweep's reads of them (see the
    module's docstring); returns the residuals left."""
    fwd_names, bwd_names = _Names(fwd), _Names(bwd)
    values = {
        s.targets[0].id: s.value
        for s in fwd.body
        if isinstance(s, gast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], gast.Name)
        and fwd_names.stored_once(s.targets[0].id)
    }
    params = [a.id for a in fwd.args.args]
    shapes_only = shape_only_reads(bwd)  # passed as runtime.only_shape: nothing to gain
    kept = set(residuals)
    # residuals, and the arguments (alive anyway: passing one costs nothing), that read the
    # same value in both sweeps
    steady = {
        v
        for v in (*residuals, *params)
        if v not in updated
        and not bwd_names.stores.get(v)
        and (fwd_names.stored_once(v) or not fwd_names.stores.get(v))
    }
    expand = _Expand(values, kept)
    for r in residuals:
        if r not in values or r in updated:
            continue
        available = (kept | set(params)) & steady - {r}
        # through the one-operation temporaries of the normal form: shape = xs.shape; shape[0]
        value = expand.visit(copy_tree(values[r]))
        kind = kinds.get(r, UNKNOWN)
        if kind.tag is Tag.INT and _size_of(value, available, kinds, fwd_names, bwd_names):
            pass
        elif (
            kind.tag is Tag.ARRAY
            and r not in shapes_only
            and (_view(value, available, kinds) or _one_pass(value, available, kinds))
            and len(_value_reads(bwd_names, r)) == 1
        ):
            _read_sizes_of_an_operand(bwd_names, r, value, kinds)
        else:
            continue
        reads = bwd_names.reads(r)
        if len(reads) != 1:
            continue
        bwd_names.substitute(reads[0], value)
        kept.discard(r)
        kept |= {n.id for n in walk(value) if isinstance(n, gast.Name)} & set(params)
    # an argument the reverse sweep reads now (a size read moved to it from a residual that
    # is kept after all, read more than once) is passed: it is alive anyway
    kept |= {p for p in params if bwd_names.reads(p) and not bwd_names.stores.get(p)}
    return [v for v in dict.fromkeys((*params, *residuals)) if v in kept]


class _Names:
    """The ``Name`` nodes of a function by what they do (``loads``, ``stores``), where
    each read is held (``parents``), and its reads of sizes (``x.shape``) by name, kept
    current as reads are rewritten."""

    def __init__(self, fn):
        self.loads, self.stores, self.sizes, self.parents = {}, {}, {}, {}
        self._add(fn)

    def _add(self, tree):
        for node in walk(tree):
            for field in node._fields:
                held = getattr(node, field, None)
                if isinstance(held, list):
                    for k, item in enumerate(held):
                        if isinstance(item, gast.Name):
                            self.parents[id(item)] = (node, field, k)
                elif isinstance(held, gast.Name):
                    self.parents[id(held)] = (node, field, None)
            if isinstance(node, gast.Name):
                by = self.stores if isinstance(node.ctx, gast.Store) else self.loads
                by.setdefault(node.id, []).append(node)
            elif (
                isinstance(node, gast.Attribute)
                and node.attr in _SIZES
                and isinstance(node.value, gast.Name)
            ):
                self.sizes.setdefault(node.value.id, []).append(node)

    def stored_once(self, v):
        return len(self.stores.get(v, ())) == 1

    def reads(self, v):
        return [n for n in self.loads.get(v, ()) if n.id == v]

    def rename(self, node, new):
        """The read ``node`` reads ``new`` instead."""
        node.id = new
        self.loads.setdefault(new, []).append(node)

    def substitute(self, read, value):
        """Put ``value`` where the read ``read`` is."""
        parent, field, k = self.parents[id(read)]
        if k is None:
            setattr(parent, field, value)
        else:
            getattr(parent, field)[k] = value
        self.loads[read.id].remove(read)
        self._add(value)


class _Expand(Transformer):
    """Names replaced by the expressions they are assigned, recursively, but for those
    still ``kept`` (residuals the reverse sweep receives)."""

    def __init__(self, values, kept):
        self.values, self.kept = values, kept

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and node.id in self.values and node.id not in self.kept:
            return self.visit(copy_tree(self.values[node.id]))
        return node


def _size_of(expr, available, kinds, *functions):
    """``expr`` is int arithmetic on ints and on the sizes (``.shape[k]``, ``.ndim``,
    ``.size``, ``len``) of arrays, all of them ``available`` names."""
    if isinstance(expr, gast.Constant):
        return type(expr.value) is int
    if isinstance(expr, gast.Name):
        return expr.id in available and kinds.get(expr.id, UNKNOWN).tag is Tag.INT
    if isinstance(expr, gast.BinOp):
        return isinstance(expr.op, (gast.Add, gast.Sub, gast.Mult, gast.FloorDiv)) and all(
            _size_of(e, available, kinds, *functions) for e in (expr.left, expr.right)
        )
    if isinstance(expr, gast.Subscript) and isinstance(expr.slice, gast.Constant):
        return (
            type(expr.slice.value) is int
            and isinstance(expr.value, gast.Attribute)
            and expr.value.attr == "shape"
            and _array(expr.value.value, available, kinds)
        )
    if isinstance(expr, gast.Attribute) and expr.attr in ("ndim", "size"):
        return _array(expr.value, available, kinds)
    if isinstance(expr, gast.Call) and isinstance(expr.func, gast.Name):
        return (
            expr.func.id == "len"
            and not any("len" in names.stores for names in functions)
            and len(expr.args) == 1
            and not expr.keywords
            and _array(expr.args[0], available, kinds)
        )
    return False


def _one_pass(expr, available, kinds):
    """``expr`` is one elementwise ``+ - *`` of numbers and ``available`` arrays or views
    of them."""
    if isinstance(expr, gast.UnaryOp) and isinstance(expr.op, gast.USub):
        operands = [expr.operand]
    elif isinstance(expr, gast.BinOp) and isinstance(expr.op, _ELEMENTWISE):
        operands = [expr.left, expr.right]
    else:
        return False
    arrays = [o for o in operands if _array(o, available, kinds) or _view(o, available, kinds)]
    numbers = [
        o
        for o in operands
        if (isinstance(o, gast.Constant) and type(o.value) in (int, float))
        or (
            isinstance(o, gast.Name)
            and o.id in available
            and kinds.get(o.id, UNKNOWN).tag in (Tag.FLOAT, Tag.INT)
        )
    ]
    return bool(arrays) and len(arrays) + len(numbers) == len(operands)


def _view(expr, available, kinds):
    """``expr`` is a basic slice or item of an ``available`` array, by numbers: a view,
    which costs nothing to make again."""
    if not (isinstance(expr, gast.Subscript) and _array(expr.value, available, kinds)):
        return False
    parts = expr.slice.elts if isinstance(expr.slice, gast.Tuple) else [expr.slice]
    bounds = []
    for part in parts:
        if isinstance(part, gast.Slice):
            bounds += [b for b in (part.lower, part.upper, part.step) if b is not None]
        else:
            bounds.append(part)
    return all(_size_of(b, available, kinds) for b in bounds)


def _read_sizes_of_an_operand(names, r, value, kinds):
    """``r.size`` -> ``y.size`` where ``y``, an operand of ``r``'s expression, has
    ``r``'s shape: a read of a size is not a read of the values."""
    shape = kinds.get(r, UNKNOWN).shape
    same = [
        n.id
        for n in walk(value)
        if isinstance(n, gast.Name)
        and shape is not None
        and kinds.get(n.id, UNKNOWN).shape == shape
    ]
    if not same:
        return
    for attribute in names.sizes.get(r, ()):
        if _is_name(attribute.value, r):
            names.rename(attribute.value, same[0])
            names.sizes.setdefault(same[0], []).append(attribute)


def _value_reads(names, r):
    """The reads of ``r`` in the reverse sweep other than of its size (``r.size``)."""
    sizes = {id(a.value) for a in names.sizes.get(r, ()) if _is_name(a.value, r)}
    return [n for n in names.reads(r) if id(n) not in sizes]


def _is_name(expr, id_):
    return isinstance(expr, gast.Name) and expr.id == id_


def _array(expr, available, kinds):
    return (
        isinstance(expr, gast.Name)
        and expr.id in available
        and kinds.get(expr.id, UNKNOWN).tag is Tag.ARRAY
    )
