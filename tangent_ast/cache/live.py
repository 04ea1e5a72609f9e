"""What a derived rule was derived against, and the cheap check that it still is.

A rule is derived from the program as it is at that moment: the function's
code, the functions it calls (and theirs, transitively), and the module-level
values and closure cells they read. In a notebook or after ``importlib.reload``
any of these can be rebound while the rule object lives on. So a rule keeps the
identity of every object its derivation looked up, and each call checks that
looking them up again gives the same objects; if not, the rule is derived (or
reloaded) again.

    def g(x): return SCALE * x          Dependencies of f's rule:
    def f(x): return g(x) * 3.0     ->    f.__code__, f.__defaults__, ...
                                          f.__globals__['g'] is <g>, g.__code__, ...
                                          g.__globals__['SCALE'] is <2.0>

The same walk gives what a module on disk records in its header (``depends``:
the source and data kinds of every function reached; ``reads``: the kinds of
the values the function itself reads), so a module derived against an older
callee or a value of another kind is not reused by a later process either.

>>> SCALE = 2.0
>>> def g(x):
...     return SCALE * x
>>> def f(x):
...     return g(x) * 3.0
>>> dependencies = dependencies_of(f)
>>> dependencies.current()
True
>>> def g(x):  # redefined, as in a notebook
...     return SCALE * x * x
>>> dependencies.current()
False

Libraries (NumPy, SciPy, the standard library, tangent_ast) are not reloaded in
a session: attribute chains into them (``np.linalg.norm``) are not checked on
each call, which keeps the check to a few dictionary lookups.

What a function reads is found in its source, parsed by the standard library's ``ast``:
the tree of its source (as :func:`tangent_ast.front.parse.parse` reads it: the dedented ``def``
of its code object, decorators dropped) and the names it reads that it does not assign,
with the attribute chains read from them, exactly as a walk of its gast tree finds them
(``resolve.assigned_names``; a gast tree writes each parameter and ``except ... as e`` as a
``Name``, which is why they are added here by hand). It imports no gast: what a rule was
derived against and what its loader binds (:mod:`tangent_ast.cache.load`) are checked without
the transformer. A function's block and free reads are remembered in the rule cache's
``__pycache__``, keyed by a hash of its file's text (:func:`remember_in`): a cache hit in a
new process neither tokenizes nor parses a source it has read before.

>>> SCALE = 2.0
>>> def f(x):
...     y = SCALE * x
...     return np.sin(y)
>>> sorted(free_reads(function_tree(f)))
[('SCALE', ()), ('np', ()), ('np', ('sin',))]
"""

import ast
import builtins
import contextlib
import inspect
import linecache
import os
import sys
import textwrap
import types

from ..derived import portable_name
from ..errors import NoSourceError, TangentAstError, UnsupportedSyntaxError
from ..modes import Mode
from ..vocabulary.code_keys import code_key, is_data, is_library
from ..vocabulary.kinds import kind_of
from ..vocabulary.naming import digest


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

        from ..front.parse import parse

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
    from ..vocabulary.trees import walk  # a source is walked when it is read the first time only

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
    from ..vocabulary.trees import walk  # a source is walked when it is read the first time only

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


_MISSING = object()
# The attributes Dependencies records that every owner of them has.
_ALWAYS_THERE = frozenset(("__code__", "__defaults__", "__kwdefaults__", "cell_contents"))


