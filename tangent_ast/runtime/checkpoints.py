"""Markers that ask the reverse rule to keep less and compute again.

Both leave the primal as it is: ``checkpointed`` returns its iterable, ``checkpoint``
returns its function. tangent_ast reads them when it derives a reverse rule.

    for t in checkpointed(range(T), snapshots=16):   the reverse sweep keeps 16 snapshots of
        h = np.tanh(W @ h + xs[t])                    the loop's state and runs one segment of
                                                      the loop again at a time, taping it

    @checkpoint                                       the caller's forward sweep calls f itself
    def f(x): ...                                     (no residuals); its reverse sweep runs f's
                                                      forward sweep again where it needs them
"""

CHECKPOINT_ATTRIBUTE = "__tangent_ast_checkpoint__"


def checkpointed(iterable, snapshots):
    """Mark a ``for`` loop for checkpointing: ``for t in checkpointed(range(T), snapshots=k)``.

    The loop runs as ``for t in range(T)``. In a reverse rule the forward sweep keeps only
    the loop's state every ``ceil(T / k)`` iterations (at most ``k`` snapshots) instead of
    every iteration's residuals; the reverse sweep goes back one segment at a time,
    running its iterations again from the snapshot to tape them, then backwards.
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
