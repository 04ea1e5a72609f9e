"""Shrinking a failing program to a small one that fails the same way.

Blocks are deleted one at a time, then the statements inside a block (a compound one with
its body: an ``if`` with its branches, an ``else:`` or ``elif`` branch, a loop), and the
result's terms dropped, as long as the program still fails with the same
:class:`~tangent_ast.fuzz.check.Outcome` (a deletion that leaves a name undefined or a
block empty makes the program invalid, so it is not kept). The predicate is a parameter,
so the shrinker is tested on its own with a planted failure.
"""

from __future__ import annotations

from dataclasses import replace


def shrink(program, still_fails, rounds=4):
    """The smallest program found from ``program`` for which ``still_fails(p)`` holds."""
    best = program
    for _ in range(rounds):
        changed = False
        i = len(best.body) - 1
        while i >= 0:
            candidate = best.without_block(i)
            if still_fails(candidate):
                best, changed = candidate, True
            i -= 1
        for i in range(len(best.body)):
            start = 0  # a compound statement first, then what is inside it
            while start < len(best.body[i]):
                block = best.body[i]
                end = _end(block, start)
                smaller = block[:start] + block[end:]
                candidate = replace(best, body=best.body[:i] + (smaller,) + best.body[i + 1 :])
                # (the whole block was tried above)
                if end - start < len(block) and still_fails(candidate):
                    best, changed = candidate, True
                else:
                    start += 1
        terms = best.result.split(" + ")
        for j in range(len(terms)):
            if len(terms) > 1:
                candidate = replace(best, result=" + ".join(terms[:j] + terms[j + 1 :]))
                if still_fails(candidate):
                    best, terms, changed = candidate, terms[:j] + terms[j + 1 :], True
                    break
        helpers = tuple(
            h for h in best.helpers if h + "(" in "\n".join("\n".join(b) for b in best.body)
        )
        if helpers != best.helpers and still_fails(replace(best, helpers=helpers)):
            best, changed = replace(best, helpers=helpers), True
        if not changed:
            break
    return best


def _end(lines, start):
    """Where the statement at ``lines[start]`` ends: after the lines indented deeper that
    follow it (a compound statement's body)."""
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = start + 1
    while end < len(lines) and len(lines[end]) - len(lines[end].lstrip()) > indent:
        end += 1
    return end
