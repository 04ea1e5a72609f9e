"""Generated code as text: what the stages' trees become, how it is shown and written.

Takes gast ``FunctionDef`` trees and the namespace of what they read; gives the text of a
Python module, with its header and explicit imports (``emit``), that text highlighted in a
notebook (``display``), a package of generated modules written all at once
(``package``), and signatures as the command line writes them (``signature_text``).

May import: rules, vocabulary, runtime. The stages print code too (to weigh a line's
length, to show a stage), so front, optimize and transform import it, as do the cache, the
pipeline and the API.
"""
