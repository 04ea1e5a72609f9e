"""The program as the user wrote it, read: a function object becomes a function in a small
core language, in SSA form, each free name resolved to the object it denotes.

Takes a Python function; gives its gast tree with file and line (``parse``), the constructs
no stage handles refused (``checks``), the objects its free names denote (``resolve``), the
calls of helpers that update an argument inlined (``helper_inlining``), the arrays and lists
updated in place checked for other names holding them (``aliasing``), the nested functions
that can be inlined (``local_functions``), one operation per statement (``lowering/``) and
each name assigned once per path (``ssa``).

May import: emit (it prints what it lowers), rules, vocabulary, runtime. Analysis,
transform, the cache, the pipeline and the API import it.
"""
