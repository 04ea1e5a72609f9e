"""The recipe: every stage of a derivation, in order.

    parse      function object -> gast FunctionDef with file/line         front/parse.py
    dict comp  d = {k: v for x in xs}: d = {} and the loop filling it     front/dict_comps.py
    flatten    *args/**kwargs/keyword-only -> plain positional params     vocabulary/calling.py
    check      refuse what no stage handles (yield, eval, ...)            front/checks.py
    resolve    free names -> objects (closure cells, globals, builtins)   front/resolve.py
    inline     a helper updating an argument in place -> its body         front/helper_inlining.py
    rebound    an argument updated in place, then rebound: named apart    front/rebound_arguments.py
    updates    arrays and lists changed in place, who else holds them     front/aliasing.py
               fields of dataclass instances assigned                     front/record_updates.py
    normalize  one operation per statement, structured returns            front/lowering/
    ssa        each name assigned once per path, explicit joins           front/ssa.py
    kinds      what each value is, from the signature                     analysis/kind_inference.py
    write out  np.r_[...], np.c_[...], np.gradient of n-d: as NumPy does   analysis/written_out.py
    lists      a list given to a NumPy function: np.asarray of it first   analysis/list_arguments.py
    aliasing   a += b on a shared array followed, or refused              analysis/shared_updates.py
    views      views read after their base changes refused, or copied     analysis/views.py
    activity   which values carry derivatives                             analysis/activity.py
    forward    (mode="forward") tangent statement after each one          transform/forward.py
    reverse    (mode="reverse") forward sweep + transposed reverse sweep  transform/reverse.py
               route="transpose": each adjoint from the forward rule      transform/transpose.py
    simplify   copies, single-use temporaries, dead code, constants       optimize/simplify.py
    tapes      (reverse) save what reverse loops read, by iteration       transform/tapes.py
    checkpoint (reverse) checkpointed loops: binomial snapshots           transform/checkpoints.py
    recompute  (reverse) sizes, one-pass residuals: computed again        transform/recompute.py
    accumulate (reverse) cotangents of slices of an array added in place  transform/accumulate.py
    hoist      (reverse) what a reverse loop computes the same, once before  optimize/hoisting.py
    numba      (backend="numba") written in what numba.njit compiles      transform/for_numba.py
    literals   ints that meet floats written as floats (2.0 * x)          optimize/float_literals.py
    emit       FunctionDefs -> module text with header and imports        emit/emit.py
    load       write atomically to the cache, import                      cache/load.py

The paths are under ``tangent_ast/``, whose folders are the layers of docs/architecture.md.
``front`` runs the stages up to views (they do not depend on the mode), ``derive_module``
the rest; ``Session`` remembers rules derived in this process and derives the rules of
called user functions (recursion included). Each stage module's docstring says what it
takes and guarantees, with an example that runs as a doctest.

>>> def f(x):
...     return x * x
>>> rule = Session().rule(f, "reverse", 0, None)
>>> out, saved = rule.fwd(3.0)
>>> out, rule.bwd(saved, 1.0)
(9.0, 6.0)
"""

import contextlib
import copy
import gc
import inspect
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

import gast

