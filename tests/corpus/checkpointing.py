"""Checkpointed loops and functions: the same values and derivatives as without the
markers (``plain`` gives each one's unmarked twin)."""

import numpy as np

import tangent_ast as ta

from .cases import Case

SNAPSHOTS = 3


def sine_map(x, n):
    h = x
    for t in ta.checkpointed(range(n), snapshots=4):
        h = np.sin(h) * x
    return h


def sine_map_plain(x, n):
    h = x
    for t in range(n):
        h = np.sin(h) * x
    return h


def rnn(W, h0, xs):
    h = h0
    for t in ta.checkpointed(range(xs.shape[0]), snapshots=SNAPSHOTS):
        h = np.tanh(W @ h + xs[t])
    return np.sum(h ** 2)


def rnn_plain(W, h0, xs):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t])
    return np.sum(h ** 2)


def oscillator(q, p, dt, n):
    """Leapfrog steps: two values carried, a running sum, a branch in the body."""
    energy = 0.0
    for t in ta.checkpointed(range(n), snapshots=5):
        p = p - dt * np.sin(q)
        q = q + dt * p
        if t % 2 == 0:
            energy = energy + p * p
        else:
            energy = energy + 0.5 * q * q
    return energy + q * p


def oscillator_plain(q, p, dt, n):
    energy = 0.0
    for t in range(n):
        p = p - dt * np.sin(q)
        q = q + dt * p
        if t % 2 == 0:
            energy = energy + p * p
        else:
            energy = energy + 0.5 * q * q
    return energy + q * p


def _cell(W, h):
    a = np.tanh(W @ h)
    return np.sin(W.T @ a) * h


@ta.checkpoint
def cell(W, h):
    a = np.tanh(W @ h)
    return np.sin(W.T @ a) * h


def stacked(W, h):
    for i in range(3):
        h = cell(W, h)
    return np.sum(h ** 2)


def stacked_plain(W, h):
    for i in range(3):
        h = _cell(W, h)
    return np.sum(h ** 2)


def stacked_in_checkpointed_loop(W, h, n):
    for t in ta.checkpointed(range(n), snapshots=2):
        h = cell(W, h) + 0.1 * h
    return np.sum(h ** 2)


def stacked_in_checkpointed_loop_plain(W, h, n):
    for t in range(n):
        h = _cell(W, h) + 0.1 * h
    return np.sum(h ** 2)


def after_an_early_return(x, n):
    if x > 5.0:
        return x
    h = x
    for t in ta.checkpointed(range(n), snapshots=3):
        h = np.cos(h) + 0.5 * x
    return h * h


def after_an_early_return_plain(x, n):
    if x > 5.0:
        return x
    h = x
    for t in range(n):
        h = np.cos(h) + 0.5 * x
    return h * h


def assigned_first_in_the_loop(x, n):
    for t in ta.checkpointed(range(n), snapshots=2):
        if t == 0:
            y = x
        else:
            y = y * x
    return y


def assigned_first_in_the_loop_plain(x, n):
    for t in range(n):
        if t == 0:
            y = x
        else:
            y = y * x
    return y


def gated(W, h, xs):
    """Two values carried, of different shapes: a vector and a running scalar."""
    s = 0.0
    for t in ta.checkpointed(range(xs.shape[0]), snapshots=3):
        h = np.tanh(W @ h + xs[t]) * (1.0 + 0.1 * s)
        s = s + np.sum(h) * 0.5
    return np.sum(h ** 2) + s


def gated_plain(W, h, xs):
    s = 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t]) * (1.0 + 0.1 * s)
        s = s + np.sum(h) * 0.5
    return np.sum(h ** 2) + s


PLAIN = {
    gated: gated_plain,
    assigned_first_in_the_loop: assigned_first_in_the_loop_plain,
    after_an_early_return: after_an_early_return_plain,
    sine_map: sine_map_plain,
    rnn: rnn_plain,
    oscillator: oscillator_plain,
    stacked: stacked_plain,
    stacked_in_checkpointed_loop: stacked_in_checkpointed_loop_plain,
}

_W = np.linspace(-0.6, 0.5, 16).reshape(4, 4)
_XS = np.cos(np.arange(28.0)).reshape(7, 4)

CASES = [
    *[Case(sine_map, (0.7, n), note=f"n={n}") for n in (0, 1, 3, 4, 5, 13)],
    Case(rnn, (_W, np.ones(4) * 0.3, _XS)),
    Case(rnn, (_W, np.ones(4) * 0.3, _XS[:2]), note="shorter than the snapshots"),
    Case(assigned_first_in_the_loop, (0.7, 9)),
    Case(oscillator, (0.4, -0.2, 0.1, 11)),
    Case(after_an_early_return, (0.3, 7)),
    Case(after_an_early_return, (6.0, 7), note="returned early"),
    Case(stacked, (_W, np.linspace(-1.0, 1.0, 4))),
    Case(stacked_in_checkpointed_loop, (_W, np.linspace(-1.0, 1.0, 4), 5)),
    Case(gated, (_W, np.ones(4) * 0.3, _XS)),
    Case(gated, (_W, np.ones(4) * 0.3, np.cos(np.arange(80.0)).reshape(20, 4)), note="T=C(5,2)"),
]
