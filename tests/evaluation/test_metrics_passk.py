"""pass@k against the example in Chen et al. (2021) and the exact binomial formula."""

from __future__ import annotations

from fractions import Fraction
from math import comb

import numpy as np
import pytest

from rankscope.core.errors import RankscopeError
from rankscope.evaluation.passk import mean_pass_at_k, pass_at_k


def exact(n: int, c: int, k: int) -> float:
    return float(1 - Fraction(comb(n - c, k), comb(n, k)))


def test_published_example() -> None:
    assert pass_at_k(10, 2, 1) == pytest.approx(0.2, abs=1e-15)
    assert pass_at_k(10, 2, 5) == pytest.approx(1 - 56 / 252, abs=1e-15)
    assert round(pass_at_k(10, 2, 5), 4) == 0.7778


def test_matches_exact_binomial_formula_on_a_grid() -> None:
    rng = np.random.default_rng(7)
    for _ in range(300):
        n = int(rng.integers(1, 250))
        c = int(rng.integers(0, n + 1))
        k = int(rng.integers(1, n + 1))
        assert pass_at_k(n, c, k) == pytest.approx(exact(n, c, k), rel=1e-12, abs=1e-13), (n, c, k)


def test_edges() -> None:
    assert pass_at_k(5, 0, 3) == 0.0
    assert pass_at_k(5, 3, 3) == 1.0  # n - c < k: every draw holds a correct sample
    assert pass_at_k(200, 1, 200) == 1.0
    assert mean_pass_at_k([10, 10], [2, 0], 1) == pytest.approx(0.1)


@pytest.mark.parametrize(
    ("n", "c", "k", "message"),
    [
        (5, 1, 6, "larger than the number of samples"),
        (5, 6, 1, "0 <= c <= n"),
        (5, 1, 0, r"^pass_at_k: k=0 is not allowed; k must be an int in \[1, inf\)$"),
        (5.0, 1, 1, "^pass_at_k: n=5.0 is not allowed; n must be an int$"),
        (True, 1, 1, "^pass_at_k: n=True is not allowed; n must be an int$"),
    ],
)
def test_refusals(n: object, c: object, k: object, message: str) -> None:
    with pytest.raises(RankscopeError, match=message):
        pass_at_k(n, c, k)  # type: ignore[arg-type]


def test_mean_refuses_float_counts_and_mismatched_lengths() -> None:
    with pytest.raises(RankscopeError, match="n=10.0 is not allowed; n must be an int"):
        mean_pass_at_k(np.array([10.0]), np.array([2.0]), 1)
    with pytest.raises(RankscopeError, match="equal length"):
        mean_pass_at_k([10, 10], [2], 1)
