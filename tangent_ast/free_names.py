"""The free names a function reads, from its source parsed by the standard library.

Takes a Python function; guarantees the tree of its source (as :func:`tangent_ast.parse.parse`
reads it: the dedented ``def`` of its code object, decorators dropped) and the names it
reads that it does not assign, with the attribute chains read from them, exactly as a walk
of its gast tree finds them (``resolve.assigned_names``; a gast tree writes each parameter
and ``except ... as e`` as a ``Name``, which is why they are added here by hand). It
imports no gast: what a rule was derived against (:mod:`tangent_ast.live`) and what its
loader binds (:mod:`tangent_ast.load`) are checked without the transformer. A function's
block and free reads are remembered in the rule cache's ``__pycache__``, keyed by a hash of
its file's text (:func:`remember_in`): a cache hit in a new process neither tokenizes nor
parses a source it has read before.

>>> SCALE = 2.0
>>> def f(x):
...     y = SCALE * x
...     return np.sin(y)
>>> sorted(free_reads(function_tree(f)))
[('SCALE', ()), ('np', ()), ('np', ('sin',))]
"""

import ast
import contextlib
import inspect
import linecache
import os
import textwrap

from .errors import NoSourceError, UnsupportedSyntaxError
from .naming import digest


class _Source:
    """What a check reads of one function's source, computed once per text of its file.

    ``block``: its lines (``inspect.getblock``), ``start``: the number of its first line,
    ``reads``: its :func:`free_reads` once known."""

    __slots__ = ("block", "key", "lines", "reads", "start")

    def __init__(self, lines, block, start, key, reads=None):
        self.lines, self.block, self.start, self.key, self.reads = lines, block, start, key, reads


# code object -> _Source: a check reads a function's source several times (its hash, what
# it reads, what its loader binds); linecache gives the same list until the file changes
_SOURCES: dict = {}
# Where the block and free reads of a function's source are remembered across processes
# (set by the rule cache: its directory's __pycache__), and what was read from there:
# finding the block tokenizes the function and its reads parse and walk it, some 0.2 s for
# 500 statements, where a cache hit is otherwise milliseconds.
_MEMO_DIRECTORY: list = []
_MEMO: dict = {}  # file text hash -> {first line: (block length, reads)}


def remember_in(directory):
    """Keep the blocks and free reads of the sources read from now on in ``directory``
    (the rule cache's ``__pycache__``): a later process reads them from there instead of
    parsing the source again. They are keyed by a hash of the whole text of the function's
    file and the function's first line, of which the block and reads are a function."""
    _MEMO_DIRECTORY[:] = [os.path.join(directory, "__pycache__", "tangent_ast-sources")]


def _source(fn):
    lines, start = _find_source(fn)  # a function's lines are its code's
    known = _SOURCES.get(fn.__code__)
    if known is not None and known.lines is lines:
        return known
    text_key = digest("".join(lines), 32)
    remembered = _memo_of(text_key).get(start)
    if remembered is not None:
        length, reads = remembered
        block = lines[start : start + length]
    else:
        block, reads = inspect.getblock(lines[start:]), None
    known = _SOURCES[fn.__code__] = _Source(lines, block, start + 1, (text_key, start), reads)
    return known


def _find_source(fn):
    """``inspect.findsource(fn)``: the lines of ``fn``'s file (linecache's list) and the index
    of its first line. From the first line of its code, findsource searches back for a line
    starting a ``def`` or a decorator with a pattern it compiles (some 0.15 ms, once per
    process); where that line is one, the search ends there at once, and it is taken here
    without the pattern. Anything else is left to findsource."""
    file = inspect.getsourcefile(fn) if inspect.isfunction(fn) else None
    if file:  # what findsource reads, as it reads it
        linecache.checkcache(file)
        module = inspect.getmodule(fn, file)
        lines = linecache.getlines(file, module.__dict__ if module else None)
        start = fn.__code__.co_firstlineno - 1
        if 0 <= start < len(lines):
            head = lines[start].lstrip()  # findsource's \s: what str.isspace accepts
            if head.startswith("@") or (head.startswith("def") and head[3:4].isspace()):
                return lines, start
    return inspect.findsource(fn)


def _memo_of(text_key):
    """The blocks and reads remembered for the file text of hash ``text_key``."""
    known = _MEMO.get(text_key)
    if known is None:
        known = _MEMO[text_key] = {}
        if _MEMO_DIRECTORY:
            try:
                with open(os.path.join(_MEMO_DIRECTORY[0], text_key)) as file:
                    entries = file.read().splitlines()
            except (OSError, UnicodeDecodeError):
                entries = []
            for entry in entries:
                parsed = _parse_entry(entry)
                if parsed is not None:
                    known[parsed[0]] = parsed[1:]
    return known


def _parse_entry(entry):
    """``(start, length, reads)`` from a line ``start length count name name.attr ... .``,
    or None for a line that is not whole (the count and the final dot tell)."""
    words = entry.split(" ")
    if len(words) < 4 or words[-1] != "." or not all(w.isdigit() for w in words[:3]):
        return None
    start, length, count = map(int, words[:3])
    names = words[3:-1]
    if count != len(names) or not all(
        n and all(p.isidentifier() for p in n.split(".")) for n in names
    ):
        return None
    reads = [(n.split(".")[0], tuple(n.split(".")[1:])) for n in names]
    return start, length, reads


