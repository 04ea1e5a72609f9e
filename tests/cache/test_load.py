"""Generated modules as artifacts in the cache: determinism, reuse, hand edits, staleness,
concurrent writers and corrupted files. Each derivation runs in a fresh interpreter."""

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.usefixtures("direct_route")  # its text, names, docs

REPO_ROOT = Path(__file__).resolve().parents[2]

SOURCE = textwrap.dedent('''
    import numpy as np


    def f(x):
        y = np.sin(x) * x
        return y + 3.0 * x
''')

MODULE = "fnmod__f__reverse__x__float.py"

GRADIENT = textwrap.dedent('''
    import json, time, warnings
    start = time.perf_counter()
    import tangent_ast as ta
    import tangent_ast.pipeline as pipeline
    import fnmod

    derivations = []
    derive_module = pipeline.derive_module

    def counting(fn, *args, **kwargs):
        derivations.append(fn.__qualname__)
        return derive_module(fn, *args, **kwargs)

    pipeline.derive_module = counting
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = time.perf_counter()
        gradient = ta.grad(fnmod.f)(0.7)
        done = time.perf_counter()
    print(json.dumps({"gradient": gradient, "derivations": derivations,
                      "warnings": [w.category.__name__ for w in caught],
                      "first_gradient_s": done - first, "since_start_s": done - start}))
''')


def expected_gradient(x=0.7):
    """d/dx (sin(x) x + 3x)."""
    return np.cos(x) * x + np.sin(x) + 3.0


@pytest.fixture
def work(tmp_path):
    """A directory holding ``fnmod.py``; the cache is ``work/../cache``."""
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "fnmod.py").write_text(SOURCE)
    return tmp_path / "work"


def command(work, code, cache=None):
    """argv, cwd and env of a fresh interpreter running ``code`` in ``work`` with its own cache."""
    env = dict(os.environ)
    env["TANGENT_AST_CACHE"] = str(cache or work.parent / "cache")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    return dict(args=[sys.executable, "-c", code], cwd=work, env=env)


