"""The base class of tangent_ast's errors, here so that generated code needs only the runtime.

A derived rule that meets a value it was not derived for raises it at run time; the
transformer's own errors (:mod:`tangent_ast.errors`) derive from it.
"""


class TangentAstError(Exception):
    """Base class of every error tangent_ast raises on purpose."""

    def __init__(self, message, *, where=None, hint=None):
        self.message = message
        self.where = where
        self.hint = hint
        text = f"{where}: {message}" if where else message
        if hint:
            text += f"\n  hint: {hint}"
        super().__init__(text)
