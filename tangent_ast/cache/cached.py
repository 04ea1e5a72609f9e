"""A rule from the cache: what using a module on disk needs, and nothing that derives.

Takes a function, mode, ``wrt``, signature and call form, and a cache directory;
guarantees, through :meth:`RuleCache.find`, the :class:`DerivedRule` of the module on disk
when deriving would reuse it, else None (the pipeline's :class:`~tangent_ast.pipeline.Session`,
a RuleCache too, then derives it). The module is reused on the checks the pipeline makes,
in the same functions: its header's source hash, rules hash, tangent_ast version,
``depends`` (the callees' sources and the kinds they read) and ``reads`` are those of the
program now (:meth:`RuleCache.expected_header`, :func:`~tangent_ast.cache.load.state_of`); an edit
of its body by a person is used as it is; a corrupt module, a callee's module missing, or an
edited module whose function changed since (which warns) are left to the pipeline.

It imports no gast, no stage of the transformer and no rule table: a program whose rules
are on disk loads them in milliseconds. The one thing it cannot compute cheaply is the rules
hash, a hash of the rule table: the pipeline records it in the cache directory under
:func:`~tangent_ast.cache.load.rules_fingerprint` (``__pycache__/tangent_ast-rules-hashes``), which
changes whenever it can; a process that
registered rules of its own computes it (see :meth:`RuleCache.rules_hash`).
"""

import importlib
import inspect
import sys
import textwrap
from pathlib import Path

import numpy as np

from ..errors import TangentAstError
from ..modes import Backend, Mode, Route
from ..version import __version__
from ..vocabulary.calling import PLAIN, flat_params
from ..vocabulary.code_keys import cells_key, values_key
from ..vocabulary.kinds import canonical
from ..vocabulary.naming import (
    bounded_prefix,
    digest,
    qualname_part,
    rule_base,
    sanitize,
    source_hash,
)
from .live import dependencies_of, remember_in, source_text
from .load import (
    OnDisk,
    as_on_disk,
    cache_dir,
    closure_rules,
    function_of,
    import_module,
    loadable,
    loaded_values,
    loader_values,
    name_in_cache,
    read_header,
    relative_imports,
    rules_fingerprint,
    state_of,
    write_atomic,
)

# Lines "fingerprint rules-hash". Kept with the directory's bytecode: a value derived from the
# install, not a module of the directory, left out where the directory is listed or packaged
# (tangent-ast generate, a wheel) as bytecode is.
_RULES_HASHES = ("__pycache__", "tangent_ast-rules-hashes")


def wrt_names(params, wrt, qualname, where=None):
    """``wrt`` (an index, a parameter name, or a tuple of them) as parameter names."""
    items = wrt if isinstance(wrt, (tuple, list)) else (wrt,)
    names = []
    for item in items:
        if (
            isinstance(item, int)
            and not isinstance(item, bool)
            and -len(params) <= item < len(params)
        ):
            names.append(params[item])
        elif isinstance(item, str) and item in params:
            names.append(item)
        else:
            raise TangentAstError(
                f"wrt={item!r} is not a parameter of {qualname} (parameters: {', '.join(params)})",
                where=where,
            )
    if len(set(names)) != len(names):
        raise TangentAstError(f"wrt names a parameter twice: {names}", where=where)
    return tuple(names)


def module_name_for(
    fn, mode, wrt, signature, form=PLAIN, route=Route.DIRECT, backend=Backend.NUMPY
):
    sig = "any" if signature is None else sanitize("_".join(str(k) for k in signature)) or "noargs"
    if len(sig) > 40:
        sig = "sig" + digest(sig, 10)
    if mode is Mode.REVERSE and route is Route.TRANSPOSE:
        mode = "reverse_transposed"
    parts = [rule_prefix(fn), mode, "_".join(wrt) or "none", sig]
    parts += [sanitize(str(form))] if form != PLAIN else []
    return "__".join(parts + ([backend.value] if backend is not Backend.NUMPY else []))