class Dependencies:
    """The objects a rule was derived against; :attr:`current` says whether they still are."""

    __slots__ = ("_current", "_identity", "attributes", "calls", "functions", "in_dicts", "reads")

    def __init__(self, in_dicts, attributes, functions, reads, calls=None):
        self.in_dicts = tuple(in_dicts)  # (mapping, key, object): globals, module and class dicts
        # (owner, attribute, object): __code__, __defaults__, cells
        self.attributes = tuple(attributes)
        self.functions = tuple(functions)  # user functions reached, the rule's own first
        self.reads = reads  # {function: {name: value}}: data values each reads
        # {function: {name: key}}: the code each reads by a name that does not say which
        # (a cell, an alias, a global rebound), by its code_keys.code_key
        self.calls = calls if calls is not None else {}
        # both made from the lookups above when first asked for: a rule found on disk in a
        # new process is not checked again before it is used
        self._identity = self._current = None

    @property
    def identity(self):
        """``(names, expression)``: the lookups :attr:`current` makes, as an expression of
        ``names``, for a caller to fold into a test of its own (grad's wrapper:
        ``api.same_kinds``)."""
        if self._identity is None:
            self._identity = identity_expression(self.in_dicts, self.attributes)
        return self._identity

    @property
    def current(self):
        """A function of no arguments: True if every lookup the derivation made still gives
        the same object (compiling it costs some 0.2 ms)."""
        if self._current is None:
            self._current = _identity_check(*self.identity)
        return self._current

    def depends_field(self):
        """The header's ``depends``: ``module:qualname=fingerprint`` of every other function
        reached."""
        entries = sorted(
            {
                f"{portable_name(fn.__module__)}:{fn.__qualname__}={self.fingerprint(fn)}"
                for fn in self.functions[1:]
            }
        )
        return " ".join(entries) if entries else "-"

    def reads_field(self):
        """The header's ``reads``: ``name=kind`` of the data values the function itself reads, or
        None."""
        own = self.reads.get(self.functions[0], {}) if self.functions else {}
        return " ".join(f"{n}={_kind(v)}" for n, v in sorted(own.items())) or None

    def calls_field(self):
        """The header's ``calls``: ``name=key`` of the code the function itself reads by a
        name that does not say which (:func:`code_reads`), or None."""
        own = self.calls.get(self.functions[0], {}) if self.functions else {}
        return " ".join(f"{n}={k}" for n, k in sorted(own.items())) or None

    def fingerprint(self, fn):
        """A hash of ``fn``'s source, the kinds of the data values and the keys of the code
        it reads."""
        text = _dedented_source(fn) or repr(fn.__code__.co_code)
        text += "".join(f"\n{n}={_kind(v)}" for n, v in sorted(self.reads.get(fn, {}).items()))
        text += "".join(f"\n{n}:{k}" for n, k in sorted(self.calls.get(fn, {}).items()))
        return digest(text)


def identity_expression(in_dicts, attributes):
    """``(names, text)``: an expression, of the globals ``names`` (named ``_MISSING``,
    ``m0``, ``k0``, ``o0``, ``w0``, ``v0``, ``a0``, ...), True if each ``mapping.get(key)``
    of ``in_dicts`` and each ``owner.attribute`` of ``attributes`` is still its object (a
    missing key: still missing). It raises ValueError for a closure cell emptied since."""
    names = {"_MISSING": _MISSING}
    terms = []
    for i, (mapping, key, obj) in enumerate(in_dicts):
        names[f"m{i}"], names[f"k{i}"], names[f"o{i}"] = mapping, key, obj
        terms.append(f"m{i}.get(k{i}, _MISSING) is o{i}")
    for i, (owner, attribute, obj) in enumerate(attributes):
        names[f"w{i}"], names[f"v{i}"], names[f"a{i}"] = owner, obj, attribute
        # a function's own attributes and a cell's contents are always there (an emptied
        # cell raises ValueError); a class attribute may be missing, or deleted since
        read = (
            f"w{i}.{attribute}" if attribute in _ALWAYS_THERE else f"getattr(w{i}, a{i}, _MISSING)"
        )
        terms.append(f"{read} is v{i}")
    return names, " and ".join(terms) or "True"


def _identity_check(names, expression):
    """A function of no arguments: ``expression`` (of :func:`identity_expression`), False
    where it raises ValueError.

    It runs before every call of a rule (``grad``'s wrapper), so it is one expression of
    those lookups, generated for them, with the objects bound as its globals: no loop, no
    tuple to unpack, half the time of a loop over the tuples."""
    return generated_test("", expression, names, "<tangent_ast.cache.live dependencies>")


def generated_test(params, expression, names, filename):
    """``def test(params): return expression``, compiled with ``names`` as its globals;
    False where the expression raises ValueError: a closure cell emptied since (``del``
    of the closed-over name)."""
    names = dict(names)
    text = (
        f"def test({params}):\n"
        "    try:\n"
        f"        return {expression}\n"
        "    except ValueError:\n"
        "        return False\n"
    )
    exec(compile(text, filename, "exec"), names)
    return names["test"]


def _kind(value):
    return str(kind_of(value))


def _dedented_source(fn):
    try:
        return textwrap.dedent(source_text(fn))
    except (OSError, TypeError):
        return None


def _is_user_function(obj):
    if not inspect.isfunction(obj) or is_library(getattr(obj, "__module__", None)):
        return False

    # a function with rules in both modes is not derived from its source; one with rules
    # for one mode only is, in the other
    entry = user_rules(obj)
    return entry is None or not (entry.has(Mode.FORWARD) and entry.has(Mode.REVERSE))


