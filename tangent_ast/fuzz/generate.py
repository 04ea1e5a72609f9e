"""Random programs over the language tangent_ast supports.

A :class:`Program` is a module: helper functions and one function ``f`` whose body is a
list of blocks (a block is one statement, compound ones included), ending in a scalar
``return``. Values have one of three shapes, so that every operation composes:
``scalar`` (a Python float), ``vec`` (a float array of shape (3,)) and ``mat`` (3 x 3).
With ``lengths="mixed"`` values also have lengths 4 and 1, and move between shapes (see
:mod:`~tangent_ast.fuzz.lengths`). The same seed gives the same program, byte for byte::

    >>> generate(7).source() == generate(7).source()
    True
    >>> generate(7, lengths="mixed").source() == generate(7, lengths="mixed").source()
    True
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

import numpy as np

from . import complex_values as _complex
from . import jumps as _jumps
from . import lengths as _lengths
from . import literals as _literals
from . import mutation as _mutation
from . import python_forms as _python_forms
from .lengths import MAT, SCALAR, SHAPES, VEC

LIST = "list"  # a parameter's shape: a list of three floats

# Module-level helpers a program may call; each reads like code people write.
HELPERS = {
    "smooth_step": "def smooth_step(p, q):\n    return p * np.tanh(q) + 0.5 * q\n",
    "scaled": "def scaled(p, scale=2.0):\n    return scale * p\n",
    "repeat_sin": (
        "def repeat_sin(p, n):\n    if n == 0:\n        return p\n"
        "    return repeat_sin(np.sin(p), n - 1)\n"
    ),
    "pair": "def pair(p, q):\n    return p * q, p - q\n",
    "bump": "def bump(a, b):\n    a += b\n    return a\n",
    # rules registered for one mode only: the other mode must use them too (transposed) or
    # differentiate the body, and both must agree
    "soft_clip": (
        "def soft_clip(p):\n    return np.tanh(p) * 1.0\n\n\n"
        "ta.defjvp(soft_clip, lambda dp, ans, p: dp * (1.0 - ans * ans))\n"
    ),
    "twice_sin": (
        "def twice_sin(p):\n    return np.sin(p) * 2.0\n\n\n"
        "ta.defvjp(twice_sin, lambda ct, ans, p: ct * 2.0 * np.cos(p))\n"
    ),
    # called through tangent_ast's own API inside f (vjp, jvp, linearize, grad, hvp)
    "wave": "def wave(p):\n    return np.sin(p) * p + 0.5 * p * p\n",
    "wave_sum": "def wave_sum(p):\n    return np.sum(np.sin(p) * p) + 0.5 * np.sum(p * p)\n",
    # closures of one def, over other constants and other functions, called in one rule
    "make_layer": (
        "def make_layer(c, act):\n    def layer(p):\n        return act(p) * c\n"
        "    return layer\n\n\n"
        "LAYER_A = make_layer(0.5, np.tanh)\nLAYER_B = make_layer(1.5, np.tanh)\n"
        "LAYER_C = make_layer(0.5, np.sin)\n"
    ),
    # scalar closures of one def over other constants, differentiated by the API (grad, hvp):
    # each closure's derived functions use its own constant
    "make_wave": (
        "def make_wave(c):\n    def wave_c(p):\n        return c * np.sum(np.sin(p) * p)\n"
        "    return wave_c\n\n\nWAVE_A = make_wave(0.5)\nWAVE_B = make_wave(1.5)\n"
    ),
    # partials of one function bound to other values, differentiated by the API: each
    # partial's derived functions use its own values (a negative base with a float exponent
    # too: the exponent is a constant, its derivative must not be read)
    "power_parts": (
        "def power_sum(p, k, c):\n    return c * np.sum(p ** k)\n\n\n"
        "POWER_A = functools.partial(power_sum, k=2.0, c=1.0)\n"
        "POWER_B = functools.partial(power_sum, k=3.0, c=0.5)\n"
    ),
}
_ALL_HELPERS = {
    **HELPERS,
    **_complex.HELPERS,
    **_lengths.HELPERS,
    **_mutation.HELPERS,
    **_python_forms.HELPERS,
}
# the helpers a statement calls by themselves ("helper"); the others are called by the API
# ("api") or are closures ("closures")
CALLED = ("bump", "pair", "repeat_sin", "scaled", "smooth_step")
PREAMBLE = (
    "import math\nimport collections\nimport dataclasses\nimport functools\nimport warnings\n\n"
    "import numpy as np\n\n"
    "import tangent_ast as ta\n\n"
    "from tangent_ast.fuzz.mutation import Box\n\n"
    "Pair = collections.namedtuple('Pair', ['left', 'right'])\n\n\n"
    "SCALE = 1.5\n"
)


@dataclass(frozen=True)
class Program:
    """A random program: ``f(params)`` with ``body`` blocks and a scalar ``result``."""

    seed: int
    params: tuple
    shapes: tuple  # the shape of each parameter
    body: tuple  # blocks: tuples of source lines (indented as in f's body)
    result: str
    helpers: tuple = ()  # names in HELPERS the body calls
    lengths: str = "equal"  # "equal": every axis of length 3; "mixed": lengths 3, 4 and 1

    def source(self, preamble=True):
        lines = [PREAMBLE] if preamble else []
        for name in sorted(self.helpers):
            lines.append("\n" + _ALL_HELPERS[name])
        lines.append(f"\ndef f({', '.join(self.params)}):")
        for block in self.body:
            lines.extend("    " + line for line in block)
        lines.append(f"    return {self.result}\n")
        return "\n".join(lines)

    def args(self):
        """The arguments to check ``f`` at: smooth points, from the seed."""
        rng = np.random.default_rng(self.seed)
        out = []
        for shape in self.shapes:
            if shape == SCALAR:
                out.append(float(rng.uniform(0.3, 1.4)) * (1 if rng.random() < 0.7 else -1))
            elif shape == LIST:
                out.append([float(v) for v in rng.uniform(-1.2, 1.2, 3)])
            elif shape in _mutation.ARGUMENTS:
                out.append(_mutation.argument(shape, rng))
            else:
                out.append(rng.standard_normal(SHAPES[shape]))
        return tuple(out)

    def without_block(self, i):
        return replace(self, body=self.body[:i] + self.body[i + 1 :])


@dataclass
class _Writer:
    rng: random.Random
    env: dict = field(default_factory=dict)  # name -> shape
    body: list = field(default_factory=list)
    helpers: set = field(default_factory=set)
    count: int = 0
    mixed: bool = False  # values of lengths 3, 4 and 1 (see lengths.py)
    wanted: list = field(default_factory=list)  # values the result reads, whatever it picks

    def fresh(self, stem="v"):
        self.count += 1
        return f"{stem}{self.count}"

    def pick(self, *shapes):
        names = [n for n, s in self.env.items() if s in shapes]
        return self.rng.choice(names) if names else None

    def emit(self, lines, name, shape):
        self.body.append(tuple(lines))
        self.env[name] = shape


def _expression(w, shape):
    """A one-line expression of ``shape`` from values in scope, or None."""
    rng = w.rng
    if w.mixed and (w.pick(shape) is None or rng.random() < 0.3):
        expr = _lengths.move(w, shape)
        if expr is not None:
            return expr
    a = w.pick(shape)
    if a is None:
        return None
    b = w.pick(shape) or a
    s = w.pick(SCALAR)
    if rng.random() < 0.2:
        return _literals.expression(w, shape, a, b, s)
    choices = [
        f"{a} * {b}",
        f"{a} + {b}",
        f"{a} - 0.5 * {b}",
        f"{a} / ({b} * {b} + 1.0)",
        f"np.sin({a})",
        f"np.tanh({a}) * {b}",
        f"np.exp(-{a} * {a})",
        f"np.sqrt({a} * {a} + 1.0)",
        f"np.log1p({a} * {a})",
        f"np.arctan({a})",
        f"{a} ** 2",
        f"np.cos({a}) ** 3",
        f"np.maximum({a}, 0.3 * {b} + 0.1)",
        f"np.clip({a}, a_min=-0.8, a_max=0.9)",
        f"np.where({a} > {b}, {a}, {b})",
        f"np.abs({a} + 0.05)",
        f"{a} * SCALE",
        f"np.power({a} * {a} + 0.5, 1.5)",
        f"np.hypot({a}, {b})",
    ]
    if s is not None:
        choices += [f"{a} * {s}", f"{s} * {a} - {b}", f"np.tanh({s}) + {a}"]
    if shape == SCALAR:
        choices += [
            f"math.sin({a}) + {b}",
            f"math.exp(-{a} * {a})",
            f"max({a}, {b})",
            f"float({a}) * 2.0",
            f"abs({a}) + {b}",
            f"{a} ** 0 + {b}",
            f"sum([{a}, {b}], 0.5)",
            f"math.pow({a} * {a} + 1.0, 0.5)",
            f"np.std(np.array([{a}])) + {b}",
            # equal elements: NumPy's std is a rounding error of the mean, its derivative 0
            f"np.std(np.full(3, {a}) * 0.1 + 0.3) + {b}",
            f"np.sum(np.array([{a}, {b} * {a}, 2.0]))",
            f"np.sum([{a}, {b}])",
            f"{a} if {b} > 0.1 else -{a}",
        ]
    if shape == VEC:
        m = w.pick(MAT)
        choices += [
            f"{a}[::-1] * {b}",
            f"np.cumsum({a})",
            f"np.sort({a})",
            f"np.roll({a}, 1)",
            f"np.full((3,), {s}) * {a}" if s else f"{a} * 2.0",
            f"np.full_like({a}, {s}) + {b}" if s else f"{a} - 1.0",
            f"np.concatenate([{a}[:1], {b}[1:]])",
            f"np.flip({a}, axis=0)",
            f"np.array([{s}, {s} * 2.0, 1.0]) * {a}" if s else f"{a} * 3.0",
            f"np.full(3, {s} * 0.5) - {a}" if s else f"{a} + 3.0",
            f"{a} ** 0 * {b}",
            f"np.power({a}, 2) + {b}",
            f"np.concatenate(({a}[1:], {a}[:1]))",
            f"np.take({a}, [2, 0, 1])",
            f"np.tile({a}[:1], 3) * {b}",
            f"np.repeat({a}[1:2], 3)",
            f"np.cumprod({a} * 0.1 + 1.0)",
            f"np.clip({a}, a_max=0.7)",
            f"np.clip({a}, -0.6, None)",
        ]
        if m is not None:
            choices += [
                f"{m} @ {a}",
                f"np.dot({a}, {m})",
                f"np.sum({m}, axis=0) * {a}",
                f"np.mean({m}, axis=1)",
                f"np.max({m}, axis=1)",
                f"{m}[1]",
                f"{m}[:, 2] + {a}",
                f"np.einsum('ij,j->i', {m}, {a})",
                f"np.linalg.solve({m} + 4.0 * np.eye(3), {a})",
                f"np.sum({m}, 0)",
                f"np.mean({m}, axis=-1)",
                f"np.sum({m}, axis=1, keepdims=True)[:, 0]",
                f"np.linalg.norm({m}, axis=0)",
                f"np.min({m}, axis=0)",
                f"np.prod({m} * 0.5 + 1.0, axis=1)",
                f"{m}.mean(axis=0) * {a}",
                f"{m}.sum(1)",
            ]
    if shape == MAT:
        v = w.pick(VEC)
        choices += [
            f"{a} @ {b}",
            f"{a}.T * {b}",
            f"np.transpose({a}) + {b}",
            f"np.tril({a}) - {b}",
            f"np.einsum('ij,jk->ik', {a}, {b})",
            f"{a}.reshape(9).reshape(3, 3)",
            f"{a}[[0, 2, 1]]",
            f"np.swapaxes({a}, 0, 1) * {b}",
            f"np.linalg.inv({a} + 4.0 * np.eye(3))",
            f"np.cumsum({a}, axis=1)",
            f"np.roll({a}, shift=1, axis=0)",
            f"np.triu({a}, k=1) + {b}",
        ]
        if v is not None:
            choices += [
                f"{a} * {v}",
                f"np.outer({v}, {v}) + {a}",
                f"np.stack([{v}, {v} * 2.0, {v}]) * {a}",
                f"{a} - np.sum({a}, axis=1, keepdims=True)",
            ]
    return rng.choice(choices)


def _reduction(w):
    a = w.pick(*(s for s in SHAPES if s != SCALAR)) if w.mixed else w.pick(VEC, MAT)
    if a is None:
        return None
    return w.rng.choice(
        [
            f"np.sum({a})",
            f"np.mean({a} ** 2)",
            f"np.sum({a}, axis=None)",
            f"{a}.sum()",
            f"np.linalg.norm({a} + 0.1)",
            f"np.prod(np.tanh({a}) + 2.0)",
            f"np.std({a})",
            f"np.var({a}, ddof=1)",
            f"np.max({a} * 1.0)",
            f"np.trace({a} @ {a}.T)" if len(SHAPES[w.env[a]]) == 2 else f"np.dot({a}, {a})",
        ]
    )


# an element, row, slice or fancy-indexed part of a value, updated by an augmented
# assignment: a view shares the update with the value, an element or a copy does not
_PART_UPDATES = {
    VEC: ["[1]", "[-1]", "[1:]", "[::2]", "[..., 1]", "[[0, 2]]", "[None, 1]"],
    MAT: ["[1]", "[1, 0]", "[-1, 2]", "[1:, 0]", "[:, 1]", "[..., 0]", "[[0, 2]]", "[1, [0, 2]]"],
}


def _part_update(w, name, shape):
    """``el = a[index]; el += c`` on an argument or a local, then both used."""
    rng = w.rng
    a = w.pick(shape)
    index = rng.choice(_PART_UPDATES[shape])
    op = rng.choice(["+=", "-=", "*=", "/="])
    lines = [f"el = {a}{index}", f"el {op} {rng.choice(['1.5', '0.5', '2.0'])}"]
    return w.emit(lines + [f"{name} = {a} * 2.0 + np.sum(el * el)"], name, shape)


def _alias(w, name, shape):
    """Writes through an alias of a value, or a view of it, before it is used."""
    rng = w.rng
    a = w.pick(shape)
    if shape in (VEC, MAT) and rng.random() < 0.4:
        return _part_update(w, name, shape)
    if shape in (VEC, MAT) and rng.random() < 0.5:
        form = rng.choice(
            [
                [f"al = {a}", "al += 1.0"],
                [f"vw = {a}[1:]", "vw *= 2.0"],
                [
                    f"{name}_t = np.zeros((3, 3))",
                    f"{name}_t[1:] = {a}[:2] if {a}.ndim == 2 else {a}[1:]",
                ],
                [f"hb = bump({a}, {a} * 0.5)"],
                # names sharing memory without looking like views
                [f"al = np.array({a}, copy=False)", "al += 1.0"],
                [f"{name}_c = {a} * 1.0", f"al = np.asarray({name}_c)", f"{name}_c *= 2.0"],
                [f"{name}_c = {a} * 1.0", f"al = {name}_c.astype(float, copy=False)", "al -= 0.5"],
            ]
        )
        if "bump" in form[-1]:
            w.helpers.add("bump")
        read = " + al * 0.5" if form[0].startswith(("al =", f"{name}_c =")) else ""
        return w.emit(form + [f"{name} = {a} * 2.0{read}"], name, shape)
    return w.emit([f"al = {a}", f"{name} = al * 2.0"], name, shape)


def _api_call(w, name, shape):
    """tangent_ast's own API called inside ``f``: differentiated through (or refused)."""
    rng = w.rng
    a, b = w.pick(shape), w.pick(shape)
    ct = "1.0" if shape == SCALAR and rng.random() < 0.5 else b
    helper, lines = rng.choice(
        [
            ("wave", ["out, pullback = ta.vjp(wave, {a})", "{name} = pullback({ct}) * out"]),
            ("wave", ["out, tangent = ta.jvp(wave, ({a},), ({b},))", "{name} = tangent + out"]),
            ("wave", ["out, wave_jvp = ta.linearize(wave, {a})", "{name} = wave_jvp({b}) * out"]),
            ("wave_sum", ["{name} = ta.grad(wave_sum)({a}) * {b}"]),
            ("wave_sum", ["{name} = ta.hvp(wave_sum)({a}, {b})"]),
            ("wave_sum", ["vg, gg = ta.value_and_grad(wave_sum)({a})", "{name} = gg * vg + {b}"]),
        ]
    )
    w.helpers.add(helper)
    return w.emit([line.format(a=a, b=b, ct=ct, name=name) for line in lines], name, shape)