def rule_prefix(fn):
    """How the names of the modules of ``fn``'s rules start (``mymodel__loss``)."""
    module = "main" if fn.__module__ == "__main__" else fn.__module__ or "main"
    if name_in_cache(module):  # a derived rule differentiated again: its module's own name,
        module = name_in_cache(module)  # not the cache directory's
    # the code's own qualname: a functools.wraps wrapper must not share its wrapped function's
    # modules
    qualname = getattr(fn.__code__, "co_qualname", fn.__qualname__)
    if fn.__code__.co_name == "<lambda>":  # lambdas share a name: where it is sets them apart
        from ..vocabulary.source import lambda_node  # gast: a lambda's own rule only

        node = lambda_node(fn.__code__)
        qualname = f"{qualname}_line{node.lineno}_col{node.col_offset}"
    prefix = f"{sanitize(module)}__{qualname_part(qualname)}"
    # closures of one def over other functions, or data of other kinds: modules of their own
    cells = cells_key(fn) if fn.__closure__ else ""
    prefix = f"{prefix}_{digest(cells, 6)}" if cells else prefix
    # a function of a closure's rule module, loaded with that closure's data: the rules
    # derived from it are that closure's (another closure's module has other values)
    data = values_key(loaded_values(fn)) if fn.__module__ and name_in_cache(fn.__module__) else ""
    return bounded_prefix(f"{prefix}_{data}" if data else prefix)


def closure_at(fn, via, module_name, directory=None):
    """The closure ``fn`` reads as ``via`` (a free name, or an attribute chain of one), if its
    rules are those of ``module_name``; else None. With ``directory``, also a closure a rule
    of ``module_name`` is derived from a rule of (its header's ``source`` is the closure's
    module: jvp_of_g's forward rule, whose bounded name need not start with ``g``'s)."""
    head, *chain = via.split(".")
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True))
    try:
        value = cells[head].cell_contents if head in cells else fn.__globals__[head]
        for attr in chain:
            value = getattr(value, attr)
    except (KeyError, ValueError, AttributeError):
        return None
    value = getattr(value, "__func__", value)
    if not inspect.isfunction(value):
        return None
    prefix = rule_prefix(value) + "__"
    for _ in range(3):  # the closure's rule, a rule of that rule, of that one
        if module_name.startswith(prefix):
            return value
        source = _source_module(directory, module_name)
        if source is None:
            return None
        module_name = source
    return None


def _source_module(directory, module_name):
    """The module of the cache at ``directory`` that the header of ``module_name`` says it was
    derived from (``source: .main__g__forward__p__float:g_jvp``), or None."""
    if directory is None:
        return None
    try:
        text = (Path(directory) / f"{module_name}.py").read_text()
    except (OSError, UnicodeDecodeError):
        return None
    source = read_header(text).get("source", "").split(" (")[0].partition(":")[0]
    return source[1:] if source.startswith(".") else None


def by_prefix(dependencies):
    """How the names of the rule modules of each function ``dependencies`` reaches start."""
    return {rule_prefix(g) + "__": g for g in dependencies.functions}


