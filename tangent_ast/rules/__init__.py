"""Rule tables by domain. Importing this package registers every table."""

from . import registry
from .registry import (
    all_primitives,
    broadcasting,
    def_jointly_linear,
    def_linear,
    defjvp,
    defvjp,
    elementwise,
    handles,
    lookup,
    nondifferentiable,
    specialize,
)

with registry.deferred():  # the tables' rules are parsed when first used
    from . import builtins, linalg, math, numpy, operators, runtime_helpers  # noqa: F401

__all__ = [
    "all_primitives",
    "broadcasting",
    "def_jointly_linear",
    "def_linear",
    "defjvp",
    "defvjp",
    "elementwise",
    "handles",
    "lookup",
    "nondifferentiable",
    "specialize",
]
