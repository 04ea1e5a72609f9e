"""The ``tangent-ast`` command line, run as ``python -m tangent_ast`` in subprocesses."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.usefixtures("direct_route")  # its text, names, docs

REPO_ROOT = Path(__file__).resolve().parents[2]

MODEL = textwrap.dedent('''
    import numpy as np


    def inner(x):
        return np.sin(x) * x


    def loss(x, y):
        z = inner(x) * y
        return z + np.exp(x / 3.0)
''')


@pytest.fixture
def workdir(tmp_path):
    """A working directory holding ``model.py``, with a cache directory of its own."""
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "model.py").write_text(MODEL)
    return tmp_path / "work"


def environment(cache):
    """The environment of a subprocess: this repository importable, the cache at ``cache``."""
    env = dict(os.environ)
    env["TANGENT_AST_CACHE"] = str(cache)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    return env


def cli(workdir, *args):
    """Run ``python -m tangent_ast ARGS`` in ``workdir``; the completed process."""
    return subprocess.run([sys.executable, "-m", "tangent_ast", *args], cwd=workdir, capture_output=True,
                          text=True, env=environment(workdir.parent / "cache"), timeout=120)


def python(workdir, code):
    """Run ``code`` in a fresh interpreter in ``workdir``; its stdout, parsed as JSON."""
    done = subprocess.run([sys.executable, "-c", code], cwd=workdir, capture_output=True, text=True,
                          env=environment(workdir.parent / "fresh_cache"), timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


FRESH_GRADIENT = textwrap.dedent('''
    import json, sys
    import tangent_ast.pipeline as pipeline

    def forbidden(*args, **kwargs):
        raise AssertionError("a transformation ran while importing generated code")

    pipeline.derive_module = pipeline.Session.ensure = pipeline.Session.rule = forbidden
    import derived
    import model

    x, y, h = 0.7, 1.3, 1e-6
    value, saved = derived.loss_fwd(x, y)
    gradient = derived.loss_bwd(saved, 1.0)
    numeric = (model.loss(x + h, y) - model.loss(x - h, y)) / (2 * h)
    print(json.dumps({"value": value, "expected": model.loss(x, y), "gradient": gradient,
                      "numeric": numeric, "module": derived.loss_fwd.__module__}))
''')


def test_generate_gives_an_importable_package(workdir):
    done = cli(workdir, "generate", "model:loss", "--mode", "reverse", "-o", "derived")
    assert done.returncode == 0, done.stderr
    package = workdir / "derived"
    names = sorted(p.name for p in package.glob("*.py"))
    assert names == ["__init__.py", "model__inner__reverse__x__unknown.py", "model__loss__reverse__x__any.py"]
    init = (package / "__init__.py").read_text()
    assert "from .model__loss__reverse__x__any import loss_fwd, loss_bwd" in init
    assert "from .model__inner__reverse__x__unknown import" in (package / "model__loss__reverse__x__any.py").read_text()

    result = python(workdir, FRESH_GRADIENT)
    assert result["module"] == "derived.model__loss__reverse__x__any"
    assert result["value"] == pytest.approx(result["expected"])
    assert result["gradient"] == pytest.approx(result["numeric"], rel=1e-6)
    assert not (workdir.parent / "fresh_cache").exists() or not any((workdir.parent / "fresh_cache").iterdir())


def test_forward_mode_and_wrt_by_name(workdir):
    done = cli(workdir, "generate", "model:loss", "--wrt", "y", "-o", "fwd")
    assert done.returncode == 0, done.stderr
    result = python(workdir, "import json, fwd; print(json.dumps(fwd.loss_jvp(0.7, 1.3, 1.0)))")
    assert result[1] == pytest.approx(np.sin(0.7) * 0.7)


def test_check_finds_a_stale_module_and_regenerate_fixes_it(workdir):
    done = cli(workdir, "generate", "model:loss", "--mode", "reverse", "-o", "derived")
    assert done.returncode == 0
    # the target's module first, then the callee's it imports, each on a line
    target, callee = done.stdout.splitlines()
    assert target.endswith("model__loss__reverse__x__any.py")
    assert "model__inner__reverse" in callee and callee.endswith("(a callee's rule, imported by the above)")
    fresh = cli(workdir, "check", "derived")
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    assert "all 2 modules are fresh" in fresh.stdout

    model = workdir / "model.py"
    model.write_text(model.read_text().replace("np.exp(x / 3.0)", "np.exp(x / 4.0)"))
    stale = cli(workdir, "check", "derived")
    assert stale.returncode == 1
    assert "model__loss__reverse__x__any.py: model:loss changed since it was derived" in stale.stdout
    assert "model__inner" not in stale.stdout and "1 of 2 modules are stale" in stale.stdout

    assert cli(workdir, "generate", "model:loss", "--mode", "reverse", "-o", "derived").returncode == 0
    assert cli(workdir, "check", "derived").returncode == 0


def test_check_lists_the_modules_edited_by_hand(workdir):
    """A hand edit is kept and used: check says which modules hold one, fresh or stale."""
    assert cli(workdir, "generate", "model:inner", "--mode", "reverse", "-o", "derived").returncode == 0
    (module,) = (workdir / "derived").glob("model__inner__reverse__*.py")
    module.write_text(module.read_text().replace("return ct_x", "return 2.0 * ct_x"))
    fresh = cli(workdir, "check", "derived")
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    assert f"edited by hand: {module.name} (used as it is)" in fresh.stdout
    assert "all 1 modules are fresh; 1 edited by hand" in fresh.stdout
    source = workdir / "model.py"
    source.write_text(source.read_text().replace("np.sin(x) * x", "np.sin(x) * x * 1.5"))
    stale = cli(workdir, "check", "derived")
    assert stale.returncode == 1
    assert "changed since it was derived (edited by hand)" in stale.stdout
    assert "1 of 1 modules are stale; 1 edited by hand" in stale.stdout


def test_check_finds_a_module_derived_from_an_older_callee(workdir):
    assert cli(workdir, "generate", "model:loss", "--mode", "reverse", "-o", "derived").returncode == 0
    model = workdir / "model.py"
    model.write_text(model.read_text().replace("np.sin(x) * x", "np.sin(x) * x * x"))
    stale = cli(workdir, "check", "derived")
    assert stale.returncode == 1
    assert "model__loss__reverse__x__any.py: a function model:loss calls changed since it was derived" \
        in stale.stdout
    assert "model__inner__reverse__x__unknown.py: model:inner changed" in stale.stdout
    assert cli(workdir, "generate", "model:loss", "--mode", "reverse", "-o", "derived").returncode == 0
    assert cli(workdir, "check", "derived").returncode == 0


def test_show_prints_the_stage(workdir):
    done = cli(workdir, "show", "model:loss", "--stage", "ssa")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("def loss(x, y):")
    done = cli(workdir, "show", "model:loss", "--mode", "reverse", "--wrt", "0,y")
    assert done.returncode == 0, done.stderr
    assert "def loss_fwd(x, y):" in done.stdout and "# source: model:loss" in done.stdout


@pytest.mark.parametrize("args, message", [
    (["show", "nosuchmodule:f"], "no module named 'nosuchmodule'"),
    (["show", "model:nosuch"], "module 'model' has no function 'nosuch'"),
    (["show", "math:sin"], "sin is not a Python function"),
    (["show", "model"], "must be MODULE:FUNCTION"),
    (["generate", "model:loss", "--wrt", "q", "-o", "out"], "wrt='q' is not a parameter of loss"),
    (["check", "nowhere"], "nowhere is not a directory"),
])
def test_bad_targets_exit_2_with_one_line(workdir, args, message):
    done = cli(workdir, *args)
    assert done.returncode == 2
    assert done.stderr.startswith("tangent-ast: error: ")
    assert message in done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_main_returns_status(workdir, monkeypatch, capsys):
    from tangent_ast.api.cli import main
    monkeypatch.chdir(workdir)
    monkeypatch.setattr(sys, "path", list(sys.path))
    assert main(["show", "no_such_module_here:f"]) == 2
    assert "no module named" in capsys.readouterr().err


def test_generate_hvp_gives_gradient_and_hessian_vector_product(workdir):
    done = cli(workdir, "generate", "model:loss", "--mode", "hvp", "-o", "second")
    assert done.returncode == 0, done.stderr
    code = textwrap.dedent('''
        import json
        import second
        import model
        import tangent_ast as ta

        x, y, h = 0.7, 1.3, 1e-5
        gradient, hv = second.loss_gradient_jvp(x, y, 1.0)
        grad = ta.grad(model.loss)
        numeric = (grad(x + h, y) - grad(x - h, y)) / (2 * h)
        print(json.dumps({"gradient": gradient, "expected": grad(x, y), "hv": hv, "numeric": numeric}))
    ''')
    result = python(workdir, code)
    assert result["gradient"] == pytest.approx(result["expected"])
    assert result["hv"] == pytest.approx(result["numeric"], rel=1e-6)
    checked = cli(workdir, "check", "second")
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_generate_hessian_and_jacobian_write_one_pass_modules(workdir):
    (workdir / "fields.py").write_text(textwrap.dedent('''
        import numpy as np

        def energy(x, k):
            return k * np.sum(x ** 4) + np.sum(x[1:] * x[:-1])

        def rhs(t, y):
            return np.array([-0.04 * y[0] + 1e4 * y[1] * y[2], 3e7 * y[1] ** 2])
    '''))
    done = cli(workdir, "generate", "fields:energy", "--mode", "hessian", "-o", "hessians")
    assert done.returncode == 0, done.stderr
    done = cli(workdir, "generate", "fields:rhs", "--mode", "jacobian", "--wrt", "y", "-o", "jacobians")
    assert done.returncode == 0, done.stderr
    code = textwrap.dedent('''
        import json
        import numpy as np
        import hessians, jacobians
        import fields
        import tangent_ast as ta

        x, y = np.array([0.3, -0.5, 0.8]), np.array([1.0, 1e-4, 1e-3])
        H = hessians.energy_hessian(x, 2.0)
        J = jacobians.rhs_jacobian(0.0, y)
        print(json.dumps({
            "H": H.tolist(), "H_api": ta.hessian(fields.energy)(x, 2.0).tolist(),
            "J": J.tolist(), "J_api": ta.jacrev(fields.rhs, wrt=1)(0.0, y).tolist(),
            "exports": sorted(hessians.__all__ + jacobians.__all__),
        }))
    ''')
    result = python(workdir, code)
    assert np.allclose(result["H"], result["H_api"])
    assert np.allclose(result["H"], np.diag(24.0 * np.array([0.3, -0.5, 0.8]) ** 2) + np.eye(3, k=1) + np.eye(3, k=-1))
    assert np.allclose(result["J"], result["J_api"])
    assert {"energy_hessian", "rhs_jacobian"} <= set(result["exports"])
    source = (workdir / "hessians").glob("*__hessian.py")
    assert "jvp_of_batch(energy_gradient_jvp, (x, k), runtime.unit_directions(x))" in next(source).read_text()
    done = cli(workdir, "generate", "fields:energy", "--mode", "jacobian", "--wrt", "x,k", "-o", "bad")
    assert done.returncode == 2 and "differentiates one argument" in done.stderr
    for package in ("hessians", "jacobians"):
        checked = cli(workdir, "check", package)
        assert checked.returncode == 0, checked.stdout + checked.stderr


def test_version(workdir):
    done = cli(workdir, "--version")
    assert done.returncode == 0 and done.stdout.startswith("tangent-ast 0.")


def test_args_give_the_kinds_a_rule_is_specialised_for(workdir):
    (workdir / "layers.py").write_text(textwrap.dedent('''
        from dataclasses import dataclass

        import numpy as np


        @dataclass
        class Params:
            W: np.ndarray
            scale: float


        def loss(p, X, y):
            return p.scale * np.sum((X @ p.W - y) ** 2)
    '''))
    signature = "p: layers.Params, X: float64[:, :], y: float64[:]"
    done = cli(workdir, "show", "layers:loss", "--mode", "reverse", "--args", signature)
    assert done.returncode == 0, done.stderr
    assert "# signature: Params(unknown,float), array2f, array1f" in done.stdout
    done = cli(workdir, "generate", "layers:loss", "--mode", "reverse", "--args", signature, "-o", "specialised")
    assert done.returncode == 0, done.stderr
    code = textwrap.dedent('''
        import json
        import numpy as np
        import layers, specialised
        import tangent_ast as ta

        rng = np.random.default_rng(0)
        p = layers.Params(rng.standard_normal(3), 0.5)
        X, y = rng.standard_normal((5, 3)), rng.standard_normal(5)
        out, saved = specialised.loss_fwd(p, X, y)
        ct = specialised.loss_bwd(saved, 1.0)
        print(json.dumps({"W": ct.W.tolist(), "expected": ta.grad(layers.loss)(p, X, y).W.tolist()}))
    ''')
    result = python(workdir, code)
    assert np.allclose(result["W"], result["expected"])
    for wrong, message in (
        ("p: layers.Params, X: float64[:, :]", "missing: y"),
        ("p: layers.Nope, X: float64[:, :], y: float64[:]", "cannot import layers.Nope"),
        ("p: layers.Params, X: float99[:], y: float64[:]", "not a NumPy dtype"),
    ):
        done = cli(workdir, "show", "layers:loss", "--args", wrong)
        assert done.returncode == 2 and message in done.stderr, done.stderr


def test_args_with_named_axes_tell_equal_lengths(workdir):
    """``float64[n, d]``: axes of one name have one length, so ``X @ w - y`` needs no
    unbroadcast; the rule generated that way computes the gradient of a real call."""
    (workdir / "fit.py").write_text(textwrap.dedent('''
        import numpy as np


        def loss(w, X, y):
            return np.mean((X @ w - y) ** 2)
    '''))
    named = "w: float64[d], X: float64[n, d], y: float64[n]"
    done = cli(workdir, "show", "fit:loss", "--mode", "reverse", "--args", named)
    assert done.returncode == 0, done.stderr
    assert "# signature: array1f[a], array2f[b,a], array1f[b]" in done.stdout
    assert "runtime.unbroadcast" not in done.stdout and "only_shape" not in done.stdout
    ranks = cli(workdir, "show", "fit:loss", "--mode", "reverse", "--args",
                "w: float64[:], X: float64[:, :], y: float64[:]")
    assert ranks.returncode == 0 and "runtime.unbroadcast" in ranks.stdout, ranks.stderr
    done = cli(workdir, "generate", "fit:loss", "--mode", "reverse", "--args", named, "-o", "fitted")
    assert done.returncode == 0, done.stderr
    result = python(workdir, textwrap.dedent('''
        import json
        import numpy as np
        import fitted

        rng = np.random.default_rng(1)
        w, X, y = rng.standard_normal(3), rng.standard_normal((6, 3)), rng.standard_normal(6)
        out, saved = fitted.loss_fwd(w, X, y)
        print(json.dumps({"got": fitted.loss_bwd(saved, 1.0).tolist(),
                          "expected": (2 * X.T @ (X @ w - y) / 6).tolist()}))
    '''))
    assert np.allclose(result["got"], result["expected"])
    done = cli(workdir, "show", "fit:loss", "--args", "w: float64[d], X: float64[n, 2], y: float64[n]")
    assert done.returncode == 2 and "not a kind" in done.stderr, done.stderr


def test_generate_writes_all_or_nothing_and_only_what_changed(workdir):
    package = workdir / "ship"
    done = cli(workdir, "generate", "model:loss", "--mode", "reverse", "-o", "ship")
    assert done.returncode == 0, done.stderr
    init = package / "__init__.py"
    init.write_text("SCALE = 2.0  # the user's own line\n\n" + init.read_text())
    modules = {p.name: p.stat().st_mtime_ns for p in package.glob("*.py") if p.name != "__init__.py"}
    done = cli(workdir, "generate", "model:loss", "--mode", "reverse", "-o", "ship")
    assert done.returncode == 0, done.stderr
    assert {p.name: p.stat().st_mtime_ns for p in package.glob("*.py") if p.name != "__init__.py"} == modules
    text = init.read_text()
    assert text.startswith("SCALE = 2.0") and text.count("from .") >= 1 and text.count("SCALE") == 1
    # a failing run (a target that does not exist) leaves the package as it was
    before = {p.name: p.read_bytes() for p in package.glob("*.py")}
    done = cli(workdir, "generate", "model:loss", "model:nothing_here", "-o", "ship")
    assert done.returncode == 2
    assert {p.name: p.read_bytes() for p in package.glob("*.py")} == before
    assert not [p for p in workdir.iterdir() if ".staging." in p.name]


def test_a_warning_names_the_package_file_not_the_staging_copy(workdir):
    assert cli(workdir, "generate", "model:inner", "--mode", "reverse", "-o", "derived").returncode == 0
    (module,) = (workdir / "derived").glob("model__inner__reverse__*.py")
    module.write_text(module.read_text().replace("return ct_x", "return 2.0 * ct_x"))  # an edit
    source = workdir / "model.py"
    source.write_text(source.read_text().replace("np.sin(x) * x", "np.sin(x) * x * 1.5"))
    done = cli(workdir, "generate", "model:inner", "--mode", "reverse", "-o", "derived")
    assert done.returncode == 0, done.stderr
    assert "was edited by hand" in done.stderr
    assert f"derived{os.sep}{module.name} was edited" in done.stderr
    assert ".staging." not in done.stderr
