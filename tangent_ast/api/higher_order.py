"""Second derivatives and Jacobians: Hessian-vector products by forward mode over the
reverse rule; dense Hessians and Jacobians in one pass, with every direction at once as a
batch of tangents (:mod:`tangent_ast.runtime.jacobians`).

A derived reverse rule is a Python module on disk, so it can be differentiated like any
other code: the gradient ``g(x) = f_bwd(f_fwd(x)[1], 1.0)`` is written as a one-function
module next to it, and the forward rule of that function gives ``H v`` (Mooncake's and
JAX's forward-over-reverse). Every helper the generated code calls has rules of its own
(``rules/runtime_helpers.py``); a helper without them is a clear ``MissingRuleError``.

>>> import numpy as np, tangent_ast as ta
>>> def f(x):
...     return np.sum(x ** 3)
>>> ta.hvp(f)(np.array([1.0, 2.0]), np.array([1.0, 0.0]))
array([6., 0.])
"""

import copy
import inspect
import re
from pathlib import Path

import numpy as np

from ..errors import TangentAstError
from ..modes import Mode
from ..runtime.jacobians import run_batched, unit_directions
from ..transform.composed import tangent_text
from ..vocabulary.api_roles import Role, register, register_second_order
from ..vocabulary.calling import PLAIN, flat_arguments
from ..vocabulary.kinds import signature_of
from ..vocabulary.naming import rule_base, sanitize
from .api import Made, _session, guarded, refuse_batch_of_updates, source_of, vjp
from .companions import companion_function, gradient_function
from .sessions import as_function


def hvp(f, wrt=0, *, cache=None):
    """A function ``(*args, v) -> H v``: the Hessian of scalar-valued ``f`` with respect to
    ``wrt`` at ``args``, times ``v`` (a tuple of directions when ``wrt`` is a tuple), by
    forward mode over ``f``'s reverse rule. ``hvp(f)(*args, V, batched=True)`` takes
    directions along a leading axis of ``V`` and gives ``H v`` for each, in one pass."""
    session = _session(cache)
    given, f = f, as_function(f, session.directory)
    several = isinstance(wrt, (tuple, list))

    def hessian_vector_product(*args_and_v, batched=False):
        if not args_and_v:
            raise TangentAstError("hvp: give the arguments of the function, then the direction")
        *args, v = args_and_v
        forward, flat = _forward_over_reverse(f, wrt, session, args)
        directions = tuple(v) if several else (v,)
        if len(directions) != len(forward.wrt):
            raise TangentAstError(
                f"hvp: {len(forward.wrt)} arguments differentiated but {len(directions)} directions"
            )
        # the tangent of an argument f updates in place (or a list f grows, a dict or a
        # record whose entries it sets, through the rules of what it calls too) is updated
        # alongside it: the user's direction is left as it is
        updated = {name for _, name in forward.updates}
        directions = tuple(
            copy.deepcopy(d) if w in updated or not isinstance(d, _NOT_CONTAINERS) else d
            for w, d in zip(forward.wrt, directions, strict=True)
        )
        product = _product_function(forward, f)
        if batched:
            refuse_batch_of_updates(forward, "hvp(..., batched=True)")
        if not batched:
            hv = guarded(f, flat, forward, lambda: product(*flat, *directions))
        else:
            inputs = tuple(flat[forward.params.index(w)] for w in forward.wrt)
            hv = guarded(
                f,
                flat,
                forward,
                lambda: run_batched(
                    lambda *ds: product(*flat, *ds),
                    list(directions),
                    lambda: inputs if several else inputs[0],
                ),
            )
        return (hv,) if several and len(directions) == 1 else hv  # wrt=(0,): a tuple of one

    def as_source(kinds):
        """Differentiated again: ``f_hvp(*params, v)``, the product as a function whose
        source is on disk, for arguments of ``kinds`` (the direction's last)."""
        if several:
            raise TangentAstError(
                "hvp with a tuple wrt cannot be differentiated again yet",
                hint="differentiate hvp(f, wrt=i) of one argument",
            )
        return _product_function(_gradient_forward_rule(f, wrt, session, tuple(kinds[:-1])), f)

    def source(*args_and_v):
        forward = _forward_over_reverse(f, wrt, session, args_and_v[:-1])[0]
        return module_listing(Path(inspect.getfile(_product_function(forward, f))))

    hessian_vector_product = Made(hessian_vector_product, hvp, given, wrt, cache=cache)
    hessian_vector_product.tangent_ast_source = source
    hessian_vector_product.tangent_ast_source_for = as_source
    return hessian_vector_product


# directions that are not containers: an array is copied only where f updates it in place
_NOT_CONTAINERS = (np.ndarray, float, complex, int, np.number)