from . import runtime
from .analysis.activity import analyze
from .analysis.kind_inference import infer
from .analysis.list_arguments import arrays_from_lists
from .analysis.shared_updates import check_augmented, follow_argument_aliases, follow_shared_updates
from .analysis.views import check_views, copy_views
from .analysis.written_out import drop_decided_branches, write_out
from .cache.cached import (  # noqa: F401  (DerivedRule, rule_prefix: what a rule is, named here too)
    DerivedRule,
    RuleCache,
    by_prefix,
    closure_at,
    module_name_for,
    rule_prefix,
    wrt_names,
)
from .cache.live import dependencies_of
from .cache.load import (
    OnDisk,
    as_on_disk,
    bound_by_loader,
    has_own_values,
    loadable,
    loaded_values,
    name_in_cache,
    package_for,
    state_of,
    warn_stale,
    write_atomic,
)
from .derived import portable_name
from .emit.emit import (
    ModuleNamespace,
    Provenance,
    module_source,
    rule_source_hash,
    to_ast,
)
from .errors import ForwardRuleOnly, InternalError, NotDifferentiableError, TangentAstError
from .front.aliasing import check_updates
from .front.checks import check_dynamic, check_supported
from .front.dict_comps import write_out_dict_comprehensions
from .front.helper_inlining import inline_updating_helpers
from .front.lowering import Normalizer
from .front.lowering.api_calls import bind_made
from .front.parse import ParsedFunction, parse
from .front.rebound_arguments import rename_rebound_arguments
from .front.record_updates import augmented_items, check_field_updates
from .front.resolve import Scope, resolve
from .front.ssa import SSAInfo, to_ssa
from .modes import Backend, Mode, Route
from .optimize.float_literals import float_names, write_float_literals
from .optimize.hoisting import hoist_invariants
from .optimize.simplify import is_pure, restore_names, simplify
from .transform.accumulate import accumulate_slices, fold_zero_starts
from .transform.checkpoints import checkpoint_loops
from .transform.derivatives import Derivation
from .transform.for_numba import NumbaLowering
from .transform.forward import forward
from .transform.recompute import recompute_residuals
from .transform.residuals import pass_residuals, residuals_of
from .transform.reverse import finish_updates, residuals_parameter, reverse
from .transform.tapes import install_tapes
from .transform.unzip import unzipped
from .version import __version__
from .vocabulary.calling import PLAIN, Spread, flat_params, flatten
from .vocabulary.kinds import UNKNOWN, Kind, Tag, canonical, describe_signature
from .vocabulary.naming import Namer, rule_base
from .vocabulary.syntax import attribute, name, unparse, updated_arrays
from .vocabulary.trees import copy_tree, twins_by_id, walk

MODES = tuple(mode.value for mode in Mode)
STAGE_NAMES = (
    *("parse", "normalize", "ssa", "forward", "reverse"),
    *("linearize", "unzip", "transpose"),  # the transpose route's stages (api.stage_source)
    *("simplify", "module"),
)


@dataclass
class Front:
    """What the mode-independent stages produce."""

    parsed: ParsedFunction
    scope: Scope
    namer: Namer
    function: gast.FunctionDef  # in SSA form
    ssa_info: SSAInfo
    kinds: dict[str, Kind]
    temps: set[str]
    updated: set[str]  # arrays updated in place (arguments included)
    spread: Spread | None  # what *args/**kwargs were flattened into
    changed_args: set  # arguments left changed: arrays updated in place, lists written back
    handlers: list  # lines of except clauses: not derived (a call that runs one is refused)
    snapshots: dict = field(default_factory=dict)
    checkpoints: dict = field(default_factory=dict)  # id of a loop of `function` -> snapshots
    made: dict = field(default_factory=dict)  # names made for calls of the API -> their values


