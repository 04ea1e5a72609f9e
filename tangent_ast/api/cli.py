"""The ``tangent-ast`` command line: show, generate and check derived rules.

    tangent-ast show MODULE:FUNCTION [--mode M] [--wrt a,b] [--stage S]
        print the source of one stage of the derivation (default: the module)
    tangent-ast generate MODULE:FUNCTION... [--mode M] [--wrt a,b] [--standalone] -o PACKAGE_DIR
        write importable derivative modules and an ``__init__.py`` exposing them
        (``--mode hvp``: ``f_gradient_jvp``, the gradient and Hessian-vector products;
        ``--mode hessian``: ``f_hessian``; ``--mode jacobian``: ``f_jacobian``, both by one
        pass of a forward rule on a batch of all directions)
    tangent-ast check PACKAGE_DIR
        exit 1 if a generated module's source function changed since it was derived

MODULE is imported with the current directory first on ``sys.path``.
Errors (bad targets, :class:`~tangent_ast.errors.TangentAstError`) are
printed as one ``tangent-ast: error: ...`` line and exit with status 2.
"""

import argparse
import importlib
import inspect
import os
import re
import shutil
import sys
import textwrap
import warnings
from dataclasses import dataclass
from pathlib import Path

from .. import runtime
from ..cache.live import dependencies_of
from ..cache.load import StaleRuleWarning, body_hash_of, import_module, read_header, write_atomic
from ..emit.package import init_text, staged
from ..emit.signature_text import parse_signature
from ..errors import TangentAstError
from ..front.parse import source_hash
from ..modes import Backend, Mode, Route
from ..pipeline import MODES, STAGE_NAMES, Session, rule_prefix
from ..version import __version__
from ..vocabulary.naming import rule_base
from .api import stage_source
from .higher_order import gradient_function, hessian_function, jacobian_function

PROG = "tangent-ast"


class UsageError(Exception):
    """A command-line problem the user can fix (bad target, missing directory, ...)."""


def _import_module(module_name):
    """Import ``module_name`` with the current directory first on ``sys.path``."""
    cwd = os.getcwd()
    if sys.path[:1] != [cwd]:
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if (
            exc.name
            and module_name.startswith(exc.name)
            and module_name[len(exc.name) :][:1] in ("", ".")
        ):
            raise UsageError(
                f"no module named {module_name!r} (looked in {cwd} and sys.path)"
            ) from exc
        raise UsageError(f"importing {module_name!r} failed: {exc}") from exc
    except Exception as exc:
        raise UsageError(f"importing {module_name!r} failed: {type(exc).__name__}: {exc}") from exc


def _lookup(module, qualname):
    """The object at dotted ``qualname`` inside ``module``, or None."""
    obj = module
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def resolve_target(target):
    """``"module:function"`` -> the function object; UsageError if it does not name one."""
    module_name, sep, qualname = target.partition(":")
    if not sep or not module_name or not qualname:
        raise UsageError(f"target {target!r} must be MODULE:FUNCTION (e.g. mymodel:loss)")
    module = _import_module(module_name)
    fn = _lookup(module, qualname)
    if fn is None:
        raise UsageError(f"module {module_name!r} has no function {qualname!r}")
    if not callable(fn):
        raise UsageError(f"{target} is not a function (it is {type(fn).__name__})")
    return getattr(fn, "__func__", fn)


def parse_wrt(text):
    """``"a,b"`` / ``"0,2"`` -> a tuple of parameter names and indices; None -> first parameter."""
    if text is None:
        return (0,)
    items = [item.strip() for item in text.split(",") if item.strip()]
    if not items:
        raise UsageError("--wrt needs at least one parameter name or index")
    return tuple(int(item) if item.lstrip("-").isdigit() else item for item in items)


def _signature(fn, text):
    """The argument kinds ``--args`` gives (None without it: a generic rule)."""
    if text is None:
        return None
    return parse_signature(text, list(inspect.signature(fn).parameters))


