"""Rule tables by domain. Importing this package registers every table."""

from . import registry
from .registry import (
    all_primitives,
    broadcasting,
    def_jointly_linear,
    def_linear,
    def_multilinear,
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

    try:  # SciPy is optional: its rules are registered when it is installed
        import scipy.special  # noqa: F401
    except ImportError:
        pass
    else:
        from . import scipy_special  # noqa: F401

# The registry's version once the built-in tables are registered: a table still at it holds
# no rule of the program's, and its rules hash is the one of this install (tangent_ast.cache.cached)
BUILT_IN_VERSION = registry.version()

__all__ = [
    "all_primitives",
    "broadcasting",
    "def_jointly_linear",
    "def_linear",
    "def_multilinear",
    "defjvp",
    "defvjp",
    "elementwise",
    "handles",
    "lookup",
    "nondifferentiable",
    "specialize",
]
