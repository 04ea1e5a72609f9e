"""Time tangent_ast's derived gradients against hand-written NumPy gradients.

Run from the repository root::

    python benchmarks/bench_gradients.py            # all workloads
    python benchmarks/bench_gradients.py --quick    # fewer repeats

For each workload it first checks that every derived gradient equals the
hand-written one (``np.allclose``) and exits with status 1 if one does not.
It then times, in one run and side by side:

* ``hand``      a hand-written NumPy gradient (the baseline, ratio 1.00);
* ``ta.vg``     ``tangent_ast.value_and_grad(f, wrt)`` (the public wrapper);
* ``ta.rule``   the generated rule called directly: ``rule.bwd(rule.fwd(*args)[1], 1.0)``,
                which shows the wrapper's own overhead;
* ``autograd``  ``autograd.value_and_grad`` (if autograd is importable).

Each timing is the minimum over ``--repeat`` repeats of ``timeit`` (time per
call). A last table sets ``ta.rule`` against ``hand`` in time, peak memory of one
call (``tracemalloc``'s peak; NumPy reports its arrays to it) and lines of code
(the rule's ``fwd`` and ``bwd`` functions against the hand-written function,
blank lines and comments not counted). Ratios to ``hand`` are the result; absolute times depend on the machine.
A workload that tangent_ast cannot derive is reported with its error, and the
other workloads still run.
"""

import argparse
import inspect
import math
import os
import sys
import tempfile
import timeit
import tracemalloc
import traceback

# Derived modules go to a private cache (unless TANGENT_AST_CACHE is set), so
# the benchmark never reuses or edits a rule from a previous run.
os.environ.setdefault("TANGENT_AST_CACHE", tempfile.mkdtemp(prefix="tangent_ast_bench_"))
# One BLAS thread unless told otherwise (--threads=N, or the variables set
# before running): multi-threaded BLAS on small matrices mostly measures
# thread scheduling noise. This must happen before numpy is imported.
_threads = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--threads=")), None)
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    if _threads is not None:
        os.environ[_name] = _threads
    else:
        os.environ.setdefault(_name, "1")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))

import numpy as np  # noqa: E402

import tangent_ast as ta  # noqa: E402

try:
    import autograd
    import autograd.numpy as anp
except ImportError:  # pragma: no cover - optional
    autograd = None
    anp = None


# --------------------------------------------------------------------------
# Workloads. Each: the function (NumPy), the same function for autograd
# (autograd.numpy), a hand-written value-and-gradient, the wrt names, the args.
# --------------------------------------------------------------------------

# 1. scalar chain: Python floats, a dozen math operations.

def scalar_chain(x, y):
    a = x * y
    b = math.sin(a)
    c = b + x ** 2
    d = math.exp(-c)
    e = d * y - x / y
    f = math.tanh(e)
    g = f * f + math.cos(x)
    h = math.log(1.0 + g * g)
    return h * y + math.sqrt(1.0 + x * x)


def scalar_chain_np(x, y):
    # autograd cannot differentiate the math module: the same chain with anp.
    a = x * y
    b = anp.sin(a)
    c = b + x ** 2
    d = anp.exp(-c)
    e = d * y - x / y
    f = anp.tanh(e)
    g = f * f + anp.cos(x)
    h = anp.log(1.0 + g * g)
    return h * y + anp.sqrt(1.0 + x * x)


def scalar_chain_hand(x, y):
    a = x * y
    b = math.sin(a)
    c = b + x ** 2
    d = math.exp(-c)
    e = d * y - x / y
    f = math.tanh(e)
    g = f * f + math.cos(x)
    h = math.log(1.0 + g * g)
    s = math.sqrt(1.0 + x * x)
    out = h * y + s
    # reverse sweep
    ct_h = y
    ct_y = h
    ct_x = x / s
    ct_g = ct_h * 2.0 * g / (1.0 + g * g)
    ct_f = ct_g * 2.0 * f
    ct_x -= ct_g * math.sin(x)
    ct_e = ct_f * (1.0 - f * f)
    ct_d = ct_e * y
    ct_y += ct_e * d + ct_e * x / (y * y)
    ct_x -= ct_e / y
    ct_c = -ct_d * d
    ct_b = ct_c
    ct_x += ct_c * 2.0 * x
    ct_a = ct_b * math.cos(a)
    ct_x += ct_a * y
    ct_y += ct_a * x
    return out, (ct_x, ct_y)