def _report_warnings(caught, staging=None, output=None):
    """Print warnings recorded while deriving as ``tangent-ast: warning:`` lines; a path in
    the ``staging`` copy is named as the file of the package ``output`` it becomes."""
    for w in caught:
        kind = "warning" if issubclass(w.category, StaleRuleWarning) else w.category.__name__
        message = str(w.message)
        if staging is not None:
            message = message.replace(str(staging), str(output))
        print(f"{PROG}: {kind}: {message}", file=sys.stderr)


def cmd_show(args):
    """Print the source of one stage of the derivation of the target."""
    fn = resolve_target(args.target)
    signature = _signature(fn, args.args)
    wrt = parse_wrt(args.wrt)
    text = stage_source(fn, args.mode, wrt, signature, args.stage, args.route, args.backend)
    sys.stdout.write(text)
    return 0


def _generated_modules(directory):
    """``(path, header)`` of every tangent_ast-generated module in ``directory``, sorted by name."""
    found = []
    for path in sorted(Path(directory).glob("*.py")):
        header = read_header(path.read_text(errors="replace"))
        if "source" in header and "source-hash" in header and "body-hash" in header:
            found.append((path, header))
    return found


def init_source(rules, directory, built=()):
    """The text of ``__init__.py``: imports of the targets' functions (and of the functions
    ``built`` on them: ``(module stem, name)``) and a listing of every module."""
    lines = [
        '"""Derivative rules generated by tangent_ast (`tangent-ast generate`).',
        "",
        "Regenerate with `tangent-ast generate`; `tangent-ast check` lists stale modules.",
        '"""',
        "",
        "# Modules in this package:",
    ]
    for path, header in _generated_modules(directory):
        lines.append(
            f"#   {path.stem}: {header['mode']} rule of {header['source'].split(' (')[0]} "
            f"wrt {header['wrt']}"
        )
    lines.append("")
    exported = {}
    for rule in rules:
        names = (
            [f"{rule_base(rule.fn)}_jvp"]
            if rule.mode is Mode.FORWARD
            else [f"{rule_base(rule.fn)}_fwd", f"{rule_base(rule.fn)}_bwd"]
        )
        for name in names:
            if exported.setdefault(name, rule.path.stem) != rule.path.stem:
                raise UsageError(
                    f"two targets both define {name} ({exported[name]} and "
                    f"{rule.path.stem}); generate them into separate packages"
                )
        lines.append(f"from .{rule.path.stem} import {', '.join(names)}")
    for stem, name in built:
        exported[name] = stem
        lines.append(f"from .{stem} import {name}")
    lines += ["", f"__all__ = [{', '.join(repr(n) for n in exported)}]"]
    return "\n".join(lines) + "\n"


GENERATE_MODES = MODES + ("hvp", "hessian", "jacobian")


def cmd_generate(args):
    """Derive each target into PACKAGE_DIR and print the paths of the targets' modules."""
    written = generate_package(
        args.targets,
        args.output,
        mode=args.mode,
        wrt=args.wrt,
        arg_kinds=args.args,
        standalone=args.standalone,
        force=args.force,
        route=args.route,
        backend=args.backend,
    )
    for path in written.targets:
        print(path)
    for path in written.callees:
        print(f"{path}  (a callee's rule, imported by the above)")
    return 0


@dataclass(frozen=True)
class GeneratedPackage:
    """What ``generate_package`` wrote: the modules of the targets, and those of the user
    functions they call, whose rules the targets' modules import."""

    targets: list
    callees: list


