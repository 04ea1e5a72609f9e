"""Package hygiene: no module of tangent_ast defines a top-level name twice
(a second definition silently replaces the first, e.g. two runtime helpers)."""

import ast
import pathlib

import pytest

import tangent_ast

MODULES = sorted(pathlib.Path(tangent_ast.__file__).parent.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_no_top_level_name_defined_twice(path):
    names = [n.name for n in ast.parse(path.read_text()).body
             if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    assert not {n for n in names if names.count(n) > 1}
