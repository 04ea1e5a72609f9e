"""Errors a user can get from tangent_ast.

Every error names where the problem is (file and line of the user's code) and
what to do about it. Internal failures never surface as bare tracebacks of
the transformer: they are wrapped in one of these.
"""

from .runtime.errors import TangentAstError

__all__ = [
    "InternalError",
    "MissingRuleError",
    "NoSourceError",
    "NonScalarOutputError",
    "NotDifferentiableError",
    "TangentAstError",
    "UnsupportedSyntaxError",
]


class NoSourceError(TangentAstError):
    """The function's source code cannot be read (builtins, C extensions, exec)."""


class UnsupportedSyntaxError(TangentAstError):
    """The function uses a construct the transformer does not handle."""


class MissingRuleError(TangentAstError):
    """A called function has no rule for the requested mode and no source."""


class NotDifferentiableError(TangentAstError):
    """A requested input or output cannot carry a derivative (int, str, ...)."""


class NonScalarOutputError(TangentAstError):
    """grad was asked for the gradient of a function whose output is not a scalar."""


class InternalError(TangentAstError):
    """A bug of tangent_ast itself, not of the program being differentiated: it names the
    function being derived and, for a failure inside generated code, the generated line."""
