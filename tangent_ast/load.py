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
import importlib
import importlib.util
import os
import re
import sys
import tempfile
import types
import warnings
from enum import Enum
from pathlib import Path

from . import derived
from .emit import body_hash_of, read_header
from .errors import TangentAstError
from .modes import Mode
from .naming import sanitize


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
    try:
        tree = compile(text, str(path), "exec", ast.PyCF_ONLY_AST)
        compile(tree, str(path), "exec")
    except SyntaxError:
        return OnDisk.CORRUPT
    # e.g. truncated after a whole function: it compiles but lacks the rest
    if not _rule_functions(header) <= {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}:
        return OnDisk.CORRUPT
    fresh = all(header.get(k) == v for k, v in expected.items())
    edited = body_hash_of(text) != header["body-hash"]
    if edited:
        return OnDisk.EDITED if fresh else OnDisk.EDITED_STALE
    return OnDisk.FRESH if fresh else OnDisk.STALE


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
    if (
        cached is not None
        and (not reload or _as_loaded(cached, package, path))
        and all(getattr(cached, key, _MISSING) is value for key, value in (bindings or {}).items())
    ):
        # Two closures of one function share the module's text but not its bindings:
        # each gets its own module object. A module reloaded only when it (or a module it
        # imports) changed keeps its functions the same objects: they pickle by reference.
        return cached
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
    module.__tangent_ast_loaded__ = _load_state(package, path)
    return module


def _load_state(package, path):
    """What a module was loaded from: its text, and the sibling modules it imports."""
    text = path.read_text() if path.exists() else ""
    siblings = re.findall(r"^from \.(\w+) import", text, re.MULTILINE)
    return text, {name: sys.modules.get(f"{package}.{name}") for name in siblings}


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


def warn_stale(path, qualname, strict):
    message = (
        f"{path} was edited by hand and {qualname} has changed since it was derived; "
        f"the edited rule is used as it is. Delete the file (or run `tangent-ast "
        f"generate --force`) to derive it anew."
    )
    if strict:
        raise StaleRuleError(message)
    warnings.warn(message, StaleRuleWarning, stacklevel=4)
