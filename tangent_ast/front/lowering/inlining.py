"""Inlining: a nested ``def`` (or ``g = lambda ...``) that is only called is inlined.

Takes a call of a local function (:mod:`tangent_ast.front.local_functions` says which can be);
guarantees its body in place of the call, its names renamed apart, so a closure over the
function's variables differentiates like the rest of the code.

>>> from tangent_ast.front.lowering import lower_source
>>> print(lower_source('''
... def f(x, y):
...     def g(a):
...         return a * y
...     return g(x) + g(y)
... '''))
def f(x, y):
    a_1 = x
    a_1_times_y = a_1 * y
    a_2 = y
    a_2_times_y = a_2 * y
    out = a_1_times_y + a_2_times_y
    return out
"""

import copy

import gast

from ...vocabulary.syntax import assign
from ..checks import unsupported


class InliningLowering:
    """The lowering of calls of local functions."""

    def inline(self, call, at):
        """``g(a)`` of a local function ``g``: its body, renamed, then its result."""
        fn_name = call.func.id
        if fn_name in self.inlining:
            raise unsupported(
                self.parsed,
                call,
                f"the local function {fn_name!r} calling itself",
                "define a recursive helper at module level",
            )
        local = self.local[fn_name]
        if (
            call.keywords
            or len(call.args) != len(local.params)
            or any(isinstance(a, gast.Starred) for a in call.args)
        ):
            raise unsupported(
                self.parsed,
                call,
                f"this call of the local function {fn_name!r}",
                "pass exactly its positional parameters",
            )
        pre = []
        renames = {}
        for param, arg in zip(local.params, call.args, strict=True):
            more, atom = self.atom(arg, at)
            pre += more
            renames[param] = self.namer.fresh(param)
            pre.append(assign(renames[param], atom, at))
        body = copy.deepcopy(local.body)
        result = copy.deepcopy(local.result)
        for stored in sorted(
            {
                n.id
                for b in body
                for n in gast.walk(b)
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
            }
        ):
            if stored not in local.shared:  # a nonlocal name is the caller's own
                renames.setdefault(stored, self.namer.fresh(stored))
        for n in [n for b in body + [result] for n in gast.walk(b)]:
            if isinstance(n, gast.Name) and n.id in renames:
                n.id = renames[n.id]
        self.inlining.append(fn_name)
        try:
            pre += self.block(body)
            more, value = self.operation(result, at)
        finally:
            self.inlining.pop()
        return pre + more, value
