"""Stage forward: linearize. After each active statement, its tangent.

Takes the SSA function with kinds and activity; guarantees a function
``f_jvp(*params, *d_wrt)`` returning ``(out, dout)`` in which every active
statement ``v = op(...)`` is followed by ``dv = <sum of rule contributions>``
inside the same control flow (branches and loops are kept as they are:
conditions read primal values), and a call to a user function with active
arguments becomes a call to its derived forward rule.

>>> import numpy as np, tangent_ast as ta
>>> def f(x, y):
...     z = x * y
...     return z + np.sin(x)
>>> print(ta.show(f, stage="forward", wrt=("x", "y"), args=(1.5, 2.0)))
def f_jvp(x, y, dx, dy):
    z = x * y
    dz = dx * y + x * dy
    sin = np.sin(x)
    dsin = dx * np.cos(x)
    out = z + sin
    dout = dz + dsin
    return (out, dout)
<BLANKLINE>
"""

import copy

import gast

from .. import runtime
from ..front.new_arrays import fresh_array
from ..modes import Mode
from ..rules.registry import lookup
from ..vocabulary.kinds import Tag
from ..vocabulary.syntax import assign, name, updated_arrays
from ..vocabulary.trees import copy_tree


class Forward:
    def __init__(self, derivation, updated=frozenset()):
        self.d = derivation
        # arrays updated in place (a[i] = v; arguments too): their tangents are updated
        # alongside, so a tangent of another name must never be one of them (v = x + 0.0
        # has the tangent dx: x's update would change v's tangent, v's update x's)
        self.updated = updated

    def define(self, s, target, dtarget, tangent):
        """``s`` and, after it, ``dtarget = tangent``: a copy where the array is new but its
        tangent may be that of an array updated in place (``dv = dx.copy()``). Where the
        array is not new (a copy ``v_1 = v``, a view ``v = a[1:]``) its tangent shares as the
        array does."""
        names = self.d.tangent_names
        shared = {names[u] for u in self.updated if u in names}
        kind = self.d.kind(name(target))
        if (
            fresh_array(s.value, self.d.scope)  # (a view's tangent is the base's view too)
            and kind.tag in (Tag.ARRAY, Tag.UNKNOWN)
            and not kind.scalar  # (np.prod of a value of unknown kind: a number)
            and (target in self.updated or bool(_loads(tangent) & shared))
            and not fresh_array(tangent, self.d.scope)
        ):
            if kind.tag is Tag.ARRAY:
                method = gast.Attribute(value=tangent, attr="copy", ctx=gast.Load())
                tangent = gast.Call(func=method, args=[], keywords=[])
            else:  # may be a number (np.var(b, ddof=1)): copy.copy copies an array only
                # (the module under a name of its own where the function has a value named
                # copy, w.copy()'s: not a version of that name, which emission may rename)
                module = "copy_module" if "copy" in self.d.namer.taken else "copy"
                method = gast.Attribute(
                    value=name(self.d.bind(module, copy)), attr="copy", ctx=gast.Load()
                )
                tangent = gast.Call(func=method, args=[tangent], keywords=[])
        return [s, _at(assign(dtarget, tangent), s)]

    def tangent(self, primal):
        names = self.d.tangent_names
        if primal not in names:
            names[primal] = self.d.namer.tangent(primal)
        return names[primal]

    def tangent_of(self, atom):
        """The tangent of an atom, or None if it carries none."""
        if isinstance(atom, gast.Name) and self.d.activity.active(atom.id):
            return name(self.tangent(atom.id))
        return None

    def zero_of(self, atom):
        return self.d.zero(atom.id) if isinstance(atom, gast.Name) else gast.Constant(0.0, None)

    def block(self, stmts):
        out = []
        for s in stmts:
            if isinstance(s, gast.Assign):
                out.extend(self.assign(s))
            elif isinstance(s, gast.If):
                new = copy.copy(s)
                new.body = self.block(s.body)
                new.orelse = self.block(s.orelse)
                out.append(new)
            elif isinstance(s, (gast.For, gast.While)):
                new = copy.copy(s)
                new.body = self.block(s.body)
                out.append(new)
            elif isinstance(s, gast.Expr):
                out.extend(self.effect(s))
            else:
                out.append(s)
        return out

    def effect(self, s):
        """``runtime.write_list(xs, xs_2)``, a list argument written back at the end: its tangent
        too (``runtime.write_list(dxs, dxs_2)``), when the caller passed one."""
        site = self.d.site(s.value)
        if site is None or site.fn is not runtime.write_list or not self.d.is_active(site.args[0]):
            return [s]
        given, new = site.args
        tangent = self.tangent_of(new) or self.zero_of(new)
        helper = getattr(s.value.func, "attr", "write_list")  # or write_fields: the same helper
        call = self.d.call_runtime(helper, [self.tangent_of(given), tangent])
        call.keywords = copy_tree(s.value.keywords)  # in_place=: the fields written into
        return [s, _at(gast.Expr(value=call), s)]

    def update(self, s):
        """``a[i] = v`` -> also ``da[i] = dv``: the tangent is updated in place alongside."""
        array = s.targets[0].value.id
        if not self.d.activity.active(array):
            return [s]
        tangent = self.tangent_of(s.value)
        store = gast.Subscript(
            value=name(self.tangent(array)),
            slice=copy_tree(s.targets[0].slice),
            ctx=gast.Store(),
        )
        value = tangent if tangent is not None else gast.Constant(0.0, None)
        return [s, _at(gast.Assign(targets=[store], value=value, type_comment=None), s)]

    def assign(self, s):
        if isinstance(s.targets[0], gast.Subscript):
            return self.update(s)
        target = s.targets[0].id
        if not self.d.activity.active(target):
            return [s]
        value = s.value
        site = self.d.site(value)
        dtarget = self.tangent(target)
        if site is None:
            tangent = self.tangent_of(value)
            if tangent is None:  # the zero of a copy is its source's, whose kind may be known
                source = value.id if isinstance(value, gast.Name) else target
                tangent = _zero_of_number(value) or self.d.zero(source)
            return self.define(s, target, dtarget, tangent)
        if self.d.is_pack(site):
            tangent = self.d.pack_tangent(site, self.tangent_of)
            return self.define(s, target, dtarget, tangent)
        if site.fn is None or self.d.is_user_function(site.fn):
            return self.user_call(s, site, target, dtarget)
        active = self.d.active_args(site)
        entry = lookup(site.fn)
        if entry is not None and entry.linear_in:  # list_with(dxs, i, dv): one call on the tangents
            self.d.rules_used.add(entry.name)
            args = [
                (self.tangent_of(a) or self.zero_of(a)) if i in entry.linear_in else copy_tree(a)
                for i, a in enumerate(site.args)
            ]
            return [
                s,
                _at(
                    assign(dtarget, gast.Call(func=copy_tree(site.func), args=args, keywords=[])),
                    s,
                ),
            ]
        leading = [self.tangent_of(a) for a in site.args]
        terms = [expr for _, expr in self.d.contributions(s, site, target, leading)]
        if not terms:
            return [s, _at(assign(dtarget, self.d.zero(target)), s)]
        tangent = self.d.broadcast_tangent(self.d.total(target, terms), site, active, target)
        return self.define(s, target, dtarget, tangent)

    def user_call(self, s, site, target, dtarget):
        fn = site.fn
        if fn is None:  # g(x) with g a function value: g's forward rule is found when the call runs
            self.d.check_function_value(s, site)
            active = self.d.active_args(site)
            if not active:
                return [s, _at(assign(dtarget, self.d.zero(target)), s)]
            call = self.d.call_function_value(
                s, site, "call_jvp", [self.tangent_of(site.args[i]) for i in active]
            )
            targets = gast.Tuple(
                elts=[name(target, gast.Store()), name(dtarget, gast.Store())], ctx=gast.Store()
            )
            return [_at(gast.Assign(targets=[targets], value=call, type_comment=None), s)]
        site = copy.copy(site)
        form, site.args = self.d.bind_user_call(s, site)
        site.keywords = []
        active = self.d.active_args(site)
        if not active:
            return [s, _at(assign(dtarget, self.d.zero(target)), s)]
        kinds = self.d.callee_kinds(site.args)
        rule = self.d.derive_callee(
            fn, Mode.FORWARD, tuple(active), kinds, self.d.where(s), form, site.func
        )
        self.d.callees.append(rule)
        func = rule.reference("jvp", self.d.namespace)
        args = [copy_tree(a) for a in site.args] + [self.tangent_of(site.args[i]) for i in active]
        call = gast.Call(func=func, args=args, keywords=[])
        targets = gast.Tuple(
            elts=[name(target, gast.Store()), name(dtarget, gast.Store())], ctx=gast.Store()
        )
        return [_at(gast.Assign(targets=[targets], value=call, type_comment=None), s)]


