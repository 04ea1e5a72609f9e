"""The two routes to a reverse rule, side by side: direct and transpose.

For every workload of bench_gradients.py: the time of one gradient call of the rule each
route derives (fwd + bwd, called directly), the code lines of the two rules, their
derivation time (cold, a fresh cache), and whether the gradients agree. Ratios are
transpose / direct. Also the rule table: how many statement-arguments of the corpus and
rule tables the transpose route transposed, and how many used a reverse rule instead.

    python benchmarks/bench_routes.py            # ~30 s
    python benchmarks/bench_routes.py --quick
"""

import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

from bench_gradients import _time_all, workloads  # noqa: E402

import tangent_ast as ta  # noqa: E402

ROUTES = ("direct", "transpose")


def body(source):
    """The rule's functions: the module without its header and imports."""
    return source[source.index("\ndef ") :]


def code_lines(source):
    """Lines of the rule's functions: no blank lines or comments."""
    return sum(
        1 for line in body(source).splitlines() if line.strip() and not line.strip().startswith("#")
    )


def run(repeat):
    rows = []
    for label, fn, _, _, wrt, args in workloads():
        rules, derive_s, lines, bodies = {}, {}, {}, {}
        for route in ROUTES:
            with tempfile.TemporaryDirectory() as cache:
                start = time.perf_counter()
                rules[route] = ta.derive(fn, "reverse", wrt, args=args, cache=cache, route=route)
                derive_s[route] = time.perf_counter() - start
                lines[route] = code_lines(rules[route].source)  # while the file exists
                bodies[route] = body(rules[route].source)

        def gradient(rule, args=args):
            def call():
                _, saved = rule.fwd(*args)
                return rule.bwd(saved, 1.0)

            return call

        grads = {r: gradient(rules[r])() for r in ROUTES}
        same = all(
            np.allclose(a, b, rtol=1e-10, atol=1e-12)
            for a, b in zip(
                grads["direct"] if isinstance(wrt, tuple) else (grads["direct"],),
                grads["transpose"] if isinstance(wrt, tuple) else (grads["transpose"],),
                strict=True,
            )
        )
        times = _time_all({r: gradient(rules[r]) for r in ROUTES}, repeat)
        same_code = bodies["direct"] == bodies["transpose"]
        rows.append((label, times, lines, derive_s, same_code, same))
    return rows


def print_table(rows):
    print(
        f"{'workload':28} {'direct':>10} {'transpose':>10} {'ratio':>6} "
        f"{'lines d/t':>10} {'derive d/t (s)':>15} {'same code':>9} same gradient"
    )
    for label, times, lines, derive_s, same_code, same in rows:
        print(
            f"{label:28} {times['direct'] * 1e6:>8.1f}us {times['transpose'] * 1e6:>8.1f}us "
            f"{times['transpose'] / times['direct']:>6.2f} "
            f"{lines['direct']:>4}/{lines['transpose']:<5} "
            f"{derive_s['direct']:>7.2f}/{derive_s['transpose']:<7.2f} "
            f"{'yes' if same_code else 'no':>9} {'yes' if same else 'NO'}"
        )


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    rows = run(3 if "--quick" in argv else 9)
    print_table(rows)
    return 0 if all(row[-1] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