def front(fn, signature, trace=False, form=PLAIN):
    parsed = write_out_dict_comprehensions(parse(fn))
    spread = flatten(parsed, form)
    check_supported(parsed)
    scope = resolve(parsed)
    check_dynamic(parsed, scope)
    params = [a.id for a in parsed.node.args.args]
    # a signature may be shorter than the parameters: those have their defaults
    array_params = (
        None if signature is None else {p for p, k in zip(params, signature) if k.tag is Tag.ARRAY}
    )
    list_params = {p for p, k in zip(params, signature or ()) if k.tag is Tag.LIST}
    namer = Namer(scope.locals | set(scope.free))
    param_kinds = dict(zip(params, signature or ()))
    parsed = inline_updating_helpers(parsed, scope, namer, param_kinds)
    parsed = rename_rebound_arguments(parsed, scope, namer, param_kinds)
    rewritten = follow_argument_aliases(
        parsed.node, None if signature is None else dict(zip(params, signature))
    )
    if rewritten is not parsed.node:
        parsed = replace(parsed, node=rewritten)
    dict_params = {p for p, k in zip(params, signature or ()) if k.tag is Tag.DICT}
    updated, lists, dicts = check_updates(parsed, scope, array_params, list_params, dict_params)
    records = check_field_updates(parsed, scope, param_kinds)
    items = augmented_items(parsed, scope, param_kinds, (lists | dicts) & set(params))
    # xs[i] = v calls runtime.list_with (and a list argument runtime.write_list)
    if lists or records or dicts:
        scope.bind(runtime, namer, "runtime")
    normalizer = Normalizer(
        parsed, scope, namer, updated & set(params), lists, spread, records | items, dicts
    )
    normalized = normalizer.function(copy_tree(parsed.node))
    temps = namer.taken - scope.locals - set(scope.free)
    snapshots = {"parse": parsed.source} if trace else {}
    if trace:
        snapshots["normalize"] = _source(normalized)
    # SSA rewrites in place; the normalized function is read again for the loops to checkpoint
    ssa_fn = copy_tree(normalized) if normalizer.checkpoints else normalized
    checkpoints = twins_by_id(normalizer.checkpoints, normalized, ssa_fn, gast.For)
    # each loop's item read, and whether its loop was over d.items() or the like
    viewed = {id(s) for s in normalizer.dict_view_reads}
    item_reads = {id(s): id(s) in viewed for s in normalizer.item_reads}
    item_reads = twins_by_id(item_reads, normalized, ssa_fn)
    info = to_ssa(ssa_fn, namer, lambda: _runtime_attribute(scope, namer, "UNSET"))
    scope.locals |= set(info.origin) | temps
    if trace:
        snapshots["ssa"] = _source(ssa_fn)
    kinds = infer(ssa_fn, scope, signature, result_kind, info.unset)
    if drop_decided_branches(ssa_fn, scope, kinds):  # `if np.iscomplexobj(x):` of a known x
        kinds = infer(ssa_fn, scope, signature, result_kind, info.unset)
    while made := write_out(
        parsed, ssa_fn, scope, kinds, namer, item_reads
    ):  # np.r_[x, c] and the like
        scope.locals |= set(made)
        temps |= set(made)
        kinds = infer(ssa_fn, scope, signature, result_kind, info.unset)
    made_arrays = arrays_from_lists(ssa_fn, scope, kinds, namer)
    if made_arrays:  # np.sum(b) of a list b: np.sum(b_array), b_array = np.asarray(b)
        scope.locals |= set(made_arrays)
        temps |= set(made_arrays)
        kinds = infer(ssa_fn, scope, signature, result_kind, info.unset)
    # the names made for calls of tangent_ast's API: the functions they stand for, by name
    if normalizer.made:  # bound, the calls of what the API made have their results' kinds
        bind_made(ssa_fn, scope, kinds, normalizer.made)
        kinds = infer(ssa_fn, scope, signature, result_kind, info.unset)
    follow_shared_updates(ssa_fn, info.origin, kinds, scope, normalizer.augmented, namer)
    check_augmented(parsed, ssa_fn, info.origin, kinds, scope, normalizer.augmented)
    if updated:
        # every SSA version of an array updated in place (v1_1 = v1.copy(); v1_1[1] = ...)
        versions = updated | {v for v, user in info.origin.items() if user in updated}
        check_views(parsed, ssa_fn, versions, kinds, scope)
        copy_views(ssa_fn, versions, kinds, namer, scope)
        scope.locals |= set(namer.taken) & set(kinds)
    temps |= {v for v, user in info.origin.items() if user in temps}
    return Front(
        parsed,
        scope,
        namer,
        ssa_fn,
        info,
        kinds,
        temps,
        updated,
        spread,
        (updated | lists | dicts | set(records) | normalizer.written_back) & set(params),
        normalizer.handlers,
        snapshots,
        checkpoints,
        normalizer.made,
    )


def _runtime_attribute(scope, namer, attr):
    """``runtime.<attr>``, the runtime bound in ``scope`` under a name of its own."""
    return attribute(scope.bind(runtime, namer, "runtime"), attr)


_RESULT_KINDS: dict[tuple, tuple] = {}


def result_kind(fn, arg_kinds, form=PLAIN):
    """The kind of what user function ``fn`` returns for (flattened) arguments of ``arg_kinds``.

    Remembered while what ``fn`` reaches is unchanged (a callee redefined, a global
    rebound to a value of another kind change it)."""
    key = (fn, canonical(arg_kinds), form)
    known = _RESULT_KINDS.get(key)
    if known is None or not known[0].current():
        dependencies = dependencies_of(fn)
        _RESULT_KINDS[key] = (dependencies, UNKNOWN)  # while we look (recursion): unknown
        try:
            f = front(fn, canonical(arg_kinds), form=form)
            kind = replace(f.kinds.get(f.function.body[-1].value.id, UNKNOWN), shape=None)
            _RESULT_KINDS[key] = (dependencies, kind)
        except TangentAstError:
            pass
    return _RESULT_KINDS[key][1]


