"""Stage activity: which values carry derivatives.

Takes the SSA function, its kinds, the ``wrt`` parameters and a way to tell
whether a call is differentiable; guarantees :class:`Activity`, where a name
is *varied* if it depends differentiably on a ``wrt`` input, *useful* if the
result depends on it, and *active* if both. Only active values get
derivative code.

In the forward rule below, ``k`` depends on ``n`` only: it gets no tangent.

>>> import tangent_ast as ta
>>> def f(x, n):
...     y = x * n
...     k = n + 1
...     z = y * k
...     return z
>>> print(ta.show(f, stage="forward", args=(1.5, 2)))
def f_jvp(x, n, dx):
    y = x * n
    dy = dx * n
    k = n + 1
    z = y * k
    dz = dy * k
    return (z, dz)
<BLANKLINE>
"""

from dataclasses import dataclass, field

import gast

from ..vocabulary.kinds import UNKNOWN
from ..vocabulary.trees import walk


@dataclass
class Activity:
    varied: set = field(default_factory=set)
    useful: set = field(default_factory=set)
    # depends on a wrt input in any way (a closure made from it)
    reached: set = field(default_factory=set)

    def active(self, name):
        return name in self.varied and name in self.useful

    @property
    def active_names(self):
        return self.varied & self.useful


def updated_name(stmt):
    """``a`` for an in-place update ``a[i] = v``, else None."""
    target = stmt.targets[0]
    return target.value.id if isinstance(target, gast.Subscript) else None


def assignments(stmts):
    """Every assignment of ``stmts``, nested blocks included, in program order."""
    for s in stmts:
        if isinstance(s, gast.Assign):
            yield s
        elif isinstance(s, gast.If):
            yield from assignments(s.body)
            yield from assignments(s.orelse)
        elif isinstance(s, (gast.For, gast.While)):
            yield from assignments(s.body)


def analyze(fn, kinds, wrt, differentiable_args, outputs=(), called_value=None):
    """``differentiable_args(value) -> set of argument names that flow differentiably``;
    ``outputs``: names whose tangents are results besides the returned value's (in forward
    mode, an argument's state after the call: its tangent is updated alongside it);
    ``called_value(value)``: the local function value ``value`` calls, if any (the result of
    a function value made from varied values varies, and is refused where it is used)."""
    assigns = list(assignments(fn.body))
    # An in-place update a[i] = v makes a depend on v (a keeps its name).
    flows = [(updated_name(s) or s.targets[0].id, differentiable_args(s.value)) for s in assigns]
    called = [called_value(s.value) if called_value else set() for s in assigns]
    varied = {w for w in wrt}
    changed = True
    while changed:
        changed = False
        for (target, sources), function in zip(flows, called, strict=True):
            sources = sources | function
            if (
                target not in varied
                and sources & varied
                and kinds.get(target, UNKNOWN).differentiable
            ):
                varied.add(target)
                changed = True
    reached = _closure(
        set(wrt),
        [
            (
                updated_name(s) or s.targets[0].id,
                {n.id for n in walk(s.value) if isinstance(n, gast.Name)},
            )
            for s in assigns
        ],
    )
    result = fn.body[-1].value.id
    useful = {result} | set(outputs)
    # (a useful array updated in place makes what is written into it useful)
    changed = True
    while changed:
        changed = False
        for target, sources in reversed(flows):
            if target in useful and not sources <= useful:
                useful |= sources
                changed = True
    return Activity(varied=varied, useful=useful, reached=reached)


def _closure(names, flows):
    """``names`` and every target whose sources meet them, transitively."""
    changed = True
    while changed:
        changed = False
        for target, sources in flows:
            if target not in names and sources & names:
                names.add(target)
                changed = True
    return names
