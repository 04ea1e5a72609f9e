"""tangent_ast: automatic differentiation of Python/NumPy functions by source transformation.

Importing the package is cheap: the transformer (gast, the pipeline, the rule tables) is
imported the first time one of the names below is used. Generated modules import only
:mod:`tangent_ast.runtime`, which needs nothing but NumPy.
"""

import importlib

from .version import __version__

# public name -> the module that defines it
_EXPORTS = {
    "derive": "api.sessions",
    "grad": "api.api",
    "jvp": "api.api",
    "show": "api.api",
    "value_and_grad": "api.api",
    "vjp": "api.api",
    "hvp": "api.higher_order",
    "hessian": "api.higher_order",
    "jacfwd": "api.higher_order",
    "jacrev": "api.higher_order",
    "linearize": "api.linearization",
    "checkpointed": "runtime.checkpoints",
    "checkpoint": "runtime.checkpoints",
    "def_linear": "rules.registry",
    "defjvp": "rules.registry",
    "defvjp": "rules.registry",
    "elementwise": "rules.registry",
    "handles": "rules.registry",
    "nondifferentiable": "rules.registry",
    "broadcasting": "rules.registry",
    "specialize": "rules.registry",
    "effectful": "rules.registry",
    "pure": "rules.registry",
    "holds_for_complex": "rules.registry",
    "defcomplex": "rules.registry",
    "TangentAstError": "errors",
    "NoSourceError": "errors",
    "UnsupportedSyntaxError": "errors",
    "MissingRuleError": "errors",
    "NotDifferentiableError": "errors",
    "NonScalarOutputError": "errors",
    "InternalError": "errors",
    # a rule on disk edited by hand whose source changed since (warnings.filterwarnings)
    "StaleRuleWarning": "cache.load",
    "StaleRuleError": "cache.load",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name):
    """Import the module that defines ``name`` when it is first used (PEP 562)."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'tangent_ast' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
