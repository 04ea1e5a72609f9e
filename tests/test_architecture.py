"""The shape of the package: dependencies point one way, modules stay small.

    api, testing, gradient_checks, cli, build,  what users call
    function_values, fuzz, companions
      -> pipeline                               the stages in order
        -> stages (parse ... load)              one transformation each
          -> rules                              what each primitive's derivative is
            -> kinds, calling, errors, api_roles the vocabulary every layer shares
              -> runtime                        what generated code calls (NumPy only)

Every import counts, those inside functions included.
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "tangent_ast"

# module -> the layer it belongs to; a module may import only modules of its own layer or below
TOP = {
    "api",
    "sessions",
    "testing",
    "gradient_checks",
    "cli",
    "build",
    "function_values",
    "examples",
    "__main__",
    "fuzz",
    "higher_order",
    "linearization",
    "companions",
}
VOCABULARY = {
    "vocabulary",
    "derived",
    "api_roles",
    "kinds",
    "modes",
    "calling",
    "errors",
    "naming",
    "source",
    "stdlib_ast",
    "trees",
    "version",
}
LAYERS = ["runtime", "vocabulary", "rules", "stages", "pipeline", "top"]


def _module_name(path):
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def layer_of(module):
    parts = module.split(".")
    if len(parts) == 1:
        return "top"  # the package itself: lazy re-exports only
    head = parts[1]
    if head == "runtime":
        return "runtime"
    if head in VOCABULARY:
        return "vocabulary"
    if head == "rules":
        return "rules"
    if head == "pipeline":
        return "pipeline"
    if head in TOP:
        return "top"
    return "stages"


def imports_of(module):
    """Every tangent_ast module ``module`` imports, at any depth of its code."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.add(full if full in MODULES else base)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m in MODULES and m != module}


GRAPH = {m: imports_of(m) for m in MODULES}


def test_no_import_cycles():
    order, visiting, done = [], set(), set()

    def visit(m, path):
        if m in done:
            return
        assert m not in visiting, "import cycle: " + " -> ".join([*path, m])
        visiting.add(m)
        for n in sorted(GRAPH[m]):
            visit(n, [*path, m])
        visiting.discard(m)
        done.add(m)
        order.append(m)

    for m in sorted(GRAPH):
        visit(m, [])


@pytest.mark.parametrize("module", sorted(MODULES))
def test_dependencies_point_down(module):
    mine = LAYERS.index(layer_of(module))
    upward = sorted(n for n in GRAPH[module] if LAYERS.index(layer_of(n)) > mine and n != "tangent_ast")
    assert not upward, f"{module} ({layer_of(module)}) imports modules of a layer above: {upward}"


def test_runtime_imports_only_numpy():
    for module, path in MODULES.items():
        if layer_of(module) != "runtime":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and node.level == 0
                else []
            )
            for name in names:
                assert name.split(".")[0] in {"numpy", "copy", "dataclasses", "types"}, (
                    f"{module} imports {name}: the runtime may import only NumPy and the standard "
                    "library's copy, dataclasses and types"
                )


@pytest.mark.parametrize("module", sorted(MODULES))
def test_modules_stay_small(module):
    lines = len(MODULES[module].read_text().splitlines())
    assert lines <= 800, f"{module} has {lines} lines: split it by topic"


def test_import_is_cheap_and_generated_code_needs_only_the_runtime():
    code = (
        "import sys, tangent_ast, tangent_ast.runtime\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(('tangent_ast', 'gast')))\n"
        "print(' '.join(loaded))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = out.stdout.split()
    assert all(m == "tangent_ast.version" or m.startswith("tangent_ast.runtime") or m == "tangent_ast"
               for m in loaded), loaded


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_top_level_name_defined_twice(module):
    """A second definition silently replaces the first (two runtime helpers of one name)."""
    tree = ast.parse(MODULES[module].read_text())
    names = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    assert not {n for n in names if names.count(n) > 1}


def test_runtime_modules_define_distinct_helpers():
    """``runtime`` re-exports every module's helpers: one name, one helper."""
    owner = {}
    for module, path in MODULES.items():
        if layer_of(module) != "runtime" or path.name == "__init__.py":
            continue
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
                assert node.name not in owner, f"{node.name}: in {owner.get(node.name)} and {module}"
                owner[node.name] = module


def test_the_runtime_package_exports_every_helper():
    """Generated code calls ``runtime.<helper>``: each module's public helpers are re-exported."""
    import importlib

    runtime = importlib.import_module("tangent_ast.runtime")
    for module, path in MODULES.items():
        if layer_of(module) != "runtime" or path.name == "__init__.py":
            continue
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
                assert hasattr(runtime, node.name), f"tangent_ast.runtime does not export {node.name}"
