"""Errors a user can get from tangent_ast.

Every error names where the problem is (file and line of the user's code) and
what to do about it. Internal failures never surface as bare tracebacks of
the transformer: they are wrapped in one of these.
"""

from .runtime.errors import TangentAstError

__all__ = [
    "ForwardRuleOnly",
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


class ForwardRuleOnly(MissingRuleError):
    """A call of a function whose registered rule is a forward rule only (``defjvp``), met on
    the direct route of reverse mode: differentiating its body instead would ignore the rule
    (a straight-through estimator's gradient would be zero). The session derives the caller
    by the transpose route, which transposes the forward rule."""

    def __init__(self, fn_name):
        super().__init__(
            f"no reverse rule for {fn_name}, which has a forward rule (defjvp) only",
            hint=f"derive with route='transpose' (it transposes {fn_name}'s forward rule), "
            f"or register a reverse rule with @tangent_ast.defvjp({fn_name})",
        )
