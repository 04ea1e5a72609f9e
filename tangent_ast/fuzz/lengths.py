"""Programs whose arrays have different lengths: ``N`` = 3 and ``M`` = 4, and 1.

Rules are specialised on which axes of their arguments have equal lengths (see
:func:`tangent_ast.vocabulary.kinds.signature_of`), and kind inference carries those labels through
``@``, ``.T``, indexing and broadcasting to leave out ``unbroadcast``. With every axis of
length 3 each axis gets the same label, and a label put on the wrong axis never shows; so
``generate(seed, lengths="mixed")`` also writes values of shapes (M,), (N, M), (M, N),
(M, M), (1, N), (N, 1) and (1,), and *moves* between them: a typed template such as
``{nm} @ {m}`` (a value of shape (N, M) times one of shape (M,): shape (N,)) is filled from
the values in scope, so every program is valid NumPy for its shapes.
"""

from __future__ import annotations

import string

SCALAR, VEC, MAT = "scalar", "vec", "mat"
VEC_M, MAT_NM, MAT_MN, MAT_MM = "vec4", "mat3x4", "mat4x3", "mat4x4"
ROW, COL, ONE = "row", "col", "one"
N, M = 3, 4

SHAPES = {
    SCALAR: (),
    VEC: (N,),
    MAT: (N, N),
    VEC_M: (M,),
    MAT_NM: (N, M),
    MAT_MN: (M, N),
    MAT_MM: (M, M),
    ROW: (1, N),
    COL: (N, 1),
    ONE: (1,),
}
# the shape a template's field stands for: the field's name without its trailing digits
CODES = {
    "s": SCALAR,
    "n": VEC,
    "nn": MAT,
    "m": VEC_M,
    "nm": MAT_NM,
    "mn": MAT_MN,
    "mm": MAT_MM,
    "r": ROW,
    "c": COL,
    "o": ONE,
}
# helpers only programs of mixed lengths call (each reads like code people write)
HELPERS = {
    "affine": "def affine(W, x, b):\n    return np.tanh(W @ x + b)\n",
    "center": "def center(X):\n    return X - np.mean(X, axis=0)\n",
    "gram": "def gram(X):\n    return X.T @ X\n",
}
# the helpers of generate.py, called with arguments of different shapes
CALLED = ("smooth_step", "pair", "bump", "scaled", *HELPERS)

# the parameters' shapes, those with two lengths the more often
PARAMETER_SHAPES = [VEC, MAT, VEC_M, MAT_NM, MAT_MN, ROW, COL, ONE, SCALAR, MAT_NM, MAT_MN, VEC_M]

