"""Context managers: ``with np.errstate(...)`` keeps its body, and only its body.

``np.errstate`` changes how NumPy reports floating-point errors, not any value, so the
derivative is that of the body; the derived code runs the body as written (NumPy may
then warn where the ``with`` kept it quiet). Asking NumPy to raise or to call a function
(``all="raise"``) is refused: the primal would stop where the derived code would not.
Other context managers are refused by :mod:`tangent_ast.front.checks`.

>>> from tangent_ast.front.lowering import lower_source
>>> print(lower_source(\'\'\'
... def f(x):
...     with np.errstate(divide="ignore"):
...         y = np.log(x)
...     return y
... \'\'\'))
def f(x):
    y = np.log(x)
    return y
"""

import gast
import numpy as np

from ..checks import unsupported

_QUIET = ("ignore", "warn", "print", "log")  # np.errstate settings that change no outcome


class ContextLowering:
    """The lowering of ``with`` blocks."""

    def error_state_block(self, s):
        for item in s.items:
            call = item.context_expr
            if self.scope.lookup(call.func) is not np.errstate:
                raise unsupported(self.parsed, s, "a with block", "move it outside the function")
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
