import pytest


@pytest.fixture(autouse=True, scope="session")
def _isolated_cache(tmp_path_factory):
    """Derived modules go to a fresh cache directory for the whole test run."""
    import os
    path = tmp_path_factory.mktemp("tangent_ast_cache")
    old = os.environ.get("TANGENT_AST_CACHE")
    os.environ["TANGENT_AST_CACHE"] = str(path)
    yield path
    if old is None:
        os.environ.pop("TANGENT_AST_CACHE", None)
    else:
        os.environ["TANGENT_AST_CACHE"] = old


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
