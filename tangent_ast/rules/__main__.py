"""``python -m tangent_ast.rules --list``: every registered primitive and its modes.

Primitives are grouped by the rule table (domain module) that registered them;
each line says whether the primitive has forward and reverse rules or is
non-differentiable. The last line counts the NumPy functions and ndarray
methods/attributes with both modes.
"""

import argparse
import sys

from . import registry  # importing the package registered every table

_DOMAINS = ("operators", "builtins", "math", "numpy", "linalg")


def _domain(entry):
    """The rule table that registered ``entry``: the module of its first rule."""
    for table in (entry.jvps, entry.vjps):
        for rule in table.values():
            fn = getattr(rule, "fn", None)
            module = getattr(fn, "__module__", "") or ""
            if module.startswith("tangent_ast.rules."):
                return module.rsplit(".", 1)[1]
    name = entry.name
    if name.startswith("numpy.linalg."):
        return "linalg"
    if name.startswith(("numpy.", "ndarray.")):
        return "numpy"
    if name.startswith("math."):
        return "math"
    if name.startswith("operator."):
        return "operators"
    return "builtins"


def modes(entry):
    """The modes of ``entry`` as words: ``nondifferentiable`` or ``forward``/``reverse``."""
    if entry.nondiff:
        return ["nondifferentiable"]
    return [
        m
        for m, table in (("forward", entry.jvps), ("reverse", entry.vjps))
        if any(rule is not None for rule in table.values())
    ]


def is_numpy(entry):
    return entry.name.startswith(("numpy.", "ndarray."))


def both_modes(entries):
    return [e for e in entries if modes(e) == ["forward", "reverse"]]


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m tangent_ast.rules", description="Show the registered derivative rules."
    )
    parser.add_argument("--list", action="store_true", help="list every primitive and its modes")
    args = parser.parse_args(argv)
    if not args.list:
        parser.print_help()
        return 0
    entries = registry.all_primitives()
    groups = {}
    for entry in entries:
        groups.setdefault(_domain(entry), []).append(entry)
    order = [d for d in _DOMAINS if d in groups] + sorted(set(groups) - set(_DOMAINS))
    for domain in order:
        members = sorted(groups[domain], key=lambda e: e.name)
        print(f"[{domain}] {len(members)} primitives")
        width = max(len(e.name) for e in members)
        for entry in members:
            print(f"  {entry.name:<{width}}  {'/'.join(modes(entry)) or '-'}")
        print()
    numpy_entries = [e for e in entries if is_numpy(e)]
    print(
        f"NumPy functions/methods with both modes: {len(both_modes(numpy_entries))} "
        f"(of {len(numpy_entries)} NumPy primitives registered)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
