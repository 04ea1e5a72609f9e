"""Discrete Fourier transforms (``np.fft``): linear, so each forward rule is the transform of
the tangent, and each reverse rule its transpose (``runtime/fourier.py``).

``fft``, ``ifft`` and their n-dimensional forms are complex-linear: their rules hold for complex
input. ``rfft`` and its forms take real input only (NumPy drops an imaginary part); ``irfft``
takes the half spectrum, complex or real.
"""

from typing import Any

import numpy as np

from ... import runtime
from ...vocabulary.kinds import UNKNOWN, Kind, Tag
from ..registry import def_linear, defvjp, handles, holds_for_complex, primitive

_fn: Any  # the loop variable of the tables below: functions of many types


def _transform_kind(dtype):
    """The kind of a transform's result: an array of the input's rank, of dtype ``dtype``
    (``n``, ``axis``, ``norm`` change neither)."""

    def kind(x, *rest, **keywords):
        if x.tag is Tag.ARRAY and x.ndim:
            return Kind(Tag.ARRAY, x.ndim, dtype)
        return UNKNOWN

    return kind


ONE_AXIS = (np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.irfft)
SEVERAL_AXES = (np.fft.fft2, np.fft.ifft2, np.fft.fftn, np.fft.ifftn)
REAL_INPUT = (np.fft.rfft2, np.fft.rfftn)
HALF_SPECTRUM = (np.fft.irfft2, np.fft.irfftn)

def_linear(*ONE_AXIS, *SEVERAL_AXES, *REAL_INPUT, *HALF_SPECTRUM)
handles(list(ONE_AXIS), "n", "axis", "norm")
handles(list(SEVERAL_AXES + REAL_INPUT + HALF_SPECTRUM), "s", "axes", "norm")
holds_for_complex(*SEVERAL_AXES, np.fft.fft, np.fft.ifft, np.fft.irfft, *HALF_SPECTRUM)
for _fn in (np.fft.fft, np.fft.ifft, np.fft.rfft, *SEVERAL_AXES, *REAL_INPUT):
    primitive(_fn).kind = _transform_kind("c")
for _fn in (np.fft.irfft, *HALF_SPECTRUM):
    primitive(_fn).kind = _transform_kind("f")

defvjp(np.fft.fft, lambda ct, ans, x, *args, **kw: runtime.fft_vjp(ct, x, *args, **kw))

defvjp(np.fft.ifft, lambda ct, ans, x, *args, **kw: runtime.ifft_vjp(ct, x, *args, **kw))

defvjp(np.fft.rfft, lambda ct, ans, x, *args, **kw: runtime.rfft_vjp(ct, x, *args, **kw))

defvjp(np.fft.irfft, lambda ct, ans, z, *args, **kw: runtime.irfft_vjp(ct, z, *args, **kw))

defvjp(
    np.fft.fft2,
    lambda ct, ans, x, s=None, axes=(-2, -1), norm=None: runtime.fftn_vjp(ct, x, s, axes, norm),
)

defvjp(
    np.fft.ifft2,
    lambda ct, ans, x, s=None, axes=(-2, -1), norm=None: runtime.ifftn_vjp(ct, x, s, axes, norm),
)

defvjp(np.fft.fftn, lambda ct, ans, x, *args, **kw: runtime.fftn_vjp(ct, x, *args, **kw))

defvjp(np.fft.ifftn, lambda ct, ans, x, *args, **kw: runtime.ifftn_vjp(ct, x, *args, **kw))

defvjp(
    np.fft.rfft2,
    lambda ct, ans, x, s=None, axes=(-2, -1), norm=None: runtime.rfftn_vjp(ct, x, s, axes, norm),
)

defvjp(np.fft.rfftn, lambda ct, ans, x, *args, **kw: runtime.rfftn_vjp(ct, x, *args, **kw))

defvjp(
    np.fft.irfft2,
    lambda ct, ans, z, s=None, axes=(-2, -1), norm=None: runtime.irfftn_vjp(ct, z, s, axes, norm),
)

defvjp(np.fft.irfftn, lambda ct, ans, z, *args, **kw: runtime.irfftn_vjp(ct, z, *args, **kw))

# fftshift and ifftshift move the zero frequency to the middle and back: permutations, each
# the other's transpose.
def_linear(np.fft.fftshift, np.fft.ifftshift)
handles([np.fft.fftshift, np.fft.ifftshift], "axes")
holds_for_complex(np.fft.fftshift, np.fft.ifftshift)

defvjp(np.fft.fftshift, lambda ct, ans, x, axes=None: np.fft.ifftshift(ct, axes))

defvjp(np.fft.ifftshift, lambda ct, ans, x, axes=None: np.fft.fftshift(ct, axes))
