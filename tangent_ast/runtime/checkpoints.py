"""Markers that ask the reverse rule to keep less and compute again, and the rule that
places a checkpointed loop's snapshots.

Both markers leave the primal as it is: ``checkpointed`` returns its iterable,
``checkpoint`` returns its function. tangent_ast reads them when it derives a reverse rule.

    for t in checkpointed(range(T), snapshots=16):   the reverse sweep keeps at most 16
        h = np.tanh(W @ h + xs[t])                    snapshots of the loop's state where
                                                      binomial_split puts them, and goes back
                                                      one step at a time from the latest

    @checkpoint                                       the caller's forward sweep calls f itself
    def f(x): ...                                     (no residuals); its reverse sweep runs f's
                                                      forward sweep again where it needs them
"""

CHECKPOINT_ATTRIBUTE = "__tangent_ast_checkpoint__"


def checkpointed(iterable, snapshots):
    """Mark a ``for`` loop for checkpointing: ``for t in checkpointed(range(T), snapshots=k)``.

    The loop runs as ``for t in range(T)``. In a reverse rule the forward sweep keeps only
    snapshots of the loop's state (at most ``k`` at once, where :func:`binomial_split`
    puts them) instead of every iteration's residuals; the reverse sweep goes back one
    step at a time, running the steps again from the latest snapshot before it.
    ``snapshots`` is a positive int (a literal or a module-level constant)."""
    if isinstance(snapshots, bool) or not isinstance(snapshots, int) or snapshots < 1:
        raise ValueError(f"checkpointed: snapshots must be a positive int, not {snapshots!r}")
    return iterable


def checkpoint(fn):
    """Mark a function: a reverse rule calling it keeps none of its residuals and runs its
    forward sweep again when the reverse sweep reaches the call (JAX's ``checkpoint``).

    Returns ``fn`` itself, marked: every call of it in differentiated code is checkpointed."""
    setattr(fn, CHECKPOINT_ATTRIBUTE, True)
    return fn


def is_checkpointed(fn):
    return getattr(fn, CHECKPOINT_ATTRIBUTE, False) is True


def binomial_split(start, stop, free):
    """Where to keep the next snapshot when steps ``start .. stop - 1`` of a loop are to be
    run backwards from the state at ``start``, with ``free`` more snapshots allowed.

    Griewank's binomial rule (revolve): with ``s`` snapshots and each step run forward at
    most ``r`` times, ``C(s + r, r)`` steps can be reversed. Take the smallest such ``r``
    for these ``stop - start`` steps; the steps after the split are reversed with one
    snapshot fewer and ``r`` runs, the steps before it (run once more to reach the split)
    with the same snapshots and ``r - 1`` runs. The split is the earliest that leaves the
    later part within its bound: the fewest steps run to reach it. Without a free snapshot
    the next state kept is the one before the last step (each step is then run again from
    ``start``)."""
    steps = stop - start
    if steps <= 1:
        return stop
    if free <= 0:
        return stop - 1
    snapshots, runs, reversible = free + 1, 0, 1  # reversible: C(snapshots + runs, runs)
    while reversible < steps:
        runs += 1
        reversible = reversible * (snapshots + runs) // runs
    later = reversible * snapshots // (snapshots + runs)  # C(snapshots - 1 + runs, runs)
    return start + max(1, steps - later)