def _closures(w, name, shape):
    """Closures of one def, over other constants and other functions, called together."""
    a, b = w.pick(shape), w.pick(shape)
    if w.rng.random() < 0.4:
        w.helpers.add("make_wave")
        form = w.rng.choice(
            [
                ["{name} = ta.hvp(WAVE_A)({a}, {b}) + ta.hvp(WAVE_B)({a}, {b}) * 2.0"],
                ["{name} = ta.grad(WAVE_B)({a}) * ta.grad(WAVE_A)({b})"],
                [
                    "wa, twa = ta.jvp(WAVE_A, ({a},), ({b},))",
                    "{name} = twa * ta.jvp(WAVE_B, ({b},), ({a},))[1] + wa",
                ],
                [
                    "wb, pullback_b = ta.vjp(WAVE_B, {a})",
                    "wa, pullback_a = ta.vjp(WAVE_A, {b})",
                    "{name} = pullback_b(wa) + pullback_a(1.0) * wb",
                ],
                [
                    "wa, wave_a_jvp = ta.linearize(WAVE_A, {a})",
                    "wb, wave_b_jvp = ta.linearize(WAVE_B, {b})",
                    "{name} = wave_a_jvp({b}) * wb + wave_b_jvp({a})",
                ],
            ]
        )
        return w.emit([line.format(name=name, a=a, b=b) for line in form], name, shape)
    if w.rng.random() < 0.3:
        w.helpers.add("power_parts")
        form = w.rng.choice(
            [
                "{name} = ta.grad(POWER_A)({a}) * ta.grad(POWER_B)({b})",
                "{name} = ta.hvp(POWER_A)({a}, {b}) + ta.hvp(POWER_B)({b}, {a})",
            ]
        )
        return w.emit([form.format(name=name, a=a, b=b)], name, shape)
    w.helpers.add("make_layer")
    first, second = w.rng.sample(["LAYER_A", "LAYER_B", "LAYER_C"], 2)
    return w.emit([f"{name} = {first}({second}({a})) + {second}({b})"], name, shape)


