"""Time gradients derived for the Numba backend against hand-written gradients.

Run from the repository root (Numba installed: ``pip install -e ".[numba]"``)::

    python benchmarks/bench_numba.py            # all workloads
    python benchmarks/bench_numba.py --quick    # fewer repeats

For each workload, in one run and side by side (time per gradient, the minimum over
``--repeat`` repeats; the ratio to ``hand`` is the result, absolute times depend on the
machine):

* ``hand``          a hand-written NumPy gradient run by Python (bench_gradients.py's);
* ``hand njit``     the same hand-written gradient compiled by ``numba.njit``;
* ``ta numpy``      tangent_ast's rule of the NumPy backend, ``bwd(fwd(*args)[1], 1.0)``;
* ``ta numba``      the rule of the Numba backend, called the same way;
* ``ta.grad numba`` ``tangent_ast.grad(f, wrt, backend="numba")``, the public wrapper;
* ``jax jit``       ``jax.jit(jax.grad(f))`` of the same function in ``jax.numpy``, where
                    JAX is installed.

Every derived gradient is first checked against the hand-written one (``np.allclose``); the
script exits with status 1 if one differs. Compilation is not timed: each candidate is
called once before its timing.
"""

import argparse
import math
import os
import sys
import tempfile
import timeit

os.environ.setdefault("TANGENT_AST_CACHE", tempfile.mkdtemp(prefix="tangent_ast_bench_"))
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numba  # noqa: E402
import numpy as np  # noqa: E402
from bench_gradients import rnn_loss, rnn_loss_hand, scalar_loop, scalar_loop_hand  # noqa: E402

import tangent_ast as ta  # noqa: E402

try:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
except ImportError:  # pragma: no cover - optional
    jax = jnp = None


# The scalar loop of a thousand steps with a branch (the compiled backends' own workload).


def branchy_loop(x, n):
    s = 0.0
    for i in range(n):
        if s > 1.0:
            s = s * 0.5 + math.sin(x * i)
        else:
            s = s + x * x
    return s


def branchy_loop_hand(x, n):
    taken = np.empty(n, dtype=np.bool_)
    s = 0.0
    for i in range(n):
        taken[i] = s > 1.0
        if taken[i]:
            s = s * 0.5 + math.sin(x * i)
        else:
            s = s + x * x
    ct_s, ct_x = 1.0, 0.0
    for i in range(n - 1, -1, -1):
        if taken[i]:
            ct_x += ct_s * math.cos(x * i) * i
            ct_s = ct_s * 0.5
        else:
            ct_x += 2.0 * ct_s * x
    return s, (ct_x,)


def scalar_loop_hand_arrays(x, a):
    """bench_gradients' hand-written scalar loop gradient, its states in an array and its
    reverse loop down a range (what Numba compiles)."""
    xs = np.empty(51)
    xs[0] = x
    s = 0.0
    for i in range(50):
        x = math.sin(a * x) + 0.5 * x
        xs[i + 1] = x
        s = s + x * x
    ct_x, ct_a = 0.0, 0.0
    for i in range(49, -1, -1):
        ct_x += 2.0 * xs[i + 1]
        c = math.cos(a * xs[i]) * ct_x
        ct_a += c * xs[i]
        ct_x = c * a + 0.5 * ct_x
    return s, (ct_x, ct_a)


def rnn_loss_hand_arrays(W, U, h0, xs):
    """bench_gradients' hand-written RNN gradient with its states in one array (Numba does
    not compile a list of arrays grown by append and read from the end)."""
    T = xs.shape[0]
    hs = np.empty((T + 1, h0.shape[0]))
    hs[0] = h0
    for t in range(T):
        hs[t + 1] = np.tanh(W @ hs[t] + U @ xs[t])
    out = np.sum(hs[T] ** 2)
    dW = np.zeros_like(W)
    dU = np.zeros_like(U)
    ct_h = 2.0 * hs[T]
    for t in range(T - 1, -1, -1):
        ct_a = ct_h * (1.0 - hs[t + 1] ** 2)
        dW += np.outer(ct_a, hs[t])
        dU += np.outer(ct_a, xs[t])
        ct_h = W.T @ ct_a
    return out, (dW, dU)