def _source(fn):
    return unparse(to_ast(copy_tree(fn))) + "\n"


@dataclass
class CalleeRule:
    """A derived rule of a called user function, as the caller refers to it."""

    fn: object
    module_name: str
    same_module: bool
    # the callee reaches the caller again (f calls g calls f): its module is imported as a
    # module, whose functions are looked up when called, since neither can import the
    # other's functions before both exist
    cyclic: bool = False
    # a closure the caller reads by the free name (or attribute chain) ``via``: another
    # closure of the same def has the same module with other cells, so the caller's module
    # gets this one's functions from its loader, which loads the module with these cells
    via: str | None = None

    def reference(self, suffix, namespace):
        """The expression generated code calls the callee's ``f_<suffix>`` by."""
        local = f"{rule_base(self.fn)}_{suffix}"
        if self.same_module:
            return name(local)
        if self.via is not None:
            preferred = f"{self.via.rpartition('.')[2]}_{suffix}"
            return name(namespace.bind_closure_rule(preferred, self.via, self.module_name, local))
        if self.cyclic:
            module = namespace.bind_relative_module(f"{rule_base(self.fn)}_rules", self.module_name)
            return gast.Attribute(value=name(module), attr=local, ctx=gast.Load())
        return name(namespace.bind_relative(local, self.module_name, local))


@dataclass
class GeneratedModule:
    name: str
    text: str
    functions: tuple  # names of the functions it defines
    loader_names: list  # names the loader binds
    rules_used: set
    callees: list
    snapshots: dict
    rule_values: dict = field(default_factory=dict)  # loader-bound values of the rules used


def derive_module(fn, mode, wrt, signature, session, trace=False, form=PLAIN):
    """Run every stage but load: the text of the module of ``fn``'s rule (for calls of ``form``).
    A failure that is not a TangentAstError is a bug of tangent_ast: an InternalError."""
    mode = Mode.of(mode)
    try:
        with _collector_paused():
            return _derive_module(fn, mode, wrt, signature, session, trace, form)
    except TangentAstError:
        raise
    except Exception as exc:
        code = fn.__code__
        raise InternalError(
            f"deriving the {mode} rule of {fn.__qualname__} failed inside tangent_ast: "
            f"{type(exc).__name__}: {exc}",
            where=f"{code.co_filename}:{code.co_firstlineno}",
            hint="this is a bug of tangent_ast: please report it with this function",
        ) from exc


