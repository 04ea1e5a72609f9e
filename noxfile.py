"""The test suite on the lowest and the highest Python the package supports, the lowest
with the lowest NumPy it declares (``bash .ci/run`` runs both; ``nox`` alone too). The
highest derives every reverse rule by the transpose route (``TANGENT_AST_ROUTE``), so the
whole suite runs through both routes in CI (the README's run and ``lowest``: direct), and
verifies each derived rule on its first call (``TANGENT_AST_VERIFY``: the forward and reverse
rules against each other and the function), so the whole suite runs once with it on.

An interpreter that is not on the machine is skipped with a message, not installed.
"""

import nox

LOWEST_NUMPY = "2.1.0"  # setup.cfg: numpy>=2.1
# Run once, in the main environment: the style checks (ruff, mypy), and the tests of the
# tools around the package rather than of the versions (the notebooks' Jupyter kernel, a
# setuptools build of a wheel, Numba compiling rules), which are the slowest and would triple
# CI's time on 2 cores.
ONCE = (
    "tests/test_style.py",
    "tests/test_notebooks.py",
    "tests/test_build.py",
    "tests/api/test_numba_backend.py",
)
PYTEST = ("pytest", "-q", "-p", "no:cacheprovider", *(f"--deselect={t}" for t in ONCE))

nox.options.error_on_missing_interpreters = False


# Checks of whole programs whose outcome does not depend on the versions: the main run has
# them, ``lowest``, the longest session, leaves them out for CI's time. The fuzzed programs
# are each checked by both routes and against differences whatever the route and the
# verification are set to: ``highest`` leaves them out too.
FUZZ = "tests/fuzz/test_fuzz.py"
PROGRAM_CHECKS = ("tests/api/test_higher_order.py::test_the_rule_table_at_second_order", FUZZ)


@nox.session(python="3.10")
def lowest(session):
    """Python 3.10 with NumPy at its declared minimum."""
    session.install("-e", ".[test]", f"numpy=={LOWEST_NUMPY}")
    session.run(*PYTEST, *(f"--deselect={t}" for t in PROGRAM_CHECKS), *session.posargs)


@nox.session(python="3.13")
def highest(session):
    """Python 3.13 with the newest NumPy, reverse rules by the transpose route, each rule
    verified on its first call."""
    session.install("-e", ".[test]")
    env = {"TANGENT_AST_ROUTE": "transpose", "TANGENT_AST_VERIFY": "1"}
    session.run(*PYTEST, f"--deselect={FUZZ}", *session.posargs, env=env)
