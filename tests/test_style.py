"""The package's habits, checked like any other property: ruff (lint and format) and mypy.

Both tools come with the test extra (``pip install -e ".[test]"``); their settings are in
ruff.toml and setup.cfg.
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(*arguments):
    result = subprocess.run([sys.executable, "-m", *arguments], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_lint():
    _run("ruff", "check", "tangent_ast")


def test_ruff_format():
    _run("ruff", "format", "--check", "tangent_ast")


def test_mypy():
    _run("mypy")
