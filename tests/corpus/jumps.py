"""Jumps out of loops from inside branches: ``break``, ``continue`` and ``return``.

Each function is called at a point where its jump is taken and, where it says so, at
one where it is not.
"""

from .cases import Case


def assigned_only_before_break(x):
    # s changes only on the path that breaks: on the others the reverse loop hands its
    # cotangent on unchanged, and must not take it for the breaking branch's
    s = x
    for _ in range(5):
        t = s * 1.2 + x
        if t > 30.0:
            s = t
            break
    return s * x


CASES = [
    Case(assigned_only_before_break, (0.5,)),
    Case(assigned_only_before_break, (20.0,), note="break"),
]
