"""Complex values inside a derivation: which values may be complex, and what that asks of
the rules and cotangents (a mixin of :class:`tangent_ast.transform.derivatives.Derivation`).

Takes the derivation's kinds; guarantees that in reverse mode the cotangent of a real
value is real (``dL = Re(ct * dz)``, JAX's convention), that a value computed from
complex ones whose kind is not known is never taken as real (its rules must hold for
complex values, or it is refused), and that a callee's rule is derived for a parameter
marked *maybe complex* where the caller passes such a value.

The cotangent of the real ``x`` is the real part of what reaches it:

>>> import numpy as np, tangent_ast as ta
>>> def f(x):
...     return np.real(np.exp(1j * x))
>>> print(ta.show(f, mode="reverse", stage="simplify", args=(0.5,)))
def f_fwd(x):
    exp = np.exp(1j * x)
    out = np.real(exp)
    return (out, (exp,))
<BLANKLINE>
def f_bwd(saved, ct_out):
    exp, = saved
    ct_x = np.real(ct_out * exp * 1j)
    return ct_x
<BLANKLINE>
"""

import gast
import numpy as np

from ..analysis.activity import assignments
from ..errors import UnsupportedSyntaxError
from ..rules.registry import lookup
from ..vocabulary.kinds import (
    ALWAYS_REAL,
    UNKNOWN,
    has_complex,
    holds_maybe_complex,
    is_complex,
    is_real,
    possibly_complex,
    type_unknown,
)
from ..vocabulary.syntax import attribute
from ..vocabulary.trees import copy_tree, walk


class ComplexValues:
    """What the derivation knows of complex values (``self.complex_involved``: the names
    computed from complex values, filled by :meth:`check_complex`)."""

    def check_complex(self, fn):
        """Complex values may carry a derivative inside a function (``np.exp(1j * x)``,
        ``np.fft.fft(x)``), in the convention ``dL = Re(ct * dz)``: the cotangent of a real
        value is the real part of what reaches it. Find the values computed from complex ones
        (through values not known to be real), and refuse one that joins paths (a loop
        header, a branch join) without a known kind: its cotangent would flow on to a real
        value unprojected."""
        statements = list(assignments(fn.body))
        involved = self.complex_involved
        complex_flows = any(has_complex(k) for k in self.kinds.values())
        # a parameter a caller passed a value computed from complex ones, of a kind it could
        # not tell; or, where complex values flow, any parameter of a kind not known (a
        # cotangent passed on): it may be complex, never taken as real
        involved.update(
            a.id
            for a in fn.args.args
            if holds_maybe_complex(k := self.kinds.get(a.id, UNKNOWN))
            or (complex_flows and type_unknown(k))
        )
        for _ in range(len(statements) + 1):  # until nothing changes (loops read later names)
            before = len(involved)
            for s in statements:
                target = target_name(s)
                if has_complex(self.kinds.get(target, UNKNOWN)) or (
                    not self.always_real(s.value)
                    and any(self.may_be_complex(n) for n in walk(s.value))
                ):
                    involved.add(target)
            if len(involved) == before:
                break
        counts = {}
        for s in statements:
            counts[target_name(s)] = counts.get(target_name(s), 0) + 1
        for s in statements:
            target = target_name(s)
            kind = self.kinds.get(target, UNKNOWN)
            if (
                counts[target] > 1
                and target in involved
                and self.activity.active(target)
                and type_unknown(kind)
            ):
                raise UnsupportedSyntaxError(
                    f"{self.origin.get(target, target)!r} is real on one path and complex on "
                    "another (or computed from complex values, of a kind not known)",
                    where=self.where(s),
                    hint="make it complex on every path: start a sum at 0j rather than 0.0, or "
                    "take np.real(...) of it where it is assigned",
                )

    def always_real(self, value):
        """A call whose result is real whatever its argument (``np.abs``, ``np.real``,
        ``np.imag``, ``np.angle``): not computed from complex values, though it reads them."""
        site = self.site(value)
        entry = lookup(site.fn) if site is not None and site.fn is not None else None
        return entry is not None and entry.kind in ALWAYS_REAL

    def callee_kinds(self, args):
        """The signature a callee's rule is derived for: the kinds of ``args``, where one
        may be complex and of a type not known, marked so (its rules must hold for both)."""
        return tuple(
            possibly_complex(self.kind(a)) if self.may_be_complex(a) else self.kind(a) for a in args
        )

    def may_be_complex(self, node):
        """A name or constant of complex kind, or computed from complex values and not known
        to be real."""
        if isinstance(node, gast.Name) and node.id in self.complex_involved:
            return not is_real(self.kind(node))
        return isinstance(node, (gast.Name, gast.Constant)) and has_complex(self.kind(node))

    def real_cotangent(self, node, entry, site, i, target, expr, complex_rule=False):
        """Reverse mode: where an operation meets complex values (or a complex rule meets a
        value of a kind not known), the cotangent of a real argument is the real part of the
        rule's (``dL = Re(ct * dx)`` with ``dx`` real)."""
        if not (
            complex_rule
            or any(self.may_be_complex(a) for a in site.args)
            or has_complex(self.kinds.get(target, UNKNOWN))
            or (target in self.complex_involved and not is_real(self.kinds.get(target, UNKNOWN)))
        ):
            return expr
        arg = self.kind(site.args[i])
        if is_real(arg):
            return gast.Call(func=attribute(self.bind("np", np), "real"), args=[expr], keywords=[])
        if is_complex(arg) or arg.container:
            return expr
        return self.call_runtime("real_like", [expr, copy_tree(site.args[i])])


def target_name(s):
    """The name an assignment (``v = ...`` or ``v[i] = ...``) assigns."""
    target = s.targets[0]
    return target.value.id if isinstance(target, gast.Subscript) else target.id
