"""Second derivatives and Jacobians: Hessian-vector products by forward mode over the
reverse rule; dense Hessians and Jacobians from them, one direction at a time.

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

import functools

import numpy as np

from .api import _session, gradient_function, guarded, jvp, vjp
from .calling import PLAIN, flat_arguments
from .errors import TangentAstError
from .kinds import signature_of
from .modes import Mode
from .wrappers import as_function


def hvp(f, wrt=0, *, cache=None):
    """A function ``(*args, v) -> H v``: the Hessian of scalar-valued ``f`` with respect to
    ``wrt`` at ``args``, times ``v`` (a tuple of directions when ``wrt`` is a tuple), by
    forward mode over ``f``'s reverse rule."""
    session = _session(cache)
    f = as_function(f, session.directory)
    several = isinstance(wrt, (tuple, list))

    def rules(args_and_v):
        """The forward rule over the reverse rule of ``f`` at these arguments and direction
        (their kinds), the arguments as it takes them and the directions."""
        if not args_and_v:
            raise TangentAstError("hvp: give the arguments of the function, then the direction")
        *args, v = args_and_v
        form, flat = flat_arguments(f, tuple(args), {})
        if form != PLAIN:
            raise TangentAstError(
                "hvp: functions with *args or **kwargs are not supported yet",
                hint="wrap the function in a def with plain parameters",
            )
        signature = signature_of(flat)
        rule = session.rule(f, Mode.REVERSE, wrt, signature, form)
        positions = tuple(rule.params.index(w) for w in rule.wrt)
        directions = tuple(v) if several else (v,)
        if len(directions) != len(positions):
            raise TangentAstError(
                f"hvp: {len(positions)} arguments differentiated but {len(directions)} directions"
            )
        gradient = gradient_function(rule)
        try:
            forward = session.rule(gradient, Mode.FORWARD, positions, signature, PLAIN)
        except ImportError as exc:  # rules that import each other (mutual recursion)
            raise TangentAstError(
                f"hvp of {f.__qualname__}: the second derivative of functions that call each "
                f"other in a cycle is not supported yet ({exc})",
                hint="check its Hessian-vector products with finite differences of ta.grad",
            ) from None
        return forward, flat, directions

    @functools.wraps(f)
    def hessian_vector_product(*args_and_v):
        forward, flat, directions = rules(args_and_v)
        _, hv = guarded(f, flat, forward, lambda: forward.jvp(*flat, *directions))
        return hv

    hessian_vector_product.tangent_ast_source = lambda *args_and_v: rules(args_and_v)[0].source
    return hessian_vector_product


def _basis(x):
    """The unit directions of ``x`` (a float or an array), in C order."""
    if np.ndim(x) == 0:
        yield 1.0
        return
    for j in range(np.size(x)):
        e = np.zeros(np.size(x), dtype=np.result_type(x, float))
        e[j] = 1.0
        yield e.reshape(np.shape(x))


def _stack(parts, lead_shape, tail_shape):
    """Arrays of ``lead_shape`` (one per direction of ``tail_shape``) as one array of shape
    ``lead_shape + tail_shape``: the Jacobian's layout."""
    return np.moveaxis(np.asarray(parts), 0, -1).reshape(tuple(lead_shape) + tuple(tail_shape))


def jacfwd(f, wrt=0, *, cache=None):
    """A function returning the Jacobian of ``f`` with respect to argument ``wrt`` (an index),
    of shape ``out.shape + x.shape``: one forward pass per direction of ``x``."""
    if not isinstance(wrt, int):
        raise TangentAstError("jacfwd: wrt is one argument's index", hint="wrt=1")

    @functools.wraps(f)
    def jacobian(*args):
        tangents = [None] * len(args)
        columns, out = [], None
        for e in _basis(args[wrt]):
            tangents[wrt] = e
            out, column = jvp(f, args, tuple(tangents), cache=cache)
            columns.append(np.asarray(column))
        if out is None:
            out = f(*args)
        return _stack(columns, np.shape(out), np.shape(args[wrt]))

    return jacobian


def jacrev(f, wrt=0, *, cache=None):
    """A function returning the Jacobian of ``f`` with respect to argument ``wrt`` (an index),
    of shape ``out.shape + x.shape``: one pullback per entry of the output."""
    if not isinstance(wrt, int):
        raise TangentAstError("jacrev: wrt is one argument's index", hint="wrt=1")

    @functools.wraps(f)
    def jacobian(*args):
        out, pullback = vjp(f, *args, wrt=wrt, cache=cache)
        rows = [np.asarray(pullback(e)) for e in _basis(out)]
        return np.asarray(rows).reshape(np.shape(out) + np.shape(args[wrt]))

    return jacobian


def hessian(f, wrt=0, *, cache=None):
    """A function returning the dense Hessian of scalar-valued ``f`` with respect to argument
    ``wrt`` (an index), of shape ``x.shape + x.shape``: one Hessian-vector product per
    direction of ``x``."""
    if not isinstance(wrt, int):
        raise TangentAstError("hessian: wrt is one argument's index", hint="wrt=0")
    product = hvp(f, wrt, cache=cache)

    @functools.wraps(f)
    def dense_hessian(*args):
        columns = [np.asarray(product(*args, e)) for e in _basis(args[wrt])]
        return _stack(columns, np.shape(args[wrt]), np.shape(args[wrt]))

    return dense_hessian
