"""A program fuzzer: random programs over the language tangent_ast supports, each checked
in every mode, so that wrong derivatives are found by construction rather than by example.

* :mod:`~tangent_ast.fuzz.generate` writes a random program from a seed (the same seed
  gives the same program, byte for byte);
* :mod:`~tangent_ast.fuzz.check` runs it through ``grad``, ``value_and_grad``, ``vjp``
  (the pullback called twice), ``jvp`` and :func:`tangent_ast.testing.check_grads`
  (finite differences at several steps, the dot-product test, argument state), and
  classifies the outcome as an :class:`~tangent_ast.fuzz.check.Outcome`;
* :mod:`~tangent_ast.fuzz.shrink` reduces a failing program to a small one that fails
  the same way.

Run ``python -m tangent_ast.fuzz --count 200 --seed 1`` (or ``--minutes 5``).
"""

from .check import Outcome, Result, check_program
from .generate import Program, generate
from .shrink import shrink

__all__ = ["Outcome", "Program", "Result", "check_program", "generate", "shrink"]