def run(work, code=GRADIENT, cache=None):
    """Run ``code`` in a fresh interpreter; its stdout parsed as JSON."""
    done = subprocess.run(**command(work, code, cache), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def module_path(work):
    return work.parent / "cache" / MODULE


@pytest.mark.usefixtures("unverified")
def test_deriving_twice_gives_identical_files(work):
    run(work, cache=work.parent / "first")
    run(work, cache=work.parent / "second")
    first = sorted((work.parent / "first").glob("*.py"))
    second = sorted((work.parent / "second").glob("*.py"))
    assert [p.name for p in first] == [p.name for p in second] == [MODULE]
    assert first[0].read_bytes() == second[0].read_bytes()


@pytest.mark.usefixtures("unverified")
def test_a_second_process_reuses_the_module(work):
    cold_start = time.perf_counter()
    cold = run(work)
    cold_wall = time.perf_counter() - cold_start
    assert cold["derivations"] == ["f"]
    path = module_path(work)
    mtime, text = path.stat().st_mtime_ns, path.read_bytes()

    warm_start = time.perf_counter()
    warm = run(work)
    warm_wall = time.perf_counter() - warm_start
    assert warm["derivations"] == []
    assert warm["gradient"] == pytest.approx(expected_gradient())
    assert path.stat().st_mtime_ns == mtime and path.read_bytes() == text
    print(f"\ncold: first gradient {cold['first_gradient_s'] * 1e3:.1f} ms, process {cold_wall:.2f} s; "
          f"warm: first gradient {warm['first_gradient_s'] * 1e3:.1f} ms, import + gradient "
          f"{warm['since_start_s'] * 1e3:.1f} ms, process {warm_wall:.2f} s")


def edit_rule(path):
    """Make the reverse sweep return twice the cotangent: a hand edit of the rule's body."""
    text = path.read_text()
    head, sep, last = text.rstrip("\n").rpartition("\n    return ")
    assert sep, text
    path.write_text(f"{head}{sep}2.0 * ({last})\n")


def test_an_edited_rule_is_used_and_never_overwritten(work):
    run(work)
    path = module_path(work)
    edit_rule(path)
    edited = path.read_bytes()

    result = run(work)
    assert result["derivations"] == [] and result["warnings"] == []
    assert result["gradient"] == pytest.approx(2 * expected_gradient())
    run(work, "import tangent_ast as ta, fnmod; ta.derive(fnmod.f, 'reverse', args=(0.7,)); print('{}')")
    assert path.read_bytes() == edited


STRICT = textwrap.dedent('''
    import json
    import tangent_ast as ta
    import fnmod
    try:
        ta.derive(fnmod.f, "reverse", args=(0.7,), strict=True)
        print(json.dumps("no error"))
    except ta.TangentAstError as exc:
        print(json.dumps(type(exc).__name__))
''')


def test_editing_the_source_of_an_edited_rule_warns(work):
    run(work)
    path = module_path(work)
    edit_rule(path)
    edited = path.read_bytes()
    source = work / "fnmod.py"
    source.write_text(source.read_text().replace("    y = np.sin(x) * x\n", "    y = np.sin(x) * x  # edited\n"))

    result = run(work)
    assert result["warnings"] == ["StaleRuleWarning"]
    assert result["derivations"] == []
    assert result["gradient"] == pytest.approx(2 * expected_gradient())
    assert run(work, STRICT) == "StaleRuleError"
    assert path.read_bytes() == edited


@pytest.mark.usefixtures("unverified")
def test_concurrent_processes_leave_one_valid_module(work):
    processes = [subprocess.Popen(**command(work, GRADIENT), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for _ in range(8)]
    outputs = [p.communicate(timeout=120) for p in processes]
    for p, (out, err) in zip(processes, outputs):
        assert p.returncode == 0, err
        assert json.loads(out)["gradient"] == pytest.approx(expected_gradient())
    cache = work.parent / "cache"
    assert sorted(p.name for p in cache.iterdir() if p.name != "__pycache__") == [MODULE]
    compile(module_path(work).read_text(), MODULE, "exec")
    after = run(work)
    assert after["derivations"] == [] and after["gradient"] == pytest.approx(expected_gradient())


@pytest.mark.parametrize("cut", ["half", "before_bwd"])
def test_a_truncated_module_is_derived_again(work, cut):
    run(work)
    path = module_path(work)
    original = path.read_text()
    end = len(original) // 2 if cut == "half" else original.index("\ndef f_bwd")
    path.write_text(original[:end])

    result = run(work)
    assert result["derivations"] == ["f"]
    assert result["gradient"] == pytest.approx(expected_gradient())
    assert path.read_text() == original


def run_script(work, name, source, cache=None):
    """Run ``source`` as the script ``work/name`` (its functions live in ``__main__``) in a fresh
    interpreter; its stdout parsed as JSON."""
    (work / name).write_text(textwrap.dedent(source))
    spec = command(work, "", cache)
    spec["args"] = [sys.executable, name]
    done = subprocess.run(**spec, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


RULE_HELPER_IN_MAIN = '''
    import json
    import numpy as np
    import tangent_ast as ta
    import tangent_ast.pipeline as pipeline

    def slope(x):
        return 1 / (1 + np.exp(-x))

    def softplus(x):
        return np.log1p(np.exp(x))

    ta.defvjp(softplus, lambda ct, ans, x: ct * slope(x))

    def stable_logsumexp(x):
        m = np.max(x)
        return m + np.log(np.sum(np.exp(x - m)))

    @ta.defvjp(stable_logsumexp)
    def logsumexp_vjp(ct, ans, x):
        w = np.exp(x - ans)
        return ct * w

    def objective(x):
        return np.sum(softplus(x)) + 2.0 * stable_logsumexp(x)

    x = np.array([0.5, -1.0, 2.0])
    print(json.dumps({"gradient": ta.grad(objective)(x).tolist(),
                      "expected": (slope(x) + 2.0 * np.exp(x) / np.sum(np.exp(x))).tolist()}))
'''


def test_rule_helpers_defined_in_main_are_bound_by_the_loader(work):
    """An inlined rule formula reading a helper of the script, and a rule of several statements
    defined in the script, are bound in the process that derives them and in a later one
    that finds the module fresh on disk (which is not rewritten)."""
    first = run_script(work, "script.py", RULE_HELPER_IN_MAIN)
    assert first["gradient"] == pytest.approx(first["expected"])
    (path,) = (work.parent / "cache").glob("main__objective__reverse__*.py")
    assert "slope(x)" in path.read_text() and "logsumexp_vjp(" in path.read_text()
    written = path.stat().st_mtime_ns, path.read_bytes()
    again = run_script(work, "script.py", RULE_HELPER_IN_MAIN)
    assert again["gradient"] == pytest.approx(first["expected"])
    assert (path.stat().st_mtime_ns, path.read_bytes()) == written


def test_a_value_a_rule_closes_over_is_bound(tmp_path):
    import tangent_ast as ta

    def make(factor):
        def scaled(x):
            return factor * x

        ta.defvjp(scaled, lambda ct, ans, x: factor * ct)
        return scaled

    scaled = make(np.array(3.0))

    def objective(x):
        return scaled(x) * x

    assert ta.grad(objective, cache=tmp_path)(2.0) == pytest.approx(12.0)


def test_a_module_bound_value_no_rule_gives_is_refused_before_it_runs(tmp_path):
    """A name the header says the loader binds, which neither the function nor a rule gives,
    is a TangentAstError when the rule is derived, not a NameError when it runs."""
    import tangent_ast as ta

    def objective(x):
        return x * x

    rule = ta.derive(objective, "reverse", args=(2.0,), cache=tmp_path)
    text = rule.path.read_text().replace(
        "# body-hash:", "# bound-by-loader: nowhere  (closure cells ...)\n# body-hash:"
    )
    rule.path.write_text(text.replace("return ct_x", "return nowhere(ct_x)"))
    with pytest.raises(ta.TangentAstError, match="nowhere"):
        ta.derive(objective, "reverse", args=(2.0,), cache=tmp_path)


CALLS = textwrap.dedent('''
    import numpy as np


    def inner(x):
        return np.sin(x) * x


    def outer(x):
        return inner(x) * 2.0 + x
''')

OUTER_GRADIENT = textwrap.dedent('''
    import json
    import tangent_ast as ta
    import calls
    print(json.dumps(ta.grad(calls.outer)(0.7)))
''')


def test_a_deleted_callee_module_is_derived_again(work):
    (work / "calls.py").write_text(CALLS)
    expected = 2.0 * (np.cos(0.7) * 0.7 + np.sin(0.7)) + 1.0
    assert run(work, OUTER_GRADIENT) == pytest.approx(expected)
    cache = work.parent / "cache"
    (outer,) = cache.glob("calls__outer__reverse__*.py")
    (inner,) = cache.glob("calls__inner__reverse__*.py")
    written, text = outer.stat().st_mtime_ns, inner.read_text()
    inner.unlink()
    assert run(work, OUTER_GRADIENT) == pytest.approx(expected)  # a fresh process
    assert inner.read_text() == text and outer.stat().st_mtime_ns == written
    same_process = textwrap.dedent('''
        import json, pathlib
        import tangent_ast as ta
        import calls
        first = ta.derive(calls.outer, "reverse", args=(0.7,))
        for path in pathlib.Path(first.path).parent.glob("calls__inner__reverse__*.py"):
            path.unlink()
        rule = ta.derive(calls.outer, "reverse", args=(0.7,))
        out, saved = rule.fwd(0.7)
        print(json.dumps(rule.bwd(saved, 1.0)))
    ''')
    assert run(work, same_process) == pytest.approx(expected)
    assert inner.read_text() == text and outer.stat().st_mtime_ns == written


EDIT_IN_PROCESS = textwrap.dedent('''
    import json
    import tangent_ast as ta
    import fnmod

    def gradient(rule):
        out, saved = rule.fwd(0.7)
        return rule.bwd(saved, 1.0)

    first = ta.derive(fnmod.f, "reverse", args=(0.7,))
    before = gradient(first)
    text = first.path.read_text()
    head, sep, last = text.rstrip("\\n").rpartition("\\n    return ")
    first.path.write_text(f"{head}{sep}3.0 * ({last})\\n")
    again = ta.derive(fnmod.f, "reverse", args=(0.7,))
    print(json.dumps({"before": before, "after": gradient(again), "grad": ta.grad(fnmod.f)(0.7),
                      "shown": "3.0 * (" in again.source}))
''')


def test_an_edit_in_the_same_process_is_what_runs(work):
    result = run(work, EDIT_IN_PROCESS)
    assert result["before"] == pytest.approx(expected_gradient())
    assert result["after"] == pytest.approx(3 * expected_gradient())
    assert result["grad"] == pytest.approx(3 * expected_gradient())
    assert result["shown"]
    assert "3.0 * (" in module_path(work).read_text()  # the edit is kept
