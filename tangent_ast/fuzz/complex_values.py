"""Complex values inside a real function: made from real values, carried through
arithmetic, helpers, containers, sums and loops, and brought back real (``np.real``,
``np.imag``, ``np.abs``, ``np.angle``). Some are made so that kind inference cannot tell
they are complex (``np.hstack`` of values, read back from a dict in a helper): what is
derived from them, in ``f`` and in the helpers they reach, must not be taken as real.
A block reads like this::

    zc = pick_v({'v': np.hstack([b, a]) * (1.0 - 0.5j)})
    v3 = b * np.imag(np.sum(zc * zc)) + np.real(np.sum(zc))
"""

from __future__ import annotations

HELPERS = {
    "rotate": "def rotate(p, q):\n    return p * np.exp(1j * q)\n",
    "pick_v": "def pick_v(d):\n    return d['v']\n",
    "spread": "def spread(t):\n    return np.std(np.abs(t) + 0.1) + np.var(np.real(t))\n",
    "variance": "def variance(t):\n    return np.var(t)\n",
    # np.median orders values, its rule is for real ones: given a complex value, refused
    "middle": "def middle(t):\n    return np.median(t)\n",
}

# (helpers it calls, lines): {a}, {b} are values of the block's shape, {name} the result
_FORMS = [
    (
        (),
        ["zc = {a} * (0.5 + 1.5j) + {b}", "{name} = np.real(zc * np.conj(zc)) + np.imag(zc) * {b}"],
    ),
    (
        (),
        [
            "zc = np.exp(1j * {a}) * (1.0 + {b} * {b})",
            "{name} = np.abs(zc) * np.cos({a}) + np.real(zc)",
        ],
    ),
    ((), ["zc = np.sum({a} * (0.3 - 0.7j))", "{name} = {a} * np.real(zc * zc) + np.imag(zc)"]),
    (
        (),
        [
            "zc = 0j",
            "for k in range(2):",
            "    zc = zc + {a} * (1j ** k)",
            "{name} = np.real(zc) + np.imag(zc) * 0.5",
        ],
    ),
    (
        (),
        [
            "zc = {a} * np.full(np.shape({a}), 1.0 - 0.5j)",
            "{name} = np.imag(zc * 2.0) + np.angle(zc + 3.0)",
        ],
    ),
    (("rotate",), ["zc = rotate({a}, {b})", "{name} = np.real(zc) * 2.0 + np.imag(zc * zc)"]),
    (
        ("pick_v",),
        [
            "zc = pick_v({{'v': {a} * np.full(np.shape({a}), 1.0 + 0.5j)}})",
            "{name} = {a} * np.imag(np.sum(zc)) + np.real(zc)",
        ],
    ),
    (
        ("pick_v", "spread"),
        [
            "zc = pick_v({{'v': np.hstack([{a}, {b}]) * (0.5 + 0.5j)}})",
            "{name} = {a} * spread(zc)",
        ],
    ),
    (
        ("pick_v",),
        [
            "zc = pick_v({{'v': np.hstack([{a}, {b}]) * (1.0 - 0.5j)}})",
            "{name} = {a} * np.imag(np.sum(zc * zc)) + np.real(np.sum(zc))",
        ],
    ),
    (
        ("middle",),
        ["zc = np.hstack([{a}, {b}]) * (0.5 - 0.5j)", "{name} = {a} * np.real(middle(zc))"],
    ),
    (
        ("variance",),
        ["zc = {a} * np.full(np.shape({a}), 0.5 + 0.5j)", "{name} = {a} * np.real(variance(zc))"],
    ),
]


def statement(w, name, shape):
    """A block making ``name`` (of ``shape``) through complex intermediate values."""
    a, b = w.pick(shape), w.pick(shape)
    helpers, lines = w.rng.choice(_FORMS)
    w.helpers.update(helpers)
    return w.emit([line.format(a=a, b=b, name=name) for line in lines], name, shape)
