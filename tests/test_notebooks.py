"""Every notebook in notebooks/ must run top to bottom with a real kernel.

Each ``notebooks/*.ipynb`` is one test case (parametrized by file name, so a new
notebook is picked up without editing this file). A cell that raises fails the
test with the cell's traceback.
"""

import os
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


@pytest.mark.skipif(not NOTEBOOK_NAMES, reason="no notebooks in notebooks/")
@pytest.mark.parametrize("name", NOTEBOOK_NAMES)
def test_notebook_runs(name, kernel_env):
    path = NOTEBOOKS / name
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOKS)}})
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as error:
        pytest.fail(f"{name}: a cell raised\n{error}", pytrace=False)
    errors = [output for cell in nb.cells if cell.cell_type == "code"
              for output in cell.get("outputs", []) if output.get("output_type") == "error"]
    assert not errors, f"{name}: error outputs: {[e.get('ename') for e in errors]}"


@pytest.mark.skipif(not NOTEBOOK_NAMES, reason="no notebooks in notebooks/")
@pytest.mark.parametrize("name", NOTEBOOK_NAMES)
def test_notebook_is_saved_with_its_outputs(name):
    """A reader on the web sees the generated code: every code cell was run, in order, and
    the notebook saved with what it printed."""
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    counts = [cell.get("execution_count") for cell in nb.cells if cell.cell_type == "code"]
    assert all(counts) and counts == sorted(counts), f"{name}: run it and save it ({counts})"
    assert any(cell.get("outputs") for cell in nb.cells if cell.cell_type == "code")
    # what a reader sees names no directory of the machine that ran it
    saved = (NOTEBOOKS / name).read_text()
    machine = [d for d in ("/tmp/", "/root/", "/home/", str(ROOT)) if d in saved]
    assert not machine, f"{name}: its saved text shows paths of this machine: {machine}"
