import pytest


def pytest_configure(config):
    """Derived modules go to a fresh cache directory for the whole test run, set before any
    test module is imported: a module may make ``grad(f)`` at import, whose session takes
    the cache directory then (the user's own cache would be used, and its old modules)."""
    import os
    import tempfile

    path = tempfile.mkdtemp(prefix="tangent_ast_test_cache_")
    config.stash[_STASH] = (os.environ.get("TANGENT_AST_CACHE"), path)
    os.environ["TANGENT_AST_CACHE"] = path


def pytest_unconfigure(config):
    import os
    import shutil

    old, path = config.stash.get(_STASH, (None, None))
    if path is not None:
        shutil.rmtree(path, ignore_errors=True)
    if old is None:
        os.environ.pop("TANGENT_AST_CACHE", None)
    else:
        os.environ["TANGENT_AST_CACHE"] = old


_STASH = pytest.StashKey[object]()


@pytest.fixture
def direct_route(monkeypatch):
    """The direct route, whatever ``TANGENT_AST_ROUTE`` says: for tests of its exact text and
    file names, and of the docs, which show the default route (the transpose route's own
    text and names are tested in test_transpose.py)."""
    monkeypatch.setenv("TANGENT_AST_ROUTE", "direct")


@pytest.fixture
def unverified(monkeypatch):
    """Rules not verified on their first call, whatever ``TANGENT_AST_VERIFY`` says: for tests
    that count what a call does (derivations, effects, modules imported), which verification
    adds to (it runs the function and the other mode's rule again)."""
    monkeypatch.delenv("TANGENT_AST_VERIFY", raising=False)
