"""tangent_ast: automatic differentiation of Python/NumPy functions by source transformation."""

__version__ = "0.1.0"

from . import rules  # noqa: F401  (registers the rule tables)
from .api import derive, grad, jvp, show, value_and_grad, vjp
from .errors import (
    MissingRuleError,
    NonScalarOutputError,
    NoSourceError,
    NotDifferentiableError,
    TangentAstError,
    UnsupportedSyntaxError,
)
from .rules.registry import (
    broadcasting,
    def_linear,
    defjvp,
    defvjp,
    elementwise,
    handles,
    nondifferentiable,
    specialize,
)

__all__ = [
    "MissingRuleError",
    "NoSourceError",
    "NonScalarOutputError",
    "NotDifferentiableError",
    "TangentAstError",
    "UnsupportedSyntaxError",
    "broadcasting",
    "def_linear",
    "defjvp",
    "defvjp",
    "derive",
    "elementwise",
    "grad",
    "handles",
    "jvp",
    "nondifferentiable",
    "show",
    "specialize",
    "value_and_grad",
    "vjp",
]
