"""A rule found on disk in a new process: loaded without the transformer, and derived again
for every reason it was before (tangent_ast/cache/cached.py). Each case runs fresh interpreters."""

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import gast
import numpy as np
import pytest

import tangent_ast as ta
from tangent_ast.cache.live import free_reads, function_tree

REPO_ROOT = Path(__file__).resolve().parents[2]
TRANSFORMER = ("gast", "tangent_ast.pipeline", "tangent_ast.rules.registry", "tangent_ast.emit.emit")

MODEL = textwrap.dedent('''
    import numpy as np

    SCALE = 2.0


    def g(x):
        return SCALE * np.sin(x)


    def f(x, a):
        y = g(x) * a
        return np.sum(y * x)
''')

RUN = textwrap.dedent('''
    import json, sys
    import numpy as np
    import tangent_ast as ta
    {before}
    import model
    rule = ta.derive(model.f, "reverse", 0, args=(np.linspace(0.1, 1.0, 4), 0.5))
    imported = sorted(
        m for m in sys.modules if m.partition(".")[0] == "tangent_ast" or m in ("dataclasses", "copy")
    )
    out, saved = rule.fwd(np.linspace(0.1, 1.0, 4), 0.5)
    print(json.dumps({{
        "loaded": [m for m in {transformer!r} if m in sys.modules],
        "imported": [m for m in imported if not m.startswith("tangent_ast.derived.d_")],
        "gradient": rule.bwd(saved, 1.0).tolist(),
        "text": rule.source,
    }}))
''')


@pytest.fixture
def project(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "model.py").write_text(MODEL)
    return tmp_path


def run(project, before=""):
    """Derive ``model.f``'s reverse rule in a new interpreter: what it imported, the
    gradient, the module's text."""
    environment = dict(os.environ, TANGENT_AST_CACHE=str(project / "cache"))
    environment["PYTHONPATH"] = os.pathsep.join([str(project / "src"), str(REPO_ROOT)])
    environment.pop("TANGENT_AST_ROUTE", None)
    code = RUN.format(before=before, transformer=TRANSFORMER)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environment, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def rule_file(project):
    (path,) = (project / "cache").glob("model__f__reverse__*.py")
    return path


def test_a_cache_hit_in_a_new_process_imports_no_transformer(project):
    first = run(project)
    assert "tangent_ast.pipeline" in first["loaded"]  # derived
    again = run(project)
    assert again["loaded"] == []
    assert again["gradient"] == first["gradient"]
    assert again["text"] == first["text"]


# What a cache hit imports of tangent_ast: the package, and what checking the module on
# disk and loading it need. Each module costs every program whose rules are on disk some
# 0.1-0.3 ms of its start-up (found, read, unmarshalled, run): one more belongs here only if
# the check cannot do without it.
A_HIT_IMPORTS = [
    "copy",  # imported by dataclasses
    "dataclasses",  # Kind is a @dataclass(frozen=True); runtime.tangents's records
    "tangent_ast",
    "tangent_ast.api",  # a folder of the package: its docstring only
    "tangent_ast.api.sessions",  # derive
    "tangent_ast.cache",  # a folder of the package: its docstring only
    "tangent_ast.cache.cached",  # RuleCache.find, DerivedRule
    "tangent_ast.cache.live",  # what the rule was derived against, from the function's source
    "tangent_ast.cache.load",  # the module on disk: its header, state, import
    "tangent_ast.derived",  # the package of the cache directory's modules
    "tangent_ast.errors",
    "tangent_ast.modes",
    "tangent_ast.runtime",  # (the errors' base class; the rule's helpers)
    "tangent_ast.runtime.errors",
    "tangent_ast.runtime.tangents",  # the record helpers kinds reads (is_record, record_fields)
    "tangent_ast.version",
    "tangent_ast.vocabulary",  # a folder of the package: its docstring only
    "tangent_ast.vocabulary.calling",  # the call's flat arguments and parameters
    "tangent_ast.vocabulary.code_keys",  # the keys of the functions the rule was derived for
    "tangent_ast.vocabulary.kinds",  # the signature, the kinds of the values read
    "tangent_ast.vocabulary.naming",  # the module's name, the hashes
]


