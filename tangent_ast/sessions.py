"""``derive``, and the sessions every public function gets its rules from.

Takes a function, a mode, ``wrt`` and example arguments; guarantees the rule of the cache
directory's module when it is current there (:meth:`~tangent_ast.cached.RuleCache.find`),
else the rule the pipeline derives. Kept apart from :mod:`tangent_ast.api`, which imports
it: a program whose rules are on disk imports this module and what finding them needs,
not the rest of the public functions (some 0.5 ms of a cached rule's start-up).
"""

from .cached import RuleCache
from .calling import PLAIN, flat_arguments
from .kinds import signature_of
from .modes import Mode, Route
from .wrappers import as_function


class _Session(RuleCache):
    """The rules of one cache directory and route: from the cache while they are current
    there, else from the pipeline's :class:`~tangent_ast.pipeline.Session`, which shares
    what this one knows. The transformer (gast, every stage, the rule tables) is imported
    when a rule must be derived, not to find that one need not be."""

    def __init__(self, directory=None, strict=False, route=None):
        super().__init__(directory, strict, route)
        self._deriving = None

    def rule(self, fn, mode=Mode.FORWARD, wrt=0, signature=None, form=PLAIN):
        """The rule of ``fn`` for calls of ``form`` with arguments of ``signature``."""
        if self._deriving is None:
            found = self.find(fn, mode, wrt, signature, form)
            if found is not None:
                return found
        return self.deriving().rule(fn, mode, wrt, signature, form)

    def deriving(self):
        """The pipeline's session, holding the rules and program state found so far."""
        if self._deriving is None:
            from .pipeline import Session

            session = Session(self.directory, self.strict, self.route)
            session.rules, session.rule_values = self.rules, self.rule_values
            session._dependencies = self._dependencies
            self._deriving = session
        return self._deriving


_SESSIONS: dict[tuple, _Session] = {}


def _session(cache=None, strict=False, route=None):
    """The session deriving rules into ``cache`` by ``route`` (None: ``TANGENT_AST_ROUTE``,
    else the direct route)."""
    route = Route.of(route)
    key = (str(cache) if cache is not None else None, strict, route)
    if key not in _SESSIONS:
        _SESSIONS[key] = _Session(cache, strict, route)
    return _SESSIONS[key]


def derive(
    f, mode="forward", wrt=0, *, args=None, kwargs=None, cache=None, strict=False, route=None
):
    """The derived rule of ``f``: a module written to the cache and imported.

    ``wrt``: a parameter index or name, or a tuple of them. ``args`` (and
    ``kwargs``): example arguments; the rule is then specialised to their kinds
    (Python float, ndarray of given ndim, ...) and, for a function with
    ``*args``/``**kwargs``, to how many and which extra arguments they pass.
    Without them a generic rule is derived. The rule takes every parameter
    positionally, defaults included (see ``DerivedRule.params``).
    ``route``: how a reverse rule is derived, ``"direct"`` (each statement's adjoint from
    its reverse rule) or ``"transpose"`` (its forward rule transposed); the default is
    ``TANGENT_AST_ROUTE``, else direct.
    Returns a :class:`~tangent_ast.cached.DerivedRule` with ``.source``,
    ``.path`` and the generated functions (``.jvp``, or ``.fwd``/``.bwd``).
    """
    session = _session(cache, strict, route)
    f = as_function(f, session.directory)
    if args is None and kwargs is None:
        return session.rule(f, mode, wrt, None)
    form, flat = flat_arguments(f, tuple(args or ()), kwargs or {})
    return session.rule(f, mode, wrt, signature_of(flat), form)
