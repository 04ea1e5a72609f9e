"""What the SSA function's values are, and what may be done with them: questions answered
before any derivative is written.

Takes the function in SSA form, its resolved scope and the kinds of its arguments; gives a
kind for every value (``kind_inference``), which values carry derivatives (``activity``),
what an index gives by NumPy's rules (``indexing``), which names may share an array's memory
and what is done about a view of an updated array (``views``), and ``a += b`` on a shared
array written as the update it is, or refused (``shared_updates``).

May import: front, emit, rules, vocabulary, runtime. The transform, the pipeline and the API
import it.
"""