def generate_package(
    targets,
    output,
    *,
    mode="forward",
    wrt=None,
    arg_kinds=None,
    standalone=False,
    force=False,
    route=None,
    backend=None,
):
    """What ``tangent-ast generate`` does: derive each ``MODULE:FUNCTION`` of ``targets`` into
    the package directory ``output`` and write its ``__init__.py``, in a staging copy published
    only when everything succeeded, and only the files that changed (``tangent_ast.emit.package``).
    ``wrt`` and ``arg_kinds`` are the texts of ``--wrt`` and ``--args``; ``route`` that of
    ``--route`` (None: ``TANGENT_AST_ROUTE``, else direct), ``backend`` that of ``--backend``
    (None: NumPy). Returns the paths of
    the modules written (GeneratedPackage); raises UsageError or TangentAstError."""
    if mode not in GENERATE_MODES:
        raise UsageError(f"mode {mode!r} is not one of {', '.join(GENERATE_MODES)}")
    functions = [resolve_target(t) for t in targets]
    output = Path(output)
    with staged(output) as directory:
        session = Session(directory=directory, route=route, backend=backend)
        if session.backend is Backend.NUMBA and mode not in MODES:
            raise UsageError(f"--backend numba derives forward and reverse rules, not {mode}")
        rules, modules = _generate_into(
            session, functions, parse_wrt(wrt), mode, arg_kinds, standalone, force, output
        )
    targets = [output / rule.path.name for rule in rules]
    callees = sorted(output / p.name for p, _ in modules if output / p.name not in targets)
    return GeneratedPackage(targets, callees)


def _generate_into(session, functions, wrt, mode, arg_kinds, standalone, force, output):
    directory = session.directory
    if force:
        for path, _ in _generated_modules(directory):
            path.unlink()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", StaleRuleWarning)
        if mode in ("hvp", "hessian"):  # forward over reverse: the gradient's forward rule
            reverse = [
                session.rule(fn, Mode.REVERSE, wrt, _signature(fn, arg_kinds)) for fn in functions
            ]
            rules = [_gradient_forward_rule(session, rule) for rule in reverse]
        else:
            reverse = []
            rule_mode = Mode.FORWARD if mode == "jacobian" else mode
            rules = [
                session.rule(fn, rule_mode, wrt, _signature(fn, arg_kinds)) for fn in functions
            ]
        built = _built_on(mode, rules, functions)
    _report_warnings(caught, directory, output)
    # the modules of this run: the targets' and their callees' (others in the directory stay
    # as they are)
    prefixes = tuple(
        rule_prefix(g) + "__" for rule in rules + reverse for g in rule.dependencies.functions
    )
    modules = [(p, h) for p, h in _generated_modules(directory) if p.stem.startswith(prefixes)]
    _check_importable(modules)
    _link_runtime(directory, modules, standalone)
    init = directory / "__init__.py"
    existing = init.read_text() if init.exists() else None
    init.write_text(init_text(existing, init_source(rules, directory, built)))
    return rules, modules


def _built_on(mode, rules, functions):
    """For ``--mode jacobian``/``hessian``, the module written next to each forward rule
    (its stem and function): the Jacobian or Hessian by one pass on a batch of directions."""
    if mode not in ("jacobian", "hessian"):
        return []
    built = []
    for rule, fn in zip(rules, functions, strict=True):
        if len(rule.wrt) != 1:
            raise UsageError(f"--mode {mode} differentiates one argument: give --wrt NAME")
        name = f"{rule_base(fn)}_{mode}"
        made = (jacobian_function if mode == "jacobian" else hessian_function)(rule, fn, name)
        built.append((made.__module__.rsplit(".", 1)[-1], name))
    return built


def _gradient_forward_rule(session, rule):
    """The forward rule of the gradient of reverse ``rule`` (``f_gradient_jvp(*args,
    *directions)`` gives the gradient and the Hessian-vector product)."""
    gradient = gradient_function(rule)
    positions = tuple(rule.params.index(w) for w in rule.wrt)
    return session.rule(gradient, Mode.FORWARD, positions, rule.signature)


def _check_importable(modules):
    """A shipped module cannot get values from the loader: refuse the ones that need it."""
    for path, header in modules:
        if "bound-by-loader" in header:
            names = header["bound-by-loader"].split("  (")[0]
            raise UsageError(
                f"{path.name} reads {names}, which a generated package cannot import (a closure "
                f"cell, or a value of a script run as __main__); define it at module level of an "
                f"importable module, or pass it as an argument"
            )


RUNTIME_IMPORT = "from tangent_ast import runtime"
LOCAL_RUNTIME_IMPORT = "from . import runtime"


