"""Stage load: write a generated module to the cache and import it.

Takes generated module text and its name; guarantees an imported module
object. Modules live in one directory (the cache: ``TANGENT_AST_CACHE``,
else ``$XDG_CACHE_HOME/tangent_ast``, else ``~/.cache/tangent_ast``), which is
imported as a package so derived rules can import each other
(``from .g__reverse__x__float import g_fwd``).

* Writes are atomic (temporary file + rename): a reader never sees half a file.
* A module whose header matches (source hash, rules hash, tool version, the
  hashes of the functions it calls) is reused without deriving again.
* A module the user edited (its body no longer matches its body-hash) is used
  as it is and never overwritten; if its source changed since, a
  :class:`StaleRuleWarning` says so (an error under ``strict``).
* A corrupted or truncated module (bad header, does not compile) is derived again.

The header's fields and hashes (:func:`read_header`, :func:`body_hash_of`,
:func:`rules_fingerprint`) are those the emit stage writes, computed with the standard
library only: checking a module on disk imports nothing of the transformer (see
:mod:`tangent_ast.cache.cached`).

>>> import tangent_ast as ta
>>> def f(x):
...     return x * x
>>> rule = ta.derive(f, args=(3.0,))
>>> rule.path.name, rule.jvp(3.0, 1.0)
('...__f__forward__x__float.py', (9.0, 6.0))
>>> state_of(rule.path, {})
<OnDisk.FRESH: 'fresh'>
"""

import ast
import contextlib
import importlib
import importlib.util
import os
import sys
import time
import types
import warnings
from enum import Enum
from pathlib import Path

import numpy as np

from .. import derived
from ..errors import TangentAstError
from ..modes import Mode
from ..version import __version__
from ..vocabulary.naming import digest, sanitize, sha256
from .live import free_reads_of


class OnDisk(Enum):
    """What the cache holds for a rule: whether it can be used, and whether a person edited it."""

    MISSING = "missing"
    CORRUPT = "corrupt"  # unreadable, not Python, or missing a function: derived again
    FRESH = "fresh"
    STALE = "stale"  # derived from an older source (or rules, or callees): derived again
    EDITED = "edited"  # edited by hand, source unchanged: used as it is
    EDITED_STALE = "edited-stale"  # edited by hand, source changed since: used, with a warning


class StaleRuleWarning(UserWarning):
    """An edited generated rule no longer matches the source it was derived from."""


class StaleRuleError(TangentAstError):
    """Under ``strict``: an edited generated rule is stale."""


def cache_dir(override=None):
    if override is not None:
        path = Path(override)
    elif os.environ.get("TANGENT_AST_CACHE"):
        path = Path(os.environ["TANGENT_AST_CACHE"])
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        path = Path(base) / "tangent_ast"
    if not path.is_dir():  # (mkdir raises and catches FileExistsError where it is)
        path.mkdir(parents=True, exist_ok=True)
    return path.resolve()


def package_for(directory):
    """The package whose submodules are the files in ``directory``: named after it, so that
    another process imports them by the same names (:mod:`tangent_ast.derived`)."""
    directory = str(directory)
    name = f"{derived.__name__}.{derived.directory_name(directory)}"
    package = sys.modules.get(name)
    if package is None:
        package = types.ModuleType(name)
        package.__path__ = [directory]
        package.__package__ = name
        sys.modules[name] = package
    return name


def name_in_cache(module_name):
    """The name a module of a cache directory has in it (``mymodel__loss__reverse...``), or
    None for a module that is not one."""
    prefix = f"{derived.__name__}."
    if not module_name.startswith(prefix):
        return None
    return module_name[len(prefix) :].partition(".")[2] or None


