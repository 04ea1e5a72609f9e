"""The header of a generated module: reading it, and the hashes it records.

Takes module text (or a function's source); guarantees the same fields and hashes the
emit stage writes, computed with the standard library only, so that checking a module
on disk imports nothing of the transformer (see :mod:`tangent_ast.cached`).

>>> read_header("# source-hash: 5aed805cb838d912\\n# mode: reverse\\nimport numpy as np\\n")
{'source-hash': '5aed805cb838d912', 'mode': 'reverse'}
"""

import os
import sys

import numpy as np

from .naming import digest, sha256
from .version import __version__


def read_header(text):
    """The ``# key: value`` lines of a generated module's header."""
    fields = {}
    for line in text.splitlines():
        if line.startswith("# ") and ": " in line:
            key, _, value = line[2:].partition(": ")
            if key.replace("-", "").isalpha() and key not in fields:
                fields[key] = value
        elif line.startswith(("import", "from", "def")):
            break
    return fields


def body_hash_of(text):
    """The hash of the function bodies of a module text, as written in its header."""
    start = text.find("\ndef ")
    bodies = text[start + 1 :] if start >= 0 else ""
    return digest(bodies.rstrip("\n").encode() + b"\n")


def source_hash(text):
    return digest(text)


_PACKAGE = os.path.dirname(os.path.abspath(__file__))
# What the built-in rule tables are made of: their own files and the runtime helpers
# their rules call (the rules hash marshals the code of both).
_TABLE_DIRECTORIES = ("rules", os.path.join("rules", "numpy"), "runtime")
_FINGERPRINT: list[str] = []


def rules_fingerprint():
    """A hash that changes whenever the rules hash of the built-in tables can change.

    The rules hash (``emit.rule_source_hash``) is computed from the rule table: the names
    and purity of its entries and the marshalled code of their rules. Without a rule
    registered by the program, that table is a function of the files of ``rules/`` and
    ``runtime/`` (the code, its file names and line numbers), the NumPy version (the tables
    register functions that exist, ``np.matvec`` from 2.2), the Python version (bytecode
    and marshal format) and where the package is installed (code records its file name);
    every one of them is in this hash, as is tangent_ast's version. Of each file it takes
    the size and modification time in nanoseconds: the test Python's import system makes
    (at one second's resolution) before it runs a file's cached bytecode instead of its
    text, so the tables a process runs never change without this hash changing. Costs
    some 40 ``stat`` calls, once per process, where the rules hash costs the import and
    parsing of the tables."""
    if not _FINGERPRINT:
        h = sha256(
            f"{__version__}\0{sys.version}\0{sys.implementation.cache_tag}\0{_PACKAGE}\0"
            f"{np.__version__}".encode()
        )
        for directory in _TABLE_DIRECTORIES:
            with os.scandir(os.path.join(_PACKAGE, directory)) as entries:
                for entry in sorted(entries, key=lambda e: e.name):
                    if entry.name.endswith(".py"):
                        status = entry.stat()
                        stamp = f"{entry.name}:{status.st_size}:{status.st_mtime_ns}"
                        h.update(f"\0{directory}/{stamp}".encode())
        _FINGERPRINT.append(h.hexdigest()[:16])
    return _FINGERPRINT[0]
