"""Derived modules under a name any process can import: ``tangent_ast.derived.d_<dir>.<module>``.

The modules tangent_ast writes to a cache directory are imported as the submodules of a
package named after that directory (its path, base32-encoded), not after a hash: a function
of a derived rule pickled in one process (``f_fwd``, sent to a worker by
``multiprocessing`` or Dask) is found in another by its module's name alone, as long as
the directory is there (the same machine, or a shared file system). Importing this package
installs the finder that maps such a name back to its directory.

>>> name = directory_name("/tmp/cache")
>>> name
'd_f52g24bpmnqwg2df'
>>> directory_of(name)
'/tmp/cache'
"""

import importlib.machinery
import os
import sys

_BASE32 = "abcdefghijklmnopqrstuvwxyz234567"


def directory_name(directory):
    """The package name of the cache ``directory``: its path, base32 (an identifier).

    ``base64.b32encode`` of the path, lower case, without its padding: written out, as
    base64 costs a millisecond to import (tests/cache/test_cached.py checks they agree)."""
    data = os.fsencode(str(directory))
    bits = len(data) * 8
    count = -(-bits // 5)  # characters: 5 bits each, the last filled up with zero bits
    number = int.from_bytes(data, "big") << (count * 5 - bits)
    encoded = "".join(_BASE32[(number >> (5 * i)) & 31] for i in range(count - 1, -1, -1))
    return f"d_{encoded}"


def directory_of(name):
    """The directory whose package is ``name`` (``directory_name`` undone)."""
    import base64  # on unpickling a derived function in a new process only

    encoded = name[2:].upper()
    return os.fsdecode(base64.b32decode(encoded + "=" * (-len(encoded) % 8)))


def portable_name(module_name):
    """A module's name as a generated header records it: a derived module's relative to its
    package (``.mymodel__loss__reverse__x__any``), so that it still names the module when
    the package is moved or copied; any other module's as it is."""
    prefix = f"{__name__}.d_"
    if not module_name or not module_name.startswith(prefix):
        return module_name
    return "." + module_name[len(prefix) :].partition(".")[2]


# The loader and finder protocols are duck-typed: the abstract base classes of importlib.abc
# would cost their import (~6 ms, importlib.resources) to every process that loads a rule.
class _PackageLoader:
    """A package with no code of its own: its submodules are the files of its directory."""

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        pass


class _DirectoryFinder:
    def find_spec(self, fullname, path, target=None):
        prefix = f"{__name__}."
        rest = fullname[len(prefix) :] if fullname.startswith(prefix) else ""
        if not rest.startswith("d_") or "." in rest:
            return None
        try:
            directory = directory_of(rest)
        except ValueError:
            return None
        if not os.path.isdir(directory):
            return None
        spec = importlib.machinery.ModuleSpec(fullname, _PackageLoader(), is_package=True)
        spec.submodule_search_locations = [directory]
        return spec


if not any(isinstance(f, _DirectoryFinder) for f in sys.meta_path):
    sys.meta_path.append(_DirectoryFinder())
