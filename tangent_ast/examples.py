"""Bundled examples; ``python -m tangent_ast.examples`` derives and prints their rules."""

import numpy as np

import tangent_ast as ta


def rosenbrock(x):
    """The Rosenbrock function of a vector."""
    head = x[:-1]
    tail = x[1:]
    return np.sum(100.0 * (tail - head**2) ** 2 + (1.0 - head) ** 2)


def design_example(x, y):
    z = x * y
    return z + np.sin(x)


def logistic_loss(w, X, y):
    """Mean negative log-likelihood of logistic regression."""
    z = X @ w
    p = 1.0 / (1.0 + np.exp(-z))
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def main():
    rule = ta.derive(design_example, mode="reverse", wrt=("x", "y"), args=(1.0, 2.0))
    print(f"# {rule.path}\n")
    print(rule.source)
    value, gradient = ta.value_and_grad(design_example, wrt=("x", "y"))(1.0, 2.0)
    print(
        f"design_example(1.0, 2.0) = {value:.6f}; gradient = ({gradient[0]:.6f}, "
        f"{gradient[1]:.6f})\n"
    )
    x = np.array([1.2, 0.8, -0.5])
    print(ta.derive(rosenbrock, mode="reverse", args=(x,)).source)
    print(f"grad rosenbrock({x.tolist()}) = {ta.grad(rosenbrock)(x)}")


if __name__ == "__main__":
    main()