class RuleCache:
    """Rules of this process, keyed by function, mode, wrt, signature and call form, and
    the rules on disk in ``directory`` it can use without deriving."""

    def __init__(self, directory=None, strict=False, route=None, backend=None):
        self.directory = cache_dir(directory)
        remember_in(self.directory)
        self.strict = strict
        self.route = Route.of(route)  # how reverse rules are derived
        self.backend = Backend.of(backend)  # what runs them
        self.rules = {}
        self._dependencies = {}
        self.rule_values = {}  # module name -> loader-bound values its rules read
        self._resolving = set()  # derived modules rule_callee is loading (a cycle ends there)

    def find(self, fn, mode=Mode.FORWARD, wrt=0, signature=None, form=PLAIN):
        """The rule of ``fn`` known to this process or on disk and current, else None."""
        fn = getattr(fn, "__func__", fn)
        if not inspect.isfunction(fn) or fn.__code__.co_name == "<lambda>":
            return None  # refused, or a lambda's rule (found by gast): the pipeline's
        mode = Mode.of(mode)
        try:
            wrt = wrt_names(flat_params(fn, form), wrt, fn.__qualname__)
        except (TangentAstError, TypeError, ValueError):
            return None  # the pipeline raises why
        signature = canonical(signature)
        key = (fn, mode, wrt, signature, form)
        known = self.rules.get(key)
        if known is not None:
            current = known.dependencies.current() and as_on_disk(known.module)
            return known if current else None
        module_name = module_name_for(fn, mode, wrt, signature, form, self.route, self.backend)
        expected = self.expected_header(fn)
        path = self.directory / f"{module_name}.py"
        if expected is None or state_of(path, expected) not in (OnDisk.FRESH, OnDisk.EDITED):
            return None
        dependencies = self.dependencies(fn)
        if not loadable(
            self.directory,
            module_name,
            fn,
            self.rule_values,
            by_prefix(dependencies),
            closures=self.closure_callees,
            rules=self.rule_callee,
        ):
            return None
        return self.load(key, module_name, dependencies)

    def closure_callees(self, fn, via, module_name):
        """The closure ``fn`` reads as ``via``, whose rule is ``module_name``, and how the
        names of the rule modules of what it reaches start (None if it is not that)."""
        g = closure_at(fn, via, module_name, self.directory)
        return None if g is None else (g, by_prefix(self.dependencies(g)))

    def load_closure_rules(self, fn, module_name):
        """The values the loader binds to the rules of the closures the module ``module_name``
        of ``fn``'s rule calls: each closure's functions, from its module loaded with its cells."""
        path = self.directory / f"{module_name}.py"
        try:
            text = path.read_text()
        except OSError:
            return {}
        values = {}
        for name, (via, callee_module, function) in closure_rules(text).items():
            g = closure_at(fn, via, callee_module, self.directory)
            if g is None:
                raise TangentAstError(
                    f"{path} calls the rule of the closure {via}, which {fn.__qualname__} no "
                    "longer reads as such",
                    hint=f"delete {path} to derive it again",
                )
            self.load_callees(callee_module, by_prefix(self.dependencies(g)), {callee_module})
            module = import_module(
                self.directory, callee_module, self.bindings(g, callee_module), reload=True
            )
            values[name] = getattr(module, function)
        return values

    def load(self, key, module_name, dependencies, rules_used=()):
        """The rule of ``key`` (fn, mode, wrt, signature, form) from ``module_name`` on disk."""
        fn, mode, wrt, signature, form = key
        # The module imports the rules of its callees (``from .g__reverse... import g_fwd``):
        # load them first, with their own bindings and as they are now on disk.
        self.load_callees(module_name, by_prefix(dependencies), {module_name})
        module = import_module(
            self.directory, module_name, self.bindings(fn, module_name), reload=True
        )
        path = self.directory / f"{module_name}.py"
        rule = DerivedRule(fn, mode, wrt, signature, module, path, rules_used, form, dependencies)
        self.rules[key] = rule
        return rule

    def dependencies(self, fn):
        """``live.Dependencies`` of ``fn`` as the program is now (computed again once it
        changed)."""
        known = self._dependencies.get(fn)
        if known is None or not known.current():
            known = self._dependencies[fn] = dependencies_of(fn)
        return known

    def load_callees(self, module_name, functions, loading):
        """Import the callee rules ``module_name`` imports, each with the values its loader
        binds. ``functions``: how the names of the rule modules of the functions they may be
        the rules of start -> function (``by_prefix``)."""
        path = self.directory / f"{module_name}.py"
        try:
            text = path.read_text()
        except OSError:
            return
        for callee_module in relative_imports(text):
            if callee_module in loading:
                continue
            found = self.rule_callee(callee_module, functions)
            if found is None:
                continue  # not a rule of a function we know: Python's import finds it
            g, g_functions = found
            loading.add(callee_module)
            self.load_callees(callee_module, g_functions, loading)
            import_module(
                self.directory, callee_module, self.bindings(g, callee_module), reload=True
            )

    def rule_callee(self, module_name, functions):
        """The function whose rule the module ``module_name`` is, and how the names of the
        rule modules it imports start; None if it is not known. The function is one of
        ``functions``, as the module's header says, or a function of a derived module the
        header names (``source: .main__f__reverse__x__float:f_fwd``: the rule of a rule, as
        calls of tangent_ast's API in a function make them), that module loaded as the
        rule module it is."""
        g = function_of(module_name, functions, self.directory)
        if g is not None:
            return g, functions
        try:
            text = (self.directory / f"{module_name}.py").read_text()
        except OSError:
            return None
        source = read_header(text).get("source", "").split(" (")[0]
        module, _, qualname = source.partition(":")
        if not module.startswith(".") or module[1:] in self._resolving:
            return None
        self._resolving.add(module[1:])
        try:
            owner = self.derived_module(module[1:], functions)
        finally:
            self._resolving.discard(module[1:])
        g = getattr(owner, qualname, None)
        if not inspect.isfunction(g):
            return None
        return g, functions | by_prefix(self.dependencies(g))

    def derived_module(self, name, functions):
        """The derived module ``name``, loaded: a rule module with the values of the function
        it is the rule of, or a module made on rules (``gradient_function``'s, a linear
        map's; it has no header) after the rule modules it imports; None if neither is known."""
        try:
            text = (self.directory / f"{name}.py").read_text()
        except OSError:
            return None
        if "source" not in read_header(text):
            self.load_callees(name, functions, {name})
            return import_module(self.directory, name, reload=True)
        found = self.rule_callee(name, functions)
        if found is None:
            return None
        g, g_functions = found
        self.load_callees(name, g_functions, {name})
        return import_module(self.directory, name, self.bindings(g, name), reload=True)

    def bindings(self, fn, module_name):
        """What the loader sets in ``module_name``: ``fn``'s own values, and those of the rules
        inlined in it as its latest derivation in this process found them."""
        path = self.directory / f"{module_name}.py"
        known = self.rule_values.get(module_name, {}) | self.load_closure_rules(fn, module_name)
        return loader_values(path, fn, known)

    def expected_header(self, fn):
        """Header fields a fresh module of ``fn`` has, or None if they cannot be known cheaply.

        ``depends``, ``reads`` and ``calls`` cover the functions it reaches and the values
        and code it reads: a module derived against an older callee, a value of another kind
        or another function under a name it reads is stale."""
        try:
            source = source_text(fn)
        except (OSError, TypeError):
            return None
        rules_hash = self.rules_hash()
        if rules_hash is None:
            return None
        dependencies = self.dependencies(fn)
        return {
            "source-hash": source_hash(textwrap.dedent(source)),
            "rules-hash": rules_hash,
            "tangent-ast-version": __version__,
            "depends": dependencies.depends_field(),
            "reads": dependencies.reads_field(),
            "calls": dependencies.calls_field(),
        }

    def rules_hash(self):
        """The rules hash of the rule table of this process, or None if it is not known
        without importing the tables.

        Once the tables are imported (the pipeline, or the program registering rules of its
        own), it is computed from them, and recorded under the fingerprint of the tables'
        files when the table is the built-in one. Before, the table this process would build
        is the built-in one (a rule of the program's own needs the registry imported), whose
        hash is the one recorded under the fingerprint of the files it is built from."""
        if "tangent_ast.rules.registry" in sys.modules:
            from .. import rules
            from ..emit.emit import rule_source_hash

            value = rule_source_hash()
            if rules.registry.version() == rules.BUILT_IN_VERSION:
                self._remember_rules_hash(value)
            return value
        return self._known_rules_hashes().get(rules_fingerprint())

    def _known_rules_hashes(self):
        try:
            text = self.directory.joinpath(*_RULES_HASHES).read_text()
        except (OSError, UnicodeDecodeError):
            return {}
        return dict(line.split(" ", 1) for line in text.splitlines() if line.count(" ") == 1)

    def _remember_rules_hash(self, value):
        known = self._known_rules_hashes()
        fingerprint = rules_fingerprint()
        if known.get(fingerprint) == value:
            return
        known.pop(fingerprint, None)
        # the latest few installs (a virtualenv per project may share one cache)
        lines = [f"{k} {v}" for k, v in list(known.items())[-7:]] + [f"{fingerprint} {value}"]
        write_atomic(self.directory.joinpath(*_RULES_HASHES), "\n".join(lines) + "\n")


