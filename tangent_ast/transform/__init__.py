"""Derivatives written: the SSA function, its kinds and its activity become a forward rule or
the two sweeps of a reverse rule.

Takes what front and analysis give; gives ``f_jvp`` (``forward``) or ``f_fwd`` and ``f_bwd``
(``reverse``, each adjoint from a rule, or on the transpose route from the forward rule:
``unzip`` and ``transpose``), each operation's derivative written by ``derivatives`` (with
``complex_values``, what complex values ask of it); then, on the simplified sweeps, what the
reverse sweep reads saved on tapes (``tapes``), checkpointed loops (``checkpoints``), the
residuals handed over (``residuals``) or computed again (``recompute``), and cotangents of
slices added into one buffer (``accumulate``). ``composed`` writes functions made of derived
rules (a gradient as one function) out of their modules' text.

May import: analysis, front, optimize, emit, rules, vocabulary, runtime. The pipeline and
the API import it.
"""