@contextlib.contextmanager
def _collector_paused():
    """Python's cyclic garbage collector off while a rule is derived (unless it was off).

    A derivation makes hundreds of thousands of tree nodes, most of them alive until it
    ends, and each collection of the oldest generation walks all of them: a sixth of the
    time of a 500-statement function. Trees hold no reference cycles: what they drop is
    freed at once, and the few cycles left (closures) are collected afterwards."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _derive_module(fn, mode, wrt, signature, session, trace, form):
    f = front(fn, signature, trace, form)
    _check_output(f)
    wrt = wrt_names([a.id for a in f.function.args.args], wrt, f.parsed.qualname, f.parsed.where())
    params = [a.id for a in f.function.args.args]
    for w in wrt:
        kind = f.kinds.get(w, UNKNOWN)
        if not kind.differentiable:
            raise NotDifferentiableError(
                f"parameter {w!r} of {f.parsed.qualname} is {kind.describe()}: it has no "
                "derivative",
                where=f.parsed.where(),
                hint="differentiate with respect to float arguments or float arrays (a "
                "starting point of integers, np.array([0, 1]) or a SciPy solver's x0=[0, 1], "
                "stays integer: write it with floats, [0.0, 1.0])",
            )
    module_name = module_name_for(fn, mode, wrt, signature, form, session.route, session.backend)
    base = f.parsed.name
    functions = mode.function_names(base)
    f.namer.reserve(*functions)
    namespace = ModuleNamespace(f.namer)
    namespace.package = package_for(session.directory)
    for free_name, obj in f.scope.free.items():
        via = f.scope.made_from.get(free_name)
        if via is not None and loaded_values(obj):
            # a function of a closure's rule module (vjp_of_g's): another closure of the same
            # def shares that module with other cells, so the loader binds this closure's
            namespace.bind_closure_rule_as(free_name, via, name_in_cache(obj.__module__), obj)
        else:
            namespace.bind_user(
                free_name, obj, _home_module(fn, free_name, obj) or f.scope.homes.get(free_name)
            )

    def derive_callee(
        callee_fn, callee_mode, positions, kinds, where, callee_form=PLAIN, called=None
    ):
        return session.callee(
            callee_fn,
            callee_mode,
            positions,
            kinds,
            where,
            module_name,
            callee_form,
            caller=fn,
            via=_via(called, f.scope),
        )

    d = Derivation(
        parsed=f.parsed,
        scope=f.scope,
        namer=f.namer,
        kinds=f.kinds,
        activity=None,
        mode=mode,
        namespace=namespace,
        derive_callee=derive_callee,
        temps=f.temps,
        carried=set(f.ssa_info.carried),
        loop_headers=f.ssa_info.loop_headers,
        origin=f.ssa_info.origin,
        route=session.route,
    )
    d.activity = analyze(
        f.function,
        f.kinds,
        wrt,
        d.differentiable_args,
        _final_states(f) if mode is Mode.FORWARD else (),
        d.called_value,
    )
    d.check_complex(f.function)
    d.check_lambda_values(f.function)
    d.check_calls(f.function)
    user_names = {v for v, user in f.ssa_info.origin.items() if user not in f.temps} | set(params)
    # what the primal function holds as floats, read before the stages below share and
    # rewrite its statements (float_literals)
    result = f.function.body[-1].value.id
    floats = float_names(
        f.function,
        {p for p in params if f.kinds.get(p, UNKNOWN).tag is Tag.FLOAT},
        namespace.objects,
    )

    def rewritable(fn_def):
        return {n.id for n in walk(fn_def) if isinstance(n, gast.Name)} - user_names

    origin = dict(f.ssa_info.origin)
    for primal, tangent in d.tangent_names.items():
        origin.setdefault(tangent, "d" + origin.get(primal, primal))
    snapshots = dict(f.snapshots)
    taped = {}  # tape -> the value it keeps, of each loop of a reverse rule
    if mode is Mode.FORWARD:
        jvp = forward(d, f.function, wrt)
        if trace:
            snapshots["forward"] = _source(jvp)
            snapshots["unzip"] = unzipped(jvp, d.tangent_names.values(), copy.deepcopy(f.namer))
        user_derivatives = {d.tangent_names[v] for v in user_names if v in d.tangent_names}
        generated = [
            simplify(jvp, rewritable(jvp), namespace, keep=user_derivatives, origin=origin)
        ]
    else:
        sweeps = reverse(d, f.function, wrt)
        fwd, bwd = sweeps.fwd, sweeps.bwd
        if trace:
            snapshots["reverse"] = _source(fwd) + "\n" + _source(bwd)

        def simplified(bwd):
            return simplify(
                bwd,
                rewritable(bwd) - {residuals_parameter(bwd)},
                namespace,
                origin=origin,
                same_shape=lambda a, b: _same_float_shape(f.kinds, a, b),
            )

        bwd = simplified(bwd)
        copied = finish_updates(bwd, sweeps.restores)
        tapes = install_tapes(
            fwd,
            bwd,
            sweeps.loops,
            f.namer,
            d.loop_headers,
            recomputable=lambda st: is_pure(st.value, namespace),
            is_scalar=lambda v: f.kinds.get(v, UNKNOWN).scalar,
            unset=lambda: attribute(namespace.bind("runtime", runtime), "UNSET"),
            changed=updated_arrays(fwd.body) - copied,
        )
        if checkpoint_loops(fwd, bwd, sweeps.loops, tapes, f, namespace):
            # the iterations run again in the reverse sweep are the forward sweep's loop body,
            # not yet simplified: its copies fold as the forward sweep's will
            bwd = simplified(bwd)
        residuals = recompute_residuals(
            fwd, bwd, residuals_of(fwd, bwd, params, copied), f.kinds, f.updated
        )
        pass_residuals(fwd, bwd, residuals)
        fwd = simplify(fwd, rewritable(fwd) - set(residuals), namespace, origin=origin)
        accumulate_slices(bwd, f.kinds, namespace)
        fold_zero_starts(bwd, f.kinds, namespace)
        hoist_invariants(bwd, f.namer)
        generated = [fwd, bwd]
        taped = {tape: v for saved, _ in tapes.values() for v, tape in saved.items()}
    if session.backend is Backend.NUMBA:
        lowering = NumbaLowering(
            f.kinds, namespace, f.parsed.where_line, f.parsed.qualname, f.kinds.get(result, UNKNOWN)
        )
        lowering.lower(generated, taped)
    derivatives = _float_derivatives(generated, result, floats, wrt, mode)
    for g, known in zip(generated, derivatives, strict=True):
        write_float_literals(g, floats | known, namespace.objects)
    forbidden = (
        set(namespace.objects)
        | set(namespace.relative)
        | set(namespace.closure_rules)
        | set(functions)
    )
    kept = (
        set(params)
        | {"ct_" + p for p in params}
        | {d.tangent_names.get(p, "d" + p) for p in params}
    )
    for g in generated:
        restore_names(g, forbidden, kept)
    if trace:
        snapshots["simplify"] = "\n".join(_source(g) for g in generated)
    dependencies = dependencies_of(fn)
    provenance = Provenance(
        qualname=f.parsed.qualname,
        module=portable_name(f.parsed.module),
        filename=f.parsed.filename,
        line=f.parsed.first_line,
        source_hash=f.parsed.source_hash,
        rules_hash=rule_source_hash(),
        signature=describe_signature(signature),
        mode=mode,
        wrt=wrt,
        version=__version__,
        depends=dependencies.depends_field(),
        reads=dependencies.reads_field(),
        calls=dependencies.calls_field(),
        updates=tuple(p for p in params if p in f.changed_args),
        packed=f.spread.describe(),
        route=session.route.value if mode is Mode.REVERSE else Route.DIRECT.value,
        backend=session.backend.value,
    )
    handlers = ", ".join(map(str, f.handlers))
    notes = (
        [f"exception-handlers: {handlers}  (not derived: a call that runs one is refused)"]
        if f.handlers
        else []
    )
    text, loader = module_source(
        generated, namespace, provenance, lambda line: _absolute(f.parsed, line), notes=notes
    )
    if trace:
        snapshots["module"] = text
    # values the loader binds that the function's own names do not give: those of the rules
    # inlined, and what a call of tangent_ast's API made (api_calls.py)
    rule_values = {
        n: namespace.objects[n]
        for n in loader
        if n in namespace.objects and (n not in f.scope.free or n in f.made)
    }
    return GeneratedModule(
        module_name, text, functions, loader, d.rules_used, d.callees, snapshots, rule_values
    )


def _check_output(f):
    """A function's result must be able to carry a derivative: not None, not a string."""
    returns = [n for n in _own_nodes(f.parsed.node) if isinstance(n, gast.Return)]
    kind = f.kinds.get(f.function.body[-1].value.id, UNKNOWN)
    if not any(r.value is not None for r in returns) or kind.tag in (Tag.NONE, Tag.STR):
        what = "nothing (None)" if kind.tag in (Tag.NONE, Tag.UNKNOWN) else f"a {kind.tag}"
        raise NotDifferentiableError(
            f"{f.parsed.qualname} returns {what}: there is nothing to differentiate",
            where=f.parsed.where(),
            hint="return the value to differentiate",
        )