# 2. Rosenbrock of a vector (n = 1000).

def rosenbrock(x):
    head = x[:-1]
    tail = x[1:]
    return np.sum(100.0 * (tail - head ** 2) ** 2 + (1.0 - head) ** 2)


def rosenbrock_ag(x):
    head = x[:-1]
    tail = x[1:]
    return anp.sum(100.0 * (tail - head ** 2) ** 2 + (1.0 - head) ** 2)


def rosenbrock_hand(x):
    head = x[:-1]
    tail = x[1:]
    r = tail - head ** 2
    s = 1.0 - head
    out = np.sum(100.0 * r ** 2 + s ** 2)
    g = np.zeros_like(x)
    g[1:] += 200.0 * r
    g[:-1] += -400.0 * r * head - 2.0 * s
    return out, g


# 3. Logistic regression: X is 1000 x 50.

def logistic_loss(w, X, y):
    z = X @ w
    p = 1.0 / (1.0 + np.exp(-z))
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def logistic_loss_ag(w, X, y):
    z = anp.dot(X, w)
    p = 1.0 / (1.0 + anp.exp(-z))
    return -anp.mean(y * anp.log(p) + (1.0 - y) * anp.log(1.0 - p))


def logistic_loss_hand(w, X, y):
    z = X @ w
    p = 1.0 / (1.0 + np.exp(-z))
    out = -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))
    return out, X.T @ (p - y) / y.shape[0]


# 4. Two-layer MLP: tanh hidden layer of 64, batch 256, MSE loss.

def mlp_loss(W1, b1, W2, b2, X, Y):
    h = np.tanh(X @ W1 + b1)
    pred = h @ W2 + b2
    err = pred - Y
    return np.mean(err ** 2)


def mlp_loss_ag(W1, b1, W2, b2, X, Y):
    h = anp.tanh(anp.dot(X, W1) + b1)
    pred = anp.dot(h, W2) + b2
    err = pred - Y
    return anp.mean(err ** 2)


def mlp_loss_hand(W1, b1, W2, b2, X, Y):
    a = X @ W1 + b1
    h = np.tanh(a)
    pred = h @ W2 + b2
    err = pred - Y
    out = np.mean(err ** 2)
    ct_pred = 2.0 * err / err.size
    dW2 = h.T @ ct_pred
    db2 = ct_pred.sum(axis=0)
    ct_a = (ct_pred @ W2.T) * (1.0 - h * h)
    dW1 = X.T @ ct_a
    db1 = ct_a.sum(axis=0)
    return out, (dW1, db1, dW2, db2)


# 5. RNN: h = tanh(W @ h + U @ x_t) over T = 50 steps, loss sum(h_T ** 2).

def rnn_loss(W, U, h0, xs):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t])
    return np.sum(h ** 2)


def rnn_loss_ag(W, U, h0, xs):
    h = h0
    for t in range(xs.shape[0]):
        h = anp.tanh(anp.dot(W, h) + anp.dot(U, xs[t]))
    return anp.sum(h ** 2)


def rnn_loss_hand(W, U, h0, xs):
    hs = [h0]
    for t in range(xs.shape[0]):
        hs.append(np.tanh(W @ hs[-1] + U @ xs[t]))
    out = np.sum(hs[-1] ** 2)
    dW = np.zeros_like(W)
    dU = np.zeros_like(U)
    ct_h = 2.0 * hs[-1]
    for t in reversed(range(xs.shape[0])):
        ct_a = ct_h * (1.0 - hs[t + 1] ** 2)
        dW += np.outer(ct_a, hs[t])
        dU += np.outer(ct_a, xs[t])
        ct_h = W.T @ ct_a
    return out, (dW, dU)