def _jax_versions():
    if jax is None:
        return {}

    def scalar_loop_jax(x, a):
        s = 0.0
        for i in range(50):
            x = jnp.sin(a * x) + 0.5 * x
            s = s + x * x
        return s

    def rnn_jax(W, U, h0, xs):
        def step(h, x):
            return jnp.tanh(W @ h + U @ x), None

        h, _ = jax.lax.scan(step, h0, xs)
        return jnp.sum(h**2)

    def branchy_jax(x, n):
        def step(i, s):
            return jnp.where(s > 1.0, s * 0.5 + jnp.sin(x * i), s + x * x)

        return jax.lax.fori_loop(0, n, step, 0.0)

    return {
        "scalar loop (50 steps)": (scalar_loop_jax, (0, 1)),
        "RNN 32-64, T=50": (rnn_jax, (0, 1)),
        "branchy loop (1000 steps)": (branchy_jax, 0),  # n static: fori_loop by scan
    }


def workloads():
    rng = np.random.default_rng(1)
    T, h_dim, x_dim = 50, 64, 32
    W = rng.standard_normal((h_dim, h_dim)) / np.sqrt(h_dim)
    U = rng.standard_normal((h_dim, x_dim)) / np.sqrt(x_dim)
    h0 = rng.standard_normal(h_dim)
    xs = rng.standard_normal((T, x_dim))
    return [
        # name, function, hand (Python), hand (for njit), wrt, args
        ("scalar loop (50 steps)", scalar_loop, scalar_loop_hand, scalar_loop_hand_arrays,
         ("x", "a"), (0.3, 1.7)),
        ("RNN 32-64, T=50", rnn_loss, rnn_loss_hand, rnn_loss_hand_arrays,
         ("W", "U"), (W, U, h0, xs)),
        ("branchy loop (1000 steps)", branchy_loop, branchy_loop_hand, branchy_loop_hand,
         ("x",), (0.3, 1000)),
    ]  # fmt: skip


def _gradient_of(rule):
    def gradient(*args):
        _, saved = rule.fwd(*args)
        return rule.bwd(saved, 1.0)

    return gradient


def _per_call(call, repeat):
    call()
    timer = timeit.Timer(call)
    loops, _ = timer.autorange()
    return min(timer.repeat(repeat, loops)) / loops


def _same(got, want):
    got = got if isinstance(got, tuple) else (got,)
    return len(got) == len(want) and all(
        np.allclose(g, w, rtol=1e-7, atol=1e-10) for g, w in zip(got, want, strict=True)
    )


def run(repeat):
    rows, wrong = [], False
    jax_versions = _jax_versions()
    for name, f, hand, hand_for_njit, wrt, args in workloads():
        want = hand(*args)[1]
        candidates = {"hand": lambda h=hand: h(*args)}
        compiled_hand = numba.njit(hand_for_njit)
        candidates["hand njit"] = lambda h=compiled_hand: h(*args)
        for backend in ("numpy", "numba"):
            rule = ta.derive(f, "reverse", wrt, args=args, backend=backend)
            gradient = _gradient_of(rule)
            if not _same(gradient(*args), want):
                print(f"{name}: the {backend} backend's gradient differs from the hand-written one")
                wrong = True
            candidates[f"ta {backend}"] = lambda g=gradient: g(*args)
        derived = ta.grad(f, wrt, backend="numba")
        candidates["ta.grad numba"] = lambda g=derived: g(*args)
        if name in jax_versions:
            jf, argnums = jax_versions[name]
            static = (1,) if argnums == 0 else ()  # the trip count, a Python int
            jitted = jax.jit(jax.grad(jf, argnums), static_argnums=static)
            candidates["jax jit"] = lambda j=jitted: jax.block_until_ready(j(*args))
        times = {label: _per_call(call, repeat) for label, call in candidates.items()}
        rows.append((name, times))
    return rows, wrong


def _fmt(seconds):
    for unit, scale in (("s", 1), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"


def print_table(rows):
    labels = ["hand", "hand njit", "ta numpy", "ta numba", "ta.grad numba", "jax jit"]
    print(f"{'workload':28}" + "".join(f"{label:>16}" for label in labels))
    for name, times in rows:
        hand = times["hand"]
        cells = []
        for label in labels:
            t = times.get(label)
            cells.append("-" if t is None else f"{_fmt(t)} ({t / hand:.3f})")
        print(f"{name:28}" + "".join(f"{c:>16}" for c in cells))
    print("\n(time per gradient; in parentheses, the ratio to the hand-written NumPy gradient)")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 repeats instead of 7")
    parser.add_argument("--repeat", type=int, default=7)
    options = parser.parse_args(argv)
    rows, wrong = run(3 if options.quick else options.repeat)
    print_table(rows)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
