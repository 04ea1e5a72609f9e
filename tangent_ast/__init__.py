"""tangent_ast: automatic differentiation of Python/NumPy functions by source transformation."""

__version__ = "0.1.0"

from . import rules  # noqa: E402,F401  (registers the rule tables)
from .api import derive, grad, jvp, show, value_and_grad, vjp  # noqa: E402
from .errors import (MissingRuleError, NoSourceError, NonScalarOutputError,  # noqa: E402
                     NotDifferentiableError, TangentAstError, UnsupportedSyntaxError)
from .rules.registry import (broadcasting, def_linear, defjvp, defvjp, elementwise,  # noqa: E402
                             handles, nondifferentiable, specialize)

__all__ = ["derive", "grad", "jvp", "show", "value_and_grad", "vjp",
           "defjvp", "defvjp", "def_linear", "elementwise", "handles", "nondifferentiable", "broadcasting",
           "specialize", "TangentAstError", "NoSourceError", "UnsupportedSyntaxError",
           "MissingRuleError", "NotDifferentiableError", "NonScalarOutputError"]
