"""Derived rules on disk: written to the cache directory, found there again, imported, and
checked for what they were derived against.

Takes generated module text and what a rule was derived from (a function, mode, ``wrt``,
signature, call form); gives the module written atomically and imported (``load``), the rule
of a module on disk when it is still current, without deriving anything (``cached``), and
what a rule was derived against with the cheap check that it still is (``live``: the sources
read, the functions reached, the values looked up).

May import: front (a lambda's source is read as the parse stage reads it), emit, rules,
vocabulary, ``tangent_ast.derived``, runtime. A rule found on disk needs nothing else: the
pipeline and the API import it, no stage does.
"""
