"""The vocabulary every layer shares: the words the stages speak to each other.

Gives what a value is (``kinds``: the kinds of values and signatures), the syntax trees the
stages build, copy, walk and print (``trees``, ``syntax``, ``stdlib_ast``, ``source``), the
names generated code uses (``naming``), the calling convention of derived rules
(``calling``), tangent_ast's own API known by the identity of its objects (``api_roles``),
and the key that names code in every process and tells a library's from the program's
(``code_keys``). Takes nothing from the layers above.

May import: the runtime, ``tangent_ast.derived`` (the package derived modules are imported
under) and the top-level ``errors``, ``modes`` and ``version``, which belong to this layer.
Every layer above may import it.
"""
