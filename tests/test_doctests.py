"""Every example in the package's docstrings runs, and every stage shows one.

A stage module's docstring says what the stage takes and guarantees, with a before/after
example; running it here keeps the example true as the code changes.
"""

import doctest
import importlib
import pkgutil

import pytest

import tangent_ast

pytestmark = pytest.mark.usefixtures("direct_route")  # its text, names, docs

MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(tangent_ast.__path__, "tangent_ast.")
    if not info.name.endswith("__main__")
)

# The stages of pipeline.py and the lowering of each construct: each shows an example.
STAGES = [
    "tangent_ast.front.parse",
    "tangent_ast.front.checks",
    "tangent_ast.front.resolve",
    "tangent_ast.front.helper_inlining",
    "tangent_ast.front.rebound_arguments",
    "tangent_ast.front.aliasing",
    "tangent_ast.front.record_updates",
    "tangent_ast.front.lowering",
    "tangent_ast.front.lowering.calls",
    "tangent_ast.front.lowering.comprehensions",
    "tangent_ast.front.lowering.conditionals",
    "tangent_ast.front.lowering.contexts",
    "tangent_ast.front.lowering.inlining",
    "tangent_ast.front.lowering.jumps",
    "tangent_ast.front.lowering.loops",
    "tangent_ast.front.lowering.operations",
    "tangent_ast.front.lowering.walk",
    "tangent_ast.front.ssa",
    "tangent_ast.analysis.kind_inference",
    "tangent_ast.analysis.list_arguments",
    "tangent_ast.analysis.shared_updates",
    "tangent_ast.analysis.activity",
    "tangent_ast.transform.forward",
    "tangent_ast.transform.reverse",
    "tangent_ast.optimize.simplify",
    "tangent_ast.transform.tapes",
    "tangent_ast.optimize.hoisting",
    "tangent_ast.transform.for_numba",
    "tangent_ast.emit.emit",
    "tangent_ast.cache.load",
    "tangent_ast.cache.live",
    "tangent_ast.transform.derivatives",
    "tangent_ast.pipeline",
]

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _run(name):
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    failures = []
    for test in doctest.DocTestFinder().find(module, name):
        runner.run(test, out=failures.append)
    return runner.summarize(verbose=False), "".join(failures)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name, tmp_path, monkeypatch):
    monkeypatch.setenv("TANGENT_AST_CACHE", str(tmp_path))
    results, report = _run(name)
    assert results.failed == 0, report


@pytest.mark.parametrize("name", STAGES)
def test_each_stage_shows_an_example(name):
    module = importlib.import_module(name)
    assert ">>>" in (module.__doc__ or ""), f"{name}: its docstring needs a runnable example"
