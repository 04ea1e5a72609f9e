"""Complex values inside a function: the rules that hold for them, the functions that are not
holomorphic, the Fourier transforms, and the refusals. Every case runs in both modes through
check_grads (finite differences and the dot-product test)."""

import numpy as np
import pytest

import tangent_ast as ta
from tangent_ast.errors import TangentAstError
from tangent_ast.testing import check_grads

rng = np.random.default_rng(17)
V = rng.standard_normal(6)
V5 = rng.standard_normal(5)
M = rng.standard_normal((4, 6))
C = rng.standard_normal(6) + 1j * rng.standard_normal(6)
Z = rng.standard_normal(4) + 1j * rng.standard_normal(4)
SQ = rng.standard_normal((3, 3)) + 3 * np.eye(3)


def phase(x):
    return np.real(np.sum(np.exp(1j * x) * C))


def modulus(x):
    return np.sum(np.abs(x * (1 + 2j) + C))


def modulus_builtin(a, b):
    return abs(a + 1j * b)


def parts(x):
    return np.sum(np.real(x * C) ** 2 + np.imag(x * C) * x)


def attributes(x):
    return np.sum((x * C).real * (x * C).imag)


def conjugates(x):
    return np.real(np.sum(np.conj(x * C) * (x + 1j)))


def angles(x):
    return np.sum(np.angle(x + 2j * x[::-1] + 0.5))


def angle_of_real(x):
    return np.sum(np.angle(x) + x)


def holomorphic_chain(x):
    z = x * (0.3 + 0.4j)
    w = np.sin(z) * np.exp(z) / (z + 2.0) + np.sqrt(z + 3.0) - np.log(z + 4.0) ** 2
    return np.sum(np.abs(w) ** 2)


def powers(x):
    return np.real(np.sum((x + 1j) ** 3 + (x + 2j) ** x))


def products(x):
    a = np.reshape(x, (2, 3)) * (1 - 1j)
    return np.abs(np.sum(a @ a.T) + np.trace(np.outer(a[0], a[1])) + np.dot(a[0], a[1]))


def shapes(x):
    z = np.concatenate([x * 1j, x[::-1]]).reshape(3, 4).T
    return np.sum(np.abs(np.cumsum(np.flip(z, 0), axis=1) + np.roll(z, 1)) ** 2)


def einsum_complex(x):
    return np.real(np.einsum("ij,jk->", np.reshape(x * 1j + 1, (2, 3)), M[:3, :2]))


def through_a_helper(x):
    return _energy(x * (2 + 1j))


def _energy(z):
    return np.sum(np.abs(z) ** 2 + np.real(z))


def complex_argument(z):
    return np.sum(np.abs(z) ** 2 + np.real(z * z))


def complex_result(x):
    return np.exp(1j * x) * x


def loop_accumulates(x):
    s = 0j
    for k in range(3):
        s = s + np.sum(x * np.exp(-1j * k * x))
    return np.abs(s)


def hand_dft(x):
    n = x.shape[0]
    k = np.arange(n)
    w = np.exp(-2j * np.pi * np.outer(k, k) / n)
    return np.sum(np.abs(w @ x) ** 2)


# --- np.fft -----------------------------------------------------------------------------
def power_spectrum(x):
    return np.sum(np.abs(np.fft.fft(x)) ** 2 * np.arange(6.0))


def fft_padded(x):
    return np.real(np.sum(np.fft.fft(x, 8) * C[:1]))


def fft_cut(x):
    return np.sum(np.abs(np.fft.fft(x, n=4, norm="ortho")))


def fft_axis(x):
    return np.sum(np.abs(np.fft.fft(x, axis=0)) ** 2 * np.arange(6.0))


def ifft_round_trip(x):
    return np.sum(np.real(np.fft.ifft(np.fft.fft(x) * C)) ** 2)


def ifft_forward_norm(x):
    return np.sum(np.abs(np.fft.ifft(x * C, norm="forward")))


def rfft_real(x):
    return np.sum(np.abs(np.fft.rfft(x)) ** 3)


def rfft_odd(x):
    return np.sum(np.imag(np.fft.rfft(x, n=7)) * np.arange(4.0))


def irfft_even(x):
    return np.sum(np.fft.irfft(np.fft.rfft(x) * C[:4]) ** 2)


def irfft_odd(x):
    return np.sum(np.fft.irfft(x * (1 + 1j), n=5, norm="ortho") * V5)


def irfft_real_input(x):
    return np.sum(np.fft.irfft(x) * np.arange(10.0))


def fft2_matrix(x):
    return np.sum(np.abs(np.fft.fft2(x)) ** 2 * M)


