"""Rules for ``numpy.linalg``.

Matrix functions act on the last two axes, so the rules use ``np.swapaxes(a,
-1, -2)`` for a transpose and work on stacks of matrices too. Multi-step rules
are helpers in :mod:`tangent_ast.runtime`.
"""

import numpy as np

from .. import runtime
from .registry import defjvp, defvjp, nondifferentiable

defjvp(np.linalg.inv, lambda dx, ans, x: -(ans @ dx @ ans))
defvjp(np.linalg.inv, lambda ct, ans, x: -(np.swapaxes(ans, -1, -2) @ ct @ np.swapaxes(ans, -1, -2)))

defjvp(np.linalg.det, lambda dx, ans, x: runtime.det_jvp(dx, ans, x))
defvjp(np.linalg.det, lambda ct, ans, x: runtime.det_vjp(ct, ans, x))

defjvp(np.linalg.solve, lambda da, ans, a, b: runtime.solve_jvp_a(da, ans, a, b),
                        lambda db, ans, a, b: np.linalg.solve(a, db))
defvjp(np.linalg.solve, lambda ct, ans, a, b: runtime.solve_vjp_a(ct, ans, a, b),
                        lambda ct, ans, a, b: runtime.solve_vjp_b(ct, ans, a, b))

defjvp(np.linalg.cholesky, lambda dx, ans, x, **kw: runtime.cholesky_jvp(dx, ans, x))
defvjp(np.linalg.cholesky, lambda ct, ans, x, **kw: runtime.cholesky_vjp(ct, ans, x))

defjvp(np.linalg.norm, lambda dx, ans, x, *args, **kw: runtime.norm_jvp(dx, ans, x, *args, **kw))
defvjp(np.linalg.norm, lambda ct, ans, x, *args, **kw: runtime.norm_vjp(ct, ans, x, *args, **kw))

defjvp(np.linalg.matrix_power, lambda dx, ans, x, n: runtime.matrix_power_jvp(dx, ans, x, n), None)
defvjp(np.linalg.matrix_power, lambda ct, ans, x, n: runtime.matrix_power_vjp(ct, ans, x, n), None)

defjvp(np.linalg.pinv, lambda dx, ans, x, *args, **kw: runtime.pinv_jvp(dx, ans, x))
defvjp(np.linalg.pinv, lambda ct, ans, x, *args, **kw: runtime.pinv_vjp(ct, ans, x))

nondifferentiable(np.linalg.matrix_rank)

# slogdet returns (sign, logabsdet): the tangent is a pair; index the result (``slogdet(x)[1]``),
# unpacking ``s, l = slogdet(x)`` is not supported by the transformer yet.
defjvp(np.linalg.slogdet, lambda dx, ans, x: runtime.slogdet_jvp(dx, ans, x))
defvjp(np.linalg.slogdet, lambda ct, ans, x: runtime.slogdet_vjp(ct, ans, x))

defjvp(np.linalg.eigvalsh, lambda dx, ans, x, *args, **kw: runtime.eigvalsh_jvp(dx, ans, x, *args, **kw))
defvjp(np.linalg.eigvalsh, lambda ct, ans, x, *args, **kw: runtime.eigvalsh_vjp(ct, ans, x, *args, **kw))
