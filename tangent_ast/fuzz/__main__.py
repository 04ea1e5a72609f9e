"""``python -m tangent_ast.fuzz --count N --seed S`` (or ``--minutes M``): N random programs
through every mode (the counts so far printed every ``--every`` programs); counts by outcome,
refusals by frequency, shrunk failures. Each seed gives a program of equal lengths and one
of mixed lengths (``--lengths`` picks one); ``--second-order`` checks Hessian-vector
products as well."""

from __future__ import annotations

import argparse
import collections
import functools
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from .check import Outcome, check_program
from .generate import generate
from .shrink import shrink


def _refusal_class(message):
    """A refusal message without its file, line and names, so that alike ones group."""
    message = re.sub(r"^\S+\.py:\d+: ", "", message)
    message = re.sub(r"'[^']*'", "'…'", message)
    return re.sub(r"\d+", "N", message)[:140]


def _tally(counts):
    return f"{sum(counts.values())} programs: " + ", ".join(
        f"{o.value} {counts[o]}" for o in Outcome
    )


def run(
    seeds,
    deadline=None,
    out=None,
    shrink_failures=True,
    echo=None,
    lengths="equal",
    second_order=False,
    limit=None,
    every=None,
    backend=None,
):
    """Check the program of each seed (of ``lengths``: "equal", "mixed", or "both": two
    programs a seed; with ``second_order``, its second derivatives too; with ``backend``,
    that backend's rules against NumPy's), ``limit``
    programs at most, echoing the counts so far every ``every`` programs; the counts by
    outcome, the refusals by class and the failures."""
    echo = echo or functools.partial(print, flush=True)
    counts = collections.Counter()
    refusals = collections.Counter()
    failures = []
    kinds = ("equal", "mixed") if lengths == "both" else (lengths,)
    # a generator, not itertools.product: that makes a tuple of its inputs first, and
    # --minutes gives it every seed up to sys.maxsize
    for seed, kind in ((seed, kind) for seed in seeds for kind in kinds):
        if (deadline is not None and time.monotonic() > deadline) or (
            limit is not None and sum(counts.values()) >= limit
        ):
            break
        program = generate(seed, lengths=kind)
        result = check_program(program, second_order, backend)
        counts[result.outcome] += 1
        if result.outcome is Outcome.REFUSED:
            refusals[_refusal_class(result.detail)] += 1
        progress = f"up to seed {seed}: {_tally(counts)}"
        if every and sum(counts.values()) % every == 0:
            echo(progress)
        if out is not None:  # a run stopped early still tells what it checked
            Path(out).mkdir(parents=True, exist_ok=True)
            (Path(out) / "progress.txt").write_text(progress + "\n")
        if result.outcome is Outcome.SLOW:  # too slow to shrink: listed as it is
            failures.append((seed, result, program))
        if result.failed:
            small = (
                shrink(
                    program,
                    lambda p, outcome=result.outcome: (
                        check_program(p, second_order, backend).outcome is outcome
                    ),
                )
                if shrink_failures
                else program
            )
            failures.append((seed, result, small))
            if out is not None:
                Path(out).mkdir(parents=True, exist_ok=True)
                (Path(out) / f"fuzz_{result.outcome.value}_{kind}_{seed}.py").write_text(
                    _reproduction(small, f"{result.outcome.value}: {result.detail}")
                )
    echo(_tally(counts))
    if refusals:
        echo("refusals, most frequent first:")
        for message, n in refusals.most_common(15):
            echo(f"  {n:5d}  {message}")
    for seed, result, small in failures:
        echo(
            f"\n--- seed {seed} ({small.lengths} lengths): {result.outcome.value}: {result.detail}"
            f"\n# args: {small.args()!r}"
            f"{small.source(preamble=False)}"
        )
    return counts, refusals, failures


def _reproduction(program, what):
    """A module that runs as it is: what went wrong (as comments), the program, the
    arguments it was checked at and, run as a script, the check again."""
    comment = "\n".join(f"# {line}" for line in what.splitlines())
    with np.printoptions(floatmode="unique", threshold=sys.maxsize):  # every digit
        args = repr(program.args())
    return (
        f"{comment}\n{program.source()}\n\n"
        "array = np.array  # the arguments as repr writes them\n"
        f"ARGS = {args}\n\n\n"
        'if __name__ == "__main__":\n'
        "    from tangent_ast.testing import check_grads\n\n"
        "    check_grads(f, ARGS)\n"
    )


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tangent_ast.fuzz", description=__doc__)
    parser.add_argument(
        "--count", type=int, default=100, help="how many programs (seeds taken in turn)"
    )
    parser.add_argument(
        "--every", type=int, default=50, help="print the counts so far every N programs"
    )
    parser.add_argument("--seed", type=int, default=0, help="the first seed")
    parser.add_argument("--minutes", type=float, default=None, help="run for this long instead")
    parser.add_argument(
        "--out",
        default=None,
        help="write each shrunk failure to this directory, and the counts so far (progress.txt)",
    )
    parser.add_argument(
        "--lengths",
        choices=("equal", "mixed", "both"),
        default="both",
        help="arrays of length 3 only, of lengths 3, 4 and 1, or a program of each a seed",
    )
    parser.add_argument(
        "--second-order",
        action="store_true",
        help="check Hessian-vector products too (forward over reverse, reverse over reverse)",
    )
    parser.add_argument(
        "--verify",
        action="store_true",
        help="verify each derived rule on its first call too (TANGENT_AST_VERIFY=1)",
    )
    parser.add_argument(
        "--backend",
        choices=("numpy", "numba"),
        default="numpy",
        help="numba: also derive each program's rules for the Numba backend, compiled, and "
        "check they give the NumPy backend's values",
    )
    args = parser.parse_args(argv)
    if args.verify:
        os.environ["TANGENT_AST_VERIFY"] = "1"
    os.environ.setdefault("TANGENT_AST_CACHE", tempfile.mkdtemp(prefix="tangent_ast_fuzz_cache_"))
    deadline = None if args.minutes is None else time.monotonic() + 60 * args.minutes
    counts, _, _ = run(
        range(args.seed, sys.maxsize),
        deadline,
        args.out,
        lengths=args.lengths,
        second_order=args.second_order,
        limit=None if args.minutes is not None else args.count,
        every=args.every,
        backend=args.backend,
    )
    return 1 if counts[Outcome.WRONG] or counts[Outcome.INTERNAL] else 0


if __name__ == "__main__":
    sys.exit(main())
