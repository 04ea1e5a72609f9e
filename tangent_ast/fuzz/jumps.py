"""Loops whose jumps sit deep in branches: ``break``, ``continue`` and ``return`` at any
depth of ``if``/``elif``/``else`` (up to three levels, an inner loop counting as one), in
``for`` and ``while`` loops, with statements after the ``if`` that may jump.

A path that jumps runs nothing after its jump; the reverse sweep replays a loop's last
iteration as the statements of the path it took, so what the lowering and SSA place at
the end of a loop body (the copies into the loop's carried names, a ``while`` test
computed again) must end exactly the paths that fall through. A block reads like this::

    v4 = b * 1.0
    v4_acc = 0.0
    for i in range(4):
        v4 = v4 * 0.7 + np.sin(v4) * (i + 1.0)
        if i > 1:
            if np.sum(v4) > 0.5:
                v4_acc = v4_acc + np.sum(v4 * v4)
                break
        v4 = v4 - 0.1 * np.tanh(v4)
    v4 = v4 + v4_acc

Only the carried value (``v4``) is in scope after the block; its accumulator and the loop
counters are the block's own.
"""

from __future__ import annotations

from .lengths import SCALAR

DEPTH = 3  # levels of if (or inner loop) below the loop's own body


def _sum(name, scalar):
    return name if scalar else f"np.sum({name})"


def _condition(w, name, scalar, index):
    rng = w.rng
    s = w.pick(SCALAR)
    value = _sum(name, scalar)
    choices = [
        f"{index} == 1",
        f"{index} % 2 == 0",
        f"{index} > 1",
        f"{index} < 2",
        f"{value} > 0.5",
        f"{value} < -0.3",
        f"abs({value}) > 1.5",
    ]
    if not scalar:
        choices.append(f"np.max({name}) > 0.4")
    if s is not None and s != name:
        choices.append(f"{s} > 0.2")
    return rng.choice(choices)


def _update(w, name, scalar, index):
    rng = w.rng
    acc = f"{name}_acc"
    return rng.choice(
        [
            f"{name} = {name} * 0.7 + np.sin({name}) * ({index} + 1.0)",
            f"{name} = {name} - 0.1 * np.tanh({name})",
            f"{name} = {name} * 0.9 + 0.2",
            f"{name} = np.cos({name}) * {name}",
            f"{acc} = {acc} + {_sum(f'{name} * {name}', scalar)}",
            f"{acc} = {acc} * 0.5 + {_sum(name, scalar)}",
        ]
    )


def _jump(w, name, scalar):
    kind = w.rng.choice(["break", "continue", "return"])
    if kind == "return":
        return f"return {_sum(name, scalar)} * 2.0 + {name}_acc"
    return kind


def _block(w, name, scalar, loops, depth, top):
    """Lines of a block at ``depth`` levels below the outer loop's body, not indented;
    ``loops``: the enclosing loops' indices, innermost last; ``top``: the innermost loop's body
    (no jump there: every iteration would take it)."""
    rng = w.rng
    lines = []
    for _ in range(rng.randint(1, 3)):
        r = rng.random()
        if depth < DEPTH and r < 0.45:
            lines += _branch(w, name, scalar, loops, depth)
        elif depth < DEPTH and r < 0.55:
            lines += _loop(w, name, scalar, loops, depth + 1)
        else:
            lines.append(_update(w, name, scalar, loops[-1]))
    if not top and rng.random() < 0.5:
        lines.append(_jump(w, name, scalar))
    return lines


def _branch(w, name, scalar, loops, depth):
    rng = w.rng
    index = loops[-1]
    lines = [f"if {_condition(w, name, scalar, index)}:"]
    lines += _indent(_block(w, name, scalar, loops, depth + 1, top=False))
    if rng.random() < 0.25:
        lines.append(f"elif {_condition(w, name, scalar, index)}:")
        lines += _indent(_block(w, name, scalar, loops, depth + 1, top=False))
    if rng.random() < 0.5:
        lines.append("else:")
        lines += _indent(_block(w, name, scalar, loops, depth + 1, top=False))
    return lines


def _loop(w, name, scalar, loops, depth):
    """A ``for`` or ``while`` loop inside ``loops`` whose body is a block of jumps."""
    rng = w.rng
    n = rng.randint(1, 4) if not loops else rng.randint(1, 3)
    index = "ijmq"[len(loops)]
    if rng.random() < 0.35:
        test = f"{index} < {n}"
        if rng.random() < 0.3:
            test += f" and abs({_sum(name, scalar)}) < 50.0"
        head = [f"{index} = 0", f"while {test}:"]
        body = [f"{index} = {index} + 1"]  # first: no continue skips it
    else:
        head, body = [f"for {index} in range({n}):"], []
    body += _block(w, name, scalar, [*loops, index], depth, top=True)
    lines = head + _indent(body)
    if rng.random() < 0.2:
        lines += ["else:", f"    {name} = {name} - 0.1"]
    return lines


def _indent(lines):
    return ["    " + line for line in lines]


def statement(w, name, shape):
    """Emit a block: a loop carrying ``name`` (of ``shape``) with jumps in its branches."""
    a = w.pick(shape)
    scalar = shape == SCALAR
    lines = [f"{name} = {a} * 1.0", f"{name}_acc = 0.0"]
    lines += _loop(w, name, scalar, [], 0)
    lines.append(f"{name} = {name} + {name}_acc")
    w.emit(lines, name, shape)
    w.wanted.append(name)  # the result reads it: its derivative is checked
