"""Rules of NumPy's functions and ndarray methods, by topic (np.linalg is ``rules/linalg.py``).

Each module registers its rules when imported; ``rules/__init__.py`` imports them all.
"""

from . import (  # noqa: F401  (registration)
    complex,
    elementwise,
    fourier,
    products,
    reductions,
    shapes,
    signal,
)
