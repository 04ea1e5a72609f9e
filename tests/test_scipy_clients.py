"""SciPy's solvers as the clients of derived derivatives: SciPy itself, not mocked."""

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import minimize, rosen, rosen_der, rosen_hess_prod

import tangent_ast as ta


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def test_trust_ncg_with_grad_and_hvp_converges_like_the_analytic_derivatives():
    x0 = np.array([1.3, 0.7, 0.8, 1.9, 1.2])  # SciPy's own example
    derived = minimize(
        rosenbrock, x0, method="trust-ncg", jac=ta.grad(rosenbrock), hessp=ta.hvp(rosenbrock)
    )
    analytic = minimize(rosen, x0, method="trust-ncg", jac=rosen_der, hessp=rosen_hess_prod)
    assert derived.success and analytic.success
    np.testing.assert_allclose(derived.x, np.ones(5), atol=1e-4)
    np.testing.assert_allclose(derived.x, analytic.x, rtol=1e-8)
    assert derived.nit == analytic.nit
    assert derived.njev == analytic.njev and derived.nhev == analytic.nhev


def robertson(t, y):
    """Robertson's chemical kinetics: a stiff system."""
    a, b, c = y
    return np.array(
        [-0.04 * a + 1e4 * b * c, 0.04 * a - 1e4 * b * c - 3e7 * b**2, 3e7 * b**2]
    )


def robertson_jacobian(t, y):
    a, b, c = y
    return np.array(
        [
            [-0.04, 1e4 * c, 1e4 * b],
            [0.04, -1e4 * c - 6e7 * b, -1e4 * b],
            [0.0, 6e7 * b, 0.0],
        ]
    )


def test_bdf_with_jacfwd_takes_the_steps_of_the_analytic_jacobian():
    y0 = np.array([1.0, 0.0, 0.0])
    derived = solve_ivp(
        robertson, (0.0, 40.0), y0, method="BDF", jac=ta.jacfwd(robertson, wrt=1), rtol=1e-6
    )
    analytic = solve_ivp(
        robertson, (0.0, 40.0), y0, method="BDF", jac=robertson_jacobian, rtol=1e-6
    )
    assert derived.success and analytic.success
    assert derived.t.size == analytic.t.size and derived.njev == analytic.njev
    np.testing.assert_allclose(derived.y[:, -1], analytic.y[:, -1], rtol=1e-9)