def _remember(source):
    """Record ``source``'s block length and reads for later processes (best effort: a cache
    directory that cannot be written only costs them the parse)."""
    text_key, start = source.key
    memo = _memo_of(text_key)
    memo[start] = (len(source.block), source.reads)
    if not _MEMO_DIRECTORY:
        return
    lines = []
    for first, (length, reads) in sorted(memo.items()):
        names = [".".join((name, *chain)) for name, chain in reads]
        lines.append(" ".join(map(str, (first, length, len(names), *names, "."))))
    directory = _MEMO_DIRECTORY[0]
    target = os.path.join(directory, text_key)
    # written whole under a name of its own, then renamed: a reader sees a whole file
    tmp = os.path.join(directory, f".{text_key}.{os.getpid()}.{id(source)}.tmp")
    try:
        os.makedirs(directory, exist_ok=True)
        new = not os.path.exists(target)
        with open(tmp, "w") as file:
            file.write("\n".join(lines) + "\n")
        os.replace(tmp, target)
        if new:
            _prune(directory)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


# Every edit of a source file makes a memo file of its own (a notebook: every run of a
# cell): past this many, the least recently written half is removed.
MEMO_FILES_KEPT = 1000


def _prune(directory):
    with os.scandir(directory) as entries:
        files = [e for e in entries if not e.name.startswith(".")]
    if len(files) > MEMO_FILES_KEPT:
        files.sort(key=lambda e: e.stat().st_mtime_ns)
        for entry in files[: len(files) - MEMO_FILES_KEPT // 2]:
            with contextlib.suppress(OSError):
                os.unlink(entry.path)


def source_lines(fn):
    """``inspect.getsourcelines(fn.__code__)`` (the code's own source, not a wrapped
    function's), its file's module found from ``fn.__module__``: for a code object, inspect
    finds it by resolving the path of every module loaded, milliseconds on first use."""
    source = _source(fn)
    return list(source.block), source.start


def source_text(fn):
    """``inspect.getsource(fn.__code__)``, as :func:`source_lines` finds it."""
    return "".join(_source(fn).block)


def free_reads_of(fn):
    """``free_reads(function_tree(fn))``, remembered: from the source's memo when its file's
    text is unchanged (:func:`remember_in`), else parsed once per process."""
    fn = getattr(fn, "__func__", fn)
    if not inspect.isfunction(fn) or fn.__name__ == "<lambda>":
        return free_reads(function_tree(fn))
    try:
        source = _source(fn)
    except (OSError, TypeError) as exc:
        raise NoSourceError(f"cannot read the source of {fn.__qualname__}") from exc
    if source.reads is None:
        source.reads = free_reads(function_tree(fn))
        _remember(source)
    return list(source.reads)


def function_tree(fn):
    """The ``ast.FunctionDef`` of ``fn``'s source, as ``parse`` reads it (a lambda: the def
    it stands for); raises what ``parse`` raises for a function without readable source."""
    fn = getattr(fn, "__func__", fn)
    if not inspect.isfunction(fn) or fn.__name__ == "<lambda>":
        # a lambda is singled out among those of its line by the parse stage (gast): rare
        # enough in a program's functions to cost the import of the transformer
        import gast

        from .parse import parse

        return gast.gast_to_ast(parse(fn).node)
    try:
        lines = _source(fn).block
    except (OSError, TypeError) as exc:
        raise NoSourceError(f"cannot read the source of {fn.__qualname__}") from exc
    try:
        module = ast.parse(textwrap.dedent("".join(lines)))
    except SyntaxError as exc:
        raise NoSourceError(f"the source of {fn.__qualname__} does not parse on its own") from exc
    node = module.body[0]
    if not isinstance(node, ast.FunctionDef):
        raise UnsupportedSyntaxError(f"{fn.__qualname__} is not a plain def")
    node.decorator_list = []
    return node


def _parameters(args):
    return [a.arg for a in args.args + args.kwonlyargs + args.posonlyargs]


def assigned_names(node):
    """The names ``node`` (a function) assigns: ``resolve.assigned_names`` of its gast tree."""
    from .trees import walk  # a source is walked when it is read the first time only

    names = set(_parameters(node.args))
    for extra in (node.args.vararg, node.args.kwarg):
        if extra is not None:
            names.add(extra.arg)
    for n in walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            names.add(n.id)
        elif isinstance(n, ast.ExceptHandler) and n.name is not None:
            names.add(n.name)  # a Name in gast
        elif n is not node and isinstance(n, (ast.FunctionDef, ast.Lambda)):
            # a local function (inlined by normalize): its name and parameters are local
            names |= {a.arg for a in n.args.args}
            if isinstance(n, ast.FunctionDef):
                names.add(n.name)
    return names


def free_reads(node):
    """``(name, attribute chain)`` of every free name a function reads: ``mod.g`` ->
    ``("mod", ("g",))``, and ``("mod", ())`` for the name itself."""
    from .trees import walk  # a source is walked when it is read the first time only

    local = assigned_names(node)
    found = {}
    for n in walk(node):
        if isinstance(n, ast.Attribute):
            chain, base = [], n
            while isinstance(base, ast.Attribute):
                chain.append(base.attr)
                base = base.value
            if isinstance(base, ast.Name) and base.id not in local:
                chain.reverse()
                found[(base.id, tuple(chain))] = None
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in local:
            found.setdefault((n.id, ()), None)
    return list(found)