# 6. Scalar loop: a Python for-loop over floats (50 steps).

def scalar_loop(x, a):
    s = 0.0
    for i in range(50):
        x = math.sin(a * x) + 0.5 * x
        s = s + x * x
    return s


def scalar_loop_ag(x, a):
    s = 0.0
    for i in range(50):
        x = anp.sin(a * x) + 0.5 * x
        s = s + x * x
    return s


def scalar_loop_hand(x, a):
    xs = [x]
    s = 0.0
    for i in range(50):
        x = math.sin(a * x) + 0.5 * x
        xs.append(x)
        s = s + x * x
    ct_x, ct_a = 0.0, 0.0
    for i in reversed(range(50)):
        ct_x += 2.0 * xs[i + 1]
        c = math.cos(a * xs[i]) * ct_x
        ct_a += c * xs[i]
        ct_x = c * a + 0.5 * ct_x
    return s, (ct_x, ct_a)


def workloads():
    rng = np.random.default_rng(0)
    n, d = 1000, 50
    X = rng.standard_normal((n, d))
    w_true = rng.standard_normal(d)
    y = (X @ w_true + 0.5 * rng.standard_normal(n) > 0).astype(float)
    batch, d_in, hidden, d_out = 256, 32, 64, 10
    Xm = rng.standard_normal((batch, d_in))
    Ym = rng.standard_normal((batch, d_out))
    W1 = rng.standard_normal((d_in, hidden)) / np.sqrt(d_in)
    b1 = np.zeros(hidden)
    W2 = rng.standard_normal((hidden, d_out)) / np.sqrt(hidden)
    b2 = np.zeros(d_out)
    more = np.random.default_rng(1)  # the larger workloads (the first ones draw as before)
    n_big = 100_000
    X_big = more.standard_normal((n_big, d))
    y_big = (X_big @ w_true + 0.5 * more.standard_normal(n_big) > 0).astype(float)
    T, h_dim, x_dim = 50, 64, 32
    W_rnn = more.standard_normal((h_dim, h_dim)) / np.sqrt(h_dim)
    U_rnn = more.standard_normal((h_dim, x_dim)) / np.sqrt(x_dim)
    h0 = more.standard_normal(h_dim)
    xs = more.standard_normal((T, x_dim))
    return [
        ("scalar chain (2 floats)", scalar_chain, scalar_chain_np, scalar_chain_hand,
         ("x", "y"), (0.7, 1.3)),
        ("rosenbrock (n=1000)", rosenbrock, rosenbrock_ag, rosenbrock_hand,
         "x", (rng.standard_normal(1000),)),
        ("rosenbrock (n=1e5)", rosenbrock, rosenbrock_ag, rosenbrock_hand,
         "x", (more.standard_normal(100_000),)),
        ("logistic regr. (1000x50)", logistic_loss, logistic_loss_ag, logistic_loss_hand,
         "w", (0.1 * rng.standard_normal(d), X, y)),
        ("logistic regr. (1e5x50)", logistic_loss, logistic_loss_ag, logistic_loss_hand,
         "w", (0.1 * more.standard_normal(d), X_big, y_big)),
        ("MLP 32-64-10, batch 256", mlp_loss, mlp_loss_ag, mlp_loss_hand,
         ("W1", "b1", "W2", "b2"), (W1, b1, W2, b2, Xm, Ym)),
        ("RNN 32-64, T=50", rnn_loss, rnn_loss_ag, rnn_loss_hand,
         ("W", "U"), (W_rnn, U_rnn, h0, xs)),
        ("scalar loop (50 steps)", scalar_loop, scalar_loop_ag, scalar_loop_hand,
         ("x", "a"), (0.3, 1.7)),
    ]


