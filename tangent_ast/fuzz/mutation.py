"""Values updated in place the way NumPy code does it: helpers that update their arguments
(on a buffer the function made, on a copy, on its own argument, in a loop, a helper calling
another, a float given where the helper's ``+=`` only rebinds its own name), fields of a
dataclass instance assigned and dicts updated by key, directly and by helpers, and
augmented in place (``bx.w += v``, ``xl[0] *= v``), with and without another name that
holds the slot's array, a loop's array copied, zeroed and rebuilt, arrays made in a loop,
updated, bound again and updated again, and one a conditional expression makes. What the
caller's values hold after each update, and their derivatives, must be what the program
computes; the argument-state check covers an argument a call changes. A block reads::

    buf = np.zeros_like(a)
    add_into(buf, b * a)
    scale_first(buf, 2.0)
    v3 = buf * a
"""

from __future__ import annotations

import dataclasses

from .lengths import SCALAR, VEC


@dataclasses.dataclass
class Box:
    """The programs' dataclass (their preamble imports it): built in them, and an argument."""

    w: object
    b: object


HELPERS = {
    "add_into": "def add_into(out, v):\n    out += v\n",
    "scale_first": "def scale_first(v, c):\n    v[0] = v[0] * c\n",
    "push_square": "def push_square(xs, v):\n    xs.append(v * v)\n",
    "shift_sum": ("def shift_sum(a, s=0.5):\n    a -= s * np.tanh(a)\n    return np.sum(a * a)\n"),
    "add_twice": ("def add_twice(out, v):\n    add_into(out, v)\n    add_into(out, v * 0.5)\n"),
    # ``t += d`` on a float rebinds the helper's name only: the caller's value is unchanged
    "bumped": "def bumped(t, d):\n    t += d\n    return t * 2.0\n",
    # a helper returning the array it was given (an update of the result is one of that
    # array: refused), and one returning an array it made under a name (new: followed)
    "same_array": "def same_array(t):\n    return t\n",
    "scaled_copy": (
        "def scaled_copy(t, c):\n    out = t * c\n    out[0] = out[0] + 1.0\n    return out\n"
    ),
    # fields of a dataclass instance (the preamble's Box) assigned by a helper
    "rescale_box": (
        "def rescale_box(box, c):\n    box.w = box.w * c\n    box.b += np.sum(box.w)\n"
    ),
    # a dict's entries set by a helper (one replaced, one added)
    "set_entries": "def set_entries(d, v):\n    d['w'] = d['w'] * v\n    d['u'] = np.cos(v)\n",
}

