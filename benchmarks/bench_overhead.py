"""Time the per-call overhead of tangent_ast's grad wrapper over its derived rule.

Run from the repository root::

    python benchmarks/bench_overhead.py            # ~10 s
    python benchmarks/bench_overhead.py --quick    # fewer repeats

For each workload it times, in one run and side by side, with the repeats interleaved:

* ``ta.vg``    ``tangent_ast.value_and_grad(f, wrt)(*args)``, the public wrapper;
* ``ta.rule``  the rule it runs, called directly: ``rule.bwd(rule.fwd(*args)[1], 1.0)``;

and reports ``ta.vg - ta.rule``: what the wrapper adds to each call (finding the rule
for the kinds of the arguments, checking it is current, checking the output and the
cotangents). The workloads are small, so that this difference is not lost in the noise
of the rule's own time: the scalar chain of ``bench_gradients.py`` (two Python floats)
and its Rosenbrock function of a vector of 10. Both results are first checked to be
equal. Each time is the minimum over the repeats (``timeit``, time per call).
"""

import argparse
import os
import sys
import tempfile
import timeit

# As bench_gradients.py: a private cache, one BLAS thread, the repository importable.
os.environ.setdefault("TANGENT_AST_CACHE", tempfile.mkdtemp(prefix="tangent_ast_bench_"))
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
sys.path.insert(1, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
from bench_gradients import rosenbrock, scalar_chain  # noqa: E402

import tangent_ast as ta  # noqa: E402


def workloads():
    rng = np.random.default_rng(0)
    return [
        ("scalar chain (2 floats)", scalar_chain, ("x", "y"), (0.7, 1.3)),
        ("rosenbrock (n=10)", rosenbrock, "x", (rng.standard_normal(10),)),
    ]


def measure(f, wrt, args, repeat, seconds=0.02):
    """Minimum seconds per call of the wrapper and of the rule, their repeats interleaved
    so that a slow moment of the machine hits both alike."""
    vg = ta.value_and_grad(f, wrt=wrt)
    rule = ta.derive(f, mode="reverse", wrt=wrt, args=args)
    fwd, bwd = rule.fwd, rule.bwd

    def direct():
        out, saved = fwd(*args)
        return out, bwd(saved, 1.0)

    (value, gradient), (want_value, want) = vg(*args), direct()
    if not (
        value == want_value
        and all(np.array_equal(a, b) for a, b in zip(np.atleast_1d(gradient), np.atleast_1d(want)))
    ):
        raise SystemExit(f"MISMATCH: value_and_grad of {f.__name__} differs from its rule")
    timers = {"ta.vg": timeit.Timer(lambda: vg(*args)), "ta.rule": timeit.Timer(direct)}
    number = max(1, int(seconds / max(timers["ta.rule"].timeit(100) / 100, 1e-9)))
    best = dict.fromkeys(timers, float("inf"))
    for _ in range(repeat):
        for key, timer in timers.items():
            best[key] = min(best[key], timer.timeit(number) / number)
    return best


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--repeat", type=int, default=30, help="timeit repeats (the minimum is kept)"
    )
    parser.add_argument("--quick", action="store_true", help="10 repeats instead of 30")
    options = parser.parse_args(argv)
    repeat = 10 if options.quick else options.repeat
    print(f"numpy {np.__version__}, tangent_ast {ta.__version__}, python {sys.version.split()[0]}")
    print()
    print(f"{'workload':26}{'ta.vg':>10}{'ta.rule':>10}{'overhead':>10}{'ratio':>8}")
    print("-" * 64)
    for name, f, wrt, args in workloads():
        best = measure(f, wrt, args, repeat)
        vg, rule = best["ta.vg"] * 1e6, best["ta.rule"] * 1e6
        print(f"{name:26}{vg:7.2f} us{rule:7.2f} us{vg - rule:7.2f} us{vg / rule:7.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