# --------------------------------------------------------------------------
# Checking and timing.
# --------------------------------------------------------------------------

def _as_tuple(g, wrt):
    return tuple(g) if isinstance(wrt, tuple) else (g,)


def _same(got, want):
    if len(got) != len(want):
        return False
    return all(np.shape(a) == np.shape(b) and np.allclose(a, b, rtol=1e-7, atol=1e-10)
               for a, b in zip(got, want))


def _loops(timer, target=0.02):
    """A loop count whose run takes at least ``target`` seconds."""
    number = 1
    while timer.timeit(number) < target:
        number *= 2 if number < 4 else 5
    return number


def _time_all(candidates, repeat):
    """Minimum seconds per call of each candidate.

    The repeats are interleaved (hand, ta.vg, ta.rule, autograd, hand, ...), so a
    slow moment of the machine hits every column alike instead of one of them.
    """
    timers = {key: timeit.Timer(fn) for key, fn in candidates.items()}
    loops = {key: _loops(timer) for key, timer in timers.items()}
    best = {key: float("inf") for key in timers}
    for _ in range(repeat):
        for key, timer in timers.items():
            best[key] = min(best[key], timer.timeit(loops[key]) / loops[key])
    return best


def _peak_bytes(call):
    """tracemalloc's peak during one call (NumPy reports its arrays to tracemalloc)."""
    call()  # once before, so that nothing allocated once per process is counted
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        call()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def _code_lines(*functions):
    """Lines of code of the functions' source: blank lines and comments not counted."""
    lines = 0
    for fn in functions:
        for line in inspect.getsource(fn).splitlines():
            text = line.strip()
            lines += bool(text) and not text.startswith("#")
    return lines


def _short(exc):
    text = f"{type(exc).__name__}: {exc}".splitlines()[0]
    return text if len(text) <= 110 else text[:107] + "..."


def run(repeat, verbose):
    rows, failures, errors = [], [], []
    for name, f, f_ag, hand, wrt, args in workloads():
        row = {"name": name}
        want_value, want = hand(*args)
        want = _as_tuple(want, wrt)
        candidates = {"hand": lambda hand=hand, args=args: hand(*args)}
        row["hand_bytes"] = _peak_bytes(candidates["hand"])
        row["hand_lines"] = _code_lines(hand)

        # tangent_ast: the public wrapper, then the raw rule.
        try:
            vg = ta.value_and_grad(f, wrt=wrt)
            value, g = vg(*args)
            if not (np.allclose(value, want_value) and _same(_as_tuple(g, wrt), want)):
                failures.append(f"{name}: tangent_ast value_and_grad differs from the hand-written gradient")
            candidates["ta.vg"] = lambda vg=vg, args=args: vg(*args)

            rule = ta.derive(f, mode="reverse", wrt=wrt, args=args)
            fwd, bwd = rule.fwd, rule.bwd

            def raw(fwd=fwd, bwd=bwd, args=args):
                out, saved = fwd(*args)
                return out, bwd(saved, 1.0)

            value, g = raw()
            if not (np.allclose(value, want_value) and _same(_as_tuple(g, wrt), want)):
                failures.append(f"{name}: tangent_ast rule.fwd/rule.bwd differs from the hand-written gradient")
            candidates["ta.rule"] = raw
            row["rule_bytes"] = _peak_bytes(raw)
            row["rule_lines"] = _code_lines(fwd, bwd)
        except Exception as exc:  # report and go on with the other rows
            errors.append((name, exc))
            row["error"] = _short(exc)
            if verbose:
                traceback.print_exc()

        if autograd is not None:
            try:
                names = f.__code__.co_varnames[:f.__code__.co_argcount]
                argnum = (tuple(names.index(w) for w in wrt) if isinstance(wrt, tuple)
                          else names.index(wrt))
                ag = autograd.value_and_grad(f_ag, argnum)
                value, g = ag(*args)
                if not (np.allclose(value, want_value) and _same(_as_tuple(g, wrt), want)):
                    failures.append(f"{name}: autograd differs from the hand-written gradient")
                candidates["autograd"] = lambda ag=ag, args=args: ag(*args)
            except Exception as exc:
                row["ag_error"] = _short(exc)

        row.update(_time_all(candidates, repeat))
        rows.append(row)
    return rows, failures, errors