_WRITERS = {
    "alias": _alias,
    "api": _api_call,
    "closures": _closures,
    "complex": _complex.statement,
    "python": _python_forms.statement,
}


def _shape_for(w, kind):
    """The shape of a statement's value: of a value in scope; None for a statement that
    moves between lengths (lengths.py) instead."""
    if not w.mixed:
        return w.rng.choice([n for n in (SCALAR, VEC, MAT) if w.pick(n) is not None])
    shape = w.rng.choice(sorted(set(w.env.values())))
    if w.rng.random() < 0.4 or kind == "update" or (kind == "comprehension" and shape != VEC):
        return None
    return shape


def _update(w, name, shape):
    """An array made and updated in place (on one branch, sometimes)."""
    rng = w.rng
    a, s = w.pick(shape), w.pick(SCALAR)
    # made new, but some with the tangent of {a} itself (x + 0.0), which the update must not
    # write into; and by NumPy functions that always make their result
    made = rng.choice(
        [
            f"{a}.copy()",
            f"{a} * 1.0",
            f"{a} + 0.0",
            f"np.floor({a} * 3.0) + {a}",
            f"np.where({a} > 0.0, {a}, 0.5 * {a})",
            f"np.clip({a}, -9.0, 9.0)",
        ]
    )
    lines = [f"{name} = {made}"]
    update = rng.choice(
        [
            [f"{name}[0] = {s or 0.5}"],
            [f"{name} += {a}"],
            [f"{name} *= 0.5"],
            [f"{name}[1] = {name}[1] * 2.0"],
            # an index naming a place twice: NumPy keeps one write (the last)
            [f"{name}[[0, -1, 0]] = {a}[[0, 0, -1]] * 1.5"],
            [f"{name}[[0, -1, 0]] += {a}[[-1, 0, 0]] * 2.0"],
            [f"{name}[np.array([-1, -1])] = {s or 0.5}"],
        ]
    )
    if s is not None and rng.random() < 0.3:  # on one branch only
        update = [f"if {s} > 0.2:"] + ["    " + line for line in update]
    return w.emit(lines + update, name, shape)


