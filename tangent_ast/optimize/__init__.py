"""Generated code made to read as if written by hand, and to run fast: rewrites of a finished
function that keep what it computes.

Takes a generated ``FunctionDef`` (a forward rule, a sweep of a reverse rule) and the names
it may rewrite; gives the same function simplified (``simplify``: constants folded by
``folding``, copies propagated, single-use temporaries inlined, dead code gone, with
``block_index`` answering which statement reads what and ``line_lengths`` weighing a line
before it grows), its sums of (co)tangent terms shaped (``terms``), and int literals that
meet floats written as floats (``float_literals``).

May import: emit, rules, vocabulary, runtime. The transform imports it (the reverse stage
weighs the lines it writes), and so do the pipeline and the API.
"""