class DerivedRule:
    """A derived rule: its module on disk, imported.

    ``source`` is the module text, ``path`` the file. Forward rules are called
    as ``rule(*args, *tangents) -> (out, tangent_out)``; reverse rules expose
    ``rule.fwd(*args) -> (out, saved)`` and ``rule.bwd(saved, ct) -> cotangents``.
    """

    def __init__(
        self, fn, mode, wrt, signature, module, path, rules_used=(), form=PLAIN, dependencies=None
    ):
        self.fn = fn
        self.dependencies = dependencies if dependencies is not None else dependencies_of(fn)
        self.mode = mode
        self.wrt = wrt
        self.signature = signature
        self.module = module
        self.path = path
        self.rules_used = set(rules_used)
        header = read_header(path.read_text())
        self.route = Route.of(header.get("route", Route.DIRECT.value))
        self.backend = Backend.of(header.get("backend"))
        # where a pickle loads it from
        self._place = (str(path.parent), self.route.value, self.backend.value)
        # lines of except clauses the rule leaves to the primal (api.guarded refuses a call
        # that runs one)
        self.handler_lines = header.get("exception-handlers", "").partition("  ")[0]
        params = flat_params(fn, form)
        self.form = form
        # (position, name) of the arguments the function updates in place
        updated = header.get("updates-in-place", "").partition("  ")[0].split()
        self.updates = tuple((params.index(p), p) for p in updated)
        self.params = params
        base = rule_base(fn)
        if mode is Mode.FORWARD:
            self.jvp = getattr(module, f"{base}_jvp")
        else:
            self.fwd = getattr(module, f"{base}_fwd")
            self.bwd = getattr(module, f"{base}_bwd")

    def _repr_html_(self):
        """In a notebook: the rule's module, highlighted."""
        from ..emit.display import escaped, highlighted  # a notebook's: not on a cache hit's path

        return f"<p>{escaped(repr(self))}</p>" + highlighted(self.source)

    def __reduce__(self):
        """Pickled by reference: the function (itself by reference), mode, wrt, signature and
        cache directory; another process loads the module from there or derives it again."""
        return (
            rule_again,
            (self.fn, self.mode.value, self.wrt, self.signature, self.form, *self._place),
        )

    @property
    def source(self):
        return self.path.read_text()

    def check_arguments(self, args):
        """Refuse an argument updated in place that shares memory with another one:
        the rule treats them as separate values, but the function would see one change the other."""
        if not self.updates:
            return

        for i, p in self.updates:
            for j, other in enumerate(args[: len(self.params)]):
                if j != i and (
                    (not isinstance(other, np.ndarray) and other is args[i])
                    or (
                        isinstance(other, np.ndarray)
                        and isinstance(args[i], np.ndarray)
                        and np.may_share_memory(args[i], other)
                    )
                ):
                    raise TangentAstError(
                        f"{self.fn.__qualname__} updates its argument {p!r} in place, and it "
                        "shares memory "
                        f"with argument {self.params[j]!r}: the derivative would treat them as "
                        "two separate "
                        "values",
                        hint=f"pass a copy: {p}.copy()",
                    )

    def __call__(self, *args):
        return self.jvp(*args) if self.mode is Mode.FORWARD else self.fwd(*args)

    def __repr__(self):
        return (
            f"<{self.mode} rule of {self.fn.__qualname__} wrt {', '.join(self.wrt)} at {self.path}>"
        )


_CACHES: dict[tuple, RuleCache] = {}


def rule_again(fn, mode, wrt, signature, form, directory, route="direct", backend="numpy"):
    """A pickled :class:`DerivedRule` in this process: from the cache directory it was
    written to, derived again if it is not there (or stale)."""
    cache = _CACHES.get((directory, route, backend))
    if cache is None:
        cache = RuleCache(directory, route=route, backend=backend)
        _CACHES[(directory, route, backend)] = cache
    found = cache.find(fn, mode, wrt, signature, form)
    if found is not None:
        return found
    # Deriving needs the pipeline, which imports this module: named, as the package's lazy
    # exports are, rather than imported (a rule unpickled where it must be derived again)
    pipeline = importlib.import_module("..pipeline", __package__)
    return pipeline.rule_again(fn, mode, wrt, signature, form, directory, route, backend)