# moves into each shape: expressions over values of the shapes their fields name
MOVES = {
    VEC: [
        "{nm} @ {m}",
        "np.dot({nm}, {m})",
        "{mn}.T @ {m}",
        "{m} @ {mn}",
        "np.matmul({m}, {mn})",
        "{mn}[0]",
        "{mn}[-1] * {n}",
        "{nm}[:, 1]",
        "{nm}[:, -1] + {n}",
        "np.sum({mn}, axis=0)",
        "np.mean({nm}, axis=1)",
        "{nm}.sum(axis=-1)",
        "np.max({mn}, axis=0)",
        "{r}[0]",
        "{c}[:, 0]",
        "{c}.T[0] * {n}",
        "({nm} * {m}).sum(axis=1)",
        "np.einsum('ij,j->i', {nm}, {m})",
        "np.einsum('ji,j->i', {mn}, {m})",
        "{nm} @ ({mn} @ {n})",
        "{r}.reshape(3)",
        "{nm}.T[2] * {n}",
        "{n} * {o}",
        "{o} - {n}",
        "{nm}[:, 0] * {mn}[1]",
        "affine({nm}, {m}, {n})",
        "affine({nm}, {m}, {o})",
        "smooth_step({nm} @ {m}, {n})",
        "smooth_step({n}, {o})",
        "scaled({mn}.T @ {m})",
        "{s} * {mn}[3]",
        "np.linalg.norm({mn}, axis=0)",
        "np.sum({nm} * {nm2}, axis=1)",
    ],
    VEC_M: [
        "{nm}.T @ {n}",
        "{n} @ {nm}",
        "{mn} @ {n}",
        "np.dot({n}, {nm})",
        "{nm}[0]",
        "{nm}[1] * {m}",
        "{mn}[:, 0]",
        "{mn}[:, 2] - {m}",
        "np.sum({nm}, axis=0)",
        "np.mean({mn}, axis=1)",
        "{mn}.sum(-1)",
        "np.min({nm}, axis=0)",
        "{mm} @ {m}",
        "{m} @ {mm}",
        "np.prod({nm} * 0.5 + 1.0, axis=0)",
        "({mn} * {n}).sum(axis=1)",
        "{mn}.T[2]",
        "({r} @ {nm})[0]",
        "np.einsum('ij,i->j', {nm}, {n})",
        "{o} * {m}",
        "affine({mn}, {n}, {m})",
        "smooth_step({mn} @ {n}, {m})",
        "sum(pair({m}, {nm}[0]))",
        "np.full(4, {s}) * np.arange(1.0, 5.0)",
        "np.linspace(0.5, 2.0, 4) * {s}",
        "np.take({m}, [3, 0, 2, 1])",
        "np.concatenate([{n}, {o}])",
        "np.concatenate(({m}[2:], {nm}[0, :2]))",
    ],
    MAT: [
        "{nm} @ {mn}",
        "{nm} @ {nm}.T",
        "{mn}.T @ {mn}",
        "{c} * {r}",
        "{c} + {r}",
        "{c} @ {r}",
        "{nn} * {r}",
        "{nn} + {c}",
        "{nn} - {n}[:, None]",
        "{n} * {c}",
        "{r} - {nn}",
        "np.outer({n}, {n2})",
        "{nm} @ {mm} @ {mn}",
        "np.einsum('ik,jk->ij', {nm}, {nm2})",
        "{nn} - np.mean({nn}, axis=0)",
        "gram({mn})",
        "gram({r})",
        "affine({nn}, {n}, {c})",
        "sum(pair({c}, {r}))",
    ],
    MAT_MM: [
        "{mn} @ {nm}",
        "{nm}.T @ {nm}",
        "np.outer({m}, {m2})",
        "{mn} @ {mn}.T",
        "{mm} * {m}",
        "{mm} + {m}[:, None]",
        "{mm}.T - {mm2}",
        "gram({nm})",
        "center({mm})",
    ],
    MAT_NM: [
        "np.outer({n}, {m})",
        "{mn}.T",
        "np.transpose({mn})",
        "np.swapaxes({mn}, 0, 1)",
        "{nm} * {m}",
        "{nm} + {n}[:, None]",
        "{nm} - {c}",
        "{c} * {m}",
        "{n}[:, None] * {m}",
        "{nn} @ {nm}",
        "{nm} @ {mm}",
        "{mn}.T * {m}",
        "{nm} * {s} + {m}",
        "{nm}[::-1]",
        "{nm}[:, ::-1] * {nm2}",
        "np.where({nm} > 0.0, {nm}, {m})",
        "np.maximum({nm}, {m} * 0.5)",
        "{m} + {nm}",
        "{c} @ {m}[None, :]",
        "{nm} / ({m} * {m} + 1.0)",
        "np.einsum('i,j->ij', {n}, {m})",
        "{nm} - np.mean({nm}, axis=0)",
        "{nm} - np.mean({nm}, axis=1, keepdims=True)",
        "np.outer({n}, np.arange(1.0, 5.0))",
        "{n}[:, None] * np.linspace(0.1, 0.4, 4)",
        "{nm} * {o}",
        "np.tanh({nm}) * {r}.T",
        "np.stack([{m}, {m2} * 2.0, {m}])",
        "{nm}.reshape(4, 3).reshape(3, 4)",
        "smooth_step({nm}, {m})",
        "sum(pair({nm}, {c}))",
        "bump({nm} * 1.0, {m})",
        "smooth_step({n}[:, None], {m})",
        "center({nm})",
    ],
    MAT_MN: [
        "{nm}.T",
        "np.outer({m}, {n})",
        "{mn} * {n}",
        "{mn} + {r}",
        "{mn} + {m}[:, None]",
        "{r} * {m}[:, None]",
        "{m}[:, None] * {n}[None, :]",
        "{mn} @ {nn}",
        "{mm} @ {mn}",
        "{n} + {mn}",
        "{nm}.T - {r}",
        "{mn} - np.sum({mn}, axis=0)",
        "np.stack([{n}, {n2}, {n}, {n2} * 2.0])",
        "{mn} / np.sqrt(np.sum({mn} * {mn}, axis=1, keepdims=True) + 1.0)",
        "{s} * np.ones((4, 3)) + {r}",
        "{mn}[[3, 1, 0, 2]]",
        "np.cumsum({mn}, axis=0)",
        "{nm}.T @ {nn}",
        "smooth_step({r}, {mn})",
        "bump({mn} * 1.0, {r})",
        "center({mn})",
    ],
    ROW: [
        "{n}[None, :]",
        "{n}[np.newaxis, :]",
        "{n}.reshape(1, 3)",
        "{mn}[:1]",
        "{mn}[1:2]",
        "np.sum({mn}, axis=0, keepdims=True)",
        "{c}.T",
        "{r} * {n}",
        "np.mean({nn}, axis=0, keepdims=True)",
        "{m}[None, :] @ {mn}",
        "{r} @ {nn}",
        "{r} * {o}",
    ],
    COL: [
        "{n}[:, None]",
        "{n}.reshape(3, 1)",
        "{r}.T",
        "np.sum({nm}, axis=1, keepdims=True)",
        "{nm}[:, :1]",
        "{nm} @ {m}[:, None]",
        "{c} * {c2}",
        "{nn} @ {c}",
        "np.max({nm}, axis=1, keepdims=True)",
        "{c} + {o}",
    ],
    ONE: [
        "{n}[:1]",
        "{nm}[0, :1]",
        "np.sum({n}, keepdims=True)",
        "{r}[:, 0]",
        "{c}[0]",
        "{m}[-1:] * {o}",
        "np.array([{s}])",
    ],
    SCALAR: [
        "{n} @ {nm} @ {m}",
        "np.sum({nm} * {m})",
        "np.sum({mn} @ {n})",
        "{m} @ {m2}",
        "{nm}[1, 2]",
        "{mn}[3, 0] * {s}",
        "float({r}[0, 1])",
        "np.sum({c} * {r})",
        "np.trace({nm} @ {mn})",
        "{o}[0] * {s}",
        "np.sum({mm} @ {m})",
    ],
}