def _closure(w, name, shape):
    """A local function, or a lambda, called (through a slice, sometimes)."""
    rng = w.rng
    a, b = w.pick(shape), w.pick(shape)
    form = rng.choice(["def", "lambda", "lambda through a slice"])
    if form == "lambda" or (form == "lambda through a slice" and shape == SCALAR):
        return w.emit([f"g1 = lambda t: np.arcsinh(t) * {b}", f"{name} = g1({a})"], name, shape)
    if form == "lambda through a slice":
        return w.emit(
            [f"{name} = {a} * 1.0", "g1 = lambda t: np.arcsinh(t)", f"{name}[:] = g1({name})"],
            name,
            shape,
        )
    return w.emit(
        ["def inner(z):", f"    return z * {b} + 1.0", f"{name} = inner({a})"], name, shape
    )


_LOOPS = ("for", "nested", "jumps", "checkpointed", "while")


def _loop_statement(w, kind, name, shape):
    """Emit a loop of ``kind`` (one of ``_LOOPS``) that makes ``name``."""
    rng = w.rng
    if kind == "for":
        a = w.pick(shape)
        n = rng.randint(1, 4)
        brk = rng.random() < 0.3
        lines = [f"{name} = {a} * 1.0", f"for i in range({n}):"]
        if brk:
            lines += ["    if i == 2:", "        break"]
        lines += [f"    {name} = {name} * 0.7 + np.sin({name}) * (i + 1.0)"]
        return w.emit(lines, name, shape)
    if kind == "nested":  # the outer body reads what the inner loop made, nonlinearly
        a = w.pick(shape)
        n, inner = rng.randint(1, 3), rng.choice(["2", "j", "3 - j"])
        return w.emit(
            [
                f"{name} = {a} * 1.0",
                f"for j in range({n}):",
                f"    {name}_in = {name} * 0.5",
                f"    for i in range({inner}):",
                f"        {name}_in = {name}_in * 0.7 + np.sin({name}_in)",
                f"    {name} = {name} * np.cos({name}_in) + 0.1 * {name}_in",
            ],
            name,
            shape,
        )
    if kind == "jumps":  # break, continue and return deep in the branches of a loop
        return _jumps.statement(w, name, shape)
    if kind == "checkpointed":  # a long loop: one or two levels of snapshots
        a, b = w.pick(shape), w.pick(SCALAR)
        n, k = rng.randint(0, 9), rng.randint(1, 8)
        factor = f"np.tanh({b})" if w.mixed else b  # mixed: products of lengths, larger
        step = f"{name} * 0.7 + np.sin({name}) * (i + 1.0)" + (f" * {factor}" if b else "")
        lines = [f"{name} = {a} * 1.0", f"for i in ta.checkpointed(range({n}), snapshots={k}):"]
        return w.emit(lines + [f"    {name} = {step}"], name, shape)
    if kind == "while":
        a = w.pick(shape)
        return w.emit(
            [
                f"{name} = {a} + 0.0",
                "k = 0",
                "while k < 3:",
                f"    {name} = {name} - 0.1 * np.tanh({name})",
                "    k = k + 1",
            ],
            name,
            shape,
        )