def write_atomic(path, text):
    import tempfile  # costs milliseconds: only when something is written

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read_header(text):
    """The ``# key: value`` lines of a generated module's header.

    >>> read_header("# source-hash: 5aed805cb838d912\\n# mode: reverse\\nimport numpy as np\\n")
    {'source-hash': '5aed805cb838d912', 'mode': 'reverse'}
    """
    fields = {}
    # a line starting "def " ends the loop at the latest: what follows it is not split
    end = text.find("\ndef ")
    for line in (text if end < 0 else text[:end]).splitlines():
        if line.startswith("# ") and ": " in line:
            key, _, value = line[2:].partition(": ")
            if key.replace("-", "").isalpha() and key not in fields:
                fields[key] = value
        elif line.startswith(("import", "from", "def")):
            break
    return fields


def body_hash_of(text):
    """The hash of the function bodies of a module text, as written in its header."""
    start = text.find("\ndef ")
    bodies = text[start + 1 :] if start >= 0 else ""
    return digest(bodies.rstrip("\n").encode() + b"\n")


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # tangent_ast/
# What the built-in rule tables are made of: their own files and the runtime helpers
# their rules call (the rules hash marshals the code of both).
_TABLE_DIRECTORIES = ("rules", os.path.join("rules", "numpy"), "runtime")
_FINGERPRINT: list[str] = []


def rules_fingerprint():
    """A hash that changes whenever the rules hash of the built-in tables can change.

    The rules hash (``emit.rule_source_hash``) is computed from the rule table: the names
    and purity of its entries and the marshalled code of their rules. Without a rule
    registered by the program, that table is a function of the files of ``rules/`` and
    ``runtime/`` (the code, its file names and line numbers), the NumPy version (the tables
    register functions that exist, ``np.matvec`` from 2.2), the Python version (bytecode
    and marshal format) and where the package is installed (code records its file name);
    every one of them is in this hash, as is tangent_ast's version. Of each file it takes
    the size and modification time in nanoseconds: the test Python's import system makes
    (at one second's resolution) before it runs a file's cached bytecode instead of its
    text, so the tables a process runs never change without this hash changing. Costs
    some 40 ``stat`` calls, once per process, where the rules hash costs the import and
    parsing of the tables."""
    if not _FINGERPRINT:
        h = sha256(
            f"{__version__}\0{sys.version}\0{sys.implementation.cache_tag}\0{_PACKAGE}\0"
            f"{np.__version__}".encode()
        )
        for directory in _TABLE_DIRECTORIES:
            with os.scandir(os.path.join(_PACKAGE, directory)) as entries:
                for entry in sorted(entries, key=lambda e: e.name):
                    if entry.name.endswith(".py"):
                        status = entry.stat()
                        stamp = f"{entry.name}:{status.st_size}:{status.st_mtime_ns}"
                        h.update(f"\0{directory}/{stamp}".encode())
        _FINGERPRINT.append(h.hexdigest()[:16])
    return _FINGERPRINT[0]


def state_of(path, expected):
    """What is on disk at ``path`` (an :class:`OnDisk`).

    ``expected`` holds the header fields a fresh module must have
    (source-hash, rules-hash, tangent-ast-version, depends).
    """
    try:
        text = Path(path).read_text()
    except FileNotFoundError:
        return OnDisk.MISSING
    except (OSError, UnicodeDecodeError):
        return OnDisk.CORRUPT
    header = read_header(text)
    if "body-hash" not in header or "source-hash" not in header:
        return OnDisk.CORRUPT
    edited = body_hash_of(text) != header["body-hash"]
    if not _complete(text, path, header, edited):
        return OnDisk.CORRUPT
    fresh = all(header.get(k) == v for k, v in expected.items())
    if edited:
        return OnDisk.EDITED if fresh else OnDisk.EDITED_STALE
    return OnDisk.FRESH if fresh else OnDisk.STALE