def _product_function(forward, f):
    """``{f}_hvp(*params, *directions)``, a module next to ``forward``, the forward rule of
    ``f``'s gradient: that rule's tangent alone, the statements only the gradient needs
    removed (``composed.tangent_text``), or where it cannot be written out, a call of it."""
    params = list(forward.params)
    jvp, name = f"{rule_base(forward.fn)}_jvp", f"{_base(f)}_hvp"

    def text():
        doc = f'"""Hessian-vector products of {f.__qualname__}: the forward rule of its gradient'
        alone = tangent_text(forward.source, jvp, name, forward.jvp.__globals__)
        if alone is not None:
            return (
                f'{doc}, its tangent\nalone (what only the gradient needs is not computed)."""'
                + (f"\n\n{alone}")
            )
        directions = [_fresh(f"v{i}", params) for i in range(len(forward.wrt))]
        every = ", ".join([*params, *directions])
        return (
            f'{doc}, as a\nfunction of the point and the direction."""\n\n'
            f"from .{forward.path.stem} import {jvp}\n\n\n"
            f"def {name}({every}):\n"
            f"    {_fresh('gradient', params)}, hv = {jvp}({every})\n"
            "    return hv\n"
        )

    return companion_function(forward, "hvp", text, name)


def module_listing(path):
    """The generated module at ``path`` and, after it, every generated module it imports
    (``from .name import ...``), each once: the whole of a composed derivative to read."""
    shown, order = set(), []

    def visit(module):
        if module in shown or not module.exists():
            return
        shown.add(module)
        order.append(module)
        for imported in re.findall(r"^from \.(\w+) import", module.read_text(), re.MULTILINE):
            visit(module.parent / f"{imported}.py")

    visit(Path(path))
    parts = [order[0].read_text()]
    parts += [f"# ---- {m.name} ----\n{m.read_text()}" for m in order[1:]]
    return "\n\n".join(parts)


def _forward_over_reverse(f, wrt, session, args):
    """The forward rule over the reverse rule of ``f`` at these arguments, and the arguments
    as it takes them."""
    form, flat = flat_arguments(f, tuple(args), {})
    return _gradient_forward_rule(f, wrt, session, signature_of(flat), form), flat


def _gradient_forward_rule(f, wrt, session, signature, form=PLAIN):
    """The forward rule of the gradient of ``f`` (of its reverse rule), for arguments of
    ``signature`` (flattened by ``form``: the gradient takes them as plain parameters)."""
    rule = session.rule(source_of(f, signature), Mode.REVERSE, wrt, signature, form)
    positions = tuple(rule.params.index(w) for w in rule.wrt)
    gradient = gradient_function(rule)
    try:
        forward = session.rule(gradient, Mode.FORWARD, positions, signature, PLAIN)
    except ImportError as exc:  # rules that import each other (mutual recursion)
        raise TangentAstError(
            f"hvp of {f.__qualname__}: the second derivative of functions that call each "
            f"other in a cycle is not supported yet ({exc})",
            hint="check its Hessian-vector products with finite differences of ta.grad",
        ) from None
    return forward


def _columns(stack, lead_shape, tail_shape):
    """The results for each direction of ``tail_shape`` (along the leading axis of
    ``stack``, each of ``lead_shape``) as one array of shape ``lead_shape + tail_shape``:
    the Jacobian's layout."""
    return np.moveaxis(stack, 0, -1).reshape(tuple(lead_shape) + tuple(tail_shape))


def _one_index(name, wrt):
    if not isinstance(wrt, int):
        raise TangentAstError(f"{name}: wrt is one argument's index", hint="wrt=1")


def _base(f):
    """The name functions made from ``f`` start with: its rules' (a function made by the
    API, ``grad(g)``, is named after ``g``)."""
    return rule_base(f) if hasattr(f, "__code__") else sanitize(f.__name__)


def _fresh(name, taken):
    while name in taken:
        name += "_"
    return name


def _batched_module(rule, name, docstring, result):
    """The text of a module defining ``name(*params)``: forward ``rule`` run once on every
    unit direction of its differentiated argument, the columns arranged into ``result``
    (``{value}``, ``{x}`` and ``{np}`` filled in: the rule's value, the argument, NumPy)."""
    params = list(rule.params)
    x = rule.wrt[0]
    np_, runtime_ = _fresh("np", params), _fresh("runtime", params)
    value = _fresh("gradient" if "Hessian" in docstring else "out", params)
    columns = _fresh("columns", params)
    arguments = f"({params[0]},)" if len(params) == 1 else f"({', '.join(params)})"
    jvp = f"{rule_base(rule.fn)}_jvp"
    return (
        f'"""{docstring}"""\n\n'
        f"import numpy{' as ' + np_ if np_ != 'numpy' else ''}\n"
        f"from tangent_ast import runtime{' as ' + runtime_ if runtime_ != 'runtime' else ''}\n\n"
        f"from .{rule.path.stem} import {jvp}\n\n\n"
        f"def {name}({', '.join(params)}):\n"
        f"    # every unit direction of {x} at once: a batch of tangents, one pass of {jvp}\n"
        f"    {value}, {columns} = {runtime_}.jvp_of_batch({jvp}, {arguments}, "
        f"{runtime_}.unit_directions({x}))\n"
        f"    return {np_}.moveaxis({columns}, 0, -1).reshape("
        f"{result.format(value=value, x=x, np=np_)})\n"
    )


