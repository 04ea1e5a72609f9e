"""Cotangents of the discrete Fourier transforms (``np.fft``).

Complex cotangents follow tangent_ast's convention, ``dL = Re(ct * dz)``: the cotangent of a
linear map is its transpose, without conjugates. The DFT matrix is symmetric, so ``fft`` and
``ifft`` (and their n-dimensional forms) are their own transposes, with the same ``norm``.
The transforms of real input are not complex-linear: ``rfft``'s transpose is the real part of
``fft`` of the cotangent padded to full length, and ``irfft``'s counts each interior frequency
twice (it stands for itself and its conjugate).

>>> import numpy as np
>>> x, ct = np.array([1.0, 2.0, 0.5, -1.0]), np.array([0.5, -1.0, 2.0])
>>> bool(np.isclose(np.real(np.sum(ct * np.fft.rfft(x))), np.sum(rfft_vjp(ct, x) * x)))
True
"""

import numpy as np

from .tangents import real_like


def _fit(a, length, axis):
    """``a`` cut or padded with zeros to ``length`` along ``axis``: the transpose of the
    padding or cutting a transform does when its ``n`` differs from the input's length.
    Written with one path (cut, then pad, either a no-op) so that its derivative needs no
    join of values that may be complex (second derivatives)."""
    have = a.shape[axis]
    kept = np.take(a, np.arange(min(have, length)), axis=axis)
    widths = [(0, 0)] * a.ndim
    widths[axis] = (0, max(length - have, 0))
    return np.pad(kept, widths)


def _fit_to(a, shape, axes):
    """``a`` cut or padded with zeros to ``shape`` along each of ``axes`` (one cut, then
    one pad: no value carried through a loop, whose join of kinds second derivatives
    would need)."""
    fitted = [i in axes for i in range(np.ndim(a))]
    kept = a[tuple(slice(0, shape[i]) if fitted[i] else slice(None) for i in range(np.ndim(a)))]
    widths = [(0, max(shape[i] - np.shape(a)[i], 0) if fitted[i] else 0) for i in range(np.ndim(a))]
    return np.pad(kept, widths)


def _axes_of(ndim, s, axes, default):
    """The axes an n-dimensional transform of an array of ``ndim`` axes runs over, as NumPy
    resolves them (of the rank, not the array: their derivative is nothing)."""
    if axes is not None:
        return tuple(a % ndim for a in axes)
    if s is not None:
        return tuple(range(ndim - len(s), ndim))
    return tuple(range(ndim)) if default is None else tuple(a % ndim for a in default)


def fft_vjp(ct, x, n=None, axis=-1, norm=None):
    """Cotangent of ``x`` for ``np.fft.fft(x, n, axis, norm)``."""
    return real_like(_fit(np.fft.fft(ct, axis=axis, norm=norm), np.shape(x)[axis], axis), x)


def ifft_vjp(ct, x, n=None, axis=-1, norm=None):
    """Cotangent of ``x`` for ``np.fft.ifft(x, n, axis, norm)``."""
    return real_like(_fit(np.fft.ifft(ct, axis=axis, norm=norm), np.shape(x)[axis], axis), x)


def fftn_vjp(ct, x, s=None, axes=None, norm=None, default_axes=None):
    """Cotangent of ``x`` for ``np.fft.fftn`` (and ``fft2``, whose ``default_axes`` are the
    last two)."""
    axes = _axes_of(np.ndim(x), s, axes, default_axes)
    return real_like(_fit_to(np.fft.fftn(ct, axes=axes, norm=norm), np.shape(x), axes), x)


def ifftn_vjp(ct, x, s=None, axes=None, norm=None, default_axes=None):
    """Cotangent of ``x`` for ``np.fft.ifftn`` (and ``ifft2``)."""
    axes = _axes_of(np.ndim(x), s, axes, default_axes)
    return real_like(_fit_to(np.fft.ifftn(ct, axes=axes, norm=norm), np.shape(x), axes), x)


def rfft_vjp(ct, x, n=None, axis=-1, norm=None):
    """Cotangent of the real ``x`` for ``np.fft.rfft``: the real part of ``fft`` of the
    cotangent padded with zeros to the full length ``n`` (the frequencies rfft leaves out)."""
    n = np.shape(x)[axis] if n is None else n
    full = np.fft.fft(_fit(np.asarray(ct), n, axis), axis=axis, norm=norm)
    return _fit(np.real(full), np.shape(x)[axis], axis)


def rfftn_vjp(ct, x, s=None, axes=None, norm=None, default_axes=None):
    """Cotangent of the real ``x`` for ``np.fft.rfftn`` (and ``rfft2``): rfft along the last
    axis after a complex fft along the others."""
    axes = _axes_of(np.ndim(x), s, axes, default_axes)
    lengths = [np.shape(x)[a] for a in axes] if s is None else list(s)
    full = _fit(np.asarray(ct), lengths[-1], axes[-1])
    full = np.fft.fftn(full, s=lengths, axes=axes, norm=norm)
    return _fit_to(np.real(full), np.shape(x), axes)


def _half_spectrum_transpose(ct, n, axis, norm):
    """The transpose of ``irfft(z, n, axis, norm)`` with respect to ``z``: ``conj(rfft(ct))``
    scaled as irfft scales, interior frequencies counted twice."""
    spectrum = np.conj(np.fft.rfft(np.real(ct), axis=axis))  # irfft's output is real
    weights = np.full(n // 2 + 1, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    shape = [1] * spectrum.ndim
    shape[axis] = n // 2 + 1
    scale = 1.0 if norm == "forward" else (1.0 / np.sqrt(n) if norm == "ortho" else 1.0 / n)
    return spectrum * np.reshape(weights, shape) * scale


def irfft_vjp(ct, z, n=None, axis=-1, norm=None):
    """Cotangent of ``z`` for ``np.fft.irfft(z, n, axis, norm)``."""
    axis = axis % np.ndim(ct)
    n = 2 * (np.shape(z)[axis] - 1) if n is None else n
    g = _half_spectrum_transpose(np.asarray(ct), n, axis, norm)
    return real_like(_fit(g, np.shape(z)[axis], axis), z)


def irfftn_vjp(ct, z, s=None, axes=None, norm=None, default_axes=None):
    """Cotangent of ``z`` for ``np.fft.irfftn`` (and ``irfft2``): irfft along the last axis
    after a complex ifft along the others, so the transpose of one, then of the other."""
    axes = _axes_of(np.ndim(z), s, axes, default_axes)
    ct = np.asarray(ct)
    g = _half_spectrum_transpose(ct, ct.shape[axes[-1]], axes[-1], norm)
    g = np.fft.ifftn(g, axes=axes[:-1], norm=norm)  # over no axes: g itself
    return real_like(_fit_to(g, np.shape(z), axes), z)


def real_if_close_jvp(dz, ans):
    """Tangent of ``np.real_if_close(z)``: real where the result is (its imaginary part was
    dropped as rounding), the tangent itself where it is not."""
    return real_like(dz, ans)
