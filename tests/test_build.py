"""Ahead-of-time codegen in a setuptools build (``tangent_ast.build``).

A tiny project declares a derivative package in its ``pyproject.toml`` and wires
``tangent_ast.build.build_py`` in its ``setup.py``; pip builds a real wheel (no build isolation:
no network), the wheel is installed into a directory, and a fresh interpreter imports the
derived package from there and compares its gradient with the hand-written one.
"""

import json
import os
import subprocess
import sys
import textwrap
import zipfile

import pytest

from .api.test_cli import REPO_ROOT

pytestmark = pytest.mark.usefixtures("direct_route")  # its text, names, docs

MODEL = textwrap.dedent('''
    import numpy as np


    def loss(w, X, y):
        r = X @ w - y
        return np.sum(r * r) / len(y) + 0.1 * np.sum(np.sin(w))


    def loss_gradient(w, X, y):
        """The gradient of loss, written by hand."""
        return 2.0 * X.T @ (X @ w - y) / len(y) + 0.1 * np.cos(w)


    def refused(w):
        return eval("w * 2.0")
''')

PYPROJECT = textwrap.dedent('''
    [build-system]
    requires = ["setuptools>=64", "tangent_ast"]
    build-backend = "setuptools.build_meta"

    [project]
    name = "mymodel"
    version = "0.1"

    [tool.setuptools]
    package-dir = {{"" = "src"}}
    py-modules = ["mymodel"]

    [[tool.tangent_ast.generate]]
    function = "{function}"
    mode = "reverse"
    wrt = "w"
    args = "w: float64[:], X: float64[:, :], y: float64[:]"
    package = "mymodel_derived"
    standalone = true
''')

# the module of loss's reverse rule, specialised to the pyproject's args
RULE_MODULE = "mymodel__loss__reverse__w__array1f_array2f_array1f"

SETUP = textwrap.dedent('''
    from setuptools import setup

    from tangent_ast.build import build_py

    setup(cmdclass={"build_py": build_py})
''')

# Run in a fresh interpreter with only the install directory added to sys.path.
USE_WHEEL = textwrap.dedent('''
    import json, sys
    import numpy as np
    import mymodel, mymodel_derived

    rng = np.random.default_rng(0)
    w, X, y = rng.normal(size=3), rng.normal(size=(6, 3)), rng.normal(size=6)
    value, saved = mymodel_derived.loss_fwd(w, X, y)
    print(json.dumps({
        "value": float(value), "expected": float(mymodel.loss(w, X, y)),
        "gradient": mymodel_derived.loss_bwd(saved, 1.0).tolist(),
        "by_hand": mymodel.loss_gradient(w, X, y).tolist(),
        "derived_from": mymodel_derived.loss_fwd.__module__,
        "tangent_ast_loaded": any(m.split(".")[0] == "tangent_ast" for m in sys.modules),
    }))
''')


def make_project(root, function="mymodel:loss"):
    """A project in ``root``: src/mymodel.py, a pyproject declaring the package, a setup.py."""
    (root / "src").mkdir(parents=True)
    (root / "src" / "mymodel.py").write_text(MODEL)
    (root / "pyproject.toml").write_text(PYPROJECT.format(function=function))
    (root / "setup.py").write_text(SETUP)
    return root


def build_wheel(project, dist):
    """``pip wheel`` the project into ``dist``, as a user's build would (without isolation)."""
    env = dict(os.environ, TANGENT_AST_CACHE=str(dist.parent / "cache"))
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), *filter(None, [env.get("PYTHONPATH")])])
    return subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "-w", str(dist), str(project)],
        capture_output=True, text=True, env=env, timeout=180,
    )


def generated_files(wheel):
    """``{name: text}`` of the derived package's modules in ``wheel`` (its runtime copy aside)."""
    with zipfile.ZipFile(wheel) as archive:
        return {name: archive.read(name).decode() for name in archive.namelist()
                if name.startswith("mymodel_derived/") and "/runtime/" not in name}