def _link_runtime(directory, modules, standalone):
    """With ``standalone``, copy the runtime into the package and import it from there, so
    the package needs no tangent_ast; without, import ``tangent_ast.runtime``."""
    if standalone:
        needs_tangent_ast = [
            p.name for p, _ in modules if "tangent_ast.function_values" in p.read_text()
        ]
        if needs_tangent_ast:
            raise UsageError(
                f"{', '.join(needs_tangent_ast)} call a function passed as a value, whose rule is "
                "derived when the call runs: that needs tangent_ast installed, so --standalone "
                "cannot be used for them"
            )
        copy = directory / "runtime"
        if copy.exists():
            shutil.rmtree(copy)
        # the compiled helpers (they import Numba) only for modules of the Numba backend
        compiled = any(COMPILED_RUNTIME_LINE.search(p.read_text()) for p, _ in modules)
        skipped = ("__pycache__",) + (() if compiled else ("compiled.py",))
        shutil.copytree(
            Path(runtime.__file__).parent, copy, ignore=shutil.ignore_patterns(*skipped)
        )
    for path, _ in modules:  # the import line only: the body (and its hash) is untouched
        text = path.read_text()
        new = RUNTIME_LINE.sub(
            lambda m: _runtime_import(m.group("alias"), standalone), text, count=1
        )
        new = COMPILED_RUNTIME_LINE.sub(
            lambda m: _compiled_runtime_import(m.group("alias"), standalone), new, count=1
        )
        if new != text:
            write_atomic(path, new)


# how a generated module imports the runtime: from tangent_ast, or from the package's copy
# (``as runtime_1`` when the user's function has a name ``runtime`` of its own)
RUNTIME_LINE = re.compile(
    r"^(?:from tangent_ast import runtime|from \. import runtime|import tangent_ast\.runtime)"
    r"(?: as (?P<alias>\w+))?$",
    re.M,
)


# a rule of the Numba backend reads the compiled versions of the runtime's helpers
COMPILED_RUNTIME_LINE = re.compile(
    r"^(?:import tangent_ast\.runtime\.compiled|from \.runtime import compiled) as (?P<alias>\w+)$",
    re.M,
)


def _compiled_runtime_import(alias, standalone):
    if standalone:
        return f"from .runtime import compiled as {alias}"
    return f"import tangent_ast.runtime.compiled as {alias}"


def _runtime_import(alias, standalone):
    line = LOCAL_RUNTIME_IMPORT if standalone else RUNTIME_IMPORT
    return line if alias in (None, "runtime") else f"{line} as {alias}"


def stale_reason(header, directory=None):
    """Why the module with ``header`` is stale, or None if its source function is unchanged.
    A module derived from another generated module of the package at ``directory`` (a
    second-order rule) is checked against that module."""
    target = header["source"].split(" (")[0]
    module_name, _, qualname = target.partition(":")
    try:
        if module_name.startswith(".") and directory is not None:  # a module of this package
            module = import_module(directory, module_name[1:])
        else:
            module = _import_module(module_name)
        fn = _lookup(module, qualname)
    except (UsageError, ImportError) as exc:
        return str(exc)
    if fn is None:
        return f"module {module_name!r} has no function {qualname!r} any more"
    try:
        source = inspect.getsource(getattr(fn, "__func__", fn).__code__)
    except (OSError, TypeError):
        return f"the source of {target} cannot be read"
    if source_hash(textwrap.dedent(source)) != header["source-hash"]:
        return f"{target} changed since it was derived"
    dependencies = dependencies_of(fn)
    if header.get("depends", "-") != dependencies.depends_field():
        return f"a function {target} calls changed since it was derived"
    if header.get("reads") != dependencies.reads_field():
        return f"a module-level value {target} reads has another kind than when it was derived"
    if header.get("calls") != dependencies.calls_field():
        return f"a name {target} calls denotes another function than when it was derived"
    return None