def _own_nodes(node):
    """The nodes of a function, without those of the functions nested in it."""
    for child in gast.iter_child_nodes(node):
        if not isinstance(child, (gast.FunctionDef, gast.Lambda)):
            yield child
            yield from _own_nodes(child)


def _final_states(f):
    """Names holding the arguments' states after the call: arrays updated in place keep
    their names; a list argument's last value is written back (runtime.write_list)."""
    names = {a.id for a in f.function.args.args if a.id in f.changed_args}
    for n in walk(f.function):
        if (
            isinstance(n, gast.Expr)
            and isinstance(n.value, gast.Call)
            and f.scope.lookup(n.value.func) is runtime.write_list
        ):
            names |= {a.id for a in n.value.args}
    return names


def _float_derivatives(generated, result, floats, wrt, mode):
    """For each generated function, its derivative parameters that hold floats: a float's
    tangent (``f_jvp(x, dx)``), the cotangent of a float result (``f_bwd(saved, ct_out)``;
    ``f_fwd`` has none)."""
    if mode is Mode.FORWARD:
        (jvp,) = generated
        tangents = [a.id for a in jvp.args.args][len(jvp.args.args) - len(wrt) :]
        return [{d for d, w in zip(tangents, wrt, strict=True) if w in floats}]
    _, bwd = generated
    return [set(), {bwd.args.args[1].id} if result in floats else set()]