def ifft2_matrix(x):
    return np.real(np.sum(np.fft.ifft2(x, s=(3, 5)) * (1 + 1j)))


def fftn_axes(x):
    return np.sum(np.abs(np.fft.fftn(x, axes=(1,))) * M)


def ifftn_all(x):
    return np.sum(np.imag(np.fft.ifftn(x * 1j + x**2)) * M)


def rfft2_matrix(x):
    return np.sum(np.abs(np.fft.rfft2(x)) ** 2)


def rfftn_matrix(x):
    return np.sum(np.real(np.fft.rfftn(x, norm="ortho")) * np.arange(4.0))


def irfft2_matrix(x):
    return np.sum(np.fft.irfft2(np.fft.rfft2(x) * (1 + 0.5j)) * M)


def irfftn_shape(x):
    return np.sum(np.fft.irfftn(np.fft.rfftn(x), s=(4, 6), axes=(0, 1)) ** 2)


def shifts(x):
    return np.sum(np.abs(np.fft.fftshift(np.fft.fft(x))) * np.arange(6.0) + np.fft.ifftshift(x) * V)


def eigenvalues(a):
    return np.sum(np.abs(np.linalg.eigvals(a)) ** 2 + np.real(np.linalg.eigvals(a)))


def real_if_close_of_real(x):
    return np.sum(np.real_if_close(x) ** 2)


def real_if_close_then_powers(x):
    return np.sum(np.real_if_close(x * (1 + 1e-20j)) ** 2)


def extrema_of_complex(z):
    """NumPy orders complex values by real part, then imaginary part: max and min pick the
    entry first in that order, and its derivative is that entry's."""
    w = z * (1.0 + 2.0j) + np.array([0.0, 0.3j, -0.2, 1.0])[: np.size(z)]
    return np.real(np.max(w)) + np.abs(np.min(w)) ** 2 + np.imag(w.max())


def arccosh_of_complex(z):
    """The principal branch, of negative real parts too (1 / sqrt(z ** 2 - 1) has the wrong
    sign there)."""
    return np.real(np.sum(np.arccosh(z) + np.arccosh(-z - 2.0)))


ROT = np.array([[0.0, -1.0, 0.3], [1.0, 0.2, 0.0], [0.1, 0.0, 2.0]])  # complex eigenvalues

CASES = [
    (phase, (V,)),
    (modulus, (V,)),
    (modulus_builtin, (0.3, -0.8)),
    (parts, (V,)),
    (attributes, (V,)),
    (conjugates, (V,)),
    (angles, (V,)),
    (angle_of_real, (V + 2.0,)),
    (holomorphic_chain, (V,)),
    (powers, (np.abs(V) + 0.5,)),
    (products, (V,)),
    (shapes, (V,)),
    (einsum_complex, (V,)),
    (through_a_helper, (V,)),
    (complex_argument, (Z,)),
    (complex_result, (V,)),
    (loop_accumulates, (V,)),
    (hand_dft, (V,)),
    (power_spectrum, (V,)),
    (fft_padded, (V,)),
    (fft_cut, (V,)),
    (fft_axis, (M,)),
    (ifft_round_trip, (V,)),
    (ifft_forward_norm, (V,)),
    (rfft_real, (V,)),
    (rfft_odd, (V,)),
    (irfft_even, (V,)),
    (irfft_odd, (Z,)),
    (irfft_real_input, (V,)),
    (fft2_matrix, (M,)),
    (ifft2_matrix, (M,)),
    (fftn_axes, (M,)),
    (ifftn_all, (M,)),
    (rfft2_matrix, (M,)),
    (rfftn_matrix, (M[:, :6],)),
    (irfft2_matrix, (M,)),
    (irfftn_shape, (M,)),
    (shifts, (V,)),
    (eigenvalues, (ROT,)),
    (eigenvalues, (SQ,)),
    (real_if_close_of_real, (V,)),
    (real_if_close_then_powers, (V,)),
    (extrema_of_complex, (Z,)),
    (arccosh_of_complex, (Z,)),
]


