"""The shape of the package: its folders are layers, dependencies point one way, modules stay
small; docs/architecture.md draws the layers, and stays true.

A module may import the modules of its own layer and of the layers its layer may import
(LAYERS), theirs in turn. Every import counts, those inside functions included.
"""

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "tangent_ast"
PAGE = ROOT / "docs" / "architecture.md"

# layer -> the layers its modules may import, from what users call down to what generated
# code calls; a folder of the package is the layer of its name
LAYERS = {
    "fuzz": {"api"},  # random programs, each checked in every mode
    "api": {"pipeline"},  # what users call
    "pipeline": {"transform", "cache"},  # the stages in order
    "cache": {"front"},  # derived rules on disk (a lambda's source is read as parse reads it)
    "transform": {"analysis", "optimize"},  # derivatives written
    "analysis": {"front"},  # what the SSA function's values are
    "optimize": {"emit"},  # generated code made to read as written by hand
    "front": {"emit"},  # the program read, into SSA form
    "emit": {"rules"},  # syntax trees -> module text (every stage prints code)
    "rules": {"vocabulary"},  # what each primitive's derivative is
    "vocabulary": {"runtime", "derived"},  # the words every layer shares
    "derived": set(),  # the package derived modules are imported under
    "runtime": set(),  # what generated code calls: NumPy only
}
# the modules at the top of the package: each the layer it belongs to
TOP_LEVEL = {
    "__main__": "api",  # python -m tangent_ast
    "testing": "api",  # tangent_ast.testing.check_grads
    "function_values": "api",  # generated modules import it
    "build": "api",  # from tangent_ast.build import build_py, in a project's setup.py
    "examples": "api",  # python -m tangent_ast.examples
    "pipeline": "pipeline",
    "errors": "vocabulary",  # the errors users catch, named in tracebacks
    "modes": "vocabulary",
    "version": "vocabulary",
}
PACKAGE_LAYER = "api"  # tangent_ast itself: the public names, imported when first used


def _below(layer, seen=()):
    """Every layer ``layer`` may import, directly or through another."""
    found = set()
    for lower in LAYERS[layer]:
        assert lower not in seen, f"the layers import each other in a cycle through {lower}"
        found |= {lower} | _below(lower, (*seen, layer))
    return found


MAY_IMPORT = {layer: _below(layer) for layer in LAYERS}


def _module_name(path):
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
FOLDERS = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}


def layer_of(module):
    parts = module.split(".")
    if len(parts) == 1:
        return PACKAGE_LAYER
    if parts[1] in FOLDERS:
        return parts[1]
    return TOP_LEVEL[parts[1]]


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


def test_every_folder_and_top_level_module_has_a_layer():
    assert sorted(FOLDERS - set(LAYERS)) == [], "a new folder: give it a layer in LAYERS"
    top = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__"}
    assert sorted(top - set(TOP_LEVEL)) == [], "a new top-level module: give it a layer"
    assert sorted(set(TOP_LEVEL) - top) == []


def test_the_layers_import_one_way():
    for layer in LAYERS:
        assert layer not in MAY_IMPORT[layer]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_dependencies_point_down(module):
    mine = layer_of(module)
    upward = sorted(
        n for n in GRAPH[module] if layer_of(n) != mine and layer_of(n) not in MAY_IMPORT[mine]
    )
    assert not upward, f"{module} ({mine}) imports modules of layers it may not import: {upward}"


def _page_layers():
    """The layers of docs/architecture.md's table: name -> (what it may import, the
    top-level modules listed under it)."""
    table = re.search(r"```text\nlayer .*?\n-+ .*?\n(.*?)```", PAGE.read_text(), re.S).group(1)
    layers, last = {}, None
    for line in table.splitlines():
        row = re.match(r"([a-z_]+)(/|\.py)\s{2,}.*?\s{2,}(\S.*)$", line)
        if row:
            last = row.group(1)
            allowed = set() if row.group(3) == "-" else set(row.group(3).split(", "))
            layers[last] = (row.group(2), allowed, set())
        elif re.fullmatch(r"  ([a-z_]+\.py\s*)+", line):
            layers[last][2].update(m[:-3] for m in line.split())
    return layers


def test_the_architecture_page_names_the_folders_and_layers_there_are():
    page = _page_layers()
    assert {name for name, (kind, _, _) in page.items() if kind == "/"} == FOLDERS
    assert {name: allowed for name, (_, allowed, _) in page.items()} == LAYERS
    listed = {m: layer for layer, (_, _, modules) in page.items() for m in modules}
    listed.update({name: name for name, (kind, _, _) in page.items() if kind == ".py"})
    assert listed == TOP_LEVEL


def test_the_pipeline_names_the_module_of_every_stage():
    """pipeline.py's docstring lists each stage with its module's path."""
    doc = ast.get_docstring(ast.parse((PACKAGE / "pipeline.py").read_text()))
    paths = re.findall(r"\s([a-z_]+/(?:[a-z_]+/|[a-z_]+\.py))$", doc, re.M)
    assert len(paths) > 20
    for path in paths:
        assert (PACKAGE / path).exists(), path


# the runtime's one module for compiled rules (backend="numba"), imported only by them
COMPILED_RUNTIME = "tangent_ast.runtime.compiled"


def test_runtime_imports_only_numpy():
    for module, path in MODULES.items():
        if layer_of(module) != "runtime" or module == COMPILED_RUNTIME:
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


def test_the_compiled_runtime_imports_numpy_and_numba_only_and_nothing_imports_it():
    """Generated modules of the Numba backend import it; the package does not (Numba is an
    optional extra, and importing it costs a second)."""
    tree = ast.parse(MODULES[COMPILED_RUNTIME].read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom) and getattr(node, "level", 0) == 0:
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            assert all(n.split(".")[0] in {"numpy", "numba"} for n in names), names
    for module, path in MODULES.items():
        assert "runtime.compiled" not in path.read_text() or module in (
            COMPILED_RUNTIME,
            "tangent_ast.transform.for_numba",  # names it for generated code to import
            "tangent_ast.api.cli",  # generate --standalone: the package's copy of it
        ), module