# (helpers it calls, shapes it is for, lines): {a}, {b} values of the block's shape, {s} a
# scalar, {name} the result; the argument ``{a}`` itself is changed by some
_FORMS = [
    (
        ("add_into",),
        "va",
        ["buf = np.zeros_like({a})", "add_into(buf, {b} * {a})", "{name} = buf * {a}"],
    ),
    (
        ("add_into", "scale_first"),
        "v",
        ["buf = {a}.copy()", "add_into(buf, {b})", "scale_first(buf, {s})", "{name} = buf * {b}"],
    ),
    (
        ("scale_first",),
        "v",
        ["buf = {a} * 1.0", "scale_first(buf, 2.0)", "{name} = np.sin(buf) + {b}"],
    ),
    (
        ("shift_sum",),
        "va",
        ["buf = np.array({a})", "tot = shift_sum(buf)", "{name} = buf * tot + {b}"],
    ),
    (("shift_sum",), "va", ["tot = shift_sum({a}, {s})", "{name} = {a} * tot"]),
    (("add_into",), "va", ["add_into({a}, {b} * 0.5)", "{name} = {a} * {b}"]),
    (
        ("add_twice", "add_into"),
        "va",
        ["buf = np.ones_like({a})", "add_twice(buf, {a})", "{name} = buf * buf"],
    ),
    (
        ("add_into",),
        "va",
        [
            "buf = np.zeros_like({a})",
            "for k in range(3):",
            "    add_into(buf, {a} * (k + 1.0))",
            "    if np.sum(buf) > 5.0:",
            "        break",
            "{name} = buf + {b}",
        ],
    ),
    (
        ("push_square",),
        "s",
        [
            "sq = []",
            "for k in range(3):",
            "    push_square(sq, {a} * (k + 0.5))",
            "{name} = sq[0] + sq[1] * sq[2]",
        ],
    ),
    (("bumped",), "s", ["tb = {a} * 1.0", "tc = bumped(tb, {b})", "{name} = tb * tc"]),
    # fields of a dataclass instance assigned, in straight code, a loop and a helper
    (
        (),
        "va",
        [
            "bx = Box({a} * 1.0, {s})",
            "bx.w = bx.w * {b}",
            "bx.b += np.sum(bx.w)",
            "{name} = bx.w * bx.b",
        ],
    ),
    (
        (),
        "sva",
        [
            "bx = Box({a}, 0.5)",
            "for k in range(2):",
            "    bx.b = bx.b * 0.5 + np.sum(np.sin(bx.w))",
            "    bx.w = bx.w * 0.9 + {b}",
            "{name} = bx.w + bx.b",
        ],
    ),
    (
        ("rescale_box",),
        "sva",
        ["bx = Box({a} + 0.0, {s})", "rescale_box(bx, {b})", "{name} = bx.w * bx.b"],
    ),
    # dicts updated by key: an entry replaced, one added, a float entry added into
    (
        (),
        "sva",
        [
            "dd = {{'w': {a} * 1.0, 's': 0.5}}",
            "dd['w'] = dd['w'] * {b}",
            "dd['s'] = dd['s'] + np.sum(dd['w'])",
            "dd['s'] += np.sum({b})",
            "{name} = dd['w'] * dd['s']",
        ],
    ),
    (
        (),
        "sva",
        [
            "dd = {{}}",
            "for k in range(2):",
            "    dd['t'] = {a} * (k + 1.0) if k == 0 else dd['t'] * {b}",
            "{name} = dd['t'] + {a}",
        ],
    ),
    (
        ("set_entries",),
        "sva",
        ["dd = {{'w': {a} + 0.0}}", "set_entries(dd, {b})", "{name} = dd['w'] + dd['u']"],
    ),
    # p.w += v, d['k'] += v, xs[0] *= v: Python adds into the array the slot holds, which
    # any other name of it sees (a name it was made under, read out into, [a, a])
    (
        (),
        "sva",
        [
            "bx = Box({a} * 1.0, {s})",
            "for k in range(2):",
            "    bx.w *= {b}",
            "    if np.sum(bx.w) > 0.5:",
            "        bx.w += {a}",
            "    bx.b = bx.b + 1.0",
            "{name} = bx.w * bx.b",
        ],
    ),
    (
        (),
        "sva",
        [
            "dd = {{'w': np.sin({a}), 'v': {b}}}",
            "dd['w'] += dd['v']",
            "xl = [dd['w'] * 1.0, {a}]",
            "xl[0] *= {b}",
            "{name} = xl[0] + dd['w']",
        ],
    ),
    (
        (),
        "va",
        ["held = {a} * 1.0", "bx = Box(held, {s})", "bx.w += {b}", "{name} = held * bx.w"],
    ),
    (
        (),
        "va",
        ["bx = Box({a} * 2.0, {s})", "old = bx.w", "bx.w -= {b}", "{name} = old * bx.w"],
    ),
    (
        (),
        "va",
        ["tw = {a} * 1.0", "xl = [tw, tw]", "xl[0] += {b}", "{name} = xl[1] * {b}"],
    ),
    # what a helper returned, updated in place; a name assigned to itself, then updated
    (
        ("same_array",),
        "va",
        ["tw = {a} * 1.0", "tv = same_array(tw)", "tv *= {b}", "{name} = tw + tv"],
    ),
    (("scaled_copy",), "va", ["tw = scaled_copy({a}, {s})", "tw += {b}", "{name} = tw * {a}"]),
    (
        (),
        "va",
        ["dd = {{'w': {a} * 1.0}}", "tv = dd.get('w')", "tv *= {b}", "{name} = dd['w'] + tv"],
    ),
    ((), "va", ["{a} = {a}", "{a} *= 2.0", "{name} = {a} * {b}"]),
    # an array placed into a new one by np.stack / np.concatenate, then updated in place:
    # the new array keeps the values from before the update
    (
        ("add_into",),
        "va",
        ["st = np.stack([{a}, {b}]).sum(axis=0)", "add_into({a}, {b} * 0.5)", "{name} = st * {a}"],
    ),
    (
        (),
        "va",
        [
            "tw = {a} * 1.0",
            "cat = np.concatenate([tw, {b}])",
            "tw[0] = np.sum({b})",
            "{name} = tw * np.sum(cat ** 2)",
        ],
    ),
    # an array a container built before holds, updated: the container sees the new values
    (
        (),
        "va",
        [
            "tw = {a} * 1.0",
            "tp = (tw, {b})",
            "bx = Box(tw, {s})",
            "tw *= {b}",
            "{name} = tp[0] * tp[1] + bx.w",
        ],
    ),
    (
        (),
        "va",
        [
            "tw = np.cos({a})",
            "xl = [tw, {b}]",
            "first = xl[0]",
            "tw += {b}",
            "{name} = first * xl[1]",
        ],
    ),
    (
        ("scale_first",),
        "v",
        [
            "if {s} > 0.2:",
            "    buf = {a}.copy()",
            "    scale_first(buf, {s})",
            "else:",
            "    buf = {a} * 2.0",
            "{name} = buf * {b}",
        ],
    ),
    # a loop's array copied, then updated in place and rebound: what the reverse loop
    # computes again from it must read it as it was before the update
    (
        (),
        "va",
        [
            "acc = {a} * 2.0",
            "for k in range(3):",
            "    kept = acc.copy()",
            "    acc[...] = 0.0",
            "    acc += kept * {s} + {b}",
            "{name} = acc * {b}",
        ],
    ),
    # an array a conditional expression makes, read, then updated in place: the rule of
    # the branch that made it reads it as it was
    (
        (),
        "va",
        [
            "upd = np.exp({a}) if {s} > 0.3 else {a} * 2.0",
            "kept_sum = np.sum(upd) * {b}",
            "upd[0] = 1.0",
            "{name} = upd * 0.5 + kept_sum",
        ],
    ),
    # an array made in each iteration, updated in place, bound again and updated again:
    # each iteration's arrays are the reverse loop's to make again or read from a tape
    (
        (),
        "va",
        [
            "{name} = {b} * 0.5",
            "for k in range(3):",
            "    fresh = {a} * 2.0",
            "    fresh[0] = fresh[0] * {s} + k",
            "    {name} = {name} + fresh * {b}",
            "    fresh = np.cos(fresh) * {name}",
            "    fresh[0] += {s}",
            "    {name} = {name} + fresh",
        ],
    ),
]