def cmd_check(args):
    """Exit 1 listing the modules in PACKAGE_DIR whose source function changed; 0 if all are
    fresh. Modules edited by hand are listed either way: tangent_ast uses them as they are
    (and `generate` replaces them only with --force)."""
    directory = Path(args.package_dir).resolve()
    if not directory.is_dir():
        raise UsageError(f"{directory} is not a directory")
    modules = _generated_modules(directory)
    if not modules:
        raise UsageError(f"{directory} holds no module generated by tangent_ast")
    stale, edited = [], []
    for path, header in modules:
        reason = stale_reason(header, directory)
        by_hand = body_hash_of(path.read_text()) != header["body-hash"]
        if by_hand:
            edited.append(path.name)
        if reason is not None:
            stale.append(f"{path.name}: {reason}" + (" (edited by hand)" if by_hand else ""))
    for line in stale:
        print(f"stale: {line}")
    for name in edited:
        print(f"edited by hand: {name} (used as it is)")
    hand = f"; {len(edited)} edited by hand" if edited else ""
    if stale:
        print(
            f"{len(stale)} of {len(modules)} modules are stale{hand}; run `{PROG} generate` "
            f"again (add --force to replace hand-edited modules)"
        )
        return 1
    print(f"all {len(modules)} modules are fresh{hand}")
    return 0


def build_parser():
    """The argparse parser with the show, generate and check subcommands."""
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    def add_rule_options(p):
        p.add_argument(
            "--mode",
            choices=GENERATE_MODES if p.prog.endswith("generate") else MODES,
            default="forward",
            help="forward (jvp), reverse (fwd/bwd), or for generate hvp (f_gradient_jvp: the "
            "gradient and the Hessian-vector product), hessian (f_hessian) or jacobian "
            "(f_jacobian)",
        )
        p.add_argument(
            "--route",
            choices=[r.value for r in Route],
            help="how reverse rules are derived: direct (each statement's reverse rule) or "
            "transpose (its forward rule transposed); default: $TANGENT_AST_ROUTE, else direct",
        )
        p.add_argument(
            "--backend",
            choices=[b.value for b in Backend],
            help="what runs the rules: numpy (the default) or numba (the same module, its "
            "functions compiled by numba.njit; needs the numba extra)",
        )
        p.add_argument(
            "--wrt", help="parameter names or indices, comma separated (default: the first)"
        )
        p.add_argument(
            "--args",
            help="the argument kinds to specialise for, e.g. 'w: float64[d], X: float64[n, d], "
            "y: float64[n], k: int, p: model.Params' (axes of one name have one length: the "
            "rule then needs no unbroadcast; ':' for an axis of any length; default: a generic "
            "rule, signature any)",
        )

    show = sub.add_parser("show", help="print one stage of a derivation")
    show.add_argument("target", metavar="MODULE:FUNCTION")
    add_rule_options(show)
    show.add_argument(
        "--stage",
        choices=STAGE_NAMES,
        default="module",
        help="stage to print; forward/reverse also select the mode (default: module)",
    )
    show.set_defaults(run=cmd_show)

    generate = sub.add_parser("generate", help="write derivative modules into a package directory")
    generate.add_argument("targets", nargs="+", metavar="MODULE:FUNCTION")
    add_rule_options(generate)
    generate.add_argument("-o", "--output", required=True, metavar="PACKAGE_DIR")
    generate.add_argument(
        "--standalone",
        action="store_true",
        help="copy tangent_ast's runtime into PACKAGE_DIR: the package then needs only NumPy",
    )
    generate.add_argument(
        "--force",
        action="store_true",
        help="discard every generated module in PACKAGE_DIR first, hand edits included",
    )
    generate.set_defaults(run=cmd_generate)

    check = sub.add_parser("check", help="exit 1 if generated modules are stale")
    check.add_argument("package_dir", metavar="PACKAGE_DIR")
    check.set_defaults(run=cmd_check)
    return parser


def main(argv=None):
    """Run the command line; return the exit status (0 ok, 1 stale modules, 2 error)."""
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (UsageError, TangentAstError) as exc:
        print(f"{PROG}: error: {one_line(exc)}", file=sys.stderr)
        return 2


def one_line(exc):
    """The message of ``exc`` on one line (its lines joined by ``; ``)."""
    return "; ".join(line.strip() for line in str(exc).splitlines())