@pytest.mark.parametrize("fn, args", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_both_modes(fn, args):
    check_grads(fn, args, modes=("forward", "reverse"))


def test_a_complex_gradient_follows_the_convention():
    """grad of a real function of complex z is dL/dRe(z) - 1j dL/dIm(z), as in JAX."""
    z = np.array([0.3 + 0.4j, -1.0 + 0.5j])
    g = ta.grad(lambda z: np.sum(np.abs(z) ** 2))(z)
    assert np.allclose(g, 2 * np.conj(z))


def test_real_inputs_get_real_gradients():
    g = ta.grad(phase)(V)
    assert g.dtype.kind == "f"
    assert np.allclose(g, np.real(1j * np.exp(1j * V) * C))


def rfft_of_complex(z):
    return np.sum(np.abs(np.fft.rfft(z * 1j)))


def maximum_complex(x):
    return np.real(np.sum(np.maximum(x * 1j, 0.5)))


def maybe_complex(x):
    return np.abs(np.sum(np.real_if_close(x * (1 + 1e-20j))))


def real_then_complex(x):
    s = 0.0
    for k in range(2):
        s = s + np.sum(x * np.exp(1j * k))
    return np.abs(s)


def angle_maybe_complex(x):
    return np.sum(np.angle(x * (1 + 1j) + np.array([0, 1j, 0, 0, 0, 0])))


def imag_maybe_complex(x):
    return np.sum(np.imag(x * (1 + 1j) + np.array([0, 1j, 0, 0, 0, 0])))


@pytest.mark.parametrize("fn", [maybe_complex, angle_maybe_complex, imag_maybe_complex])
@pytest.mark.parametrize("route", ["direct", "transpose"])
def test_a_value_that_may_be_complex_gets_the_complex_rule(fn, route):
    """np.abs, np.angle, np.imag of a value whose kind is not known (np.real_if_close's, a
    sum of complex and real arrays): their complex rules hold for real values too, the
    cotangent taken real where the value is (they were refused; in a callee derived for a
    parameter of a kind not known, the real rule ran on complex values: a wrong sign)."""
    check_grads(fn, (V,), route=route)


@pytest.mark.parametrize(
    "fn, match",
    [
        (rfft_of_complex, "rules of numpy.fft.rfft are for real values"),
        (maximum_complex, "rules of numpy.maximum are for real values"),
        (real_then_complex, "'s' is real on one path and complex on another"),
    ],
)
def test_refused_with_a_hint(fn, match):
    args = (V,)
    with pytest.raises(TangentAstError, match=match) as refusal:
        ta.grad(fn)(*args)
    assert "hint:" in str(refusal.value)


# --- every rule that says it holds for complex values, on complex values -------------------
def _complex_variants():
    """The cases of the rule table whose primitive holds for complex values, each as a
    function of the same real arguments that makes its float arrays complex first."""
    from tangent_ast.rules.registry import all_primitives

    from . import test_numpy_rules as table

    marked = {p.name for p in all_primitives() if p.holds_for_complex}
    return [tuple(c.values) for c in table.RULE_TEST_CASES if c.values[2] in marked and not c.marks]


COMPLEX_VARIANTS = _complex_variants()


def _write_variant(fn, args, directory):
    """A module (a file, imported) with ``variant(*args)``: ``fn`` on the arguments made
    complex, reduced to a real number through ``real(r * conj(r))``."""
    made = ", ".join(
        f"a{j} * (1.0 + 0.7j)"
        if isinstance(a, (float, np.ndarray)) and np.asarray(a).dtype.kind == "f"
        else f"a{j}"
        for j, a in enumerate(args)
    )
    params = ", ".join(f"a{j}" for j in range(len(args)))
    name = f"complex_variant_{fn.__name__}_{abs(hash(made)) % 10**8}"
    (directory / f"{name}.py").write_text(
        "import numpy as np\n"
        f"from tests.rules.test_numpy_rules import {fn.__name__}\n\n\n"
        f"def variant({params}):\n"
        f"    r = {fn.__name__}({made})\n"
        "    return np.sum(np.real(r * np.conj(r)))\n"
    )
    return name


@pytest.mark.parametrize(
    "fn, args, name", COMPLEX_VARIANTS, ids=[c[0].__name__ for c in COMPLEX_VARIANTS]
)
def test_rules_that_hold_for_complex_values_do(fn, args, name, tmp_path, monkeypatch):
    import importlib
    import warnings

    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(_write_variant(fn, args, tmp_path))
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)  # a dropped imaginary part
        if name not in _FIXED_UP_TO_A_PHASE:
            check_grads(module.variant, args, modes=("forward", "reverse"))
            return
        # complex eigenvectors and singular vectors are fixed only up to a phase: forward
        # mode refuses them, reverse mode is right where the result does not depend on the
        # phases and refuses where it does (these functions, written for real values, mostly
        # do); the values alone (svd(x, compute_uv=False)) are right in both
        for mode, refusal in (("forward", "forward mode cannot tell"), ("reverse", "depends on")):
            try:
                check_grads(module.variant, args, modes=(mode,))
            except TangentAstError as error:
                assert refusal in str(error) and "phases" in str(error)


_FIXED_UP_TO_A_PHASE = {"numpy.linalg.eigh", "numpy.linalg.svd"}


def test_the_complex_table_covers_the_marked_rules():
    assert len(COMPLEX_VARIANTS) >= 90
