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

REPO_ROOT = Path(__file__).resolve().parent.parent

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


def test_deriving_twice_gives_identical_files(work):
    run(work, cache=work.parent / "first")
    run(work, cache=work.parent / "second")
    first = sorted((work.parent / "first").glob("*.py"))
    second = sorted((work.parent / "second").glob("*.py"))
    assert [p.name for p in first] == [p.name for p in second] == [MODULE]
    assert first[0].read_bytes() == second[0].read_bytes()


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
