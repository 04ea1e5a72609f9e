"""The test suite on the lowest and the highest Python the package supports, the lowest
with the lowest NumPy it declares (``bash .ci/run`` runs both; ``nox`` alone too).

An interpreter that is not on the machine is skipped with a message, not installed.
"""

import nox

LOWEST_NUMPY = "2.1.0"  # setup.cfg: numpy>=2.1
# style checks (ruff, mypy) run once, in the main environment
PYTEST = ("pytest", "-q", "-p", "no:cacheprovider", "--deselect", "tests/test_style.py")

nox.options.error_on_missing_interpreters = False


@nox.session(python="3.10")
def lowest(session):
    """Python 3.10 with NumPy at its declared minimum."""
    session.install("-e", ".[test]", f"numpy=={LOWEST_NUMPY}")
    session.run(*PYTEST, *session.posargs)


@nox.session(python="3.13")
def highest(session):
    """Python 3.13 with the newest NumPy."""
    session.install("-e", ".[test]")
    session.run(*PYTEST, *session.posargs)
