"""What users call: the public functions and the command line, each getting its rules from a
session.

Takes a user's function and its arguments; gives derivatives: ``derive`` and the sessions
every public function gets its rules from (``sessions``), ``jvp``, ``grad``,
``value_and_grad``, ``vjp`` and ``show`` (``api``), Hessian-vector products, Hessians and
Jacobians (``higher_order``), ``linearize`` (``linearization``), the modules built on
derived rules that second derivatives differentiate (``companions``), the checks of derived
rules against the function and finite differences (``gradient_checks``), and the
``tangent-ast`` command (``cli``). ``tangent_ast.grad``, ``tangent_ast.derive``, ... are
these, imported the first time they are used.

May import: the pipeline and every layer under it. The top-level modules that users and
generated code import (``testing``, ``function_values``, ``build``, ``examples``) import
it, and so does ``fuzz``.
"""
