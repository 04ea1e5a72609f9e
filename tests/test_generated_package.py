"""A package written by ``tangent-ast generate`` runs on its own, in a fresh interpreter.

It imports NumPy, the user's modules and ``tangent_ast.runtime`` (which needs only NumPy),
never the transformer or gast; with ``--standalone`` it carries a copy of the runtime and
runs where tangent_ast cannot be imported at all.
"""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from .api.test_cli import cli, environment

MODEL = textwrap.dedent('''
    import numpy as np

    SCALE = 3.0
    WEIGHTS = np.array([1.0, 2.0, 0.5])


    def inner(x):
        return np.sin(x) * SCALE


    def loss(x, y):
        z = inner(x) * y * WEIGHTS
        return np.sum(z + np.exp(x / SCALE))
''')

# Run in a fresh interpreter: import the package, take a gradient, report what was loaded.
USE_PACKAGE = textwrap.dedent('''
    import json, sys
    {block}
    import numpy as np
    import gen
    x, y = np.array([0.3, -1.2, 2.0]), 0.7
    out, saved = gen.loss_fwd(x, y)
    ct_x, ct_y = gen.loss_bwd(saved, 1.0)
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("tangent_ast", "gast"))
    print(json.dumps({{"out": float(out), "ct_x": ct_x.tolist(), "ct_y": float(ct_y),
                      "loaded": loaded}}))
''')

# Make tangent_ast and gast unimportable, as on a machine where only NumPy is installed.
BLOCK_TRANSFORMER = textwrap.dedent('''
    class Absent:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("tangent_ast", "gast"):
                raise ImportError(f"{name} is not installed here")
    sys.meta_path.insert(0, Absent())
''')


def expected_gradient(x, y):
    scale, weights = 3.0, np.array([1.0, 2.0, 0.5])
    ct_x = np.cos(x) * scale * y * weights + np.exp(x / scale) / scale
    ct_y = np.sum(np.sin(x) * scale * weights)
    return ct_x, ct_y


@pytest.fixture
def workdir(tmp_path):
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "model.py").write_text(MODEL)
    return tmp_path / "work"


def _generate(workdir, *options):
    done = cli(workdir, "generate", "model:loss", "--mode", "reverse", "--wrt", "x,y", "-o", "gen",
               *options)
    assert done.returncode == 0, done.stderr
    return [p.read_text() for p in sorted((workdir / "gen").glob("model__*.py"))]


def _use(workdir, block=""):
    code = USE_PACKAGE.format(block=textwrap.indent(block, ""))
    done = subprocess.run([sys.executable, "-c", code], cwd=workdir, capture_output=True, text=True,
                          env=environment(workdir.parent / "unused_cache"), timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _check_gradient(result):
    ct_x, ct_y = expected_gradient(np.array([0.3, -1.2, 2.0]), 0.7)
    np.testing.assert_allclose(result["ct_x"], ct_x, rtol=1e-12)
    np.testing.assert_allclose(result["ct_y"], ct_y, rtol=1e-12)


def test_a_generated_package_imports_only_the_runtime(workdir):
    modules = _generate(workdir)
    assert all("bound-by-loader" not in text for text in modules)
    assert any("from model import SCALE" in text for text in modules)  # the user's constant
    result = _use(workdir)
    _check_gradient(result)
    transformer = [m for m in result["loaded"]
                   if m not in ("tangent_ast", "tangent_ast.version")
                   and not m.startswith("tangent_ast.runtime")]
    assert transformer == [], f"the package loaded the transformer: {transformer}"


def test_a_standalone_package_runs_without_tangent_ast(workdir):
    modules = _generate(workdir, "--standalone")
    assert all("from tangent_ast import runtime" not in text for text in modules)
    assert (workdir / "gen" / "runtime" / "__init__.py").exists()
    result = _use(workdir, BLOCK_TRANSFORMER)
    _check_gradient(result)
    assert result["loaded"] == []


def test_generating_again_without_standalone_imports_tangent_ast_runtime_again(workdir):
    _generate(workdir, "--standalone")
    modules = _generate(workdir)
    assert all("from . import runtime" not in text for text in modules)
    _check_gradient(_use(workdir))


def test_a_value_the_package_cannot_import_is_refused(workdir):
    (workdir / "closure.py").write_text(textwrap.dedent('''
        import numpy as np

        def make(scale):
            def loss(x):
                return np.sum(x * scale)
            return loss

        loss = make(2.0)
    '''))
    done = cli(workdir, "generate", "closure:loss", "--mode", "reverse", "-o", "gen")
    assert done.returncode == 2
    assert "scale" in done.stderr and "cannot import" in done.stderr


def test_a_refusal_writes_nothing_and_the_directory_stays_usable(workdir):
    (workdir / "closure.py").write_text(textwrap.dedent('''
        import numpy as np

        def make(scale):
            def loss(x):
                return np.sum(x * scale)
            return loss

        loss = make(2.0)
    '''))
    assert cli(workdir, "generate", "closure:loss", "--mode", "reverse", "-o", "gen").returncode == 2
    assert not list((workdir / "gen").glob("closure__*.py"))
    _generate(workdir)  # model:loss into the same directory
    _check_gradient(_use(workdir))


def test_standalone_when_the_user_has_a_name_runtime(workdir):
    (workdir / "model.py").write_text(MODEL.replace("SCALE = 3.0", "SCALE = 3.0\nruntime = 'mine'")
                                      .replace("return np.sum(z + np.exp(x / SCALE))",
                                               "return np.sum(z + np.exp(x / SCALE)) + len(runtime) * 0.0"))
    modules = _generate(workdir, "--standalone")
    assert all("tangent_ast" not in line for text in modules for line in text.splitlines()
               if line.startswith(("import ", "from ")))
    result = _use(workdir, BLOCK_TRANSFORMER)
    _check_gradient(result)
    assert result["loaded"] == []