def _at(new, old):
    new.lineno = getattr(old, "lineno", None)
    return new


def forward(derivation, fn, wrt):
    """The forward rule of ``fn`` (SSA) as a new FunctionDef named ``<f>_jvp``."""
    transform = Forward(derivation, updated_arrays(fn.body))
    tangent_params = [name(transform.tangent(w), gast.Param()) for w in wrt]
    # An argument outside wrt that an update makes active starts with a zero tangent.
    body = [
        assign(transform.tangent(a.id), derivation.zero(a.id))
        for a in fn.args.args
        if a.id not in wrt and derivation.activity.active(a.id)
    ]
    body += transform.block(fn.body[:-1])
    result = fn.body[-1].value.id
    dresult = transform.tangent_of(name(result))
    if dresult is None:
        zero_name = transform.tangent(result)
        body.append(assign(zero_name, derivation.zero(result)))
        dresult = name(zero_name)
    ret = gast.Return(value=gast.Tuple(elts=[name(result), dresult], ctx=gast.Load()))
    ret.lineno = getattr(fn.body[-1], "lineno", None)
    body.append(ret)
    new = copy.copy(fn)
    new.name = f"{fn.name}_jvp"
    new.args = copy_tree(fn.args)
    new.args.args = new.args.args + tangent_params
    new.body = body
    return new


def _loads(expr):
    return {n.id for n in gast.walk(expr) if isinstance(n, gast.Name)}


def _zero_of_number(value):
    """``0.0`` (``0j``) for a number written out (``total = 0.0``): its tangent, whatever the
    name's kind becomes later (a loop that adds arrays to it broadcasts the zero)."""
    if isinstance(value, gast.Constant) and type(value.value) in (int, float):
        return gast.Constant(0.0, None)
    if isinstance(value, gast.Constant) and type(value.value) is complex:
        return gast.Constant(0j, None)
    return None
