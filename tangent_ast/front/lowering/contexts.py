"""Context managers: ``with`` blocks, entered and left around their body.

``with m as v: body`` is ``v = runtime.enter_context(m); body; runtime.exit_context(m)``:
calls with effects, which derived code keeps, in order, exactly once, so the body's
statements run inside the context in every rule as in the function
(``warnings.catch_warnings()``, ``np.printoptions(...)``, a timer of yours). The derivative
is the body's: what a context manager does on entering and leaving carries none.
``checks.py`` refuses a block left by ``return``, ``break`` or ``continue``, where the
function would leave the context early.

``np.errstate`` changes how NumPy reports floating-point errors, not any value, and
derived code may compute where the function did not (a reverse sweep): its block keeps
its body only (NumPy may then warn where the ``with`` kept it quiet). Asking NumPy to raise
or to call a function (``all="raise"``) is refused: the primal would stop where the
derived code would not.

>>> from tangent_ast.front.lowering import lower_source
>>> print(lower_source(\'\'\'
... def f(x):
...     with np.errstate(divide="ignore"):
...         y = np.log(x)
...     with np.printoptions(precision=3) as options:
...         z = y * 2.0
...     return z
... \'\'\'))
def f(x):
    y = np.log(x)
    printoptions = np.printoptions(precision=3)
    options = runtime.enter_context(printoptions)
    z = y * 2.0
    runtime.exit_context(printoptions)
    return z
"""

import gast
import numpy as np

from ...vocabulary.syntax import assign, located, name
from ..checks import unsupported

_QUIET = ("ignore", "warn", "print", "log")  # np.errstate settings that change no outcome


class ContextLowering:
    """The lowering of ``with`` blocks."""

    def with_block(self, s):
        """Each context entered in order, the body, each left in the reverse order."""
        if _error_states_only(s, self.scope):
            return self.error_state_block(s)
        pre, managers = [], []
        for item in s.items:
            more, manager = self.atom(item.context_expr, s)
            if not isinstance(manager, gast.Name):
                held = self.namer.fresh("manager")
                more.append(assign(held, manager, s))
                manager = name(held)
            pre += more
            managers.append(manager.id)
            entered = self.runtime_call("enter_context", [name(manager.id)])
            if item.optional_vars is not None:
                pre.append(assign(item.optional_vars.id, entered, s))
            else:
                pre.append(located(gast.Expr(value=entered), s))
        left = [
            located(gast.Expr(value=self.runtime_call("exit_context", [name(m)])), s)
            for m in reversed(managers)
        ]
        return pre + self.block(s.body) + left

    def error_state_block(self, s):
        for item in s.items:
            call = item.context_expr
            if item.optional_vars is not None:
                raise unsupported(self.parsed, s, "np.errstate(...) as a name", "drop the as")
            settings = [kw.value for kw in call.keywords] + list(call.args)
            if not all(isinstance(v, gast.Constant) and v.value in _QUIET for v in settings):
                raise unsupported(
                    self.parsed,
                    s,
                    "np.errstate with a setting other than 'ignore', 'warn', 'print' or 'log'",
                    "the derived code would not stop where the function does: check the "
                    "values with an if and raise instead",
                )
        return self.block(s.body)


def _error_states_only(s, scope):
    """Whether every context of ``s`` is an ``np.errstate(...)``."""
    return all(
        isinstance(item.context_expr, gast.Call)
        and scope.lookup(item.context_expr.func) is np.errstate
        for item in s.items
    )
