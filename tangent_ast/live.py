"""What a derived rule was derived against, and the cheap check that it still is.

A rule is derived from the program as it is at that moment: the function's
code, the functions it calls (and theirs, transitively), and the module-level
values and closure cells they read. In a notebook or after ``importlib.reload``
any of these can be rebound while the rule object lives on. So a rule keeps the
identity of every object its derivation looked up, and each call checks that
looking them up again gives the same objects; if not, the rule is derived (or
reloaded) again.

    def g(x): return SCALE * x          Dependencies of f's rule:
    def f(x): return g(x) * 3.0     ->    f.__code__, f.__defaults__, ...
                                          f.__globals__['g'] is <g>, g.__code__, ...
                                          g.__globals__['SCALE'] is <2.0>

The same walk gives what a module on disk records in its header (``depends``:
the source and data kinds of every function reached; ``reads``: the kinds of
the values the function itself reads), so a module derived against an older
callee or a value of another kind is not reused by a later process either.

>>> SCALE = 2.0
>>> def g(x):
...     return SCALE * x
>>> def f(x):
...     return g(x) * 3.0
>>> dependencies = dependencies_of(f)
>>> dependencies.current()
True
>>> def g(x):  # redefined, as in a notebook
...     return SCALE * x * x
>>> dependencies.current()
False

Libraries (NumPy, SciPy, the standard library, tangent_ast) are not reloaded in
a session: attribute chains into them (``np.linalg.norm``) are not checked on
each call, which keeps the check to a few dictionary lookups.
"""

import builtins
import inspect
import sys
import textwrap
import types

from .derived import portable_name
from .errors import TangentAstError
from .free_names import free_reads_of, source_text
from .kinds import kind_of
from .modes import Mode
from .naming import digest

_MISSING = object()
_LIBRARIES = frozenset(sys.stdlib_module_names) | {"numpy", "scipy", "tangent_ast", "gast"}
# The attributes Dependencies records that every owner of them has.
_ALWAYS_THERE = frozenset(("__code__", "__defaults__", "__kwdefaults__", "cell_contents"))


class Dependencies:
    """The objects a rule was derived against; :attr:`current` says whether they still are."""

    __slots__ = ("_current", "_identity", "attributes", "functions", "in_dicts", "reads")

    def __init__(self, in_dicts, attributes, functions, reads):
        self.in_dicts = tuple(in_dicts)  # (mapping, key, object): globals, module and class dicts
        # (owner, attribute, object): __code__, __defaults__, cells
        self.attributes = tuple(attributes)
        self.functions = tuple(functions)  # user functions reached, the rule's own first
        self.reads = reads  # {function: {name: value}}: data values each reads
        # both made from the lookups above when first asked for: a rule found on disk in a
        # new process is not checked again before it is used
        self._identity = self._current = None

    @property
    def identity(self):
        """``(names, expression)``: the lookups :attr:`current` makes, as an expression of
        ``names``, for a caller to fold into a test of its own (grad's wrapper:
        ``api.same_kinds``)."""
        if self._identity is None:
            self._identity = identity_expression(self.in_dicts, self.attributes)
        return self._identity

    @property
    def current(self):
        """A function of no arguments: True if every lookup the derivation made still gives
        the same object (compiling it costs some 0.2 ms)."""
        if self._current is None:
            self._current = _identity_check(*self.identity)
        return self._current

    def depends_field(self):
        """The header's ``depends``: ``module:qualname=fingerprint`` of every other function
        reached."""
        entries = sorted(
            {
                f"{portable_name(fn.__module__)}:{fn.__qualname__}={self.fingerprint(fn)}"
                for fn in self.functions[1:]
            }
        )
        return " ".join(entries) if entries else "-"

    def reads_field(self):
        """The header's ``reads``: ``name=kind`` of the data values the function itself reads, or
        None."""
        own = self.reads.get(self.functions[0], {}) if self.functions else {}
        return " ".join(f"{n}={_kind(v)}" for n, v in sorted(own.items())) or None

    def fingerprint(self, fn):
        """A hash of ``fn``'s source and the kinds of the data values it reads."""
        text = _source(fn) or repr(fn.__code__.co_code)
        text += "".join(f"\n{n}={_kind(v)}" for n, v in sorted(self.reads.get(fn, {}).items()))
        return digest(text)


def identity_expression(in_dicts, attributes):
    """``(names, text)``: an expression, of the globals ``names`` (named ``_MISSING``,
    ``m0``, ``k0``, ``o0``, ``w0``, ``v0``, ``a0``, ...), True if each ``mapping.get(key)``
    of ``in_dicts`` and each ``owner.attribute`` of ``attributes`` is still its object (a
    missing key: still missing). It raises ValueError for a closure cell emptied since."""
    names = {"_MISSING": _MISSING}
    terms = []
    for i, (mapping, key, obj) in enumerate(in_dicts):
        names[f"m{i}"], names[f"k{i}"], names[f"o{i}"] = mapping, key, obj
        terms.append(f"m{i}.get(k{i}, _MISSING) is o{i}")
    for i, (owner, attribute, obj) in enumerate(attributes):
        names[f"w{i}"], names[f"v{i}"], names[f"a{i}"] = owner, obj, attribute
        # a function's own attributes and a cell's contents are always there (an emptied
        # cell raises ValueError); a class attribute may be missing, or deleted since
        read = (
            f"w{i}.{attribute}" if attribute in _ALWAYS_THERE else f"getattr(w{i}, a{i}, _MISSING)"
        )
        terms.append(f"{read} is v{i}")
    return names, " and ".join(terms) or "True"