def test_the_wheel_carries_the_derivative_package(tmp_path):
    project = make_project(tmp_path / "project")
    done = build_wheel(project, tmp_path / "dist")
    assert done.returncode == 0, done.stdout + done.stderr
    [wheel] = (tmp_path / "dist").glob("*.whl")
    files = generated_files(wheel)
    assert sorted(files) == ["mymodel_derived/__init__.py", f"mymodel_derived/{RULE_MODULE}.py"]
    assert "from . import runtime" in files[f"mymodel_derived/{RULE_MODULE}.py"]
    with zipfile.ZipFile(wheel) as archive:
        assert "mymodel_derived/runtime/__init__.py" in archive.namelist()
        assert not [n for n in archive.namelist() if ".staging." in n]

    install = tmp_path / "installed"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--target",
                    str(install), str(wheel)], check=True, capture_output=True, timeout=120)
    (tmp_path / "elsewhere").mkdir()
    used = subprocess.run([sys.executable, "-c", USE_WHEEL], cwd=tmp_path / "elsewhere",
                          capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(install)))
    assert used.returncode == 0, used.stderr
    result = json.loads(used.stdout)
    assert result["derived_from"] == f"mymodel_derived.{RULE_MODULE}"
    assert result["value"] == pytest.approx(result["expected"])
    assert result["gradient"] == pytest.approx(result["by_hand"], rel=1e-12)
    assert not result["tangent_ast_loaded"]  # standalone: the runtime copy in the package

    # the same sources give the same files; an earlier build's package is not reused
    wheel.unlink()
    again = build_wheel(project, tmp_path / "dist")
    assert again.returncode == 0, again.stdout + again.stderr
    assert generated_files(next((tmp_path / "dist").glob("*.whl"))) == files


def test_a_target_that_cannot_be_derived_fails_the_build(tmp_path):
    project = make_project(tmp_path / "project", function="mymodel:refused")
    (project / "pyproject.toml").write_text(
        (project / "pyproject.toml").read_text().replace('args = "w: float64[:], X: float64[:, :], '
                                                         'y: float64[:]"\n', ""))
    done = build_wheel(project, tmp_path / "dist")
    assert done.returncode != 0
    [line] = [ln.strip() for ln in done.stderr.splitlines() if "error: tangent_ast:" in ln]
    assert line.startswith("error: tangent_ast: cannot generate mymodel:refused -> mymodel_derived")
    assert "eval(...)" in line
    assert not list((tmp_path / "dist").glob("*.whl"))


# --- the pyproject tables, read without a build


def tables(text):
    from tangent_ast.build import generate_tables

    if sys.version_info >= (3, 11):
        import tomllib
    else:
        tomllib = pytest.importorskip("tomli")
    return generate_tables(tomllib.loads(textwrap.dedent(text)))


def test_tables_take_the_options_of_generate():
    [table] = tables('''
        [[tool.tangent_ast.generate]]
        function = ["m:f", "m:g"]
        wrt = ["x", 1]
        package = "pkg.derived"
    ''')
    assert (table.targets, table.mode, table.wrt, table.package) == (("m:f", "m:g"), "forward",
                                                                      "x,1", "pkg.derived")
    assert tables("[project]\nname = 'x'\n") == []


@pytest.mark.parametrize("text, message", [
    ('function = "m:f"', "needs package"),
    ('package = "p"', "needs function"),
    ('function = "m:f"\npackage = "p"\nmode = "sideways"', "mode 'sideways' is not one of"),
    ('function = "m:f"\npackage = "p"\noutput = "q"', "unknown keys ['output']"),
    ('function = "m:f"\npackage = "p"\n[[tool.tangent_ast.generate]]\nfunction = "m:g"\n'
     'package = "p"', "two tables write package 'p'"),
])
def test_a_wrong_table_is_refused_with_its_reason(text, message):
    from tangent_ast.build import CodegenError

    with pytest.raises(CodegenError, match=r"\[\[tool\.tangent_ast\.generate\]\]") as refused:
        tables("[[tool.tangent_ast.generate]]\n" + text)
    assert message in str(refused.value)


def test_python_3_10_without_tomli_asks_for_it(tmp_path, monkeypatch):
    from tangent_ast.build import CodegenError, read_pyproject

    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    monkeypatch.setattr(sys, "version_info", (3, 10, 0))
    monkeypatch.setitem(sys.modules, "tomli", None)  # not installed
    with pytest.raises(CodegenError, match="install tomli"):
        read_pyproject(tmp_path / "pyproject.toml")
