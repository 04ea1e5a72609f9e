"""Second derivatives and Jacobians, timed side by side with their baselines in one run.

Run from the repository root::

    python benchmarks/bench_second_order.py           # ~20 s
    python benchmarks/bench_second_order.py --quick

* hvp of Rosenbrock (n = 100 000) against SciPy's analytic ``rosen_hess_prod``;
* ``jacfwd`` of an elementwise map of n = 100 inputs (one pass, a batch of 100 tangents)
  against n separate ``jvp`` calls; ``jacrev`` against n pullbacks; ``hessian`` against
  n ``hvp`` calls;
* ``hessian`` of a small function against autograd's (if autograd is installed).

Every result is first checked against its baseline (``np.allclose``); the timings are the
minimum over repeats of ``timeit``, reported as ratios to the baseline.
"""

import argparse
import os
import sys
import tempfile
import timeit

os.environ.setdefault("TANGENT_AST_CACHE", tempfile.mkdtemp(prefix="tangent_ast_bench_"))
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))

import numpy as np  # noqa: E402

import tangent_ast as ta  # noqa: E402

try:
    from scipy.optimize import rosen_hess_prod
except ImportError:  # pragma: no cover - optional
    rosen_hess_prod = None
try:
    import autograd
    import autograd.numpy as anp
except ImportError:  # pragma: no cover - optional
    autograd = anp = None


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def elementwise_map(x):
    return np.sin(x) * x + np.exp(-x * x)


def rosenbrock_autograd(x):
    return anp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def small(x):
    return np.sum(np.tanh(x) ** 2 * x[::-1]) + np.sum(x**3)


def small_autograd(x):
    return anp.sum(anp.tanh(x) ** 2 * x[::-1]) + anp.sum(x**3)


def best(call, repeat, number):
    return min(timeit.repeat(call, repeat=repeat, number=number)) / number


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    repeat = 3 if parser.parse_args().quick else 7
    rng = np.random.default_rng(0)
    rows = []

    x, p = rng.standard_normal(100_000), rng.standard_normal(100_000)
    product = ta.hvp(rosenbrock)
    if rosen_hess_prod is not None:
        assert np.allclose(product(x, p), rosen_hess_prod(x, p))
        base = best(lambda: rosen_hess_prod(x, p), repeat, 5)
        ours = best(lambda: product(x, p), repeat, 5)
        rows.append(("hvp rosenbrock n=1e5", "scipy rosen_hess_prod", base, ours))
    if autograd is not None:
        from autograd import hessian_vector_product

        theirs = hessian_vector_product(rosenbrock_autograd)
        assert np.allclose(product(x, p), theirs(x, p))
        base = best(lambda: theirs(x, p), repeat, 5)
        ours = best(lambda: product(x, p), repeat, 5)
        rows.append(("hvp rosenbrock n=1e5", "autograd hvp", base, ours))

    x = rng.standard_normal(100)
    jacobian = ta.jacfwd(elementwise_map)

    def separate():
        columns = []
        for j in range(x.size):
            e = np.zeros(x.size)
            e[j] = 1.0
            columns.append(ta.jvp(elementwise_map, (x,), (e,))[1])
        return np.stack(columns, axis=1)

    assert np.allclose(jacobian(x), separate())
    base = best(separate, repeat, 3)
    ours = best(lambda: jacobian(x), repeat, 3)
    rows.append(("jacfwd n=100", "100 jvp calls", base, ours))

    dense = ta.hessian(small)
    product = ta.hvp(small)

    def separate_hvps():
        return np.stack([product(x, e) for e in np.eye(x.size)], axis=1)

    assert np.allclose(dense(x), separate_hvps())
    base = best(separate_hvps, repeat, 3)
    ours = best(lambda: dense(x), repeat, 3)
    rows.append(("hessian n=100", "100 hvp calls", base, ours))

    rows_of = ta.jacrev(elementwise_map)
    out, pullback = ta.vjp(elementwise_map, x)

    def separate_pullbacks():
        return np.stack([pullback(e) for e in np.eye(out.size)])

    assert np.allclose(rows_of(x), separate_pullbacks())
    base = best(separate_pullbacks, repeat, 3)
    ours = best(lambda: rows_of(x), repeat, 3)
    rows.append(("jacrev n=100", "100 pullbacks", base, ours))

    x = rng.standard_normal(20)
    if autograd is not None:
        theirs = autograd.hessian(small_autograd)
        assert np.allclose(dense(x), theirs(x))
        base = best(lambda: theirs(x), repeat, 3)
        ours = best(lambda: dense(x), repeat, 3)
        rows.append(("hessian n=20", "autograd.hessian", base, ours))

    print(f"{'workload':24} {'baseline':24} {'baseline':>11} {'tangent_ast':>12} {'ratio':>7}")
    for name, baseline, base, ours in rows:
        print(f"{name:24} {baseline:24} {base * 1e3:9.3f}ms {ours * 1e3:10.3f}ms {ours / base:7.2f}")


if __name__ == "__main__":
    main()
