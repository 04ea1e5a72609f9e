"""The calling convention of derived rules: plain positional parameters.

A derived rule takes every primal parameter positionally, in order, then the
tangents (or returns the cotangents) of the ``wrt`` ones. A function written
with keyword-only parameters, ``*args`` or ``**kwargs`` is derived for one
*call form*: how many positional arguments a call passes beyond the named
parameters (they go to ``*args``) and which keywords it passes that no
parameter names (they go to ``**kwargs``). For that form its parameters are
flattened, and the packed names rebuilt from them at the top::

    def g(x, *rest, scale=1.0, **options):     called as g(a, b, c, tol=t)
        ...
    ->
    def g(x, rest0, rest1, scale, options_tol):
        rest = (rest0, rest1)
        options = {'tol': options_tol}
        ...

Callers bind their arguments the same way (:func:`bind`), filling in
defaults, so one function called in two forms has two rules, and a call
``h(*rest, **options)`` inside ``g`` spreads into ``h(rest0, rest1, tol=options_tol)``.
"""

import inspect

from ..errors import TangentAstError

_NAMED = (
    inspect.Parameter.POSITIONAL_ONLY,
    inspect.Parameter.POSITIONAL_OR_KEYWORD,
    inspect.Parameter.KEYWORD_ONLY,
)


# CallForm and Spread are written out rather than made by @dataclass, which generates their
# methods by compiling their text when this module is imported: ~1 ms of every program
# that loads a rule from the cache.
class CallForm:
    """What a call passes beyond the named parameters: immutable, and equal (and hashed) by
    its fields, a key of rules (what ``@dataclass(frozen=True)`` would make)."""

    __match_args__ = ("extra_positional", "extra_keywords")

    def __init__(self, extra_positional=0, extra_keywords=()):
        object.__setattr__(self, "extra_positional", extra_positional)  # into *args
        object.__setattr__(self, "extra_keywords", extra_keywords)  # into **kwargs, sorted

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name):
        raise AttributeError(f"cannot delete field {name!r}")

    def _fields(self):
        return (self.extra_positional, self.extra_keywords)

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self):
        return hash(self._fields())

    def __repr__(self):
        return (
            f"CallForm(extra_positional={self.extra_positional!r}, "
            f"extra_keywords={self.extra_keywords!r})"
        )

    def __str__(self):
        parts = [f"args{self.extra_positional}"] if self.extra_positional else []
        parts += ["kw_" + "_".join(self.extra_keywords)] if self.extra_keywords else []
        return "_".join(parts)


PLAIN = CallForm()


class Spread:
    """Packed parameters of a flattened function, by the names they were flattened into."""

    def __init__(self, positional=None, keywords=None, rebound=None):
        # "rest" -> ["rest0", "rest1"]
        self.positional = {} if positional is None else positional
        # "options" -> {"tol": "options_tol"}
        self.keywords = {} if keywords is None else keywords
        # packed names assigned in the body: not spread
        self.rebound = set() if rebound is None else rebound

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.positional, self.keywords, self.rebound) == (
            other.positional,
            other.keywords,
            other.rebound,
        )

    __hash__ = None  # type: ignore[assignment]  # mutable, as a dataclass's

    def __repr__(self):
        return (
            f"Spread(positional={self.positional!r}, keywords={self.keywords!r}, "
            f"rebound={self.rebound!r})"
        )

    def describe(self):
        """``*rest -> rest0, rest1; **options -> options_tol`` for a module header."""
        parts = [
            f"*{packed} -> {', '.join(items) or '()'}" for packed, items in self.positional.items()
        ]
        parts += [
            f"**{packed} -> {', '.join(items.values()) or '{}'}"
            for packed, items in self.keywords.items()
        ]
        return "; ".join(parts)

    def items(self, packed):
        """The names ``*packed`` spreads into, or None."""
        return None if packed in self.rebound else self.positional.get(packed)

    def keys(self, packed):
        """``{key: name}`` that ``**packed`` spreads into, or None."""
        return None if packed in self.rebound else self.keywords.get(packed)


class CallMismatch(TypeError):
    """A call whose arguments do not fit the function's parameters."""


def _parameters(fn):
    return list(inspect.signature(fn, follow_wrapped=False).parameters.values())


def plain_arity(fn):
    """How many arguments ``fn`` takes when a call passing that many positionally needs
    no binding; -1 for keyword-only, positional-only, ``*args``, ``**kwargs`` parameters
    (None for a non-function). Read from the code object: this is on the call path."""
    if not inspect.isfunction(fn):
        return None
    code = fn.__code__
    if (
        code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
        or code.co_kwonlyargcount
        or code.co_posonlyargcount
    ):
        return -1
    return code.co_argcount


def flat_arguments(f, args, kwargs):
    """``(form, arguments)`` of the call ``f(*args, **kwargs)`` in the order derived rules
    take them: every parameter positionally, defaults filled in, the given positional
    arguments first."""
    if inspect.ismethod(f):
        raise TangentAstError(
            f"{f.__qualname__} is a bound method: its rule takes the object as its first argument",
            hint=f"differentiate the function and pass the object: "
            f"grad({f.__qualname__}, wrt=1)(obj, ...)",
        )
    fn = getattr(f, "__func__", f)
    if not inspect.isfunction(fn) or (not kwargs and len(args) == plain_arity(fn)):
        # (a non-function is refused, with the reason, when its rule is asked for)
        return PLAIN, tuple(args)
    try:
        form, flat = bind(fn, args, kwargs, lambda p: p.default)
    except CallMismatch as exc:
        raise TangentAstError(
            f"the call does not fit {fn.__qualname__}: {exc}",
            hint=f"parameters: {inspect.signature(fn, follow_wrapped=False)}",
        ) from None
    return form, tuple(flat)


