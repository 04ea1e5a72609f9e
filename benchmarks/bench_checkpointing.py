"""Memory and time of a checkpointed loop against the same loop without checkpoints.

Run from the repository root::

    python benchmarks/bench_checkpointing.py               # T=4000, H=200, 16 snapshots
    python benchmarks/bench_checkpointing.py --steps 1000 --hidden 100 --snapshots 8

The workload is an RNN-style loop ``h = tanh(W @ h + xs[t])`` over T steps of a hidden
state of H floats, its loss ``sum(h ** 2)``, differentiated with respect to ``W``. The
same function is written twice, with ``for t in ta.checkpointed(range(T), snapshots=k)``
and with ``for t in range(T)``. For each it reports, in one run and side by side:

* peak memory of one gradient call (``tracemalloc``: NumPy's arrays are traced), and
  that peak over the primal's own peak (one forward pass of the loop);
* time of one gradient call (the minimum over ``--repeat`` calls);
* the largest difference between the two gradients (they should agree to the last bit);
* how many times the binomial schedule (revolve) runs a step at most: ``r + 1`` for the
  smallest ``r`` with ``C(k + r, r) >= T`` (``r`` forward, once more with its tapes).

Ratios are the result; absolute figures depend on the machine.
"""

import argparse
import math
import os
import sys
import tempfile
import textwrap
import time
import tracemalloc

os.environ.setdefault("TANGENT_AST_CACHE", tempfile.mkdtemp(prefix="tangent_ast_bench_"))
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))

import numpy as np  # noqa: E402

import tangent_ast as ta  # noqa: E402

SOURCE = """
import numpy as np
import tangent_ast as ta


def rnn_checkpointed(W, h0, xs):
    h = h0
    for t in ta.checkpointed(range(xs.shape[0]), snapshots={snapshots}):
        h = np.tanh(W @ h + xs[t])
    return np.sum(h ** 2)


def rnn(W, h0, xs):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t])
    return np.sum(h ** 2)
"""


def workload(snapshots):
    directory = tempfile.mkdtemp(prefix="bench_checkpointing_")
    with open(os.path.join(directory, "rnn_loops.py"), "w") as f:
        f.write(textwrap.dedent(SOURCE.format(snapshots=snapshots)))
    sys.path.insert(0, directory)
    import rnn_loops

    return rnn_loops


def peak_bytes(call):
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def best_time(call, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=4000)
    parser.add_argument("--hidden", type=int, default=200)
    parser.add_argument("--snapshots", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    loops = workload(args.snapshots)
    rng = np.random.default_rng(0)
    H, T = args.hidden, args.steps
    W = rng.normal(size=(H, H)) / np.sqrt(H)
    h0 = rng.normal(size=H)
    xs = rng.normal(size=(T, H))
    marked, plain = ta.grad(loops.rnn_checkpointed), ta.grad(loops.rnn)
    g_marked, g_plain = marked(W, h0, xs), plain(W, h0, xs)  # derive (and warm) both
    difference = float(np.max(np.abs(g_marked - g_plain)))
    primal = peak_bytes(lambda: loops.rnn(W, h0, xs))
    rows = []
    for label, gradient in (("without checkpoints", plain), ("checkpointed", marked)):
        memory = peak_bytes(lambda gradient=gradient: gradient(W, h0, xs))
        seconds = best_time(lambda gradient=gradient: gradient(W, h0, xs), args.repeat)
        rows.append((label, memory, seconds))
    runs = 0
    while math.comb(args.snapshots + runs, runs) < T:
        runs += 1
    print(f"RNN loop: T={T}, H={H}, {args.snapshots} snapshots; gradient wrt W ({H}x{H})")
    print(f"binomial schedule: each step runs at most {runs + 1} times (r = {runs})")
    print(f"primal peak memory: {primal / 1e6:.2f} MB")
    print(f"{'':22} {'peak MB':>9} {'x primal':>9} {'time ms':>9}")
    for label, memory, seconds in rows:
        print(f"{label:22} {memory / 1e6:9.2f} {memory / primal:9.1f} {seconds * 1e3:9.1f}")
    (_, plain_memory, plain_time), (_, marked_memory, marked_time) = rows
    print(
        f"checkpointed / without: memory {marked_memory / plain_memory:.3f}, "
        f"time {marked_time / plain_time:.2f}; largest gradient difference {difference:.1e}"
    )


if __name__ == "__main__":
    main()