@pytest.mark.usefixtures("unverified")
def test_a_cache_hit_imports_only_the_modules_the_check_needs(project):
    """Not api.api (the other public functions), display, nor trees; and of the standard
    library dataclasses and copy only for Kind, a @dataclass (no tree is copied)."""
    run(project)
    assert run(project)["imported"] == A_HIT_IMPORTS


@pytest.mark.usefixtures("unverified")
def test_a_cache_hit_imports_only_the_runtime_modules_it_needs(project):
    """The runtime package imports a module when one of its names is first read: a rule
    calling only NumPy loads none of them but what the check itself reads (the kinds of
    records, the errors), and neither html (a notebook's) nor hashlib (OpenSSL)."""
    run(project)
    extra = ("tangent_ast.runtime.arrays", "tangent_ast.runtime.linalg",
             "tangent_ast.runtime.jacobians", "tangent_ast.runtime.batched", "html", "hashlib")
    forbid = f"import sys; assert not [m for m in {extra!r} if m in sys.modules]"
    code = RUN.replace("print(json.dumps", forbid + "\nprint(json.dumps", 1)
    environment = dict(os.environ, TANGENT_AST_CACHE=str(project / "cache"))
    environment["PYTHONPATH"] = os.pathsep.join([str(project / "src"), str(REPO_ROOT)])
    environment.pop("TANGENT_AST_ROUTE", None)  # the route run() derived the rule on
    done = subprocess.run(
        [sys.executable, "-c", code.format(before="", transformer=TRANSFORMER)],
        capture_output=True, text=True, env=environment, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    from tangent_ast import runtime

    assert runtime.getitem_vjp.__module__ == "tangent_ast.runtime.arrays"  # read lazily
    assert "getitem_vjp" in dir(runtime) and "getitem_vjp" in runtime.__all__
    with pytest.raises(AttributeError):
        runtime.no_such_helper  # noqa: B018


def test_a_cache_hit_reads_the_source_s_block_and_reads_from_the_memo(project):
    """A second process neither tokenizes nor parses the function's source: what it reads
    and where it ends are remembered under a hash of its file's text."""
    run(project)
    assert list((project / "cache" / "__pycache__" / "tangent_ast-sources").iterdir())
    refuse = (
        "import ast, inspect\n"
        "def refused(*args, **kwargs):\n"
        "    raise AssertionError('parsed on a cache hit')\n"
        "inspect.getblock = ast.parse = refused"
    )
    again = run(project, before=refuse)
    assert again["loaded"] == []


def test_a_corrupt_source_memo_is_parsed_again(project):
    first = run(project)
    for path in (project / "cache" / "__pycache__" / "tangent_ast-sources").iterdir():
        path.write_text(path.read_text()[:-4])  # cut short: its last name
    again = run(project)
    assert again["loaded"] == [] and again["gradient"] == first["gradient"]


def test_a_memo_entry_that_is_not_whole_is_ignored():
    from tangent_ast.cache.live import _parse_entry

    assert _parse_entry("4 3 2 np np.sin .") == (4, 3, [("np", ()), ("np", ("sin",))])
    assert _parse_entry("4 3 0 .") == (4, 3, [])
    assert _parse_entry("4 3 2 np np.s") is None  # cut short
    assert _parse_entry("4 3 2 np .") is None
    assert _parse_entry("4 3 1 np. .") is None
    assert _parse_entry("4 3") is None


def test_free_reads_of_is_free_reads_of_the_tree_from_the_memo_too(tmp_path):
    from tangent_ast.cache import live

    live.remember_in(tmp_path)
    try:
        expected = free_reads(function_tree(tricky))
        assert live.free_reads_of(tricky) == expected
        live._SOURCES.clear()
        live._MEMO.clear()
        assert live.free_reads_of(tricky) == expected  # read back from tmp_path
        assert live._SOURCES[tricky.__code__].reads is not None
        memo = tmp_path / "__pycache__" / "tangent_ast-sources"
        for i in range(live.MEMO_FILES_KEPT):
            (memo / f"old{i}").write_text("")
        live._SOURCES.clear()
        live._MEMO.clear()
        (next(p for p in memo.iterdir() if not p.name.startswith("old"))).unlink()
        assert live.free_reads_of(tricky) == expected  # a new file: the old pruned
        assert len(list(memo.iterdir())) == live.MEMO_FILES_KEPT // 2
    finally:
        live._MEMO_DIRECTORY.clear()


@pytest.mark.parametrize(
    "change",
    [
        ("model.py", "return np.sum(y * x)", "return np.sum(y * x * x)"),  # its source
        ("model.py", "return SCALE * np.sin(x)", "return SCALE * np.cos(x)"),  # a callee's
        ("model.py", "SCALE = 2.0", "SCALE = 2"),  # the kind of a value a callee reads
    ],
)
def test_a_changed_program_is_derived_again(project, change):
    run(project)
    _, old, new = change
    path = project / "src" / "model.py"
    path.write_text(path.read_text().replace(old, new))
    again = run(project)
    assert "tangent_ast.pipeline" in again["loaded"]
    assert again["text"] == rule_file(project).read_text()
    assert run(project)["loaded"] == []  # and found on disk from then on


@pytest.mark.parametrize("field", ["rules-hash", "tangent-ast-version", "source-hash", "depends"])
def test_a_module_of_other_rules_or_version_is_derived_again(project, field):
    run(project)
    path = rule_file(project)
    text = path.read_text()
    line = next(x for x in text.splitlines() if x.startswith(f"# {field}: "))
    path.write_text(text.replace(line, f"# {field}: 0123456789abcdef"))
    again = run(project)
    assert "tangent_ast.pipeline" in again["loaded"]
    assert line in path.read_text().splitlines()


CLOSURES = textwrap.dedent("""
    import numpy as np


    def make(c, h):
        def layer(x):
            return c * h(x)
        return layer


    FIRST = make(2.0, np.sin)
    SECOND = make(0.5, np.sin)
    THIRD = make(0.5, np.cos)


    def f(x, a):
        return np.sum(SECOND(FIRST(x)) * a + THIRD(x))
""")


def closures_gradient(x, first, second, third):
    """The gradient of CLOSURES's f at ``x`` (a = 0.5), for its three closures ``(c, h, dh)``."""
    (c1, h1, d1), (c2, _, d2), (c3, _, d3) = first, second, third
    return 0.5 * c2 * d2(c1 * h1(x)) * c1 * d1(x) + c3 * d3(x)


def test_closures_of_one_def_on_disk_each_get_their_cells(project):
    """One module on disk for the closures over np.sin (their rule reads c), another for the
    closure over np.cos; found on disk again, each loaded with its own cells."""
    path = project / "src" / "model.py"
    path.write_text(CLOSURES)
    x = np.linspace(0.1, 1.0, 4)
    sine, cosine = (np.sin, np.cos), (np.cos, lambda y: -np.sin(y))
    expected = closures_gradient(x, (2.0, *sine), (0.5, *sine), (0.5, *cosine))
    first = run(project)
    np.testing.assert_allclose(first["gradient"], expected)
    again = run(project)
    assert again["loaded"] == []
    assert again["gradient"] == first["gradient"]
    path.write_text(CLOSURES.replace("FIRST = make(2.0, np.sin)", "FIRST = make(2.0, np.cos)"))
    changed = run(project)
    expected = closures_gradient(x, (2.0, *cosine), (0.5, *sine), (0.5, *cosine))
    np.testing.assert_allclose(changed["gradient"], expected)


VJP_OF_A_CLOSURE = textwrap.dedent("""
    import numpy as np

    import tangent_ast as ta


    def make(c):
        def g(x):
            return np.sin(x) * c
        return g


    G = make(2.0)


    def f(x, a):
        out, pullback = ta.vjp(G, x)
        value, g_jvp = ta.linearize(G, x)
        return np.sum(pullback(a * x) * out + g_jvp(x) * a)
""")


def test_the_rules_a_call_of_the_api_makes_are_found_on_disk_with_their_values(project):
    """f's rule calls the rules of G's forward and reverse sweeps and of its linear map (rules
    of rules), whose modules the loader binds G's cell in, and their rules: found on disk
    again, each loaded with the values of the function it is the rule of."""
    (project / "src" / "model.py").write_text(VJP_OF_A_CLOSURE)
    x = np.linspace(0.1, 1.0, 4)
    # c = 2, a = 0.5: sum(a x c cos(x) c sin(x) + c cos(x) x a)
    expected = 4.0 * 0.5 * (np.sin(2 * x) / 2 + x * np.cos(2 * x))
    expected += 2.0 * 0.5 * (np.cos(x) - x * np.sin(x))
    first = run(project)
    np.testing.assert_allclose(first["gradient"], expected)
    again = run(project)
    assert again["loaded"] == []
    assert again["gradient"] == first["gradient"]


def test_other_rule_files_are_not_taken_for_these(project):
    """A fingerprint of the rule tables not recorded (a rule file edited, NumPy upgraded):
    the rules hash is computed from the tables, not assumed."""
    run(project)
    forged = 'import tangent_ast.cache.load as h; h._FINGERPRINT[:] = ["0123456789abcdef"]'
    assert "tangent_ast.rules.registry" in run(project, before=forged)["loaded"]


def test_a_rule_registered_by_the_program_changes_the_rules_hash(project):
    run(project)
    (project / "src" / "myrules.py").write_text(
        "import tangent_ast as ta\n\n\ndef twice(x):\n    return 2.0 * x\n\n\n"
        "ta.defvjp(twice, lambda ct, ans, x: 2.0 * ct)\n"
    )
    again = run(project, before="import myrules")
    assert "tangent_ast.pipeline" in again["loaded"]  # derived against a table of other rules


def test_an_edited_module_is_used_as_it_is_without_the_transformer(project):
    run(project)
    path = rule_file(project)
    edited = path.read_text().replace("\ndef ", "\n# edited by hand\ndef ", 1)
    path.write_text(edited)
    again = run(project)
    assert again["loaded"] == []
    assert path.read_text() == edited == again["text"]


def test_the_built_in_tables_give_rules_to_library_and_runtime_functions_only():
    """What live.user_rules relies on to leave the tables unimported (in a new process: the
    tests register rules of their own)."""
    code = textwrap.dedent("""
        import inspect
        from tangent_ast.vocabulary.code_keys import is_library
        from tangent_ast.rules import registry

        for entry in registry.all_primitives():
            fn = entry.fn
            if inspect.isfunction(fn) and not is_library(fn.__module__):
                assert fn.__module__.startswith("tangent_ast.runtime"), fn
        print(len(registry.all_primitives()))
    """)
    environment = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environment, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 100


def _gast_free_reads(fn):
    """live's walk as it was, over the gast tree of the parse stage."""
    from tangent_ast.front.parse import parse
    from tangent_ast.front.resolve import assigned_names

    node = parse(fn).node
    local = assigned_names(node)
    found = set()
    for n in gast.walk(node):
        if isinstance(n, gast.Attribute):
            chain, base = [], n
            while isinstance(base, gast.Attribute):
                chain.append(base.attr)
                base = base.value
            if isinstance(base, gast.Name) and base.id not in local:
                found.add((base.id, tuple(reversed(chain))))
        elif isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id not in local:
            found.add((n.id, ()))
    return found


# free names tricky reads
THRESHOLD, outer_value, width = 0.0, 1.0, 4
np_module = np


class Point:
    __match_args__ = ("px", "py")


def tricky(x, *rest, scale=1.0, **options):
    """Every way a name is assigned or read."""
    import math

    global COUNT
    COUNT = 1
    try:
        y = math.sqrt(x)
    except ValueError as error:
        y = error
    with open(x) as handle:
        del handle
    total = sum(v for v in rest if v > THRESHOLD)
    squares = [w * w for w in options.values()]
    if (n := len(squares)) > 0:
        total += n
    for i, (a, b) in enumerate(zip(rest, rest)):
        total += a * b * i
    _ = np_module.linalg.norm(x).real.imag

    def inner(q, *more):
        return q * total + more[0] + outer_value

    match x:
        case [first, *others]:
            total += first
        case {"k": value, **remaining}:
            total += value
        case Point(px, py) as point:
            total += px
    lam = lambda z, *zs: z + y + zs[0]
    return f"{total!r} {scale:{width}}" + inner(lam(x)) + others + remaining + point + py


def test_free_reads_without_gast_are_those_of_the_gast_tree():
    import tangent_ast.api.api
    import tangent_ast.cache.cached
    import tangent_ast.cache.live
    import tangent_ast.cache.load

    functions = [tricky, tricky.__wrapped__ if hasattr(tricky, "__wrapped__") else tricky]
    modules = (tangent_ast.api.api, tangent_ast.cache.cached, tangent_ast.cache.live)
    for module in (*modules, tangent_ast.cache.load):
        functions += [
            f
            for f in vars(module).values()
            if callable(f) and getattr(f, "__module__", None) == module.__name__
            and hasattr(f, "__code__")
        ]
    for fn in functions:
        assert set(free_reads(function_tree(fn))) == _gast_free_reads(fn), fn.__qualname__
    assert isinstance(function_tree(tricky), ast.FunctionDef)


def test_a_module_broken_before_its_functions_is_corrupt(tmp_path):
    """A module whose functions are as generated is compiled only up to them (the
    body-hash vouches for the rest): a break in its imports is still found."""
    from tangent_ast.cache.load import OnDisk, body_hash_of, read_header, state_of

    def f(x):
        return np.sin(x) * x

    rule = ta.derive(f, "reverse", 0, args=(0.5,), cache=tmp_path)
    text = rule.path.read_text()
    assert state_of(rule.path, {}) is OnDisk.FRESH
    broken = text.replace("import numpy as np\n", "import numpy as\n", 1)
    assert body_hash_of(broken) == read_header(broken)["body-hash"]  # not an edit of its body
    rule.path.write_text(broken)
    assert state_of(rule.path, {}) is OnDisk.CORRUPT
    renamed = text.replace("def f_bwd(", "def f_bwd2(")  # edited: compiled whole
    rule.path.write_text(renamed)
    assert state_of(rule.path, {}) is OnDisk.CORRUPT


@pytest.mark.parametrize("directory", ["/tmp/cache", "/", "/ab", "/abcd", "/abcde", "/héllo/wörld"])
def test_the_directory_package_name_is_base32_of_the_path(directory):
    import base64

    from tangent_ast.derived import directory_name, directory_of

    encoded = base64.b32encode(os.fsencode(directory)).decode().rstrip("=").lower()
    assert directory_name(directory) == f"d_{encoded}"
    assert directory_of(directory_name(directory)) == directory


def test_call_forms_are_keys_as_frozen_dataclasses_were():
    import pickle

    from tangent_ast.vocabulary.calling import PLAIN, CallForm

    assert CallForm() == PLAIN and hash(CallForm()) == hash(PLAIN)
    assert CallForm(1, ("tol",)) != CallForm(1, ()) and CallForm(1) != (1, ())
    assert pickle.loads(pickle.dumps(CallForm(2, ("tol",)))) == CallForm(2, ("tol",))
    with pytest.raises(AttributeError):
        PLAIN.extra_positional = 1
    assert repr(CallForm(1)) == "CallForm(extra_positional=1, extra_keywords=())"


def test_patterns_written_out_match_as_the_patterns_did():
    import re

    from tangent_ast.cache.load import _sibling_imports
    from tangent_ast.vocabulary.naming import sanitize

    text = (
        "from .a import b\nfrom . import c\nfrom .x_1 import y\n  from .z import q\n"
        "from .w  import e\nfrom .é2 import f\nfrom .ab.cd import g\nfrom .k import\n"
        "from .m importx\r\nfrom .n import o"
    )
    assert _sibling_imports(text) == re.findall(r"^from \.(\w+) import", text, re.MULTILINE)
    for name in ["abc", "_a_", "a.b", "array1f_a__float", "1x", "", "__", "é", "x[1]", "A_B9"]:
        expected = re.sub(r"\W+", "_", name).strip("_") or "t"
        assert sanitize(name) == ("_" + expected if expected[0].isdigit() else expected)
