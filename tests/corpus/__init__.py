"""The shared corpus: small functions, each with the arguments to check it at.

Every entry is ``Case(function, args, wrt)``; one generic checker
(``tests/test_corpus.py``) runs them all through ``check_grads`` in both modes.
"""