def _fmt_time(t):
    if t is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if t >= scale:
            return f"{t / scale:7.1f} {unit}"
    return f"{t / 1e-9:7.1f} ns"


def _fmt_bytes(n):
    for unit, scale in (("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def print_table(rows):
    columns = ["hand", "ta.vg", "ta.rule", "autograd"]
    width = max(len(r["name"]) for r in rows) + 2
    print()
    print("min time per call (lower is better)")
    print("workload".ljust(width) + "".join(c.rjust(12) for c in columns))
    print("-" * (width + 12 * len(columns)))
    for r in rows:
        print(r["name"].ljust(width) + "".join(_fmt_time(r.get(c)).rjust(12) for c in columns))
    print()
    print("ratio to the hand-written gradient (1.00 = as fast as hand-written NumPy)")
    print("workload".ljust(width) + "".join(c.rjust(12) for c in columns))
    print("-" * (width + 12 * len(columns)))
    for r in rows:
        cells = []
        for c in columns:
            t = r.get(c)
            cells.append((f"{t / r['hand']:.2f}x" if t is not None else "-").rjust(12))
        print(r["name"].ljust(width) + "".join(cells))
    print()
    print("ta.rule against hand: time, peak memory of one call (tracemalloc), lines of code")
    print("(rule: its fwd and bwd functions; hand: the hand-written value-and-gradient function)")
    heads = ["time", "hand mem", "rule mem", "mem", "hand lines", "rule lines", "lines"]
    print("workload".ljust(width) + "".join(c.rjust(11) for c in heads))
    print("-" * (width + 11 * len(heads)))
    for r in rows:
        if "rule_bytes" not in r:
            print(r["name"].ljust(width) + "-".rjust(11))
            continue
        cells = [
            f"{r['ta.rule'] / r['hand']:.2f}x",
            _fmt_bytes(r["hand_bytes"]),
            _fmt_bytes(r["rule_bytes"]),
            f"{r['rule_bytes'] / r['hand_bytes']:.2f}x" if r["hand_bytes"] else "-",
            str(r["hand_lines"]),
            str(r["rule_lines"]),
            f"{r['rule_lines'] / r['hand_lines']:.2f}x",
        ]
        print(r["name"].ljust(width) + "".join(c.rjust(11) for c in cells))
    notes = [(r["name"], r[k], k) for r in rows for k in ("error", "ag_error") if k in r]
    if notes:
        print()
        for name, text, key in notes:
            who = "tangent_ast" if key == "error" else "autograd"
            print(f"  {name}: {who} failed: {text}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="timeit repeats (the minimum is kept)")
    parser.add_argument("--quick", action="store_true", help="3 repeats instead of 15")
    parser.add_argument("--threads", metavar="N", help="BLAS threads (default 1; write --threads=N)")
    parser.add_argument("-v", "--verbose", action="store_true", help="full tracebacks of derivation errors")
    options = parser.parse_args(argv)
    repeat = 3 if options.quick else options.repeat

    print(f"numpy {np.__version__}, tangent_ast {ta.__version__}, "
          f"autograd {'not installed' if autograd is None else getattr(autograd, '__version__', 'installed')}, "
          f"python {sys.version.split()[0]}, BLAS threads {os.environ['OPENBLAS_NUM_THREADS']}")
    rows, failures, errors = run(repeat, options.verbose)
    print_table(rows)
    if failures:
        print()
        for text in failures:
            print(f"MISMATCH: {text}")
        return 1
    if errors:
        print(f"\n{len(errors)} workload(s) could not be derived by tangent_ast (see above; -v for tracebacks).")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