def _same_float_shape(kinds, a, b):
    ka, kb = kinds.get(a, UNKNOWN), kinds.get(b, UNKNOWN)
    return (
        ka.shape is not None
        and ka.shape == kb.shape
        and ka.tag in (Tag.ARRAY, Tag.UNKNOWN)
        and ka.dtype in ("f", "c", None)
    )


def _absolute(parsed, line):
    return parsed.file_line(line)


_SESSIONS_BY_DIRECTORY: dict[tuple, "Session"] = {}


def rule_again(fn, mode, wrt, signature, form, directory, route="direct", backend="numpy"):
    """A pickled :class:`DerivedRule` in this process: from the cache directory it was
    written to, derived again if it is not there (or stale)."""
    session = _SESSIONS_BY_DIRECTORY.get((directory, route, backend))
    if session is None:
        session = Session(directory=Path(directory), route=route, backend=backend)
        _SESSIONS_BY_DIRECTORY[(directory, route, backend)] = session
    return session.rule(fn, mode, wrt, signature, form)


class Session(RuleCache):
    """Derived rules of this process, keyed by function, mode, wrt and signature: found in
    the cache (:class:`~tangent_ast.cache.cached.RuleCache`), else derived.

    A rule is used again only while the program it was derived from is unchanged
    (``live.Dependencies.current``); otherwise it is derived or loaded again."""

    def __init__(self, directory=None, strict=False, route=None, backend=None):
        super().__init__(directory, strict, route, backend)
        self.in_progress = set()

    def rule(self, fn, mode=Mode.FORWARD, wrt=0, signature=None, form=PLAIN):
        """The rule of ``fn`` for calls of ``form`` with arguments of ``signature``."""
        fn = getattr(fn, "__func__", fn)
        mode = Mode.of(mode)
        if not inspect.isfunction(fn):
            parse(fn)  # raises the NoSourceError that explains
        wrt = wrt_names(flat_params(fn, form), wrt, fn.__qualname__)
        signature = canonical(signature)
        key = (fn, mode, wrt, signature, form)
        known = self.rules.get(key)
        current = known is not None and known.dependencies.current()
        # a module edited (or deleted) since it was loaded is loaded again: ``.source`` runs
        if current and as_on_disk(known.module):
            return known
        if known is not None and not current:
            program_changed()
        dependencies = self.dependencies(fn)
        module_name = module_name_for(fn, mode, wrt, signature, form, self.route, self.backend)
        generated = self.ensure(fn, mode, wrt, signature, module_name, form)
        return self.load(key, module_name, dependencies, generated.rules_used if generated else ())

    def ensure(self, fn, mode, wrt, signature, module_name, form=PLAIN):
        """Make the module on disk current; return the GeneratedModule if it was (re)derived."""
        path = self.directory / f"{module_name}.py"
        expected = self.expected_header(fn)
        state = state_of(path, expected) if expected is not None else OnDisk.STALE
        if state in (OnDisk.FRESH, OnDisk.EDITED, OnDisk.EDITED_STALE):
            if state is OnDisk.EDITED_STALE:
                warn_stale(path, fn.__qualname__, self.strict)
            callees = by_prefix(self.dependencies(fn))
            if not loadable(
                self.directory,
                module_name,
                fn,
                self.rule_values,
                callees,
                closures=self.closure_callees,
                rules=self.rule_callee,
            ):
                # a callee's module deleted, or values its rules read not met yet: derived in
                # memory (callee modules written, values learnt), its own file kept as it is
                self._derive(fn, mode, wrt, signature, form)
            return None
        generated = self._derive(fn, mode, wrt, signature, form)
        write_atomic(path, generated.text)
        return generated

    def _derive(self, fn, mode, wrt, signature, form):
        key = (fn, mode, wrt, signature, form)
        self.in_progress.add(key)
        try:
            try:
                generated = derive_module(fn, mode, wrt, signature, self, form=form)
            except ForwardRuleOnly:
                if self.route is Route.TRANSPOSE:
                    raise
                # a call of a function with a forward rule only: its rule transposed, by the
                # transpose route (the module keeps this route's name, its header says which)
                generated = derive_module(fn, mode, wrt, signature, self.transposed(), form=form)
        finally:
            self.in_progress.discard(key)
        self.rule_values[generated.name] = generated.rule_values
        return generated

    def transposed(self):
        """The session of this directory whose reverse rules are derived by the transpose route."""
        key = (str(self.directory), Route.TRANSPOSE.value, self.backend.value)
        if key not in _SESSIONS_BY_DIRECTORY:
            _SESSIONS_BY_DIRECTORY[key] = Session(
                self.directory, self.strict, Route.TRANSPOSE, self.backend
            )
        return _SESSIONS_BY_DIRECTORY[key]

    def callee(
        self,
        fn,
        mode,
        positions,
        kinds,
        where,
        caller_module,
        form=PLAIN,
        caller=None,
        via=None,
    ):
        """The rule of ``fn`` called by ``caller`` (which reads it as ``via``, a free name or
        attribute chain, when it does), its module on disk."""
        params = flat_params(fn, form)
        wrt = tuple(params[i] for i in positions)
        signature = canonical(kinds)
        module_name = module_name_for(fn, mode, wrt, signature, form, self.route, self.backend)
        if (fn, mode, wrt, signature, form) not in self.in_progress:
            self.ensure(fn, mode, wrt, signature, module_name, form)
        cyclic = caller is not None and caller in self.dependencies(fn).functions
        same_module = module_name == caller_module
        read = closure_at(caller, via, module_name, self.directory) if via else None
        instance = (
            read is not None
            and not (cyclic or same_module)
            and has_own_values(fn)
            # the closure itself, or a function of its rule module (jvp_of_g's, vjp_of_g's)
            and (read is fn or bool(loaded_values(fn)))
        )
        return CalleeRule(fn, module_name, same_module, cyclic, via if instance else None)


