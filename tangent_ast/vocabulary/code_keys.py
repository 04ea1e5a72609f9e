"""What names a function value in every process: the key a rule records for each function,
class or module it reads, so that a rule is never reused for another one.

A rule is derived for the objects its function's free names denote. Data values (numbers,
arrays, containers) are read by the generated code when it runs, and only their kinds shape
the derivation (the header's ``reads``). Code is different: a function value is called
through its own rules, baked into the rule's text (``from numpy.fft import fft as
fft_fun``, and ``fft``'s reverse rule). So the rules of two closures of one def, one over
``np.fft.fft`` and one over ``np.fft.ifft``, are two rules; so are the rules of a def read
before and after a global it calls was rebound. :func:`code_key` names each such value the
same way in every process, which the header's ``calls`` records and a closure's module name
is made from (:func:`cells_key`, with the kinds of the data its cells hold: the rule is
derived for them).

Which code is a library's and which the program's is said here too (:func:`is_library`):
every stage that meets a function asks it, and the check of a rule on disk as well.

>>> import numpy as np
>>> import scipy.special
>>> code_key(np.fft.ifft), code_key(np.sin), code_key(scipy.special.gamma), code_key(np)
('numpy.fft.ifft', 'numpy.sin', 'scipy.special.gamma', 'numpy')
>>> def outer(g):
...     def inner(x):
...         return g(x) * 2.0
...     return inner
>>> cells_key(outer(np.sin)), cells_key(outer(np.cos))
('g=numpy.sin', 'g=numpy.cos')
>>> cells_key(outer(2.0)), cells_key(outer(np.ones(3)))
('g=float', 'g=array1f')
"""

import functools
import inspect
import marshal
import sys
import types

import numpy as np

from ..derived import portable_name
from .kinds import kind_of
from .naming import digest

_LIBRARIES = frozenset(sys.stdlib_module_names) | {"numpy", "scipy", "tangent_ast", "gast"}


def is_data(value):
    """A value (number, array, container, record), not code: its kind shapes the derivation."""
    return not (callable(value) or isinstance(value, types.ModuleType))


def code_key(value, seen=None):
    """A text naming ``value`` (code: a function, class, module or other callable) the same
    way in every process, and two values apart wherever rules derived for them can differ:

    * a module: its name; a class or a library's function: ``module.qualname``;
    * a function of the program: ``module:qualname``, a lambda with a hash of its code
      (the lambdas of one line share a qualname), a closure with the keys of the code its
      cells hold (two closures of one def over other functions call other rules);
    * a bound method, a ``functools.partial``, a function made by tangent_ast's API: the key
      of the function they are made from, and what they add to it;
    * any other callable object: its class.
    """
    seen = set() if seen is None else seen
    if id(value) in seen:  # a closure that reads itself (recursion through a cell)
        return "<recursive>"
    seen.add(id(value))
    if isinstance(value, types.ModuleType):
        return portable_name(value.__name__)
    if isinstance(value, types.MethodType):
        return f"{code_key(value.__func__, seen)} of {_qualified(type(value.__self__))}"
    if inspect.isfunction(value):
        key = f"{portable_name(value.__module__)}:{value.__qualname__}"
        if value.__code__.co_name == "<lambda>":
            key += "@" + digest(marshal.dumps(value.__code__), 8)
        cells = cells_key(value, seen)
        return f"{key}[{cells}]" if cells else key
    owner = getattr(value, "__self__", None)
    if isinstance(value, types.BuiltinMethodType) and not isinstance(owner, types.ModuleType):
        return f"{code_key(owner, seen)}.{value.__name__}"  # np.add.reduce, rng.normal
    func = getattr(value, "func", None)
    if isinstance(value, functools.partial) and callable(func):
        return f"functools.partial({code_key(func, seen)})"
    wrapped = getattr(value, "__wrapped__", None)
    if inspect.isfunction(wrapped) and not isinstance(value, type) and not _library(wrapped):
        # made from a function of the program (tangent_ast.grad(f)): how, and from what
        text = repr(value)
        made = text if " at 0x" not in text else _qualified(type(value))
        return f"{made}({code_key(wrapped, seen)})"
    if isinstance(value, np.ufunc):  # before NumPy 2.2 a ufunc has no __qualname__
        return _ufunc_key(value)
    if isinstance(value, type) or getattr(value, "__qualname__", None) is not None:
        return _qualified(value)
    return _qualified(type(value))


def _ufunc_key(ufunc):
    """``module.name`` of a ufunc: the module of NumPy or SciPy that exports it under its
    name (``scipy.special.gamma``, whose ``__module__`` is None), else its name alone."""
    name = ufunc.__name__
    for module_name in ("numpy", "scipy.special"):
        module = sys.modules.get(module_name)
        if module is not None and getattr(module, name, None) is ufunc:
            return f"{module_name}.{name}"
    return f"ufunc {name}"


def cells_key(fn, seen=None):
    """``name=key`` of each closure cell of ``fn``, in order, or ``""``: what sets apart the
    rules of closures of one def. A cell holding code gives its :func:`code_key` (closures
    over other functions call other rules), a cell holding data its kind (the rule reads
    the value when it runs, and is derived for its kind)."""
    seen = {id(fn)} if seen is None else seen
    parts = []
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True):
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell: the name is not bound yet
            continue
        parts.append(f"{name}={kind_of(value) if is_data(value) else code_key(value, seen)}")
    return " ".join(parts)


def values_key(values):
    """A text setting apart the data among ``values`` (name -> value: what a closure's rule
    module is loaded with), the same in every process: numbers by their value, arrays by
    their bytes, other data by its text; "" if there is none. (Code is set apart by the
    module names already: :func:`cells_key`.)"""
    parts = []
    for name, value in sorted(values.items()):
        if isinstance(value, np.ndarray):
            parts.append(f"{name}={value.dtype}{value.shape}{digest(value.tobytes().hex(), 12)}")
        elif is_data(value):
            parts.append(f"{name}={value!r}")
    return digest(" ".join(parts), 8) if parts else ""


def is_library(module_name):
    """Code of a library: NumPy's, SciPy's, the standard library's, the transformer's own.
    Not derived rules (``tangent_ast.derived``), and not the runtime: its helpers are NumPy
    code generated rules call, and one without a rule for a mode is derived from its source
    like a user function (differentiating a derived rule again meets them)."""
    module_name = module_name or ""
    for code in ("tangent_ast.runtime", "tangent_ast.derived"):  # derived rules: user code
        if module_name == code or module_name.startswith(f"{code}."):
            return False
    return module_name.partition(".")[0] in _LIBRARIES


def _library(fn):
    """Whether ``fn`` is code of a library (NumPy's, the standard library's), not the
    program's (as :func:`is_library` says, without the derived modules)."""
    top = (getattr(fn, "__module__", None) or "").partition(".")[0]
    return top in sys.stdlib_module_names or top in ("numpy", "scipy")


def _qualified(value):
    module = getattr(value, "__module__", None) or type(value).__module__
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None) or "?"
    return f"{portable_name(module)}.{name}"
