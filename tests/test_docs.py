"""The code in README.md and docs/*.md runs, so the docs cannot drift from the code.

Conventions, per page (one namespace, run as ``__main__`` like a script, with a fresh
cache and a temporary working directory):

* a ```python block runs; if it holds ``>>>`` prompts it runs as a doctest, so the output
  it shows is checked too;
* a ```text output block right after a ```python block is what that block prints: it is
  compared (``...`` matches anything, runs of whitespace are one space);
* a ```python file=NAME.py block is written to that file, so later blocks can import it
  (tangent_ast reads a function's source: a real file is what users have);
* other ```text blocks (code shown for reading), ```python no-run blocks (sketches) and
  ```bash blocks do not run.
"""

import contextlib
import doctest
import io
import linecache
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.usefixtures("direct_route")  # its text, names, docs

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```", re.M | re.S)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@dataclass
class Block:
    line: int  # of the block's first line of code in the page
    language: str
    option: str  # "file=NAME.py", "output", "no-run" or ""
    code: str


def blocks(page):
    text = page.read_text()
    return [
        Block(text[: m.start()].count("\n") + 2, m.group(1), m.group(2).strip(), m.group(3))
        for m in FENCE.finditer(text)
    ]


def runnable(page):
    return any(b.language == "python" and b.option != "no-run" for b in blocks(page))


def run_block(page, block, namespace):
    """Run one ```python block; what it printed."""
    filename = f"<{page.name} line {block.line}>"
    if ">>>" in block.code:
        test = doctest.DocTestParser().get_doctest(block.code, namespace, filename, filename, 0)
        runner = doctest.DocTestRunner(optionflags=FLAGS)
        report = []
        runner.run(test, out=report.append, clear_globs=False)
        assert not runner.failures, "".join(report)
        return ""
    source = "\n" * (block.line - 1) + block.code  # errors cite the page's line numbers
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(source, filename, "exec"), namespace)
    return printed.getvalue()


def check_output(expected, printed):
    checker = doctest.OutputChecker()
    if not checker.check_output(expected, printed, FLAGS):
        raise AssertionError(checker.output_difference(doctest.Example("", expected), printed, FLAGS))


@pytest.mark.parametrize("page", [p for p in PAGES if runnable(p)], ids=lambda p: p.name)
def test_page_code_runs(page, tmp_path, monkeypatch):
    monkeypatch.setenv("TANGENT_AST_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    written, printed = [], None
    namespace = {"__name__": "__main__"}  # as in a script or a notebook
    try:
        for block in blocks(page):
            where = f"{page.name}, the block at line {block.line}"
            if block.language == "text" and block.option == "output":
                assert printed is not None, f"{where}: an output block follows no python block"
                check_output(block.code, printed)
            elif block.language == "python" and block.option.startswith("file="):
                name = block.option[len("file=") :]
                (tmp_path / name).write_text(block.code)
                written.append(Path(name).stem)
            elif block.language == "python" and block.option != "no-run":
                try:
                    printed = run_block(page, block, namespace)
                except Exception as error:
                    raise AssertionError(f"{where}: {error}") from error
                continue
            printed = None
    finally:
        for module in written:  # the next page may write a file of the same name
            sys.modules.pop(module, None)
