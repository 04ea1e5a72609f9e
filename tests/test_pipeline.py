"""The pipeline's own bookkeeping: which module a rule is written to."""

import numpy as np

import tangent_ast as ta
from tangent_ast.modes import Mode
from tangent_ast.pipeline import module_name_for


def test_functions_whose_names_differ_get_modules_that_differ(tmp_path, monkeypatch):
    """``_loss`` and ``loss``, a method ``Model.loss`` and a function ``Model_loss``: each
    its own module (sharing one, each derivation overwrote the other's rules)."""
    (tmp_path / "names.py").write_text(
        "import numpy as np\n\n\n"
        "def _loss(x):\n    return np.sum(x ** 3)\n\n\n"
        "def loss(x):\n    return _loss(x) + np.sum(x)\n\n\n"
        "class Model:\n    @staticmethod\n    def loss(x):\n        return np.sum(np.sin(x))\n\n\n"
        "def Model_loss(x):\n    return np.sum(np.cos(x))\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import names

    functions = [names._loss, names.loss, names.Model.loss, names.Model_loss]
    modules = {module_name_for(f, Mode.REVERSE, ("x",), None) for f in functions}
    assert len(modules) == len(functions)
    x = np.linspace(-1.0, 1.0, 4)
    for _ in range(2):  # again: each reads its own module back
        np.testing.assert_allclose(ta.grad(names.loss)(x), 3 * x**2 + 1)
        np.testing.assert_allclose(ta.grad(names._loss)(x), 3 * x**2)
        np.testing.assert_allclose(ta.grad(names.Model.loss)(x), np.cos(x))
        np.testing.assert_allclose(ta.grad(names.Model_loss)(x), -np.sin(x))