def _item_name(base, key, taken):
    # rest0, not rest_0: a _N suffix means an SSA version (naming.py)
    candidate = f"{base}{key}" if isinstance(key, int) else f"{base}_{key}"
    while candidate in taken:
        candidate += "_"
    return candidate


def _taken(fn):
    code = fn.__code__
    return (
        set(code.co_varnames) | set(code.co_names) | set(code.co_freevars) | set(code.co_cellvars)
    )


def flat_params(fn, form=PLAIN):
    """The parameter names of ``fn`` flattened for calls of ``form``."""
    names, taken = [], _taken(fn)
    for p in _parameters(fn):
        if p.kind in _NAMED:
            names.append(p.name)
        elif p.kind is p.VAR_POSITIONAL:
            names += [_item_name(p.name, i, taken) for i in range(form.extra_positional)]
        else:
            names += [_item_name(p.name, k, taken) for k in form.extra_keywords]
    return names


def bind(fn, args, keywords, default):
    """``(form, values)``: the call ``fn(*args, **keywords)`` with its arguments in
    flattened parameter order; a missing argument is ``default(parameter)``.
    Raises :class:`CallMismatch` when the call does not fit."""
    params = _parameters(fn)
    try:
        bound = inspect.Signature(params).bind(*args, **keywords).arguments
    except TypeError as exc:
        raise CallMismatch(str(exc)) from None
    values, extra_positional, extra_keywords = [], 0, ()
    for p in params:
        if p.kind in _NAMED:
            if p.name in bound:
                values.append(bound[p.name])
            elif p.default is not p.empty:
                values.append(default(p))
            else:
                raise CallMismatch(f"missing argument {p.name!r}")
        elif p.kind is p.VAR_POSITIONAL:
            extra = bound.get(p.name, ())
            extra_positional = len(extra)
            values += list(extra)
        else:
            extra = bound.get(p.name, {})
            extra_keywords = tuple(sorted(extra))
            values += [extra[k] for k in extra_keywords]
    return CallForm(extra_positional, extra_keywords), values


def unbind(fn, form, values):
    """``(args, kwargs)`` that call ``fn`` as the flattened ``values`` say (the inverse of
    :func:`bind`)."""
    args, kwargs, items = [], {}, iter(values)
    for p in _parameters(fn):
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            args.append(next(items))
        elif p.kind is p.VAR_POSITIONAL:
            args += [next(items) for _ in range(form.extra_positional)]
        elif p.kind is p.KEYWORD_ONLY:
            kwargs[p.name] = next(items)
        else:
            kwargs.update((k, next(items)) for k in form.extra_keywords)
    return args, kwargs


def flatten(parsed, form=PLAIN):
    """Give ``parsed.node`` plain positional parameters for calls of ``form``.

    Returns the :class:`Spread` of its packed parameters (so ``*rest`` and
    ``**options`` can be spread into the names they hold)."""
    import gast  # only a derivation rewrites trees: loading a rule from the cache needs none

    from .trees import walk

    node, fn = parsed.node, parsed.fn
    args = node.args
    names = flat_params(fn, form)
    spread = Spread()
    prologue = []
    at = {"lineno": node.lineno, "col_offset": node.col_offset}
    stored = {
        n.id for n in walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
    }
    position = len(args.posonlyargs) + len(args.args)
    if args.vararg is not None:
        items = names[position : position + form.extra_positional]
        position += form.extra_positional
        pack = gast.Tuple(
            elts=[gast.Name(i, gast.Load(), None, None) for i in items], ctx=gast.Load()
        )
        prologue.append(
            gast.Assign(
                targets=[gast.Name(args.vararg.id, gast.Store(), None, None)],
                value=pack,
                type_comment=None,
                **at,
            )
        )
        spread.positional[args.vararg.id] = items
    position += len(args.kwonlyargs)
    if args.kwarg is not None:
        items = dict(zip(form.extra_keywords, names[position:], strict=True))
        pack = gast.Dict(
            keys=[gast.Constant(k, None) for k in items],
            values=[gast.Name(i, gast.Load(), None, None) for i in items.values()],
        )
        prologue.append(
            gast.Assign(
                targets=[gast.Name(args.kwarg.id, gast.Store(), None, None)],
                value=pack,
                type_comment=None,
                **at,
            )
        )
        spread.keywords[args.kwarg.id] = items
    spread.rebound = stored & (set(spread.positional) | set(spread.keywords))
    node.args = positional(gast.Name(n, gast.Param(), None, None) for n in names)
    for a in node.args.args:
        a.lineno, a.col_offset = node.lineno, node.col_offset
    docstring = (
        node.body[:1]
        if node.body
        and isinstance(node.body[0], gast.Expr)
        and isinstance(node.body[0].value, gast.Constant)
        and isinstance(node.body[0].value.value, str)
        else []
    )
    node.body = docstring + prologue + node.body[len(docstring) :]
    return spread


def positional(params):
    """The ``gast.arguments`` of a function taking ``params`` (gast Names) positionally."""
    import gast  # as above: only a derivation builds trees

    return gast.arguments(
        args=list(params),
        posonlyargs=[],
        vararg=None,
        kwonlyargs=[],
        kw_defaults=[],
        kwarg=None,
        defaults=[],
    )