def statement(w, name, shape):
    """A block making ``name`` (of ``shape``) through helpers that update in place, or
    None where no form fits the shape."""
    wanted = {SCALAR: "s", VEC: "v"}.get(shape, "a")
    forms = [f for f in _FORMS if wanted in f[1] or (wanted == "v" and "a" in f[1])]
    if not forms:
        return None
    helpers, _, lines = w.rng.choice(forms)
    a, b, s = w.pick(shape), w.pick(shape), w.pick(SCALAR) or "0.5"
    w.helpers.update(helpers)
    return w.emit([line.format(a=a, b=b, s=s, name=name) for line in lines], name, shape)


def _record_argument(w, box):
    """A block on the argument ``box`` (a :class:`Box` of three floats and a float): its
    fields assigned or its array updated in place, as the caller sees after the call, or
    only read."""
    s = w.pick(SCALAR) or "0.5"
    name = w.fresh()
    change = w.rng.choice(
        [
            [f"{box}.w = {box}.w * {s}"],
            [f"{box}.b += np.sum({box}.w)"],
            [f"{box}.w = np.sin({box}.w)", f"{box}.b = {box}.b * 2.0 + {s}"],
            # the array the caller holds, updated in place (and once read out before)
            [f"{box}.w += {s}"],
            [f"{box}.w *= np.cos({box}.w)", f"{box}.w -= {s}"],
            [f"seen = {box}.w", f"{box}.w *= 2.0", f"{box}.b = {box}.b + np.sum(seen)"],
            [],
        ]
    )
    w.emit([*change, f"{name} = np.sum({box}.w) * {box}.b"], name, SCALAR)


def _dict_argument(w, entries):
    """A block on the argument ``entries`` (a dict of three floats and a float): an entry
    replaced, added into or added, as the caller sees after the call, or only read."""
    s = w.pick(SCALAR) or "0.5"
    name = w.fresh()
    change = w.rng.choice(
        [
            [f"{entries}['w'] = {entries}['w'] * {s}"],
            [f"{entries}['s'] += np.sum({entries}['w'])"],
            [f"{entries}['u'] = np.cos({entries}['w'])", f"{entries}['w'] = {entries}['u'] * {s}"],
            # the array the caller holds, updated in place (and once read out before)
            [f"{entries}['w'] *= {s}", f"{entries}['w'] += np.sin({entries}['w'])"],
            [f"seen = {entries}['w']", f"{entries}['w'] += 1.0", f"{entries}['s'] += np.sum(seen)"],
            [],
        ]
    )
    w.emit([*change, f"{name} = np.sum({entries}['w']) * {entries}['s']"], name, SCALAR)


# a parameter's shape -> the block that uses it (its name is the shape's)
ARGUMENTS = {"box": _record_argument, "entries": _dict_argument}


def argument(shape, rng):
    """The value a program is checked at for a parameter of ``shape`` (one of ARGUMENTS)."""
    w, s = rng.standard_normal(3), float(rng.uniform(0.3, 1.4))
    return Box(w, s) if shape == "box" else {"w": w, "s": s}