def _complete(text, path, header, edited):
    """Whether ``text`` compiles and defines the functions of its rule (a module truncated
    after a whole function compiles but lacks the rest).

    A module whose functions are as generated (``edited`` False: their text hashes to the
    header's body-hash) compiled when it was written, and has them all: only what comes
    before them, the docstring and imports the body-hash leaves out, is compiled again.
    Compiling the whole of a long rule costs as much as the rest of a cache hit."""
    start = text.find("\ndef ")
    whole = edited or start < 0
    try:
        if whole:
            tree = compile(text, str(path), "exec", ast.PyCF_ONLY_AST)
            compile(tree, str(path), "exec")
        else:  # compiled from its text: no syntax tree of Python objects to build
            compile(text[:start], str(path), "exec")
    except (SyntaxError, ValueError):  # ValueError: a null byte, before Python 3.12
        return False
    if whole:
        defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    else:
        defined = {n for n in _rule_functions(header) if f"\ndef {n}(" in text}
    return _rule_functions(header) <= defined


def _rule_functions(header):
    """Names of the functions a module with ``header`` must define (``f_jvp``, or ``f_fwd`` and
    ``f_bwd``)."""
    base = header.get("source", "").split(" (")[0].rpartition(":")[2].rpartition(".")[2]
    base = base if base.isidentifier() else sanitize(base)  # <lambda>: lambda_jvp
    mode = Mode.FORWARD if header.get("mode") == Mode.FORWARD.value else Mode.REVERSE
    return set(mode.function_names(base))


_MISSING = object()


def import_module(directory, module_name, bindings=None, reload=False):
    """Import ``module_name`` from the cache package at ``directory``.

    ``bindings``: names the loader sets in the module before running it
    (closure cells and values that cannot be imported).
    """
    package = package_for(directory)
    full = f"{package}.{module_name}"
    cached = sys.modules.get(full)
    path = Path(directory) / f"{module_name}.py"
    if bindings is None and cached is not None:
        # loaded again by a caller that does not know its bindings (a module made on a
        # closure's rule, found as the source of a rule derived from it): the ones it had
        bindings = getattr(cached, "__tangent_ast_bindings__", None)
    if (
        cached is not None
        and (not reload or _as_loaded(cached, package, path))
        and all(getattr(cached, key, _MISSING) is value for key, value in (bindings or {}).items())
    ):
        # Two closures of one function share the module's text but not its bindings:
        # each gets its own module object. A module reloaded only when it (or a module it
        # imports) changed keeps its functions the same objects: they pickle by reference.
        return cached
    if not path.exists():  # deleted since it was derived or checked
        raise TangentAstError(f"{path} is missing", hint="derive the rule again")
    spec = importlib.util.spec_from_file_location(full, path)
    module = importlib.util.module_from_spec(spec)
    for key, value in (bindings or {}).items():
        setattr(module, key, value)
    sys.modules[full] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(full, None)
        raise
    for key, value in (bindings or {}).items():  # what the module's imports bound: the loader's
        setattr(module, key, value)
    module.__tangent_ast_loaded__ = _load_state(package, path)
    module.__tangent_ast_bindings__ = bindings
    module.__tangent_ast_stat__ = _stat(path)
    return module