_FIELDS = {
    template: [name for _, name, _, _ in string.Formatter().parse(template) if name]
    for templates in MOVES.values()
    for template in templates
}


def _shape_of(field):
    return CODES[field.rstrip("0123456789")]


def _possible(w, shape):
    present = set(w.env.values())
    return [t for t in MOVES[shape] if all(_shape_of(name) in present for name in _FIELDS[t])]


def reachable(w):
    """The shapes a value could be made of next: those in scope, and those a move makes."""
    present = set(w.env.values())
    return [s for s in SHAPES if s in present or _possible(w, s)]


def move(w, shape):
    """An expression of ``shape`` made from values of other shapes in scope, or None."""
    templates = _possible(w, shape)
    if not templates:
        return None
    template = w.rng.choice(templates)
    w.helpers.update(h for h in CALLED if h + "(" in template)
    return template.format(**{name: _recent(w, _shape_of(name)) for name in _FIELDS[template]})


def _recent(w, shape):
    """A value of ``shape``, half the time the latest made: moves chain (``c @ r``, then the
    result broadcast against ``c``), where a label put on the wrong axis shows."""
    names = [n for n, s in w.env.items() if s == shape]
    return names[-1] if w.rng.random() < 0.5 else w.rng.choice(names)


def _loop_or_update(w, name):
    """Loops over a matrix's rows, and writes into a copy, by row, column or broadcast."""
    options = []
    nm, mn, n, m, s, c = (w.pick(x) for x in (MAT_NM, MAT_MN, VEC, VEC_M, SCALAR, COL))
    if nm and n:
        body = f"    {name} = {name} + {nm}[i] * {n}[i]"
        options.append(([f"{name} = {nm}[0] * 0.0", "for i in range(3):", body], VEC_M))
    if mn and m:
        body = f"    {name} = {name} + {mn}[i] * np.tanh({m}[i])"
        options.append(([f"{name} = np.zeros(3)", "for i in range(4):", body], VEC))
    if nm and m:
        comp = f"{name} = np.array([{nm}[i] @ {m} for i in range(3)])"
        options.append(([comp], VEC))
        options.append(([f"{name} = {nm}.copy()", f"{name}[0] = {m}"], MAT_NM))
        options.append(([f"{name} = {nm} * 1.0", f"{name} += {m}"], MAT_NM))
        options.append(([f"{name} = {nm}.copy()", f"{name} *= {m}"], MAT_NM))
    if nm and n:
        options.append(([f"{name} = {nm}.copy()", f"{name}[:, 1] = {n}"], MAT_NM))
        options.append(([f"{name} = {nm}.copy()", f"{name}[:, 2] += {n}"], MAT_NM))
    if nm and c:
        options.append(([f"{name} = {nm} * 1.0", f"{name} -= {c}"], MAT_NM))
    if nm and s:
        options.append(([f"{name} = {nm}.copy()", f"{name}[1] = {s}"], MAT_NM))
        options.append(([f"{name} = {nm}.copy()", f"{name}[2, 3] = {s}"], MAT_NM))
    if mn and n:
        options.append(([f"{name} = {mn}.copy()", f"{name}[3] = {n}"], MAT_MN))
        options.append(([f"{name} = {mn} * 1.0", f"{name} += {n}"], MAT_MN))
    if mn and m:
        options.append(([f"{name} = {mn}.copy()", f"{name}[:, 0] = {m} * 2.0"], MAT_MN))
    if n and m:
        options.append(([f"{name} = np.zeros((3, 4))", f"{name}[1] = {m}"], MAT_NM))
        options.append(([f"{name} = np.zeros((4, 3))", f"{name}[:, 2] = {m}"], MAT_MN))
    return w.rng.choice(options) if options else None


def statement(w):
    """Append a statement that moves between shapes: an assignment, a loop or an update."""
    name = w.fresh()
    if w.rng.random() < 0.2:
        found = _loop_or_update(w, name)
        if found is not None:
            return w.emit(found[0], name, found[1])
    shape = w.rng.choice([s for s in reachable(w) if _possible(w, s)] or [SCALAR])
    expr = move(w, shape)
    if expr is not None:
        w.emit([f"{name} = {expr}"], name, shape)