def _statement(w):
    """Append one random statement (or compound block) to the body."""
    rng = w.rng
    kind = rng.choices(
        [
            "assign",
            "reduce",
            "if",
            "for",
            "while",
            "helper",
            "container",
            "update",
            "closure",
            "alias",
            "early",
            "comprehension",
            "checkpointed",
            "nested",
            "api",
            "closures",
            "jumps",
            "complex",
            "mutate",
            "python",
        ],
        weights=[10, 3, 3, 3, 1, 2, 2, 2, 1, 2, 1, 1, 1, 1, 2, 1, 2, 2, 2, 2],
    )[0]
    shape = _shape_for(w, kind)
    if shape is None:
        return _lengths.statement(w)
    name = w.fresh()
    if kind == "reduce":
        expr = _reduction(w)
        if expr is not None:
            return w.emit([f"{name} = {expr}"], name, SCALAR)
    if kind == "if":
        s = w.pick(SCALAR)
        e1, e2 = _expression(w, shape), _expression(w, shape)
        if s is not None:
            return w.emit(
                [f"if {s} > 0.2:", f"    {name} = {e1}", "else:", f"    {name} = {e2}"], name, shape
            )
    if kind in _LOOPS:
        return _loop_statement(w, kind, name, shape)
    if kind == "helper":
        a, b = w.pick(shape), w.pick(shape)
        helper = rng.choice(sorted(CALLED))
        w.helpers.add(helper)
        call = {
            "smooth_step": f"smooth_step({a}, {b})",
            "scaled": f"scaled({a}, scale=0.5)",
            "repeat_sin": f"repeat_sin({a}, 2)",
            "pair": f"sum(pair({a}, {b}))",
            "bump": f"bump({a} * 1.0, {b})",
            "soft_clip": f"soft_clip({a}) * {b}",
            "twice_sin": f"twice_sin({a}) + {b}",
        }[helper]
        return w.emit([f"{name} = {call}"], name, shape)
    if kind == "container":
        a, b = w.pick(shape), w.pick(shape)
        form = rng.choice(["tuple", "dict", "list", "reshaped", "record", "dataclass", "field"])
        lines = {
            "tuple": [f"t = ({a}, {b})", "p, q = t", f"{name} = p * q"],
            "dict": [f"d = {{'a': {a}, 'b': {b}}}", f"{name} = d['a'] - d['b'] * 2.0"],
            "list": [
                f"xs = [{a}, {b}]",
                f"xs.append({a} * 0.5)",
                f"{name} = xs[0] + xs[2] * xs[1]",
            ],
            # an item replaced by a value of another shape: the item it replaced gets a zero
            # cotangent of its own shape, not of the new one's
            "reshaped": [
                f"xs = [{a}, {b}]",
                "xs[0] = np.expand_dims(xs[0], 0)",
                f"{name} = xs[0][0] * xs[1]",
            ],
            "record": [f"pr = Pair({a}, right={b})", f"{name} = pr.left * pr.right"],
            "dataclass": [f"bx = Box({a}, {b})", f"{name} = bx.w * 2.0 + bx.b"],
            # a second name of a field, updated: the field sees it (arrays), or not (floats)
            "field": [f"bx = Box({a} * 1.0, {b})", "fw = bx.w", "fw += 0.5", f"{name} = bx.w * fw"],
        }[form]
        return w.emit(lines, name, shape)
    if kind == "update" and shape != SCALAR:
        return _update(w, name, shape)
    if kind == "closure":
        return _closure(w, name, shape)
    if kind in _WRITERS:
        return _WRITERS[kind](w, name, shape)
    if kind == "mutate":
        _mutation.statement(w, name, shape)
        if name in w.env:  # else no form fits the shape: an expression below
            return None
    if kind == "early":
        s = w.pick(SCALAR)
        if s is not None:
            w.body.append((f"if {s} > 1.3:", f"    return {s} * 2.0"))
            return None
    if kind == "comprehension" and shape == VEC:
        a = w.pick(VEC)
        return w.emit([f"{name} = np.array([{a}[i] * (i + 1.0) for i in range(3)])"], name, VEC)
    expr = _expression(w, shape)
    if expr is not None:
        w.emit([f"{name} = {expr}"], name, shape)