def _stat(path):
    """What changes when a file is written: checked before its text is read again."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_mtime_ns, status.st_size


def _load_state(package, path):
    """What a module was loaded from: its text, and the sibling modules it imports."""
    text = path.read_text() if path.exists() else ""
    siblings = _sibling_imports(text)
    return text, {name: sys.modules.get(f"{package}.{name}") for name in siblings}


def _sibling_imports(text):
    """``re.findall(r"^from \\.(\\w+) import", text, re.MULTILINE)``, written out: a pattern
    costs its compilation once per process, on the path of every cache hit."""
    found = []
    for line in text.split("\n"):
        if line.startswith("from ."):
            rest = line[len("from .") :]
            end = 0
            while end < len(rest) and (rest[end].isalnum() or rest[end] == "_"):  # \w
                end += 1
            if end and rest.startswith(" import", end):
                found.append(rest[:end])
    return found


def _as_loaded(module, package, path):
    """Whether ``module`` is what loading ``path`` again would give: the same text, and the
    same module objects for the siblings it imports."""
    loaded = getattr(module, "__tangent_ast_loaded__", None)
    if loaded is None:
        return False
    text, siblings = loaded
    return _load_state(package, path) == (text, siblings) and all(
        sys.modules.get(f"{package}.{name}") is m for name, m in siblings.items()
    )


def as_on_disk(module):
    """Whether ``module`` (loaded by :func:`import_module`) and the sibling modules it imports,
    transitively, still hold what their files hold: a rule already in use is loaded again
    once one of its files was edited or deleted, so that what runs is what the file shows."""
    seen, todo = set(), [module]
    while todo:
        m = todo.pop()
        loaded = getattr(m, "__tangent_ast_loaded__", None)
        if m is None or id(m) in seen or loaded is None:
            continue  # a module Python imported itself: not one the loader tracks
        seen.add(id(m))
        text, siblings = loaded
        stat = _stat(m.__file__)
        if stat is None:
            return False
        # Written since it was loaded (or so recently that a second write in the same tick of
        # the clock would not show in the time stamp, as git's "racy" entries): same text?
        if stat != getattr(m, "__tangent_ast_stat__", None) or time.time_ns() - stat[0] < 2e9:
            try:
                if Path(m.__file__).read_text() != text:
                    return False
            except (OSError, UnicodeDecodeError):
                return False
            m.__tangent_ast_stat__ = stat
        todo.extend(siblings.values())
    return True


def relative_imports(text):
    """The sibling modules a generated module's text imports (``from .g__reverse... import
    g_fwd``, ``from . import g__reverse... as g_rules``), in order."""
    found = []
    for line in text.splitlines():
        if line.startswith("def "):
            break
        if line.startswith("from ."):
            words = line[len("from .") :].split()
            found.append(words[1] if words[0] == "import" else words[0])
    return found


def loader_values(path, fn, known):
    """The values the loader sets in the module at ``path`` of ``fn``'s rule: ``fn``'s own
    closure cells and globals as they are now, and ``known``, the values the rules inlined in
    it read (their names are not ``fn``'s). A name its header lists that neither gives is
    refused here, before the module runs (it would be a NameError inside the rule)."""
    values = {}
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True))
    for n in sorted(own_names(fn)):
        if n in cells:
            with contextlib.suppress(ValueError):
                values[n] = cells[n].cell_contents
        elif n in fn.__globals__:
            values[n] = fn.__globals__[n]
    values.update(known)
    missing = [n for n in bound_by_loader(path) if n not in values]
    if missing:
        raise TangentAstError(
            f"{path} needs the value of {', '.join(map(repr, missing))}, which neither "
            f"{fn.__qualname__} nor a rule its derivation used in this process reads",
            hint=f"define it at module level of the module that reads it, or delete {path} "
            "to derive it again",
        )
    return values


def loadable(directory, module_name, fn, known, functions, seen=None, closures=None, rules=None):
    """Whether the module ``module_name`` of ``fn``'s rule and the callee rules it imports can
    be loaded as they are on disk: each file there and complete, and every value their loaders
    bind ``fn``'s own or ``known[module]`` (the values its rules read, once this process has
    derived it). ``functions``: how the names of their rule modules start -> user function,
    for the functions whose rules the modules may import. ``closures(fn, via, module)``: the
    closure ``fn`` reads as ``via`` whose rule is in ``module``, and the ``functions`` of its
    own callees, or None (the modules of the closures a rule calls, :func:`closure_rules`).
    ``rules(module, functions)``: the same for a module ``functions`` do not name, a rule of a
    function of a derived module (``RuleCache.rule_callee``)."""
    seen = set() if seen is None else seen
    seen.add(module_name)
    path = Path(directory) / f"{module_name}.py"
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError):
        return False
    own, values = own_names(fn), known.get(module_name, {})
    entries = closure_rules(text)
    if not all(n in own or n in values or n in entries for n in _bound_in(text)):
        return False
    callees = []
    for callee in relative_imports(text):
        g, g_functions = function_of(callee, functions, directory), functions
        if g is None and bound_by_loader(Path(directory) / f"{callee}.py"):
            found = rules(callee, functions) if rules is not None else None
            if found is None:
                return False  # a module its loader must bind values in, of a function not known
            g, g_functions = found
        callees.append((callee, g, g_functions))
    for via, callee, _ in entries.values():
        found = closures(fn, via, callee) if closures is not None else None
        if found is None:
            return False
        callees.append((callee, *found))
    for callee, g, g_functions in callees:
        if callee not in seen:
            if state_of(Path(directory) / f"{callee}.py", {}) in (OnDisk.MISSING, OnDisk.CORRUPT):
                return False
            if g is not None and not loadable(
                directory, callee, g, known, g_functions, seen, closures, rules
            ):
                return False
    return True


def has_own_values(fn):
    """Whether ``fn``'s rules read values of its own, which the loader binds: closure cells,
    or the globals the loader bound in the generated module ``fn`` is a function of (each
    closure's rule module is loaded with its cells: the same function of another closure
    reads other values)."""
    fn = getattr(fn, "py_func", fn)  # a rule of the Numba backend: its Python function
    if fn.__closure__:
        return True
    loaded = fn.__globals__.get("__tangent_ast_loaded__")
    return loaded is not None and bool(_bound_in(loaded[0]))


def loaded_values(fn):
    """The values the loader bound in the generated module ``fn`` is a function of (a
    closure's cells, for a closure's rule), by name; {} for another function."""
    fn = getattr(fn, "py_func", fn)  # a rule of the Numba backend: its Python function
    loaded = fn.__globals__.get("__tangent_ast_loaded__")
    if loaded is None:
        return {}
    return {n: fn.__globals__[n] for n in _bound_in(loaded[0]) if n in fn.__globals__}


def closure_rules(text):
    """``{name: (via, module, function)}`` of the header of the module ``text``: each name its
    loader binds to the rule function of a closure its function reads as ``via``, from the
    module loaded with that closure's cells."""
    entries = {}
    for entry in read_header(text).get("closure-rules", "").partition("  ")[0].split():
        name, _, rest = entry.partition("=")
        parts = rest.split(":")
        if len(parts) == 3 and all(parts):
            entries[name] = tuple(parts)
    return entries