def _identity_check(names, expression):
    """A function of no arguments: ``expression`` (of :func:`identity_expression`), False
    where it raises ValueError.

    It runs before every call of a rule (``grad``'s wrapper), so it is one expression of
    those lookups, generated for them, with the objects bound as its globals: no loop, no
    tuple to unpack, half the time of a loop over the tuples."""
    return generated_test("", expression, names, "<tangent_ast.live dependencies>")


def generated_test(params, expression, names, filename):
    """``def test(params): return expression``, compiled with ``names`` as its globals;
    False where the expression raises ValueError: a closure cell emptied since (``del``
    of the closed-over name)."""
    names = dict(names)
    text = (
        f"def test({params}):\n"
        "    try:\n"
        f"        return {expression}\n"
        "    except ValueError:\n"
        "        return False\n"
    )
    exec(compile(text, filename, "exec"), names)
    return names["test"]


def _kind(value):
    return str(kind_of(value))


def _source(fn):
    try:
        return textwrap.dedent(source_text(fn))
    except (OSError, TypeError):
        return None


def is_library(module_name):
    """Code of a library: NumPy's, SciPy's, the standard library's, the transformer's own.
    Not derived rules (``tangent_ast.derived``), and not the runtime: its helpers are NumPy
    code generated rules call, and one without a rule for a mode is derived from its source
    like a user function (differentiating a derived rule again meets them)."""
    module_name = module_name or ""
    for code in ("tangent_ast.runtime", "tangent_ast.derived"):  # derived rules: user code
        if module_name == code or module_name.startswith(f"{code}."):
            return False
    return module_name.partition(".")[0] in _LIBRARIES


def _is_user_function(obj):
    if not inspect.isfunction(obj) or is_library(getattr(obj, "__module__", None)):
        return False

    # a function with rules in both modes is not derived from its source; one with rules
    # for one mode only is, in the other
    entry = user_rules(obj)
    return entry is None or not (entry.has(Mode.FORWARD) and entry.has(Mode.REVERSE))


def user_rules(fn):
    """The rule table's entry of ``fn``, a function that is not a library's (or None).

    Without importing the tables when no entry is possible: the built-in tables give rules
    to library functions and the runtime's helpers only (tests/test_cached.py checks it),
    and every other function gets rules from the program, through ``tangent_ast.defvjp``
    and the rest of the registry, which the program has then imported."""
    registry = sys.modules.get("tangent_ast.rules.registry")
    if registry is None:
        module = getattr(fn, "__module__", None) or ""
        if module != "tangent_ast.runtime" and not module.startswith("tangent_ast.runtime."):
            return None
        from .rules import registry
    return registry.lookup(fn)


def _is_data(value):
    """A value (number, array, container, record), not code: its kind shapes the derivation."""
    return not (callable(value) or isinstance(value, types.ModuleType))


def dependencies_of(fn):
    """The :class:`Dependencies` of a rule of ``fn``: ``fn`` and every user function it
    reaches through its free names and attribute chains, transitively."""
    fn = getattr(fn, "__func__", fn)
    in_dicts, attributes, functions, reads = {}, {}, [], {}
    queue = [fn]
    while queue:
        h = queue.pop(0)
        if h in functions:
            continue
        functions.append(h)
        for attribute in ("__code__", "__defaults__", "__kwdefaults__"):
            attributes[(id(h), attribute)] = (h, attribute, getattr(h, attribute))
        try:
            free = free_reads_of(h)
        except TangentAstError:
            continue  # no source: it is not derived, so only its identity matters
        own_reads = reads.setdefault(h, {})

        def reached(value):
            value = getattr(value, "__func__", value)
            if _is_user_function(value):
                queue.append(value)

        for name, chain in free:
            value = _lookup_name(h, name, in_dicts, attributes)
            if value is _MISSING:
                continue
            if _is_data(value):
                own_reads[name] = value
            reached(value)
            for (
                attr
            ) in chain:  # mod.g, Class.method: the attribute is looked up when the primal runs
                owner = value
                if (
                    isinstance(owner, types.ModuleType) and is_library(owner.__name__)
                ) or not isinstance(owner, (types.ModuleType, type)):
                    break
                value = getattr(owner, attr, _MISSING)
                if isinstance(owner, types.ModuleType):
                    in_dicts[(id(vars(owner)), attr)] = (vars(owner), attr, value)
                else:
                    attributes[(id(owner), attr)] = (owner, attr, value)
                if value is _MISSING:
                    break
                reached(value)
    return Dependencies(in_dicts.values(), attributes.values(), functions, reads)


def _lookup_name(fn, name, in_dicts, attributes):
    """What ``name`` denotes for ``fn`` (closure cell, then global, then builtin), recorded."""
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True))
    if name in cells:
        try:
            value = cells[name].cell_contents
        except ValueError:
            return _MISSING
        attributes[(id(cells[name]), "cell_contents")] = (cells[name], "cell_contents", value)
        return value
    value = fn.__globals__.get(name, _MISSING)
    # A builtin is recorded as "no global of that name": defining one later shadows it.
    in_dicts[(id(fn.__globals__), name)] = (fn.__globals__, name, value)
    if value is _MISSING:
        value = getattr(builtins, name, _MISSING)
    return value