def _list_argument(w, ys):
    """A block on the list argument ``ys`` (three floats): changed in place, as the caller
    sees it after the call, or only read, and a scalar read from it into scope (which the
    result may leave unread: the list's cotangent is then zero, of its length as given)."""
    s = w.pick(SCALAR) or "0.5"
    name = w.fresh()
    change = w.rng.choice(
        [
            [f"{ys}.append({s} * 0.5)"],
            [f"{ys}[1] = {ys}[0] * {s}"],
            [f"{ys} += [np.sin({s})]"],
            [f"{ys}.append(1.0)", f"{ys}[0] = {ys}[-1] * {ys}[2]"],
            [],
        ]
    )
    read = w.rng.choice([f"{ys}[0] * {ys}[-1]", f"sum({ys})", f"{ys}[1] + {ys}[2] * {s}"])
    w.emit([*change, f"{name} = {read}"], name, SCALAR)


def generate(seed, size=None, lengths="equal"):
    """The program of ``seed``: 1-3 parameters, ``size`` statements (random if None); with
    ``lengths="mixed"``, of arrays whose axes have lengths 3, 4 and 1, not only 3."""
    if lengths not in ("equal", "mixed"):
        raise ValueError(f"lengths is 'equal' or 'mixed', not {lengths!r}")
    rng = random.Random(seed)
    w = _Writer(rng, mixed=lengths == "mixed")
    choices = _lengths.PARAMETER_SHAPES if w.mixed else [SCALAR, VEC, MAT]
    count = rng.choice([1, 2, 2, 3, 3, 3]) if w.mixed else rng.randint(1, 3)  # shared lengths
    shapes = tuple(rng.choice(choices) for _ in range(count))
    params = tuple(f"{'abc'[i]}" for i in range(len(shapes)))
    w.env.update(zip(params, shapes, strict=True))
    if rng.random() < 0.15:  # a list of three floats, changed in place (or not) and read
        shapes += (LIST,)
        params += ("ys",)
        _list_argument(w, "ys")
    if rng.random() < 0.1:  # a dataclass instance or a dict, its fields or entries changed
        shape = rng.choice(sorted(_mutation.ARGUMENTS))
        shapes += (shape,)
        params += (shape,)
        _mutation.ARGUMENTS[shape](w, shape)
    if rng.random() < 0.15 and any(s in (VEC, MAT) for s in shapes):  # updated in place
        arg = next(p for p, s in zip(params, shapes, strict=True) if s in (VEC, MAT))
        w.body.append((f"{arg} *= 0.5",))
    for _ in range(size if size is not None else rng.randint(2, 8)):
        _statement(w)
    used = rng.sample(sorted(w.env), k=min(len(w.env), rng.randint(1, 3)))
    if w.mixed and w.body:  # the last value made, so that the moves are differentiated
        last = list(w.env)[-1]
        used = used if last in used else [last] + used[1:]
    used += [n for n in w.wanted if n not in used]
    terms = [n if w.env[n] == SCALAR else f"np.sum({n})" for n in used]
    return Program(
        seed, params, shapes, tuple(w.body), " + ".join(terms), tuple(sorted(w.helpers)), lengths
    )
