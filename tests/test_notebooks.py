"""Every notebook in notebooks/ must run top to bottom with a real kernel.

Each ``notebooks/*.ipynb`` is one test case (parametrized by file name, so a new
notebook is picked up without editing this file). A cell that raises fails the
test with the cell's traceback, and so does a cell whose saved outputs differ from what it
shows when run again (save the notebook after running it: a reader on the web sees the
saved outputs). A figure is compared as "a figure is shown", not by its bytes.
"""

import contextlib
import difflib
import os
import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
NOTEBOOK_NAMES = sorted(path.name for path in NOTEBOOKS.glob("*.ipynb"))


@pytest.fixture
def kernel_env(monkeypatch, tmp_path):
    """The kernel inherits this process's environment: make ``import tangent_ast``
    find this checkout even when it is not installed, and give the kernel its own
    cache of derived modules (notebooks may also set their own)."""
    paths = [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(paths))
    monkeypatch.setenv("TANGENT_AST_CACHE", str(tmp_path / "tangent_ast_cache"))
    # Silence the debugger's "frozen modules" warning on kernel start.
    monkeypatch.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    # Figures: the kernel's own inline backend shows them (whatever backend this shell
    # names), and matplotlib's font cache is built here, once, not by the first notebook
    # that draws (which would print "Matplotlib is building the font cache" in a cell).
    monkeypatch.delenv("MPLBACKEND", raising=False)
    with contextlib.suppress(ImportError):
        import matplotlib.font_manager  # noqa: F401


@pytest.mark.skipif(not NOTEBOOK_NAMES, reason="no notebooks in notebooks/")
@pytest.mark.parametrize("name", NOTEBOOK_NAMES)
def test_notebook_runs(name, kernel_env):
    path = NOTEBOOKS / name
    nb = nbformat.read(path, as_version=4)
    saved = [_shown(cell) for cell in nb.cells if cell.cell_type == "code"]
    # a cell tagged "measurement" shows figures of this machine (peak memory): they vary
    measured = [
        "measurement" in cell.metadata.get("tags", ())
        for cell in nb.cells
        if cell.cell_type == "code"
    ]
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}
    )
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as error:
        pytest.fail(f"{name}: a cell raised\n{error}", pytrace=False)
    errors = [
        output
        for cell in nb.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]
    assert not errors, f"{name}: error outputs: {[e.get('ename') for e in errors]}"
    # what a reader sees saved is what the notebook shows today (run it again and save it)
    fresh = [_shown(cell) for cell in nb.cells if cell.cell_type == "code"]
    stale = [
        i
        for i, (old, new, varies) in enumerate(zip(saved, fresh, measured, strict=True))
        if old != new and not varies
    ]
    assert not stale, (
        f"{name}: the saved outputs of code cells {stale} differ from a fresh run; first:\n"
        + "".join(difflib.unified_diff(saved[stale[0]], fresh[stale[0]], "saved", "fresh"))
    )


# what may differ between runs: the hashes in a module's header (of the rules, which change
# with any rule, and of the body), an object's address
_VARYING = [
    (re.compile(r"(# (?:rules|body|source)-hash:) [0-9a-f]+"), r"\1 ..."),
    (re.compile(r"0x[0-9a-f]+"), "0x..."),
]


def _shown(cell):
    """The lines a code cell shows (its printed text and the plain text of its values),
    without what varies from run to run."""
    text = ""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            text += output.get("text", "")
        elif "data" in output:
            # A figure's PNG bytes differ between versions of matplotlib, its fonts and
            # its libraries, for the same picture: what is compared is that a figure is
            # shown, and its plain text (size and number of axes), not its bytes.
            if "image/png" in output["data"]:
                text += "<a figure, as image/png>\n"
            text += output["data"].get("text/plain", "") + "\n"
        elif output.get("output_type") == "error":
            text += f"{output.get('ename')}: {output.get('evalue')}\n"
    for pattern, replacement in _VARYING:
        text = pattern.sub(replacement, text)
    return text.splitlines(keepends=True)


@pytest.mark.skipif(not NOTEBOOK_NAMES, reason="no notebooks in notebooks/")
@pytest.mark.parametrize("name", NOTEBOOK_NAMES)
def test_notebook_is_saved_with_its_outputs(name):
    """A reader on the web sees the generated code: every code cell was run, in order, and
    the notebook saved with what it printed."""
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    counts = [cell.get("execution_count") for cell in nb.cells if cell.cell_type == "code"]
    assert all(counts) and counts == sorted(counts), f"{name}: run it and save it ({counts})"
    assert any(cell.get("outputs") for cell in nb.cells if cell.cell_type == "code")
    # what a reader sees names no directory of the machine that ran it (in the text: the
    # base64 of a figure could hold "/tmp/" by chance)
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            output.get("data", {}).pop("image/png", None)
    saved = nbformat.writes(nb)
    machine = [d for d in ("/tmp/", "/root/", "/home/", str(ROOT)) if d in saved]
    assert not machine, f"{name}: its saved text shows paths of this machine: {machine}"
