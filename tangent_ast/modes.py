"""The two modes of differentiation, one word each everywhere in tangent_ast.

``Mode.FORWARD`` derives a jvp (``f_jvp(x, dx) -> (y, dy)``); ``Mode.REVERSE`` derives a
pair (``f_fwd(x) -> (y, saved)``, ``f_bwd(saved, ct_y) -> ct_x``). The API takes either the
enum or its value as a string:

>>> Mode.of("reverse")
<Mode.REVERSE: 'reverse'>
>>> Mode.FORWARD.function_names("f")
('f_jvp',)
"""

import os
from enum import Enum

from .errors import TangentAstError


class Mode(str, Enum):
    FORWARD = "forward"
    REVERSE = "reverse"

    def __str__(self):
        return self.value

    @classmethod
    def of(cls, mode):
        """``mode`` (a Mode or its value) as a Mode; a clear error for anything else."""
        try:
            return cls(mode)
        except ValueError:
            raise TangentAstError(
                f"unknown mode {mode!r}",
                hint="use mode='forward' (a jvp) or mode='reverse' (fwd/bwd)",
            ) from None

    def function_names(self, base):
        """The functions a rule of ``base`` in this mode defines."""
        return (f"{base}_jvp",) if self is Mode.FORWARD else (f"{base}_fwd", f"{base}_bwd")


class Route(str, Enum):
    """The two routes to a reverse rule: ``DIRECT`` writes each statement's adjoint from the
    primitive's reverse rule; ``TRANSPOSE`` transposes its forward rule (linearize, unzip,
    transpose), using reverse rules only of linear primitives. ``TANGENT_AST_ROUTE`` sets
    the default:

    >>> Route.of("transpose")
    <Route.TRANSPOSE: 'transpose'>
    """

    DIRECT = "direct"
    TRANSPOSE = "transpose"

    def __str__(self):
        return self.value

    @classmethod
    def of(cls, route):
        """``route`` (a Route, its value, or None: the default) as a Route."""
        if route is None:
            route = os.environ.get("TANGENT_AST_ROUTE") or cls.DIRECT
        try:
            return cls(route)
        except ValueError:
            raise TangentAstError(
                f"unknown route {route!r}",
                hint="use route='direct' or route='transpose' (also in TANGENT_AST_ROUTE)",
            ) from None


class Backend(str, Enum):
    """What runs a derived rule: ``NUMPY``, the Python interpreter calling NumPy (always
    there); ``NUMBA``, the same readable module compiled by ``numba.njit`` (an optional
    extra, ``pip install "tangent_ast[numba]"``), for loops of small operations.

    >>> Backend.of("numba")
    <Backend.NUMBA: 'numba'>
    """

    NUMPY = "numpy"
    NUMBA = "numba"

    def __str__(self):
        return self.value

    @classmethod
    def of(cls, backend):
        """``backend`` (a Backend, its value, or None: NumPy) as a Backend."""
        try:
            return cls(backend or cls.NUMPY)
        except ValueError:
            raise TangentAstError(
                f"unknown backend {backend!r}",
                hint="use backend='numpy' (the default) or backend='numba'",
            ) from None
