"""Python as people write it around NumPy: a ``with`` block around a computation, a list of
values handed to a NumPy function, the function a call returns called at once, a copy of a
list changed in place, a number that starts as an int kept in a list, a loop over a dict's
keys or over a list the loop rebinds, loops over ``enumerate``, ``zip`` and ``reversed``
nested in one another. A block reads like this::

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        v2 = np.log(np.abs(a) + 1.0) * b
"""

from __future__ import annotations

from .lengths import SCALAR

HELPERS = {
    "make_scale": (
        "def make_scale(c):\n    def scale_by(t):\n        return t * c + np.sin(t)\n"
        "    return scale_by\n"
    ),
}

# (helpers it calls, for scalars only, lines): {a}, {b} values of the block's shape
_FORMS = [
    (
        (),
        False,
        [
            "with warnings.catch_warnings():",
            "    warnings.simplefilter('ignore')",
            "    {name} = np.log(np.abs({a}) + 1.0) * {b}",
        ],
    ),
    ((), False, ["with np.printoptions(precision=3):", "    {name} = np.tanh({a}) + {b}"]),
    ((), True, ["lst = [{a}, {a} * {b}, 1.5]", "{name} = np.sum(np.sin(lst)) * {b}"]),
    # max and min of a list and of three values: the first of the greatest, as Python picks
    ((), True, ["lst = [{a}, {a} * {b}, 0.5]", "{name} = max(lst) - min({a}, {b}, {a} * {b})"]),
    ((), False, ["lst = [{a}, {a} * {b}]", "{name} = np.sum(np.cos(lst), axis=0) + {b}"]),
    (("make_scale",), False, ["{name} = make_scale(1.5)({a}) * {b}"]),
    # a loop over a dict runs over its keys (integer keys out of order: its items are not
    # d[0], d[1]), and over the iterable as it was when the loop started
    (
        (),
        False,
        [
            "d = {{1: {a}, 0: {b} * 2.0, 'w': {a} * {b}}}",
            "{name} = 0.0 * {a}",
            "for j, key in enumerate(d):",
            "    {name} = {name} + d[key] * (j + 1.0)",
        ],
    ),
    (
        (),
        False,
        [
            "d = {{1: {a}, 0: np.sin({b})}}",
            "{name} = {b} * 1.0",
            "for key in reversed(d):",
            "    {name} = {name} * 0.5 + d[key] * (key + 1.0)",
        ],
    ),
    # a dict comprehension: the loop filling the dict
    (
        (),
        False,
        [
            "dd = {{k: {a} * (k + 1.0) for k in range(3) if k != 1}}",
            "{name} = dd[0] * {b} + dd[2]",
        ],
    ),
    # enumerate, zip and reversed nested in one another, enumerate from 1
    (
        (),
        False,
        [
            "vals = [{a}, {b} * 0.5, {a} * {b}]",
            "{name} = 0.0 * {b}",
            "for k, (u, v) in enumerate(zip(vals, reversed(vals)), 1):",
            "    {name} = {name} + u * v * k",
        ],
    ),
    (
        (),
        False,
        [
            "{name} = {b} * 0.5",
            "for k, (u, v) in enumerate(zip(np.atleast_1d({a}), reversed(np.atleast_1d({b})))):",
            "    {name} = {name} + u * v * (k + 1.0)",
        ],
    ),
    (
        (),
        False,
        [
            "vals = [{a}, np.cos({b})]",
            "{name} = {b} * 1.0",
            "for (k, u), v in zip(enumerate(reversed(vals)), vals):",
            "    {name} = {name} * 0.5 + u * (k + 1.0) - v",
        ],
    ),
    (
        (),
        False,
        [
            "vals = [{a}, {b}]",
            "{name} = 0.0 * {b}",
            "for v in vals:",
            "    {name} = {name} + v * {b}",
            "    vals = [vals[1], vals[0] * 0.5]",
        ],
    ),
    # a copy of a list changed in place (append, +=): the list it was copied from is not
    (
        (),
        False,
        [
            "lst = [{a}, {b} * 2.0]",
            "grown = list(lst)",
            "grown.append({a} * {b})",
            "grown += [np.sin({b})]",
            "{name} = lst[-1] * grown[-2] + grown[-1] * len(lst)",
        ],
    ),
    # a number that is the int 0 in the first iteration and a float (or array) after, kept
    # in a list and a tuple: an int has no tangent, so its place in their cotangents is None
    (
        (),
        False,
        [
            "t = 0",
            "kept = []",
            "for k in range(3):",
            "    kept.append(t)",
            "    pair = (t * 2, {b})",
            "    t = t + {a} * pair[1]",
            "{name} = kept[2] * {b} + t",
        ],
    ),
]


def statement(w, name, shape):
    """A block making ``name`` (of ``shape``) in one of these forms."""
    forms = [f for f in _FORMS if shape == SCALAR or not f[1]]
    helpers, _, lines = w.rng.choice(forms)
    a, b = w.pick(shape), w.pick(shape)
    w.helpers.update(helpers)
    return w.emit([line.format(a=a, b=b, name=name) for line in lines], name, shape)
