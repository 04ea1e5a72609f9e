"""The naming scheme of generated code.

Generated names stay close to the user's: SSA versions are ``y``, ``y_1``,
``y_2``; the tangent of ``y`` is ``dy``; its cotangent is ``ct_y``. A
:class:`Namer` hands out names that collide with nothing the function already
uses (parameters, locals, globals it reads), so generated code never shadows
a user's name.
"""

import builtins
import keyword
import re
import sys


def _sha256():
    """SHA-256, the same digests from either module: hashlib's where the program has imported
    it already (numpy.random does), else the standard library's own, whose import is a small
    shared library (0.2 ms) where hashlib's loads OpenSSL (some 3 ms)."""
    hashlib = sys.modules.get("hashlib")
    if hashlib is not None:
        return hashlib.sha256
    try:
        from _sha256 import sha256  # Python 3.11
    except ImportError:  # pragma: no cover - Python 3.12 on, or a build without it
        try:
            from _sha2 import sha256
        except ImportError:
            from hashlib import sha256
    return sha256


sha256 = _sha256()


class Namer:
    """Deterministic supply of fresh identifiers."""

    def __init__(self, taken=()):
        # Builtins are never shadowed: lowered loops call range, len and min.
        self.taken = set(taken) | set(dir(builtins))
        # stem -> the N of the last ``stem_N`` handed out: every smaller one is taken (names
        # are only ever added to ``taken``), so the next search starts there, not at 1
        self._last: dict[str, int] = {}

    def reserve(self, *names):
        self.taken.update(names)

    def fresh(self, base):
        """``base`` if it is free, else ``base_1``, ``base_2``, ..."""
        base = sanitize(base)
        if base not in self.taken:
            self.taken.add(base)
            return base
        return self.version(base)

    def version(self, base):
        """The next free ``base_N`` (N >= 1), for a re-assignment of ``base``."""
        stem = re.sub(r"_\d+$", "", base) or base
        n = self._last.get(stem, 1)
        while f"{stem}_{n}" in self.taken:
            n += 1
        name = f"{stem}_{n}"
        self.taken.add(name)
        self._last[stem] = n
        return name

    def tangent(self, name):
        return self.fresh("d" + name.lstrip("_"))

    def cotangent(self, name):
        return self.fresh("ct_" + name.lstrip("_"))


def rule_base(fn):
    """The name a rule's functions start with: the def's own name (``f`` gives ``f_jvp``,
    ``f_fwd``, ``f_bwd``; not a ``functools.wraps`` copy's), ``lambda`` for a lambda."""
    name = fn.__code__.co_name
    return name if name.isidentifier() else sanitize(name)


def sanitize(text):
    """A valid identifier made from ``text`` (dots, brackets -> underscores)."""
    text = str(text)
    # letters, digits and _ only: nothing to replace (and no pattern to compile, a cost
    # a cache hit would pay for the names it looks up)
    plain = text.isascii() and text.replace("_", "a").isalnum()
    name = (text if plain else _words_joined(text)).strip("_") or "t"
    if name[0].isdigit():
        name = "_" + name
    if keyword.iskeyword(name):  # the tangent of ``el`` is not ``del``
        name += "_"
    return name


def _words_joined(text):
    """``re.sub(r"\\W+", "_", text)``, written out: a signature's part of a module name
    (``array1f[a]``) is not plain, and compiling the pattern would cost a cache hit some
    0.2 ms. ``\\w`` is what ``str.isalnum`` accepts, and ``_``."""
    parts, gap = [], False
    for c in text:
        if c.isalnum() or c == "_":
            parts.append(c)
            gap = False
        elif not gap:
            parts.append("_")
            gap = True
    return "".join(parts)


def qualname_part(qualname):
    """``qualname`` as part of a module name, one name for one qualname: kept as it is
    when it is an identifier (``_loss`` and ``loss`` stay apart), else its characters
    other than letters, digits and ``_`` replaced and a hash of it added (``Model.loss``
    is not the function ``Model_loss``)."""
    if qualname.isidentifier():
        return qualname
    return f"{sanitize(qualname)}_{digest(qualname, 6)}"


def source_hash(text):
    """The hash of a function's source, as a generated module's header records it
    (``source-hash``)."""
    return digest(text)


# the longest start of the module names of a function's rules (``rule_prefix``): a rule of a
# rule of a rule (a third derivative) starts with its function's module's whole name, and the
# file names, and the temporary files they are written as first, must stay well inside a
# file system's 255 bytes
RULE_PREFIX_LIMIT = 100


def bounded_prefix(prefix):
    """``prefix``, or where it is longer than ``RULE_PREFIX_LIMIT``, its start and its end
    joined by a digest of the whole (the same text for the same function in every process,
    so that a module name still starts with its function's prefix).

    >>> bounded_prefix("main__f")
    'main__f'
    >>> len(bounded_prefix("main__f__reverse__x__" * 20)) <= RULE_PREFIX_LIMIT
    True
    """
    if len(prefix) <= RULE_PREFIX_LIMIT:
        return prefix
    return f"{prefix[:40].rstrip('_')}__{digest(prefix, 12)}__{prefix[-44:].lstrip('_')}"


def digest(text, length=16):
    """The first ``length`` hex digits of the SHA-256 of ``text`` (a str or bytes): the
    hashes of the names and headers of generated modules."""
    return sha256(text.encode() if isinstance(text, str) else text).hexdigest()[:length]