def _via(called, scope):
    """How the caller reads the closure whose rules a call's callee is (``_free_chain``; for
    a name made for a call of tangent_ast's API, ``jvp_of_g``, the ``g`` it is made of)."""
    chain = _free_chain(called, scope)
    return scope.made_from.get(chain, chain)


def _free_chain(expr, scope):
    """``"a.b"`` for ``expr`` a free name or an attribute chain of one (what a function
    reads a callee by), else None."""
    parts = []
    while isinstance(expr, gast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, gast.Name) or scope.is_local(expr.id):
        return None
    return ".".join([expr.id, *reversed(parts)])


def program_changed():
    """Something a rule was derived against was rebound: forget what was inferred from it."""
    _RESULT_KINDS.clear()


def _home_module(fn, name, obj):
    """The module ``name`` is a global of, if generated code can import it from there: a
    module of its own (not ``__main__``), where ``name`` is ``obj``; else None (closure
    cells, values of a script or a notebook, which the loader binds)."""
    home = getattr(fn, "__module__", None)
    if name in fn.__code__.co_freevars or home in (None, "__main__"):
        return None
    module = sys.modules.get(home)
    if module is None or getattr(module, name, _NOT_THERE) is not obj:
        return None
    if name_in_cache(home) and name in bound_by_loader(module.__file__):
        # a value the loader bound in a generated module (a closure's cell): each closure's
        # module holds its own, so it is bound again, not imported from the one of the name
        return None
    return home


_NOT_THERE = object()
