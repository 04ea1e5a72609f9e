"""Generated code as Jupyter shows it: highlighted by Pygments where it is installed.

:class:`SourceText` is the text ``show()`` returns: a ``str`` (print it, compare it, write
it to a file) whose ``_repr_html_`` highlights it as Python in a notebook; without
Pygments it is shown as plain preformatted text.

>>> text = SourceText("def f_jvp(x, dx):\\n    return x, dx\\n")
>>> text.startswith("def f_jvp")
True
>>> "<pre" in text._repr_html_()
True
"""


class SourceText(str):
    """Python source that a notebook shows highlighted."""

    def _repr_html_(self):
        return highlighted(self)


def highlighted(source):
    """``source`` as HTML: Pygments' Python highlighting, or escaped preformatted text."""
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer
    except ImportError:
        return f"<pre>{escaped(source)}</pre>"
    return highlight(source, PythonLexer(), HtmlFormatter(noclasses=True, nowrap=False))


def escaped(text):
    """``html.escape(text)``: html imported only for a notebook (it costs 2 ms, which a
    program loading its rules from the cache would pay for nothing)."""
    import html

    return html.escape(text)