def function_of(module_name, functions, directory=None):
    """The function (of ``functions``: module name prefix -> function) whose rule module
    ``module_name`` is, or None. With ``directory``, the one the module's header says it was
    derived from: the name of a rule of a function a derived rule of ``g`` is made of
    (``g_linear_map``'s, ``g_fwd``'s) starts with ``g``'s prefix too."""
    found = sorted(
        ((prefix, g) for prefix, g in functions.items() if module_name.startswith(prefix)),
        key=lambda item: -len(item[0]),
    )
    if directory is None:
        return found[0][1] if found else None
    try:
        text = (Path(directory) / f"{module_name}.py").read_text()
    except (OSError, UnicodeDecodeError):
        return None
    source = read_header(text).get("source", "").split(" (")[0]
    return next(
        (
            g
            for _, g in found
            if source == f"{derived.portable_name(g.__module__)}:{g.__qualname__}"
        ),
        None,
    )


def own_names(fn):
    """The free names ``fn`` reads itself (in its nested functions and lambdas too), as the
    derivation resolves them: a name the loader binds beyond them is a rule's."""
    try:
        free = free_reads_of(fn)
    except TangentAstError:
        return set(fn.__code__.co_freevars) | set(fn.__code__.co_names)
    return {name for name, _ in free}


def bound_by_loader(path):
    """The names the header of the module at ``path`` says its loader binds."""
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError):
        return []
    return _bound_in(text)


def _bound_in(text):
    """The names the header of the module ``text`` says its loader binds."""
    return read_header(text).get("bound-by-loader", "").partition("  ")[0].split()


def warn_stale(path, qualname, strict):
    message = (
        f"{path} was edited by hand and {qualname} has changed since it was derived; "
        f"the edited rule is used as it is. Delete the file (or run `tangent-ast "
        f"generate --force`) to derive it anew."
    )
    if strict:
        raise StaleRuleError(message)
    warnings.warn(message, StaleRuleWarning, stacklevel=4)
