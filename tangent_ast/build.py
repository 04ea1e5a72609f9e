"""Ahead-of-time codegen as a step of a setuptools build: derivative packages in the wheel.

A project wires the command in its ``setup.py``::

    from setuptools import setup
    from tangent_ast.build import build_py

    setup(cmdclass={"build_py": build_py})

and declares what to generate in its ``pyproject.toml``, one table per package, with the
options of ``tangent-ast generate``::

    [[tool.tangent_ast.generate]]
    function = "mymodel:loss"        # or a list of targets
    mode = "reverse"
    wrt = "w"
    args = "w: float64[:], X: float64[:, :], y: float64[:]"
    package = "mymodel_derived"      # written into the build directory
    standalone = true                # optional

After the usual ``build_py`` (which copies the project's modules into ``build_lib``), each
table is generated as ``tangent-ast generate`` does it
(:func:`tangent_ast.api.cli.generate_package`) into ``build_lib/<package>``, so the package
is in the wheel. A package that is not in the project's sources is derived anew in every
build; one that is (committed, perhaps edited by hand) is brought up to date, hand edits
kept. In an editable install the package is written next to the project's modules instead.
The targets' modules are imported with the project's source directory (setuptools'
``package_dir``), the project directory and ``build_lib`` first on ``sys.path``. A failing
target fails the build with one ``error:`` line naming it.
"""

import contextlib
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from setuptools.command.build_py import build_py as setuptools_build_py
from setuptools.errors import SetupError

from .api.cli import GENERATE_MODES, UsageError, generate_package, one_line
from .errors import TangentAstError

TABLE = "tool.tangent_ast.generate"
KEYS = {"function", "mode", "wrt", "args", "package", "standalone"}


class CodegenError(SetupError):
    """A ``[[tool.tangent_ast.generate]]`` table is wrong or its targets cannot be derived."""


@dataclass(frozen=True)
class GenerateTable:
    """One ``[[tool.tangent_ast.generate]]`` table: the options of one ``tangent-ast generate``."""

    targets: tuple[str, ...]
    package: str
    mode: str = "forward"
    wrt: str | None = None
    arg_kinds: str | None = None
    standalone: bool = False

    def describe(self):
        return f"{', '.join(self.targets)} -> {self.package} (mode {self.mode})"


def read_pyproject(path):
    """The parsed ``pyproject.toml`` at ``path`` (tomllib; tomli on Python 3.10)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        try:
            import tomli as tomllib
        except ModuleNotFoundError:
            raise CodegenError(
                "tangent_ast.build reads pyproject.toml with tomli on Python 3.10: "
                "install tomli (pip install tomli)"
            ) from None
    with open(path, "rb") as file:
        return tomllib.load(file)


def generate_tables(pyproject):
    """The ``[[tool.tangent_ast.generate]]`` tables of a parsed pyproject, checked."""
    declared = pyproject.get("tool", {}).get("tangent_ast", {}).get("generate", [])
    if isinstance(declared, dict):  # a single [tool.tangent_ast.generate] table
        declared = [declared]
    tables = [_table(entry, number) for number, entry in enumerate(declared, start=1)]
    packages = [table.package for table in tables]
    for package in packages:
        if packages.count(package) > 1:
            raise CodegenError(
                f"[[{TABLE}]]: two tables write package {package!r} (its __init__.py would "
                "expose only the last one's functions); give each its own package, or list "
                "several functions in one table"
            )
    return tables


def _table(entry, number):
    where = f"[[{TABLE}]] number {number}"
    if not isinstance(entry, dict):
        raise CodegenError(f"{where} must be a table")
    unknown = sorted(set(entry) - KEYS)
    if unknown:
        raise CodegenError(f"{where}: unknown keys {unknown} (known: {sorted(KEYS)})")
    targets = entry.get("function")
    if isinstance(targets, str):
        targets = [targets]
    if not targets or not all(isinstance(t, str) for t in targets):
        raise CodegenError(f'{where} needs function = "MODULE:FUNCTION" (or a list of them)')
    package = entry.get("package")
    if not isinstance(package, str) or not all(p.isidentifier() for p in package.split(".")):
        raise CodegenError(f'{where} needs package = "NAME", the package to write')
    mode = entry.get("mode", "forward")
    if mode not in GENERATE_MODES:
        raise CodegenError(f"{where}: mode {mode!r} is not one of {', '.join(GENERATE_MODES)}")
    wrt = entry.get("wrt")
    if isinstance(wrt, list):
        wrt = ",".join(str(w) for w in wrt)
    return GenerateTable(
        targets=tuple(targets),
        package=package,
        mode=mode,
        wrt=None if wrt is None else str(wrt),
        arg_kinds=entry.get("args"),
        standalone=bool(entry.get("standalone", False)),
    )


@contextlib.contextmanager
def _importable_from(directories):
    """``directories`` first on ``sys.path`` for the duration; ``sys.path`` restored after."""
    saved = list(sys.path)
    sys.path[:0] = [str(d) for d in dict.fromkeys(directories)]
    try:
        yield
    finally:
        sys.path[:] = saved


def generate_declared(tables, output_root, import_from, fresh_packages=()):
    """Generate each table's package under ``output_root`` with the modules of
    ``import_from`` importable; the packages named in ``fresh_packages`` are derived anew (an
    earlier build's copy discarded). Returns the files written; CodegenError on failure."""
    written = []
    with _importable_from(import_from):
        for table in tables:
            directory = Path(output_root, *table.package.split("."))
            if table.package in fresh_packages and directory.exists():
                shutil.rmtree(directory)
            try:
                generate_package(
                    table.targets,
                    directory,
                    mode=table.mode,
                    wrt=table.wrt,
                    arg_kinds=table.arg_kinds,
                    standalone=table.standalone,
                )
            except (UsageError, TangentAstError) as exc:
                raise CodegenError(
                    f"tangent_ast: cannot generate {table.describe()}: {one_line(exc)}"
                ) from None
            written += sorted(
                str(p) for p in directory.rglob("*.py") if "__pycache__" not in p.parts
            )
    return written


class build_py(setuptools_build_py):
    """setuptools' ``build_py`` (the command it replaces, hence the name), then the derivative
    packages declared in ``pyproject.toml``."""

    def initialize_options(self):
        super().initialize_options()
        self.generated_files = []

    def run(self):
        super().run()
        project = Path.cwd()
        pyproject = project / "pyproject.toml"
        tables = generate_tables(read_pyproject(pyproject)) if pyproject.exists() else []
        if not tables:
            return
        sources = project / (self.get_package_dir("") or ".")
        editable = getattr(self, "editable_mode", False)
        if editable:  # an editable install copies nothing to build_lib: write beside the sources
            output_root, fresh = sources, set()
        else:
            output_root, fresh = Path(self.build_lib), self._packages_not_in_sources(tables)
        for table in tables:
            self.announce(f"tangent_ast: generating {table.describe()}", level=2)
        self.generated_files = generate_declared(
            tables, output_root, [sources, project, Path(self.build_lib)], fresh
        )
        if editable:  # listed, so that the editable install maps them too
            listed = list(self.distribution.packages or ())
            added = [t.package for t in tables if t.package not in listed]
            self.distribution.packages = listed + added

    def _packages_not_in_sources(self, tables):
        listed = set(self.packages or ())
        return {table.package for table in tables if table.package not in listed}

    def get_outputs(self, include_bytecode=1):
        return super().get_outputs(include_bytecode) + self.generated_files
