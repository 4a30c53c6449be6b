"""pass@k for sampled generation (Chen et al., 2021, "Evaluating Large Language Models Trained on Code").

With ``n`` samples per problem of which ``c`` are correct, the unbiased estimate of
the chance that at least one of ``k`` samples drawn without replacement is correct is

    pass@k = 1 - C(n - c, k) / C(n, k) = 1 - prod_{i = n - c + 1}^{n} (1 - k / i)

The product form avoids the huge binomial coefficients (C(200, 100) overflows a
float), so it stays exact to rounding for any n.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from rankscope.core.errors import RankscopeError
from rankscope.core.params import Param, check_arguments


@check_arguments(n=Param(int), c=Param(int), k=Param(int, low=1))
def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one problem with ``n`` samples, ``c`` of them correct.

    Refuses ``k > n`` (the estimator is undefined: you cannot draw k of n) and
    counts outside ``0 <= c <= n``. Example: n=10, c=2 gives pass@1 = 0.2 and
    pass@5 = 1 - C(8,5)/C(10,5) = 0.7778.
    """
    if not 0 <= c <= n:
        raise RankscopeError(f"pass@k: need 0 <= c <= n, got n={n}, c={c}")
    if k > n:
        raise RankscopeError(f"pass@k: k={k} is larger than the number of samples n={n}")
    if n - c < k:
        return 1.0  # every draw of k samples contains a correct one
    factors = 1.0 - k / np.arange(n - c + 1, n + 1, dtype=np.float64)
    return float(1.0 - np.prod(factors))


def mean_pass_at_k(n: ArrayLike, c: ArrayLike, k: int) -> float:
    """pass@k averaged over problems (the number papers report); ``n`` and ``c`` per problem."""
    ns = np.asarray(n)
    cs = np.asarray(c)
    if ns.shape != cs.shape or ns.ndim != 1 or len(ns) == 0:
        raise RankscopeError(
            f"pass@k: n and c must be non-empty 1-d sequences of equal length, got shapes {ns.shape} and {cs.shape}"
        )
    return float(np.mean([pass_at_k(a, b, k) for a, b in zip(ns.tolist(), cs.tolist())]))