def user_rules(fn):
    """The rule table's entry of ``fn``, a function that is not a library's (or None).

    Without importing the tables when no entry is possible: the built-in tables give rules
    to library functions and the runtime's helpers only (tests/cache/test_cached.py checks it),
    and every other function gets rules from the program, through ``tangent_ast.defvjp``
    and the rest of the registry, which the program has then imported."""
    registry = sys.modules.get("tangent_ast.rules.registry")
    if registry is None:
        module = getattr(fn, "__module__", None) or ""
        if module != "tangent_ast.runtime" and not module.startswith("tangent_ast.runtime."):
            return None
        from ..rules import registry
    return registry.lookup(fn)


def dependencies_of(fn):
    """The :class:`Dependencies` of a rule of ``fn``: ``fn`` and every user function it
    reaches through its free names and attribute chains, transitively."""
    fn = getattr(fn, "__func__", fn)
    in_dicts, attributes, functions, reads, calls = {}, {}, [], {}, {}
    queue = [fn]
    while queue:
        h = queue.pop(0)
        if h in functions:
            continue
        functions.append(h)
        for attribute in ("__code__", "__defaults__", "__kwdefaults__"):
            attributes[(id(h), attribute)] = (h, attribute, getattr(h, attribute))
        try:
            free = free_reads_of(h)
        except TangentAstError:
            continue  # no source: it is not derived, so only its identity matters
        own_reads, own_calls = reads.setdefault(h, {}), calls.setdefault(h, {})

        def reached(value):
            value = getattr(value, "__func__", value)
            if _is_user_function(value):
                queue.append(value)

        for name, chain in free:
            value = _lookup_name(h, name, in_dicts, attributes)
            if value is _MISSING:
                continue
            if is_data(value):
                own_reads[name] = value
            elif _says_which(h, name, value):
                pass
            else:
                own_calls[name] = code_key(value)
            reached(value)
            dotted = name
            for (
                attr
            ) in chain:  # mod.g, Class.method: the attribute is looked up when the primal runs
                owner = value
                if (
                    isinstance(owner, types.ModuleType) and is_library(owner.__name__)
                ) or not isinstance(owner, (types.ModuleType, type)):
                    break
                value = getattr(owner, attr, _MISSING)
                if isinstance(owner, types.ModuleType):
                    in_dicts[(id(vars(owner)), attr)] = (vars(owner), attr, value)
                else:
                    attributes[(id(owner), attr)] = (owner, attr, value)
                if value is _MISSING:
                    break
                dotted += f".{attr}"
                if not is_data(value) and not _defined_as(value, owner, attr):
                    own_calls[dotted] = code_key(value)
                reached(value)
    return Dependencies(in_dicts.values(), attributes.values(), functions, reads, calls)


def _says_which(fn, name, value):
    """Whether ``name``, read by ``fn``, says which code ``value`` is without a key: a
    module-level module (``np``), a builtin, the def of that name in ``fn``'s module (its
    source is in the header's ``depends``). A closure cell or an alias says nothing."""
    if name in fn.__code__.co_freevars:
        return False
    if name not in fn.__globals__:
        return True  # a builtin (a global defined later shadows it: Dependencies.current)
    if isinstance(value, types.ModuleType):
        return True
    return _defined_as(value, fn.__globals__.get("__name__"), name)


def _defined_as(value, owner, name):
    """Whether ``value`` is the function or class defined as ``name`` in ``owner`` (a module,
    or its name, or a class): ``owner.name`` then names it wherever it is read."""
    if not (inspect.isfunction(value) or isinstance(value, type)) or is_library(
        getattr(value, "__module__", None)
    ):
        return False
    if isinstance(owner, type):
        home = owner.__module__
        return value.__qualname__ == f"{owner.__qualname__}.{name}" and value.__module__ == home
    home = owner.__name__ if isinstance(owner, types.ModuleType) else owner
    if isinstance(owner, types.ModuleType) and value.__module__.startswith(f"{home}."):
        return value.__qualname__ == name  # a package's name for a function of its modules
    return value.__qualname__ == name and value.__module__ == home


def _lookup_name(fn, name, in_dicts, attributes):
    """What ``name`` denotes for ``fn`` (closure cell, then global, then builtin), recorded."""
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True))
    if name in cells:
        try:
            value = cells[name].cell_contents
        except ValueError:
            return _MISSING
        attributes[(id(cells[name]), "cell_contents")] = (cells[name], "cell_contents", value)
        return value
    value = fn.__globals__.get(name, _MISSING)
    # A builtin is recorded as "no global of that name": defining one later shadows it.
    in_dicts[(id(fn.__globals__), name)] = (fn.__globals__, name, value)
    if value is _MISSING:
        value = getattr(builtins, name, _MISSING)
    return value