def jacobian_function(rule, of, name):
    """``name(*params)``, the Jacobian of ``of``, whose forward rule is ``rule``, with
    respect to its one differentiated argument (shape ``out.shape + x.shape``), as a module
    on disk."""
    docstring = (
        f"The Jacobian of {of.__qualname__} with respect to {rule.wrt[0]}, by its "
        "forward rule\nrun once on a batch of all directions."
    )
    result = "{np}.shape({value}) + {np}.shape({x})"
    return companion_function(
        rule, "jacobian", _batched_module(rule, name, docstring, result), name
    )


def hessian_function(rule, of, name):
    """``name(*params)``, the Hessian of ``of``, whose gradient's forward rule is ``rule``
    (shape ``x.shape + x.shape``), as a module on disk."""
    docstring = (
        f"The Hessian of {of.__qualname__} with respect to {rule.wrt[0]}, by the forward rule "
        "of its\ngradient run once on a batch of all directions."
    )
    result = "{np}.shape({x}) + {np}.shape({x})"
    return companion_function(rule, "hessian", _batched_module(rule, name, docstring, result), name)


def jacfwd(f, wrt=0, *, cache=None):
    """A function returning the Jacobian of ``f`` with respect to argument ``wrt`` (an index),
    of shape ``out.shape + x.shape``: one forward pass with every direction of ``x`` as a
    batch of tangents (a module of its own: ``show(jacfwd(f), args=...)``)."""
    _one_index("jacfwd", wrt)
    session = _session(cache)
    given, f = f, as_function(f, session.directory)

    def function_for(args):
        form, flat = flat_arguments(f, tuple(args), {})
        signature = signature_of(flat)
        rule = session.rule(source_of(f, signature), Mode.FORWARD, (wrt,), signature, form)
        rule.check_arguments(flat)
        refuse_batch_of_updates(rule, "jacfwd")
        return rule, flat, jacobian_function(rule, f, f"{_base(f)}_jacobian")

    def jacobian(*args):
        rule, flat, function = function_for(args)
        return guarded(f, flat, rule, lambda: function(*flat))

    jacobian = Made(jacobian, jacfwd, given, wrt, cache=cache)
    jacobian.tangent_ast_source = lambda *args: module_listing(
        Path(inspect.getfile(function_for(args)[2]))
    )
    return jacobian


def jacrev(f, wrt=0, *, cache=None):
    """A function returning the Jacobian of ``f`` with respect to argument ``wrt`` (an index),
    of shape ``out.shape + x.shape``: one reverse pass with every entry of the output as a
    batch of cotangents."""
    _one_index("jacrev", wrt)

    def jacobian(*args):
        out, pullback = vjp(f, *args, wrt=wrt, cache=cache)
        rows = pullback(unit_directions(out), batched=True)
        return np.reshape(rows, np.shape(out) + np.shape(args[wrt]))

    return Made(jacobian, jacrev, f, wrt, cache=cache)


def hessian(f, wrt=0, *, cache=None):
    """A function returning the dense Hessian of scalar-valued ``f`` with respect to argument
    ``wrt`` (an index), of shape ``x.shape + x.shape``: forward mode over the reverse rule
    with every direction of ``x`` as a batch of tangents (a module of its own:
    ``show(hessian(f), args=...)``)."""
    _one_index("hessian", wrt)
    session = _session(cache)
    given, f = f, as_function(f, session.directory)

    def function_for(args):
        forward, flat = _forward_over_reverse(f, wrt, session, args)
        refuse_batch_of_updates(forward, "hessian")
        return forward, flat, hessian_function(forward, f, f"{_base(f)}_hessian")

    def dense_hessian(*args):
        forward, flat, function = function_for(args)
        return guarded(f, flat, forward, lambda: function(*flat))

    dense_hessian = Made(dense_hessian, hessian, given, wrt, cache=cache)
    dense_hessian.tangent_ast_source = lambda *args: module_listing(
        Path(inspect.getfile(function_for(args)[2]))
    )
    return dense_hessian


# tangent_ast's API in differentiated code (lowering/api_calls.py), by identity: hvp(f) is
# differentiated through its source; the Jacobians and Hessians, of batches, are not
register(Role.MAKER, hvp)
register_second_order(hvp)
register(Role.MADE, jacfwd, jacrev, hessian)
