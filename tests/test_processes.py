"""Derived rules in other processes: functions made by the API and derived rules pickle by
reference (how they were made; the function by its module and name), and a worker loads
their modules from the cache by name or derives them again. multiprocessing with the spawn
start method, and a Dask cluster of worker processes, as users scale out."""

import multiprocessing
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tangent_ast as ta

MODEL = textwrap.dedent('''
    import numpy as np


    def loss(w, X, y):
        return np.mean((X @ w - y) ** 2) + 0.1 * np.sum(np.tanh(w) ** 2)
''')


@pytest.fixture
def model(tmp_path, monkeypatch):
    """An importable module of the user's (workers import it by name)."""
    (tmp_path / "scaled_model.py").write_text(MODEL)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    import scaled_model

    yield scaled_model
    sys.modules.pop("scaled_model", None)


def _data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 4))
    return X, X @ np.array([1.0, -2.0, 0.5, 3.0])


def test_made_functions_and_rules_pickle_by_reference(model):
    X, y = _data()
    w = np.full(4, 0.3)
    for made in (
        ta.grad(model.loss),
        ta.value_and_grad(model.loss),
        ta.hvp(model.loss),
        ta.hessian(model.loss),
        ta.jacfwd(model.loss),
        ta.jacrev(model.loss),
    ):
        again = pickle.loads(pickle.dumps(made))
        args = (w, X, y, np.ones(4)) if "hvp" in repr(made) else (w, X, y)
        np.testing.assert_allclose(np.asarray(again(*args)[1] if "value_and_grad" in repr(made) else again(*args)), np.asarray(made(*args)[1] if "value_and_grad" in repr(made) else made(*args)))
        assert again.__name__ == "loss"
    rule = ta.derive(model.loss, "reverse", args=(w, X, y))
    assert pickle.loads(pickle.dumps(rule)).path == rule.path
    fwd = pickle.loads(pickle.dumps(rule.fwd))
    assert fwd is rule.fwd


def test_a_fresh_interpreter_imports_a_derived_module_by_its_name(model, tmp_path):
    X, y = _data()
    rule = ta.derive(model.loss, "reverse", args=(np.zeros(4), X, y))
    payload = tmp_path / "fwd.pickle"
    payload.write_bytes(pickle.dumps((rule.fwd, rule.bwd, X, y)))
    code = textwrap.dedent(f'''
        import pickle
        import numpy as np
        fwd, bwd, X, y = pickle.loads(open({str(payload)!r}, "rb").read())
        out, saved = fwd(np.ones(4), X, y)
        print(repr(float(out)), list(bwd(saved, 1.0)))
    ''')
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    expected = ta.grad(model.loss)(np.ones(4), X, y)
    value, gradient = done.stdout.split(" ", 1)
    assert float(value) == pytest.approx(model.loss(np.ones(4), X, y))
    np.testing.assert_allclose(eval(gradient), expected)


def test_a_spawned_pool_maps_a_gradient_over_parameters(model):
    X, y = _data()
    gradient = ta.grad(model.loss)
    points = [np.full(4, s) for s in (-1.0, 0.0, 0.5, 2.0)]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        got = pool.starmap(gradient, [(w, X, y) for w in points])
        products = pool.starmap(ta.hvp(model.loss), [(w, X, y, np.ones(4)) for w in points])
    for w, g, hv in zip(points, got, products, strict=True):
        np.testing.assert_allclose(g, gradient(w, X, y))
        np.testing.assert_allclose(hv, ta.hvp(model.loss)(w, X, y, np.ones(4)))


def test_a_dask_cluster_maps_a_gradient_over_parameters(model):
    distributed = pytest.importorskip("distributed")
    X, y = _data()
    gradient = ta.grad(model.loss)
    points = [np.full(4, s) for s in (-1.0, 0.5, 2.0)]
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as client:
        futures = client.map(gradient, points, X=X, y=y) if False else [
            client.submit(gradient, w, X, y) for w in points
        ]
        got = client.gather(futures)
    for w, g in zip(points, got, strict=True):
        np.testing.assert_allclose(g, gradient(w, X, y))


def test_a_pullback_pickles_as_the_point_it_was_made_at(model):
    X, y = _data()
    w = np.full(4, 0.3)
    out, pullback = ta.vjp(model.loss, w, X, y, wrt=0)
    again = pickle.loads(pickle.dumps(pullback))
    np.testing.assert_allclose(again(2.0), pullback(2.0))
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        np.testing.assert_allclose(pool.apply(pullback, (2.0,)), pullback(2.0))
